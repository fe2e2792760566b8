package dev.entitled.client;

import java.time.Instant;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A whole export: a full copy of the store as of one change ({@link #seq()}), read a page at a time on a
 * connection of its own (PROTOCOL.md §6 {@code export}; admin role only).
 *
 * <pre>{@code
 * try (EntitledExport export = client.sync().openExport(ExportRequest.start().limit(500))) {
 *     for (ExportPage page : export) {
 *         page.memberships().forEach(copy::put);
 *     }
 *     follower = client.sync().follow(ChangesRequest.afterSeq(export.seq()));   // nothing missed
 * }
 * }</pre>
 *
 * <h2>Why a connection of its own</h2>
 * The copy is held by the one server that answered the first page (for 300 s after its last read, at most
 * 4 at a time), so every page must go to that server: the pool would spread them over a cluster's nodes,
 * and another node answers {@link NotFoundException}. The export keeps them on one connection, and should
 * that connection drop, reads the page again on a new one to the same node (once a page). A big page with
 * its audit trail holds up no request of the pool meanwhile. The connection closes after the last page, or
 * with {@link #close()}.
 *
 * <p>The first page is read when the export is opened, so {@link #seq()}, {@link #time()} and
 * {@link #entitlements()} are known at once; the iteration gives it first. Pages are asked for one at a
 * time, as the iteration reaches them: one consumer. An export left unread keeps one of the server's 4
 * copies until its 300 s pass.
 */
public final class EntitledExport implements AutoCloseable, Iterable<ExportPage> {
    private final EntitledClient client;
    private final ExportRequest request;
    private final NodeAddress node;
    private final ExportPage first;

    // Guarded by `this`.
    private EntitledConnection connection;
    private boolean firstGiven;
    private String cursor;
    private boolean reading;
    private boolean closed;

    private EntitledExport(EntitledClient client, ExportRequest request, NodeAddress node, EntitledConnection connection,
                           ExportPage first) {
        this.client = client;
        this.request = request;
        this.node = node;
        this.connection = connection;
        this.first = first;
        this.cursor = first.next();
        if (cursor == null) {
            connection.close(); // a one-page copy: nothing more to read on it
            this.connection = null;
        }
    }

    /**
     * Takes the copy: connects to a node (each in turn) and reads the first page there. A node that is
     * starting ({@code loading}), busy, or already holds 4 copies ({@code over_limit}) is passed for the next;
     * when every node was starting, they are asked again until {@link ClientOptions#loadingWait()} passes.
     * Other refusals ({@code forbidden}, {@code bad_request}) fail at once.
     */
    static CompletableFuture<EntitledExport> open(EntitledClient client, ExportRequest request) {
        return CompletableFuture.supplyAsync(() -> take(client, request), Shared.BLOCKING);
    }

    private static EntitledExport take(EntitledClient client, ExportRequest request) {
        ClientOptions options = client.options;
        List<NodeAddress> nodes = options.nodes();
        int start = OwnConnection.randomStart();
        long loadingDeadline = System.nanoTime() + options.loadingWait().toNanos();
        int rounds = 0;
        while (true) {
            Map<String, EntitledException> failures = new LinkedHashMap<>();
            boolean loading = false;
            for (int i = 0; i < nodes.size(); i++) {
                NodeAddress node = nodes.get(Math.floorMod(start + i, nodes.size()));
                EntitledConnection opened;
                try {
                    opened = EntitledConnection.connect(node, options);
                } catch (EntitledException e) {
                    if (OwnConnection.refusedByConfiguration(e)) {
                        throw e;
                    }
                    failures.put(node.toString(), e);
                    loading |= e instanceof LoadingException;
                    continue;
                }
                try {
                    ExportPage page = EntitledSyncClient.await(OwnConnection.send(opened, request, budget(client, request)));
                    return new EntitledExport(client, request, node, opened, page);
                } catch (EntitledException e) {
                    opened.close();
                    if (e instanceof ServerException && !(e instanceof LoadingException || e instanceof BusyException
                            || e instanceof OverLimitException)) {
                        throw e; // refused for what it asks: another node would refuse too
                    }
                    failures.put(node.toString(), e);
                    loading |= e instanceof LoadingException;
                }
            }
            long pause = Pool.jitter(options.initialBackoff().toMillis(), options.maxBackoff().toMillis(), rounds++);
            if (!loading || System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pause) - loadingDeadline > 0) {
                throw failures.size() == 1 ? failures.values().iterator().next() : new NoNodeAvailableException(failures, "export");
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CannotConnectException(options.nodes().toString(), "interrupted while waiting for a starting server", e);
            }
        }
    }

    private static java.time.Duration budget(EntitledClient client, ExportRequest request) {
        return request.timeout() != null ? request.timeout() : client.options.requestTimeout();
    }

    /** The change the copy is as of: follow the feed after it ({@link ChangesRequest#afterSeq(long)}), and nothing is missed. */
    public long seq() {
        return first.seq();
    }

    /** When the copy was taken: the moment its memberships' statuses describe. */
    public Instant time() {
        return first.time();
    }

    /**
     * The catalog as of the copy: each entitlement and its products ({@code null} for an export opened
     * with {@link ExportRequest#after(String)}, whose first page was read before).
     */
    public Map<String, List<String>> entitlements() {
        return first.entitlements();
    }

    /** The node that holds the copy and answers every page. */
    public NodeAddress node() {
        return node;
    }

    /** Whether a page is still to be given: the first one, or one after the last page given. */
    public synchronized boolean hasNext() {
        return !firstGiven || cursor != null;
    }

    /**
     * The next page: the first one (already read) on the first call, then each page after it, read on the
     * export's connection. Throws {@link NoSuchElementException} after the last one, and
     * {@link IllegalStateException} while the page before is still being read. Fails with
     * {@link NotFoundException} when the server no longer holds the copy (300 s unread, or restarted):
     * open a new export.
     */
    public CompletableFuture<ExportPage> nextPage() {
        String after;
        synchronized (this) {
            if (!firstGiven) {
                firstGiven = true;
                return CompletableFuture.completedFuture(first);
            }
            if (cursor == null) {
                throw new NoSuchElementException("the export has no more pages");
            }
            if (reading) {
                throw new IllegalStateException("the page before is still being read: ask for the next one once it came");
            }
            if (closed) {
                return CompletableFuture.failedFuture(new ConnectionClosedException("the export is closed", "export", false, null));
            }
            reading = true;
            after = cursor;
        }
        return read(after, true).thenApply(page -> {
            if (page.seq() != first.seq()) {
                throw new ProtocolErrorException("a page of the export as of change " + first.seq() + " is as of change "
                        + page.seq(), "export", false);
            }
            return page;
        }).whenComplete((page, error) -> {
            EntitledConnection done = null;
            synchronized (this) {
                reading = false;
                if (page != null) {
                    cursor = page.next();
                    if (cursor == null) {
                        done = connection; // the last page: nothing more to read on it
                        connection = null;
                    }
                }
            }
            if (done != null) {
                done.close();
            }
        });
    }

    /** Reads the page after {@code after}; when the connection failed, once more on a new one to the same node. */
    private CompletableFuture<ExportPage> read(String after, boolean again) {
        EntitledConnection open;
        synchronized (this) {
            open = connection;
        }
        ExportRequest page = request.continuingAfter(after);
        CompletableFuture<ExportPage> answer = open != null && open.isOpen() ? OwnConnection.send(open, page, budget(client, page))
                : CompletableFuture.failedFuture(new ConnectionClosedException("the export's connection to " + node + " closed",
                        "export", false, null));
        return answer.exceptionallyCompose(error -> {
            Throwable cause = EntitledConnection.unwrap(error);
            if (!again || cause instanceof ServerException || !(cause instanceof EntitledException) || isClosed()) {
                return CompletableFuture.failedFuture(cause);
            }
            // The copy is held by the server, not by the connection: a new connection to the same node reads on.
            return CompletableFuture.supplyAsync(this::reconnect, Shared.BLOCKING).thenCompose(c -> read(after, false));
        });
    }

    private EntitledConnection reconnect() {
        EntitledConnection old;
        synchronized (this) {
            old = connection;
            connection = null;
        }
        if (old != null) {
            old.close();
        }
        EntitledConnection opened = EntitledConnection.connect(node, client.options);
        synchronized (this) {
            if (closed) {
                opened.close();
                throw new ConnectionClosedException("the export is closed", "export", false, null);
            }
            connection = opened;
        }
        return opened;
    }

    private synchronized boolean isClosed() {
        return closed;
    }

    /**
     * A blocking iterator over the pages, reading each as the iteration reaches it. {@code next()} throws
     * the {@link EntitledException} a page's read failed with.
     */
    @Override
    public Iterator<ExportPage> iterator() {
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return EntitledExport.this.hasNext();
            }

            @Override
            public ExportPage next() {
                if (!hasNext()) {
                    throw new NoSuchElementException("the export has no more pages");
                }
                return EntitledSyncClient.await(nextPage());
            }
        };
    }

    /**
     * Every membership of the copy, in creation order, reading the pages as the iteration reaches them
     * (the same pages as {@link #iterator()}: iterate one or the other, once). The audit trail, if asked
     * for, is in the pages: iterate those to have it.
     */
    public Iterable<Membership> memberships() {
        return () -> new Iterator<>() {
            private final Iterator<ExportPage> pages = iterator();
            private Iterator<Membership> page = Collections.emptyIterator();

            @Override
            public boolean hasNext() {
                while (!page.hasNext() && pages.hasNext()) {
                    page = pages.next().memberships().iterator();
                }
                return page.hasNext();
            }

            @Override
            public Membership next() {
                if (!hasNext()) {
                    throw new NoSuchElementException("no more memberships");
                }
                return page.next();
            }
        };
    }

    /**
     * Closes the export's connection. The pages not read are not read; the server lets the copy go 300 s
     * after its last read (or at once after the last page).
     */
    @Override
    public void close() {
        EntitledConnection open;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            open = connection;
            connection = null;
        }
        if (open != null) {
            open.close();
        }
    }
}
