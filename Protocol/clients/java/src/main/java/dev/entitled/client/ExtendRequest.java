package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.Objects;

/**
 * {@code extend}: moves a membership's expiry later by hand (an admin operation). An extension
 * {@link #by(String, String) by a duration} sent twice extends twice, so it is not safe to repeat after a
 * {@link EntitledException#mayHaveBeenApplied()} error; one {@link #until(String, Instant) until a moment}
 * is (a repeat is refused as not later).
 */
public final class ExtendRequest extends Request<ExtendResult, ExtendRequest> {
    private final String membership;
    private final String duration;
    private final Instant expiresAt;
    private String reason;

    private ExtendRequest(String membership, String duration, Instant expiresAt) {
        this.membership = Objects.requireNonNull(membership, "membership");
        this.duration = duration;
        this.expiresAt = expiresAt;
    }

    /** That much later than the current expiry (or than now, once expired): {@code "1mo"}, {@code "30d"}. */
    public static ExtendRequest by(String membership, String duration) {
        return new ExtendRequest(membership, Objects.requireNonNull(duration, "duration"), null);
    }

    /** Until this moment, later than both the current expiry and the server's clock. */
    public static ExtendRequest until(String membership, Instant expiresAt) {
        return new ExtendRequest(membership, null, Objects.requireNonNull(expiresAt, "expiresAt"));
    }

    /** The audit trail's reason, such as a ticket number. */
    public ExtendRequest reason(String reason) {
        this.reason = reason;
        return this;
    }

    @Override
    Operation operation() {
        return Operation.EXTEND;
    }

    @Override
    void writeFields(JsonLine line) {
        line.field("membership", membership).field("duration", duration).field("expiresAt", expiresAt).field("reason", reason);
    }

    @Override
    ExtendResult decode(ObjectNode answer) {
        return Decode.extend(answer);
    }
}
