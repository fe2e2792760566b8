package dev.entitled.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * One connection to a server, pipelined: any number of requests in flight, answered in order (PROTOCOL.md
 * §1 Framing), each matched to its request by the FIFO of requests in flight. {@link EntitledClient} pools
 * these; this class is public for the low-level uses a pool cannot serve: the raw line API (conformance
 * tests, tools) and a connection whose pushed lines you read yourself.
 *
 * <p>Raw requests ({@link #send(ObjectNode)}, {@link #sendRaw(String)}) go out unchanged: the caller's
 * {@code id} is kept and not checked, and error answers are returned, not raised. Requests of the typed
 * API get a per-connection counter as {@code id}; an answer that does not echo it is a protocol error,
 * which fails every request in flight and closes the connection.
 *
 * <p>Thread-safe. Answers and pushed lines are delivered on the connection's reader thread: callbacks
 * attached to the returned futures run there too, and must not block.
 */
public final class EntitledConnection implements AutoCloseable {
    /** The reader thread writes inline only this much; more is handed to another thread (see flushSoon). */
    private static final int INLINE_WRITE_LIMIT = 32 * 1024;

    /**
     * Requests made by callbacks on the reader thread are gathered and written together (one system call
     * for a batch of answers' follow-ups), but waiting for the end of the whole read made client and server
     * take turns: at 50 in flight the server sat idle while the reader handed on 50 answers and built their
     * 50 follow-ups, then the reader sat idle while the server answered them. Writing the first half as soon
     * as it is ready (once this many wait unwritten, and at least as many as are still unanswered) lets the
     * server answer it while the reader prepares the rest, as the TypeScript client's EARLY_WRITE_AT does
     * (25: two writes per 50, each still spreading a system call over many requests). Tools/client-bench,
     * 50 in flight, 2 cores, medians of 3 runs: 37% of entitled-loadgen's checks a second before (1.5 µs of
     * client CPU a check), 61%, 107% and 90% in three runs after (1.1, 0.9 and 1.2 µs), with the reused
     * FlatLine; the machine is shared, so a run's share varies widely.
     */
    private static final int EARLY_WRITE_AT = 25;

    private final NodeAddress address;
    private final Transport transport;
    private final Thread reader;
    private final AtomicLong ids = new AtomicLong();
    private final CompletableFuture<EntitledException> closed = new CompletableFuture<>();
    private final ReentrantLock flushLock = new ReentrantLock();

    // Guarded by `this`: the FIFO and the bytes not yet written stay in the same order.
    private final ArrayDeque<Pending> inFlight = new ArrayDeque<>();
    private final ArrayList<Pending> unwritten = new ArrayList<>();
    private byte[] out = new byte[8192];
    private int outLength;
    private boolean open = true;
    private boolean retired;

    // Used by the reader thread only: every line is scanned into it (see FlatLine).
    private final FlatLine flat = new FlatLine();

    // Guarded by flushLock.
    private byte[] spare = new byte[8192];

    // Guarded by `pushLock`.
    private final Object pushLock = new Object();
    private Consumer<ObjectNode> pushListener;
    private List<ObjectNode> earlyPushes = new ArrayList<>();

    private volatile Consumer<EntitledConnection> closeListener;

    private EntitledConnection(NodeAddress address, Transport transport) {
        this.address = address;
        this.transport = transport;
        this.reader = new Thread(this::readLoop, "entitled-reader " + address);
        this.reader.setDaemon(true);
    }

    /**
     * Opens a connection, in the background: TCP or a Unix socket, TLS when the options say so, and
     * {@code auth} with the options' token when they have one. Nothing else is sent. Fails with
     * {@link CannotConnectException}, or with the {@code auth} answer's error.
     */
    public static CompletableFuture<EntitledConnection> open(NodeAddress address, ClientOptions options) {
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(options, "options");
        return CompletableFuture.supplyAsync(() -> connect(address, options), Shared.BLOCKING);
    }

    /** Opens a connection to {@code "host:port"} or a Unix socket path, with default options. */
    public static CompletableFuture<EntitledConnection> open(String address) {
        return open(NodeAddress.parse(address), ClientOptions.builder().build());
    }

    /** Connects on this thread (blocking); see {@link #open(NodeAddress, ClientOptions)}. */
    static EntitledConnection connect(NodeAddress address, ClientOptions options) {
        EntitledConnection connection = new EntitledConnection(address, Transport.open(address, options));
        connection.reader.start();
        if (options.token() != null) {
            ObjectNode answer = connection.authenticate(options.token(), options);
            if (!answer.path("ok").asBoolean(false)) {
                connection.close();
                throw ErrorCode.fromAnswer(answer, "auth");
            }
        }
        return connection;
    }

    private ObjectNode authenticate(String token, ClientOptions options) {
        CompletableFuture<ObjectNode> answer = new CompletableFuture<>();
        sendTyped(new Pending(new FutureReceiver(answer), "auth"), line -> line.field("token", token));
        try {
            return answer.get(options.connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            close();
            throw new CannotConnectException(address.toString(), "no answer to auth within " + options.connectTimeout().toMillis() + " ms", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            close();
            throw new CannotConnectException(address.toString(), "interrupted while authenticating", e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof EntitledException ? (EntitledException) e.getCause()
                    : new CannotConnectException(address.toString(), String.valueOf(e.getCause()), e.getCause());
        }
    }

    /** Where this connection goes. */
    public NodeAddress address() {
        return address;
    }

    /** Whether the connection is still open. */
    public boolean isOpen() {
        synchronized (this) {
            return open;
        }
    }

    /**
     * Completes when the connection has closed, with the reason: {@link ConnectionClosedException} for an
     * orderly end (the server's or {@link #close()}), or the error that ended it ({@link BusyException},
     * {@link TlsRequiredException} or {@link TooLargeException} for a line the server sent before closing,
     * {@link ProtocolErrorException}, a network failure as {@link ConnectionClosedException}).
     */
    public CompletableFuture<EntitledException> closeFuture() {
        return closed;
    }

    /**
     * Sends a request object unchanged (its {@code id} too, if any) and returns its answer, an error
     * answer included. Fails only when the connection closes first (then with
     * {@link ConnectionClosedException}, or the server's connection-level error such as {@code busy}).
     */
    public CompletableFuture<ObjectNode> send(ObjectNode request) {
        CompletableFuture<ObjectNode> answer = new CompletableFuture<>();
        JsonNode op = request.get("op");
        sendNode(request, new Pending(new FutureReceiver(answer), op != null && op.isTextual() ? op.asText() : null));
        return answer;
    }

    /**
     * Writes {@code text} exactly, as UTF-8 (add the {@code \n} yourself), and returns one future per
     * {@code \n} in it: the answers of the lines it completes, in order. A line may be split over several
     * calls (the call that writes its {@code \n} gets its answer).
     */
    public List<CompletableFuture<ObjectNode>> sendRaw(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        List<CompletableFuture<ObjectNode>> answers = new ArrayList<>();
        List<Pending> pendings = new ArrayList<>();
        for (byte b : bytes) {
            if (b == '\n') {
                CompletableFuture<ObjectNode> answer = new CompletableFuture<>();
                answers.add(answer);
                pendings.add(new Pending(new FutureReceiver(answer), null));
            }
        }
        enqueue(bytes, bytes.length, null, pendings);
        return answers;
    }

    /**
     * Authenticates this connection (PROTOCOL.md §6 auth) and returns the token's name and role. An
     * unknown token raises {@link UnauthorizedException}; the token never appears in an error.
     */
    public CompletableFuture<AuthResult> auth(String token) {
        CompletableFuture<ObjectNode> answer = new CompletableFuture<>();
        Objects.requireNonNull(token, "token");
        sendTyped(new Pending(new FutureReceiver(answer), "auth"), line -> line.field("token", token));
        return answer.thenApply(node -> {
            if (!node.path("ok").asBoolean(false)) {
                throw ErrorCode.fromAnswer(node, "auth");
            }
            return Decode.auth(node);
        });
    }

    /**
     * Receives the pushed lines ({@code {"push":...}}) of this connection's watches, on the reader thread.
     * Lines that came before a listener was set are given to it first. A watching connection must be read
     * promptly: the server closes one that leaves 4 MiB unread. The reader hands every line on as it comes
     * and reads no further until the listener returns, so a listener that blocks applies backpressure
     * (as {@link EntitledWatch} does when its queue is full).
     */
    public void setPushListener(Consumer<ObjectNode> listener) {
        Objects.requireNonNull(listener, "listener");
        List<ObjectNode> early;
        synchronized (pushLock) {
            pushListener = listener;
            early = earlyPushes;
            earlyPushes = null;
        }
        if (early != null) {
            early.forEach(listener);
        }
    }

    /** Closes the connection at once; requests in flight fail with {@link ConnectionClosedException}. */
    @Override
    public void close() {
        closeWith(new ConnectionClosedException("the client closed the connection to " + address, null, false, null));
    }

    // MARK: package-private, for the pool and the watch

    /** Whether the pool may give this connection new requests: open and not retired. */
    boolean usable() {
        synchronized (this) {
            return open && !retired;
        }
    }

    /**
     * Takes no more requests and closes once its last answer came: a starting server answers
     * {@code loading} and closes the connection once ready, so it is of no more use, but the answers of
     * the requests in flight (all {@code loading}, which is certain) are still to be read.
     */
    void retire() {
        boolean closeNow;
        synchronized (this) {
            retired = true;
            closeNow = inFlight.isEmpty();
        }
        if (closeNow) {
            closeWith(new ConnectionClosedException("the connection to " + address + " was retired", null, false, null));
        }
    }

    void setCloseListener(Consumer<EntitledConnection> listener) {
        closeListener = listener;
        if (closed.isDone()) {
            listener.accept(this);
        }
    }

    /** Writes a raw request object unchanged; its answer goes to the pending's receiver. */
    void sendNode(ObjectNode request, Pending pending) {
        byte[] line = (Json.write(request) + "\n").getBytes(StandardCharsets.UTF_8);
        enqueue(line, line.length, pending, List.of());
    }

    /**
     * Writes one request of the typed API: the pending's op, a fresh id and the fields {@code body} writes.
     * The caller makes the pending first, so that it knows it before its answer can come.
     */
    void sendTyped(Pending pending, Consumer<JsonLine> body) {
        pending.id = ids.incrementAndGet();
        JsonLine line = JsonLine.forThisThread().begin(pending.op, pending.id);
        body.accept(line);
        line.end();
        enqueue(line.bytes(), line.length(), pending, List.of());
    }

    // MARK: writing

    /** Queues the bytes and their pendings (one, or a list), keeping both in the same order. */
    private void enqueue(byte[] bytes, int length, Pending one, List<Pending> pendings) {
        boolean failed;
        boolean writeEarly = false;
        synchronized (this) {
            failed = !open || (retired && (one != null || !pendings.isEmpty()));
            if (!failed) {
                if (one != null) {
                    inFlight.add(one);
                    unwritten.add(one);
                }
                if (!pendings.isEmpty()) {
                    // Only raw text carries a list: addAll of an empty one still allocates (an iterator, a
                    // method reference, an array) on every typed request's path.
                    inFlight.addAll(pendings);
                    unwritten.addAll(pendings);
                }
                if (outLength + length > out.length) {
                    out = Arrays.copyOf(out, Math.max(out.length * 2, outLength + length));
                }
                System.arraycopy(bytes, 0, out, outLength, length);
                outLength += length;
                int queued = unwritten.size();
                writeEarly = queued >= EARLY_WRITE_AT && queued >= inFlight.size() - queued;
            }
        }
        if (failed) {
            EntitledException reason = closed.getNow(null);
            List<Pending> refused = new ArrayList<>(pendings);
            if (one != null) {
                refused.add(one);
            }
            for (Pending pending : refused) {
                pending.receiver.failed(pending, reason != null ? failureFor(reason, pending)
                        : new ConnectionClosedException("the connection to " + address + " takes no more requests", pending.op, false, null));
            }
            return;
        }
        if (Thread.currentThread() == reader) {
            // Requests made by callbacks on the reader thread are written together once it has handed on
            // every line of what it read: one write for a whole batch of answers' follow-ups; or, once
            // half a batch is ready, that half at once, so that the server works on it meanwhile.
            if (writeEarly) {
                flushFromReader();
            }
            return;
        }
        flushLock.lock();
        try {
            flushLocked();
        } finally {
            flushLock.unlock();
        }
    }

    /**
     * Writes what waits, by the reader thread after each read. The reader must never block on writing: if
     * the server stops reading this connection (its answers to us pile up, PROTOCOL.md Flow control), a
     * reader stuck in a write would stop reading them, and neither side would move. So it writes inline
     * only a small batch while no other thread is writing, and hands anything else to a thread of its own.
     */
    private void flushFromReader() {
        int waiting;
        synchronized (this) {
            waiting = outLength;
        }
        if (waiting == 0) {
            return;
        }
        if (waiting <= INLINE_WRITE_LIMIT && flushLock.tryLock()) {
            try {
                flushLocked();
            } finally {
                flushLock.unlock();
            }
            return;
        }
        Shared.BLOCKING.execute(() -> {
            flushLock.lock();
            try {
                flushLocked();
            } finally {
                flushLock.unlock();
            }
        });
    }

    /** Writes until nothing waits; bytes other threads add meanwhile are written by this loop too. */
    private void flushLocked() {
        while (true) {
            byte[] chunk;
            int length;
            synchronized (this) {
                if (outLength == 0 || !open) {
                    return;
                }
                chunk = out;
                length = outLength;
                out = spare.length >= 8192 ? spare : new byte[8192];
                outLength = 0;
                for (Pending pending : unwritten) {
                    pending.written = true;
                }
                unwritten.clear();
            }
            try {
                transport.write(chunk, 0, length);
            } catch (IOException e) {
                closeWith(new ConnectionClosedException("writing to " + address + " failed: " + e.getMessage(), null, true, e));
                return;
            }
            spare = chunk;
        }
    }

    // MARK: reading

    private void readLoop() {
        byte[] buffer = new byte[65536];
        int start = 0;
        int end = 0;
        try {
            while (true) {
                if (end == buffer.length) {
                    if (start > 0) {
                        System.arraycopy(buffer, start, buffer, 0, end - start);
                        end -= start;
                        start = 0;
                    } else {
                        buffer = Arrays.copyOf(buffer, buffer.length * 2);
                    }
                }
                int count = transport.read(buffer, end, buffer.length - end);
                if (count < 0) {
                    break;
                }
                int scan = end;
                end += count;
                for (int i = scan; i < end; i++) {
                    if (buffer[i] == '\n') {
                        if (!handleLine(buffer, start, i - start)) {
                            return;
                        }
                        start = i + 1;
                    }
                }
                if (start == end) {
                    start = 0;
                    end = 0;
                }
                flushFromReader();
            }
            closeWith(end > start
                    ? new ProtocolErrorException("the server closed the connection to " + address + " inside a line", null, false)
                    : new ConnectionClosedException("the server closed the connection to " + address, null, false, null));
        } catch (IOException e) {
            closeWith(new ConnectionClosedException("the connection to " + address + " failed: " + e.getMessage(), null, false, e));
        } catch (RuntimeException | Error e) {
            closeWith(new ConnectionClosedException("the connection to " + address + " failed: " + e, null, false, e));
            throw e;
        }
    }

    /** Hands one line on; false once the connection closed because of it. */
    private boolean handleLine(byte[] buffer, int offset, int length) {
        FlatLine flat = this.flat;
        if (flat.read(buffer, offset, length) && flat.isTrue("ok")) {
            // The fast path of successful answers with scalar values only (every check's): no tree built.
            long id = flat.wholeNumber("id");
            Pending pending = null;
            boolean closeAfter = false;
            synchronized (this) {
                Pending head = inFlight.peek();
                if (head != null && head.id >= 0 && head.id == id && head.receiver.takesFlat()) {
                    pending = inFlight.poll();
                    closeAfter = retired && inFlight.isEmpty();
                }
            }
            if (pending != null) {
                if (!pending.receiver.answeredFlat(pending, flat) && !answerParsed(pending, buffer, offset, length)) {
                    return false;
                }
                if (closeAfter) {
                    closeWith(new ConnectionClosedException("the connection to " + address + " was retired", null, false, null));
                    return false;
                }
                return true;
            }
        }
        JsonNode node;
        try {
            node = Json.parse(buffer, offset, length);
        } catch (IOException e) {
            closeWith(new ProtocolErrorException("the server wrote a line that is not JSON: " + e.getMessage(), null, false));
            return false;
        }
        if (!(node instanceof ObjectNode) || node.has("push") == node.has("ok")) {
            closeWith(new ProtocolErrorException("the server wrote a line that is neither an answer nor a pushed line: "
                    + abbreviate(node), null, false));
            return false;
        }
        ObjectNode line = (ObjectNode) node;
        if (line.has("push")) {
            deliverPush(line);
            return true;
        }
        Pending pending;
        boolean closeAfter;
        synchronized (this) {
            pending = inFlight.poll();
            closeAfter = retired && inFlight.isEmpty();
        }
        boolean success = line.path("ok").asBoolean(false);
        if (pending == null) {
            // A line nobody asked for: busy or tls_required, sent instead of any answer before the server
            // closes; anything else breaks the protocol.
            closeWith(success ? new ProtocolErrorException("the server sent an answer no request was waiting for: " + abbreviate(line), null, false)
                    : ErrorCode.fromAnswer(line, null));
            return false;
        }
        if (pending.id >= 0) {
            JsonNode id = line.get("id");
            boolean matches = id != null ? id.canConvertToLong() && id.isIntegralNumber() && id.asLong() == pending.id : !success;
            if (!matches) {
                ProtocolErrorException error = new ProtocolErrorException("the answer " + abbreviate(line)
                        + " does not carry the id " + pending.id + " of the request it answers (" + pending.op + ")", pending.op, true);
                pending.receiver.failed(pending, error);
                closeWith(error);
                return false;
            }
        }
        pending.receiver.answered(pending, line);
        String code = success ? null : line.path("error").path("code").asText("");
        if ("too_large".equals(code) || "busy".equals(code) || "tls_required".equals(code)) {
            // The server closes the connection after these without reading further: the requests behind
            // this one were not read, so they fail with the same error (not applied).
            closeWith(ErrorCode.fromAnswer(line, null));
            return false;
        }
        if (closeAfter) {
            closeWith(new ConnectionClosedException("the connection to " + address + " was retired", null, false, null));
            return false;
        }
        return true;
    }

    /** Gives a pending its answer parsed after all; false when the line is not JSON (the connection closed). */
    private boolean answerParsed(Pending pending, byte[] buffer, int offset, int length) {
        try {
            pending.receiver.answered(pending, (ObjectNode) Json.parse(buffer, offset, length));
            return true;
        } catch (IOException | ClassCastException e) {
            ProtocolErrorException error = new ProtocolErrorException("the server wrote a line that is not a JSON object: "
                    + e.getMessage(), pending.op, true);
            pending.receiver.failed(pending, error);
            closeWith(error);
            return false;
        }
    }

    private void deliverPush(ObjectNode push) {
        Consumer<ObjectNode> listener;
        synchronized (pushLock) {
            listener = pushListener;
            if (listener == null) {
                earlyPushes.add(push);
                return;
            }
        }
        listener.accept(push);
    }

    // MARK: closing

    private void closeWith(EntitledException reason) {
        List<Pending> failed;
        synchronized (this) {
            if (!open) {
                return;
            }
            open = false;
            failed = new ArrayList<>(inFlight);
            inFlight.clear();
            unwritten.clear();
            outLength = 0;
        }
        transport.close();
        for (Pending pending : failed) {
            pending.receiver.failed(pending, failureFor(reason, pending));
        }
        closed.complete(reason);
        Consumer<EntitledConnection> listener = closeListener;
        if (listener != null) {
            listener.accept(this);
        }
    }

    /** The error one request in flight fails with when the connection closes for {@code reason}. */
    private static EntitledException failureFor(EntitledException reason, Pending pending) {
        if (reason instanceof ServerException) {
            ServerException server = (ServerException) reason;
            return ErrorCode.exception(server.code(), server.serverMessage(), pending.op, server.answer());
        }
        if (reason instanceof ProtocolErrorException) {
            return new ProtocolErrorException(reason.getMessage(), pending.op, pending.written);
        }
        return new ConnectionClosedException(reason.getMessage()
                + (pending.written ? " after the request was sent: it may have been carried out" : " before the request was sent"),
                pending.op, pending.written, reason.getCause());
    }

    private static String abbreviate(JsonNode node) {
        String text = node.toString();
        return text.length() <= 300 ? text : text.substring(0, 300) + "…";
    }

    @Override
    public String toString() {
        return "EntitledConnection{" + address + (isOpen() ? "" : ", closed") + "}";
    }

    /** Completes a future with the raw answer. */
    static final class FutureReceiver implements Pending.Receiver {
        private final CompletableFuture<ObjectNode> future;

        FutureReceiver(CompletableFuture<ObjectNode> future) {
            this.future = future;
        }

        @Override
        public void answered(Pending pending, ObjectNode answer) {
            future.complete(answer);
        }

        @Override
        public void failed(Pending pending, EntitledException error) {
            future.completeExceptionally(error);
        }
    }

    /** The cause of a failed future's exception, as thrown by {@code join}/{@code get}. */
    static Throwable unwrap(Throwable error) {
        while ((error instanceof CompletionException || error instanceof ExecutionException) && error.getCause() != null) {
            error = error.getCause();
        }
        return error;
    }
}
