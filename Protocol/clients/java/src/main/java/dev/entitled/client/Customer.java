package dev.entitled.client;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The answer of {@code customer}: what the subject has, in the shape of the SDKs' CustomerInfo.
 *
 * @param entitlements each catalog entitlement a held membership's product unlocks, by name (sorted)
 * @param activeProducts the products that grant access now, sorted
 * @param allPurchasedProductIds the products of every held membership, sorted
 * @param latestExpirationDate the latest expiry of the held memberships, or {@code null}
 * @param firstSeen the creation of the subject's oldest membership, or {@code null}
 * @param requestDate the server's clock: the moment the view describes
 */
public record Customer(Map<String, EntitlementInfo> entitlements, List<String> activeProducts,
                       List<String> allPurchasedProductIds, Instant latestExpirationDate, Instant firstSeen,
                       Instant requestDate) {
}
