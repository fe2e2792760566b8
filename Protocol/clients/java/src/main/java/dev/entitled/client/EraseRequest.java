package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Objects;

/**
 * {@code erase}: erases a person, as the GDPR's right to be forgotten asks (an admin operation). The
 * reason is kept: name a ticket, not the person.
 */
public final class EraseRequest extends Request<EraseResult, EraseRequest> {
    private final String user;
    private final String device;
    private String reason;

    private EraseRequest(String user, String device) {
        this.user = user;
        this.device = device;
    }

    public static EraseRequest user(String user) {
        return new EraseRequest(Objects.requireNonNull(user, "user"), null);
    }

    public static EraseRequest device(String device) {
        return new EraseRequest(null, Objects.requireNonNull(device, "device"));
    }

    public static EraseRequest userAndDevice(String user, String device) {
        return new EraseRequest(Objects.requireNonNull(user, "user"), Objects.requireNonNull(device, "device"));
    }

    public EraseRequest reason(String reason) {
        this.reason = reason;
        return this;
    }

    @Override
    Operation operation() {
        return Operation.ERASE;
    }

    @Override
    void writeFields(JsonLine line) {
        line.field("user", user).field("device", device).field("reason", reason);
    }

    @Override
    EraseResult decode(ObjectNode answer) {
        return Decode.erase(answer);
    }
}
