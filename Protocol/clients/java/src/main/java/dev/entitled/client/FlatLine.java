package dev.entitled.client;

import java.nio.charset.StandardCharsets;

/**
 * An answer line whose values are all scalars ({@code {"ok":true,"id":7,"active":true,"expiresAt":null}}),
 * read in place: the hot path of {@code check}. Building a Jackson tree for such a line (a parser, a
 * linked hash map, a node per value) costs more than everything else the client does per check; this scans
 * the bytes once and decodes only the values asked for. A line with anything else (an object or array
 * value, an escape in a string, whitespace) is not flat, and goes to Jackson as every other line does.
 *
 * <p>Each connection's reader thread keeps one and rescans it for every line ({@link #read}): its four
 * index arrays were about 350 bytes a line, the largest allocation of a check's whole round trip. A
 * receiver uses it only during {@code answeredFlat}, and never keeps it.
 */
final class FlatLine {
    private static final int MAX_FIELDS = 16;

    private byte[] bytes;
    private final int[] keyStart = new int[MAX_FIELDS];
    private final int[] keyEnd = new int[MAX_FIELDS];
    private final int[] valueStart = new int[MAX_FIELDS];
    private final int[] valueEnd = new int[MAX_FIELDS];
    private int count;

    /**
     * Reads a line into this object, replacing the previous one: false when it is not a flat object (then
     * parse it with Jackson). The bytes are not copied: the line is valid while the buffer is unchanged.
     */
    boolean read(byte[] buffer, int offset, int length) {
        FlatLine line = this;
        line.bytes = buffer;
        line.count = 0;
        int end = offset + length;
        if (length < 2 || buffer[offset] != '{' || buffer[end - 1] != '}') {
            return false;
        }
        int i = offset + 1;
        while (i < end - 1) {
            if (line.count == MAX_FIELDS || buffer[i] != '"') {
                return false;
            }
            int keyStart = ++i;
            while (i < end && buffer[i] != '"') {
                if (buffer[i] == '\\') {
                    return false;
                }
                i++;
            }
            int keyEnd = i++;
            if (i >= end || buffer[i++] != ':') {
                return false;
            }
            int valueStart = i;
            byte first = i < end ? buffer[i] : 0;
            if (first == '"') {
                i++;
                while (i < end && buffer[i] != '"') {
                    if (buffer[i] == '\\') {
                        return false;
                    }
                    i++;
                }
                i++;
            } else if (first == 't' || first == 'f' || first == 'n' || first == '-' || (first >= '0' && first <= '9')) {
                while (i < end && buffer[i] != ',' && buffer[i] != '}') {
                    byte b = buffer[i];
                    if (b == '"' || b == '{' || b == '[' || b == ' ') {
                        return false;
                    }
                    i++;
                }
            } else {
                return false; // an object, an array, or something Jackson should judge
            }
            line.keyStart[line.count] = keyStart;
            line.keyEnd[line.count] = keyEnd;
            line.valueStart[line.count] = valueStart;
            line.valueEnd[line.count] = i;
            line.count++;
            if (i < end - 1) {
                if (buffer[i] != ',') {
                    return false;
                }
                i++;
            } else if (i != end - 1) {
                return false;
            }
        }
        return true;
    }

    boolean has(String key) {
        return find(key) >= 0;
    }

    /** {@code true} only for the literal {@code true}. */
    boolean isTrue(String key) {
        int field = find(key);
        return field >= 0 && valueEnd[field] - valueStart[field] == 4 && bytes[valueStart[field]] == 't';
    }

    /** A string value, or {@code null} when absent or not a string ({@code null} included). */
    String text(String key) {
        int field = find(key);
        if (field < 0 || bytes[valueStart[field]] != '"') {
            return null;
        }
        return new String(bytes, valueStart[field] + 1, valueEnd[field] - valueStart[field] - 2, StandardCharsets.UTF_8);
    }

    /** A whole number of at most 18 digits, or -1 when absent or anything else. */
    long wholeNumber(String key) {
        int field = find(key);
        if (field < 0) {
            return -1;
        }
        int length = valueEnd[field] - valueStart[field];
        if (length == 0 || length > 18) {
            return -1;
        }
        long value = 0;
        for (int i = valueStart[field]; i < valueEnd[field]; i++) {
            byte b = bytes[i];
            if (b < '0' || b > '9') {
                return -1;
            }
            value = value * 10 + (b - '0');
        }
        return value;
    }

    private int find(String key) {
        for (int field = 0; field < count; field++) {
            int length = keyEnd[field] - keyStart[field];
            if (length == key.length() && matches(field, key)) {
                return field;
            }
        }
        return -1;
    }

    private boolean matches(int field, String key) {
        for (int i = 0; i < key.length(); i++) {
            if (bytes[keyStart[field] + i] != key.charAt(i)) {
                return false;
            }
        }
        return true;
    }
}
