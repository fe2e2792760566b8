package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.function.Function;

/** An operation without fields: {@code ping}, {@code hello}, {@code catalog}, {@code snapshot}, ... */
final class SimpleRequest<T> extends Request<T, SimpleRequest<T>> {
    private final Operation operation;
    private final Function<ObjectNode, T> decoder;

    SimpleRequest(Operation operation, Function<ObjectNode, T> decoder) {
        this.operation = operation;
        this.decoder = decoder;
    }

    @Override
    Operation operation() {
        return operation;
    }

    @Override
    void writeFields(JsonLine line) {
        // No fields besides op and id.
    }

    @Override
    T decode(ObjectNode answer) {
        return decoder.apply(answer);
    }
}
