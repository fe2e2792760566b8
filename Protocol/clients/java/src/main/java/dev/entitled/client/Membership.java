package dev.entitled.client;

import java.time.Instant;
import java.util.List;

/**
 * A membership: one purchase or grant of one product (PROTOCOL.md §4 The membership object). Optional
 * fields are {@code null} when the server left them out. {@code status} may hold a value a later protocol
 * version adds: judge access by {@link #isActive()}.
 *
 * @param id the membership id ({@code mem_...})
 * @param productId the product
 * @param planId the plan, or {@code null}
 * @param user the owner, or {@code null} (a guest purchase)
 * @param device the device it was bought on, or {@code null}
 * @param status {@code active}, {@code trialing}, {@code past_due}, {@code canceled}, {@code paused},
 *     {@code expired}, {@code revoked}, or a later value
 * @param isActive whether the status grants access
 * @param createdAt when it began
 * @param expiresAt when the period ends; {@code null} for lifetime
 * @param source where it came from ({@code app_store}, {@code manual}, ...)
 * @param revokedAt when it was revoked, or {@code null}
 * @param reason the revocation's reason, or {@code null}
 * @param willRenew whether it renews at the end of the period
 * @param periodType {@code normal}, {@code trial}, {@code intro} or {@code promotional}
 * @param renewState {@code will_renew}, {@code non_renewable}, {@code billing_issue} or {@code canceled}
 * @param renewsCount renewals applied (plus those an import reported)
 * @param environment {@code production} or {@code sandbox}
 * @param ownership {@code purchased} or {@code family_shared}
 * @param grantType {@code purchase}, {@code family_sharing}, {@code offer_code} or {@code manual}
 * @param unsubscribeDetectedAt the cancellation in effect, or {@code null}
 * @param billingIssueDetectedAt the billing issue in effect, or {@code null}
 * @param gracePeriodExpiresAt the end of the billing issue's grace period, or {@code null}
 * @param pausedAt the pause in effect, or {@code null}
 * @param transactions the store's transactions, oldest first (empty when none)
 */
public record Membership(String id, String productId, String planId, String user, String device, String status,
                         boolean isActive, Instant createdAt, Instant expiresAt, String source, Instant revokedAt,
                         String reason, boolean willRenew, String periodType, String renewState, long renewsCount,
                         String environment, String ownership, String grantType, Instant unsubscribeDetectedAt,
                         Instant billingIssueDetectedAt, Instant gracePeriodExpiresAt, Instant pausedAt,
                         List<Transaction> transactions) {
}
