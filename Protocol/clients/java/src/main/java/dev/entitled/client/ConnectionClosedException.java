package dev.entitled.client;

/**
 * The connection carrying the request closed (the server stopped, the network failed, or the client was
 * closed) before its answer came. {@link #mayHaveBeenApplied()} is true when the request had been written:
 * a write then may or may not have been carried out, and the client never sends it again by itself.
 */
public final class ConnectionClosedException extends EntitledException {
    private static final long serialVersionUID = 1L;

    public ConnectionClosedException(String message, String op, boolean mayHaveBeenApplied, Throwable cause) {
        super(message, op, mayHaveBeenApplied, cause);
    }
}
