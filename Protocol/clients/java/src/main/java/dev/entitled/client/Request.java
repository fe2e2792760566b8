package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.Objects;

/**
 * A typed request: one operation with the fields it takes, and the type of its answer. Each operation has
 * its own class ({@link CheckRequest}, {@link GrantRequest}, ...), made with static factories for what
 * it requires and fluent setters for the rest, so a field the operation does not take cannot be given.
 * Requests are mutable builders: do not change one while it is in flight.
 *
 * @param <T> the answer's type
 * @param <R> the request's own type, for the fluent setters
 */
public abstract class Request<T, R extends Request<T, R>> {
    private Duration timeout;

    Request() {
    }

    /**
     * This request's whole budget (waiting for a connection, retries and the answer) instead of the
     * client's {@link ClientOptions.Builder#requestTimeout(Duration)}.
     */
    public R timeout(Duration timeout) {
        this.timeout = Objects.requireNonNull(timeout, "timeout");
        return self();
    }

    /** The timeout this request gives, or {@code null} for the client's. */
    public Duration timeout() {
        return timeout;
    }

    @SuppressWarnings("unchecked")
    final R self() {
        return (R) this;
    }

    abstract Operation operation();

    /** Writes the fields it has (null ones are left out: the protocol treats null as absent). */
    abstract void writeFields(JsonLine line);

    abstract T decode(ObjectNode answer);

    /**
     * The answer decoded from a successful {@link FlatLine} (scalar values only), or {@code null} when this
     * request's answers need the parsed tree. Only the hot path ({@code check}) does it.
     */
    T decodeFlat(FlatLine answer) {
        return null;
    }

    /** Whether {@link #decodeFlat} can decode a successful answer. */
    boolean decodesFlat() {
        return false;
    }

    /**
     * The request's own {@code minSeq}, for the reads that take one ({@code check}, {@code memberships},
     * {@code customer}); the client adds its {@code lastSeq} when it has {@code readYourWrites} and the
     * request gives none.
     */
    Long minSeq() {
        return null;
    }

    /** Whether the operation takes {@code minSeq}. */
    boolean takesMinSeq() {
        return false;
    }
}
