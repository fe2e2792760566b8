package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The server answered error `unauthorized`: the connection has not authenticated (give {@link ClientOptions.Builder#token(String)}) or the token is unknown. Nothing was carried out.
 */
public final class UnauthorizedException extends ServerException {
    private static final long serialVersionUID = 1L;

    UnauthorizedException(String message, String op, ObjectNode answer) {
        super("unauthorized", message, op, answer);
    }
}
