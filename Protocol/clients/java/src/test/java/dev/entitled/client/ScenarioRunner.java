package dev.entitled.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.entitled.client.ScenarioMatcher.Mismatch;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs one conformance scenario (Protocol/conformance/README.md) through the client's public low-level
 * API: one {@link EntitledConnection} per scenario connection, {@link EntitledConnection#send(ObjectNode)}
 * and {@link EntitledConnection#sendRaw(String)} for the sends (they do not wait, so consecutive sends are
 * pipelined), its push listener for the pushed lines and its {@link EntitledConnection#closeFuture()} for
 * the closes (and for the one line a server sends unasked before closing, such as {@code busy}).
 */
final class ScenarioRunner {
    private static final double DEFAULT_TIMEOUT = 5.0;

    private final NodeAddress address;
    private final String tag;
    private final Map<String, Connection> connections = new LinkedHashMap<>();
    private Map<String, JsonNode> captures = new HashMap<>();

    private ScenarioRunner(NodeAddress address, String tag) {
        this.address = address;
        this.tag = tag;
    }

    /** Runs the scenario; returns {@code null} when it passed, else its first mismatch. */
    static String run(Path scenario, NodeAddress address) throws IOException {
        String name = scenario.getFileName().toString().replaceFirst("\\.ndjson$", "");
        ScenarioRunner runner = new ScenarioRunner(address, name + "-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 24)));
        try {
            return runner.steps(Files.readAllLines(scenario));
        } finally {
            runner.connections.values().forEach(c -> c.connection.close());
        }
    }

    private String steps(List<String> lines) {
        int number = 0;
        for (String text : lines) {
            number++;
            if (text.isBlank()) {
                continue;
            }
            String kind = "?";
            try {
                ObjectNode step = (ObjectNode) Json.MAPPER.readTree(text);
                kind = directive(step);
                step(kind, step);
            } catch (Mismatch mismatch) {
                return "line " + number + " (" + kind + "): " + mismatch.getMessage();
            } catch (IOException e) {
                return "line " + number + ": not JSON: " + e.getMessage();
            }
        }
        // Every response must have been expected.
        for (Map.Entry<String, Connection> entry : connections.entrySet()) {
            for (CompletableFuture<ObjectNode> answer : entry.getValue().answers) {
                try {
                    ObjectNode extra = answer.get(200, TimeUnit.MILLISECONDS);
                    return "end [" + entry.getKey() + "]: a response the scenario did not expect: " + ScenarioMatcher.describe(extra);
                } catch (ExecutionException | TimeoutException e) {
                    // No answer (the connection closed, or none came): nothing unexpected.
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return "interrupted";
                }
            }
        }
        return null;
    }

    private static String directive(ObjectNode step) throws Mismatch {
        for (String kind : List.of("send", "sendRaw", "expect", "expectPush", "expectNoPush", "expectClosed", "sleep", "comment")) {
            if (step.has(kind)) {
                return kind;
            }
        }
        throw new Mismatch("a step without a directive: " + step);
    }

    private void step(String kind, ObjectNode step) throws Mismatch {
        String name = step.path("connection").asText("main");
        double timeout = step.path("timeout").asDouble(DEFAULT_TIMEOUT);
        switch (kind) {
            case "comment":
                return;
            case "sleep":
                pause((long) (step.get("sleep").asDouble() * 1000));
                return;
            case "send": {
                JsonNode request = ScenarioMatcher.substitute(step.get("send"), captures, tag);
                if (!(request instanceof ObjectNode)) {
                    throw new Mismatch("send needs an object");
                }
                Connection connection = connection(name);
                connection.answers.add(connection.connection.send((ObjectNode) request));
                return;
            }
            case "sendRaw": {
                String raw = ScenarioMatcher.substitute(step.get("sendRaw"), captures, tag).asText()
                        .repeat(step.path("repeat").asInt(1));
                if (step.path("newline").asBoolean(true)) {
                    raw += "\n";
                }
                Connection connection = connection(name);
                connection.answers.addAll(connection.connection.sendRaw(raw));
                return;
            }
            case "expect": {
                ObjectNode response = connection(name).nextResponse(timeout);
                captures = ScenarioMatcher.match(ScenarioMatcher.tagOnly(step.get("expect"), tag), response, captures, "$");
                return;
            }
            case "expectPush":
                captures = connection(name).takePush(ScenarioMatcher.tagOnly(step.get("expectPush"), tag), timeout);
                return;
            case "expectNoPush": {
                Connection connection = connection(name);
                pause((long) (step.get("expectNoPush").asDouble() * 1000));
                if (!connection.pushes.isEmpty()) {
                    throw new Mismatch("[" + name + "] expected no pushed line, got " + ScenarioMatcher.describe(connection.pushes.peek()));
                }
                return;
            }
            case "expectClosed":
                connection(name).expectClosed(timeout);
                return;
            default:
                throw new Mismatch("unknown directive " + kind);
        }
    }

    private Connection connection(String name) throws Mismatch {
        Connection existing = connections.get(name);
        if (existing != null) {
            return existing;
        }
        try {
            EntitledConnection opened = EntitledConnection.open(address, ClientOptions.builder().nodes(List.of(address)).build())
                    .get(10, TimeUnit.SECONDS);
            Connection connection = new Connection(name, opened);
            connections.put(name, connection);
            return connection;
        } catch (ExecutionException | TimeoutException e) {
            throw new Mismatch("[" + name + "] cannot connect: " + EntitledConnection.unwrap(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Mismatch("interrupted");
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One scenario connection: its answers in send order, its pushed lines, its close. */
    private final class Connection {
        final String name;
        final EntitledConnection connection;
        final ArrayDeque<CompletableFuture<ObjectNode>> answers = new ArrayDeque<>();
        final LinkedBlockingDeque<ObjectNode> pushes = new LinkedBlockingDeque<>();
        /** Whether the line the server sent unasked before closing (busy) was taken by an expect. */
        boolean closingLineTaken;

        Connection(String name, EntitledConnection connection) {
            this.name = name;
            this.connection = connection;
            connection.setPushListener(pushes::add);
        }

        ObjectNode nextResponse(double timeout) throws Mismatch {
            try {
                CompletableFuture<ObjectNode> answer = answers.poll();
                if (answer != null) {
                    return answer.get(millis(timeout), TimeUnit.MILLISECONDS);
                }
                // Nothing asked: the only response can be a line the server sends before closing.
                EntitledException reason = connection.closeFuture().get(millis(timeout), TimeUnit.MILLISECONDS);
                if (reason instanceof ServerException && ((ServerException) reason).answer() != null && !closingLineTaken) {
                    closingLineTaken = true;
                    return ((ServerException) reason).answer();
                }
                throw new Mismatch("[" + name + "] expected a response, but the server closed the connection");
            } catch (TimeoutException e) {
                throw new Mismatch("[" + name + "] expected a response, got none within " + timeout + "s");
            } catch (ExecutionException e) {
                throw new Mismatch("[" + name + "] expected a response, but " + EntitledConnection.unwrap(e).getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new Mismatch("interrupted");
            }
        }

        Map<String, JsonNode> takePush(JsonNode expected, double timeout) throws Mismatch {
            long deadline = System.nanoTime() + millis(timeout) * 1_000_000;
            String closest = null;
            while (true) {
                for (Iterator<ObjectNode> it = pushes.iterator(); it.hasNext(); ) {
                    ObjectNode push = it.next();
                    try {
                        Map<String, JsonNode> result = ScenarioMatcher.match(expected, push, captures, "$");
                        it.remove();
                        return result;
                    } catch (Mismatch mismatch) {
                        closest = closest == null ? mismatch.getMessage() : closest;
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                try {
                    ObjectNode arrived = pushes.pollFirst(left, TimeUnit.NANOSECONDS);
                    if (arrived != null) {
                        pushes.addFirst(arrived);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new Mismatch("interrupted");
                }
            }
            throw new Mismatch("[" + name + "] no pushed line matched within " + timeout + "s"
                    + (closest != null ? "; " + pushes.size() + " unmatched, the first differs: " + closest : ", none came"));
        }

        void expectClosed(double timeout) throws Mismatch {
            try {
                connection.closeFuture().get(millis(timeout), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                throw new Mismatch("[" + name + "] expected the server to close the connection within " + timeout + "s");
            } catch (ExecutionException e) {
                throw new Mismatch("[" + name + "] " + e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new Mismatch("interrupted");
            }
            for (CompletableFuture<ObjectNode> answer : answers) {
                if (answer.isDone() && !answer.isCompletedExceptionally()) {
                    throw new Mismatch("[" + name + "] expected the connection to close, got " + ScenarioMatcher.describe(answer.join()));
                }
            }
            answers.clear();
        }

        private long millis(double seconds) {
            return (long) (seconds * 1000);
        }
    }
}
