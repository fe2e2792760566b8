package dev.entitled.client;

import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The pages of a {@code memberships} or {@code history} listing, asked for one at a time: each request is
 * the first one with {@code after} set to the page before's {@code next}, passed back unchanged. Pages stay
 * consistent while the data changes (PROTOCOL.md §5 Pages): nothing is listed twice, and what existed when
 * the listing began and still exists is listed once.
 *
 * <pre>{@code
 * AsyncPages<Membership> pages = client.membershipPages(MembershipsRequest.user("alice").limit(500));
 * pages.forEach(m -> System.out.println(m.id())).join();
 * }</pre>
 *
 * Not thread-safe: one consumer asks for one page at a time.
 *
 * @param <T> {@link Membership} or {@link HistoryEntry}
 */
public final class AsyncPages<T> {
    private final Function<String, CompletableFuture<Page<T>>> fetch;
    private final boolean emptyPagesAllowed;
    private String cursor;
    private boolean more = true;

    AsyncPages(Function<String, CompletableFuture<Page<T>>> fetch, String after, boolean emptyPagesAllowed) {
        this.fetch = fetch;
        this.cursor = after;
        this.emptyPagesAllowed = emptyPagesAllowed;
    }

    /** Whether another page is to be asked for: true until a page without {@code next} came. */
    public boolean hasNext() {
        return more;
    }

    /**
     * Asks for the next page. Throws {@link NoSuchElementException} after the last one. A page whose
     * {@code next} does not move on (the same cursor, or after an empty page of a subject's listing) fails
     * with {@link ProtocolErrorException}: following it would never end.
     */
    public CompletableFuture<Page<T>> nextPage() {
        if (!more) {
            throw new NoSuchElementException("the listing has no more pages");
        }
        String asked = cursor;
        return fetch.apply(asked).thenApply(page -> {
            if (page.next() == null) {
                more = false;
            } else if (page.next().equals(asked) || (page.items().isEmpty() && !emptyPagesAllowed)) {
                more = false;
                throw new ProtocolErrorException("a page of " + page.items().size() + " items whose next \""
                        + page.next() + "\" does not move on from " + asked, null, false);
            }
            cursor = page.next();
            return page;
        });
    }

    /** Follows every page to the end, giving each item to {@code action} in order. */
    public CompletableFuture<Void> forEach(Consumer<? super T> action) {
        Objects.requireNonNull(action, "action");
        if (!more) {
            return CompletableFuture.completedFuture(null);
        }
        return nextPage().thenCompose(page -> {
            page.items().forEach(action);
            return forEach(action);
        });
    }
}
