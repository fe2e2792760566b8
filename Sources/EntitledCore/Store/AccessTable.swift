/// The `AccessRecord` of every membership, at the membership's slot.
///
/// In chunks like `MembershipTable`, for the same reason: growing one flat array would copy every record
/// (16 MB at 1M memberships) while the store's write lock is held, stalling every check meanwhile.
struct AccessTable: Sendable {
    private static let chunkSize = 4096
    private var chunks: [[AccessRecord]] = []
    private(set) var count = 0

    @inline(__always)
    subscript(slot: Int) -> AccessRecord {
        get { chunks[slot / Self.chunkSize][slot % Self.chunkSize] }
        set { chunks[slot / Self.chunkSize][slot % Self.chunkSize] = newValue }
    }

    /// Room in the list of chunks for `count` records (the chunks themselves are made as they fill).
    mutating func reserveCapacity(_ count: Int) {
        chunks.reserveCapacity((count + Self.chunkSize - 1) / Self.chunkSize)
    }

    mutating func append(_ record: AccessRecord) {
        if count % Self.chunkSize == 0 {
            chunks.append([])
            chunks[chunks.count - 1].reserveCapacity(Self.chunkSize)
        }
        chunks[chunks.count - 1].append(record)
        count += 1
    }
}
