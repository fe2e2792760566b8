package dev.entitled.client;

import java.time.Duration;

/** {@link Duration}s as protocol durations (PROTOCOL.md §4 Durations). */
final class Durations {
    private Durations() {
    }

    /** {@code "2592000s"}; the protocol takes positive whole numbers only. */
    static String seconds(Duration duration) {
        if (duration.isNegative() || duration.isZero() || duration.getNano() != 0) {
            throw new IllegalArgumentException("a duration must be a positive whole number of seconds, not " + duration);
        }
        return duration.getSeconds() + "s";
    }
}
