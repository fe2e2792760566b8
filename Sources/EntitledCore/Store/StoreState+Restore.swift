import Dispatch
import Synchronization

// A restored store's indexes, built from its membership table on two threads at once: who owns each
// membership (the user and device indexes) on one, the ids, access records and transactions on the other.
// Each builder reads the table only and returns its own values, which `StoreState.init(image:)` takes.
// They index as `StoreState.index(_:at:)` indexes a membership created live: the two must agree, and the
// restore tests (HistoryTests, TransactionLookupTests, AccessIndexTests, TransferTests, RemovalTests ...)
// compare a restored store's answers with the original's.

/// The user and device indexes of a restored table.
struct RestoredOwnership: Sendable {
    var ownedSlotsByUser = SubjectIndex()
    var unclaimedSlotsByDevice = SubjectIndex()
    var deviceCount = 0

    init(of table: MembershipTable) {
        ownedSlotsByUser.reserveCapacity(table.count)
        table.forEachPackedChunk { firstSlot, chunk, _ in
            for index in chunk.indices {
                // The entry a user some memberships ahead lands on starts loading now: nearly all of the
                // time of this loop was the cache miss of each insert (perf, 1M users), and inserts in
                // slot order land at random in a table of tens of megabytes.
                if index + Self.prefetchDistance < chunk.count, var ahead = chunk[index + Self.prefetchDistance].user {
                    ahead.withUTF8 { ownedSlotsByUser.prefetch(utf8: UnsafeRawBufferPointer($0)) }
                }
                let packed = chunk[index]
                guard packed.rare?.otherID == nil else { continue }  // erased: in no index
                if let user = packed.user {
                    ownedSlotsByUser.add(firstSlot + index, to: user)
                } else if let device = packed.device {
                    // No device has claimed slots yet: those come from the history, after this.
                    if !unclaimedSlotsByDevice.contains(device) { deviceCount += 1 }
                    unclaimedSlotsByDevice.add(firstSlot + index, to: device)
                }
            }
        }
    }

    /// How many memberships ahead the user index is prefetched: enough to cover a miss to memory.
    private static let prefetchDistance = 8
}

/// The id index, access records and transaction indexes of a restored table.
struct RestoredRecords: Sendable {
    var slotByID = IDSlotTable()
    var access = AccessTable()
    var productCodes = ProductCodes()
    var erasedCount = 0
    var slotsByTransaction = TransactionIndex()
    var slotsByOriginalTransaction = TransactionIndex()
    /// The latest `createdAt` of the table (milliseconds; `Int64.min` for none): since an imported grant
    /// dates its membership at the purchase, the last slot's is not always the latest.
    var latestCreation = Int64.min

    init(of table: MembershipTable) {
        precondition(table.count <= Int(UInt32.max) + 1, "a store holds at most \(UInt32.max) memberships")
        slotByID.reserveCapacity(table.count)
        access.reserveCapacity(table.count)
        // The product codes of the table's name numbers, found once per product rather than per slot.
        var productCodeOfName: [ProductCode?] = []
        table.forEachPacked { slot, packed, names in
            latestCreation = max(latestCreation, packed.createdAt)
            // Most memberships have no revocation, lifecycle or erasure: read from the packed fields. The
            // others are built in full.
            guard packed.rare == nil else { return add(table[slot], at: slot) }
            let name = Int(packed.product)
            if name >= productCodeOfName.count { productCodeOfName += Array(repeating: nil, count: name + 1 - productCodeOfName.count) }
            let product = productCodeOfName[name] ?? productCodes.intern(names[packed.product])
            productCodeOfName[name] = product
            let expiresAt = packed.flags & PackedMembership.hasExpiry != 0 ? packed.expiresAt : .max
            access.append(AccessRecord(product: product, isRevoked: false, expiresAt: expiresAt))
            add(id: packed.idBits, at: slot)
        }
    }

    private mutating func add(_ membership: Membership, at slot: Int) {
        access.append(AccessRecord(membership, product: productCodes.intern(membership.productId)))
        guard let bits = membership.id.bits else {
            access[slot].isRevoked = true
            erasedCount += 1
            return
        }
        add(id: bits, at: slot)
        guard membership.hasLifecycle else { return }
        for transaction in membership.lifecycle.transactions {
            slotsByTransaction.add(transaction.id, slot: UInt32(slot))
            slotsByOriginalTransaction.add(transaction.originalTransactionId, slot: UInt32(slot))
        }
    }

    @inline(__always)
    private mutating func add(id bits: UInt64, at slot: Int) {
        let previous = slotByID.insertIfAbsent(bits, slot: UInt32(slot))
        precondition(previous == nil, "membership id \(MembershipID(bits: bits)) is already used")
    }
}

/// Runs `first` and `second` at the same time (on two threads when the machine has two cores) and
/// returns both results.
func bothAtOnce<First: Sendable, Second: Sendable>(_ first: @Sendable () -> First, _ second: @Sendable () -> Second) -> (First, Second) {
    let results = Mutex<(First?, Second?)>((nil, nil))
    DispatchQueue.concurrentPerform(iterations: 2) { index in
        if index == 0 {
            let value = first()
            results.withLock { $0.0 = value }
        } else {
            let value = second()
            results.withLock { $0.1 = value }
        }
    }
    return results.withLock { ($0.0!, $0.1!) }
}
