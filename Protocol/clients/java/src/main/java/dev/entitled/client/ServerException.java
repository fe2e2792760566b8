package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The server answered {@code {"ok":false,"error":{"code":...,"message":...}}}. There is one subclass per
 * error code of the protocol ({@link ErrorCode}), and {@link UnknownCodeException} for a code this client
 * does not know (from a newer server). Branch on the class or on {@link #code()}; the message is for
 * people and its wording is not part of the contract.
 *
 * <p>{@link #mayHaveBeenApplied()} is {@code true} only for {@code outcome_unknown} and {@code internal}.
 */
public class ServerException extends EntitledException {
    private static final long serialVersionUID = 1L;

    private final String code;
    private final String serverMessage;
    private final transient ObjectNode answer;

    protected ServerException(String code, String serverMessage, String op, ObjectNode answer) {
        super(code + ": " + serverMessage + (op != null ? " (" + op + ")" : ""), op,
                ErrorCode.mayHaveBeenApplied(code), null);
        this.code = code;
        this.serverMessage = serverMessage;
        this.answer = answer;
    }

    /** The error code as the server wrote it ({@code "not_found"}, ...). */
    public String code() {
        return code;
    }

    /** The server's sentence, for people. */
    public String serverMessage() {
        return serverMessage;
    }

    /** The whole answer line, parsed; {@code null} when the error did not come from an answer. */
    public ObjectNode answer() {
        return answer;
    }
}
