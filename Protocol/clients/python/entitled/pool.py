"""The connections of a Client: one or more nodes, connections opened on demand, reconnects with backoff,
and the rules of what is sent again (PROTOCOL.md, "What an answer means"; OPERATIONS.md, "Clients of
several nodes").

No thread of its own: a connection that closed (the server's idle timeout, a restart) is found closed by
its reader thread at once, and the next call opens another. What a call does when its connection drops:

- a request not yet written (the connection was already closed) goes on a new connection: it was never
  sent, so this is safe for writes too;
- a read (READ_OPERATIONS) that was sent is sent again once on a new connection, to another node when
  there are several (at most once per node);
- a write that was sent is not sent again: its ConnectionClosedError says it may have been applied.

A read that waits (changes with wait) holds up the lines sent after it on its connection, so it is sent
`alone`: on a connection leased to it for the call, which no other call uses meanwhile, then kept for the
next such call (at most _MAX_IDLE_ALONE wait so).
"""

from __future__ import annotations

import concurrent.futures
import itertools
import os
import random
import ssl
import threading
import time
from typing import Any, Callable, Mapping, Sequence

from .connection import Connection, open_socket
from .errors import (CannotConnectError, ClientError, ConnectionClosedError, LoadingError, NoNodeAvailableError,
                     RequestTimeoutError, error_from_answer)
from .wire import Address

__all__ = ["Pool", "Backoff"]

# Where the next pool starts: the clients of a process spread over the nodes.
_ROTATION = itertools.count()
# Connections of finished waiting reads kept open for the next (more are closed).
_MAX_IDLE_ALONE = 4
_WRITE_ADVICE = ("the write may have been carried out: send it again with the same idempotency key (grant's "
                 "idempotency_key, event's event_id), or read to find out")


class Backoff:
    """Exponential backoff with full jitter: attempt n (from 0) waits a random time up to
    min(maximum, initial * 2**n)."""

    def __init__(self, initial: float = 0.05, maximum: float = 2.0):
        self.initial = initial
        self.maximum = maximum

    def delay(self, attempt: int) -> float:
        return random.uniform(0, min(self.maximum, self.initial * 2 ** min(attempt, 32)))


class _Node:
    """A node and its reconnect backoff: after a failed connect it is not tried again before `retry_at`."""

    def __init__(self, address: Address):
        self.address = address
        self.failures = 0
        self.retry_at = 0.0
        self.last_error: BaseException | None = None

    def failed(self, error: BaseException, backoff: Backoff) -> None:
        self.last_error = error
        self.retry_at = time.monotonic() + backoff.delay(self.failures)
        self.failures += 1

    def succeeded(self) -> None:
        self.failures = 0
        self.retry_at = 0.0


class _Slot:
    """A place for one connection, belonging to a node; the connection goes to another node while its own
    is down, and comes back to it when it is opened again."""

    def __init__(self, home: int):
        self.home = home
        self.connection: Connection | None = None
        self.lock = threading.Lock()


class _Waiting(CannotConnectError):
    """A node not tried because it is in its backoff after a failed connect."""

    def __init__(self, node: _Node, remaining: float):
        ClientError.__init__(self, f"not tried for {remaining:.2f} s more after it failed: {node.last_error}")
        self.address = str(node.address)
        self.reason = node.last_error


class Pool:
    """Connections to one or more nodes, shared by threads. `execute` sends requests on one connection and
    applies the retry rules; `open` opens a connection of its own (for a watch)."""

    def __init__(self, addresses: Sequence[Address], *, connections_per_node: int = 1, timeout: float | None = 10.0,
                 token: str | None = None, tls: ssl.SSLContext | None = None, loading_wait: float | None = 60.0,
                 backoff: Backoff | None = None):
        if not addresses:
            raise ValueError("give at least one node")
        if connections_per_node < 1:
            raise ValueError("connections_per_node must be at least 1")
        self.nodes = [_Node(address) for address in addresses]
        self.timeout = timeout
        self.loading_wait = loading_wait
        self.backoff = backoff or Backoff()
        self._token = token
        self._tls = tls
        start = next(_ROTATION)
        count = len(self.nodes)
        self._slots = [_Slot((start + i) % count) for i in range(count * connections_per_node)]
        self._turn = itertools.count()
        self._closed = False
        self._pid = os.getpid()
        self.last_address: Address | None = None
        # Connections for calls sent alone (waiting reads): every one open, and those free for the next call.
        self._alone_lock = threading.Lock()
        self._alone: set[Connection] = set()
        self._idle_alone: list[Connection] = []

    # -- choosing a connection -----------------------------------------------------------------------------

    def connection(self, avoid: Sequence[Address] = ()) -> Connection:
        """An open connection, preferring nodes not in `avoid`: an open one, else a new one in the next slot
        that has none. Raises CannotConnectError / NoNodeAvailableError, or the error of a refused token."""
        if self._closed:
            raise ConnectionClosedError("the client is closed")
        if os.getpid() != self._pid:
            self._forget_after_fork()
        avoided = set(avoid) if len(set(avoid)) < len(self.nodes) else set()
        turn = next(self._turn)
        count = len(self._slots)
        order = [self._slots[(turn + k) % count] for k in range(count)]

        def usable(connection: Connection | None) -> bool:
            return connection is not None and not connection.closed and connection.address not in avoided

        # Round robin over the slots, opening a slot's connection when its turn comes and its node may be
        # tried; else any open connection; else a new one wherever a node accepts.
        first = order[0]
        home = self.nodes[first.home]
        if usable(first.connection):
            return first.connection  # type: ignore[return-value]
        if first.connection is None or first.connection.closed:
            if home.address not in avoided and home.retry_at <= time.monotonic():
                return self._fill(first, avoided)
        for slot in order[1:]:
            if usable(slot.connection):
                return slot.connection  # type: ignore[return-value]
        empty = [slot for slot in order if slot.connection is None or slot.connection.closed]
        return self._fill(empty[0] if empty else first, avoided)

    def _fill(self, slot: _Slot, avoided: set) -> Connection:
        with slot.lock:
            connection = slot.connection
            if connection is not None and not connection.closed and connection.address not in avoided:
                return connection  # another thread opened it meanwhile
            connection = self.open(slot.home, avoided)
            slot.connection = connection
        return connection

    def open(self, start: int, avoid: set = frozenset(), on_push: Callable[[dict], None] | None = None,
             on_close: Callable[[ClientError], None] | None = None, *, only: bool = False) -> Connection:
        """Connects to the first node from `start` on (skipping those in `avoid` and those in their backoff)
        and authenticates. A refused token, a TLS failure or a node's loading answer is raised at once.
        only=True tries node `start` alone (an export's pages must all go to the node that took it)."""
        failures: list[tuple[str, BaseException]] = []
        count = len(self.nodes)
        ring = [self.nodes[(start + step) % count] for step in range(1 if only else count)]
        # Nodes to avoid (a read's connection to them dropped) are tried last, not never.
        for node in [node for node in ring if node.address not in avoid] + [node for node in ring if node.address in avoid]:
            remaining = node.retry_at - time.monotonic()
            if remaining > 0:
                failures.append((str(node.address), _Waiting(node, remaining)))
                continue
            try:
                connection = Connection(open_socket(node.address, self.timeout, self._tls), node.address,
                                        on_push=on_push or _drop, on_close=on_close)
            except CannotConnectError as error:
                node.failed(error.reason, self.backoff)
                failures.append((str(node.address), error.reason))
                continue
            if self._token is not None:
                self._authenticate(connection)
            node.succeeded()
            return connection
        if len(ring) == 1:
            address, reason = failures[0]
            raise CannotConnectError(address, reason)
        raise NoNodeAvailableError(failures)

    def _authenticate(self, connection: Connection) -> None:
        try:
            answer = connection.call({"op": "auth", "token": self._token}, self.timeout)
        except BaseException:
            connection.close()
            raise
        if answer.get("ok") is not True:
            connection.close()
            raise error_from_answer(answer, "auth")  # never holds the token: the server does not echo it

    def _forget_after_fork(self) -> None:
        """In a child process the connections (and their reader threads) are the parent's: open new ones."""
        self._pid = os.getpid()
        for slot in self._slots:
            slot.connection = None
            slot.lock = threading.Lock()
        self._alone_lock = threading.Lock()
        self._alone = set()
        self._idle_alone = []

    def index_of(self, address: Address) -> int:
        """The index of the node at `address`, to open() a connection to that node again."""
        for index, node in enumerate(self.nodes):
            if node.address == address:
                return index
        raise ValueError(f"{address} is not a node of this client")

    def _lease(self, avoid: Sequence[Address]) -> Connection:
        """A connection for one call sent alone: a free one kept from an earlier such call, else a new one
        (to the next node in turn, preferring nodes not in `avoid`). No other call uses it until given back."""
        if self._closed:
            raise ConnectionClosedError("the client is closed")
        if os.getpid() != self._pid:
            self._forget_after_fork()
        avoided = set(avoid) if len(set(avoid)) < len(self.nodes) else set()
        with self._alone_lock:
            self._alone = {connection for connection in self._alone if not connection.closed}  # dropped ones
            while self._idle_alone:
                connection = self._idle_alone.pop()
                if not connection.closed and connection.address not in avoided:
                    return connection
                self._alone.discard(connection)
                connection.close()
        connection = self.open(self.next_start(), avoided)
        with self._alone_lock:
            self._alone.add(connection)
        if self._closed:  # closed meanwhile: close() did not see this one
            connection.close()
        return connection

    def _give_back(self, connection: Connection) -> None:
        """Keeps a leased connection for the next call sent alone, or closes it."""
        with self._alone_lock:
            if not connection.closed and not self._closed and len(self._idle_alone) < _MAX_IDLE_ALONE:
                self._idle_alone.append(connection)
                return
            self._alone.discard(connection)
        connection.close()

    def _drop_leased(self, connection: Connection) -> None:
        """Closes a leased connection that must not be used again (its call timed out: a waiting read may
        still be in flight on it)."""
        with self._alone_lock:
            self._alone.discard(connection)
        connection.close()

    # -- executing requests ----------------------------------------------------------------------------------

    def execute(self, requests: list[Mapping[str, Any]], *, reads: bool, timeout: float | None = None,
                retry_stale: bool = False, alone: bool = False) -> list[dict]:
        """Sends `requests` on one connection and returns their answers in order (error answers included).
        Each attempt may take `timeout` seconds (the pool's when None). See the module's docstring for what
        is sent again; a "loading" answer is waited out for loading_wait seconds. alone=True sends them on
        a connection no other call uses meanwhile (a waiting read)."""
        timeout = self.timeout if timeout is None else timeout
        tried: list[Address] = []
        retries = max(1, len(self.nodes) - 1) if reads else 0
        loading_until: float | None = None
        pause = 0.05
        unsent = 0  # attempts whose connection was closed before anything was written
        while True:
            try:
                connection = self._lease(tried) if alone else self.connection(tried)
                futures = connection.submit(requests)
            except ConnectionClosedError:
                unsent += 1
                if self._closed or unsent > 3:
                    raise
                continue  # closed before a byte was written: safe to send on another connection
            except (CannotConnectError, LoadingError) as error:
                if isinstance(error, LoadingError) and loading_until is None and self.loading_wait:
                    loading_until = time.monotonic() + self.loading_wait  # the token was answered "loading"
                if loading_until is None or time.monotonic() + pause >= loading_until:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 1.0)
                continue
            self.last_address = connection.address
            try:
                answers = _wait_all(futures, requests, timeout, connection)
            except ConnectionClosedError as error:
                if not error.may_have_been_applied and not error.answers and not self._closed and unsent < 3:
                    unsent += 1
                    continue  # it failed before a byte of it was written: nothing was sent
                if error.may_have_been_applied and retries > 0 and not self._closed:
                    retries -= 1
                    tried.append(connection.address)
                    continue
                if error.may_have_been_applied and not reads:
                    raise ConnectionClosedError(f"{error}; {_WRITE_ADVICE}", may_have_been_applied=True,
                                                op=error.op, answers=error.answers) from None
                raise
            except RequestTimeoutError as error:
                if alone:
                    self._drop_leased(connection)
                if reads and retries > 0 and len(self.nodes) > 1:
                    retries -= 1
                    tried.append(connection.address)
                    continue
                if not reads:
                    raise RequestTimeoutError(f"{error}; {_WRITE_ADVICE}", may_have_been_applied=True,
                                              op=error.op) from None
                raise
            if answers and all(_code(answer) == "loading" for answer in answers) and self.loading_wait:
                # A starting server: nothing was carried out. It closes this connection once it is ready.
                if loading_until is None:
                    loading_until = time.monotonic() + self.loading_wait
                if time.monotonic() + pause < loading_until:
                    connection.close()
                    time.sleep(pause)
                    pause = min(pause * 2, 1.0)
                    retries = max(1, len(self.nodes) - 1) if reads else 0
                    continue
            if alone:
                self._give_back(connection)
            if retry_stale and len(self.nodes) > 1 and len(answers) == 1 and _code(answers[0]) == "stale":
                retry_stale = False
                tried.append(connection.address)
                continue
            return answers

    def next_start(self) -> int:
        """The node a connection of its own (a watch's) tries first: the next in turn."""
        return next(self._turn) % len(self.nodes)

    def authenticate(self, request: Mapping[str, Any], timeout: float | None) -> dict:
        """Sends an auth request on a connection; once accepted, on every other open connection too, and
        first on every connection opened later. Returns the answer."""
        connection = self.connection()
        answer = connection.call(request, self.timeout if timeout is None else timeout)
        if answer.get("ok") is True:
            self._token = request["token"]
            for slot in self._slots:
                other = slot.connection
                if other is not None and other is not connection and not other.closed:
                    try:
                        other.submit([{"op": "auth", "token": self._token}])
                    except ConnectionClosedError:
                        pass  # it closed meanwhile: its next connection sends the token first
            with self._alone_lock:
                alone = list(self._alone)
            for other in alone:  # a waiting read in flight holds it up, not the others
                try:
                    other.submit([{"op": "auth", "token": self._token}])
                except ConnectionClosedError:
                    pass
        return answer

    def submit(self, request: Mapping[str, Any]) -> concurrent.futures.Future:
        """Sends one request on the next connection without waiting; nothing is sent again."""
        connection = self.connection()
        self.last_address = connection.address
        return connection.submit([request])[0]

    def close(self) -> None:
        self._closed = True
        for slot in self._slots:
            with slot.lock:
                connection, slot.connection = slot.connection, None
            if connection is not None:
                connection.close()
        with self._alone_lock:
            alone, self._alone, self._idle_alone = list(self._alone), set(), []
        for connection in alone:  # a waiting read in flight fails with ConnectionClosedError at once
            connection.close()

    @property
    def closed(self) -> bool:
        return self._closed


def _wait_all(futures: list[concurrent.futures.Future], requests: list[Mapping[str, Any]], timeout: float | None,
              connection: Connection) -> list[dict]:
    deadline = None if timeout is None else time.monotonic() + timeout
    answers: list[dict] = []
    for future, request in zip(futures, requests):
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            answers.append(future.result(remaining))
        except concurrent.futures.TimeoutError:
            for other in futures:
                other.cancel()  # they keep their place on the connection; their answers are dropped
            raise RequestTimeoutError(
                f"no answer from {connection.address} within {timeout} s ({len(answers)} of {len(futures)} "
                f"answers received); the connection stays open", may_have_been_applied=True,
                op=request.get("op")) from None
        except ConnectionClosedError as error:
            for other in futures:
                other.cancel()
            # Requests behind a too_large answer were not read by the server.
            applied = error.may_have_been_applied and not any(_code(answer) == "too_large" for answer in answers)
            raise ConnectionClosedError(str(error), may_have_been_applied=applied, op=request.get("op"),
                                        answers=answers) from None
    return answers


def _code(answer: Mapping[str, Any]) -> str | None:
    error = answer.get("error")
    return error.get("code") if isinstance(error, dict) else None


def _drop(push: dict) -> None:
    """Pushed lines on a pooled connection (a raw "watch" sent through request()) have no reader: use watch()."""
