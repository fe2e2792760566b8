package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Objects;

/**
 * {@code claim}: gives every unclaimed guest membership of a device to a user (the SDKs' {@code logIn}).
 * Safe to repeat: a repeat moves nothing.
 */
public final class ClaimRequest extends Request<ClaimResult, ClaimRequest> {
    private final String device;
    private final String user;
    private String reason;

    private ClaimRequest(String device, String user) {
        this.device = Objects.requireNonNull(device, "device");
        this.user = Objects.requireNonNull(user, "user");
    }

    /** The device's guest purchases go to the user. */
    public static ClaimRequest of(String device, String user) {
        return new ClaimRequest(device, user);
    }

    public ClaimRequest reason(String reason) {
        this.reason = reason;
        return this;
    }

    @Override
    Operation operation() {
        return Operation.CLAIM;
    }

    @Override
    void writeFields(JsonLine line) {
        line.field("user", user).field("device", device).field("reason", reason);
    }

    @Override
    ClaimResult decode(ObjectNode answer) {
        return Decode.claim(answer);
    }
}
