package dev.entitled.client;

import java.time.Instant;

/**
 * The answer of {@code check}.
 *
 * @param active whether a matching membership grants access at the moment
 * @param expiresAt when active: when the longest-lasting matching membership stops granting access by
 *     itself, or {@code null} when one never stops (see {@link #isLifetime()}); {@code null} when not active
 */
public record CheckResult(boolean active, Instant expiresAt) {
    /** Whether access is active and never stops by itself. */
    public boolean isLifetime() {
        return active && expiresAt == null;
    }
}
