package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The server answered error `stale`: a read with `minSeq` asked for a change the server had not applied within its `--min-seq-wait`. Retry, on the same node or another (the client retries once on another node when it has several).
 */
public final class StaleException extends ServerException {
    private static final long serialVersionUID = 1L;

    StaleException(String message, String op, ObjectNode answer) {
        super("stale", message, op, answer);
    }
}
