package dev.entitled.client;

/**
 * The answer of {@code erase}.
 *
 * @param seq the change number
 * @param memberships how many memberships it removed
 * @param historyEntries how many audit entries went with them
 */
public record EraseResult(long seq, long memberships, long historyEntries) {
}
