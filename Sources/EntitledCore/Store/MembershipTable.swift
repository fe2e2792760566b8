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
    /// How many memberships a chunk holds: tables joined with `init(joining:)` hold whole chunks.
    package static let chunkSize = 4096

    /// Read in place by `slots(from:to:limit:where:)` (MembershipTable+Scan.swift).
    private(set) var chunks: [[PackedMembership]] = []
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

    /// The memberships of `tables`, in order, as one table: for tables filled side by side (a snapshot
    /// decoded on several cores). Every table but the last must hold whole chunks. The chunks are taken as
    /// they are; only a table whose names were numbered differently has its product and plan numbers
    /// rewritten to the joined table's.
    package init(joining tables: [MembershipTable]) {
        guard var joined = tables.first else { return }
        for var table in tables.dropFirst() {
            precondition(joined.count % Self.chunkSize == 0, "only a table of whole chunks can be followed by another")
            var renumbered = (0..<Int32(table.names.count)).map { joined.names.intern(table.names[$0]) }
            if renumbered != Array(0..<Int32(table.names.count)) {
                renumbered.withUnsafeMutableBufferPointer { numbers in
                    for index in table.chunks.indices {
                        for slot in table.chunks[index].indices {
                            table.chunks[index][slot].product = numbers[Int(table.chunks[index][slot].product)]
                            let plan = table.chunks[index][slot].plan
                            if plan >= 0 { table.chunks[index][slot].plan = numbers[Int(plan)] }
                        }
                    }
                }
            }
            joined.chunks += table.chunks
            joined.count += table.count
        }
        self = joined
    }

    /// Calls `body` with each slot, in order, its packed membership and the table's names: a restored
    /// store builds its indexes from these rather than building a `Membership` for every slot.
    func forEachPacked(_ body: (_ slot: Int, _ membership: PackedMembership, _ names: InternedNames) -> Void) {
        forEachPackedChunk { firstSlot, chunk, names in
            for (index, membership) in chunk.enumerated() { body(firstSlot + index, membership, names) }
        }
    }

    /// Calls `body` with each chunk, in order, the slot of its first membership and the table's names.
    func forEachPackedChunk(_ body: (_ firstSlot: Int, _ chunk: UnsafeBufferPointer<PackedMembership>, _ names: InternedNames) -> Void) {
        var firstSlot = 0
        for chunk in chunks {
            chunk.withUnsafeBufferPointer { body(firstSlot, $0, names) }
            firstSlot += chunk.count
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
