package dev.entitled.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The matching rules of Protocol/conformance/README.md: patterns with placeholders ({@code $any},
 * {@code $string}, {@code $id:NAME}, ...), {@code $exact}, {@code $anyOf}, {@code $absent}, and captures
 * shared by a scenario's connections. The same rules as Tools/conformance/run.py.
 */
final class ScenarioMatcher {
    private static final Pattern RESPONSE_TIME = Pattern.compile("^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.(?!000)\\d{3})?Z$");
    private static final Pattern MEMBERSHIP_ID = Pattern.compile("^mem_[0-9abcdefghjkmnpqrstvwxyz]{13}$");
    static final Pattern CAPTURE = Pattern.compile("^\\$(id|time|value):([A-Za-z0-9_.-]+)$");

    /** The first difference between a pattern and what came. */
    static final class Mismatch extends Exception {
        private static final long serialVersionUID = 1L;

        Mismatch(String message) {
            super(message);
        }
    }

    private ScenarioMatcher() {
    }

    /** The captures extended by matching {@code actual}; {@code captures} is left as it was. */
    static Map<String, JsonNode> match(JsonNode expected, JsonNode actual, Map<String, JsonNode> captures, String path)
            throws Mismatch {
        if (expected.isTextual() && expected.asText().startsWith("$")) {
            String text = expected.asText();
            if (!text.startsWith("$$")) {
                return placeholder(text, actual, captures, path);
            }
            expected = TextNode.valueOf(text.substring(1));
        }
        if (expected.isObject()) {
            if (!actual.isObject()) {
                throw new Mismatch(path + ": expected an object, got " + describe(actual));
            }
            Map<String, JsonNode> result = captures;
            for (Iterator<Map.Entry<String, JsonNode>> it = expected.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> field = it.next();
                String key = field.getKey();
                if (key.equals("$exact") || key.equals("$anyOf")) {
                    continue;
                }
                if (field.getValue().isTextual() && field.getValue().asText().equals("$absent")) {
                    if (actual.has(key)) {
                        throw new Mismatch(path + "." + key + ": expected no such key, got " + describe(actual.get(key)));
                    }
                    continue;
                }
                if (!actual.has(key)) {
                    throw new Mismatch(path + "." + key + ": missing (object was " + describe(actual) + ")");
                }
                result = match(field.getValue(), actual.get(key), result, path + "." + key);
            }
            JsonNode alternatives = expected.get("$anyOf");
            if (alternatives != null) {
                StringBuilder problems = new StringBuilder();
                boolean matched = false;
                for (JsonNode alternative : alternatives) {
                    try {
                        result = match(alternative, actual, result, path);
                        matched = true;
                        break;
                    } catch (Mismatch problem) {
                        problems.append(problems.length() > 0 ? " | " : "").append(problem.getMessage());
                    }
                }
                if (!matched) {
                    throw new Mismatch(path + ": matches none of the $anyOf patterns: " + problems);
                }
            }
            if (expected.path("$exact").asBoolean(false)) {
                Set<String> named = new TreeSet<>();
                collectNamed(expected, named);
                if (alternatives != null) {
                    alternatives.forEach(alternative -> collectNamed(alternative, named));
                }
                Set<String> extra = new TreeSet<>();
                actual.fieldNames().forEachRemaining(name -> {
                    if (!named.contains(name)) {
                        extra.add(name);
                    }
                });
                if (!extra.isEmpty()) {
                    throw new Mismatch(path + ": unexpected keys " + extra + " (object was " + describe(actual) + ")");
                }
            }
            return result;
        }
        if (expected.isArray()) {
            if (!actual.isArray()) {
                throw new Mismatch(path + ": expected an array, got " + describe(actual));
            }
            if (expected.size() != actual.size()) {
                throw new Mismatch(path + ": expected " + expected.size() + " elements, got " + actual.size() + ": " + describe(actual));
            }
            Map<String, JsonNode> result = captures;
            for (int i = 0; i < expected.size(); i++) {
                result = match(expected.get(i), actual.get(i), result, path + "[" + i + "]");
            }
            return result;
        }
        if (!sameScalar(expected, actual)) {
            throw new Mismatch(path + ": expected " + describe(expected) + ", got " + describe(actual));
        }
        return captures;
    }

    private static void collectNamed(JsonNode pattern, Set<String> named) {
        pattern.fields().forEachRemaining(field -> {
            boolean absent = field.getValue().isTextual() && field.getValue().asText().equals("$absent");
            if (!field.getKey().equals("$exact") && !field.getKey().equals("$anyOf") && !absent) {
                named.add(field.getKey());
            }
        });
    }

    /** Same JSON type (any two numbers are comparable) and equal. */
    private static boolean sameScalar(JsonNode expected, JsonNode actual) {
        if (expected.isNumber() && actual.isNumber()) {
            return expected.decimalValue().compareTo(actual.decimalValue()) == 0;
        }
        return expected.getNodeType() == actual.getNodeType() && expected.equals(actual);
    }

    private static Map<String, JsonNode> placeholder(String expected, JsonNode actual, Map<String, JsonNode> captures,
                                                     String path) throws Mismatch {
        switch (expected) {
            case "$any":
                return captures;
            case "$absent":
                throw new Mismatch(path + ": expected to be absent, got " + describe(actual));
            case "$string":
                return require(actual.isTextual(), expected, actual, captures, path);
            case "$integer":
                return require(actual.isIntegralNumber(), expected, actual, captures, path);
            case "$number":
                return require(actual.isNumber(), expected, actual, captures, path);
            case "$bool":
                return require(actual.isBoolean(), expected, actual, captures, path);
            case "$object":
                return require(actual.isObject(), expected, actual, captures, path);
            case "$array":
                return require(actual.isArray(), expected, actual, captures, path);
            case "$time":
                return require(isTime(actual), expected, actual, captures, path);
            case "$id":
                return require(isMembershipId(actual), expected, actual, captures, path);
            default:
                break;
        }
        Matcher capture = CAPTURE.matcher(expected);
        if (!capture.matches()) {
            throw new Mismatch(path + ": unknown placeholder " + expected + " in the scenario");
        }
        String kind = capture.group(1);
        if (kind.equals("id") && !isMembershipId(actual)) {
            throw new Mismatch(path + ": expected a membership id for " + expected + ", got " + describe(actual));
        }
        if (kind.equals("time") && !isTime(actual)) {
            throw new Mismatch(path + ": expected a response time for " + expected + ", got " + describe(actual));
        }
        String key = kind + ":" + capture.group(2);
        JsonNode captured = captures.get(key);
        if (captured != null) {
            if (!captured.equals(actual)) {
                throw new Mismatch(path + ": expected " + expected + " = " + describe(captured) + ", got " + describe(actual));
            }
            return captures;
        }
        if (kind.equals("id")) {
            for (Map.Entry<String, JsonNode> other : captures.entrySet()) {
                if (other.getKey().startsWith("id:") && other.getValue().equals(actual)) {
                    throw new Mismatch(path + ": " + expected + " is " + actual.asText() + ", which " + other.getKey() + " already is");
                }
            }
        }
        Map<String, JsonNode> extended = new HashMap<>(captures);
        extended.put(key, actual);
        return extended;
    }

    private static Map<String, JsonNode> require(boolean ok, String expected, JsonNode actual, Map<String, JsonNode> captures,
                                                 String path) throws Mismatch {
        if (!ok) {
            throw new Mismatch(path + ": expected " + expected.substring(1) + ", got " + describe(actual));
        }
        return captures;
    }

    private static boolean isTime(JsonNode value) {
        return value.isTextual() && RESPONSE_TIME.matcher(value.asText()).matches();
    }

    private static boolean isMembershipId(JsonNode value) {
        return value.isTextual() && MEMBERSHIP_ID.matcher(value.asText()).matches();
    }

    /** A request of a scenario with its tag and the captured values put in. */
    static JsonNode substitute(JsonNode value, Map<String, JsonNode> captures, String tag) throws Mismatch {
        if (value.isTextual()) {
            Matcher capture = CAPTURE.matcher(value.asText());
            if (capture.matches()) {
                JsonNode captured = captures.get(capture.group(1) + ":" + capture.group(2));
                if (captured == null) {
                    throw new Mismatch("the request uses " + value.asText() + " before any response captured it");
                }
                return captured;
            }
            return TextNode.valueOf(value.asText().replace("${S}", tag));
        }
        if (value.isObject()) {
            ObjectNode copy = Json.object();
            for (Iterator<Map.Entry<String, JsonNode>> it = value.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> field = it.next();
                copy.set(field.getKey().replace("${S}", tag), substitute(field.getValue(), captures, tag));
            }
            return copy;
        }
        if (value.isArray()) {
            ArrayNode copy = Json.MAPPER.createArrayNode();
            for (JsonNode element : value) {
                copy.add(substitute(element, captures, tag));
            }
            return copy;
        }
        return value;
    }

    /** An expected value with its tag put in (placeholders stay for {@link #match}). */
    static JsonNode tagOnly(JsonNode value, String tag) {
        if (value.isTextual()) {
            return TextNode.valueOf(value.asText().replace("${S}", tag));
        }
        if (value.isObject()) {
            ObjectNode copy = Json.object();
            value.fields().forEachRemaining(field -> copy.set(field.getKey().replace("${S}", tag), tagOnly(field.getValue(), tag)));
            return copy;
        }
        if (value.isArray()) {
            ArrayNode copy = Json.MAPPER.createArrayNode();
            value.forEach(element -> copy.add(tagOnly(element, tag)));
            return copy;
        }
        return value;
    }

    static String describe(JsonNode value) {
        String text = value.toString();
        return text.length() <= 400 ? text : text.substring(0, 400) + "…";
    }
}
