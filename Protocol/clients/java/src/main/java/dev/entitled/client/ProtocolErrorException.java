package dev.entitled.client;

/**
 * The server sent something the protocol does not allow (a line that is not a JSON object, an answer whose
 * {@code id} is not the request's, an answer nobody asked for). The client closes the connection and fails
 * every request in flight on it with this error; {@link #mayHaveBeenApplied()} is true for those that had
 * been written.
 */
public final class ProtocolErrorException extends EntitledException {
    private static final long serialVersionUID = 1L;

    public ProtocolErrorException(String message, String op, boolean mayHaveBeenApplied) {
        super(message, op, mayHaveBeenApplied, null);
    }
}
