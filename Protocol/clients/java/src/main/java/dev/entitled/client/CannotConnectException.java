package dev.entitled.client;

/**
 * A connection to {@link #address()} could not be made: refused, unreachable, timed out, a TLS handshake
 * that failed (an untrusted certificate, or a port that does not speak TLS), or a refused token. Nothing
 * was sent, so nothing was applied.
 */
public final class CannotConnectException extends EntitledException {
    private static final long serialVersionUID = 1L;

    private final String address;
    private final boolean configurationFault;

    public CannotConnectException(String address, String reason, Throwable cause) {
        this(address, reason, cause, false);
    }

    CannotConnectException(String address, String reason, Throwable cause, boolean configurationFault) {
        super("cannot connect to " + address + ": " + reason, null, false, cause);
        this.address = address;
        this.configurationFault = configurationFault;
    }

    /**
     * Whether the failure is the client's configuration's, not the node's (a TLS handshake that failed):
     * the pool then fails requests at once instead of trying other nodes and backing off.
     */
    boolean configurationFault() {
        return configurationFault;
    }

    /** The address that could not be reached ({@code tcp host:port} or {@code unix path}). */
    public String address() {
        return address;
    }
}
