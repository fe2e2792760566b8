package dev.entitled.client;

/**
 * The answer of {@code grant}.
 *
 * @param seq the change number of the grant (see {@link EntitledClient#lastSeq()})
 * @param membership the new membership, or for a replay the earlier grant's as it is now
 * @param idempotentReplay true when nothing was created: the idempotency key (or the purchase's
 *     {@code originalTransactionId}) named an earlier matching grant
 * @param transferredFromUser for a transfer ({@code restore} on another account): the user it was taken from
 * @param transferredFromDevice for a transfer of a guest purchase: the device it was taken from
 */
public record GrantResult(long seq, Membership membership, boolean idempotentReplay, String transferredFromUser,
                          String transferredFromDevice) {
}
