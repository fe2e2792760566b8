package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The server answered error `tls_required`: the port speaks TLS and the client connected in plain text: configure TLS ({@link ClientOptions.Builder#tls(javax.net.ssl.SSLContext)}). Nothing was carried out.
 */
public final class TlsRequiredException extends ServerException {
    private static final long serialVersionUID = 1L;

    TlsRequiredException(String message, String op, ObjectNode answer) {
        super("tls_required", message, op, answer);
    }
}
