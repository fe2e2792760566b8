package dev.entitled.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Timeouts, cancellation, loading, retries and protocol errors, against fake line servers. */
class FakeServerTest {
    /** Answers every line with {"ok":true,"id":...}, the first one of each connection after {@code delayMillis}. */
    private static FakeServer slowFirstAnswer(long delayMillis) {
        return new FakeServer((connection, in, out) -> {
            boolean first = true;
            for (String line; (line = in.readLine()) != null; ) {
                if (first) {
                    Thread.sleep(delayMillis);
                    first = false;
                }
                out.send("{\"ok\":true,\"id\":" + FakeServer.id(line) + "}");
            }
        });
    }

    private static EntitledClient client(FakeServer server, ClientOptions.Builder options) {
        return EntitledClient.connect(options.nodes(server.address()).build());
    }

    @Test
    void aTimedOutRequestFailsAtOnceAndItsLateAnswerIsDropped() throws Exception {
        try (FakeServer server = slowFirstAnswer(800);
             EntitledClient client = client(server, ClientOptions.builder())) {
            long started = System.nanoTime();
            RequestTimeoutException timeout = assertThrows(RequestTimeoutException.class,
                    () -> client.sync().check(CheckRequest.user("u").timeout(Duration.ofMillis(200))));
            assertTrue(System.nanoTime() - started < 700_000_000L, "failed at its timeout, not at the answer");
            assertTrue(timeout.mayHaveBeenApplied(), "it was sent");
            assertEquals("check", timeout.op());
            // The same connection answers the next request, once the late answer was read and dropped.
            assertFalse(client.sync().check(CheckRequest.user("u")).active());
            assertEquals(1, server.accepted());
        }
    }

    @Test
    void aCancelledRequestKeepsTheConnectionUsable() throws Exception {
        try (FakeServer server = slowFirstAnswer(500);
             EntitledClient client = client(server, ClientOptions.builder())) {
            CompletableFuture<CheckResult> first = client.check(CheckRequest.user("u"));
            assertTrue(first.cancel(true));
            assertThrows(CancellationException.class, first::join);
            assertFalse(client.sync().check(CheckRequest.user("u")).active());
            assertEquals(1, server.accepted());
            assertEquals(2, server.received.size());
        }
    }

    /** Answers `loading` on its first two connections (then closes them), normally from the third on. */
    private static FakeServer startingServer() {
        return new FakeServer((connection, in, out) -> {
            for (String line; (line = in.readLine()) != null; ) {
                if (connection <= 2) {
                    out.send("{\"ok\":false,\"id\":" + FakeServer.id(line)
                            + ",\"error\":{\"code\":\"loading\",\"message\":\"loading\",\"loaded\":1,\"total\":10}}");
                    return;
                }
                out.send("{\"ok\":true,\"id\":" + FakeServer.id(line) + "}");
            }
        });
    }

    @Test
    void loadingIsWaitedOut() throws Exception {
        try (FakeServer server = startingServer();
             EntitledClient client = client(server, ClientOptions.builder())) {
            client.sync().ping();
            assertTrue(server.accepted() >= 3);
        }
        try (FakeServer server = startingServer();
             EntitledClient client = client(server, ClientOptions.builder())) {
            client.sync().grant(GrantRequest.user("u", "p")); // nothing was carried out: a write is sent again too
            assertEquals(3, server.received.stream().filter(line -> line.contains("\"grant\"")).count());
        }
    }

    @Test
    void loadingIsRaisedWithoutALoadingWait() throws Exception {
        try (FakeServer server = startingServer();
             EntitledClient client = client(server, ClientOptions.builder().loadingWait(Duration.ZERO))) {
            LoadingException loading = assertThrows(LoadingException.class, () -> client.sync().ping());
            assertEquals(1, loading.loaded());
            assertEquals(10, loading.total());
            assertFalse(loading.mayHaveBeenApplied());
        }
    }

    /** Reads one line of each connection and closes it without an answer. */
    private static FakeServer closesAfterReading() {
        return new FakeServer((connection, in, out) -> in.readLine());
    }

    private static FakeServer answersEverything() {
        return new FakeServer((connection, in, out) -> {
            for (String line; (line = in.readLine()) != null; ) {
                out.send("{\"ok\":true,\"id\":" + FakeServer.id(line) + ",\"seq\":1,\"active\":true,\"membership\":{\"id\":\"mem_0000000000000\"}}");
            }
        });
    }

    private static void awaitOpen(EntitledClient client, int connections) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (client.pool.openConnections() < connections && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
    }

    @Test
    void aReadIsSentAgainToAnotherNodeAndAWriteIsNot() throws Exception {
        try (FakeServer dropping = closesAfterReading(); FakeServer healthy = answersEverything();
             EntitledClient client = EntitledClient.connect(ClientOptions.builder().nodes(dropping.address(), healthy.address())
                     .initialBackoff(Duration.ofMillis(1)).maxBackoff(Duration.ofMillis(5)).build())) {
            for (int i = 0; i < 10; i++) {
                awaitOpen(client, 2);
                assertTrue(client.sync().check(CheckRequest.user("u" + i)).active(), "read " + i);
            }
            assertTrue(dropping.received.size() >= 1, "some reads went to the dropping node first");
            assertEquals(10, healthy.received.size(), "each read answered once, by the healthy node");

            int failed = 0;
            for (int i = 0; i < 10; i++) {
                awaitOpen(client, 2);
                try {
                    client.sync().grant(GrantRequest.user("w" + i, "p"));
                } catch (ConnectionClosedException e) {
                    assertTrue(e.mayHaveBeenApplied(), "a write lost with its connection may have been applied");
                    assertEquals("grant", e.op());
                    failed++;
                }
            }
            long grantsDropped = dropping.received.stream().filter(line -> line.contains("\"grant\"")).count();
            long grantsAnswered = healthy.received.stream().filter(line -> line.contains("\"grant\"")).count();
            assertTrue(failed >= 1, "some writes went to the dropping node");
            assertEquals(failed, grantsDropped, "a failed write was never sent anywhere else");
            assertEquals(10 - failed, grantsAnswered);
        }
    }

    @Test
    void anAnswerWithAnotherIdIsAProtocolError() throws Exception {
        try (FakeServer server = new FakeServer((connection, in, out) -> {
            for (String line; (line = in.readLine()) != null; ) {
                out.send("{\"ok\":true,\"id\":999999}");
            }
        }); EntitledClient client = client(server, ClientOptions.builder())) {
            CompletionException error = assertThrows(CompletionException.class, () -> client.grant(GrantRequest.user("u", "p")).join());
            ProtocolErrorException protocol = assertInstanceOf(ProtocolErrorException.class, error.getCause());
            assertTrue(protocol.mayHaveBeenApplied());
        }
    }

    @Test
    void aWatchWaitsOutLoadingWhenItWatchesAgainAfterARestart() throws Exception {
        // The watch's connection drops; the server it reconnects to is still starting (loading), then
        // takes the watch: the watch goes on, with its gap marker, instead of ending.
        AtomicInteger watches = new AtomicInteger();
        try (FakeServer server = new FakeServer((connection, in, out) -> {
            for (String line; (line = in.readLine()) != null; ) {
                String id = FakeServer.id(line);
                if (!"watch".equals(FakeServer.op(line))) {
                    out.send("{\"ok\":true,\"id\":" + id + "}");
                    continue;
                }
                int watch = watches.incrementAndGet();
                if (watch == 2) {
                    out.send("{\"ok\":false,\"id\":" + id + ",\"error\":{\"code\":\"loading\",\"message\":\"loading\",\"loaded\":0,\"total\":0}}");
                    return;
                }
                out.send("{\"ok\":true,\"id\":" + id + ",\"watching\":1}");
                if (watch == 1) {
                    Thread.sleep(100);
                    return; // the connection drops
                }
                out.send("{\"push\":\"access\",\"cause\":\"grant\",\"sequence\":7,\"membership\":{\"id\":\"mem_7\",\"productId\":\"p\","
                        + "\"user\":\"u\",\"status\":\"active\",\"isActive\":true}}");
            }
        }); EntitledClient client = client(server, ClientOptions.builder());
             EntitledWatch watch = client.sync().watch(WatchTarget.user("u"))) {
            assertInstanceOf(WatchEvent.Gap.class, watch.poll(Duration.ofSeconds(30)));
            WatchEvent pushed = watch.poll(Duration.ofSeconds(30));
            assertEquals(7L, assertInstanceOf(WatchEvent.Pushed.class, pushed).push().sequence());
            assertTrue(watches.get() >= 3);
        }
    }

    /** A change feed item of change {@code sequence}, as the server writes one. */
    private static String feedItem(long sequence) {
        return "{\"time\":\"2026-12-04T15:59:42.128Z\",\"actor\":\"local\",\"action\":\"grant\",\"sequence\":" + sequence
                + ",\"membership\":{\"id\":\"mem_" + sequence + "\",\"productId\":\"p\",\"user\":\"u\",\"status\":\"active\","
                + "\"isActive\":true,\"createdAt\":\"2026-12-04T15:59:42.128Z\",\"expiresAt\":null,\"source\":\"manual\"}}";
    }

    private static String feedPage(String id, long next, long newest, long... sequences) {
        StringBuilder items = new StringBuilder();
        for (long sequence : sequences) {
            items.append(items.length() > 0 ? "," : "").append(feedItem(sequence));
        }
        return "{\"ok\":true,\"id\":" + id + ",\"changes\":[" + items + "],\"next\":" + next + ",\"newest\":" + newest
                + ",\"oldestAfterSeq\":0}";
    }

    @Test
    void theFollowerWaitsOutLoadingAndReadsOnFromItsLastPageAfterADrop() throws Exception {
        // The feed holds changes 1 to 5 (change 2 has two items). The first read is answered loading (and the
        // connection closed), the read after the first page is dropped unanswered; then the feed is served,
        // and once caught up every read comes back empty, as a wait that timed out.
        AtomicInteger reads = new AtomicInteger();
        AtomicBoolean dropped = new AtomicBoolean();
        try (FakeServer server = new FakeServer((connection, in, out) -> {
            for (String line; (line = in.readLine()) != null; ) {
                String id = FakeServer.id(line);
                long after = Json.MAPPER.readTree(line).path("afterSeq").asLong();
                if (reads.incrementAndGet() == 1) {
                    out.send("{\"ok\":false,\"id\":" + id + ",\"error\":{\"code\":\"loading\",\"message\":\"loading\",\"loaded\":0,\"total\":0}}");
                    return;
                }
                if (after == 0) {
                    out.send(feedPage(id, 2, 5, 1, 2, 2));
                } else if (after == 2 && !dropped.getAndSet(true)) {
                    return;
                } else if (after == 2) {
                    out.send(feedPage(id, 5, 5, 3, 4, 5));
                } else {
                    Thread.sleep(50);
                    out.send(feedPage(id, 5, 5));
                }
            }
        }); EntitledClient client = client(server, ClientOptions.builder());
             EntitledFeed feed = client.sync().follow(ChangesRequest.afterSeq(0))) {
            List<Long> sequences = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                FeedItem item = feed.poll(Duration.ofSeconds(30));
                assertNotNull(item, "item " + (i + 1) + " did not come, after " + sequences);
                sequences.add(item.sequence());
            }
            assertEquals(List.of(1L, 2L, 2L, 3L, 4L, 5L), sequences, "every item once, in order");
            assertEquals(5, feed.position());
            assertNull(feed.poll(Duration.ofMillis(300)), "nothing delivered twice");

            List<JsonNode> sent = new ArrayList<>();
            for (String line : server.received) {
                sent.add(Json.MAPPER.readTree(line));
            }
            assertEquals(List.of(0L, 0L, 2L, 2L, 5L), sent.stream().limit(5).map(r -> r.path("afterSeq").asLong()).collect(Collectors.toList()),
                    "each read from the last page read: again after loading, again after the drop");
            assertTrue(sent.stream().limit(4).noneMatch(r -> r.has("wait")), "no wait while changes are there to read");
            assertEquals(20_000, sent.get(4).path("wait").asLong(), "once caught up, a read waits (20 s by default)");
        }
    }

    @Test
    void noNodeAvailableNamesEachNode() {
        int closedPort = TestServer.freePort();
        NoNodeAvailableException error = assertThrows(NoNodeAvailableException.class,
                () -> EntitledClient.connect("127.0.0.1:" + closedPort));
        assertTrue(error.failures().containsKey("tcp 127.0.0.1:" + closedPort));
        assertInstanceOf(CannotConnectException.class, error.failures().values().iterator().next());
        assertTrue(error.getMessage().contains("connection refused"), error.getMessage());
    }
}
