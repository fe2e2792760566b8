package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The server answered error `forbidden`: the token's role may not run this operation. Nothing was carried out.
 */
public final class ForbiddenException extends ServerException {
    private static final long serialVersionUID = 1L;

    ForbiddenException(String message, String op, ObjectNode answer) {
        super("forbidden", message, op, answer);
    }
}
