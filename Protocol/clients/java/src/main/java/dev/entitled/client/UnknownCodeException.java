package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The server answered an error code this client does not know (a newer server's). {@link #code()} names
 * it. It is taken as "not applied" ({@link #mayHaveBeenApplied()} is false), as every code but
 * {@code outcome_unknown} and {@code internal} is.
 */
public final class UnknownCodeException extends ServerException {
    private static final long serialVersionUID = 1L;

    UnknownCodeException(String code, String message, String op, ObjectNode answer) {
        super(code, message, op, answer);
    }
}
