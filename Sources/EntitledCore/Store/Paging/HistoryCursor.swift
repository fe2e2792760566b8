/// Where a page of an audit trail ends: the place of its last entry in the trail's order, newest first.
///
/// Written on the wire as `<recordedAt ms>.<sequence>.<membership id or ->.<index>`, which clients pass
/// back unchanged. It names the entry by what every node of a cluster and every restart agrees on (the
/// time, the change number, the membership's id), never by a position in memory: slots are renumbered
/// when a snapshot leaves erased memberships out, and differ between nodes that loaded different ones.
public struct HistoryCursor: Hashable, Sendable {
    /// When the entry was recorded (milliseconds since 1970).
    public var recordedAt: Int64
    /// The entry's change number; 0 for a grant that kept none.
    public var sequence: UInt64
    /// The membership the entry is about; `nil` for a catalog or erasure entry.
    public var membership: MembershipID?
    /// The entry's place among its membership's entries (oldest 0), or in the catalog's or erasures' trail.
    public var index: Int

    public init(recordedAt: Int64, sequence: UInt64, membership: MembershipID?, index: Int) {
        self.recordedAt = recordedAt
        self.sequence = sequence
        self.membership = membership
        self.index = index
    }

    /// The cursor as written on the wire.
    public var text: String {
        "\(recordedAt).\(sequence).\(membership?.rawValue ?? "-").\(index)"
    }

    /// The cursor `text` spells, or `nil` when it is not one this server writes.
    public init?(text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, let recordedAt = Int64(parts[0]), recordedAt >= 0, let sequence = UInt64(parts[1]),
            let index = Int32(parts[3]), index >= 0
        else { return nil }
        let membership: MembershipID?
        if parts[2] == "-" {
            membership = nil
        } else {
            let id = MembershipID(rawValue: String(parts[2]))
            guard id.bits != nil else { return nil }
            membership = id
        }
        self.init(recordedAt: recordedAt, sequence: sequence, membership: membership, index: Int(index))
    }
}
