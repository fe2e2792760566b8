package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Objects;

/** {@code define}: sets the products that unlock an entitlement, replacing any it had. */
public final class DefineRequest extends Request<CatalogChange, DefineRequest> {
    private final String entitlement;
    private final List<String> products;
    private String reason;

    private DefineRequest(String entitlement, List<String> products) {
        this.entitlement = Objects.requireNonNull(entitlement, "entitlement");
        this.products = List.copyOf(products);
    }

    /** The entitlement and its products (1 to 1000). */
    public static DefineRequest of(String entitlement, List<String> products) {
        return new DefineRequest(entitlement, products);
    }

    /** The entitlement and its products (1 to 1000). */
    public static DefineRequest of(String entitlement, String... products) {
        return new DefineRequest(entitlement, List.of(products));
    }

    public DefineRequest reason(String reason) {
        this.reason = reason;
        return this;
    }

    @Override
    Operation operation() {
        return Operation.DEFINE;
    }

    @Override
    void writeFields(JsonLine line) {
        line.field("entitlement", entitlement).field("reason", reason).field("products", products);
    }

    @Override
    CatalogChange decode(ObjectNode answer) {
        return Decode.catalogChange(answer);
    }
}
