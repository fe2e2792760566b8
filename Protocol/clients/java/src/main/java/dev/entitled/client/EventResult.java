package dev.entitled.client;

/**
 * The answer of {@code event}. An ignored event is not an error.
 *
 * @param seq the change number (the newest change seen when ignored)
 * @param membership the membership after the event, or unchanged when ignored
 * @param applied whether the event changed the membership
 * @param ignoredBecause when not applied: {@code duplicate}, {@code out_of_order} or {@code revoked}
 */
public record EventResult(long seq, Membership membership, boolean applied, String ignoredBecause) {
}
