package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The server answered error `busy`: the server is at its connection limit and closed the connection without reading it. Nothing was carried out: retry later.
 */
public final class BusyException extends ServerException {
    private static final long serialVersionUID = 1L;

    BusyException(String message, String op, ObjectNode answer) {
        super("busy", message, op, answer);
    }
}
