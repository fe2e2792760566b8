package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The server answered error {@code loading}: it is starting and still loading its data. Nothing was carried
 * out. The client waits it out by itself (reconnecting and sending again for at most
 * {@link ClientOptions.Builder#loadingWait(java.time.Duration)}) and raises this only when that time is up,
 * or at once with a {@code loadingWait} of zero.
 */
public final class LoadingException extends ServerException {
    private static final long serialVersionUID = 1L;

    LoadingException(String message, String op, ObjectNode answer) {
        super("loading", message, op, answer);
    }

    /** The memberships loaded so far (0 while nothing is known). */
    public long loaded() {
        return answer() == null ? 0 : answer().path("error").path("loaded").asLong(0);
    }

    /** The memberships known to come (grows as the log is read; 0 while nothing is known). */
    public long total() {
        return answer() == null ? 0 : answer().path("error").path("total").asLong(0);
    }
}
