package dev.entitled.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A real server stopped and started again on the same port and data directory. */
class ResilienceTest {
    @Test
    void reconnectsAfterARestartAndTheWatchReportsTheGap() throws Exception {
        Path directory = TestServer.newDirectory();
        int port = TestServer.freePort();
        TestServer server = TestServer.start(directory, port);
        try (EntitledClient client = EntitledClient.connect(server.options().build());
             EntitledWatch watch = client.sync().watch(WatchTarget.user("restart.u"))) {
            client.sync().grant(GrantRequest.user("restart.u", "restart.p"));
            assertEquals("grant", assertInstanceOf(WatchEvent.Pushed.class, watch.poll(Duration.ofSeconds(5))).push().cause());

            assertEquals(0, server.stop());
            try {
                client.sync().ping();
                fail("a stopped server answered");
            } catch (NoNodeAvailableException expected) {
                assertTrue(expected.getMessage().contains("127.0.0.1:" + port), expected.getMessage());
            }
            server = TestServer.start(directory, port);

            // The pool reconnects by itself; the grant made before the restart is still there.
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (true) {
                try {
                    assertTrue(client.sync().check(CheckRequest.user("restart.u").product("restart.p")).active());
                    break;
                } catch (NoNodeAvailableException e) {
                    if (System.nanoTime() > deadline) {
                        throw e;
                    }
                    Thread.sleep(50);
                }
            }

            // The watch came back with a gap marker before the next push.
            WatchEvent gap = watch.poll(Duration.ofSeconds(10));
            WatchEvent.Gap marker = assertInstanceOf(WatchEvent.Gap.class, gap);
            assertTrue(!marker.resumedAt().isBefore(marker.lostAt()));
            assertNotNull(marker.reason());
            client.sync().grant(GrantRequest.user("restart.u", "restart.q"));
            WatchEvent pushed = watch.poll(Duration.ofSeconds(5));
            assertEquals("restart.q", assertInstanceOf(WatchEvent.Pushed.class, pushed).push().membership().productId());
        } finally {
            server.close();
        }
    }
}
