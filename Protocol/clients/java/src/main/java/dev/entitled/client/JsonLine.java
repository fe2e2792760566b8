package dev.entitled.client;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;

/**
 * Writes one request line of the typed API: {@code {"op":...,"id":N,...}\n}, as UTF-8 bytes.
 *
 * <p>Typed requests hold only strings, booleans, whole numbers and lists of strings, so a small writer of
 * its own does the job at a fraction of a general JSON generator's cost per request (the hot path of
 * {@code check}); the raw API uses Jackson. A writer is reused by its thread ({@link #forThisThread()}).
 */
final class JsonLine {
    private static final ThreadLocal<JsonLine> PER_THREAD = ThreadLocal.withInitial(JsonLine::new);
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    private byte[] bytes = new byte[256];
    private int length;

    static JsonLine forThisThread() {
        JsonLine line = PER_THREAD.get();
        line.length = 0;
        return line;
    }

    /** Starts the object with {@code op} and, when {@code id >= 0}, {@code id}. */
    JsonLine begin(String op, long id) {
        ascii("{\"op\":");
        string(op);
        if (id >= 0) {
            ascii(",\"id\":");
            number(id);
        }
        return this;
    }

    JsonLine field(String name, String value) {
        if (value != null) {
            key(name);
            string(value);
        }
        return this;
    }

    JsonLine field(String name, Instant value) {
        return value == null ? this : field(name, Times.format(value));
    }

    JsonLine field(String name, Boolean value) {
        if (value != null) {
            key(name);
            ascii(value ? "true" : "false");
        }
        return this;
    }

    JsonLine field(String name, Long value) {
        if (value != null) {
            key(name);
            ascii(Long.toString(value));
        }
        return this;
    }

    JsonLine field(String name, List<String> values) {
        if (values != null) {
            key(name);
            put((byte) '[');
            for (int i = 0; i < values.size(); i++) {
                if (i > 0) {
                    put((byte) ',');
                }
                string(values.get(i));
            }
            put((byte) ']');
        }
        return this;
    }

    /** Ends the object and the line. */
    JsonLine end() {
        ascii("}\n");
        return this;
    }

    byte[] bytes() {
        return bytes;
    }

    int length() {
        return length;
    }

    private void key(String name) {
        put((byte) ',');
        string(name);
        put((byte) ':');
    }

    private void string(String value) {
        int n = value.length();
        // The usual case, plain ASCII without quotes or escapes: one capacity check, one byte per char.
        ensure(n + 2);
        bytes[length++] = '"';
        int i = 0;
        for (; i < n; i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') {
                break;
            }
            bytes[length++] = (byte) c;
        }
        for (; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"' || c == '\\') {
                put((byte) '\\');
                put((byte) c);
            } else if (c < 0x20) {
                ascii("\\u00");
                put(HEX[c >> 4]);
                put(HEX[c & 0xf]);
            } else if (c < 0x80) {
                put((byte) c);
            } else if (Character.isHighSurrogate(c) && i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
                int code = Character.toCodePoint(c, value.charAt(++i));
                put((byte) (0xf0 | (code >> 18)));
                put((byte) (0x80 | ((code >> 12) & 0x3f)));
                put((byte) (0x80 | ((code >> 6) & 0x3f)));
                put((byte) (0x80 | (code & 0x3f)));
            } else if (Character.isSurrogate(c)) {
                // A lone surrogate has no UTF-8 form; the escape lets the server refuse it by name (bad_json).
                ascii("\\u");
                put(HEX[c >> 12]);
                put(HEX[(c >> 8) & 0xf]);
                put(HEX[(c >> 4) & 0xf]);
                put(HEX[c & 0xf]);
            } else if (c < 0x800) {
                put((byte) (0xc0 | (c >> 6)));
                put((byte) (0x80 | (c & 0x3f)));
            } else {
                put((byte) (0xe0 | (c >> 12)));
                put((byte) (0x80 | ((c >> 6) & 0x3f)));
                put((byte) (0x80 | (c & 0x3f)));
            }
        }
        put((byte) '"');
    }

    /** A non-negative whole number, its digits written in place (every request's id: no String made). */
    private void number(long value) {
        int digits = 1;
        for (long rest = value / 10; rest > 0; rest /= 10) {
            digits++;
        }
        ensure(digits);
        length += digits;
        for (int i = length - 1; i >= length - digits; i--) {
            bytes[i] = (byte) ('0' + value % 10);
            value /= 10;
        }
    }

    private void ascii(String text) {
        ensure(text.length());
        for (int i = 0; i < text.length(); i++) {
            bytes[length++] = (byte) text.charAt(i);
        }
    }

    private void put(byte b) {
        ensure(1);
        bytes[length++] = b;
    }

    private void ensure(int more) {
        if (length + more > bytes.length) {
            bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, length + more));
        }
    }
}
