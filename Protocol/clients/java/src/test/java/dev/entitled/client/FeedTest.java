package dev.entitled.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestInstance;

/**
 * The change feed ({@code changes}, {@link EntitledFeed}) and exports ({@code export}, {@link EntitledExport})
 * against real servers: one shared by the tests that read only their own subjects' changes, and servers of
 * their own for a restart, truncation, an exact export and two nodes. Waits are generous bounds, never
 * what a test measures.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FeedTest {
    /**
     * The server holds a waiting read of a connection the client closed until its wait passes, and its
     * SIGTERM waits for it up to --shutdown-timeout (10 s by default): a second is enough for these tests.
     */
    private static final String[] QUICK_STOP = {"--shutdown-timeout", "1"};

    /** How long a test waits for an item that must come: far beyond what it takes. */
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    private TestServer server;
    private EntitledClient client;
    private EntitledSyncClient sync;

    @BeforeAll
    void start() {
        server = TestServer.start(QUICK_STOP);
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

    /** The newest change of the shared server: a follower after it sees only what the test writes next. */
    private long newest() {
        return sync.changes(ChangesRequest.afterSeq(0).limit(1)).newest();
    }

    /** The next {@code count} items, each within {@link #PATIENCE}. */
    private static List<FeedItem> take(EntitledFeed feed, int count) throws InterruptedException {
        List<FeedItem> items = new ArrayList<>();
        while (items.size() < count) {
            FeedItem item = feed.poll(PATIENCE);
            assertNotNull(item, "item " + (items.size() + 1) + " of " + count + " did not come (after " + items + ")");
            items.add(item);
        }
        return items;
    }

    private static List<Long> sequences(List<FeedItem> items) {
        return items.stream().map(FeedItem::sequence).collect(Collectors.toList());
    }

    // MARK: changes, typed

    @Test
    void aChangesPageTypesEveryKindOfItem(TestInfo info) {
        long from = newest();
        String u = id(info, "u");
        String v = id(info, "v");
        String w = id(info, "w");
        String device = id(info, "phone");
        String entitlement = id(info, "pro");
        String product = id(info, "p");
        Instant end = Instant.now().plus(10, ChronoUnit.DAYS).truncatedTo(ChronoUnit.SECONDS);
        Instant eventTime = Instant.now().truncatedTo(ChronoUnit.MILLIS);

        long defined = sync.define(DefineRequest.of(entitlement, product).reason("launch")).seq();
        GrantResult bought = sync.grant(GrantRequest.user(u, product).source(Source.APP_STORE).transactionId(id(info, "t1")).expiresAt(end));
        GrantResult restored = sync.grant(GrantRequest.user(v, product).source(Source.APP_STORE).transactionId(id(info, "t1")).expiresAt(end));
        assertEquals(u, restored.transferredFromUser(), "a restore on another account transfers the purchase");
        String membership = bought.membership().id();
        long extended = sync.extend(ExtendRequest.until(membership, end.plus(5, ChronoUnit.DAYS))).seq();
        long renewed = sync.event(EventRequest.of(membership, EventType.RENEWAL, id(info, "e1"), eventTime)
                .expiresAt(end.plus(40, ChronoUnit.DAYS))).seq();
        long revoked = sync.revoke(RevokeRequest.membership(membership).reason("refund")).seq();
        GrantResult guest = sync.grant(GrantRequest.device(device, product));
        long claimed = sync.claim(ClaimRequest.of(device, w)).seq();

        FeedPage page = sync.changes(ChangesRequest.afterSeq(from).limit(1000));
        assertFalse(page.hasMore());
        assertEquals(claimed, page.next());
        assertEquals(claimed, page.newest());
        assertEquals(0, page.oldestAfterSeq());
        List<FeedItem> items = page.changes();
        assertEquals(List.of("define", "grant", "transfer", "extend", "renewal", "revoke", "grant", "claim"),
                items.stream().map(FeedItem::action).collect(Collectors.toList()));
        assertEquals(List.of(defined, bought.seq(), restored.seq(), extended, renewed, revoked, guest.seq(), claimed), sequences(items));

        FeedItem define = items.get(0);
        assertEquals(entitlement, define.entitlement());
        assertEquals(List.of(product), define.products());
        assertEquals("launch", define.reason());
        assertEquals("local", define.actor());
        assertNull(define.membership());
        FeedItem grant = items.get(1);
        // As the change left it; an entry of a membership that changed since leaves out its transactions,
        // as the audit trail's do (the membership's newest item has them).
        assertEquals(withoutTransactions(bought.membership()), withoutTransactions(grant.membership()), "the membership as the grant left it");
        assertEquals(bought.membership().transactions(), items.get(5).membership().transactions(), "the newest item has them");
        assertNotNull(grant.time());
        FeedItem transfer = items.get(2);
        assertEquals(u, transfer.formerOwnerUser());
        assertNull(transfer.formerOwnerDevice());
        assertEquals(v, transfer.membership().user());
        FeedItem extend = items.get(3);
        assertEquals(end, extend.previousExpiresAt());
        assertEquals(end.plus(5, ChronoUnit.DAYS), extend.membership().expiresAt());
        FeedItem renewal = items.get(4);
        assertEquals(id(info, "e1"), renewal.eventId());
        assertEquals(eventTime, renewal.eventTime());
        FeedItem revoke = items.get(5);
        assertEquals("refund", revoke.reason());
        assertEquals("revoked", revoke.membership().status());
        assertFalse(revoke.membership().isActive());
        FeedItem claim = items.get(7);
        assertEquals(guest.membership().id(), claim.membership().id());
        assertEquals(w, claim.membership().user());
        assertFalse(claim.isErasure());

        long erasedUser = sync.erase(EraseRequest.user(v).reason("ticket 1")).seq();
        long erasedDevice = sync.erase(EraseRequest.device(device).reason("ticket 2")).seq();
        long undefined = sync.undefine(UndefineRequest.of(entitlement)).seq();
        List<FeedItem> later = sync.changes(ChangesRequest.afterSeq(page.next())).changes();
        assertEquals(List.of(erasedUser, erasedDevice, undefined), sequences(later));
        FeedItem userErased = later.get(0);
        assertTrue(userErased.isErasure());
        assertEquals("erase", userErased.action());
        assertEquals(1L, userErased.erasedMembershipCount());
        assertNotNull(userErased.erasedHistoryEntryCount());
        assertEquals(List.of(membership), userErased.erasedMemberships(), "v held the transferred membership");
        assertEquals(List.of(), userErased.detachedMemberships());
        assertNull(userErased.membership(), "an erasure's item names no one");
        FeedItem deviceErased = later.get(1);
        assertEquals(List.of(), deviceErased.erasedMemberships());
        assertEquals(List.of(guest.membership().id()), deviceErased.detachedMemberships(), "w's claimed purchase loses the device");
        FeedItem undefine = later.get(2);
        assertEquals(entitlement, undefine.entitlement());
        assertFalse(undefine.isErasure());

        // An erased person's changes leave the feed at once: read again, the erased membership is gone.
        List<Long> remaining = sequences(sync.changes(ChangesRequest.afterSeq(from).limit(1000)).changes());
        assertEquals(List.of(defined, guest.seq(), claimed, erasedUser, erasedDevice, undefined), remaining);
        // The raw item is the server's line, whole; the typed view of it is the history entry's too.
        assertEquals(define.sequence(), define.raw().path("sequence").asLong());
        assertEquals(grant.membership(), grant.toHistoryEntry().membership());
        assertEquals(grant.sequence(), grant.toHistoryEntry().sequence());
    }

    @Test
    void theServerTakesChangesAndExportWithTheFieldsTheClientSends() {
        Hello hello = sync.hello();
        assertEquals(Operation.CHANGES.fields(), hello.fields().get("changes"));
        assertEquals(Operation.EXPORT.fields(), hello.fields().get("export"));
    }

    private static Membership withoutTransactions(Membership m) {
        return new Membership(m.id(), m.productId(), m.planId(), m.user(), m.device(), m.status(), m.isActive(), m.createdAt(),
                m.expiresAt(), m.source(), m.revokedAt(), m.reason(), m.willRenew(), m.periodType(), m.renewState(), m.renewsCount(),
                m.environment(), m.ownership(), m.grantType(), m.unsubscribeDetectedAt(), m.billingIssueDetectedAt(),
                m.gracePeriodExpiresAt(), m.pausedAt(), List.of());
    }

    @Test
    void aWaitingChangesReadHoldsUpNoOtherRequest(TestInfo info) throws Exception {
        // The pool has one connection: a read the server holds would hold up the check behind it, and the
        // check would time out. A read that waits goes on a connection of its own.
        String user = id(info, "u");
        CompletableFuture<FeedPage> waiting = client.changes(ChangesRequest.afterSeq(newest()).user(user).waitUpTo(Duration.ofSeconds(25)));
        assertFalse(sync.check(CheckRequest.user(user).timeout(Duration.ofSeconds(5))).active());
        assertFalse(waiting.isDone(), "the read waits for a change of its subject");
        GrantResult granted = sync.grant(GrantRequest.user(user, id(info, "p")));
        FeedPage page = waiting.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        assertEquals(List.of(granted.seq()), sequences(page.changes()));
        assertEquals(1, client.pool.openConnections());
    }

    // MARK: following

    @Test
    void theFollowerReadsEveryChangeInOrderAcrossAKillAndARestart() throws Exception {
        Path directory = TestServer.newDirectory();
        int port = TestServer.freePort();
        TestServer restarted = TestServer.start(directory, port, QUICK_STOP);
        try (EntitledClient writer = EntitledClient.connect(restarted.options().build());
             EntitledFeed feed = writer.sync().follow(ChangesRequest.afterSeq(0).waitUpTo(Duration.ofSeconds(2)))) {
            List<Long> written = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                written.add(grantSurvivingRestarts(writer, "restart.u" + i));
            }
            List<FeedItem> read = new ArrayList<>(take(feed, 20));
            assertEquals(written, sequences(read));

            // Caught up, the follower waits on its read; the server dies under it (kill -9) and comes back on
            // the same data directory and port.
            restarted.kill();
            restarted = TestServer.start(directory, port, QUICK_STOP);
            for (int i = 20; i < 40; i++) {
                written.add(grantSurvivingRestarts(writer, "restart.u" + i));
            }
            read.addAll(take(feed, 20));
            assertEquals(written, sequences(read), "every change once, in order");
            assertEquals(written.get(written.size() - 1), feed.position());
            assertNull(feed.poll(Duration.ofMillis(300)), "nothing delivered twice");
        } finally {
            restarted.close();
        }
    }

    /** A grant with an idempotency key, sent again until the restarted server answers (a replay changes nothing). */
    private static long grantSurvivingRestarts(EntitledClient writer, String user) throws InterruptedException {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (true) {
            try {
                return writer.sync().grant(GrantRequest.user(user, "restart.p").idempotencyKey(user)).seq();
            } catch (EntitledException e) {
                if ((e instanceof ServerException && !(e instanceof LoadingException)) || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(50);
            }
        }
    }

    @Test
    void theFollowerReadsOnAfterWaitsThatTimedOut(TestInfo info) throws Exception {
        String user = id(info, "u");
        try (EntitledFeed feed = sync.follow(ChangesRequest.afterSeq(newest()).user(user).waitUpTo(Duration.ofMillis(200)))) {
            List<Long> written = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                written.add(sync.grant(GrantRequest.user(user, id(info, "p" + i))).seq());
            }
            List<FeedItem> read = new ArrayList<>(take(feed, 3));

            // A second of nothing: the follower's reads of 200 ms come back empty, one after the other.
            long readsBefore = changesReads();
            Thread.sleep(1000);
            assertTrue(changesReads() - readsBefore >= 2, "the follower read on after its waits timed out");
            assertEquals(0, feed.queuedItems());

            for (int i = 3; i < 6; i++) {
                written.add(sync.grant(GrantRequest.user(user, id(info, "p" + i))).seq());
            }
            read.addAll(take(feed, 3));
            assertEquals(written, sequences(read));
            assertTrue(feed.position() >= written.get(5), "the position passed the last item taken");
        }
    }

    private long changesReads() {
        return sync.stats().raw().path("requests").path("byOp").path("changes").asLong();
    }

    @Test
    void aSubjectsFollowerSeesOnlyItsSubjectAndErasures(TestInfo info) throws Exception {
        String alice = id(info, "alice");
        String bob = id(info, "bob");
        String device = id(info, "phone");
        long from = newest();
        try (EntitledFeed aliceFeed = sync.follow(ChangesRequest.afterSeq(from).user(alice));
             EntitledFeed deviceFeed = sync.follow(ChangesRequest.afterSeq(from).device(device))) {
            sync.grant(GrantRequest.user(bob, id(info, "p")));
            long alicesGrant = sync.grant(GrantRequest.user(alice, id(info, "p"))).seq();
            long guestGrant = sync.grant(GrantRequest.device(device, id(info, "p"))).seq();
            long claim = sync.claim(ClaimRequest.of(device, alice)).seq();
            sync.grant(GrantRequest.user(bob, id(info, "q")));
            long bobErased = sync.erase(EraseRequest.user(bob)).seq();
            long alicesSecond = sync.grant(GrantRequest.user(alice, id(info, "q"))).seq();
            sync.define(DefineRequest.of(id(info, "pro"), id(info, "p")));

            List<FeedItem> seen = take(aliceFeed, 4);
            assertEquals(List.of(alicesGrant, claim, bobErased, alicesSecond), sequences(seen));
            assertEquals(List.of("grant", "claim", "erase", "grant"), seen.stream().map(FeedItem::action).collect(Collectors.toList()));
            for (FeedItem item : seen) {
                assertTrue(item.isErasure() || alice.equals(item.membership().user()), "not alice's: " + item.raw());
            }
            assertNull(aliceFeed.poll(Duration.ofMillis(300)), "neither bob's changes nor the catalog's");

            List<FeedItem> onDevice = take(deviceFeed, 3);
            assertEquals(List.of(guestGrant, claim, bobErased), sequences(onDevice));
            assertNull(deviceFeed.poll(Duration.ofMillis(300)));
        }
    }

    @Test
    void thePositionNeverSplitsAChangeSoFollowingOnFromItSkipsNothing(TestInfo info) throws Exception {
        String user = id(info, "u");
        String device = id(info, "phone");
        sync.grant(GrantRequest.device(device, id(info, "p1")));
        sync.grant(GrantRequest.device(device, id(info, "p2")));
        long from = newest();
        long claim = sync.claim(ClaimRequest.of(device, user)).seq(); // one change, two items
        long after = sync.grant(GrantRequest.user(user, id(info, "p3"))).seq();

        try (EntitledFeed feed = sync.follow(ChangesRequest.afterSeq(from).user(user))) {
            assertEquals(from, feed.position());
            assertEquals(claim, feed.take().sequence());
            assertEquals(from, feed.position(), "half of the claim was taken: the position stays before it");
            assertEquals(claim, feed.take().sequence());
            assertEquals(claim, feed.position());
            assertEquals(after, feed.take().sequence());
            assertEquals(after, feed.position());
        }
        // Stopped after the claim's first item: following on from the position gives the whole claim again.
        long stored;
        try (EntitledFeed feed = sync.follow(ChangesRequest.afterSeq(from).user(user))) {
            feed.take();
            stored = feed.position();
        }
        try (EntitledFeed feed = sync.follow(ChangesRequest.afterSeq(stored).user(user))) {
            assertEquals(List.of(claim, claim, after), sequences(take(feed, 3)));
        }
    }

    @Test
    void aListenerGetsTheItemsInOrderAndTheEndFutureCompletesOnClose(TestInfo info) throws Exception {
        String user = id(info, "u");
        List<FeedItem> heard = Collections.synchronizedList(new ArrayList<>());
        EntitledFeed feed = sync.follow(heard::add, ChangesRequest.afterSeq(newest()).user(user));
        List<Long> written = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            written.add(sync.grant(GrantRequest.user(user, id(info, "p" + i))).seq());
        }
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (heard.size() < 5 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(written, sequences(List.copyOf(heard)));
        assertEquals(written.get(4), feed.position());
        assertEquals(0, feed.queuedItems());
        feed.close();
        assertNull(feed.endFuture().get(PATIENCE.toSeconds(), TimeUnit.SECONDS));
    }

    @Test
    void theFollowerAsAStreamEndsWhenClosed(TestInfo info) throws Exception {
        String user = id(info, "u");
        long granted = sync.grant(GrantRequest.user(user, id(info, "p"))).seq();
        EntitledFeed feed = sync.follow(ChangesRequest.afterSeq(granted - 1).user(user));
        assertEquals(granted, feed.stream().findFirst().orElseThrow().sequence());
        feed.close();
        assertFalse(feed.iterator().hasNext(), "a closed follower's iteration ends");
        assertThrows(ConnectionClosedException.class, feed::take);
    }

    @Test
    void theFollowerEndsWithTruncatedWhenStartedBeforeTheFeedsHorizon() throws Exception {
        // The feed keeps at least 4096 changes and lets go of 4096 at a time: past 3 x 4096 changes, the
        // oldest ones are gone.
        try (TestServer small = TestServer.start("--feed-retention-changes", "4096", "--shutdown-timeout", "1");
             EntitledClient admin = EntitledClient.connect(small.options().build())) {
            for (int batch = 0; batch < 13; batch++) {
                List<CompletableFuture<GrantResult>> grants = new ArrayList<>();
                for (int i = 0; i < 1000; i++) {
                    grants.add(admin.grant(GrantRequest.user("horizon.u" + (batch * 1000 + i), "horizon.p")));
                }
                grants.forEach(CompletableFuture::join);
            }

            TruncatedException refused = assertThrows(TruncatedException.class, () -> admin.sync().changes(ChangesRequest.afterSeq(0)));
            assertEquals("truncated", refused.code());
            assertEquals("changes", refused.op());
            assertFalse(refused.mayHaveBeenApplied(), "a read: nothing was carried out");

            try (EntitledFeed feed = admin.sync().follow(ChangesRequest.afterSeq(0))) {
                assertThrows(TruncatedException.class, feed::take);
                assertThrows(TruncatedException.class, () -> feed.iterator().hasNext());
                ExecutionException ended = assertThrows(ExecutionException.class,
                        () -> feed.endFuture().get(PATIENCE.toSeconds(), TimeUnit.SECONDS));
                assertInstanceOf(TruncatedException.class, ended.getCause());
                assertEquals(0, feed.position());
            }

            // From the horizon the page names, the feed reads again.
            long horizon = admin.sync().changes(ChangesRequest.afterSeq(13_000).limit(1)).oldestAfterSeq();
            assertTrue(horizon > 0);
            try (EntitledFeed feed = admin.sync().follow(ChangesRequest.afterSeq(horizon))) {
                assertEquals(horizon + 1, feed.take().sequence());
            }
        }
    }

    @Test
    void aFollowerWithoutTheAdminRoleEndsForbidden() throws Exception {
        Path auth = TestServer.repo().resolve("Protocol/conformance/restricted/auth.json");
        try (TestServer guarded = TestServer.start("--auth", auth.toString(), "--shutdown-timeout", "1");
             EntitledClient admin = EntitledClient.connect(guarded.options().token("conformance-admin-token-0001").build());
             EntitledClient writer = EntitledClient.connect(guarded.options().token("conformance-writer-token-0001").build())) {
            long granted = writer.sync().grant(GrantRequest.user("guarded.u", "guarded.p")).seq();
            try (EntitledFeed feed = writer.sync().follow(ChangesRequest.afterSeq(0))) {
                ForbiddenException forbidden = assertThrows(ForbiddenException.class, feed::take);
                assertEquals("changes", forbidden.op());
            }
            assertThrows(ForbiddenException.class, () -> writer.sync().openExport(ExportRequest.start()));
            try (EntitledFeed feed = admin.sync().follow(ChangesRequest.afterSeq(0))) {
                FeedItem item = feed.take();
                assertEquals(granted, item.sequence());
                assertEquals("conformance-writer", item.actor());
            }
        }
    }

    // MARK: exports

    @Test
    void anExportInPagesEqualsTheListedMembershipsAndFollowingItsSeqMissesNothing() throws Exception {
        try (TestServer copied = TestServer.start(QUICK_STOP);
             EntitledClient admin = EntitledClient.connect(copied.options().build())) {
            EntitledSyncClient entitled = admin.sync();
            entitled.define(DefineRequest.of("export.pro", "export.p0", "export.p1"));
            List<CompletableFuture<GrantResult>> grants = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                grants.add(admin.grant(GrantRequest.user("export.u" + i, "export.p" + (i % 2))));
            }
            grants.forEach(CompletableFuture::join);
            List<Membership> listedBefore = listAll(entitled);
            assertEquals(300, listedBefore.size());

            List<Membership> exported = new ArrayList<>();
            List<HistoryEntry> trail = new ArrayList<>();
            List<Long> writtenMeanwhile = new ArrayList<>();
            int pages = 0;
            long seq;
            try (EntitledExport export = entitled.openExport(ExportRequest.start().limit(50).history(true))) {
                seq = export.seq();
                assertEquals(Map.of("export.pro", List.of("export.p0", "export.p1")), export.entitlements());
                assertNotNull(export.time());
                for (ExportPage page : export) {
                    pages++;
                    assertEquals(seq, page.seq());
                    assertTrue(page.memberships().size() <= 50);
                    exported.addAll(page.memberships());
                    trail.addAll(page.history());
                    // A change made while the copy is read: not in the copy, in the feed after its seq.
                    writtenMeanwhile.add(entitled.grant(GrantRequest.user("export.late" + pages, "export.p0")).seq());
                }
                assertFalse(export.hasNext());
            }
            assertEquals(6, pages, "300 memberships in pages of 50");
            assertEquals(listedBefore, exported, "the copy is every membership, in creation order, as listed");
            Set<String> grantedInTrail = trail.stream().filter(e -> "grant".equals(e.action()))
                    .map(e -> e.membership().id()).collect(Collectors.toSet());
            assertEquals(exported.stream().map(Membership::id).collect(Collectors.toSet()), grantedInTrail,
                    "the audit trail of every membership");
            assertTrue(writtenMeanwhile.stream().allMatch(written -> written > seq));

            Map<String, Membership> copy = new LinkedHashMap<>();
            exported.forEach(m -> copy.put(m.id(), m));
            try (EntitledFeed feed = entitled.follow(ChangesRequest.afterSeq(seq))) {
                List<FeedItem> changes = take(feed, writtenMeanwhile.size());
                assertEquals(writtenMeanwhile, sequences(changes), "every change made meanwhile, none of the copy");
                changes.forEach(item -> copy.put(item.membership().id(), item.membership()));
                assertNull(feed.poll(Duration.ofMillis(300)));
            }
            assertEquals(listAll(entitled), List.copyOf(copy.values()), "the copy plus the feed is the store");
        }
    }

    private static List<Membership> listAll(EntitledSyncClient entitled) {
        List<Membership> all = new ArrayList<>();
        entitled.allMemberships(MembershipsRequest.source(Source.MANUAL).limit(1000)).forEach(all::add);
        return all;
    }

    @Test
    void anExportReadsEveryPageFromTheNodeThatTookTheCopy() throws Exception {
        // Two servers with different memberships as the nodes of one client: the pool spreads requests over
        // both, and a page read from the node without the copy would be not_found.
        try (TestServer first = TestServer.start(QUICK_STOP);
             TestServer second = TestServer.start(QUICK_STOP);
             EntitledClient both = EntitledClient.connect(ClientOptions.builder().nodes(first.address(), second.address()).build())) {
            Map<NodeAddress, Set<String>> byNode = new LinkedHashMap<>();
            for (TestServer node : List.of(first, second)) {
                try (EntitledClient one = EntitledClient.connect(node.options().build())) {
                    Set<String> ids = new HashSet<>();
                    for (int i = 0; i < 120; i++) {
                        ids.add(one.sync().grant(GrantRequest.user("pinned.u" + i, "pinned.p")).membership().id());
                    }
                    byNode.put(NodeAddress.parse(node.address()), ids);
                }
            }
            for (int attempt = 0; attempt < 4; attempt++) {
                try (EntitledExport export = both.sync().openExport(ExportRequest.start().limit(20))) {
                    Set<String> ids = new HashSet<>();
                    int pages = 0;
                    for (Iterator<ExportPage> it = export.iterator(); it.hasNext(); pages++) {
                        it.next().memberships().forEach(m -> ids.add(m.id()));
                    }
                    assertEquals(6, pages);
                    assertEquals(byNode.get(export.node()), ids,
                            "every page from " + export.node());
                }
            }
        }
    }

    @Test
    void anExportCanBeReadAsItsMembershipsAndPageByPageThroughThePool(TestInfo info) {
        String user = id(info, "u");
        for (int i = 0; i < 3; i++) {
            sync.grant(GrantRequest.user(user, id(info, "p" + i)));
        }
        List<String> ids = new ArrayList<>();
        try (EntitledExport export = sync.openExport(ExportRequest.start().limit(2))) {
            export.memberships().forEach(m -> ids.add(m.id()));
        }
        List<String> paged = new ArrayList<>();
        ExportPage page = sync.export(ExportRequest.start().limit(2));
        assertNotNull(page.entitlements(), "the first page carries the catalog");
        page.memberships().forEach(m -> paged.add(m.id()));
        while (page.hasNext()) {
            page = sync.export(ExportRequest.start().limit(2).after(page.next()));
            assertNull(page.entitlements());
            page.memberships().forEach(m -> paged.add(m.id()));
        }
        assertEquals(ids, paged);
        List<String> mine = sync.memberships(MembershipsRequest.user(user)).items().stream().map(Membership::id).collect(Collectors.toList());
        Collections.reverse(mine); // newest first there, creation order in an export
        assertEquals(mine, ids.stream().filter(mine::contains).collect(Collectors.toList()));
        assertThrows(NotFoundException.class, () -> sync.export(ExportRequest.start().after("abc.0")));
    }
}
