package dev.entitled.client;

/**
 * The answer of {@code revoke}: the membership as revoked (a repeated revoke changes nothing and answers it
 * as it is).
 *
 * @param seq the change number
 * @param membership the membership
 */
public record MembershipResult(long seq, Membership membership) {
}
