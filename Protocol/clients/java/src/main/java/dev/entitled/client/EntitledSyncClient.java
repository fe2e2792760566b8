package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;

/**
 * The blocking API of an {@link EntitledClient} ({@code client.sync()}), as Lettuce's
 * {@code RedisCommands} is to its async API: every method waits for the answer and returns it, or throws
 * the {@link EntitledException} the future failed with. Requests of several threads still share the pool's
 * pipelined connections. Interrupting a waiting thread cancels its request (its answer is dropped when it
 * comes) and throws {@link CancellationException} with the interrupt flag set again.
 */
public final class EntitledSyncClient {
    private final EntitledClient client;

    EntitledSyncClient(EntitledClient client) {
        this.client = client;
    }

    /** The asynchronous client underneath. */
    public EntitledClient async() {
        return client;
    }

    public void ping() {
        await(client.ping());
    }

    public Hello hello() {
        return await(client.hello());
    }

    public GrantResult grant(GrantRequest request) {
        return await(client.grant(request));
    }

    public CheckResult check(CheckRequest request) {
        return await(client.check(request));
    }

    public ClaimResult claim(ClaimRequest request) {
        return await(client.claim(request));
    }

    public MembershipResult revoke(RevokeRequest request) {
        return await(client.revoke(request));
    }

    public ExtendResult extend(ExtendRequest request) {
        return await(client.extend(request));
    }

    /** One page; {@link #allMemberships(MembershipsRequest)} follows them all. */
    public Page<Membership> memberships(MembershipsRequest request) {
        return await(client.memberships(request));
    }

    /** Every membership of the listing, asking for the next page as the iteration reaches it. */
    public Iterable<Membership> allMemberships(MembershipsRequest request) {
        return () -> new Items<>(client.membershipPages(request));
    }

    public CatalogChange define(DefineRequest request) {
        return await(client.define(request));
    }

    public CatalogChange undefine(UndefineRequest request) {
        return await(client.undefine(request));
    }

    public Map<String, List<String>> catalog() {
        return await(client.catalog());
    }

    public SnapshotResult snapshot() {
        return await(client.snapshot());
    }

    public EventResult event(EventRequest request) {
        return await(client.event(request));
    }

    public Customer customer(CustomerRequest request) {
        return await(client.customer(request));
    }

    /** One page; {@link #allHistory(HistoryRequest)} follows them all. */
    public Page<HistoryEntry> history(HistoryRequest request) {
        return await(client.history(request));
    }

    /** Every entry of the trail, asking for the next page as the iteration reaches it. */
    public Iterable<HistoryEntry> allHistory(HistoryRequest request) {
        return () -> new Items<>(client.historyPages(request));
    }

    public Stats stats() {
        return await(client.stats());
    }

    public long reload() {
        return await(client.reload());
    }

    public EraseResult erase(EraseRequest request) {
        return await(client.erase(request));
    }

    /** A watch of these targets; iterate it, or {@link EntitledWatch#take()} its events. */
    public EntitledWatch watch(WatchTarget... targets) {
        return await(client.watch(targets));
    }

    /** A watch delivering its events to {@code listener}. */
    public EntitledWatch watch(Consumer<WatchEvent> listener, WatchTarget... targets) {
        return await(client.watch(listener, targets));
    }

    /** One page of the change feed; a read that waits goes on a connection of its own (see {@link EntitledClient#changes}). */
    public FeedPage changes(ChangesRequest request) {
        return await(client.changes(request));
    }

    /** A follower of the change feed; iterate it, or {@link EntitledFeed#take()} its items. */
    public EntitledFeed follow(ChangesRequest request) {
        return await(client.follow(request));
    }

    /** A follower of the change feed delivering its items to {@code listener}. */
    public EntitledFeed follow(Consumer<FeedItem> listener, ChangesRequest request) {
        return await(client.follow(listener, request));
    }

    /** One page of an export, through the pool; {@link #openExport(ExportRequest)} reads a whole one. */
    public ExportPage export(ExportRequest request) {
        return await(client.export(request));
    }

    /** A full copy, its first page read; iterate its pages (every one on the same connection). */
    public EntitledExport openExport(ExportRequest request) {
        return await(client.openExport(request));
    }

    /** {@link EntitledClient#request(ObjectNode)}: the raw answer, error answers included. */
    public ObjectNode request(ObjectNode request) {
        return await(client.request(request));
    }

    /** {@link EntitledClient#request(ObjectNode, Duration)}. */
    public ObjectNode request(ObjectNode request, Duration timeout) {
        return await(client.request(request, timeout));
    }

    /** The result, or the {@link EntitledException} (unchecked) the future failed with. */
    static <T> T await(CompletableFuture<T> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            throw new CancellationException("interrupted while waiting for the answer");
        } catch (ExecutionException e) {
            Throwable cause = EntitledConnection.unwrap(e);
            if (cause instanceof RuntimeException) {
                // Rethrown as it is, so callers catch NotFoundException etc.; the stack trace is the
                // reader thread's, which says where the answer came from, not who asked.
                throw (RuntimeException) cause;
            }
            if (cause instanceof Error) {
                throw (Error) cause;
            }
            throw new EntitledException(String.valueOf(cause), null, false, cause);
        }
    }

    /** The items of a listing's pages, fetching each page when the iteration reaches it. */
    private static final class Items<T> implements Iterator<T> {
        private final AsyncPages<T> pages;
        private Iterator<T> page = List.<T>of().iterator();

        Items(AsyncPages<T> pages) {
            this.pages = pages;
        }

        @Override
        public boolean hasNext() {
            while (!page.hasNext() && pages.hasNext()) {
                page = await(pages.nextPage()).items().iterator();
            }
            return page.hasNext();
        }

        @Override
        public T next() {
            if (!hasNext()) {
                throw new NoSuchElementException("no more items");
            }
            return page.next();
        }
    }
}
