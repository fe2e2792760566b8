package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The server answered error `conflict`: an idempotency key reused for another grant, a purchase another owner keeps, or an `extend` of a revoked or lifetime membership. Nothing was carried out.
 */
public final class ConflictException extends ServerException {
    private static final long serialVersionUID = 1L;

    ConflictException(String message, String op, ObjectNode answer) {
        super("conflict", message, op, answer);
    }
}
