package dev.entitled.client;

import java.nio.file.Path;
import java.util.Objects;

/**
 * Where a server listens: a TCP {@code host:port} or a Unix socket path.
 *
 * <p>{@link #parse(String)} takes {@code "host:port"}, {@code "[::1]:7117"}, or a path (anything
 * containing {@code /}) for a Unix socket.
 */
public final class NodeAddress {
    private final String host;
    private final int port;
    private final Path socketPath;

    private NodeAddress(String host, int port, Path socketPath) {
        this.host = host;
        this.port = port;
        this.socketPath = socketPath;
    }

    /** A TCP address. */
    public static NodeAddress tcp(String host, int port) {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("a port is from 1 to 65535, not " + port);
        }
        return new NodeAddress(Objects.requireNonNull(host, "host"), port, null);
    }

    /** A Unix domain socket. */
    public static NodeAddress unix(Path path) {
        return new NodeAddress(null, 0, Objects.requireNonNull(path, "path"));
    }

    /** {@code "host:port"}, {@code "[v6]:port"} or a Unix socket path (containing {@code /}). */
    public static NodeAddress parse(String text) {
        Objects.requireNonNull(text, "address");
        if (text.contains("/")) {
            return unix(Path.of(text));
        }
        int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw new IllegalArgumentException("an address is \"host:port\" or a Unix socket path, not \"" + text + "\"");
        }
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        try {
            return tcp(host, Integer.parseInt(text.substring(colon + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("an address is \"host:port\" or a Unix socket path, not \"" + text + "\"");
        }
    }

    /** Whether this is a Unix socket. */
    public boolean isUnix() {
        return socketPath != null;
    }

    /** The TCP host, or {@code null} for a Unix socket. */
    public String host() {
        return host;
    }

    /** The TCP port, or 0 for a Unix socket. */
    public int port() {
        return port;
    }

    /** The Unix socket's path, or {@code null} for TCP. */
    public Path socketPath() {
        return socketPath;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof NodeAddress && toString().equals(other.toString());
    }

    @Override
    public int hashCode() {
        return toString().hashCode();
    }

    /** {@code tcp host:port} or {@code unix path}, as the server's ready line writes addresses. */
    @Override
    public String toString() {
        if (socketPath != null) {
            return "unix " + socketPath;
        }
        return "tcp " + (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
