package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The server answered error `too_large`: the request line was longer than the server's limit; the server closes the connection after it, and the requests behind it on that connection were not read. Nothing was carried out.
 */
public final class TooLargeException extends ServerException {
    private static final long serialVersionUID = 1L;

    TooLargeException(String message, String op, ObjectNode answer) {
        super("too_large", message, op, answer);
    }
}
