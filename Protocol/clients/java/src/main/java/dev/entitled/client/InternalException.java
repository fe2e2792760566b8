package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The server answered error `internal`: the server failed and the request <em>may or may not</em> have been carried out ({@link #mayHaveBeenApplied()} is true): retry a write with the same idempotency key, or read to find out.
 */
public final class InternalException extends ServerException {
    private static final long serialVersionUID = 1L;

    InternalException(String message, String op, ObjectNode answer) {
        super("internal", message, op, answer);
    }
}
