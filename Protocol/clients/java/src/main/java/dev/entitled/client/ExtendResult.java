package dev.entitled.client;

import java.time.Instant;

/**
 * The answer of {@code extend}.
 *
 * @param seq the change number
 * @param membership the membership as extended (its {@code expiresAt} is the new expiry)
 * @param previousExpiresAt its expiry before
 */
public record ExtendResult(long seq, Membership membership, Instant previousExpiresAt) {
}
