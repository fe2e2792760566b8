#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where and how the server listens. The defaults are the embedded defaults of `entitled`.
public struct ServerConfiguration: Sendable {
    /// The TCP address to bind, or `nil` to serve on the Unix socket only.
    public var tcp: TCPAddress?
    /// The path of a Unix domain socket to serve on as well (or alone), if any.
    public var unixSocketPath: String?
    /// The longest request line accepted, in bytes without its `\n`. A longer line is answered
    /// `too_large` and its connection closed.
    public var maximumLineLength: Int
    /// How many event loop threads serve connections.
    public var eventLoops: Int
    /// The longest, in microseconds, an event loop that ran out of work keeps asking for more before it
    /// sleeps; 0 sleeps at once. A request that arrives meanwhile is served without waking a sleeping
    /// thread, which is most of a lone client's round trip on a virtual machine. The loop adapts within
    /// it (`AdaptivePoll`): it polls only while its recent sleeps ended within this time, so the price
    /// (CPU spent polling) is paid only where requests stream in; with sparse traffic it sleeps at once.
    public var busyPollMicroseconds: Int
    /// What a read is answered from while the log has changes it has not acknowledged (Protocol/STORAGE.md,
    /// "Reads and unsynced changes"): `.hold` (the default) only once the log acknowledges the changes
    /// the store held when it read, as Redis's `appendfsync always` sends no reply before the sync, so no
    /// client is told of a change a crash could still take back; `.answer` at once from the store, which
    /// holds them (checks 6-14% faster at p50 under a mixed load, measured). A cluster node serves
    /// committed changes only, either way.
    public var unsyncedReads = UnsyncedReads.hold
    /// The longest a loop holds a commit for the connections its last one answered (`CommitHold`), in
    /// nanoseconds. Not an option: tests lengthen it so that a hold outlasts their own round trips.
    var longestCommitHoldNanoseconds = CommitHold.longest
    /// The most client connections open at once over TCP, and again over the Unix socket (counted apart,
    /// so that clients on the network cannot take every place from an operator on the machine); one more
    /// is answered `busy` and closed.
    public var maximumConnections = ServerConfiguration.defaultMaximumConnections
    /// With authentication (`accessTokens`): seconds a connection may stay without a successful `auth`
    /// (its TLS handshake included) before it is closed, so that connections that never authenticate
    /// cannot hold places for long (0: never). One that authenticated once is not closed for it, even
    /// when a reload or a wrong `auth` took its role away.
    public var authenticationTimeoutSeconds: Double = ServerConfiguration.defaultAuthenticationTimeoutSeconds
    /// Seconds without a byte from a client after which its connection is closed (0: never). A
    /// connection with a request in flight or a watch is never idle.
    public var idleTimeoutSeconds: Double = ServerConfiguration.defaultIdleTimeoutSeconds
    /// The most requests of one connection answered in one turn of its event loop: a client pipelining
    /// thousands cannot make the others wait for all of them.
    public var maximumRequestsPerTurn = ServerConfiguration.defaultMaximumRequestsPerTurn
    /// TLS for every TCP connection (the Unix socket stays plain: it never leaves the machine); `nil`
    /// serves plain TCP.
    public var tls: ServerTLS?
    /// At a graceful stop, the most seconds connections get to finish the requests they sent (0: close
    /// them at once).
    public var shutdownTimeoutSeconds: Double = ServerConfiguration.defaultShutdownTimeoutSeconds
    /// The tokens clients must authenticate with; `nil` serves every client without authentication,
    /// which `start()` allows on a loopback TCP address or the Unix socket only, unless
    /// `allowsUnauthenticatedRemoteClients`.
    public var accessTokens: AccessTokens?
    /// The auth file `accessTokens` were read from (`--auth`): `EntitledServer.reloadAccessTokens()` reads
    /// it again. `nil` when the tokens were given in code; they cannot be reloaded then.
    public var accessTokenFile: String?
    /// Listen without authentication on a TCP address other machines can reach (`--insecure-no-auth`).
    public var allowsUnauthenticatedRemoteClients = false
    /// The Unix socket file's permission bits: by default only the server's user may connect.
    public var unixSocketMode: UInt16 = ServerConfiguration.defaultUnixSocketMode
    /// The most milliseconds a read with `minSeq` waits for the store to apply that change before it is
    /// answered `stale` (`--min-seq-wait`). Its connection answers nothing else meanwhile.
    public var minimumSequenceWaitMilliseconds = ServerConfiguration.defaultMinimumSequenceWaitMilliseconds
    /// Send each loop turn's answers through io_uring, one system call for all of its connections
    /// (`--io-uring`). Where the kernel refuses a ring the loops send as they do without it, and say so in
    /// the log at start.
    public var usesIoUring = true
    /// Sockets already bound for `tcp` and `unixSocketPath` (by the `LoadingListener` that answered while
    /// the store loaded): the server serves on them instead of binding.
    public var boundListeners: BoundListeners?

    public static let defaultPort = 7117
    /// Two seconds: far longer than a node of a healthy cluster lags (a few milliseconds), short enough
    /// that a client told `stale` can still ask another node within a request's usual deadline.
    public static let defaultMinimumSequenceWaitMilliseconds = 2000
    /// The longest `minSeq` wait accepted (a minute): a connection answers nothing else meanwhile.
    public static let largestMinimumSequenceWaitMilliseconds = 60_000
    public static let defaultUnixSocketMode: UInt16 = 0o600
    /// Ten thousand: far more than a fleet of pooled backends needs, and what the default descriptor
    /// limit the server raises itself to (see `entitled`) can carry.
    public static let defaultMaximumConnections = 10_000
    /// The most users and devices watched at once over all connections (`--max-watches`): about 320 bytes
    /// each (measured with 100 connections of 1,000 watches), so about 320 MB at most. Without a bound,
    /// `--max-connections` connections of 1,000 watches each could hold 10 million (3.2 GB).
    public static let defaultMaximumSubjectWatches = 1_000_000
    /// Five minutes: long enough for a pooled connection between bursts, short enough that clients that
    /// vanished without closing do not pile up.
    public static let defaultIdleTimeoutSeconds: Double = 300
    /// Long enough for a client on another continent, or on a machine so loaded that its threads wait
    /// seconds for a core (seen in the test suite: 13 s), to connect, shake hands and authenticate.
    public static let defaultAuthenticationTimeoutSeconds: Double = 30
    /// 256 requests: at about a microsecond a check, one connection's turn adds at most a few hundred
    /// microseconds to the others' latency, and a pipelining client's batches of up to 256 still go in
    /// one turn (one read, one write).
    public static let defaultMaximumRequestsPerTurn = 256
    /// Ten seconds: far more than any answer takes, even a write waiting for a slow disk's fsync, and well
    /// within the usual service managers' stop timeouts (systemd's 90 s, Kubernetes' 30 s).
    public static let defaultShutdownTimeoutSeconds: Double = 10
    public static let defaultMaximumLineLength = 64 * 1024
    /// The largest line limit accepted: a buffered line is held in memory whole.
    public static let largestMaximumLineLength = 64 * 1024 * 1024
    /// The default number of event loops: half the cores (at least one). A check costs less than the
    /// system calls that carry it, so the clients on the same machine and the kernel's network work
    /// need the other cores: on a 2-core machine one loop answers more checks than two.
    public static let defaultEventLoops = max(1, ProcessorCount.online / 2)
    public static let largestEventLoopCount = 256
    /// 50 µs, adaptive (`AdaptivePoll`): a loop polls only while its sleeps keep ending within that
    /// time, so a server whose requests stream in skips the thread wake-ups, and one with sparse traffic
    /// sleeps at once as it would without polling.
    public static let defaultBusyPollMicroseconds = 50
    /// The longest busy poll accepted (10 ms): beyond that a loop would rather sleep.
    public static let largestBusyPollMicroseconds = 10_000

    public init(
        tcp: TCPAddress? = TCPAddress(host: "127.0.0.1", port: ServerConfiguration.defaultPort),
        unixSocketPath: String? = nil,
        maximumLineLength: Int = ServerConfiguration.defaultMaximumLineLength,
        eventLoops: Int = ServerConfiguration.defaultEventLoops,
        busyPollMicroseconds: Int = ServerConfiguration.defaultBusyPollMicroseconds
    ) {
        self.eventLoops = eventLoops
        self.busyPollMicroseconds = busyPollMicroseconds
        self.tcp = tcp
        self.unixSocketPath = unixSocketPath
        self.maximumLineLength = maximumLineLength
    }

    /// A TCP host and port; port 0 asks the system for any free port.
    public struct TCPAddress: Sendable, Hashable {
        public var host: String
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
    }
}

/// See `ServerConfiguration.unsyncedReads`.
public enum UnsyncedReads: String, Sendable, CaseIterable {
    case answer
    case hold
}

/// The number of processors online.
enum ProcessorCount {
    static var online: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
}
