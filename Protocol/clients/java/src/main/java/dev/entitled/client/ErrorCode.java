package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Every error code of protocol version 5 (PROTOCOL.md §3 Error codes), with the exception class each is
 * raised as. A code that is not listed here is raised as {@link UnknownCodeException}.
 */
public enum ErrorCode {
    BAD_JSON("bad_json"),
    BAD_REQUEST("bad_request"),
    UNKNOWN_OP("unknown_op"),
    NOT_FOUND("not_found"),
    CONFLICT("conflict"),
    TOO_LARGE("too_large"),
    UNAUTHORIZED("unauthorized"),
    FORBIDDEN("forbidden"),
    BUSY("busy"),
    TLS_REQUIRED("tls_required"),
    INTERNAL("internal"),
    UNAVAILABLE("unavailable"),
    STALE("stale"),
    OUTCOME_UNKNOWN("outcome_unknown"),
    OVER_LIMIT("over_limit"),
    LOADING("loading"),
    TRUNCATED("truncated");

    private final String wireName;

    ErrorCode(String wireName) {
        this.wireName = wireName;
    }

    /** The code as the server writes it. */
    public String wireName() {
        return wireName;
    }

    /** The code of this wire name, or {@code null} for a code this client does not know. */
    public static ErrorCode of(String wireName) {
        for (ErrorCode code : values()) {
            if (code.wireName.equals(wireName)) {
                return code;
            }
        }
        return null;
    }

    /**
     * Whether an answer with this code leaves a write possibly applied: {@code outcome_unknown} and
     * {@code internal} (PROTOCOL.md "What an answer means"); every other code, known or not, says the
     * write was not applied. An unknown code is taken as not applied because a newer server's codes keep
     * that table's meaning for the ones a client knows, and a client cannot act on the others.
     */
    static boolean mayHaveBeenApplied(String code) {
        return "outcome_unknown".equals(code) || "internal".equals(code);
    }

    /** The exception for an error answer with this code. */
    static ServerException exception(String code, String message, String op, ObjectNode answer) {
        ErrorCode known = of(code);
        if (known == null) {
            return new UnknownCodeException(code, message, op, answer);
        }
        switch (known) {
            case BAD_JSON: return new BadJsonException(message, op, answer);
            case BAD_REQUEST: return new BadRequestException(message, op, answer);
            case UNKNOWN_OP: return new UnknownOpException(message, op, answer);
            case NOT_FOUND: return new NotFoundException(message, op, answer);
            case CONFLICT: return new ConflictException(message, op, answer);
            case TOO_LARGE: return new TooLargeException(message, op, answer);
            case UNAUTHORIZED: return new UnauthorizedException(message, op, answer);
            case FORBIDDEN: return new ForbiddenException(message, op, answer);
            case BUSY: return new BusyException(message, op, answer);
            case TLS_REQUIRED: return new TlsRequiredException(message, op, answer);
            case INTERNAL: return new InternalException(message, op, answer);
            case UNAVAILABLE: return new UnavailableException(message, op, answer);
            case STALE: return new StaleException(message, op, answer);
            case OUTCOME_UNKNOWN: return new OutcomeUnknownException(message, op, answer);
            case OVER_LIMIT: return new OverLimitException(message, op, answer);
            case LOADING: return new LoadingException(message, op, answer);
            case TRUNCATED: return new TruncatedException(message, op, answer);
            default: throw new AssertionError(known);
        }
    }

    /** The exception for an error answer line ({@code {"ok":false,"error":{...}}}). */
    static ServerException fromAnswer(ObjectNode answer, String op) {
        var error = answer.get("error");
        if (error == null || !error.isObject()) {
            return new UnknownCodeException("", "an unsuccessful answer without an error object", op, answer);
        }
        var code = error.path("code").asText("");
        var message = error.path("message").asText("");
        return exception(code, message, op, answer);
    }
}
