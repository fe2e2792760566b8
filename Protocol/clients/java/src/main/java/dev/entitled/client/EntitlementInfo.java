package dev.entitled.client;

import java.time.Instant;

/**
 * One entitlement of a {@link Customer}, described by its representative membership.
 *
 * @param isActive whether the representative grants access now
 * @param productId its product
 * @param membership its membership id
 * @param expiresAt its access end; {@code null} for lifetime
 * @param willRenew its {@code willRenew}
 * @param periodType its {@code periodType}
 * @param store its source
 * @param latestPurchaseDate the time of its newest transaction, or its creation
 * @param originalPurchaseDate the time of its first transaction, or its creation
 * @param billingIssueDetectedAt its billing issue, or {@code null}
 * @param unsubscribeDetectedAt its cancellation, or {@code null}
 */
public record EntitlementInfo(boolean isActive, String productId, String membership, Instant expiresAt,
                              boolean willRenew, String periodType, String store, Instant latestPurchaseDate,
                              Instant originalPurchaseDate, Instant billingIssueDetectedAt,
                              Instant unsubscribeDetectedAt) {
}
