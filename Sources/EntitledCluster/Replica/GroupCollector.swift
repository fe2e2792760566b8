import EntitledCore
import EntitledStorage
import NIOConcurrencyHelpers

/// The store's journal in cluster mode: collects the changes a group of writes makes, encoded as the
/// change table holds them, while the group is open. Outside a group it refuses changes, so that no
/// change can reach memory without going through the database.
final class GroupCollector: ChangeJournal {
    private let records = NIOLockedValueBox<[(sequence: UInt64, record: [UInt8])]?>(nil)

    func record(_ change: StoreChange, context: ChangeContext, sequence: UInt64) throws(JournalError) {
        let encoded = PortableRecords.encodeChange(change, context: context, sequence: sequence)
        let taken = records.withLockedValue { records -> Bool in
            guard records != nil else { return false }
            records!.append((sequence, encoded))
            return true
        }
        guard taken else {
            throw JournalError(reason: "in cluster mode every change goes through the database, and this one did not")
        }
    }

    func open() {
        records.withLockedValue { $0 = [] }
    }

    /// Ends the group and returns its changes, in order.
    func close() -> [(sequence: UInt64, record: [UInt8])] {
        records.withLockedValue { records in
            defer { records = nil }
            return records ?? []
        }
    }
}
