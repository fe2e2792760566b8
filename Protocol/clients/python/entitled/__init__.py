"""A client for the `entitled` server: newline-delimited JSON over TCP (optionally TLS) or a Unix socket.

    from entitled import Client

    with Client("127.0.0.1", 7117) as c:
        c.define("pro", ["prod_pro_monthly"])
        c.grant("prod_pro_monthly", device="iphone-7f3a", duration="30d", source="app_store")
        if c.check(device="iphone-7f3a", entitlement="pro"):
            ...

Client is a thread-safe pool of pipelined connections (client.py); the typed operations are in
operations.py, the errors and what each says about a retry in errors.py, watches in watch.py, the change
feed's follower and exports in feed.py, one raw connection in connection.py. Protocol:
Protocol/PROTOCOL.md (version 5). Standard library only; Python 3.9+.
"""

from .client import Client
from .connection import Connection
from .errors import (ERROR_CLASSES, BadJsonError, BadRequestError, BusyError, CannotConnectError, ClientError,
                     ConflictError, ConnectionClosedError, EntitledError, ForbiddenError, InternalError,
                     LoadingError, NoNodeAvailableError, NotFoundError, OutcomeUnknownError, OverLimitError,
                     ProtocolError, RequestTimeoutError, StaleError, TlsRequiredError, TooLargeError,
                     TruncatedError, UnauthorizedError, UnavailableError, UnknownCodeError, UnknownOpError,
                     error_from_answer)
from .feed import DEFAULT_FEED_WAIT, Export, Follower
from .pool import Backoff
from .results import CheckResult, ErasedCounts, ExportPage, FeedItem, FeedPage, Gap, Page, Push
from .watch import DEFAULT_MAX_QUEUED_PUSHES, Watch
from .wire import (DEFAULT_HOST, DEFAULT_PORT, PROTOCOL_VERSION, READ_OPERATIONS, Address, parse_address,
                   parse_time, wire_name, wire_value)

__version__ = "0.2.0"

__all__ = [
    "Client", "Connection", "Watch", "Follower", "Export", "Backoff", "CheckResult", "Page", "Push", "Gap",
    "FeedItem", "FeedPage", "ErasedCounts", "ExportPage", "Address",
    "EntitledError", "UnknownCodeError", "BadJsonError", "BadRequestError", "UnknownOpError", "NotFoundError",
    "ConflictError", "TooLargeError", "UnauthorizedError", "ForbiddenError", "BusyError", "TlsRequiredError",
    "InternalError", "UnavailableError", "StaleError", "OutcomeUnknownError", "OverLimitError", "LoadingError",
    "TruncatedError", "ERROR_CLASSES", "error_from_answer", "ClientError", "CannotConnectError",
    "NoNodeAvailableError", "ConnectionClosedError", "RequestTimeoutError", "ProtocolError",
    "READ_OPERATIONS", "DEFAULT_MAX_QUEUED_PUSHES", "DEFAULT_FEED_WAIT", "DEFAULT_HOST", "DEFAULT_PORT",
    "PROTOCOL_VERSION",
    "parse_address", "parse_time", "wire_name", "wire_value",
]
