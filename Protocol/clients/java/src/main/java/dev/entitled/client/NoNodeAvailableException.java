package dev.entitled.client;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * No node of the client accepted a connection: every one refused, was unreachable, or is backing off after
 * refusing. {@link #failures()} names each node's last failure. Nothing was sent.
 */
public final class NoNodeAvailableException extends EntitledException {
    private static final long serialVersionUID = 1L;

    private final transient Map<String, EntitledException> failures;

    public NoNodeAvailableException(Map<String, EntitledException> failures, String op) {
        super("no node available: " + failures.entrySet().stream()
                .map(e -> e.getKey() + ": " + e.getValue().getMessage())
                .collect(Collectors.joining("; ")), op, false, failures.values().stream().findFirst().orElse(null));
        this.failures = Collections.unmodifiableMap(new LinkedHashMap<>(failures));
    }

    /** Each node's address and its last failure, in the client's order of nodes. */
    public Map<String, EntitledException> failures() {
        return failures;
    }
}
