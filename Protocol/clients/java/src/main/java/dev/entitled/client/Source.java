package dev.entitled.client;

/** Where a membership came from (PROTOCOL.md §4 Sources). */
public enum Source {
    APP_STORE("app_store"),
    PLAY_STORE("play_store"),
    STRIPE("stripe"),
    WHOP("whop"),
    MANUAL("manual"),
    PROMOTIONAL("promotional");

    private final String wireName;

    Source(String wireName) {
        this.wireName = wireName;
    }

    /** The value as sent. */
    public String wireName() {
        return wireName;
    }
}
