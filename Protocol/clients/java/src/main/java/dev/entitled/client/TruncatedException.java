package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The server answered error {@code truncated}: a {@code changes} read asked for the changes after a number
 * the feed no longer holds. Its retention let them go (the message says what it holds and how long it keeps
 * changes), or a failover of a cluster's database lost changes up to that number, so what was read up to it
 * may include changes that are gone. Nothing was carried out (it is a read).
 *
 * <p>Not worth retrying: the changes are gone for good, and every later read from the same number is
 * answered so too. Take a full copy ({@link EntitledClient#openExport(ExportRequest)}) and follow the feed
 * after the change it is as of ({@link EntitledExport#seq()}). An {@link EntitledFeed} ends with this error.
 */
public final class TruncatedException extends ServerException {
    private static final long serialVersionUID = 1L;

    TruncatedException(String message, String op, ObjectNode answer) {
        super("truncated", message, op, answer);
    }
}
