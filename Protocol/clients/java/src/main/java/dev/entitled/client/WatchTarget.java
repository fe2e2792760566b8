package dev.entitled.client;

import java.util.Objects;

/**
 * What a watch covers (PROTOCOL.md §5 Watching): every membership whose {@code user} is the user, whose
 * {@code device} is the device, either of the two, or every membership ({@link #all()}, admin only).
 */
public final class WatchTarget {
    private final String user;
    private final String device;
    private final boolean all;

    private WatchTarget(String user, String device, boolean all) {
        this.user = user;
        this.device = device;
        this.all = all;
    }

    public static WatchTarget user(String user) {
        return new WatchTarget(Objects.requireNonNull(user, "user"), null, false);
    }

    public static WatchTarget device(String device) {
        return new WatchTarget(null, Objects.requireNonNull(device, "device"), false);
    }

    public static WatchTarget userAndDevice(String user, String device) {
        return new WatchTarget(Objects.requireNonNull(user, "user"), Objects.requireNonNull(device, "device"), false);
    }

    /** Every membership: needs the admin role, and at most 16 connections may hold one. */
    public static WatchTarget all() {
        return new WatchTarget(null, null, true);
    }

    void writeFields(JsonLine line) {
        line.field("user", user).field("device", device).field("all", all ? Boolean.TRUE : null);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof WatchTarget && toString().equals(other.toString());
    }

    @Override
    public int hashCode() {
        return toString().hashCode();
    }

    @Override
    public String toString() {
        return all ? "all" : (user != null ? "user " + user : "") + (user != null && device != null ? " and " : "")
                + (device != null ? "device " + device : "");
    }
}
