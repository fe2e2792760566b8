package dev.entitled.client;

/** How access was granted. */
public enum GrantType {
    PURCHASE("purchase"),
    FAMILY_SHARING("family_sharing"),
    OFFER_CODE("offer_code"),
    MANUAL("manual");

    private final String wireName;

    GrantType(String wireName) {
        this.wireName = wireName;
    }

    /** The value as sent. */
    public String wireName() {
        return wireName;
    }
}
