"""A client for the `entitled` server: newline-delimited JSON over TCP or a Unix socket.

One module, Python 3.11 standard library only. The protocol is specified in Protocol/PROTOCOL.md
(protocol version 5); this module follows it and adds nothing the server does not do.

    from entitled import Client, EntitledError

    with Client("127.0.0.1", 7117) as c:              # or Client(unix_socket="/run/entitled.sock")
        c.define("pro", ["prod_pro_monthly", "prod_pro_yearly"])
        c.grant("prod_pro_monthly", device="iphone-7f3a", duration="30d", source="app_store")
        if c.check(device="iphone-7f3a", entitlement="pro"):
            ...                                         # access; .expires_at is a time or None (lifetime)

Field names
    Keyword arguments are written in snake_case and sent under the protocol's names: a name that contains
    "_" is turned into lowerCamelCase (expires_at -> expiresAt, event_id -> eventId,
    grace_period_expires_at -> gracePeriodExpiresAt, idempotency_key -> idempotencyKey, ...). A name
    without "_" (user, product, all, or an already camel-cased expiresAt) is sent as written. This holds
    for the typed methods, for request() and for the dicts given to pipeline(). Arguments that are None
    are left out (the protocol treats null as absent). Responses are returned exactly as parsed, with the
    protocol's (camelCase) names.

Values
    Strings, booleans, numbers, lists and dicts are sent as JSON. A timezone-aware datetime is sent as an
    RFC 3339 time in UTC with milliseconds; a naive datetime is refused (ValueError), because the protocol
    requires a zone. A timedelta of whole seconds is sent as a duration in seconds ("2592000s").

Results of the typed methods
    ping, hello, auth, grant, define, snapshot, event  -> the answer dict (without being reduced)
    extend                                       -> the answer dict: {"seq", "membership", "previousExpiresAt"}
    undefine                                     -> dict: {"entitlement", "products"} (the products it had)
    erase                                        -> dict, the "erased" object: {"memberships", "historyEntries"}
    stats                                        -> the answer dict too: the server's counters
    check                                        -> CheckResult: true when active; .expires_at
    claim                                        -> int, the "claimed" count
    revoke                                       -> dict, the "membership"
    memberships, history                         -> Page: a list, one page of the "memberships" / "history"
                                                    array, with .next (None on the last page)
    iter_memberships, iter_history               -> an iterator over every membership / entry: follows "next"
    catalog                                      -> dict, the "entitlements" object
    customer                                     -> dict, the "customer" object
    watch, unwatch                               -> int, the "watches" count
    A typed method raises TypeError for a keyword argument it does not take, before sending anything,
    with the name meant when one is close (grant(..., duraton="30d") -> did you mean 'duration'?): the
    server refuses fields an operation does not take (since protocol version 2), and a typo must never be sent.
    `id=` is accepted by every method. request() and pipeline() send the fields they are given as they
    are; hello() says which fields each operation of the server takes ("fields").

Pages (protocol version 4)
    memberships and history answer a page at a time: at most `limit` items (1 to 1000; 100 when not
    given), newest first. The Page they return is a list of the page's items whose .next is the answer's
    "next" (present only when more follow), or None on the last page; pass it back as after= for the next
    page, unchanged (for history it is an opaque cursor; for memberships it is the id of the page's last
    membership). A change made between pages neither lists an item twice nor skips one: a membership
    granted, or an entry recorded, meanwhile is newer than the first page and comes before it.
    iter_memberships() and iter_history() take the same
    arguments, with page_size= for limit, and follow "next" until the last page:
        every = list(c.iter_memberships(user="alice"))         # all of them, 100 a request
        for entry in c.iter_history(user="alice", page_size=1000): ...
    Each page is a request of its own and nothing is held on the server between pages. With nodes=, a
    page whose connection drops is asked of the next node; the cursors hold there too, except that a node
    which has not yet applied the membership an `after` names refuses it (bad_request). Against a server of
    protocol version 3, which answers every item at once and knows neither limit nor after, the
    iterators work when given no page_size and no after (the one answer has no "next").

Reading your writes (protocol version 3)
    The answer to every write (grant, claim, revoke, define, undefine, event, erase) carries "seq", the
    number of its change; the client keeps the newest it received as `last_seq` (also for the methods that
    return only part of the answer). check, memberships and customer take min_seq: the server answers once
    it has applied that change, which on another connection, or another node of a cluster, makes the read
    see the write:  c.grant(...); other.check(user=..., min_seq=c.last_seq). If the server has not applied
    it within its --min-seq-wait, the read raises EntitledError with code "stale"; retry, or ask elsewhere.

Errors
    EntitledError      the server answered {"ok": false, ...}: .code ("not_found", "bad_request", ...),
                       .message (for people; do not parse it), .answer (the whole answer). "unavailable"
                       means the server takes no writes now (its disk is full or failed, or on a node of a
                       cluster the database did not commit it) and the write was certainly not carried out:
                       retrying cannot make a duplicate. "outcome_unknown" means it may or may not have been
                       (the commit's answer was lost): retry it with the same idempotency_key, or read, to
                       find out. "stale" means that a read's min_seq was not reached in time.
                       "over_limit" (protocol version 4) means the read would go through more memberships
                       of one subject than the server allows one request (10,000): customer, a user's or
                       device's history, and check or memberships with an `at` before the newest change,
                       of a subject with more. It is not retried (it would be refused again): list the
                       memberships page by page (iter_memberships), and check without `at`.
                       "loading" means the server is starting: nothing was carried out. The client
                       has already asked again for loading_wait seconds (see Client) before raising it.
    ConnectionClosedError (a ConnectionError) the connection is closed or dropped; the client cannot be
                       used any more. A request without an answer may or may not have been carried out.
    TimeoutError       no progress for `timeout` seconds while waiting for answers; the client closes the
                       connection, because a late answer would otherwise be taken for the next request's.
    ProtocolError      the server sent something the protocol does not allow (not JSON, a wrong id echo);
                       the client closes the connection.
    A "too_large" answer raises EntitledError; the server closes the connection after it, so the next call
    raises ConnectionClosedError. In a pipeline, the requests after a too_large line get no answer:
    pipeline() raises ConnectionClosedError, whose .answers holds the answers up to the too_large one.

Answers, ids and pushed lines
    Every request is sent with an "id" (a counter of the client, unless you give one); the server echoes it
    and the client checks the echo, so answers can never be mismatched. Answers come in request order, so
    pipeline() sends all its requests at once and pairs the answers by position. A line with "push" and no
    "ok" is a pushed line (after watch()); it is never taken as an answer: it is queued, whenever it
    arrives, and returned by next_push(). A watching connection must keep reading: call next_push() often
    enough (the server closes a connection that leaves 4 MiB of output unread).

Threads
    A Client is one connection. Its methods take a lock, so threads may share it, but a next_push() that
    waits holds the lock for as long as it waits; give a watching thread its own Client.

Reconnecting is not done for one address: after ConnectionClosedError, make a new Client (and watch again:
watches belong to the connection).

Several nodes
    Client(nodes=["10.0.0.5:7117", "10.0.0.6:7117"]) (or (host, port) tuples) is one connection to one node
    of a cluster (several `entitled --postgres` on one database): each new Client starts at the next node,
    so a process's clients spread over them, and a node that refuses the connection is skipped
    (NoNodeAvailableError when every node refuses). When the connection drops or times out, a pipeline of
    reads only (READ_OPERATIONS: check, memberships, customer, catalog, history, hello, ping, stats) is sent
    again to the next node, at most once per node; a write is never sent twice: it raises
    ConnectionClosedError (or TimeoutError), the write may or may not have been carried out, and sending
    it again is safe with an idempotency key (grant's idempotency_key, event's event_id). The next request
    connects to the next node by itself; watches are lost with the connection (next_push() raises
    ConnectionClosedError): watch again. The token is kept in memory for those connections.
"""

from __future__ import annotations

import collections
import dataclasses
import difflib
import itertools
import datetime as _dt
import json
import re
import selectors
import socket
import ssl
import threading
import time
from typing import Any, Iterable, Iterator, Mapping

__all__ = [
    "Client",
    "CheckResult",
    "Page",
    "EntitledError",
    "ConnectionClosedError",
    "ProtocolError",
    "NoNodeAvailableError",
    "READ_OPERATIONS",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "PROTOCOL_VERSION",
]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7117
PROTOCOL_VERSION = 5

_READ_SIZE = 65536
# The operations that change nothing: with nodes=, a pipeline of them only is sent again to another node
# when its connection drops. Any other request is never sent twice (a grant sent twice is two grants).
READ_OPERATIONS = frozenset({"ping", "hello", "check", "memberships", "customer", "catalog", "history", "stats"})
# Where the next Client with nodes= starts: consecutive clients start at consecutive nodes.
_NODE_ROTATION = itertools.count()
_SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")


class EntitledError(Exception):
    """The server answered {"ok": false, "error": {"code": ..., "message": ...}}."""

    def __init__(self, code: str, message: str, answer: Mapping[str, Any] | None = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.answer = dict(answer) if answer is not None else {}


class ConnectionClosedError(ConnectionError):
    """The connection is closed (by close(), the server, or the network). `answers` holds the answers a
    pipeline received before the connection dropped."""

    def __init__(self, message: str, answers: list[dict] | None = None):
        super().__init__(message)
        self.answers = answers or []


class NoNodeAvailableError(ConnectionError):
    """No node of nodes= accepted a connection. `failures` holds ("host:port", exception) for each."""

    def __init__(self, failures: list[tuple[str, BaseException]]):
        text = "; ".join(f"{address}: {error}" for address, error in failures)
        super().__init__(f"no node accepted a connection ({text})")
        self.failures = failures


class ProtocolError(Exception):
    """The server sent a line the protocol does not allow."""


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """The answer of check(). True exactly when `active`; `expires_at` is the RFC 3339 time when access
    stops by itself, or None: lifetime when active, absent when not active."""

    active: bool
    expires_at: str | None = None

    def __bool__(self) -> bool:
        return self.active

    @property
    def expires_at_datetime(self) -> _dt.datetime | None:
        """`expires_at` as an aware datetime (UTC), or None."""
        return parse_time(self.expires_at) if self.expires_at is not None else None


class Page(list):
    """One page of memberships() or history(): a list of the page's items, newest first. `next` is the
    answer's "next": pass it as after= to get the page that follows, unchanged; None on the last page.
    A Page compares equal to a list with the same items."""

    def __init__(self, items: Iterable[Any] = (), next: str | None = None):
        super().__init__(items)
        self.next = next

    def __repr__(self) -> str:
        return f"Page({list.__repr__(self)}, next={self.next!r})"


def parse_time(value: str) -> _dt.datetime:
    """Parses a time the server wrote ("2026-12-22T00:31:45.833Z") into an aware datetime."""
    return _dt.datetime.fromisoformat(value)


def wire_name(name: str) -> str:
    """expires_at -> expiresAt; names without "_" are returned unchanged."""
    if not _SNAKE.match(name):
        return name
    first, *rest = name.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


def wire_value(value: Any) -> Any:
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"a time must have a zone (got the naive datetime {value!r})")
        utc = value.astimezone(_dt.timezone.utc)
        return utc.strftime("%Y-%m-%dT%H:%M:%S") + f".{utc.microsecond // 1000:03d}Z"
    if isinstance(value, _dt.timedelta):
        seconds = value.total_seconds()
        if seconds <= 0 or value.microseconds:
            raise ValueError(f"a duration must be a positive whole number of seconds (got {value!r})")
        return f"{int(seconds)}s"
    return value


def _fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in fields.items():
        if value is None:
            continue
        key = wire_name(name)
        if key in out:
            raise ValueError(f"field {key!r} given twice")
        out[key] = wire_value(value)
    return out


class Client:
    """One connection to an `entitled` server.

    Client()                              TCP to 127.0.0.1:7117
    Client("10.0.0.5", 7117)              TCP
    Client(unix_socket="/tmp/e.sock")     Unix domain socket
    Client(nodes=["10.0.0.5:7117", "10.0.0.6:7117"])   TCP to one node of a cluster, the others on failure
    timeout: seconds allowed to connect, and without progress while waiting for answers (None: no limit).
    tls: an ssl.SSLContext for a server started with --tls-cert (TCP only), such as
         ssl.create_default_context(cafile="server-ca.pem"); the host is checked against the certificate.
    token: authenticate with it at once (a server started with --auth); an unknown token raises
           EntitledError("unauthorized") and closes the client. Prefer reading it from the environment
           or a file to writing it in code.
    loading_wait: seconds to keep asking a starting server (one that answers "loading" while it loads
           its data; nothing was carried out) before returning or raising its "loading" answer: the
           client reconnects (the server closes those connections once it is ready) and sends the
           requests again, pausing 0.05 s, doubling up to 1 s. 0 or None: never.
    """

    def __init__(
        self,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        *,
        unix_socket: str | None = None,
        nodes: Iterable[str | tuple[str, int]] | None = None,
        timeout: float | None = 10.0,
        token: str | None = None,
        tls: "ssl.SSLContext | None" = None,
        loading_wait: float | None = 60.0,
    ):
        self.timeout = timeout
        self.loading_wait = loading_wait
        # How to connect again to the one address of a client without nodes= (after a "loading" answer).
        self._reopen: Any = None
        self._tls = tls
        self._buffer = bytearray()
        self._scanned = 0  # bytes of _buffer known to hold no "\n"
        self._pushes: collections.deque[dict] = collections.deque()
        self._next_id = 1
        #: The newest "seq" a write's answer on this client carried (None before any): give it as
        #: min_seq to a read elsewhere to see the write there.
        self.last_seq: int | None = None
        self._lock = threading.RLock()
        self._closed_reason: str | None = None
        self._closed_by_owner = False
        self._sock: socket.socket | None = None
        # With nodes=, the token is kept for the connections opened after a node drops one.
        self._token = token if nodes is not None else None
        self._nodes: list[tuple[str, int]] | None = None
        self._node = 0
        if nodes is not None:
            if unix_socket is not None:
                raise ValueError("give nodes= or unix_socket=, not both")
            self._nodes = [_parse_node(node) for node in nodes]
            if not self._nodes:
                raise ValueError("nodes= needs at least one \"host:port\" or (host, port)")
            # Each new Client starts at the next node: the clients of a process spread over every node.
            self._node = next(_NODE_ROTATION) % len(self._nodes)
            self._connect_to_a_node(self._node)
            return
        if unix_socket is not None:
            def open_unix() -> socket.socket:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    sock.settimeout(timeout)
                    sock.connect(unix_socket)
                except BaseException:
                    sock.close()
                    raise
                return sock
            self._reopen = (open_unix, f"unix {unix_socket}", token)
        else:
            self._reopen = (lambda: self._open_tcp(host, port), f"tcp {host}:{port}", token)
        self._attach(self._reopen[0](), self._reopen[1])
        if token is not None:
            try:
                self.auth(token)
            except BaseException:
                self.close()
                raise

    def _open_tcp(self, host: str, port: int) -> socket.socket:
        sock = socket.create_connection((host, port), timeout=self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self._tls is not None:
            try:
                sock = self._tls.wrap_socket(sock, server_hostname=host)  # handshakes within `timeout`
            except BaseException:
                sock.close()
                raise
        return sock

    def _attach(self, sock: socket.socket, address: str) -> None:
        sock.setblocking(False)
        self.address = address
        self._sock = sock
        self._selector = selectors.DefaultSelector()
        self._selector.register(sock, selectors.EVENT_READ)
        self._buffer = bytearray()
        self._scanned = 0
        self._closed_reason = None

    def _connect_to_a_node(self, start: int) -> None:
        """Connects to the first node, from `start` on, that accepts (and takes the token); raises
        NoNodeAvailableError naming each node's failure when none does. A refused token is not a node's
        failure: it is raised at once (every node would refuse it)."""
        assert self._nodes is not None
        failures: list[tuple[str, BaseException]] = []
        for step in range(len(self._nodes)):
            index = (start + step) % len(self._nodes)
            host, port = self._nodes[index]
            try:
                sock = self._open_tcp(host, port)
            except OSError as error:
                failures.append((f"{host}:{port}", error))
                continue
            self._attach(sock, f"tcp {host}:{port}")
            self._node = index
            if self._token is not None:
                out, ids, _ = self._encode([{"op": "auth", "token": self._token}])
                try:
                    answer = self._exchange(sock, out, ids)[0]
                except (ConnectionClosedError, TimeoutError) as error:
                    failures.append((f"{host}:{port}", error))
                    continue
                if answer.get("ok") is not True:
                    self._shut("the server refused the token")
                    raise _error_of(answer)
            return
        raise NoNodeAvailableError(failures)

    # -- lifecycle -------------------------------------------------------------------------------------

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the connection (idempotent). Queued pushed lines stay readable with next_push()."""
        self._closed_by_owner = True
        self._shut("the client closed the connection")

    @property
    def closed(self) -> bool:
        """Whether the client can no longer be used: after close(); without nodes=, also once the
        connection dropped (with nodes=, the next request connects to another node)."""
        return self._closed_by_owner or (self._sock is None and self._nodes is None)

    @property
    def node(self) -> tuple[str, int] | None:
        """With nodes=: the (host, port) of the node the client is connected to, or was last."""
        return self._nodes[self._node] if self._nodes is not None else None

    def fileno(self) -> int:
        """The socket's file descriptor, for select(): readable means a pushed line (or more) arrived."""
        if self._sock is None:
            raise ConnectionClosedError(self._closed_reason or "the connection is closed")
        return self._sock.fileno()

    def _shut(self, reason: str) -> None:
        sock = self._sock
        if sock is None:
            return
        self._sock = None
        self._closed_reason = reason
        try:
            self._selector.unregister(sock)
        except (KeyError, ValueError):
            pass
        self._selector.close()
        sock.close()

    def _require_open(self) -> socket.socket:
        if self._sock is None:
            raise ConnectionClosedError(self._closed_reason or "the connection is closed")
        return self._sock

    # -- requests --------------------------------------------------------------------------------------

    def request(self, op: str, **fields: Any) -> dict:
        """Sends one request and returns its answer (a dict with "ok": true).
        Raises EntitledError when the answer is {"ok": false, ...}."""
        answer = self.pipeline([{"op": op, **fields}])[0]
        if answer.get("ok") is not True:
            raise _error_of(answer)
        return answer

    def pipeline(self, requests: Iterable[Mapping[str, Any]]) -> list[dict]:
        """Sends every request without waiting, then returns their answers in the same order.

        Each request is a mapping with "op" and its fields (names as for request()). Error answers are
        returned as they are ({"ok": false, "error": {...}}), not raised, so one failure does not hide the
        other answers; raise_for() turns one into an EntitledError. Sending and reading overlap, so a
        pipeline of any length cannot deadlock on the server's flow control.

        With nodes=: a pipeline of reads only (READ_OPERATIONS) whose connection drops or times out before
        every answer came is sent again, whole, to the next node, at most once per node; any other
        pipeline raises, and the next call connects to the next node."""
        with self._lock:
            requests = list(requests)
            answers = self._pipeline_once(requests)
            if not self.loading_wait or not answers or not all(_code_of(a) == "loading" for a in answers):
                return answers
            # A starting server: nothing was carried out. Ask again on a new connection until it answers,
            # or the time is up. A read whose connection closes meanwhile (the server closing its loading
            # connections as it becomes ready) is asked again too; a write is not (it would not be known
            # whether it was made).
            deadline = time.monotonic() + self.loading_wait
            pause = 0.05
            reads = all(request.get("op") in READ_OPERATIONS for request in requests)
            while time.monotonic() + pause < deadline:
                time.sleep(pause)
                pause = min(pause * 2, 1.0)
                try:
                    self._reconnect()
                    answers = self._pipeline_once(requests)
                except (ConnectionClosedError, ConnectionRefusedError):
                    if not reads:
                        raise
                    continue
                if not all(_code_of(a) == "loading" for a in answers):
                    return answers
            return answers

    def _reconnect(self) -> None:
        """Drops the connection and opens a new one to the same server (with nodes=, the same node
        first), authenticating again when the client has a token."""
        if self._closed_by_owner:
            raise ConnectionClosedError(self._closed_reason or "the connection is closed")
        self._shut("connecting again to a starting server")
        if self._nodes is not None:
            self._connect_to_a_node(self._node)
            return
        opener, address, token = self._reopen
        self._attach(opener(), address)
        if token is not None:
            out, ids, _ = self._encode([{"op": "auth", "token": token}])
            answer = self._exchange(self._require_open(), out, ids)[0]
            if answer.get("ok") is not True and _code_of(answer) != "loading":
                self._shut("the server refused the token")
                raise _error_of(answer)

    def _pipeline_once(self, requests: list[Mapping[str, Any]]) -> list[dict]:
        """`pipeline` without asking a starting server again."""
        if self._nodes is None:
            sock = self._require_open()
            out, ids, _ = self._encode(requests)
            return self._note_seq(self._exchange(sock, out, ids)) if ids else []
        out, ids, ops = self._encode(requests)
        if not ids:
            return []
        if self._closed_by_owner:
            raise ConnectionClosedError(self._closed_reason or "the connection is closed")
        if self._sock is None:
            self._connect_to_a_node(self._node + 1)
        reads = all(op in READ_OPERATIONS for op in ops)
        attempts = 1
        while True:
            try:
                return self._note_seq(self._exchange(self._require_open(), out, ids))
            except (ConnectionClosedError, TimeoutError) as error:
                too_large = any(_code_of(a) == "too_large" for a in getattr(error, "answers", []))
                if not reads or too_large or attempts >= len(self._nodes) or self._closed_by_owner:
                    raise
                attempts += 1
                self._connect_to_a_node(self._node + 1)

    def _note_seq(self, answers: list[dict]) -> list[dict]:
        """Keeps the newest "seq" the answers carry as last_seq, and returns them."""
        for answer in answers:
            seq = answer.get("seq")
            if isinstance(seq, int) and not isinstance(seq, bool) and (self.last_seq is None or seq > self.last_seq):
                self.last_seq = seq
        return answers

    def _encode(self, requests: Iterable[Mapping[str, Any]]) -> tuple[bytes, list[Any], list[Any]]:
        """The requests as lines, each with an id (the client's counter unless given); their ids; their ops."""
        lines: list[bytes] = []
        ids: list[Any] = []
        ops: list[Any] = []
        for req in requests:
            body = _fields(req)
            if not isinstance(body.get("op"), str):
                raise ValueError(f"a request needs an \"op\" string: {dict(req)!r}")
            if "id" not in body:
                body["id"] = self._next_id
                self._next_id += 1
            ids.append(body["id"])
            ops.append(body["op"])
            text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
            lines.append(text.encode("utf-8") + b"\n")
        return b"".join(lines), ids, ops

    def next_push(self, timeout: float | None = None) -> dict | None:
        """Returns the oldest pushed line ({"push": "access", "cause": ..., "membership": {...}}), waiting
        up to `timeout` seconds for one (None: as long as it takes; 0: only what already arrived).
        Returns None when none came in time. Raises ConnectionClosedError when none is queued and the
        connection is closed."""
        with self._lock:
            deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
            while True:
                if self._pushes:
                    return self._pushes.popleft()
                line = self._pop_line()
                if line is not None:
                    self._route(line, None)
                    continue
                sock = self._require_open()
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining < 0:
                    return None
                if not self._selector.select(remaining):
                    if remaining is not None:
                        return None
                    continue
                self._receive(sock, answers=None)

    @property
    def pending_pushes(self) -> int:
        """How many pushed lines are queued (read from the socket, not yet returned by next_push)."""
        return len(self._pushes)

    @staticmethod
    def raise_for(answer: Mapping[str, Any]) -> dict:
        """Returns `answer` when it is a success, raises its EntitledError otherwise."""
        if answer.get("ok") is not True:
            raise _error_of(answer)
        return dict(answer)

    # -- the exchange ----------------------------------------------------------------------------------

    def _exchange(self, sock: socket.socket, out: bytes, ids: list[Any]) -> list[dict]:
        answers: list[dict] = []
        view = memoryview(out)
        sent = 0
        send_failed = False
        deadline = self._deadline()
        try:
            while len(answers) < len(ids):
                line = self._pop_line()
                if line is not None:
                    self._route(line, answers, ids)
                    continue
                want_write = sent < len(out) and not send_failed
                events = selectors.EVENT_READ | (selectors.EVENT_WRITE if want_write else 0)
                self._selector.modify(sock, events)
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    self._shut("timed out waiting for an answer")
                    raise TimeoutError(
                        f"no answer from {self.address} within {self.timeout} s "
                        f"({len(answers)} of {len(ids)} answers received); the connection is closed"
                    )
                for _key, mask in self._selector.select(remaining):
                    if mask & selectors.EVENT_WRITE and sent < len(out):
                        try:
                            n = sock.send(view[sent : sent + _READ_SIZE])
                        except (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                            n = 0
                        except OSError:
                            # The server closed (e.g. after too_large); read the answers it did send.
                            send_failed = True
                            n = 0
                        if n:
                            sent += n
                            deadline = self._deadline()
                    if mask & selectors.EVENT_READ:
                        if self._receive(sock, answers):
                            deadline = self._deadline()
            return answers
        finally:
            if self._sock is not None:
                self._selector.modify(self._sock, selectors.EVENT_READ)

    def _deadline(self) -> float | None:
        return None if self.timeout is None else time.monotonic() + self.timeout

    def _receive(self, sock: socket.socket, answers: list[dict] | None) -> bool:
        """Reads what is available. Returns whether bytes arrived; raises when the connection dropped."""
        try:
            data = sock.recv(_READ_SIZE)
            # TLS: a record may hold more than one read takes, and the socket's descriptor does not
            # show what the TLS layer keeps; take it all now, or the selector would wait for nothing.
            while data and isinstance(sock, ssl.SSLSocket) and sock.pending():
                data += sock.recv(sock.pending())
        except (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return False
        except OSError as error:
            self._shut(f"the connection to {self.address} failed: {error}")
            raise ConnectionClosedError(self._closed_reason, answers) from error
        if not data:
            self._shut(f"the server at {self.address} closed the connection")
            raise ConnectionClosedError(self._closed_reason, answers)
        self._buffer += data
        return True

    def _pop_line(self) -> bytes | None:
        end = self._buffer.find(b"\n", self._scanned)
        if end < 0:
            self._scanned = len(self._buffer)
            return None
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        self._scanned = 0
        return line

    def _route(self, line: bytes, answers: list[dict] | None, ids: list[Any] | None = None) -> None:
        try:
            message = json.loads(line)
        except ValueError as error:
            self._fail(f"the server sent a line that is not JSON: {line[:200]!r} ({error})")
        if not isinstance(message, dict):
            self._fail(f"the server sent a line that is not a JSON object: {line[:200]!r}")
        if "push" in message and "ok" not in message:
            self._pushes.append(message)
            return
        if "ok" not in message:
            self._fail(f"the server sent a line with neither \"ok\" nor \"push\": {line[:200]!r}")
        if answers is None or ids is None:
            self._fail(f"the server sent an answer to no request: {line[:200]!r}")
        expected = ids[len(answers)]
        if "id" in message:
            if message["id"] != expected:
                self._fail(f"answer id {message['id']!r} where {expected!r} was expected")
        elif message.get("ok") is not False:
            self._fail(f"an answer without the id {expected!r} that was sent: {line[:200]!r}")
        answers.append(message)
        if _code_of(message) == "too_large":
            # The server closes the connection after too_large; nothing after it will be answered.
            self._shut("the server closed the connection after a too_large answer")
            if len(answers) < len(ids):
                raise ConnectionClosedError(
                    f"{self._closed_reason}: {len(ids) - len(answers)} later requests got no answer",
                    answers,
                )

    def _fail(self, message: str) -> None:
        self._shut(message)
        raise ProtocolError(message)

    # -- typed operations (PROTOCOL.md section 6) ------------------------------------------------------

    def _call(self, op: str, fields: dict[str, Any], extra: Mapping[str, Any]) -> dict:
        _refuse_unknown(op, fields, extra)
        return self.request(op, **fields, **extra)

    def ping(self, **extra: Any) -> dict:
        return self._call("ping", {}, extra)

    def hello(self, **extra: Any) -> dict:
        """{"protocol": 5, "server": "entitled 0.1.0", "operations": [...], "fields": {op: [...]},
        "authRequired": bool}."""
        return self._call("hello", {}, extra)

    def auth(self, token: str, **extra: Any) -> dict:
        """Authenticates the connection: {"name": ..., "role": "check" | "writer" | "admin"}. The token is sent once
        and kept nowhere by this client."""
        return self._call("auth", {"token": token}, extra)

    def grant(
        self,
        product: str,
        *,
        user: str | None = None,
        device: str | None = None,
        plan: str | None = None,
        source: str | None = None,
        expires_at: str | _dt.datetime | None = None,
        duration: str | _dt.timedelta | None = None,
        purchased_at: str | _dt.datetime | None = None,
        renews_count: int | None = None,
        will_renew: bool | None = None,
        period_type: str | None = None,
        environment: str | None = None,
        ownership: str | None = None,
        grant_type: str | None = None,
        transaction_id: str | None = None,
        original_transaction_id: str | None = None,
        idempotency_key: str | None = None,
        reason: str | None = None,
        **extra: Any,
    ) -> dict:
        """Creates a membership. Returns the answer: {"seq": N, "membership": {...}} (+ "idempotentReplay": true).
        For a purchase imported after the fact, purchased_at is when the store sold it (the membership's
        createdAt, what duration counts from; at most an hour ahead of the server's clock) and
        renews_count the renewals the store made before (0 to 100000)."""
        return self._call("grant", dict(
            product=product, user=user, device=device, plan=plan, source=source, expires_at=expires_at,
            duration=duration, purchased_at=purchased_at, renews_count=renews_count, will_renew=will_renew,
            period_type=period_type, environment=environment,
            ownership=ownership, grant_type=grant_type, transaction_id=transaction_id,
            original_transaction_id=original_transaction_id, idempotency_key=idempotency_key,
            reason=reason,
        ), extra)

    def check(
        self,
        *,
        user: str | None = None,
        device: str | None = None,
        product: str | None = None,
        entitlement: str | None = None,
        at: str | _dt.datetime | None = None,
        min_seq: int | None = None,
        **extra: Any,
    ) -> CheckResult:
        """Whether the subject has access (to `product`, to `entitlement`, or to anything); with min_seq,
        once the server has applied that change (EntitledError "stale" if it does not in time)."""
        answer = self._call("check", dict(
            user=user, device=device, product=product, entitlement=entitlement, at=at, min_seq=min_seq,
        ), extra)
        return CheckResult(active=answer["active"] is True, expires_at=answer.get("expiresAt"))

    def claim(self, *, device: str, user: str, reason: str | None = None, **extra: Any) -> int:
        """Gives the device's unclaimed guest memberships to the user. Returns how many moved."""
        return self._call("claim", dict(device=device, user=user, reason=reason), extra)["claimed"]

    def revoke(self, membership: str, *, reason: str | None = None, **extra: Any) -> dict:
        """Revokes a membership. Returns the membership."""
        return self._call("revoke", dict(membership=membership, reason=reason), extra)["membership"]

    def extend(
        self,
        membership: str,
        *,
        duration: str | _dt.timedelta | None = None,
        expires_at: str | _dt.datetime | None = None,
        reason: str | None = None,
        **extra: Any,
    ) -> dict:
        """Moves a membership's expiry later by hand (an admin operation): `duration` later than its expiry
        (or than now, once it has expired), or to `expires_at`, later than both; give one of the two.
        Returns the answer: {"seq": N, "membership": {...}, "previousExpiresAt": "..."}. A duration sent
        twice extends twice: to retry safely, send expires_at (a repeat is refused, bad_request)."""
        return self._call("extend", dict(
            membership=membership, duration=duration, expires_at=expires_at, reason=reason,
        ), extra)

    def memberships(
        self,
        *,
        user: str | None = None,
        device: str | None = None,
        transaction_id: str | None = None,
        original_transaction_id: str | None = None,
        source: str | None = None,
        ended_after: str | _dt.datetime | None = None,
        at: str | _dt.datetime | None = None,
        min_seq: int | None = None,
        limit: int | None = None,
        after: str | None = None,
        **extra: Any,
    ) -> Page:
        """One page of the memberships the subject sees, newest first (with min_seq: as for check); or,
        instead of a subject, of the memberships holding a store transaction (transaction_id) or those of
        the subscription a transaction started (original_transaction_id); or of a source (source, oldest
        first, for a reconciliation; with ended_after, those whose access had not ended before it). At
        most `limit` (1 to 1000, default 100), after `after` (the .next of the page before). Returns a
        Page: .next is None on the last page; a source's page may be empty and still have a .next.
        iter_memberships() returns them all."""
        fields = dict(
            user=user, device=device, transaction_id=transaction_id, original_transaction_id=original_transaction_id,
            source=source, ended_after=ended_after, at=at, min_seq=min_seq, limit=limit, after=after,
        )
        answer = self._call("memberships", fields, extra)
        return Page(answer["memberships"], answer.get("next"))

    def iter_memberships(
        self,
        *,
        user: str | None = None,
        device: str | None = None,
        transaction_id: str | None = None,
        original_transaction_id: str | None = None,
        source: str | None = None,
        ended_after: str | _dt.datetime | None = None,
        at: str | _dt.datetime | None = None,
        min_seq: int | None = None,
        page_size: int | None = None,
        after: str | None = None,
        **extra: Any,
    ) -> Iterator[dict]:
        """Every membership memberships() lists, in its order (a source's oldest first): asks for a page of `page_size` (the
        server's default, 100, when None) at a time, from `after` on, and follows each page's .next to
        the last page. Misspelt keywords raise TypeError at once, before anything is sent."""
        fields = dict(
            user=user, device=device, transaction_id=transaction_id, original_transaction_id=original_transaction_id,
            source=source, ended_after=ended_after, at=at, min_seq=min_seq, page_size=page_size, after=after,
        )
        _refuse_unknown("iter_memberships", fields, extra)
        page_size = extra.pop("pageSize", page_size)  # the protocol's spelling, as every method takes it
        query = dict(user=user, device=device, transaction_id=transaction_id,
                     original_transaction_id=original_transaction_id, source=source, ended_after=ended_after,
                     at=at, min_seq=min_seq, **extra)
        return self._follow(lambda cursor: self.memberships(limit=page_size, after=cursor, **query), after,
                            empty_pages=source is not None)

    def _follow(self, fetch: Any, after: str | None, empty_pages: bool = False) -> Iterator[dict]:
        """Yields the items of fetch(after), then of fetch(page.next), ... until a page without next. A
        next that does not move on, or that follows an empty page, is a server fault, except that a page
        of a source's listing (empty_pages) may be empty and still have a next: it looked at as many
        memberships as one page may."""
        cursor = after
        while True:
            page = fetch(cursor)
            yield from page
            if page.next is None:
                return
            if (not page and not empty_pages) or page.next == cursor:
                raise ProtocolError(f"a page ({len(page)} items) whose \"next\" {page.next!r} does not move on from {cursor!r}")
            cursor = page.next

    def define(
        self, entitlement: str, products: Iterable[str], *, reason: str | None = None, **extra: Any
    ) -> dict:
        """Sets an entitlement's products. Returns {"entitlement": ..., "products": [sorted]}."""
        return self._call("define", dict(
            entitlement=entitlement, products=list(products), reason=reason,
        ), extra)

    def undefine(self, entitlement: str, *, reason: str | None = None, **extra: Any) -> dict:
        """Removes an entitlement from the catalog (an admin operation). Returns {"entitlement": ...,
        "products": [the products it had]}; EntitledError("not_found") when the catalog has no such
        entitlement."""
        return self._call("undefine", dict(entitlement=entitlement, reason=reason), extra)

    def erase(self, *, user: str | None = None, device: str | None = None, reason: str | None = None,
              **extra: Any) -> dict:
        """Erases a person (an admin operation; the GDPR's right to be forgotten): the user's memberships,
        the device's guest purchases, their audit entries and idempotency keys; other users' purchases on
        the device lose the device. Give user, device or both. Returns the "erased" object:
        {"memberships": N, "historyEntries": M}. The reason is kept in the audit trail, which names no
        one: give a ticket number, not the person."""
        return self._call("erase", dict(user=user, device=device, reason=reason), extra)["erased"]

    def catalog(self, **extra: Any) -> dict[str, list[str]]:
        """Every entitlement and its products."""
        return self._call("catalog", {}, extra)["entitlements"]

    def snapshot(self, **extra: Any) -> dict:
        """Writes a snapshot now. Returns {"file", "sequence", "bytes", "durationMs", "memberships"}."""
        return self._call("snapshot", {}, extra)

    def stats(self, **extra: Any) -> dict:
        """The server's counters since it started (an admin operation). Returns the answer: {"server",
        "startedAt", "uptimeSeconds", "connections", "requests" ({"total", "invalid", "byOp"}), "errors"
        ({"total", "byCode"}), "latencyMicros" ({op: {"count", "p50", "p90", "p99", "p999", "max"}}),
        "store", "persistence" (None without a data directory), or on a node of a cluster "replication"
        instead ({"connected", "writable", "appliedSequence", "lagChanges", ...})}."""
        return self._call("stats", {}, extra)

    def reload(self, **extra: Any) -> dict:
        """Has the server re-read its auth file (--auth), as SIGHUP does (an admin operation). Returns
        {"tokens": N}, how many tokens are in force now. A broken file raises EntitledError and the
        tokens in force stay in force."""
        return self._call("reload", {}, extra)

    def event(
        self,
        membership: str,
        type: str,
        *,
        event_id: str,
        event_time: str | _dt.datetime,
        expires_at: str | _dt.datetime | None = None,
        grace_period_expires_at: str | _dt.datetime | None = None,
        product: str | None = None,
        transaction_id: str | None = None,
        reason: str | None = None,
        **extra: Any,
    ) -> dict:
        """Applies a store's lifecycle event. Returns {"membership", "applied"} (+ "reason" when ignored:
        "duplicate", "out_of_order" or "revoked"). An ignored event is not an error."""
        return self._call("event", dict(
            membership=membership, type=type, event_id=event_id, event_time=event_time,
            expires_at=expires_at, grace_period_expires_at=grace_period_expires_at, product=product,
            transaction_id=transaction_id, reason=reason,
        ), extra)

    def customer(self, *, user: str | None = None, device: str | None = None, min_seq: int | None = None,
                 **extra: Any) -> dict:
        """The CustomerInfo view: entitlements, activeProducts, allPurchasedProductIds, ... (with min_seq:
        as for check)."""
        return self._call("customer", dict(user=user, device=device, min_seq=min_seq), extra)["customer"]

    def history(
        self,
        *,
        user: str | None = None,
        device: str | None = None,
        entitlement: str | None = None,
        erasures: bool | None = None,
        limit: int | None = None,
        after: str | None = None,
        **extra: Any,
    ) -> Page:
        """One page of the audit trail of a subject or an entitlement, newest first; with erasures=True, of
        the erasures (entries with action "erase", naming no one). At most `limit` entries (1 to 1000,
        default 100), after `after` (the .next of the page before, an opaque cursor passed back unchanged).
        Returns a Page: .next is None on the last page. iter_history() returns every entry."""
        answer = self._call("history", dict(
            user=user, device=device, entitlement=entitlement, erasures=erasures, limit=limit, after=after,
        ), extra)
        return Page(answer["history"], answer.get("next"))

    def iter_history(
        self,
        *,
        user: str | None = None,
        device: str | None = None,
        entitlement: str | None = None,
        erasures: bool | None = None,
        page_size: int | None = None,
        after: str | None = None,
        **extra: Any,
    ) -> Iterator[dict]:
        """Every entry history() lists, newest first: asks for a page of `page_size` (the server's
        default, 100, when None) at a time, from `after` on, and follows each page's .next to the last
        page. Misspelt keywords raise TypeError at once, before anything is sent."""
        fields = dict(user=user, device=device, entitlement=entitlement, erasures=erasures, page_size=page_size,
                      after=after)
        _refuse_unknown("iter_history", fields, extra)
        page_size = extra.pop("pageSize", page_size)
        query = dict(user=user, device=device, entitlement=entitlement, erasures=erasures, **extra)
        return self._follow(lambda cursor: self.history(limit=page_size, after=cursor, **query), after)

    def watch(
        self, *, user: str | None = None, device: str | None = None, all: bool | None = None, **extra: Any
    ) -> int:
        """Adds a watch to this connection; pushed lines then arrive through next_push().
        Returns how many watches the connection holds. Watching every subject (all=True) needs the admin
        role (forbidden with a check token) and is refused over_limit while 16 connections hold one."""
        return self._call("watch", dict(user=user, device=device, all=all), extra)["watches"]

    def unwatch(
        self, *, user: str | None = None, device: str | None = None, all: bool | None = None, **extra: Any
    ) -> int:
        """Removes a watch (with no target: every watch). Returns how many watches remain."""
        return self._call("unwatch", dict(user=user, device=device, all=all), extra)["watches"]


def _refuse_unknown(op: str, fields: Mapping[str, Any], extra: Mapping[str, Any]) -> None:
    """Raises TypeError for a keyword the typed method does not take, before anything is sent: a misspelt
    field must not reach the server (which refuses it too, but only after a round trip, and a server of
    protocol version 1 skipped it silently). `id`, and a parameter's protocol spelling (expiresAt for
    expires_at), are the extra keywords allowed."""
    taken = {wire_name(name): name for name in fields}
    for name in extra:
        if name == "id" or wire_name(name) in taken:
            continue
        known = list(fields) + ["id"]
        folded = {wire_name(k).lower(): k for k in known}
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
        if not close and wire_name(name).lower() in folded:
            close = [folded[wire_name(name).lower()]]
        if not close:
            close = [folded[m] for m in difflib.get_close_matches(wire_name(name).lower(), list(folded), n=1, cutoff=0.75)]
        hint = f" (did you mean {close[0]!r}?)" if close else f"; {op}() takes {', '.join(known)}"
        raise TypeError(f"{op}() got an unexpected keyword argument {name!r}{hint}")


def _parse_node(node: str | tuple[str, int]) -> tuple[str, int]:
    """("10.0.0.5", 7117), "10.0.0.5:7117" or "[::1]:7117" -> (host, port)."""
    if isinstance(node, tuple):
        host, port = node
        return str(host), int(port)
    host, separator, port = str(node).rpartition(":")
    if not separator or not host or not port.isdigit():
        raise ValueError(f"a node is \"host:port\" or (host, port), not {node!r}")
    return host.strip("[]"), int(port)


def _code_of(answer: Mapping[str, Any]) -> str | None:
    error = answer.get("error")
    return error.get("code") if isinstance(error, dict) else None


def _error_of(answer: Mapping[str, Any]) -> EntitledError:
    error = answer.get("error")
    if not isinstance(error, dict):
        return EntitledError("unknown", f"an unsuccessful answer without an error: {answer!r}", answer)
    return EntitledError(str(error.get("code")), str(error.get("message", "")), answer)
