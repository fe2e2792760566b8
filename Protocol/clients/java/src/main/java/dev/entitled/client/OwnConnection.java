package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Connections of their own, outside the pool, for the requests that must not share one:
 *
 * <ul>
 *   <li>a read of the change feed that waits: the server answers the lines sent after it only after it,
 *       so on a pool connection it would hold up every request behind it for up to 30 s;</li>
 *   <li>the pages of an export: the copy is held by the one server that took it, and the pool would spread
 *       the pages over its nodes.</li>
 * </ul>
 *
 * Such a connection carries one request at a time, so its requests are sent here directly, without the
 * pool's retries: the follower and the export decide what to do when one fails.
 */
final class OwnConnection {
    private OwnConnection() {
    }

    /**
     * Connects to one of the nodes (blocking), trying each in turn from {@code start}. Throws at once a
     * failure that is the configuration's (another node would refuse too), else the last failure when the
     * client has one node, or {@link NoNodeAvailableException} naming each node's.
     */
    static EntitledConnection connectAny(ClientOptions options, int start, String op) {
        List<NodeAddress> nodes = options.nodes();
        Map<String, EntitledException> failures = new LinkedHashMap<>();
        for (int i = 0; i < nodes.size(); i++) {
            NodeAddress node = nodes.get(Math.floorMod(start + i, nodes.size()));
            try {
                return EntitledConnection.connect(node, options);
            } catch (EntitledException e) {
                if (refusedByConfiguration(e)) {
                    throw e;
                }
                failures.put(node.toString(), e);
            }
        }
        throw failures.size() == 1 ? failures.values().iterator().next() : new NoNodeAvailableException(failures, op);
    }

    /** A random first node, so that the connections of many clients spread over the nodes. */
    static int randomStart() {
        return ThreadLocalRandom.current().nextInt(1 << 16);
    }

    /**
     * A failure no node would do better at: a TLS handshake that failed, or a token refused ({@code auth}
     * answered {@code unauthorized} or {@code forbidden}).
     */
    static boolean refusedByConfiguration(EntitledException error) {
        return (error instanceof CannotConnectException && ((CannotConnectException) error).configurationFault())
                || error instanceof UnauthorizedException || error instanceof ForbiddenException
                || error instanceof TlsRequiredException;
    }

    /**
     * Sends a typed request on the connection and completes with its decoded answer, or fails with the
     * answer's error, the connection's failure, or {@link RequestTimeoutException} when no answer came
     * within {@code budget} (then close the connection: the late answer would still come on it).
     */
    static <T> CompletableFuture<T> send(EntitledConnection connection, Request<T, ?> request, Duration budget) {
        String op = request.operation().wireName();
        CompletableFuture<ObjectNode> answer = new CompletableFuture<>();
        Pending pending = new Pending(new EntitledConnection.FutureReceiver(answer), op);
        connection.sendTyped(pending, request::writeFields);
        CompletableFuture<T> result = new CompletableFuture<>();
        answer.orTimeout(budget.toMillis(), TimeUnit.MILLISECONDS).whenComplete((line, error) -> {
            if (error != null) {
                Throwable cause = EntitledConnection.unwrap(error);
                result.completeExceptionally(cause instanceof TimeoutException
                        ? new RequestTimeoutException(op, budget, pending.written) : cause);
                return;
            }
            try {
                if (!line.path("ok").asBoolean(false)) {
                    throw ErrorCode.fromAnswer(line, op);
                }
                result.complete(request.decode(line));
            } catch (EntitledException e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    /**
     * One request on a connection opened for it and closed after its answer (a {@code changes} read that
     * waits). Nothing is retried: a failure is the caller's to handle.
     */
    static <T> CompletableFuture<T> once(EntitledClient client, Request<T, ?> request, Duration budget) {
        String op = request.operation().wireName();
        return CompletableFuture.supplyAsync(() -> connectAny(client.options, randomStart(), op), Shared.BLOCKING)
                .thenCompose(connection -> send(connection, request, budget).whenComplete((answer, error) -> connection.close()));
    }
}
