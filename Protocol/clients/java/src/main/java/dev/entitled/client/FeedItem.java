package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.List;

/**
 * One item of the change feed ({@code changes}): an audit entry, as {@link HistoryEntry} is, that always
 * carries its change's {@code sequence}, and says what the change left: a membership as the change left it
 * (status as of the change), an entitlement's products, or an erasure. The items of one change (a
 * {@code claim} that moved several memberships) share its sequence, and a page never splits them. Fields an
 * item does not carry are {@code null}, its lists empty.
 *
 * <p>To keep a copy: put {@link #membership()} in it by id; for an erasure, delete
 * {@link #erasedMemberships()} from it, and take the device off {@link #detachedMemberships()} (other users'
 * memberships bought on the erased device: their device was the one erased).
 *
 * @param sequence the change's number (1 or more): read on after it; an item delivered again after a
 *     failure has the same one
 * @param time when the server recorded the change
 * @param actor who made it (the token's name, or {@code local})
 * @param action {@code grant}, {@code claim}, {@code revoke}, {@code transfer}, {@code extend}, an event
 *     type such as {@code renewal}, {@code define}, {@code undefine}, {@code erase}, or a later value
 * @param reason the request's reason, or {@code null}
 * @param membership for a membership's change: the membership as the change left it (status as of the
 *     change); as in the audit trail, only the membership's newest item carries its {@code transactions}
 * @param eventId for an event: its id
 * @param eventTime for an event: its time
 * @param previousExpiresAt for {@code extend}: the expiry before
 * @param formerOwnerUser for a {@code transfer}: the user the membership was taken from
 * @param formerOwnerDevice for a {@code transfer} of a guest purchase: the device it was taken from
 * @param entitlement for {@code define}/{@code undefine}: the entitlement
 * @param products for {@code define}/{@code undefine}: its products
 * @param erasedMembershipCount for {@code erase}: how many memberships it removed
 * @param erasedHistoryEntryCount for {@code erase}: how many audit entries went with them
 * @param erasedMemberships for {@code erase}: the ids of the memberships it removed (delete them from any copy)
 * @param detachedMemberships for {@code erase}: the ids of other users' memberships that lost the erased device
 * @param raw the item as the server wrote it (what a webhook passes on whole; fields of a newer server)
 */
public record FeedItem(long sequence, Instant time, String actor, String action, String reason, Membership membership,
                       String eventId, Instant eventTime, Instant previousExpiresAt, String formerOwnerUser,
                       String formerOwnerDevice, String entitlement, List<String> products, Long erasedMembershipCount,
                       Long erasedHistoryEntryCount, List<String> erasedMemberships, List<String> detachedMemberships,
                       ObjectNode raw) {

    /** Whether it is an erasure's item (which names only membership ids, never a person). */
    public boolean isErasure() {
        return erasedMembershipCount != null;
    }

    /** The item as an entry of the audit trail, as {@code history} lists it. */
    public HistoryEntry toHistoryEntry() {
        return new HistoryEntry(time, actor, action, reason, sequence, eventId, eventTime, previousExpiresAt, membership,
                entitlement, products, erasedMembershipCount, erasedHistoryEntryCount);
    }
}
