/// Every membership ever created, in creation order, addressed by slot (its position).
///
/// Stored in fixed-size chunks rather than one array so that a copy is cheap to keep: a snapshot holds on
/// to the table while writes go on, and the first write after that copies one chunk (4096 memberships)
/// and the list of chunks, never the whole table. With one flat array that first write would copy every
/// membership while holding the store's write lock, and stall every check for as long.
///
/// Memberships are kept packed (`PackedMembership`, 80 bytes) rather than as `Membership`s (152 bytes):
/// product and plan ids as numbers of the table's own `InternedNames`, times as plain milliseconds, the
/// rarely set parts (a revocation, a lifecycle) behind one reference. Reading a slot builds its
/// `Membership`; the check path never does (it reads `AccessRecord`s). Measured with `entitled-bench
/// memory --users 1000000`: 230.5 bytes per user before, see Tools/entitled-bench/README.md for after.
public struct MembershipTable: Sendable, RandomAccessCollection {
    static let chunkSize = 4096

    private var chunks: [[PackedMembership]] = []
    private var names = InternedNames()
    public private(set) var count = 0

    public init() {}

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public subscript(slot: Int) -> Membership {
        get { chunks[slot / Self.chunkSize][slot % Self.chunkSize].unpacked(names: names) }
        set {
            let packed = PackedMembership(newValue, names: &names)
            chunks[slot / Self.chunkSize][slot % Self.chunkSize] = packed
        }
    }

    /// When the membership at `slot` was created, without building the whole `Membership`.
    func createdAt(atSlot slot: Int) -> Int64 {
        chunks[slot / Self.chunkSize][slot % Self.chunkSize].createdAt
    }

    /// Calls `body` with each slot, in order, its packed membership and the table's names: a restored
    /// store builds its indexes from these rather than building a `Membership` for every slot.
    func forEachPacked(_ body: (_ slot: Int, _ membership: PackedMembership, _ names: InternedNames) -> Void) {
        var slot = 0
        for chunk in chunks {
            chunk.withUnsafeBufferPointer { packed in
                for membership in packed {
                    body(slot, membership, names)
                    slot += 1
                }
            }
        }
    }

    /// Adds `membership` at the end and returns its slot.
    @discardableResult
    public mutating func append(_ membership: Membership) -> Int {
        if count % Self.chunkSize == 0 {
            var chunk: [PackedMembership] = []
            chunk.reserveCapacity(Self.chunkSize)
            chunks.append(chunk)
        }
        let packed = PackedMembership(membership, names: &names)
        chunks[chunks.count - 1].append(packed)
        count += 1
        return count - 1
    }
}
