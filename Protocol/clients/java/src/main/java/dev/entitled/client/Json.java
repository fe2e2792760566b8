package dev.entitled.client;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** The Jackson mapper every client shares, and the readers of answer fields. */
final class Json {
    /** Thread-safe once configured. Big decimals keep a number's digits exactly as the server echoed them. */
    static final ObjectMapper MAPPER = new ObjectMapper()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    private Json() {
    }

    /** One line the server wrote, without its {@code \n}. */
    static JsonNode parse(byte[] bytes, int offset, int length) throws IOException {
        return MAPPER.readTree(bytes, offset, length);
    }

    /** Compact JSON text of a node (the raw API's requests). */
    static String write(JsonNode node) {
        try {
            return MAPPER.writeValueAsString(node);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot write the request as JSON: " + e.getMessage(), e);
        }
    }

    static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    /** A string field, or {@code null} when absent or null. */
    static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() ? null : value.asText();
    }

    /** A time field, or {@code null} when absent or null. */
    static Instant time(JsonNode node, String field) {
        String text = text(node, field);
        return text == null ? null : Times.parse(text);
    }

    static boolean bool(JsonNode node, String field) {
        return node.path(field).asBoolean(false);
    }

    static long number(JsonNode node, String field) {
        return node.path(field).asLong(0);
    }

    /** A whole-number field, or {@code null} when absent. */
    static Long optionalNumber(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() ? null : value.asLong();
    }

    /** An array of strings, empty when absent. */
    static List<String> strings(JsonNode node, String field) {
        JsonNode array = node.get(field);
        if (array == null || !array.isArray()) {
            return List.of();
        }
        List<String> values = new ArrayList<>(array.size());
        array.forEach(value -> values.add(value.asText()));
        return Collections.unmodifiableList(values);
    }
}
