package dev.entitled.client;

/**
 * The answer of {@code claim}.
 *
 * @param seq the change number (the newest change seen when it moved nothing)
 * @param claimed how many memberships moved to the user; 0 for a repeated claim
 */
public record ClaimResult(long seq, long claimed) {
}
