"""Every error the client raises, and what each says about a write (PROTOCOL.md, "What an answer means").

Two families, kept apart so that `except EntitledError` still means "the server answered no":

- `EntitledError` and its subclasses: the server answered ``{"ok": false, ...}``. There is one subclass per
  error code of the protocol (`NotFoundError` for ``not_found``, ...) and `UnknownCodeError` for a code this
  client does not know (from a newer server); `.code` is always the code the server sent.
- `ClientError` and its subclasses: no answer came (cannot connect, connection closed, timed out, a line
  the protocol does not allow). They subclass the built-in `ConnectionError` or `TimeoutError` too, as the
  single-module client's errors did.

Every error has `may_have_been_applied`: True when a write may have been carried out (``outcome_unknown``,
``internal``, or the connection was lost or the time ran out after the write was sent), False when it
certainly was not (every other code, and a failure before any byte of the request was written). Retry a
write that may have been applied with the same idempotency key (grant's ``idempotency_key``, event's
``event_id``): a replay answers the first attempt's result instead of doing it twice.
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = [
    "EntitledError", "UnknownCodeError", "BadJsonError", "BadRequestError", "UnknownOpError", "NotFoundError",
    "ConflictError", "TooLargeError", "UnauthorizedError", "ForbiddenError", "BusyError", "TlsRequiredError",
    "InternalError", "UnavailableError", "StaleError", "OutcomeUnknownError", "OverLimitError", "LoadingError",
    "TruncatedError", "ERROR_CLASSES", "ClientError", "CannotConnectError", "NoNodeAvailableError",
    "ConnectionClosedError", "RequestTimeoutError", "ProtocolError", "error_from_answer",
]


class EntitledError(Exception):
    """The server answered ``{"ok": false, "error": {"code": ..., "message": ...}}``.

    `code` is the protocol's code, `message` a sentence for people (do not parse it), `answer` the whole
    answer, `op` the operation of the request it answers (None when unknown)."""

    #: The protocol code this class stands for (None for the base class and UnknownCodeError).
    CODE: str | None = None
    #: Whether a write answered with this code may have been carried out.
    MAY_HAVE_BEEN_APPLIED = False

    def __init__(self, code: str, message: str, answer: Mapping[str, Any] | None = None, op: str | None = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.answer = dict(answer) if answer is not None else {}
        self.op = op

    @property
    def may_have_been_applied(self) -> bool:
        """True for outcome_unknown and internal: retry a write with its idempotency key, or read."""
        return self.MAY_HAVE_BEEN_APPLIED


class UnknownCodeError(EntitledError):
    """An error code this client does not know (a newer server's): `.code` holds it. Treated as possibly
    applied, since nothing is known about it."""

    MAY_HAVE_BEEN_APPLIED = True


class BadJsonError(EntitledError):
    """bad_json: the line was not valid JSON (only a raw line can cause it)."""
    CODE = "bad_json"


class BadRequestError(EntitledError):
    """bad_request: valid JSON but not a valid request (a field missing, malformed or not taken)."""
    CODE = "bad_request"


class UnknownOpError(EntitledError):
    """unknown_op: the server knows no such operation (an older server)."""
    CODE = "unknown_op"


class NotFoundError(EntitledError):
    """not_found: the membership or entitlement named does not exist."""
    CODE = "not_found"


class ConflictError(EntitledError):
    """conflict: an idempotency key used for another grant, or an extend of a revoked or lifetime membership."""
    CODE = "conflict"


class TooLargeError(EntitledError):
    """too_large: the line was longer than the server's limit; the server closed the connection after it."""
    CODE = "too_large"


class UnauthorizedError(EntitledError):
    """unauthorized: no token, or an unknown one (the token is never shown in the message)."""
    CODE = "unauthorized"


class ForbiddenError(EntitledError):
    """forbidden: the token's role does not allow the operation."""
    CODE = "forbidden"


class BusyError(EntitledError):
    """busy: the server is at its connection limit and closed the new connection."""
    CODE = "busy"


class TlsRequiredError(EntitledError):
    """tls_required: the port speaks TLS; give the client tls= (an ssl.SSLContext)."""
    CODE = "tls_required"


class InternalError(EntitledError):
    """internal: the server failed; a write may or may not have been carried out."""
    CODE = "internal"
    MAY_HAVE_BEEN_APPLIED = True


class UnavailableError(EntitledError):
    """unavailable: the server takes no writes now (disk full or failed, or a cluster node could not commit);
    the write was certainly not carried out, so retrying cannot make a duplicate."""
    CODE = "unavailable"


class StaleError(EntitledError):
    """stale: a read's min_seq was not applied within the server's --min-seq-wait. Retry, or ask another node
    (the client does once by itself when it has several)."""
    CODE = "stale"


class OutcomeUnknownError(EntitledError):
    """outcome_unknown: the write may or may not have been made; retry with the same idempotency key, or read."""
    CODE = "outcome_unknown"
    MAY_HAVE_BEEN_APPLIED = True


class OverLimitError(EntitledError):
    """over_limit: the read goes through more memberships of one subject than one request may (list them page
    by page), or 16 connections already watch every subject."""
    CODE = "over_limit"


class LoadingError(EntitledError):
    """loading: the server is starting; nothing was carried out. `loaded` and `total` count the memberships
    loaded so far and known to come. Raised only once the client's loading_wait is spent."""
    CODE = "loading"

    @property
    def loaded(self) -> int | None:
        return self.answer.get("error", {}).get("loaded")

    @property
    def total(self) -> int | None:
        return self.answer.get("error", {}).get("total")


class TruncatedError(EntitledError):
    """truncated: a read of the change feed asked for the changes after a number the feed no longer holds
    (its retention let them go), or after a number a failover of a cluster's database lost. Nothing was
    carried out, and reading again cannot help: take a full copy with export (Client.iter_export), then
    follow the feed after the copy's seq. A follower ends with it."""
    CODE = "truncated"


#: The class of each protocol error code (the schema's list; a test keeps them in step).
ERROR_CLASSES: dict[str, type[EntitledError]] = {
    cls.CODE: cls
    for cls in (BadJsonError, BadRequestError, UnknownOpError, NotFoundError, ConflictError, TooLargeError,
                UnauthorizedError, ForbiddenError, BusyError, TlsRequiredError, InternalError, UnavailableError,
                StaleError, OutcomeUnknownError, OverLimitError, LoadingError, TruncatedError)
    if cls.CODE is not None
}


def error_from_answer(answer: Mapping[str, Any], op: str | None = None) -> EntitledError:
    """The EntitledError subclass of an unsuccessful answer's code."""
    error = answer.get("error")
    if not isinstance(error, dict):
        return UnknownCodeError("unknown", f"an unsuccessful answer without an error object: {dict(answer)!r}", answer, op)
    code = str(error.get("code"))
    cls = ERROR_CLASSES.get(code, UnknownCodeError)
    return cls(code, str(error.get("message", "")), answer, op)


class ClientError(Exception):
    """No answer came. `may_have_been_applied` says whether the request may have been carried out; `op` is
    the operation (None when the error is the connection's, not one request's)."""

    def __init__(self, message: str, *, may_have_been_applied: bool = False, op: str | None = None):
        super().__init__(message)
        self.may_have_been_applied = may_have_been_applied
        self.op = op


class CannotConnectError(ClientError, ConnectionError):
    """No connection could be opened (refused, unreachable, timed out): nothing was sent. `address` names
    where, `reason` is the underlying OSError."""

    def __init__(self, address: str, reason: BaseException):
        super().__init__(f"cannot connect to {address}: {reason}")
        self.address = address
        self.reason = reason


class NoNodeAvailableError(CannotConnectError):
    """No node of nodes= could be used: `failures` holds (address, error) for each, an error of a node still
    in its reconnect backoff saying so. Nothing was sent."""

    def __init__(self, failures: list[tuple[str, BaseException]]):
        text = "; ".join(f"{address}: {error}" for address, error in failures)
        ClientError.__init__(self, f"no node accepted a connection ({text})")
        self.failures = failures
        self.address = ", ".join(address for address, _ in failures)
        self.reason = failures[-1][1] if failures else None


class ConnectionClosedError(ClientError, ConnectionError):
    """The connection closed (the server, the network, or close()) before the answer came. When
    `may_have_been_applied` is True the request had been sent: a write may have been carried out.
    `answers` holds the answers pipeline() received before it closed."""

    def __init__(self, message: str, *, may_have_been_applied: bool = False, op: str | None = None,
                 answers: list[dict] | None = None):
        super().__init__(message, may_have_been_applied=may_have_been_applied, op=op)
        self.answers = answers or []


class RequestTimeoutError(ClientError, TimeoutError):
    """No answer within the request's timeout. The request keeps its place on the connection (its late answer
    is dropped) and the connection stays usable. A write that timed out may have been carried out."""


class ProtocolError(ClientError):
    """The server sent a line the protocol does not allow (not JSON, a wrong id echo): the client closed the
    connection, and every request in flight on it may have been carried out."""

    def __init__(self, message: str, *, op: str | None = None):
        super().__init__(message, may_have_been_applied=True, op=op)
