package dev.entitled.client;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * A follower of the change feed: every item after a change number, in order, as a stream that survives
 * reconnections and server restarts (PROTOCOL.md §6 {@code changes}; admin role only).
 *
 * <pre>{@code
 * try (EntitledFeed feed = client.sync().follow(ChangesRequest.afterSeq(stored))) {
 *     for (FeedItem item : feed) {            // waits for changes; ends with close() or an error
 *         apply(item);
 *         store(feed.position());             // read on from here after a restart
 *     }
 * } catch (TruncatedException e) {
 *     // the feed no longer reaches back to `stored`: copy with openExport, follow after its seq
 * }
 * }</pre>
 *
 * <h2>How it reads</h2>
 * It reads pages on a connection of its own, one read at a time: at once while a page says more changes are
 * there ({@link FeedPage#hasMore()}), and with the request's {@code wait} (default 20 s) once it caught up,
 * so that a change is delivered as soon as it is made, without polling. The server answers the lines sent
 * after a waiting read only after it; on a connection of its own the follower holds up none of the client's
 * other requests. Each read gets the wait plus the client's request timeout.
 *
 * <h2>Failures</h2>
 * A dropped connection, a timeout, a server that is starting ({@code loading}), {@code busy} or
 * {@code unavailable} are retried with backoff (50 ms doubling to 2 s, full jitter, each node in turn), from
 * the last page read: no item is skipped, and none is delivered twice. Any other error ends the stream with
 * that error, after the items read before it: {@link TruncatedException} when the feed no longer reaches
 * back (its retention let the changes go: take a copy with {@link EntitledClient#openExport(ExportRequest)}
 * and follow after its {@link EntitledExport#seq()}), {@link ForbiddenException} for a token without the
 * admin role, {@link UnauthorizedException} for a token refused at a reconnection.
 *
 * <h2>The position</h2>
 * {@link #position()} is the change number to store: every change up to it has been delivered whole.
 * Following again from it (after a restart of the application) skips nothing, and delivers again only the
 * rest of a change whose items were partly taken (recognisable by their {@link FeedItem#sequence()}).
 *
 * <h2>Memory</h2>
 * Items go to the listener given to {@link EntitledClient#follow(Consumer, ChangesRequest)}, on the
 * follower's thread (nothing more is read until it returns); without one they wait in memory for
 * {@link #take()}, {@link #poll(Duration)}, the iterator or {@link #stream()} (one consumer). At most
 * {@link ClientOptions#maxQueuedPushes()} items wait (default 10,000): the follower reads no further page
 * until one is taken. Thread-safe otherwise.
 */
public final class EntitledFeed implements AutoCloseable, Iterable<FeedItem> {
    /** The wait of a read once the follower caught up, when the request gives none. */
    static final Duration DEFAULT_WAIT = Duration.ofSeconds(20);

    private final EntitledClient client;
    private final ChangesRequest request;
    private final Duration wait;
    private final Consumer<FeedItem> listener;
    private final int maxQueued;
    private final CompletableFuture<Void> ended = new CompletableFuture<>();

    // The items waiting to be taken (without a listener), each with the position once it is taken.
    private final ReentrantLock queueLock = new ReentrantLock();
    private final Condition notEmpty = queueLock.newCondition();
    private final Condition notFull = queueLock.newCondition();
    private final ArrayDeque<Queued> queue = new ArrayDeque<>(); // guarded by queueLock
    private boolean finished; // guarded by queueLock: nothing more comes; the queue still drains
    private EntitledException endError; // guarded by queueLock: why it finished; null after close()

    /** Written by the consumer (under queueLock) or, with a listener, by the follower's thread. */
    private volatile long position;

    // Guarded by `this`.
    private EntitledConnection connection;
    private boolean closed;

    // The follower's thread's own.
    private long readFrom;
    private boolean caughtUp;
    private int failures;
    private int nextNode = OwnConnection.randomStart();

    EntitledFeed(EntitledClient client, ChangesRequest request, Consumer<FeedItem> listener) {
        this.client = client;
        this.request = request;
        this.wait = request.waits() ? request.waitTime() : DEFAULT_WAIT;
        this.listener = listener;
        this.maxQueued = client.options.maxQueuedPushes();
        this.readFrom = request.afterSeq();
        this.position = request.afterSeq();
    }

    /**
     * Connects, then reads on a thread of its own; fails when no node takes the connection. Errors of the
     * reads themselves (forbidden, truncated) end the stream instead, as they would later.
     */
    CompletableFuture<EntitledFeed> start() {
        return CompletableFuture.supplyAsync(() -> {
            EntitledConnection opened = OwnConnection.connectAny(client.options, nextNode++, "changes");
            synchronized (this) {
                if (closed) {
                    opened.close();
                    throw new ConnectionClosedException("the follower is closed", "changes", false, null);
                }
                connection = opened;
            }
            // A long-lived loop of blocking reads: a thread of its own, named for thread dumps.
            Thread reading = new Thread(this::run, "entitled-feed " + request.describe());
            reading.setDaemon(true);
            reading.start();
            return this;
        }, Shared.BLOCKING);
    }

    /**
     * The change number to store, as {@code afterSeq} of a later {@link EntitledClient#follow}: every
     * change up to it has been delivered whole (taken from the stream, or given to the listener and
     * returned), and the changes a subject's follower leaves out are passed too. It starts at the request's
     * {@code afterSeq}, and moves on as items are taken, not as they are read.
     */
    public long position() {
        return position;
    }

    /**
     * The next item, waiting for it. Once the follower ended and every item read before was taken, throws
     * why it ended: the server's error ({@link TruncatedException}, {@link ForbiddenException}, ...), or
     * {@link ConnectionClosedException} after {@link #close()}.
     */
    public FeedItem take() throws InterruptedException {
        FeedItem item = next(-1);
        if (item == null) {
            throw closedError();
        }
        return item;
    }

    /**
     * The next item, or {@code null} when none came within {@code timeout}. Throws as {@link #take()} once
     * the follower ended.
     */
    public FeedItem poll(Duration timeout) throws InterruptedException {
        FeedItem item = next(Math.max(0, timeout.toNanos()));
        if (item == null && isClosedAndDrained()) {
            throw closedError();
        }
        return item;
    }

    /** The items waiting to be taken now: never more than {@link ClientOptions#maxQueuedPushes()}; 0 with a listener. */
    public int queuedItems() {
        queueLock.lock();
        try {
            int items = 0;
            for (Queued queued : queue) {
                items += queued.item != null ? 1 : 0;
            }
            return items;
        } finally {
            queueLock.unlock();
        }
    }

    /**
     * Completes when the follower stops reading: normally after {@link #close()}, or exceptionally with the
     * error that ended it ({@link TruncatedException}, ...). Items read before may still wait to be taken.
     * With a listener, this is how the application learns of the end.
     */
    public CompletableFuture<Void> endFuture() {
        return ended;
    }

    /**
     * A blocking iterator over the items: {@code hasNext()} waits for the next one; it is false once the
     * follower was closed (and every item read before was taken), and throws the error that ended the
     * follower otherwise ({@link TruncatedException}, ...). Interrupting the waiting thread ends the
     * iteration, with the interrupt flag set again.
     */
    @Override
    public Iterator<FeedItem> iterator() {
        return new Iterator<>() {
            private FeedItem next;

            @Override
            public boolean hasNext() {
                if (next == null) {
                    try {
                        next = EntitledFeed.this.next(-1);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return false;
                    }
                }
                return next != null;
            }

            @Override
            public FeedItem next() {
                if (!hasNext()) {
                    throw new NoSuchElementException("the follower is closed");
                }
                FeedItem item = next;
                next = null;
                return item;
            }
        };
    }

    /** The items as a sequential, ordered stream over {@link #iterator()}; closing the stream closes the follower. */
    public Stream<FeedItem> stream() {
        return StreamSupport.stream(Spliterators.spliteratorUnknownSize(iterator(), Spliterator.ORDERED | Spliterator.NONNULL), false)
                .onClose(this::close);
    }

    /**
     * Stops reading and closes the connection (a waiting read is dropped; nothing was being changed). Items
     * read before stay to be taken, then the stream ends. {@link #position()} stays what was taken.
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
            notifyAll(); // wakes a backoff pause
        }
        if (open != null) {
            open.close();
        }
        finish(null);
    }

    // MARK: taking

    /**
     * The next item; {@code null} when none came within {@code nanos} (negative: no limit) or the follower
     * was closed and drained; throws the error that ended it once drained. Taking an item (or a mark of
     * the changes a subject's read left out) moves the position.
     */
    private FeedItem next(long nanos) throws InterruptedException {
        boolean forever = nanos < 0;
        long left = nanos;
        queueLock.lockInterruptibly();
        try {
            while (true) {
                Queued queued = queue.poll();
                if (queued != null) {
                    notFull.signal(); // the follower reads on
                    position = queued.positionAfter;
                    if (queued.item != null) {
                        return queued.item;
                    }
                    continue;
                }
                if (finished) {
                    if (endError != null) {
                        throw endError;
                    }
                    return null;
                }
                if (forever) {
                    notEmpty.await();
                } else if (left <= 0) {
                    return null;
                } else {
                    left = notEmpty.awaitNanos(left);
                }
            }
        } finally {
            queueLock.unlock();
        }
    }

    private boolean isClosedAndDrained() {
        queueLock.lock();
        try {
            return finished && queue.isEmpty();
        } finally {
            queueLock.unlock();
        }
    }

    private static ConnectionClosedException closedError() {
        return new ConnectionClosedException("the follower is closed", "changes", false, null);
    }

    // MARK: reading

    /** The follower's loop: a page at a time, until closed or ended by an error. */
    private void run() {
        try {
            while (true) {
                EntitledConnection open = openConnection();
                if (open == null) {
                    return;
                }
                ChangesRequest read = request.reading(readFrom, caughtUp ? wait : null);
                FeedPage page;
                try {
                    page = EntitledSyncClient.await(OwnConnection.send(open, read, read.budget(client.options)));
                } catch (EntitledException e) {
                    if (isClosed()) {
                        return;
                    }
                    if (!retried(e)) {
                        finish(e);
                        return;
                    }
                    drop(open);
                    pause();
                    continue;
                }
                failures = 0;
                if (!deliver(page)) {
                    return;
                }
                readFrom = Math.max(readFrom, page.next());
                caughtUp = !page.hasMore();
            }
        } catch (RuntimeException | Error e) {
            finish(e instanceof EntitledException ? (EntitledException) e
                    : new EntitledException("the follower failed: " + e, "changes", false, e));
            if (e instanceof Error) {
                throw (Error) e;
            }
        }
    }

    /**
     * Whether a failed read is tried again: the connection's failures (not sent, dropped, timed out, a line
     * cut off by a crash) and a server that cannot serve now. Not the configuration's failures, nor the
     * server's refusals of the read itself.
     */
    private static boolean retried(EntitledException error) {
        if (error instanceof ServerException) {
            return error instanceof LoadingException || error instanceof BusyException || error instanceof UnavailableException;
        }
        return !OwnConnection.refusedByConfiguration(error);
    }

    /** The open connection, connecting again (with backoff) when it dropped; {@code null} once closed or ended. */
    private EntitledConnection openConnection() {
        while (true) {
            synchronized (this) {
                if (closed) {
                    return null;
                }
                if (connection != null && connection.isOpen()) {
                    return connection;
                }
                connection = null;
            }
            try {
                EntitledConnection opened = OwnConnection.connectAny(client.options, nextNode++, "changes");
                synchronized (this) {
                    if (closed) {
                        opened.close();
                        return null;
                    }
                    connection = opened;
                }
                return opened;
            } catch (EntitledException e) {
                if (!retried(e)) {
                    finish(e);
                    return null;
                }
                pause();
            }
        }
    }

    private void drop(EntitledConnection lost) {
        synchronized (this) {
            if (connection == lost) {
                connection = null;
            }
        }
        lost.close(); // a read that timed out would still be answered on it
    }

    /** Waits the backoff (full jitter, doubling per failure in a row); close() cuts it short. */
    private void pause() {
        long delay = Pool.jitter(client.options.initialBackoff().toMillis(), client.options.maxBackoff().toMillis(), failures++);
        long deadline = System.nanoTime() + delay * 1_000_000L;
        synchronized (this) {
            long left;
            while (!closed && (left = deadline - System.nanoTime()) > 0) {
                try {
                    wait(Math.max(1, left / 1_000_000L));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private synchronized boolean isClosed() {
        return closed;
    }

    /**
     * Hands the page's items on, each with the position once it is taken: its change's number when the
     * change's last item is taken, the page's {@code next} after the page's last item (or for an empty
     * page that moved on). False once the follower was closed or ended.
     */
    private boolean deliver(FeedPage page) {
        if (page.next() < readFrom) {
            finish(new ProtocolErrorException("a changes page after " + readFrom + " whose next is " + page.next(), "changes", true));
            return false;
        }
        List<FeedItem> items = page.changes();
        long done = readFrom;
        long previous = readFrom;
        for (int i = 0; i < items.size(); i++) {
            FeedItem item = items.get(i);
            if (item.sequence() <= readFrom || item.sequence() < previous) {
                finish(new ProtocolErrorException("a changes page after " + readFrom + " holds change " + item.sequence()
                        + " after change " + previous + ": out of order", "changes", true));
                return false;
            }
            previous = item.sequence();
            if (i == items.size() - 1) {
                done = Math.max(page.next(), item.sequence());
            } else if (items.get(i + 1).sequence() != item.sequence()) {
                done = item.sequence();
            }
            if (!hand(item, done)) {
                return false;
            }
        }
        return !items.isEmpty() || page.next() <= readFrom || hand(null, page.next());
    }

    /** Gives one item (or, when {@code item} is null, a move of the position only) to the listener or the queue. */
    private boolean hand(FeedItem item, long positionAfter) {
        if (listener != null) {
            if (isClosed()) {
                return false;
            }
            if (item != null) {
                listener.accept(item);
            }
            position = positionAfter;
            return true;
        }
        queueLock.lock();
        try {
            while (queue.size() >= maxQueued && !finished) {
                notFull.awaitUninterruptibly();
            }
            if (finished) {
                return false;
            }
            if (item == null) {
                Queued tail = queue.peekLast();
                if (tail == null) {
                    position = positionAfter; // nothing waits to be taken: every change up to it was delivered
                    return true;
                }
                if (tail.item == null) {
                    queue.pollLast(); // one mark is enough
                }
            }
            queue.add(new Queued(item, positionAfter));
            notEmpty.signal();
            return true;
        } finally {
            queueLock.unlock();
        }
    }

    /** Ends the stream (once): {@code error} is why, or {@code null} after close(). */
    private void finish(EntitledException error) {
        queueLock.lock();
        try {
            if (finished) {
                return;
            }
            finished = true;
            endError = error;
            notEmpty.signalAll();
            notFull.signalAll(); // the follower blocked on the full queue goes on, and stops
        } finally {
            queueLock.unlock();
        }
        if (error == null) {
            ended.complete(null);
            return;
        }
        EntitledConnection open;
        synchronized (this) {
            closed = true;
            open = connection;
            connection = null;
            notifyAll();
        }
        if (open != null) {
            open.close();
        }
        ended.completeExceptionally(error);
    }

    /** An item waiting to be taken (or, without one, a move of the position), with the position once taken. */
    private record Queued(FeedItem item, long positionAfter) {
    }
}
