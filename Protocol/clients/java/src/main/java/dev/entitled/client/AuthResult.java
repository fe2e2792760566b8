package dev.entitled.client;

/**
 * The answer of {@code auth}.
 *
 * @param name the token's name (the audit trail's actor)
 * @param role {@code check}, {@code writer} or {@code admin}
 * @param authRequired whether the server requires authentication
 */
public record AuthResult(String name, String role, boolean authRequired) {
}
