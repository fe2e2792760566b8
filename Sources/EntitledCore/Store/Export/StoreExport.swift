/// A full copy of the store as of one change, read a page at a time while writes go on: what `export`
/// answers, so that a consumer can copy every membership and then follow the change feed from the change
/// the copy names (`EntitlementStore.changes(after:limit:newest:)`).
///
/// It holds an image of the store (`StoreImage`), which shares the store's tables: a write after it copies
/// only the chunk it touches (4096 memberships), so an export costs memory as writes go on, at most one
/// more copy of the tables however long it is read. Memberships erased after it stay in it until it is
/// dropped; the feed's erasure item after `sequence` names them.
public final class StoreExport: Sendable {
    /// The change the copy is as of: follow the feed after it.
    public let sequence: UInt64
    /// When the copy was taken: every membership's status is computed then.
    public let moment: Timestamp
    private let image: StoreImage

    init(image: StoreImage, moment: Timestamp) {
        self.sequence = image.sequence
        self.moment = moment
        self.image = image
    }

    /// How many membership places the copy has (some of them erased before it was taken).
    public var slotCount: Int { image.memberships.count }

    /// The catalog as of `sequence`, sorted by entitlement.
    public var catalog: [(entitlement: String, products: [String])] {
        image.catalog.sorted { $0.key < $1.key }.map { (entitlement: $0.key, products: $0.value) }
    }

    /// The trail of the catalog and of the erasures, oldest first: the audit entries no membership holds.
    public var storeTrail: [AuditEntry] {
        let catalog = image.catalogRevisions.map { revision in
            AuditEntry(
                sequence: revision.sequence, context: revision.context,
                change: revision.isRemoval
                    ? .catalogRemoval(entitlement: revision.entitlement, products: revision.products)
                    : .catalog(entitlement: revision.entitlement, products: revision.products)
            )
        }
        let erasures = image.erasures.map { erasure in
            AuditEntry(
                sequence: erasure.sequence, context: erasure.context,
                change: .erasure(memberships: erasure.memberships, historyEntries: erasure.historyEntries)
            )
        }
        return (catalog + erasures).sorted { ($0.sequence ?? 0) < ($1.sequence ?? 0) }
    }

    /// The memberships from place `start` on, in creation order: at most `limit` of them, and with
    /// `history` their audit trails, oldest first, at most about `maximumHistoryEntries` entries (a
    /// membership's trail is never split); looking at no more than `Limits.maximumSlotsPerSourcePage`
    /// places, so that a stretch of erased ones costs a page no more than a full one. `next` is the place
    /// to go on from; `nil` after the last.
    public func page(from start: Int, limit: Int, history: Bool, maximumHistoryEntries: Int = 10_000) -> ExportPage {
        var memberships: [Membership] = []
        var entries: [AuditEntry] = []
        var slot = max(0, start)
        let end = min(image.memberships.count, slot + Limits.maximumSlotsPerSourcePage)
        while slot < end, memberships.count < limit {
            let membership = image.memberships[slot]
            if !membership.isErased {
                if history {
                    if !memberships.isEmpty, entries.count >= maximumHistoryEntries { break }
                    entries += MembershipTrail(revisions: image.revisions[UInt32(slot)] ?? [], current: membership).entries
                }
                memberships.append(membership)
            }
            slot += 1
        }
        return ExportPage(memberships: memberships, history: entries, next: slot < image.memberships.count ? slot : nil)
    }
}

/// One page of an export (`StoreExport.page(from:limit:history:maximumHistoryEntries:)`).
public struct ExportPage: Sendable {
    /// In creation order, each as of the export's change.
    public var memberships: [Membership]
    /// With history: the audit trails of `memberships`, each oldest first.
    public var history: [AuditEntry]
    /// The place the next page starts at; `nil` after the last membership.
    public var next: Int?
}

extension EntitlementStore {
    /// A full copy of the store as of its newest change (`StoreExport`), taken at once: a few references,
    /// not the data.
    public func export() -> StoreExport {
        let moment = clock()
        return StoreExport(image: image(), moment: moment)
    }
}
