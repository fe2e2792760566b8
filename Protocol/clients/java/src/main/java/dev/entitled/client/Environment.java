package dev.entitled.client;

/** A real purchase or one in a store's test environment. */
public enum Environment {
    PRODUCTION("production"),
    SANDBOX("sandbox");

    private final String wireName;

    Environment(String wireName) {
        this.wireName = wireName;
    }

    /** The value as sent. */
    public String wireName() {
        return wireName;
    }
}
