/// The audit trail of one membership, read from its revisions and the membership as it is now: what
/// `history` pages through and an export lists, from a live state or from an image alike.
struct MembershipTrail {
    /// The membership's revisions, oldest first.
    let revisions: [MembershipRevision]
    /// The membership as it is now (in the state or image the revisions come from).
    let current: Membership

    /// A plain grant keeps no revision (`MembershipRevision`): its entry, first, is read from the
    /// membership as it was created.
    private var hasGrantEntry: Bool { revisions.first?.action != .grant }

    /// How many entries the trail has.
    var count: Int { revisions.count + (hasGrantEntry ? 1 : 0) }

    /// Entry `index` (oldest 0), built alone: a page of a long trail builds only its own entries.
    func entry(at index: Int) -> AuditEntry {
        if hasGrantEntry, index == 0 {
            let created = revisions.first?.before ?? current
            return AuditEntry(sequence: nil, context: ChangeContext(recordedAt: created.createdAt), change: .membership(.grant, after: created))
        }
        let position = hasGrantEntry ? index - 1 : index
        let revision = revisions[position]
        let after = position + 1 < revisions.count ? revisions[position + 1].before ?? current : current
        return AuditEntry(sequence: revision.sequence, context: revision.trailContext, change: .membership(revision.action, after: after))
    }

    /// Every entry, oldest first.
    var entries: [AuditEntry] { (0..<count).map(entry(at:)) }
}
