package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The server answered error `unavailable`: the server takes no writes now (its disk is full or failed, or on a cluster node the write was certainly not committed). The write was not carried out: a retry cannot make a duplicate.
 */
public final class UnavailableException extends ServerException {
    private static final long serialVersionUID = 1L;

    UnavailableException(String message, String op, ObjectNode answer) {
        super("unavailable", message, op, answer);
    }
}
