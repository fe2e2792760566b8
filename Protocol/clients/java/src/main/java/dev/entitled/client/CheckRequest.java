package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.Objects;

/**
 * {@code check}: whether a subject has access, to a product, an entitlement, or anything.
 *
 * <pre>{@code
 * client.check(CheckRequest.user("alice").entitlement("pro"))
 * }</pre>
 */
public final class CheckRequest extends Request<CheckResult, CheckRequest> {
    private final String user;
    private final String device;
    private String product;
    private String entitlement;
    private Instant at;
    private Long minSeq;

    private CheckRequest(String user, String device) {
        this.user = user;
        this.device = device;
    }

    /** A check of what the user owns, on any device. */
    public static CheckRequest user(String user) {
        return new CheckRequest(Objects.requireNonNull(user, "user"), null);
    }

    /** A check of the device's guest purchases (what a logged-out app sees). */
    public static CheckRequest device(String device) {
        return new CheckRequest(null, Objects.requireNonNull(device, "device"));
    }

    /** A check of the user's memberships and the device's unclaimed guest purchases together. */
    public static CheckRequest userAndDevice(String user, String device) {
        return new CheckRequest(Objects.requireNonNull(user, "user"), Objects.requireNonNull(device, "device"));
    }

    /** Count only this product (not with {@link #entitlement(String)}). */
    public CheckRequest product(String product) {
        this.product = product;
        return this;
    }

    /** Count only the products of this entitlement ({@link NotFoundException} when the catalog lacks it). */
    public CheckRequest entitlement(String entitlement) {
        this.entitlement = entitlement;
        return this;
    }

    /** Answer for this moment instead of now; before now, the memberships as they were then. */
    public CheckRequest at(Instant at) {
        this.at = at;
        return this;
    }

    /** Answer once the server has applied this change (a write's {@code seq}), else {@link StaleException}. */
    public CheckRequest minSeq(long minSeq) {
        this.minSeq = minSeq;
        return this;
    }

    @Override
    Operation operation() {
        return Operation.CHECK;
    }

    @Override
    void writeFields(JsonLine line) {
        line.field("user", user).field("device", device).field("product", product).field("entitlement", entitlement)
                .field("at", at).field("minSeq", minSeq);
    }

    @Override
    CheckResult decode(ObjectNode answer) {
        return Decode.check(answer);
    }

    @Override
    CheckResult decodeFlat(FlatLine answer) {
        String expiresAt = answer.text("expiresAt");
        return new CheckResult(answer.isTrue("active"), expiresAt == null ? null : Times.parse(expiresAt));
    }

    @Override
    boolean decodesFlat() {
        return true;
    }

    @Override
    Long minSeq() {
        return minSeq;
    }

    @Override
    boolean takesMinSeq() {
        return true;
    }
}
