package dev.entitled.client;

/** The lifecycle events a store reports (PROTOCOL.md §5 Lifecycle events). */
public enum EventType {
    RENEWAL("renewal"),
    CANCELLATION("cancellation"),
    UNCANCELLATION("uncancellation"),
    BILLING_ISSUE("billing_issue"),
    BILLING_RECOVERED("billing_recovered"),
    EXPIRATION("expiration"),
    PAUSE("pause"),
    RESUME("resume"),
    PRODUCT_CHANGE("product_change"),
    REFUND("refund"),
    EXTENSION("extension"),
    REFUND_REVERSAL("refund_reversal");

    private final String wireName;

    EventType(String wireName) {
        this.wireName = wireName;
    }

    /** The value as sent. */
    public String wireName() {
        return wireName;
    }
}
