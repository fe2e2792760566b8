package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The server answered error `outcome_unknown`: the write <em>may or may not</em> have been made and the server cannot tell yet ({@link #mayHaveBeenApplied()} is true). Retry with the same idempotency key (a replayed grant answers `idempotentReplay`), or read to find out.
 */
public final class OutcomeUnknownException extends ServerException {
    private static final long serialVersionUID = 1L;

    OutcomeUnknownException(String message, String op, ObjectNode answer) {
        super("outcome_unknown", message, op, answer);
    }
}
