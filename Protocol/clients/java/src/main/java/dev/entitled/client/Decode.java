package dev.entitled.client;

import static dev.entitled.client.Json.bool;
import static dev.entitled.client.Json.number;
import static dev.entitled.client.Json.optionalNumber;
import static dev.entitled.client.Json.strings;
import static dev.entitled.client.Json.text;
import static dev.entitled.client.Json.time;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/** Turns successful answers into the typed records. Fields the client does not know are ignored (§7). */
final class Decode {
    private Decode() {
    }

    static CheckResult check(ObjectNode answer) {
        return new CheckResult(bool(answer, "active"), time(answer, "expiresAt"));
    }

    static GrantResult grant(ObjectNode answer) {
        JsonNode from = answer.path("transferredFrom");
        return new GrantResult(number(answer, "seq"), membership(answer.path("membership")),
                bool(answer, "idempotentReplay"), text(from, "user"), text(from, "device"));
    }

    static ClaimResult claim(ObjectNode answer) {
        return new ClaimResult(number(answer, "seq"), number(answer, "claimed"));
    }

    static MembershipResult revoke(ObjectNode answer) {
        return new MembershipResult(number(answer, "seq"), membership(answer.path("membership")));
    }

    static ExtendResult extend(ObjectNode answer) {
        return new ExtendResult(number(answer, "seq"), membership(answer.path("membership")),
                time(answer, "previousExpiresAt"));
    }

    static EventResult event(ObjectNode answer) {
        return new EventResult(number(answer, "seq"), membership(answer.path("membership")), bool(answer, "applied"),
                text(answer, "reason"));
    }

    static CatalogChange catalogChange(ObjectNode answer) {
        return new CatalogChange(number(answer, "seq"), text(answer, "entitlement"), strings(answer, "products"));
    }

    static EraseResult erase(ObjectNode answer) {
        JsonNode erased = answer.path("erased");
        return new EraseResult(number(answer, "seq"), number(erased, "memberships"), number(erased, "historyEntries"));
    }

    static SnapshotResult snapshot(ObjectNode answer) {
        return new SnapshotResult(text(answer, "file"), number(answer, "sequence"), number(answer, "bytes"),
                number(answer, "durationMs"), number(answer, "memberships"));
    }

    static Hello hello(ObjectNode answer) {
        Map<String, List<String>> fields = new LinkedHashMap<>();
        answer.path("fields").fields().forEachRemaining(e -> fields.put(e.getKey(), strings(answer.path("fields"), e.getKey())));
        return new Hello((int) number(answer, "protocol"), text(answer, "server"), strings(answer, "operations"),
                Collections.unmodifiableMap(fields), bool(answer, "authRequired"));
    }

    static AuthResult auth(ObjectNode answer) {
        return new AuthResult(text(answer, "name"), text(answer, "role"), bool(answer, "authRequired"));
    }

    static Map<String, List<String>> catalog(ObjectNode answer) {
        Map<String, List<String>> entitlements = new LinkedHashMap<>();
        JsonNode all = answer.path("entitlements");
        all.fieldNames().forEachRemaining(name -> entitlements.put(name, strings(all, name)));
        return Collections.unmodifiableMap(entitlements);
    }

    static Stats stats(ObjectNode answer) {
        return new Stats(text(answer, "server"), time(answer, "startedAt"), number(answer, "uptimeSeconds"), answer);
    }

    static Customer customer(ObjectNode answer) {
        JsonNode customer = answer.path("customer");
        Map<String, EntitlementInfo> entitlements = new LinkedHashMap<>();
        customer.path("entitlements").fields().forEachRemaining(e -> {
            JsonNode info = e.getValue();
            entitlements.put(e.getKey(), new EntitlementInfo(bool(info, "isActive"), text(info, "productId"),
                    text(info, "membership"), time(info, "expiresAt"), bool(info, "willRenew"), text(info, "periodType"),
                    text(info, "store"), time(info, "latestPurchaseDate"), time(info, "originalPurchaseDate"),
                    time(info, "billingIssueDetectedAt"), time(info, "unsubscribeDetectedAt")));
        });
        return new Customer(Collections.unmodifiableMap(entitlements), strings(customer, "activeProducts"),
                strings(customer, "allPurchasedProductIds"), time(customer, "latestExpirationDate"),
                time(customer, "firstSeen"), time(customer, "requestDate"));
    }

    static Page<Membership> membershipPage(ObjectNode answer) {
        return new Page<>(list(answer.path("memberships"), Decode::membership), text(answer, "next"));
    }

    static Page<HistoryEntry> historyPage(ObjectNode answer) {
        return new Page<>(list(answer.path("history"), Decode::historyEntry), text(answer, "next"));
    }

    static HistoryEntry historyEntry(JsonNode entry) {
        JsonNode membership = entry.get("membership");
        JsonNode erased = entry.get("erased");
        return new HistoryEntry(time(entry, "time"), text(entry, "actor"), text(entry, "action"), text(entry, "reason"),
                optionalNumber(entry, "sequence"), text(entry, "eventId"), time(entry, "eventTime"),
                time(entry, "previousExpiresAt"), membership != null ? membership(membership) : null,
                text(entry, "entitlement"), entry.has("products") ? strings(entry, "products") : null,
                erased != null ? optionalNumber(erased, "memberships") : null,
                erased != null ? optionalNumber(erased, "historyEntries") : null);
    }

    static FeedPage feedPage(ObjectNode answer) {
        for (String field : new String[] {"next", "newest", "oldestAfterSeq"}) {
            if (!answer.path(field).canConvertToLong()) {
                throw new ProtocolErrorException("a changes answer without a whole number " + field, "changes", false);
            }
        }
        return new FeedPage(list(answer.path("changes"), Decode::feedItem), number(answer, "next"), number(answer, "newest"),
                number(answer, "oldestAfterSeq"));
    }

    /** One item of the change feed; an item without a change number is a protocol error (nothing to read on from). */
    static FeedItem feedItem(JsonNode item) {
        JsonNode sequence = item.get("sequence");
        if (!(item instanceof ObjectNode) || sequence == null || !sequence.canConvertToLong() || sequence.asLong() < 1) {
            throw new ProtocolErrorException("a change feed item without a sequence: " + item, "changes", false);
        }
        JsonNode membership = item.get("membership");
        JsonNode formerOwner = item.path("formerOwner");
        JsonNode erased = item.get("erased");
        return new FeedItem(sequence.asLong(), time(item, "time"), text(item, "actor"), text(item, "action"),
                text(item, "reason"), membership != null && membership.isObject() ? membership(membership) : null,
                text(item, "eventId"), time(item, "eventTime"), time(item, "previousExpiresAt"), text(formerOwner, "user"),
                text(formerOwner, "device"), text(item, "entitlement"), item.has("products") ? strings(item, "products") : null,
                erased != null ? optionalNumber(erased, "memberships") : null,
                erased != null ? optionalNumber(erased, "historyEntries") : null,
                strings(item, "erasedMemberships"), strings(item, "detachedMemberships"), (ObjectNode) item);
    }

    static ExportPage exportPage(ObjectNode answer) {
        JsonNode export = answer.path("export");
        if (!export.path("seq").canConvertToLong()) {
            throw new ProtocolErrorException("an export answer without export.seq", "export", false);
        }
        return new ExportPage(number(export, "seq"), time(export, "time"), answer.has("entitlements") ? catalog(answer) : null,
                list(answer.path("memberships"), Decode::membership), list(answer.path("history"), Decode::historyEntry),
                text(answer, "next"));
    }

    static Push push(ObjectNode line) {
        JsonNode membership = line.get("membership");
        return new Push(text(line, "cause"), optionalNumber(line, "sequence"),
                membership != null ? membership(membership) : null, line);
    }

    static Membership membership(JsonNode m) {
        return new Membership(text(m, "id"), text(m, "productId"), text(m, "planId"), text(m, "user"), text(m, "device"),
                text(m, "status"), bool(m, "isActive"), time(m, "createdAt"), time(m, "expiresAt"), text(m, "source"),
                time(m, "revokedAt"), text(m, "reason"), bool(m, "willRenew"), text(m, "periodType"),
                text(m, "renewState"), number(m, "renewsCount"), text(m, "environment"), text(m, "ownership"),
                text(m, "grantType"), time(m, "unsubscribeDetectedAt"), time(m, "billingIssueDetectedAt"),
                time(m, "gracePeriodExpiresAt"), time(m, "pausedAt"), list(m.path("transactions"), Decode::transaction));
    }

    private static Transaction transaction(JsonNode t) {
        return new Transaction(text(t, "id"), text(t, "originalTransactionId"), text(t, "type"), time(t, "time"),
                time(t, "expiresAt"), time(t, "revokedAt"));
    }

    private static <T> List<T> list(JsonNode array, Function<JsonNode, T> item) {
        if (!array.isArray() || array.isEmpty()) {
            return List.of();
        }
        List<T> items = new ArrayList<>(array.size());
        array.forEach(node -> items.add(item.apply(node)));
        return Collections.unmodifiableList(items);
    }
}
