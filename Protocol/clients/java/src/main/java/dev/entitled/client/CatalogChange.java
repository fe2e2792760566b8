package dev.entitled.client;

import java.util.List;

/**
 * The answer of {@code define} (the products as stored: sorted, without duplicates) and of
 * {@code undefine} (the products the entitlement had).
 *
 * @param seq the change number
 * @param entitlement the entitlement
 * @param products its products
 */
public record CatalogChange(long seq, String entitlement, List<String> products) {
}
