package dev.entitled.client;

import java.util.List;

/**
 * One page of {@code memberships} or {@code history}: at most the request's {@code limit} items.
 *
 * @param items the page's items (newest first; a source's memberships oldest first)
 * @param next when more follow: what to pass back, unchanged, as {@code after}; {@code null} on the last page
 * @param <T> {@link Membership} or {@link HistoryEntry}
 */
public record Page<T>(List<T> items, String next) {
    /** Whether another page follows. */
    public boolean hasNext() {
        return next != null;
    }
}
