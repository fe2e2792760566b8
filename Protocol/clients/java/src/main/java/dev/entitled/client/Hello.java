package dev.entitled.client;

import java.util.List;
import java.util.Map;

/**
 * The answer of {@code hello}: what the server speaks.
 *
 * @param protocol the protocol version (5 for this client's)
 * @param server the server's name and version, for people and logs
 * @param operations every op the server answers
 * @param fields for each operation, the fields it takes besides {@code op} and {@code id}
 * @param authRequired whether connections must authenticate
 */
public record Hello(int protocol, String server, List<String> operations, Map<String, List<String>> fields,
                    boolean authRequired) {
}
