package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The server answered error `bad_request`: valid JSON but not a valid request (a field missing, of the wrong type, out of range, or not taken by the operation). Nothing was carried out: fix the request.
 */
public final class BadRequestException extends ServerException {
    private static final long serialVersionUID = 1L;

    BadRequestException(String message, String op, ObjectNode answer) {
        super("bad_request", message, op, answer);
    }
}
