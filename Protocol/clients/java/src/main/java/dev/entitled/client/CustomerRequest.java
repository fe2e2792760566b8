package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Objects;

/** {@code customer}: what a subject has, in the shape of the SDKs' CustomerInfo. */
public final class CustomerRequest extends Request<Customer, CustomerRequest> {
    private final String user;
    private final String device;
    private Long minSeq;

    private CustomerRequest(String user, String device) {
        this.user = user;
        this.device = device;
    }

    public static CustomerRequest user(String user) {
        return new CustomerRequest(Objects.requireNonNull(user, "user"), null);
    }

    public static CustomerRequest device(String device) {
        return new CustomerRequest(null, Objects.requireNonNull(device, "device"));
    }

    public static CustomerRequest userAndDevice(String user, String device) {
        return new CustomerRequest(Objects.requireNonNull(user, "user"), Objects.requireNonNull(device, "device"));
    }

    /** Answer once the server has applied this change, else {@link StaleException}. */
    public CustomerRequest minSeq(long minSeq) {
        this.minSeq = minSeq;
        return this;
    }

    @Override
    Operation operation() {
        return Operation.CUSTOMER;
    }

    @Override
    void writeFields(JsonLine line) {
        line.field("user", user).field("device", device).field("minSeq", minSeq);
    }

    @Override
    Customer decode(ObjectNode answer) {
        return Decode.customer(answer);
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
