package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;

/**
 * The answer of {@code stats}: the server's counters since it started. The few fields every server has are
 * typed; the rest ({@code requests}, {@code errors}, {@code latencyMicros}, {@code store},
 * {@code persistence} or {@code replication}) are in {@link #raw()}, as the server wrote them.
 *
 * @param server the server's name and version
 * @param startedAt when it started
 * @param uptimeSeconds seconds since then
 * @param raw the whole answer
 */
public record Stats(String server, Instant startedAt, long uptimeSeconds, ObjectNode raw) {
}
