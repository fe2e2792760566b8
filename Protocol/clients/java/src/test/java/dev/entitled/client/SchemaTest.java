package dev.entitled.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Keeps the client in step with Protocol/schema: every operation and its fields, every error code and its
 * exception class, and a method for each operation. A code or operation added to the schema fails here,
 * naming what the client lacks.
 */
class SchemaTest {
    private static JsonNode schema(String name) throws IOException {
        return Json.MAPPER.readTree(TestServer.repo().resolve("Protocol/schema/" + name).toFile());
    }

    private static Set<String> names(JsonNode node) {
        Set<String> names = new TreeSet<>();
        if (node.isObject()) {
            node.fieldNames().forEachRemaining(names::add);
        } else {
            node.forEach(value -> names.add(value.asText()));
        }
        return names;
    }

    private static void assertSameSet(Set<String> schema, Set<String> client, String what) {
        Set<String> lacking = new TreeSet<>(schema);
        lacking.removeAll(client);
        Set<String> extra = new TreeSet<>(client);
        extra.removeAll(schema);
        if (!lacking.isEmpty() || !extra.isEmpty()) {
            fail(what + ": the client lacks " + lacking + " and has extra " + extra);
        }
    }

    @Test
    void operationsAndTheirFieldsMatchTheRequestSchema() throws IOException {
        JsonNode operations = schema("request.schema.json").path("$defs").path("operations");
        assertSameSet(names(operations), Arrays.stream(Operation.values()).map(Operation::wireName).collect(Collectors.toSet()),
                "operations of request.schema.json");
        for (Operation op : Operation.values()) {
            Set<String> fields = names(operations.path(op.wireName()).path("propertyNames").path("enum"));
            fields.removeAll(Set.of("op", "id"));
            assertSameSet(fields, new TreeSet<>(op.fields()), "fields of " + op.wireName());
        }
    }

    @Test
    void errorCodesMatchTheResponseSchemaEachWithItsClass() throws IOException {
        Set<String> codes = names(schema("response.schema.json").path("$defs").path("errorCode").path("enum"));
        assertSameSet(codes, Arrays.stream(ErrorCode.values()).map(ErrorCode::wireName).collect(Collectors.toSet()),
                "error codes of response.schema.json");
        for (String code : codes) {
            ServerException error = ErrorCode.exception(code, "a message", "check", null);
            String expected = Arrays.stream(code.split("_")).map(w -> Character.toUpperCase(w.charAt(0)) + w.substring(1))
                    .collect(Collectors.joining()) + "Exception";
            assertEquals(expected, error.getClass().getSimpleName(), "the class of " + code);
            assertEquals(code, error.code());
            assertEquals("check", error.op());
            assertEquals(code.equals("outcome_unknown") || code.equals("internal"), error.mayHaveBeenApplied(),
                    "whether " + code + " may have been applied");
        }
        ServerException newer = ErrorCode.exception("rate_limited", "slow down", "grant", null);
        assertInstanceOf(UnknownCodeException.class, newer);
        assertEquals("rate_limited", newer.code());
        assertFalse(newer.mayHaveBeenApplied());
    }

    @Test
    void everyOperationHasAMethod() {
        for (Operation op : Operation.values()) {
            Class<?> async = op == Operation.AUTH ? EntitledConnection.class : op == Operation.UNWATCH ? EntitledWatch.class : EntitledClient.class;
            assertTrue(Arrays.stream(async.getMethods()).anyMatch(m -> m.getName().equals(op.wireName())),
                    async.getSimpleName() + " lacks a method " + op.wireName());
            if (async == EntitledClient.class) {
                assertTrue(Arrays.stream(EntitledSyncClient.class.getMethods()).anyMatch(m -> m.getName().equals(op.wireName())),
                        "EntitledSyncClient lacks a method " + op.wireName());
            }
        }
    }

    /** Every field each typed request can write is one the schema lets its operation take. */
    @Test
    void typedRequestsWriteOnlyTheFieldsTheirOperationTakes() throws IOException {
        Instant t = Instant.parse("2027-01-01T00:00:00Z");
        List<Request<?, ?>> requests = new ArrayList<>(List.of(
                GrantRequest.userAndDevice("u", "d", "p").plan("pl").source(Source.APP_STORE).expiresAt(t)
                        .duration(Duration.ofDays(1)).reason("r").transactionId("t").originalTransactionId("o").willRenew(true)
                        .periodType(PeriodType.TRIAL).environment(Environment.SANDBOX).ownership(Ownership.FAMILY_SHARED)
                        .grantType(GrantType.OFFER_CODE).idempotencyKey("k").purchasedAt(t).renewsCount(2),
                CheckRequest.userAndDevice("u", "d").product("p").entitlement("e").at(t).minSeq(1),
                ClaimRequest.of("d", "u").reason("r"),
                RevokeRequest.membership("m").reason("r"),
                ExtendRequest.by("m", "1mo").reason("r"),
                ExtendRequest.until("m", t),
                MembershipsRequest.userAndDevice("u", "d").at(t).limit(5).after("a").minSeq(1),
                MembershipsRequest.source(Source.STRIPE).endedAfter(t),
                MembershipsRequest.transactionId("t"),
                MembershipsRequest.originalTransactionId("o"),
                DefineRequest.of("e", "p1", "p2").reason("r"),
                UndefineRequest.of("e").reason("r"),
                EventRequest.of("m", EventType.RENEWAL, "id", t).expiresAt(t).gracePeriodExpiresAt(t).product("p")
                        .transactionId("t").reason("r"),
                CustomerRequest.userAndDevice("u", "d").minSeq(3),
                HistoryRequest.userAndDevice("u", "d").limit(3).after("x"),
                HistoryRequest.entitlement("e"),
                HistoryRequest.erasures(),
                EraseRequest.userAndDevice("u", "d").reason("r"),
                ChangesRequest.afterSeq(3).limit(10).waitUpTo(Duration.ofSeconds(1)).user("u").device("d"),
                ExportRequest.start().limit(5).history(true).after("a.1")));
        JsonNode operations = schema("request.schema.json").path("$defs").path("operations");
        for (Request<?, ?> request : requests) {
            JsonLine line = JsonLine.forThisThread().begin(request.operation().wireName(), 1);
            request.writeFields(line);
            line.end();
            JsonNode written = Json.parse(line.bytes(), 0, line.length());
            Set<String> allowed = names(operations.path(request.operation().wireName()).path("propertyNames").path("enum"));
            Set<String> sent = names(written);
            sent.removeAll(allowed);
            assertTrue(sent.isEmpty(), request.getClass().getSimpleName() + " writes fields its operation does not take: " + sent);
        }
    }

    @Test
    void readsAreTheOperationsThatChangeNothing() {
        Set<String> reads = Arrays.stream(Operation.values()).filter(Operation::isRead).map(Operation::wireName)
                .collect(Collectors.toCollection(TreeSet::new));
        assertEquals(new TreeSet<>(List.of("catalog", "changes", "check", "customer", "export", "hello", "history", "memberships",
                "ping", "stats")), reads);
    }

    @Test
    void jsonLineEscapesLikeJson() throws IOException {
        String tricky = "quote\" backslash\\ tab\t nul\u0000 é 😀 ✓";
        JsonLine line = JsonLine.forThisThread().begin("check", 7).field("user", tricky).end();
        JsonNode parsed = Json.parse(line.bytes(), 0, line.length());
        assertEquals(tricky, parsed.path("user").asText());
        assertEquals(7, parsed.path("id").asLong());
    }
}
