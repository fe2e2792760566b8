package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The server answered error `not_found`: the membership or entitlement the request names does not exist. Nothing was carried out.
 */
public final class NotFoundException extends ServerException {
    private static final long serialVersionUID = 1L;

    NotFoundException(String message, String op, ObjectNode answer) {
        super("not_found", message, op, answer);
    }
}
