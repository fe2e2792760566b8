import EntitledCore

/// How a cluster node works with the database; the defaults suit a database on the same network.
public struct ClusterOptions: Sendable {
    /// This node's name in the change table and the logs.
    public var nodeName: String
    /// The longest a write waits for its group to commit (and for a connection, or the cluster's write
    /// lock) before it is answered `unavailable`.
    public var writeTimeout: Duration = .seconds(5)
    /// The longest a connection attempt takes.
    public var connectTimeout: Duration = .seconds(5)
    /// How often the replica asks for new changes when no notification woke it: the bound on how far
    /// behind a lost notification can leave it, and how fresh "seconds since contact" stays.
    public var pollInterval: Duration = .seconds(1)
    /// The wait before the first reconnection attempt, doubled after each failure up to `maximumBackoff`.
    public var initialBackoff: Duration = .milliseconds(100)
    public var maximumBackoff: Duration = .seconds(5)
    /// How long a change stays in the change table after a snapshot covers it (seconds): a node that lost
    /// its connection during a commit finds out from it whether its group committed.
    public var retentionSeconds: Int = 60
    /// The most writes one group (one transaction) holds.
    public var maximumGroupSize: Int = 1000
    /// How far back the replica's change feed reaches (`--feed-retention`): give every node the same, so
    /// that every node answers a read of the feed alike.
    public var feedRetention = FeedRetention.standard

    public init(nodeName: String) {
        self.nodeName = nodeName
    }
}
