package dev.entitled.client;

/**
 * The base of every error this client raises: an error answer of the server ({@link ServerException} and
 * its one subclass per protocol error code) or a failure on the client's side (cannot connect, connection
 * closed, timeout, protocol violation, no node available).
 *
 * <p>Every error says what it means for a write, as PROTOCOL.md "What an answer means" defines it:
 * {@link #mayHaveBeenApplied()} is {@code true} when the request may have been carried out (the server
 * answered {@code outcome_unknown} or {@code internal}, or the connection was lost, the request timed out
 * or was cancelled after its bytes were written), and {@code false} when it certainly was not (every other
 * error code, and any failure before the request was written). A write that may have been applied is
 * never sent again by this client: retry it yourself with the same idempotency key ({@code grant}'s
 * {@code idempotencyKey}, {@code event}'s {@code eventId}), or read to find out.
 */
public class EntitledException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String op;
    private final boolean mayHaveBeenApplied;

    /**
     * @param message the sentence for a person
     * @param op the operation of the request that failed, or {@code null} when the error is not one request's
     * @param mayHaveBeenApplied whether the request may have been carried out
     * @param cause the underlying error, or {@code null}
     */
    public EntitledException(String message, String op, boolean mayHaveBeenApplied, Throwable cause) {
        super(message, cause);
        this.op = op;
        this.mayHaveBeenApplied = mayHaveBeenApplied;
    }

    /** The operation ({@code "grant"}, {@code "check"}, ...) of the failed request, or {@code null}. */
    public String op() {
        return op;
    }

    /**
     * Whether the request may have been carried out. {@code false} means it certainly was not: retrying
     * cannot make a duplicate. {@code true} means it may have been: retry a write only with the same
     * idempotency key, or read first. Always {@code false} for a request that was never written.
     */
    public boolean mayHaveBeenApplied() {
        return mayHaveBeenApplied;
    }
}
