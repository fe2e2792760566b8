package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The server answered error `bad_json`: the line was not valid JSON. Nothing was carried out. The typed API never sends such a line; the raw API may.
 */
public final class BadJsonException extends ServerException {
    private static final long serialVersionUID = 1L;

    BadJsonException(String message, String op, ObjectNode answer) {
        super("bad_json", message, op, answer);
    }
}
