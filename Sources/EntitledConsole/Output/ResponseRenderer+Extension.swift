import EntitledClient

/// The answer to `extend`, and the expiry an `extend` entry of the history moved: both times are shown,
/// so that what the extension gave (and from when) is read without working it out from two tables.
extension ResponseRenderer {
    /// The membership as extended, its lifecycle notes, then
    /// `expiry moved from 2026-12-22T07:18:28.508Z (in 29 days) to 2027-01-22T07:18:28.508Z (in 60 days)`;
    /// `nil` when the response does not have that shape.
    func extended(_ response: EntitledResponse) -> String? {
        guard let membership = response.membership else { return nil }
        var lines = [membershipTable([membership])] + lifecycleNotes(membership)
        if let previous = response.previousExpiresAt {
            lines.append("expiry moved from " + time(previous) + " to " + (membership.expiresAt.map(time) ?? "lifetime"))
        }
        return lines.joined(separator: "\n")
    }

    /// `moved from T1 (29 days ago) to T2 (in 2 days)`: the EXPIRY cell of a history entry that moved the
    /// membership's expiry (its `previousExpiresAt`; the entry's membership has the expiry after);
    /// `nil` for any other entry.
    func expiryChange(of entry: HistoryEntry) -> String? {
        guard let previous = entry.previousExpiresAt else { return nil }
        return "moved from " + plainTime(previous) + " to " + (entry.membership?.expiresAt.map(plainTime) ?? "lifetime")
    }
}
