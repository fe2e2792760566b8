package dev.entitled.client;

import java.time.Instant;
import java.time.format.DateTimeParseException;

/** Times on the wire: RFC 3339 in UTC (PROTOCOL.md §4 Times). */
final class Times {
    private Times() {
    }

    /** An instant as the server takes it; {@link Instant#toString()} writes UTC with {@code Z}. */
    static String format(Instant instant) {
        return instant.toString();
    }

    /** A time the server wrote ({@code 2026-12-22T00:31:45.833Z}). */
    static Instant parse(String text) {
        try {
            return Instant.parse(text);
        } catch (DateTimeParseException e) {
            throw new ProtocolErrorException("the server wrote a time that is not RFC 3339: " + text, null, false);
        }
    }
}
