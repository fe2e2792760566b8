package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One request through the pool, from its first send to its result, with the retry rules of PROTOCOL.md
 * "What an answer means" and OPERATIONS.md "Clients of several nodes":
 *
 * <ul>
 *   <li>a request whose connection failed before it was written is sent again (it was certainly not
 *       applied), on another connection;</li>
 *   <li>a read whose connection dropped after it was written is sent again, at most once per node,
 *       preferring nodes it was not sent to; a write never is: it fails with
 *       {@link EntitledException#mayHaveBeenApplied()} true;</li>
 *   <li>{@code loading} (nothing was carried out) is waited out: the connection is retired, and the request
 *       sent again on a new one after a pause of 50 ms doubling to 1 s, for at most {@code loadingWait};
 *       a read whose connection closes meanwhile is asked again too;</li>
 *   <li>{@code stale} is asked once more of another node, when there are several.</li>
 * </ul>
 *
 * The timeout is the request's whole budget: when it passes the caller gets {@link RequestTimeoutException}
 * at once; the request keeps its place in its connection's FIFO and its late answer is dropped.
 */
abstract class Call<T> implements Pending.Receiver {
    private static final long FIRST_LOADING_PAUSE_MILLIS = 50;
    private static final long LONGEST_LOADING_PAUSE_MILLIS = 1000;

    final CompletableFuture<T> future = new CompletableFuture<>();
    final EntitledClient client;
    private final String op;
    private final boolean read;
    private final Duration timeout;
    /** When the request times out, on {@link System#nanoTime()}'s clock. */
    final long deadline;
    /** Turns of the timing wheel left before the deadline's slot is the one (used by {@link Timeouts} only). */
    long wheelRounds;

    // Touched by one thread at a time: each step starts from the previous one's end.
    /** The nodes a retry avoids: those the request was sent to before (built on the first retry only). */
    private Set<NodeAddress> tried = Set.of();
    private NodeAddress lastNode;
    private int unsentRetries;
    private int droppedRetries;
    private boolean staleRetried;
    private long loadingDeadline;
    private long loadingPause = FIRST_LOADING_PAUSE_MILLIS;
    private volatile Pending current;
    private volatile EntitledConnection connection;

    Call(EntitledClient client, String op, boolean read, Duration timeout) {
        this.client = client;
        this.op = op;
        this.read = read;
        this.timeout = timeout;
        this.deadline = System.nanoTime() + timeout.toNanos();
    }

    /** Writes the request on a connection, as {@code pending}; the answer comes to this receiver. */
    abstract void send(EntitledConnection connection, Pending pending);

    /** The result of a successful answer. */
    abstract T success(ObjectNode answer);

    /** The result of an error answer: raises its exception, or (raw requests) returns the answer. */
    abstract T failure(ObjectNode answer);

    final CompletableFuture<T> start() {
        Timeouts.SHARED.add(this);
        attempt();
        return future;
    }

    /** Sends again, avoiding the nodes it was sent to. */
    private void retry() {
        if (lastNode != null && !tried.contains(lastNode)) {
            Set<NodeAddress> more = new HashSet<>(tried);
            more.add(lastNode);
            tried = more;
        }
        attempt();
    }

    private void attempt() {
        if (future.isDone()) {
            return;
        }
        EntitledConnection open = client.pool.acquireNow(tried);
        if (open != null) {
            sendOn(open);
            return;
        }
        client.pool.acquire(tried).whenComplete((acquired, error) -> {
            if (error != null) {
                couldNotConnect(EntitledConnection.unwrap(error));
            } else {
                sendOn(acquired);
            }
        });
    }

    private void sendOn(EntitledConnection open) {
        if (future.isDone()) {
            return;
        }
        connection = open;
        lastNode = open.address();
        Pending pending = new Pending(this, op);
        current = pending;
        send(open, pending);
    }

    @Override
    public final void answered(Pending pending, ObjectNode answer) {
        if (pending != current || future.isDone()) {
            return; // the answer of an attempt that timed out or was given up: dropped
        }
        if (answer.path("ok").asBoolean(false)) {
            noteSeq(answer);
            try {
                complete(success(answer));
            } catch (EntitledException e) {
                fail(e);
            }
            return;
        }
        String code = answer.path("error").path("code").asText("");
        if ("loading".equals(code)) {
            EntitledConnection loading = connection;
            if (loading != null) {
                loading.retire();
            }
            if (waitOutLoading()) {
                return;
            }
        } else if ("stale".equals(code) && read && !staleRetried && client.pool.nodeCount() > 1) {
            staleRetried = true;
            retry();
            return;
        }
        try {
            complete(failure(answer));
        } catch (EntitledException e) {
            fail(e);
        }
    }

    @Override
    public final boolean answeredFlat(Pending pending, FlatLine answer) {
        if (pending != current || future.isDone()) {
            return true; // dropped, as in answered()
        }
        T result = decodeFlat(answer);
        if (result == null) {
            return false;
        }
        long seq = answer.wholeNumber("seq");
        if (seq >= 0) {
            client.noteSeq(seq);
        }
        complete(result);
        return true;
    }

    /** The result of a successful flat answer, or {@code null} to have it parsed. */
    T decodeFlat(FlatLine answer) {
        return null;
    }

    @Override
    public final void failed(Pending pending, EntitledException error) {
        if (pending != current || future.isDone()) {
            return;
        }
        if (!(error instanceof ServerException)) {
            if (!pending.written && unsentRetries++ <= client.pool.nodeCount()) {
                retry(); // certainly not applied: safe to send again, write or read
                return;
            }
            if (read && droppedRetries++ < Math.max(1, client.pool.nodeCount())) {
                retry();
                return;
            }
            if (read && loadingDeadline != 0 && waitOutLoading()) {
                return; // a starting server closed the connection once ready: ask again
            }
        }
        fail(error);
    }

    private void couldNotConnect(Throwable error) {
        if (future.isDone()) {
            return;
        }
        boolean loading = error instanceof LoadingException || (error instanceof NoNodeAvailableException
                && ((NoNodeAvailableException) error).failures().values().stream().anyMatch(LoadingException.class::isInstance));
        if (loading && waitOutLoading()) {
            return;
        }
        if (error instanceof NoNodeAvailableException) {
            fail(new NoNodeAvailableException(((NoNodeAvailableException) error).failures(), op));
        } else if (error instanceof EntitledException) {
            fail((EntitledException) error);
        } else {
            fail(new EntitledException("cannot send " + op + ": " + error, op, false, error));
        }
    }

    /** Schedules another attempt after the loading pause; false when the time to wait is up. */
    private boolean waitOutLoading() {
        Duration wait = client.options.loadingWait();
        if (wait.isZero() || wait.isNegative()) {
            return false;
        }
        long now = System.nanoTime();
        if (loadingDeadline == 0) {
            loadingDeadline = now + wait.toNanos();
        }
        long pause = TimeUnit.MILLISECONDS.toNanos(loadingPause);
        if (now + pause - loadingDeadline > 0 || now + pause - deadline > 0) {
            return false;
        }
        loadingPause = Math.min(loadingPause * 2, LONGEST_LOADING_PAUSE_MILLIS);
        current = null;
        Shared.TIMER.schedule(this::attempt, pause, TimeUnit.NANOSECONDS);
        return true;
    }

    /** Keeps the client's {@code lastSeq} from a write's answer. */
    private void noteSeq(ObjectNode answer) {
        var seq = answer.get("seq");
        if (seq != null && seq.canConvertToLong()) {
            client.noteSeq(seq.asLong());
        }
    }

    /** Called by {@link Timeouts} at the deadline, if the request is not complete. */
    void timedOut() {
        Pending pending = current;
        fail(new RequestTimeoutException(op, timeout, pending != null && pending.written));
    }

    private void complete(T result) {
        future.complete(result);
    }

    private void fail(EntitledException error) {
        future.completeExceptionally(error);
    }

    /** A typed request: an id of the connection, the request's fields, a typed answer. */
    static final class Typed<T> extends Call<T> implements Consumer<JsonLine> {
        private final Request<T, ?> request;
        private final Long autoMinSeq;

        Typed(EntitledClient client, Request<T, ?> request, Long autoMinSeq) {
            super(client, request.operation().wireName(), request.operation().isRead(),
                    request.timeout() != null ? request.timeout() : client.options.requestTimeout());
            this.request = request;
            this.autoMinSeq = autoMinSeq;
        }

        @Override
        void send(EntitledConnection connection, Pending pending) {
            connection.sendTyped(pending, this);
        }

        @Override
        public void accept(JsonLine line) {
            request.writeFields(line);
            if (autoMinSeq != null) {
                line.field("minSeq", autoMinSeq);
            }
        }

        @Override
        T success(ObjectNode answer) {
            return request.decode(answer);
        }

        @Override
        public boolean takesFlat() {
            return request.decodesFlat();
        }

        @Override
        T decodeFlat(FlatLine answer) {
            return request.decodeFlat(answer);
        }

        @Override
        T failure(ObjectNode answer) {
            throw ErrorCode.fromAnswer(answer, request.operation().wireName());
        }
    }

    /** A raw request object, sent unchanged; error answers are its result. */
    static final class Raw extends Call<ObjectNode> {
        private final ObjectNode request;

        Raw(EntitledClient client, ObjectNode request, String op, Duration timeout) {
            super(client, op, Operation.of(op) != null && Operation.of(op).isRead(), timeout);
            this.request = request;
        }

        @Override
        void send(EntitledConnection connection, Pending pending) {
            connection.sendNode(request, pending);
        }

        @Override
        ObjectNode success(ObjectNode answer) {
            return answer;
        }

        @Override
        ObjectNode failure(ObjectNode answer) {
            return answer;
        }
    }
}
