package dev.entitled.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestInstance;

/** The typed API against one real server (ids unique per test, so the tests do not meet). */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClientTest {
    private TestServer server;
    private EntitledClient client;
    private EntitledSyncClient sync;

    @BeforeAll
    void start() {
        server = TestServer.start("--min-seq-wait", "200");
        client = EntitledClient.connect(server.options().build());
        sync = client.sync();
    }

    @AfterAll
    void stop() {
        client.close();
        server.close();
    }

    private static String id(TestInfo info, String what) {
        return info.getTestMethod().orElseThrow().getName() + "." + what;
    }

    @Test
    void guestPurchaseClaimedThenChecked(TestInfo info) {
        String device = id(info, "phone");
        String user = id(info, "alice");
        String entitlement = id(info, "pro");
        CatalogChange defined = sync.define(DefineRequest.of(entitlement, id(info, "yearly"), id(info, "monthly"), id(info, "monthly")));
        assertEquals(List.of(id(info, "monthly"), id(info, "yearly")), defined.products());
        GrantResult granted = sync.grant(GrantRequest.device(device, id(info, "monthly")).duration("30d").source(Source.APP_STORE));
        assertEquals(device, granted.membership().device());
        assertNull(granted.membership().user());
        assertTrue(granted.seq() > 0);
        assertEquals(1, sync.claim(ClaimRequest.of(device, user)).claimed());
        assertEquals(0, sync.claim(ClaimRequest.of(device, user)).claimed());
        CheckResult access = sync.check(CheckRequest.userAndDevice(user, device).entitlement(entitlement));
        assertTrue(access.active());
        assertEquals(granted.membership().expiresAt(), access.expiresAt());
        assertFalse(sync.check(CheckRequest.device(device).entitlement(entitlement)).active());
        assertTrue(sync.catalog().containsKey(entitlement));
        NotFoundException missing = assertThrows(NotFoundException.class,
                () -> sync.check(CheckRequest.user(user).entitlement(id(info, "gold"))));
        assertEquals("not_found", missing.code());
        assertEquals("check", missing.op());
        assertFalse(missing.mayHaveBeenApplied());
        assertEquals(entitlement, sync.undefine(UndefineRequest.of(entitlement)).entitlement());
    }

    @Test
    void everyWriteAndReadOfAMembership(TestInfo info) {
        String user = id(info, "u");
        Instant end = Instant.now().plus(10, ChronoUnit.DAYS).truncatedTo(ChronoUnit.SECONDS);
        GrantResult granted = sync.grant(GrantRequest.user(user, id(info, "p")).expiresAt(end).transactionId(id(info, "t1"))
                .idempotencyKey(id(info, "key")).periodType(PeriodType.TRIAL).willRenew(true).reason("trial"));
        Membership membership = granted.membership();
        assertEquals("trialing", membership.status());
        assertEquals(1, membership.transactions().size());
        assertFalse(granted.idempotentReplay());
        GrantResult replay = sync.grant(GrantRequest.user(user, id(info, "p")).expiresAt(end).idempotencyKey(id(info, "key")));
        assertTrue(replay.idempotentReplay());
        assertEquals(membership.id(), replay.membership().id());
        assertThrows(ConflictException.class, () -> sync.grant(GrantRequest.user(user, id(info, "other")).idempotencyKey(id(info, "key"))));

        EventResult renewed = sync.event(EventRequest.of(membership.id(), EventType.RENEWAL, id(info, "e1"), Instant.now())
                .expiresAt(end.plus(30, ChronoUnit.DAYS)).transactionId(id(info, "t2")));
        assertTrue(renewed.applied());
        assertEquals("active", renewed.membership().status());
        EventResult again = sync.event(EventRequest.of(membership.id(), EventType.RENEWAL, id(info, "e1"), Instant.now())
                .expiresAt(end.plus(30, ChronoUnit.DAYS)));
        assertEquals("duplicate", again.ignoredBecause());

        ExtendResult extended = sync.extend(ExtendRequest.by(membership.id(), "1mo").reason("goodwill"));
        assertEquals(end.plus(30, ChronoUnit.DAYS), extended.previousExpiresAt());
        Customer customer = sync.customer(CustomerRequest.user(user));
        assertEquals(List.of(id(info, "p")), customer.activeProducts());
        assertEquals(1, sync.memberships(MembershipsRequest.transactionId(id(info, "t2"))).items().size());

        MembershipResult revoked = sync.revoke(RevokeRequest.membership(membership.id()).reason("refund"));
        assertEquals("revoked", revoked.membership().status());
        assertEquals("refund", revoked.membership().reason());
        List<String> actions = new ArrayList<>();
        sync.allHistory(HistoryRequest.user(user).limit(2)).forEach(entry -> actions.add(entry.action()));
        assertEquals(List.of("revoke", "extend", "renewal", "grant"), actions);

        EraseResult erased = sync.erase(EraseRequest.user(user).reason("ticket 1"));
        assertEquals(1, erased.memberships());
        assertTrue(sync.memberships(MembershipsRequest.user(user)).items().isEmpty());
        assertThrows(NotFoundException.class, () -> sync.revoke(RevokeRequest.membership(membership.id())));
    }

    @Test
    void serverOperations() {
        sync.ping();
        Hello hello = sync.hello();
        assertEquals(5, hello.protocol());
        assertTrue(hello.operations().containsAll(List.of("grant", "check", "extend")));
        assertEquals(Operation.CHECK.fields(), hello.fields().get("check"));
        SnapshotResult snapshot = sync.snapshot();
        assertTrue(snapshot.file().startsWith("snapshot-"));
        Stats stats = sync.stats();
        assertTrue(stats.server().startsWith("entitled"));
        assertNotNull(stats.raw().get("requests"));
        assertThrows(BadRequestException.class, () -> sync.reload()); // a server without --auth has no tokens
    }

    @Test
    void pipelinesAThousandRequestsOnOneConnection(TestInfo info) {
        String user = id(info, "u");
        sync.grant(GrantRequest.user(user, id(info, "p")));
        List<CompletableFuture<CheckResult>> checks = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            checks.add(client.check(CheckRequest.user(i % 2 == 0 ? user : id(info, "nobody")).product(id(info, "p"))));
        }
        for (int i = 0; i < 1000; i++) {
            assertEquals(i % 2 == 0, checks.get(i).join().active(), "check " + i);
        }
        assertEquals(1, client.pool.openConnections());
    }

    @Test
    void pagesAreFollowedToTheEnd(TestInfo info) {
        String user = id(info, "u");
        Set<String> granted = new HashSet<>();
        for (int i = 0; i < 5; i++) {
            granted.add(sync.grant(GrantRequest.user(user, id(info, "p" + i))).membership().id());
        }
        Page<Membership> first = sync.memberships(MembershipsRequest.user(user).limit(2));
        assertEquals(2, first.items().size());
        assertTrue(first.hasNext());
        List<String> listed = new ArrayList<>();
        sync.allMemberships(MembershipsRequest.user(user).limit(2)).forEach(m -> listed.add(m.id()));
        assertEquals(5, listed.size());
        assertEquals(granted, new HashSet<>(listed));
        assertEquals(id(info, "p4"), sync.memberships(MembershipsRequest.user(user).limit(1)).items().get(0).productId(), "newest first");

        AsyncPages<Membership> pages = client.membershipPages(MembershipsRequest.user(user).limit(3));
        AtomicInteger count = new AtomicInteger();
        pages.forEach(m -> count.incrementAndGet()).join();
        assertEquals(5, count.get());
        assertFalse(pages.hasNext());
    }

    @Test
    void minSeqAndReadYourWrites(TestInfo info) {
        String user = id(info, "u");
        GrantResult granted = sync.grant(GrantRequest.user(user, id(info, "p")));
        assertTrue(client.lastSeq() >= granted.seq());
        assertTrue(sync.check(CheckRequest.user(user).minSeq(granted.seq())).active());
        StaleException stale = assertThrows(StaleException.class, () -> sync.check(CheckRequest.user(user).minSeq(granted.seq() + 1_000_000)));
        assertFalse(stale.mayHaveBeenApplied());

        // With readYourWrites, reads carry lastSeq: one ahead of the server proves it is sent (stale).
        try (EntitledClient reading = EntitledClient.connect(server.options().readYourWrites(true).build());
             EntitledClient plain = EntitledClient.connect(server.options().build())) {
            reading.sync().grant(GrantRequest.user(user, id(info, "q")));
            assertTrue(reading.sync().customer(CustomerRequest.user(user)).activeProducts().contains(id(info, "q")));
            reading.noteSeq(reading.lastSeq() + 1_000_000);
            plain.noteSeq(reading.lastSeq());
            assertThrows(StaleException.class, () -> reading.sync().check(CheckRequest.user(user)));
            assertThrows(StaleException.class, () -> reading.sync().memberships(MembershipsRequest.user(user)));
            assertTrue(plain.sync().check(CheckRequest.user(user)).active());
        }
    }

    @Test
    void rawRequestsReturnErrorAnswers(TestInfo info) {
        ObjectNode request = Json.object().put("op", "check").put("id", "mine").put("user", id(info, "u")).put("entitlment", "pro");
        ObjectNode answer = sync.request(request);
        assertFalse(answer.path("ok").asBoolean());
        assertEquals("mine", answer.path("id").asText());
        assertEquals("bad_request", answer.path("error").path("code").asText());
        ObjectNode future = sync.request(Json.object().put("op", "refund"));
        assertEquals("unknown_op", future.path("error").path("code").asText());
    }

    @Test
    void unixSocket(TestInfo info) {
        try (EntitledClient local = EntitledClient.connect(server.socket.toString())) {
            local.sync().grant(GrantRequest.user(id(info, "u"), id(info, "p")));
            assertTrue(local.sync().check(CheckRequest.user(id(info, "u"))).active());
        }
    }

    @Test
    void watchDeliversPushesAndEnds(TestInfo info) throws InterruptedException {
        String user = id(info, "u");
        EntitledWatch watch = sync.watch(WatchTarget.user(user));
        try {
            GrantResult granted = sync.grant(GrantRequest.user(user, id(info, "p")));
            WatchEvent event = watch.poll(Duration.ofSeconds(5));
            Push push = assertInstanceOf(WatchEvent.Pushed.class, event).push();
            assertEquals("grant", push.cause());
            assertEquals(granted.seq(), push.sequence());
            assertEquals(granted.membership().id(), push.membership().id());
            watch.unwatch(WatchTarget.user(user)).join();
            sync.grant(GrantRequest.user(user, id(info, "p2")));
            assertNull(watch.poll(Duration.ofMillis(300)), "no push after unwatch");
            watch.close();
            assertInstanceOf(WatchEvent.Ended.class, watch.take());
            assertFalse(watch.iterator().hasNext());
        } finally {
            watch.close();
        }
    }

    @Test
    void watchQueueIsBoundedByBackpressure(TestInfo info) throws InterruptedException {
        // A watch nobody reads holds at most maxQueuedPushes events: then it stops reading its connection
        // (the server holds the lines), and once read it delivers every push in order.
        String user = id(info, "u");
        int grants = 200;
        try (EntitledClient bounded = EntitledClient.connect(server.options().maxQueuedPushes(10).build());
                EntitledWatch watch = bounded.sync().watch(WatchTarget.user(user))) {
            int most = 0;
            long last = 0;
            for (int i = 0; i < grants; i++) {
                last = sync.grant(GrantRequest.user(user, id(info, "p" + i))).seq();
                most = Math.max(most, watch.queuedEvents());
            }
            long deadline = System.nanoTime() + Duration.ofMillis(500).toNanos();
            while (System.nanoTime() < deadline) {
                most = Math.max(most, watch.queuedEvents());
                Thread.sleep(10);
            }
            assertTrue(most <= 10, "the watch held " + most + " events, more than its bound of 10");
            assertEquals(10, watch.queuedEvents(), "the unread watch filled its queue");
            long previous = 0;
            int pushes = 0;
            boolean gap = false;
            while (previous < last) {
                WatchEvent event = watch.poll(Duration.ofSeconds(10));
                assertNotNull(event, "no event after seq " + previous + " (waiting for " + last + ")");
                assertTrue(watch.queuedEvents() <= 10);
                if (event instanceof WatchEvent.Gap) {
                    gap = true; // the server cut the connection: pushes of the time between may be missing
                    continue;
                }
                Push push = assertInstanceOf(WatchEvent.Pushed.class, event).push();
                assertTrue(push.sequence() > previous, "push " + push.sequence() + " after " + previous);
                previous = push.sequence();
                pushes++;
            }
            assertEquals(last, previous);
            if (!gap) {
                assertEquals(grants, pushes, "every grant's push, none dropped");
            }
        }
    }

    @Test
    void closeWakesAReaderBlockedOnAFullQueue(TestInfo info) throws InterruptedException {
        String user = id(info, "u");
        try (EntitledClient bounded = EntitledClient.connect(server.options().maxQueuedPushes(2).build())) {
            EntitledWatch watch = bounded.sync().watch(WatchTarget.user(user));
            for (int i = 0; i < 5; i++) {
                sync.grant(GrantRequest.user(user, id(info, "p" + i)));
            }
            assertTrue(waitFor(() -> blockedReaders() > 0), "the reader blocks on the full queue");
            long started = System.nanoTime();
            watch.close();
            assertTrue(waitFor(() -> blockedReaders() == 0), "close() wakes the blocked reader");
            assertTrue(Duration.ofNanos(System.nanoTime() - started).toMillis() < 900, "promptly");
            assertInstanceOf(WatchEvent.Pushed.class, watch.take());
            assertInstanceOf(WatchEvent.Pushed.class, watch.take());
            assertInstanceOf(WatchEvent.Ended.class, watch.take());
        }
    }

    /** Threads waiting in EntitledWatch.enqueue (a watch's reader blocked on its full queue). */
    private static long blockedReaders() {
        return Thread.getAllStackTraces().values().stream()
                .filter(stack -> List.of(stack).stream().anyMatch(frame -> frame.getClassName().equals(EntitledWatch.class.getName())
                        && frame.getMethodName().equals("enqueue")))
                .count();
    }

    private static boolean waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(5);
        }
        return true;
    }

    @Test
    void watchOfEverySubject() {
        // Without --auth every connection is admin: a watch of everything is taken.
        try (EntitledWatch watch = sync.watch(WatchTarget.all())) {
            assertEquals(List.of(WatchTarget.all()), watch.targets());
        }
    }
}
