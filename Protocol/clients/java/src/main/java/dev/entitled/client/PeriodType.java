package dev.entitled.client;

/** The kind of period of a grant (PROTOCOL.md §4 Lifecycle enumerations). */
public enum PeriodType {
    NORMAL("normal"),
    TRIAL("trial"),
    INTRO("intro"),
    PROMOTIONAL("promotional");

    private final String wireName;

    PeriodType(String wireName) {
        this.wireName = wireName;
    }

    /** The value as sent. */
    public String wireName() {
        return wireName;
    }
}
