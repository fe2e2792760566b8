package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * A watch: the pushed lines of its targets, as a stream that survives reconnections (PROTOCOL.md §5
 * Watching).
 *
 * <p>It holds a connection of its own, so that no request ever waits behind pushed lines, and reads it
 * as long as the application keeps up (the server closes a watching connection that leaves 4 MiB unread). When the connection drops,
 * it reconnects with backoff (50 ms doubling to 2 s, full jitter, trying each node), watches every target
 * again, and delivers a {@link WatchEvent.Gap} before the next push: lines of the time between may be
 * missing, so re-read the state you rely on. Closing it unwatches and closes its connection, and ends the
 * stream with {@link WatchEvent.Ended}.
 *
 * <pre>{@code
 * try (EntitledWatch watch = client.sync().watch(WatchTarget.user("alice"))) {
 *     for (WatchEvent event : watch) {
 *         if (event instanceof WatchEvent.Pushed pushed) { ... pushed.push().membership() ... }
 *         else if (event instanceof WatchEvent.Gap) { ... re-read with check or customer ... }
 *     }
 * }
 * }</pre>
 *
 * Events go to the listener given to {@link EntitledClient#watch(Consumer, WatchTarget...)}, on the watch's
 * reader thread; without one they wait in memory for {@link #take()}, {@link #poll(Duration)} or the
 * iterator (one consumer). Thread-safe otherwise.
 *
 * <p>Memory is bounded by backpressure: at most {@link ClientOptions#maxQueuedPushes()} events (default
 * 10,000) wait to be taken; when that many wait, the reader thread blocks and reads the connection no further
 * until one is taken. The server holds the lines meanwhile; an application that stays behind until 4 MiB are
 * unread has its connection closed by the server, and the watch reconnects and delivers a
 * {@link WatchEvent.Gap} as after any drop. No event is dropped by the client. A listener is bounded by
 * nature: it runs on the reader thread, which reads nothing more until it returns. {@link #close()} wakes a
 * blocked reader at once.
 */
public final class EntitledWatch implements AutoCloseable, Iterable<WatchEvent> {
    private static final WatchEvent.Ended CLOSED = new WatchEvent.Ended(null);

    private final EntitledClient client;
    private final List<WatchTarget> targets;
    private final Consumer<WatchEvent> listener;
    private final int maxQueued;

    // The events waiting to be taken (without a listener): at most maxQueued, then the end, given after them.
    private final ReentrantLock queueLock = new ReentrantLock();
    private final Condition notEmpty = queueLock.newCondition();
    private final Condition notFull = queueLock.newCondition();
    private final ArrayDeque<WatchEvent> queue = new ArrayDeque<>(); // guarded by queueLock
    private WatchEvent.Ended endEvent; // guarded by queueLock; set once, given after the queue drained

    // Guarded by `this`.
    private EntitledConnection connection;
    private boolean closed;
    private boolean ended;
    private int failures;
    private int nextNode = ThreadLocalRandom.current().nextInt(1 << 16);

    /** Set once taken from the queue, for the iterator and take() after the end. */
    private volatile boolean drained;

    EntitledWatch(EntitledClient client, List<WatchTarget> targets, Consumer<WatchEvent> listener) {
        if (targets.isEmpty()) {
            throw new IllegalArgumentException("a watch needs at least one target");
        }
        this.client = client;
        this.targets = new ArrayList<>(targets);
        this.listener = listener;
        this.maxQueued = client.options.maxQueuedPushes();
    }

    /** Connects and watches; fails when no node takes the watch (its error: forbidden, over_limit, ...). */
    CompletableFuture<EntitledWatch> start() {
        return CompletableFuture.supplyAsync(() -> {
            Session session = open(null);
            session.live(null);
            return this;
        }, Shared.BLOCKING);
    }

    /** The targets watched. */
    public synchronized List<WatchTarget> targets() {
        return List.copyOf(targets);
    }

    /** Adds a target to this watch's connection (and to every connection it makes again). */
    public CompletableFuture<Void> add(WatchTarget target) {
        EntitledConnection open;
        synchronized (this) {
            targets.add(target);
            open = connection;
        }
        return open == null ? CompletableFuture.completedFuture(null) : send(open, "watch", target).thenApply(answer -> null);
    }

    /** {@code unwatch}: stops watching one target; the others go on. */
    public CompletableFuture<Void> unwatch(WatchTarget target) {
        EntitledConnection open;
        synchronized (this) {
            targets.remove(target);
            open = connection;
        }
        return open == null ? CompletableFuture.completedFuture(null) : send(open, "unwatch", target).thenApply(answer -> null);
    }

    /** The next event, waiting for it; after the end, the {@link WatchEvent.Ended} again. */
    public WatchEvent take() throws InterruptedException {
        queueLock.lockInterruptibly();
        try {
            while (queue.isEmpty() && endEvent == null) {
                notEmpty.await();
            }
            return taken();
        } finally {
            queueLock.unlock();
        }
    }

    /** The next event, or {@code null} when none came within {@code timeout}. */
    public WatchEvent poll(Duration timeout) throws InterruptedException {
        long nanos = timeout.toNanos();
        queueLock.lockInterruptibly();
        try {
            while (queue.isEmpty() && endEvent == null) {
                if (nanos <= 0) {
                    return null;
                }
                nanos = notEmpty.awaitNanos(nanos);
            }
            return taken();
        } finally {
            queueLock.unlock();
        }
    }

    /**
     * The events waiting to be taken now (without the final {@link WatchEvent.Ended}): never more than
     * {@link ClientOptions#maxQueuedPushes()}; always 0 with a listener.
     */
    public int queuedEvents() {
        queueLock.lock();
        try {
            return queue.size();
        } finally {
            queueLock.unlock();
        }
    }

    /** Takes the head of the queue, or the end once it drained (every later take() sees the end too). */
    private WatchEvent taken() {
        WatchEvent event = queue.poll();
        if (event != null) {
            notFull.signalAll(); // the reader goes on reading
            return event;
        }
        drained = true;
        return endEvent;
    }

    /**
     * Queues one event; while the queue is full, blocks the calling thread (the reader, or the one
     * re-watching) until an event is taken or the watch ends.
     */
    private void enqueue(WatchEvent event) {
        queueLock.lock();
        try {
            while (queue.size() >= maxQueued && endEvent == null) {
                notFull.awaitUninterruptibly();
            }
            if (endEvent != null) {
                return; // closed or ended: nobody takes events after the end
            }
            queue.add(event);
            notEmpty.signal();
        } finally {
            queueLock.unlock();
        }
    }

    /**
     * A blocking iterator over the events: {@code hasNext()} waits for the next one, and is false once the
     * stream ended (the {@link WatchEvent.Ended} is not returned by it). Interrupting the waiting thread
     * ends the iteration.
     */
    @Override
    public Iterator<WatchEvent> iterator() {
        return new Iterator<>() {
            private WatchEvent next;

            @Override
            public boolean hasNext() {
                if (next == null && !drained) {
                    try {
                        next = take();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return false;
                    }
                }
                return next != null && !(next instanceof WatchEvent.Ended);
            }

            @Override
            public WatchEvent next() {
                if (!hasNext()) {
                    throw new NoSuchElementException("the watch ended");
                }
                WatchEvent event = next;
                next = null;
                return event;
            }
        };
    }

    /** Unwatches, closes the connection and ends the stream. */
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
            // Unwatch first, so the server stops pushing at once; the connection closes with the answer,
            // or after a second if none comes.
            CompletableFuture<ObjectNode> answer = new CompletableFuture<>();
            open.sendTyped(new Pending(new EntitledConnection.FutureReceiver(answer), "unwatch"), line -> { });
            answer.orTimeout(1, TimeUnit.SECONDS).whenComplete((a, e) -> open.close());
        }
        end(CLOSED);
    }

    // MARK: connecting and re-watching

    /**
     * Connects to a node (each in turn, from the next one) and watches every target. Blocking. Throws the
     * last failure when no node took it.
     */
    private Session open(Instant lostAt) {
        List<NodeAddress> nodes = client.options.nodes();
        EntitledException last = null;
        for (int i = 0; i < nodes.size(); i++) {
            NodeAddress node;
            synchronized (this) {
                if (closed) {
                    throw new ConnectionClosedException("the watch is closed", "watch", false, null);
                }
                node = nodes.get(Math.floorMod(nextNode++, nodes.size()));
            }
            EntitledConnection opened;
            try {
                opened = EntitledConnection.connect(node, client.options);
            } catch (EntitledException e) {
                last = e;
                continue;
            }
            Session session = new Session(lostAt);
            opened.setPushListener(session::pushed);
            List<WatchTarget> watched;
            synchronized (this) {
                watched = List.copyOf(targets);
            }
            try {
                List<CompletableFuture<ObjectNode>> answers = new ArrayList<>();
                for (WatchTarget target : watched) {
                    answers.add(send(opened, "watch", target));
                }
                CompletableFuture.allOf(answers.toArray(new CompletableFuture<?>[0]))
                        .get(client.options.connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
            } catch (Exception e) {
                opened.close();
                Throwable cause = EntitledConnection.unwrap(e);
                EntitledException error = cause instanceof EntitledException ? (EntitledException) cause
                        : new ConnectionClosedException("watching on " + node + " failed: " + cause, "watch", false, cause);
                if (error instanceof ServerException && !(error instanceof LoadingException)) {
                    throw error; // the server refused the watch itself: another node would too
                }
                last = error;
                continue;
            }
            synchronized (this) {
                if (closed) {
                    opened.close();
                    throw new ConnectionClosedException("the watch is closed", "watch", false, null);
                }
                connection = opened;
                failures = 0;
            }
            opened.setCloseListener(c -> dropped(c));
            return session;
        }
        throw last != null ? last : new NoNodeAvailableException(Map.of(), "watch");
    }

    private CompletableFuture<ObjectNode> send(EntitledConnection open, String op, WatchTarget target) {
        CompletableFuture<ObjectNode> answer = new CompletableFuture<>();
        open.sendTyped(new Pending(new EntitledConnection.FutureReceiver(answer), op), target::writeFields);
        return answer.thenApply(node -> {
            if (!node.path("ok").asBoolean(false)) {
                throw ErrorCode.fromAnswer(node, op);
            }
            return node;
        });
    }

    private void dropped(EntitledConnection lost) {
        Instant lostAt = Instant.now();
        long delay;
        synchronized (this) {
            if (closed || connection != lost) {
                return;
            }
            connection = null;
            delay = Pool.jitter(client.options.initialBackoff().toMillis(), client.options.maxBackoff().toMillis(), failures++);
        }
        String reason = lost.closeFuture().getNow(null) != null ? lost.closeFuture().getNow(null).getMessage() : "the connection closed";
        Shared.TIMER.schedule(() -> Shared.BLOCKING.execute(() -> reconnect(lostAt, reason)), delay, TimeUnit.MILLISECONDS);
    }

    private void reconnect(Instant lostAt, String reason) {
        try {
            open(lostAt).live(reason);
        } catch (ServerException e) {
            if (!(e instanceof LoadingException)) {
                end(new WatchEvent.Ended(e));
                close();
                return;
            }
            // The node it reached is still starting (a restart): watch again after the backoff, as after a drop.
            retryLater(lostAt, reason);
        } catch (EntitledException e) {
            retryLater(lostAt, reason);
        }
    }

    private void retryLater(Instant lostAt, String reason) {
        long delay;
        synchronized (this) {
            if (closed) {
                return;
            }
            delay = Pool.jitter(client.options.initialBackoff().toMillis(), client.options.maxBackoff().toMillis(), failures++);
        }
        Shared.TIMER.schedule(() -> Shared.BLOCKING.execute(() -> reconnect(lostAt, reason)), delay, TimeUnit.MILLISECONDS);
    }

    private void deliver(WatchEvent event) {
        synchronized (this) {
            if (ended) {
                return;
            }
        }
        if (listener != null) {
            listener.accept(event);
        } else {
            enqueue(event);
        }
    }

    private void end(WatchEvent.Ended event) {
        synchronized (this) {
            if (ended) {
                return;
            }
            ended = true;
        }
        if (listener != null) {
            listener.accept(event);
        } else {
            queueLock.lock();
            try {
                endEvent = event;
                notEmpty.signalAll();
                notFull.signalAll(); // a reader blocked on the full queue goes on, and drops what it reads
            } finally {
                queueLock.unlock();
            }
        }
    }

    /**
     * One connection's pushes. Until every target is watched again, its pushes are held, so that the gap
     * marker comes first.
     */
    private final class Session {
        private final Instant lostAt;
        // Guarded by `this`.
        private List<ObjectNode> held = new ArrayList<>();

        Session(Instant lostAt) {
            this.lostAt = lostAt;
        }

        void pushed(ObjectNode line) {
            synchronized (this) {
                if (held != null) {
                    held.add(line);
                    return;
                }
            }
            deliver(new WatchEvent.Pushed(Decode.push(line)));
        }

        /** Every target is watched: the gap (after a reconnection), then the held pushes, then live ones. */
        void live(String reason) {
            synchronized (this) {
                if (lostAt != null) {
                    deliver(new WatchEvent.Gap(lostAt, Instant.now(), reason));
                }
                held.forEach(line -> deliver(new WatchEvent.Pushed(Decode.push(line))));
                held = null;
            }
        }
    }
}
