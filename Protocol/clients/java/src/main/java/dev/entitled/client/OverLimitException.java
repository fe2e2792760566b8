package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The server answered error `over_limit`: the read would go through more than 10,000 memberships of one subject (`customer`, a subject's `history`, `check`/`memberships` with an earlier `at`), or 16 connections already watch every subject. Not worth retrying as it is: list page by page and check without `at`.
 */
public final class OverLimitException extends ServerException {
    private static final long serialVersionUID = 1L;

    OverLimitException(String message, String op, ObjectNode answer) {
        super("over_limit", message, op, answer);
    }
}
