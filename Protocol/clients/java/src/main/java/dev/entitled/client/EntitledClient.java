package dev.entitled.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A client of {@code entitled} servers (protocol version 5): a pool of pipelined connections to one server
 * or to the nodes of a cluster, with an asynchronous API ({@link CompletableFuture}s) and a blocking one
 * ({@link #sync()}).
 *
 * <pre>{@code
 * try (EntitledClient client = EntitledClient.connect(ClientOptions.builder().nodes("127.0.0.1:7117").build())) {
 *     client.grant(GrantRequest.user("alice", "prod_pro").duration("30d")).join();
 *     boolean pro = client.sync().check(CheckRequest.user("alice").product("prod_pro")).active();
 * }
 * }</pre>
 *
 * <h2>Connections</h2>
 * {@code connectionsPerNode} connections per node (default 1), each carrying any number of requests at once
 * (answers are matched to requests by order and {@code id}). Requests are spread over the open connections.
 * A dropped connection is reconnected in the background with exponential backoff and full jitter (50 ms
 * doubling to 2 s); a node that refuses is skipped for its backoff. With a token, every connection sends
 * {@code auth} first; with TLS, every TCP connection speaks TLS.
 *
 * <h2>What an error means for a write</h2>
 * Every error is an {@link EntitledException}: one subclass per protocol error code
 * ({@link NotFoundException}, {@link ConflictException}, ...; {@link UnknownCodeException} for a newer
 * server's), and {@link CannotConnectException}, {@link NoNodeAvailableException},
 * {@link ConnectionClosedException}, {@link RequestTimeoutException} and {@link ProtocolErrorException}.
 * {@link EntitledException#mayHaveBeenApplied()} tells a write that may have been carried out
 * ({@code outcome_unknown}, {@code internal}, or a connection lost or a timeout after it was sent) from one
 * that certainly was not (every other case). The client never sends a write twice: after a "may have been
 * applied" error, send it again yourself with the same {@link GrantRequest#idempotencyKey(String)} (an
 * {@code event} with the same {@code eventId}), which replays instead of applying twice. Reads
 * ({@link Operation#isRead()}) are sent again by the client on another connection, at most once per node,
 * when their connection drops. A starting server's {@code loading} is waited out (see
 * {@link ClientOptions.Builder#loadingWait(Duration)}), and {@code stale} is asked again of another node.
 *
 * <h2>Read your writes</h2>
 * Every write's answer carries {@code seq}; the client keeps the highest as {@link #lastSeq()}. Give it as
 * {@code minSeq} to a read elsewhere, or set {@link ClientOptions.Builder#readYourWrites(boolean)}.
 *
 * <h2>Threads</h2>
 * Thread-safe. Futures complete on a connection's reader thread (or the client's timer thread): do not
 * block in their callbacks; use the {@code *Async} methods of {@link CompletableFuture} with an executor
 * of your own for slow work.
 */
public final class EntitledClient implements AutoCloseable {
    final ClientOptions options;
    final Pool pool;
    private final AtomicLong lastSeq = new AtomicLong();
    private final EntitledSyncClient sync = new EntitledSyncClient(this);

    private EntitledClient(ClientOptions options) {
        this.options = options;
        this.pool = new Pool(options);
    }

    /** A client that starts connecting in the background and returns at once. */
    public static EntitledClient create(ClientOptions options) {
        EntitledClient client = new EntitledClient(Objects.requireNonNull(options, "options"));
        client.pool.start();
        return client;
    }

    /**
     * A client whose first connection is open: waits up to the connect timeout for it, and throws
     * {@link NoNodeAvailableException} (or the configuration's error: a refused token, an untrusted
     * certificate) when none opens.
     */
    public static EntitledClient connect(ClientOptions options) {
        EntitledClient client = create(options);
        try {
            client.pool.acquire(Set.of()).get(options.connectTimeout().toMillis() * Math.max(1, options.nodes().size()), TimeUnit.MILLISECONDS);
            return client;
        } catch (ExecutionException e) {
            client.close();
            Throwable cause = EntitledConnection.unwrap(e);
            throw cause instanceof EntitledException ? (EntitledException) cause : new EntitledException(String.valueOf(cause), null, false, cause);
        } catch (TimeoutException e) {
            client.close();
            throw new CannotConnectException(options.nodes().toString(), "no connection opened within the connect timeout", e);
        } catch (InterruptedException e) {
            client.close();
            Thread.currentThread().interrupt();
            throw new CannotConnectException(options.nodes().toString(), "interrupted", e);
        }
    }

    /** {@link #connect(ClientOptions)} to these nodes ({@code "host:port"} or Unix socket paths). */
    public static EntitledClient connect(String... nodes) {
        return connect(ClientOptions.builder().nodes(nodes).build());
    }

    /** The blocking API over this client. */
    public EntitledSyncClient sync() {
        return sync;
    }

    /** The options this client was made with. */
    public ClientOptions options() {
        return options;
    }

    /**
     * The highest change number ({@code seq}) of the writes this client made, 0 before any: a read with
     * it as {@code minSeq} sees every one of them, on any node.
     */
    public long lastSeq() {
        return lastSeq.get();
    }

    void noteSeq(long seq) {
        long seen = lastSeq.get();
        while (seq > seen && !lastSeq.compareAndSet(seen, seq)) {
            seen = lastSeq.get();
        }
    }

    // MARK: operations

    /** {@code ping}: completes when a server answered. */
    public CompletableFuture<Void> ping() {
        return execute(new SimpleRequest<Void>(Operation.PING, answer -> null));
    }

    /** {@code hello}: the protocol version, the server, its operations and the fields each takes. */
    public CompletableFuture<Hello> hello() {
        return execute(new SimpleRequest<>(Operation.HELLO, Decode::hello));
    }

    /** {@code grant}: creates a membership (see {@link GrantRequest} for retrying one safely). */
    public CompletableFuture<GrantResult> grant(GrantRequest request) {
        return execute(request);
    }

    /** {@code check}: whether a subject has access. */
    public CompletableFuture<CheckResult> check(CheckRequest request) {
        return execute(request);
    }

    /** {@code claim}: gives a device's guest purchases to a user. */
    public CompletableFuture<ClaimResult> claim(ClaimRequest request) {
        return execute(request);
    }

    /** {@code revoke}: takes a membership back. */
    public CompletableFuture<MembershipResult> revoke(RevokeRequest request) {
        return execute(request);
    }

    /** {@code extend}: moves a membership's expiry later (admin). */
    public CompletableFuture<ExtendResult> extend(ExtendRequest request) {
        return execute(request);
    }

    /** {@code memberships}: one page; see {@link #membershipPages(MembershipsRequest)} to follow them. */
    public CompletableFuture<Page<Membership>> memberships(MembershipsRequest request) {
        return execute(request);
    }

    /** Every page of a {@code memberships} listing, one request at a time, from the request's {@code after}. */
    public AsyncPages<Membership> membershipPages(MembershipsRequest request) {
        return new AsyncPages<>(after -> memberships(after == null ? request : request.continuingAfter(after)),
                request.after(), request.mayHaveEmptyPages());
    }

    /** {@code define}: sets an entitlement's products. */
    public CompletableFuture<CatalogChange> define(DefineRequest request) {
        return execute(request);
    }

    /** {@code undefine}: removes an entitlement (admin). */
    public CompletableFuture<CatalogChange> undefine(UndefineRequest request) {
        return execute(request);
    }

    /** {@code catalog}: every entitlement and its products. */
    public CompletableFuture<Map<String, List<String>>> catalog() {
        return execute(new SimpleRequest<>(Operation.CATALOG, Decode::catalog));
    }

    /** {@code snapshot}: writes a snapshot now (admin). */
    public CompletableFuture<SnapshotResult> snapshot() {
        return execute(new SimpleRequest<>(Operation.SNAPSHOT, Decode::snapshot));
    }

    /** {@code event}: applies a store's lifecycle event. */
    public CompletableFuture<EventResult> event(EventRequest request) {
        return execute(request);
    }

    /** {@code customer}: the CustomerInfo view of a subject. */
    public CompletableFuture<Customer> customer(CustomerRequest request) {
        return execute(request);
    }

    /** {@code history}: one page of an audit trail (admin); see {@link #historyPages(HistoryRequest)}. */
    public CompletableFuture<Page<HistoryEntry>> history(HistoryRequest request) {
        return execute(request);
    }

    /** Every page of an audit trail, one request at a time, from the request's {@code after}. */
    public AsyncPages<HistoryEntry> historyPages(HistoryRequest request) {
        return new AsyncPages<>(after -> history(after == null ? request : request.continuingAfter(after)),
                request.after(), false);
    }

    /** {@code stats}: the server's counters (admin). */
    public CompletableFuture<Stats> stats() {
        return execute(new SimpleRequest<>(Operation.STATS, Decode::stats));
    }

    /** {@code reload}: the server re-reads its auth file (admin); completes with the tokens in force. */
    public CompletableFuture<Long> reload() {
        return execute(new SimpleRequest<>(Operation.RELOAD, answer -> Json.number(answer, "tokens")));
    }

    /** {@code erase}: erases a person (admin). */
    public CompletableFuture<EraseResult> erase(EraseRequest request) {
        return execute(request);
    }

    /**
     * {@code watch}: a stream of the pushed lines of these targets, on a connection of its own, which
     * survives reconnections (see {@link EntitledWatch}). Read its events with {@link EntitledWatch#take()},
     * {@link EntitledWatch#poll(Duration)} or its iterator. {@code unwatch} is {@link EntitledWatch#unwatch(WatchTarget)}
     * and {@link EntitledWatch#close()}. At most {@link ClientOptions#maxQueuedPushes()} events wait to be
     * read; then the watch stops reading its connection until the application takes one.
     */
    public CompletableFuture<EntitledWatch> watch(WatchTarget... targets) {
        return new EntitledWatch(this, List.of(targets), null).start();
    }

    /**
     * {@code watch}, delivering each event to {@code listener} on the watch's reader thread (do not block in
     * it): nothing more is read until it returns, so a slow listener is bounded by backpressure by nature.
     */
    public CompletableFuture<EntitledWatch> watch(Consumer<WatchEvent> listener, WatchTarget... targets) {
        return new EntitledWatch(this, List.of(targets), Objects.requireNonNull(listener, "listener")).start();
    }

    /**
     * {@code changes}: one page of the change feed (admin). A read without {@code wait} goes through the pool
     * as any read. A read that waits ({@link ChangesRequest#waitUpTo(Duration)}) goes on a connection opened
     * for it and closed after its answer, since the server answers the lines sent after a waiting read only
     * after it: on a pool connection it would hold up every request behind it. Its timeout is the wait plus
     * the request timeout, and it is not retried. To follow the feed, use {@link #follow(ChangesRequest)}.
     */
    public CompletableFuture<FeedPage> changes(ChangesRequest request) {
        if (request.waits()) {
            return OwnConnection.once(this, request, request.budget(options));
        }
        return execute(request);
    }

    /**
     * Follows the change feed from the request's {@code afterSeq} (and only its {@code user} or
     * {@code device}, if given): every item in order, on a connection of its own, through reconnections and
     * server restarts (see {@link EntitledFeed}). Read the items with {@link EntitledFeed#take()}, its
     * iterator or {@link EntitledFeed#stream()}; store {@link EntitledFeed#position()} to follow on from
     * there later. Once caught up, each read waits for changes for the request's {@code waitUpTo} (default
     * 20 s). Completes once connected; fails when no node takes the connection.
     */
    public CompletableFuture<EntitledFeed> follow(ChangesRequest request) {
        return new EntitledFeed(this, Objects.requireNonNull(request, "request"), null).start();
    }

    /**
     * {@link #follow(ChangesRequest)}, giving each item to {@code listener} on the follower's thread, in
     * order: nothing more is read until it returns (do not block in it for long), and the position moves
     * once it returned. The end (an error, or {@code close()}) completes {@link EntitledFeed#endFuture()}.
     */
    public CompletableFuture<EntitledFeed> follow(Consumer<FeedItem> listener, ChangesRequest request) {
        return new EntitledFeed(this, Objects.requireNonNull(request, "request"), Objects.requireNonNull(listener, "listener")).start();
    }

    /**
     * {@code export}: one page of a full copy (admin), through the pool. With several nodes, a page after
     * the first may reach a node that does not hold the copy ({@link NotFoundException}): read a whole
     * export with {@link #openExport(ExportRequest)}, which keeps every page on one connection.
     */
    public CompletableFuture<ExportPage> export(ExportRequest request) {
        return execute(request);
    }

    /**
     * Takes a full copy and reads it page by page on a connection of its own (see {@link EntitledExport}):
     * completes once the first page was read, with the copy's {@code seq}, time and catalog.
     */
    public CompletableFuture<EntitledExport> openExport(ExportRequest request) {
        return EntitledExport.open(this, Objects.requireNonNull(request, "request"));
    }

    /**
     * Sends a request object unchanged through the pool (its {@code id} too, if any, unchecked) and returns
     * the answer, an error answer included. The retry rules are the typed API's, by the request's
     * {@code op}; {@code loading} is waited out. Use it for fields or operations of a newer server.
     */
    public CompletableFuture<ObjectNode> request(ObjectNode request) {
        return request(request, options.requestTimeout());
    }

    /** {@link #request(ObjectNode)} with its own timeout. */
    public CompletableFuture<ObjectNode> request(ObjectNode request, Duration timeout) {
        JsonNode op = request.get("op");
        return new Call.Raw(this, request.deepCopy(), op != null && op.isTextual() ? op.asText() : "?", timeout).start();
    }

    /** Closes every connection; requests in flight fail with {@link ConnectionClosedException}. */
    @Override
    public void close() {
        pool.close();
    }

    <T> CompletableFuture<T> execute(Request<T, ?> request) {
        Long autoMinSeq = null;
        if (options.readYourWrites() && request.takesMinSeq() && request.minSeq() == null) {
            long seq = lastSeq.get();
            autoMinSeq = seq > 0 ? seq : null;
        }
        return new Call.Typed<>(this, request, autoMinSeq).start();
    }
}
