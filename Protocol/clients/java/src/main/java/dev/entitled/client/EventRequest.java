package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.Objects;

/**
 * {@code event}: applies a lifecycle event a store reported to one membership. Safe to repeat: the server
 * recognises a redelivery by its {@code eventId} ({@code ignoredBecause} {@code duplicate}).
 *
 * <pre>{@code
 * EventRequest.of(membershipId, EventType.RENEWAL, "evt_0101", eventTime).expiresAt(newEnd)
 * }</pre>
 */
public final class EventRequest extends Request<EventResult, EventRequest> {
    private final String membership;
    private final EventType type;
    private final String eventId;
    private final Instant eventTime;
    private Instant expiresAt;
    private Instant gracePeriodExpiresAt;
    private String product;
    private String transactionId;
    private String reason;

    private EventRequest(String membership, EventType type, String eventId, Instant eventTime) {
        this.membership = Objects.requireNonNull(membership, "membership");
        this.type = Objects.requireNonNull(type, "type");
        this.eventId = Objects.requireNonNull(eventId, "eventId");
        this.eventTime = Objects.requireNonNull(eventTime, "eventTime");
    }

    /** An event of a membership: its type, the store's id for it, and when it happened at the store. */
    public static EventRequest of(String membership, EventType type, String eventId, Instant eventTime) {
        return new EventRequest(membership, type, eventId, eventTime);
    }

    /** The new end of the period: required by {@code renewal} and {@code extension}, optional for {@code resume}. */
    public EventRequest expiresAt(Instant expiresAt) {
        this.expiresAt = expiresAt;
        return this;
    }

    /** For {@code billing_issue}: the end of the store's grace period. */
    public EventRequest gracePeriodExpiresAt(Instant gracePeriodExpiresAt) {
        this.gracePeriodExpiresAt = gracePeriodExpiresAt;
        return this;
    }

    /** For {@code product_change}: the new product. */
    public EventRequest product(String product) {
        this.product = product;
        return this;
    }

    public EventRequest transactionId(String transactionId) {
        this.transactionId = transactionId;
        return this;
    }

    /** The audit trail's reason. */
    public EventRequest reason(String reason) {
        this.reason = reason;
        return this;
    }

    @Override
    Operation operation() {
        return Operation.EVENT;
    }

    @Override
    void writeFields(JsonLine line) {
        line.field("membership", membership).field("type", type.wireName()).field("eventId", eventId)
                .field("eventTime", eventTime).field("expiresAt", expiresAt)
                .field("gracePeriodExpiresAt", gracePeriodExpiresAt).field("product", product)
                .field("transactionId", transactionId).field("reason", reason);
    }

    @Override
    EventResult decode(ObjectNode answer) {
        return Decode.event(answer);
    }
}
