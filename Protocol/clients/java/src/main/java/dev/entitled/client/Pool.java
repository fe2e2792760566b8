package dev.entitled.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The connections of a client: {@code connectionsPerNode} slots per node, each holding at most one open
 * connection, and requests spread over the open ones (round robin).
 *
 * <p>A slot whose connection drops reconnects by itself after a backoff: 50 ms doubling to 2 s by default,
 * with full jitter (a random pause up to the bound), so that many clients of a restarted server do not come
 * back at the same instant. It connects to its own node first and to the next ones when that one refuses;
 * a node that refused is skipped until its own backoff has passed. A request that finds no open connection
 * waits for the next one to open, and fails with {@link NoNodeAvailableException}, naming each node's
 * failure, when an attempt begun after it found every node refusing. A failure that is the configuration's
 * (a refused token, an untrusted certificate) fails the waiting requests at once: no node would do better.
 */
final class Pool {
    private static final AtomicInteger SPREAD = new AtomicInteger(ThreadLocalRandom.current().nextInt(1 << 16));

    private final ClientOptions options;
    private final List<Node> nodes = new ArrayList<>();
    private final List<Slot> slots = new ArrayList<>();
    private final AtomicInteger next = new AtomicInteger();

    // Guarded by `this`.
    private final List<Waiter> waiters = new ArrayList<>();
    private long attemptsStarted;
    private boolean closed;

    /** The open connections, replaced as a whole on every change, so that picking one takes no lock. */
    private volatile EntitledConnection[] ready = new EntitledConnection[0];

    Pool(ClientOptions options) {
        this.options = options;
        for (NodeAddress address : options.nodes()) {
            nodes.add(new Node(address));
        }
        // Each pool starts at another node, so the connections of many clients spread over the nodes.
        int start = Math.floorMod(SPREAD.getAndIncrement(), nodes.size());
        for (int i = 0; i < options.connectionsPerNode(); i++) {
            for (int n = 0; n < nodes.size(); n++) {
                slots.add(new Slot((start + n) % nodes.size()));
            }
        }
    }

    int nodeCount() {
        return nodes.size();
    }

    /** The connections open now. */
    int openConnections() {
        return ready.length;
    }

    /** Opens every slot's connection in the background. */
    void start() {
        synchronized (this) {
            for (Slot slot : slots) {
                startAttempt(slot);
            }
        }
    }

    /**
     * An open connection, preferring one to a node not in {@code avoid} (the nodes a read was already sent
     * to); completes when one opens, or fails as described in the class comment.
     */
    CompletableFuture<EntitledConnection> acquire(Set<NodeAddress> avoid) {
        EntitledConnection open = acquireNow(avoid);
        if (open != null) {
            return CompletableFuture.completedFuture(open);
        }
        CompletableFuture<EntitledConnection> future = new CompletableFuture<>();
        synchronized (this) {
            if (closed) {
                future.completeExceptionally(new ConnectionClosedException("the client is closed", null, false, null));
                return future;
            }
            waiters.add(new Waiter(future, attemptsStarted));
            for (Slot slot : slots) {
                if (slot.connection == null && !slot.connecting) {
                    slot.cancelScheduled();
                    startAttempt(slot);
                }
            }
        }
        return future;
    }

    /**
     * An open connection now, without waiting, or {@code null}: one to a node not in {@code avoid}, or to
     * any node when every node is in {@code avoid}.
     */
    EntitledConnection acquireNow(Set<NodeAddress> avoid) {
        EntitledConnection[] open = ready;
        if (open.length == 0) {
            return null;
        }
        int start = Math.floorMod(next.getAndIncrement(), open.length);
        EntitledConnection fallback = null;
        for (int i = 0; i < open.length; i++) {
            EntitledConnection connection = open[(start + i) % open.length];
            if (!connection.usable()) {
                continue;
            }
            if (avoid.isEmpty() || !avoid.contains(connection.address())) {
                return connection;
            }
            fallback = fallback == null ? connection : fallback;
        }
        return fallback != null && !hasNodeOutside(avoid) ? fallback : null;
    }

    private boolean hasNodeOutside(Set<NodeAddress> avoid) {
        for (Node node : nodes) {
            if (!avoid.contains(node.address)) {
                return true;
            }
        }
        return false;
    }

    /** Closes every connection; waiting requests fail. */
    void close() {
        List<EntitledConnection> open = new ArrayList<>();
        List<Waiter> failed;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            for (Slot slot : slots) {
                slot.cancelScheduled();
                if (slot.connection != null) {
                    open.add(slot.connection);
                }
            }
            failed = new ArrayList<>(waiters);
            waiters.clear();
            ready = new EntitledConnection[0];
        }
        open.forEach(EntitledConnection::close);
        failed.forEach(w -> w.future.completeExceptionally(new ConnectionClosedException("the client is closed", null, false, null)));
    }

    // MARK: connecting

    /** Starts connecting a slot now (guarded by `this`). */
    private void startAttempt(Slot slot) {
        if (closed || slot.connecting || slot.connection != null) {
            return;
        }
        slot.connecting = true;
        long attempt = ++attemptsStarted;
        Shared.BLOCKING.execute(() -> attempt(slot, attempt));
    }

    /** Tries the slot's node, then the others; runs on a blocking thread. */
    private void attempt(Slot slot, long attempt) {
        Map<String, EntitledException> failures = new LinkedHashMap<>();
        long now = System.nanoTime();
        long earliestRetry = Long.MAX_VALUE;
        boolean triedAny = false;
        for (int i = 0; i < nodes.size(); i++) {
            Node node = nodes.get((slot.home + i) % nodes.size());
            long retryAt;
            EntitledException lastError;
            synchronized (node) {
                retryAt = node.retryAt;
                lastError = node.lastError;
            }
            if (lastError != null && retryAt - now > 0) {
                failures.put(node.address.toString(), lastError);
                earliestRetry = Math.min(earliestRetry, retryAt);
                continue;
            }
            triedAny = true;
            try {
                EntitledConnection connection = EntitledConnection.connect(node.address, options);
                node.succeeded();
                opened(slot, connection);
                return;
            } catch (CannotConnectException e) {
                if (e.configurationFault()) {
                    configurationFailed(slot, e);
                    return;
                }
                node.failed(e, options);
                failures.put(node.address.toString(), e);
            } catch (UnauthorizedException | ForbiddenException e) {
                configurationFailed(slot, e);
                return;
            } catch (EntitledException e) {
                // busy, loading, tls_required, a dropped connection: this node cannot serve now.
                node.failed(e, options);
                failures.put(node.address.toString(), e);
            }
        }
        everyNodeFailed(slot, attempt, failures, triedAny ? -1 : Math.max(0, earliestRetry - now));
    }

    private void opened(Slot slot, EntitledConnection connection) {
        List<Waiter> served;
        synchronized (this) {
            slot.connecting = false;
            if (closed) {
                connection.close();
                return;
            }
            slot.connection = connection;
            slot.failures = 0;
            rebuildReady();
            served = new ArrayList<>(waiters);
            waiters.clear();
        }
        connection.setPushListener(push -> {
            // Pool connections hold no watch (watches have connections of their own): nothing to deliver.
        });
        connection.setCloseListener(c -> dropped(slot, c));
        served.forEach(w -> w.future.complete(connection));
    }

    private void dropped(Slot slot, EntitledConnection connection) {
        synchronized (this) {
            if (slot.connection != connection) {
                return;
            }
            slot.connection = null;
            rebuildReady();
            if (!closed) {
                scheduleAttempt(slot, backoff(slot.failures++));
            }
        }
    }

    private void configurationFailed(Slot slot, EntitledException error) {
        List<Waiter> failed;
        synchronized (this) {
            slot.connecting = false;
            failed = new ArrayList<>(waiters);
            waiters.clear();
            if (!closed) {
                scheduleAttempt(slot, backoff(slot.failures++));
            }
        }
        failed.forEach(w -> w.future.completeExceptionally(error));
    }

    /**
     * No node took the slot's connection. When every node was only skipped (all backing off), no attempt
     * was made, and waiting requests wait for the first node's backoff to pass; otherwise the requests that
     * were waiting before this attempt began fail, and the slot tries again after its backoff.
     */
    private void everyNodeFailed(Slot slot, long attempt, Map<String, EntitledException> failures, long skippedNanos) {
        List<Waiter> failed = new ArrayList<>();
        synchronized (this) {
            slot.connecting = false;
            if (closed) {
                return;
            }
            if (skippedNanos >= 0) {
                scheduleAttempt(slot, Math.max(1, TimeUnit.NANOSECONDS.toMillis(skippedNanos)));
                return;
            }
            waiters.removeIf(w -> {
                if (w.since < attempt) {
                    failed.add(w);
                    return true;
                }
                return false;
            });
            scheduleAttempt(slot, backoff(slot.failures++));
        }
        failed.forEach(w -> w.future.completeExceptionally(new NoNodeAvailableException(failures, null)));
    }

    /** Schedules a slot's next attempt (guarded by `this`). */
    private void scheduleAttempt(Slot slot, long delayMillis) {
        slot.cancelScheduled();
        slot.scheduled = Shared.TIMER.schedule(() -> {
            synchronized (this) {
                slot.scheduled = null;
                startAttempt(slot);
            }
        }, delayMillis, TimeUnit.MILLISECONDS);
    }

    /** Full jitter: a random pause up to {@code initial * 2^failures}, capped at the maximum. */
    private long backoff(int failures) {
        return jitter(options.initialBackoff().toMillis(), options.maxBackoff().toMillis(), failures);
    }

    static long jitter(long initialMillis, long maxMillis, int failures) {
        long bound = Math.min(maxMillis, initialMillis << Math.min(failures, 20));
        return 1 + ThreadLocalRandom.current().nextLong(Math.max(1, bound));
    }

    private void rebuildReady() {
        List<EntitledConnection> open = new ArrayList<>();
        for (Slot slot : slots) {
            if (slot.connection != null) {
                open.add(slot.connection);
            }
        }
        ready = open.toArray(new EntitledConnection[0]);
    }

    /** A request waiting for a connection, since the attempt counter's value when it began waiting. */
    private record Waiter(CompletableFuture<EntitledConnection> future, long since) {
    }

    /** One node and its refusals. */
    private static final class Node {
        final NodeAddress address;
        // Guarded by `this`.
        int failures;
        long retryAt;
        EntitledException lastError;

        Node(NodeAddress address) {
            this.address = address;
        }

        synchronized void failed(EntitledException error, ClientOptions options) {
            lastError = error;
            retryAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(
                    jitter(options.initialBackoff().toMillis(), options.maxBackoff().toMillis(), failures++));
        }

        synchronized void succeeded() {
            failures = 0;
            lastError = null;
        }
    }

    /** One connection's place in the pool. Guarded by the pool. */
    private static final class Slot {
        final int home;
        EntitledConnection connection;
        boolean connecting;
        int failures;
        ScheduledFuture<?> scheduled;

        Slot(int home) {
            this.home = home;
        }

        void cancelScheduled() {
            if (scheduled != null) {
                scheduled.cancel(false);
                scheduled = null;
            }
        }
    }
}
