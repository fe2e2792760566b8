package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * {@code grant}: creates a membership of a product. Every grant creates one, unless its
 * {@link #idempotencyKey(String)} names an earlier matching grant (then nothing is created and the answer
 * says {@code idempotentReplay}). Give a grant an idempotency key whenever it may be sent twice: after a
 * {@link EntitledException#mayHaveBeenApplied()} error, sending it again with the same key is safe.
 *
 * <pre>{@code
 * GrantRequest.device("iphone-7f3a", "prod_pro_monthly").duration("30d").source(Source.APP_STORE)
 * }</pre>
 */
public final class GrantRequest extends Request<GrantResult, GrantRequest> {
    private final String user;
    private final String device;
    private final String product;
    private String plan;
    private Source source;
    private Instant expiresAt;
    private String duration;
    private String reason;
    private String transactionId;
    private String originalTransactionId;
    private Boolean willRenew;
    private PeriodType periodType;
    private Environment environment;
    private Ownership ownership;
    private GrantType grantType;
    private String idempotencyKey;
    private Instant purchasedAt;
    private Long renewsCount;

    private GrantRequest(String user, String device, String product) {
        this.user = user;
        this.device = device;
        this.product = Objects.requireNonNull(product, "product");
    }

    /** A grant to a user. */
    public static GrantRequest user(String user, String product) {
        return new GrantRequest(Objects.requireNonNull(user, "user"), null, product);
    }

    /** A guest purchase on a device, until a {@code claim} gives it to a user. */
    public static GrantRequest device(String device, String product) {
        return new GrantRequest(null, Objects.requireNonNull(device, "device"), product);
    }

    /** A purchase made on a device while logged in: the user owns it from the start. */
    public static GrantRequest userAndDevice(String user, String device, String product) {
        return new GrantRequest(Objects.requireNonNull(user, "user"), Objects.requireNonNull(device, "device"), product);
    }

    public GrantRequest plan(String plan) {
        this.plan = plan;
        return this;
    }

    /** Default {@link Source#MANUAL}. */
    public GrantRequest source(Source source) {
        this.source = source;
        return this;
    }

    /** When access ends (not with a duration); none: lifetime. */
    public GrantRequest expiresAt(Instant expiresAt) {
        this.expiresAt = expiresAt;
        return this;
    }

    /** Access ends this long after creation: a number and {@code s}, {@code min}, {@code h}, {@code d}, {@code w}, {@code mo} or {@code y} ({@code "30d"}, {@code "1mo"}). */
    public GrantRequest duration(String duration) {
        this.duration = duration;
        return this;
    }

    /** Access ends this long after creation, in whole seconds. */
    public GrantRequest duration(Duration duration) {
        this.duration = Durations.seconds(duration);
        return this;
    }

    /** The audit trail's reason. */
    public GrantRequest reason(String reason) {
        this.reason = reason;
        return this;
    }

    public GrantRequest transactionId(String transactionId) {
        this.transactionId = transactionId;
        return this;
    }

    /** The subscription's first transaction, when it is not {@link #transactionId(String)}. */
    public GrantRequest originalTransactionId(String originalTransactionId) {
        this.originalTransactionId = originalTransactionId;
        return this;
    }

    public GrantRequest willRenew(boolean willRenew) {
        this.willRenew = willRenew;
        return this;
    }

    public GrantRequest periodType(PeriodType periodType) {
        this.periodType = periodType;
        return this;
    }

    public GrantRequest environment(Environment environment) {
        this.environment = environment;
        return this;
    }

    public GrantRequest ownership(Ownership ownership) {
        this.ownership = ownership;
        return this;
    }

    public GrantRequest grantType(GrantType grantType) {
        this.grantType = grantType;
        return this;
    }

    /** Makes a retry safe: a grant with a key an earlier matching grant used creates nothing. */
    public GrantRequest idempotencyKey(String idempotencyKey) {
        this.idempotencyKey = idempotencyKey;
        return this;
    }

    /** For a purchase imported after the fact: when the store sold it. */
    public GrantRequest purchasedAt(Instant purchasedAt) {
        this.purchasedAt = purchasedAt;
        return this;
    }

    /** For an imported purchase: the renewals the store made before (0 to 100000). */
    public GrantRequest renewsCount(long renewsCount) {
        this.renewsCount = renewsCount;
        return this;
    }

    @Override
    Operation operation() {
        return Operation.GRANT;
    }

    @Override
    void writeFields(JsonLine line) {
        line.field("user", user).field("device", device).field("product", product).field("plan", plan)
                .field("source", source != null ? source.wireName() : null).field("expiresAt", expiresAt)
                .field("duration", duration).field("reason", reason).field("transactionId", transactionId)
                .field("originalTransactionId", originalTransactionId).field("willRenew", willRenew)
                .field("periodType", periodType != null ? periodType.wireName() : null)
                .field("environment", environment != null ? environment.wireName() : null)
                .field("ownership", ownership != null ? ownership.wireName() : null)
                .field("grantType", grantType != null ? grantType.wireName() : null)
                .field("idempotencyKey", idempotencyKey).field("purchasedAt", purchasedAt)
                .field("renewsCount", renewsCount);
    }

    @Override
    GrantResult decode(ObjectNode answer) {
        return Decode.grant(answer);
    }
}
