package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Objects;

/** {@code undefine}: removes an entitlement from the catalog (an admin operation). */
public final class UndefineRequest extends Request<CatalogChange, UndefineRequest> {
    private final String entitlement;
    private String reason;

    private UndefineRequest(String entitlement) {
        this.entitlement = Objects.requireNonNull(entitlement, "entitlement");
    }

    public static UndefineRequest of(String entitlement) {
        return new UndefineRequest(entitlement);
    }

    public UndefineRequest reason(String reason) {
        this.reason = reason;
        return this;
    }

    @Override
    Operation operation() {
        return Operation.UNDEFINE;
    }

    @Override
    void writeFields(JsonLine line) {
        line.field("entitlement", entitlement).field("reason", reason);
    }

    @Override
    CatalogChange decode(ObjectNode answer) {
        return Decode.catalogChange(answer);
    }
}
