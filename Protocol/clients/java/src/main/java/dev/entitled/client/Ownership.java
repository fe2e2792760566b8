package dev.entitled.client;

/** Bought by the user, or shared by a family member. */
public enum Ownership {
    PURCHASED("purchased"),
    FAMILY_SHARED("family_shared");

    private final String wireName;

    Ownership(String wireName) {
        this.wireName = wireName;
    }

    /** The value as sent. */
    public String wireName() {
        return wireName;
    }
}
