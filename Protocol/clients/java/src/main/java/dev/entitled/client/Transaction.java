package dev.entitled.client;

import java.time.Instant;

/**
 * A store transaction of a membership (PROTOCOL.md §4 The membership object).
 *
 * @param id the store's transaction id
 * @param originalTransactionId the transaction that started the subscription
 * @param type {@code purchase}, {@code trial_started}, {@code renewal} or {@code product_change}
 * @param time the grant's {@code createdAt} or the event's {@code eventTime}
 * @param expiresAt the membership's expiry right after it; {@code null} for lifetime
 * @param revokedAt when a refund marked it refunded, or {@code null}
 */
public record Transaction(String id, String originalTransactionId, String type, Instant time, Instant expiresAt,
                          Instant revokedAt) {
}
