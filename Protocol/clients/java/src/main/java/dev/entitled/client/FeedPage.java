package dev.entitled.client;

import java.util.List;

/**
 * The answer of {@code changes}: one page of the change feed, oldest first.
 *
 * @param changes the items after the read's {@code afterSeq} (empty when a waiting read's time was up)
 * @param next the {@code afterSeq} of the next read: the number of the page's last change, or
 *     {@code newest} when the page read every change up to it (it moves on past the changes a subject's
 *     read leaves out); store it to read on from here after a restart
 * @param newest the newest change the page could show
 * @param oldestAfterSeq the oldest {@code afterSeq} the feed accepts now: from an older one, a read is
 *     answered {@link TruncatedException}
 */
public record FeedPage(List<FeedItem> changes, long next, long newest, long oldestAfterSeq) {
    /**
     * Whether more changes are there to read now ({@code next < newest}): read on at once; otherwise the
     * reader caught up, and reads on with a {@code wait}.
     */
    public boolean hasMore() {
        return next < newest;
    }
}
