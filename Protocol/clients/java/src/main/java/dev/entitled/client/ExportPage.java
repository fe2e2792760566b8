package dev.entitled.client;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The answer of {@code export}: one page of a full copy of the store as of change {@link #seq()}.
 * Memberships come in creation order, each as of that change, their statuses computed at {@link #time()}.
 * Copy every page, then follow the feed after {@code seq} ({@link ChangesRequest#afterSeq(long)}): no
 * change is missed, and none is in both.
 *
 * @param seq the change the copy is as of: read the feed after it
 * @param time when the copy was taken: the moment its statuses describe
 * @param entitlements the catalog as of the copy (each entitlement and its products), on the first page
 *     only; {@code null} on the others
 * @param memberships the page's memberships, in creation order
 * @param history with {@link ExportRequest#history(boolean)}: the audit trail of the page's memberships
 *     (the first page's also the catalog's and the erasures'); empty otherwise
 * @param next when more pages follow: what to pass back, unchanged, as {@code after}; {@code null} on the
 *     last page
 */
public record ExportPage(long seq, Instant time, Map<String, List<String>> entitlements, List<Membership> memberships,
                         List<HistoryEntry> history, String next) {
    /** Whether another page follows. */
    public boolean hasNext() {
        return next != null;
    }
}
