package dev.entitled.client;

import java.time.Instant;
import java.util.List;

/**
 * One entry of the audit trail (PROTOCOL.md §5 Audit trail). Fields an entry does not carry are
 * {@code null}.
 *
 * @param time when the server recorded the change
 * @param actor who made it (the token's name, or {@code local})
 * @param action {@code grant}, {@code claim}, {@code revoke}, {@code extend}, {@code transfer}, an event
 *     type, {@code define}, {@code undefine}, {@code erase}, or a later value
 * @param reason the request's reason, or {@code null}
 * @param sequence the change number, or {@code null} for a plain grant
 * @param eventId for an event: its id
 * @param eventTime for an event: its time
 * @param previousExpiresAt for {@code extend}: the expiry before
 * @param membership for a membership's change: the membership as it left it
 * @param entitlement for {@code define}/{@code undefine}: the entitlement
 * @param products for {@code define}/{@code undefine}: its products
 * @param erasedMemberships for {@code erase}: the memberships removed
 * @param erasedHistoryEntries for {@code erase}: the entries removed
 */
public record HistoryEntry(Instant time, String actor, String action, String reason, Long sequence, String eventId,
                           Instant eventTime, Instant previousExpiresAt, Membership membership, String entitlement,
                           List<String> products, Long erasedMemberships, Long erasedHistoryEntries) {
}
