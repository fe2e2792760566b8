package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The server answered error `unknown_op`: the server does not know the operation (an older server). Nothing was carried out.
 */
public final class UnknownOpException extends ServerException {
    private static final long serialVersionUID = 1L;

    UnknownOpException(String message, String op, ObjectNode answer) {
        super("unknown_op", message, op, answer);
    }
}
