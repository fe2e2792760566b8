package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Objects;

/** {@code revoke}: takes a membership back. Final, and safe to repeat (a repeat changes nothing). */
public final class RevokeRequest extends Request<MembershipResult, RevokeRequest> {
    private final String membership;
    private String reason;

    private RevokeRequest(String membership) {
        this.membership = Objects.requireNonNull(membership, "membership");
    }

    /** Revokes this membership id. */
    public static RevokeRequest membership(String membership) {
        return new RevokeRequest(membership);
    }

    /** Stored in the membership (default {@code manual}) and in the audit trail. */
    public RevokeRequest reason(String reason) {
        this.reason = reason;
        return this;
    }

    @Override
    Operation operation() {
        return Operation.REVOKE;
    }

    @Override
    void writeFields(JsonLine line) {
        line.field("membership", membership).field("reason", reason);
    }

    @Override
    MembershipResult decode(ObjectNode answer) {
        return Decode.revoke(answer);
    }
}
