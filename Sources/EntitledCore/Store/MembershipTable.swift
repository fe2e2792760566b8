/// Every membership ever created, in creation order, addressed by slot (its position).
///
/// Stored in fixed-size chunks rather than one array so that a copy is cheap to keep: a snapshot holds on
/// to the table while writes go on, and the first write after that copies one chunk (4096 memberships)
/// and the list of chunks, never the whole table. With one flat array that first write would copy every
/// membership while holding the store's write lock, and stall every check for as long.
public struct MembershipTable: Sendable, RandomAccessCollection {
    static let chunkSize = 4096

    private var chunks: [[Membership]] = []
    public private(set) var count = 0

    public init() {}

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public subscript(slot: Int) -> Membership {
        get { chunks[slot / Self.chunkSize][slot % Self.chunkSize] }
        set { chunks[slot / Self.chunkSize][slot % Self.chunkSize] = newValue }
    }

    /// Adds `membership` at the end and returns its slot.
    @discardableResult
    public mutating func append(_ membership: Membership) -> Int {
        if count % Self.chunkSize == 0 {
            var chunk: [Membership] = []
            chunk.reserveCapacity(Self.chunkSize)
            chunks.append(chunk)
        }
        chunks[chunks.count - 1].append(membership)
        count += 1
        return count - 1
    }
}
