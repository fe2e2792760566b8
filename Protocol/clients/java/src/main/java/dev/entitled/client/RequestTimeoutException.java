package dev.entitled.client;

import java.time.Duration;

/**
 * No answer came within the request's timeout (its whole budget: waiting for a connection, retries and the
 * answer). The connection stays usable: a late answer is read and dropped. {@link #mayHaveBeenApplied()}
 * is true when the request had been written.
 */
public final class RequestTimeoutException extends EntitledException {
    private static final long serialVersionUID = 1L;

    public RequestTimeoutException(String op, Duration timeout, boolean mayHaveBeenApplied) {
        super("no answer to " + op + " within " + timeout.toMillis() + " ms"
                + (mayHaveBeenApplied ? " (it was sent: it may have been carried out)" : " (it was not sent)"),
                op, mayHaveBeenApplied, null);
    }
}
