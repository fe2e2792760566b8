"""One connection to a server: newline-delimited JSON, pipelined, read by a thread of its own.

Requests are written in the order they are submitted and the server answers each connection's lines in
order (PROTOCOL.md §1, Framing), so the connection keeps a FIFO of the requests in flight and gives each
answer to the oldest. A line with "push" is a pushed line, never an answer.

All socket calls take one lock, so a TLS socket is never read and written at once. The reader thread also
writes: what a caller could not write at once (the socket's buffer full), and what callbacks it runs submit
while it hands out answers, which then leave in one write (as ioredis batches the commands of one tick).
"""

from __future__ import annotations

import collections
import concurrent.futures
import itertools
import json
import selectors
import socket
import ssl
import threading
import time
from typing import Any, Callable, Iterable, Mapping

from .errors import CannotConnectError, ClientError, ConnectionClosedError, ProtocolError, RequestTimeoutError
from .wire import Address, parse_address

__all__ = ["Connection", "open_socket"]

_READ_SIZE = 262144
_ANY_ID = object()  # a raw request's answer: any id, or none


def open_socket(address: Address, timeout: float | None, tls: ssl.SSLContext | None) -> socket.socket:
    """A connected socket (TLS handshake done). An OSError becomes CannotConnectError naming the address; a
    TLS failure (an untrusted certificate, a port without TLS) is raised as the ssl error it is: connecting
    again cannot help."""
    sock = None
    try:
        if address.is_unix:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            sock.connect(address.host)
        else:
            sock = socket.create_connection((address.host, address.port), timeout=timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            # A peer that vanished without a reset is found by the kernel's keepalive probes.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            if tls is not None:
                sock = tls.wrap_socket(sock, server_hostname=address.host)  # handshakes within `timeout`
        return sock
    except (ssl.SSLError, ssl.CertificateError):
        if sock is not None:
            sock.close()
        raise
    except OSError as error:
        if sock is not None:
            sock.close()
        raise CannotConnectError(str(address), error) from error


class _Pending:
    """A request in flight: its future, its op, the id its answer must carry, and where its bytes start in
    the connection's output (so a failure can tell whether any of them were written)."""

    __slots__ = ("future", "op", "expected_id", "start")

    def __init__(self, future: concurrent.futures.Future, op: Any, expected_id: Any, start: int):
        self.future = future
        self.op = op
        self.expected_id = expected_id
        self.start = start


class Connection:
    """One connection, safe to share between threads; many requests may be in flight on it.

    Connection.open(node) connects ("host:port", (host, port) or a Unix socket path). submit() sends typed
    requests (each gets the connection's next id, and its answer must echo it); send() and send_line() are the
    raw API: the caller's object or text unchanged, the answer returned as it came. Each returns a
    concurrent.futures.Future per answer expected; an error answer is a result, not an exception. A future
    fails with ConnectionClosedError when the connection closes first; cancelling it (or giving up on it)
    keeps its place, and its answer is dropped when it comes.

    Pushed lines go to `on_push` when given, else to a queue read with next_push(). An answer that came with
    no request in flight (a "busy" line) is read with next_unsolicited()."""

    def __init__(self, sock: socket.socket, address: Address, *, on_push: Callable[[dict], None] | None = None,
                 on_close: Callable[[ClientError], None] | None = None):
        self.address = address
        self._sock = sock
        self._tls = isinstance(sock, ssl.SSLSocket)
        sock.setblocking(False)
        self._on_push = on_push
        self._on_close = on_close
        self._lock = threading.Lock()
        self._inflight: collections.deque[_Pending] = collections.deque()
        self._out = bytearray()
        self._queued = 0  # bytes ever queued for writing
        self._written = 0  # bytes ever written
        self._retry_length = 0  # TLS: a write that wanted to wait must be retried with the same length
        self._ids = itertools.count(1)
        self._error: ClientError | None = None
        self._closed = threading.Event()
        self._last_was_too_large = False
        self._pushes: collections.deque[dict] = collections.deque()
        self._unsolicited: collections.deque[dict] = collections.deque()
        self._arrived = threading.Condition(threading.Lock())
        self._waker_r, self._waker_w = socket.socketpair()
        self._waker_r.setblocking(False)
        self._waker_w.setblocking(False)
        self._reader = threading.Thread(target=self._run, name=f"entitled reader {address}", daemon=True)
        self._reader.start()

    @classmethod
    def open(cls, node: Any, *, timeout: float | None = 10.0, tls: ssl.SSLContext | None = None,
             on_push: Callable[[dict], None] | None = None,
             on_close: Callable[[ClientError], None] | None = None) -> "Connection":
        """Connects to `node`; raises CannotConnectError (or the ssl error of a failed handshake)."""
        address = parse_address(node)
        return cls(open_socket(address, timeout, tls), address, on_push=on_push, on_close=on_close)

    # -- sending ---------------------------------------------------------------------------------------

    def submit(self, requests: Iterable[Mapping[str, Any]]) -> list[concurrent.futures.Future]:
        """Sends requests (dicts with "op" and protocol field names) as one write. A request without "id"
        gets the connection's next one; the answer must echo the id, or the connection fails with
        ProtocolError. Raises ConnectionClosedError (nothing written) when the connection is closed."""
        lines = []
        pending = []
        for request in requests:
            body = dict(request)
            if "id" not in body:
                body["id"] = next(self._ids)
            lines.append(_encode(body))
            pending.append((body.get("op"), body["id"]))
        return self._queue(lines, pending)

    def send(self, request: Any) -> concurrent.futures.Future:
        """Raw: sends `request` exactly as given (any JSON value; no id added, none checked)."""
        return self._queue([_encode(request)], [(request.get("op") if isinstance(request, dict) else None, _ANY_ID)])[0]

    def send_line(self, text: str) -> list[concurrent.futures.Future]:
        """Raw: writes `text` as it is, which may hold several lines, or part of one (the rest in a later
        call). Returns a future for each "\\n" in it: each completed line gets one answer."""
        count = text.count("\n")
        return self._queue([text.encode("utf-8")], [(None, _ANY_ID)] * count)

    def call(self, request: Mapping[str, Any], timeout: float | None = None) -> dict:
        """submit() one request and wait for its answer (an error answer is returned, not raised)."""
        future = self.submit([request])[0]
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise RequestTimeoutError(f"no answer from {self.address} within {timeout} s",
                                      may_have_been_applied=True, op=request.get("op")) from None

    def _queue(self, lines: list[bytes], pending: list[tuple[Any, Any]]) -> list[concurrent.futures.Future]:
        data = b"".join(lines)
        futures = [concurrent.futures.Future() for _ in pending]
        with self._lock:
            if self._error is None and not self._inflight and self._peer_closed():
                self._error = ConnectionClosedError(f"the server at {self.address} closed the connection")
                self._wake()
            if self._error is not None:
                raise ConnectionClosedError(str(self._error), may_have_been_applied=False,
                                            op=pending[0][0] if pending else None)
            start = self._queued
            for future, (op, expected_id) in zip(futures, pending):
                self._inflight.append(_Pending(future, op, expected_id, start))
            self._queued += len(data)
            was_empty = not self._out
            self._out += data
            if threading.get_ident() == self._reader.ident:
                return futures  # the reader writes it after the answers it is handing out
            if was_empty:
                self._write_some()
            wake = bool(self._out) or self._error is not None
        if wake:
            self._wake()
        return futures

    def _peer_closed(self) -> bool:
        """Whether the server has closed the connection, found by peeking before a write on a connection
        with nothing in flight (the lock is held). The reader thread finds it too, but may not have run yet
        when a call comes right after: an idle connection the server closed must not take a write, which
        would then be lost without knowing whether it was carried out. With TLS this sees the end of the
        stream only when no record (a close_notify) precedes it."""
        try:
            return socket.socket.recv(self._sock, 1, socket.MSG_PEEK) == b""
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True

    def _write_some(self) -> None:
        """Writes what the socket takes now (the lock is held). A write error fails the connection later,
        from the reader, which will also find the end of the stream."""
        length = self._retry_length or min(len(self._out), _READ_SIZE)
        try:
            with memoryview(self._out) as view:
                written = self._sock.send(view[:length])
            self._retry_length = 0
        except (BlockingIOError, InterruptedError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
            self._retry_length = length if self._tls else 0
            return
        except OSError as error:
            self._error = self._error or ConnectionClosedError(f"writing to {self.address} failed: {error}")
            self._out.clear()
            return
        del self._out[:written]
        self._written += written

    def _wake(self) -> None:
        try:
            self._waker_w.send(b"\0")
        except (BlockingIOError, OSError):
            pass  # already awake (its buffer is full), or closed

    # -- closing ---------------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Whether the connection is closed (or failed): nothing more can be sent on it."""
        return self._error is not None

    @property
    def close_reason(self) -> ClientError | None:
        """Why it closed (a ConnectionClosedError, or the ProtocolError that closed it); None while open."""
        return self._error

    def wait_closed(self, timeout: float | None = None) -> bool:
        """Waits until the connection is closed (by the server, the network or close()); returns whether it is."""
        return self._closed.wait(timeout)

    def close(self) -> None:
        """Closes the connection; requests in flight fail with ConnectionClosedError. Idempotent."""
        with self._lock:
            if self._error is None:
                self._error = ConnectionClosedError(f"the client closed the connection to {self.address}")
        self._wake()
        if threading.get_ident() != self._reader.ident:
            self._reader.join()

    # -- pushed lines and answers without a request ------------------------------------------------------

    def next_push(self, timeout: float | None = None) -> dict | None:
        """The oldest pushed line not yet taken (when no on_push was given), waiting up to `timeout` seconds
        (None: as long as it takes); None when none came in time. Raises ConnectionClosedError once the
        connection is closed and no pushed line is left."""
        return self._next(self._pushes, timeout)

    def next_unsolicited(self, timeout: float | None = None) -> dict | None:
        """The oldest answer that came with no request in flight (the server's "busy" line, sent to a new
        connection beyond its limit, is one), as next_push() waits for pushed lines."""
        return self._next(self._unsolicited, timeout)

    def _next(self, queue: collections.deque, timeout: float | None) -> dict | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._arrived:
            while not queue:
                if self._closed.is_set():
                    raise ConnectionClosedError(str(self._error))
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._arrived.wait(remaining)
            return queue.popleft()

    # -- the reader ----------------------------------------------------------------------------------------

    def _run(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self._sock, selectors.EVENT_READ)
        selector.register(self._waker_r, selectors.EVENT_READ)
        partial = b""
        failure: ClientError | None = None
        watching = selectors.EVENT_READ
        try:
            while failure is None:
                with self._lock:
                    if self._error is not None:
                        break
                    events = selectors.EVENT_READ | (selectors.EVENT_WRITE if self._out else 0)
                if events != watching:
                    selector.modify(self._sock, events)
                    watching = events
                ready = selector.select()
                chunks = []
                end = False
                with self._lock:
                    if self._error is not None:
                        break
                    for key, _mask in ready:
                        if key.fileobj is self._waker_r:
                            _drain(self._waker_r)
                    end, failure = self._receive(chunks)
                    if self._out:
                        self._write_some()
                if chunks:
                    lines = (partial + b"".join(chunks)).split(b"\n")
                    partial = lines.pop()
                    failure = self._dispatch(lines) or failure
                    with self._lock:
                        if self._out and self._error is None:
                            self._write_some()
                if end and failure is None:
                    state = "in the middle of a line" if partial else "closed the connection"
                    failure = ConnectionClosedError(f"the server at {self.address} {state}")
        except Exception as error:  # a bug here must not leave callers waiting forever
            failure = ProtocolError(f"the reader of {self.address} failed: {error!r}")
        finally:
            selector.close()
            self._finish(failure)

    def _receive(self, chunks: list[bytes]) -> tuple[bool, ClientError | None]:
        """Reads everything available (the lock is held). Returns (end of stream, failure)."""
        while True:
            try:
                data = self._sock.recv(_READ_SIZE)
            except (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                return False, None
            except OSError as error:
                return True, ConnectionClosedError(f"the connection to {self.address} failed: {error}")
            if not data:
                return True, None
            chunks.append(data)

    def _dispatch(self, lines: list[bytes]) -> ClientError | None:
        """Hands each line to its request, the push handler, or the unsolicited queue. Returns the
        ProtocolError of a line the protocol does not allow (the connection is then failed)."""
        woken = False
        for raw in lines:
            try:
                message = json.loads(raw)
            except ValueError as error:
                return ProtocolError(f"{self.address} sent a line that is not JSON: {raw[:200]!r} ({error})")
            if not isinstance(message, dict):
                return ProtocolError(f"{self.address} sent a line that is not a JSON object: {raw[:200]!r}")
            if "push" in message and "ok" not in message:
                if self._on_push is not None:
                    self._on_push(message)
                else:
                    with self._arrived:
                        self._pushes.append(message)
                    woken = True
                continue
            if "ok" not in message:
                return ProtocolError(f"{self.address} sent a line with neither \"ok\" nor \"push\": {raw[:200]!r}")
            with self._lock:
                pending = self._inflight.popleft() if self._inflight else None
            if pending is None:
                with self._arrived:
                    self._unsolicited.append(message)
                woken = True
                continue
            if pending.expected_id is not _ANY_ID and not _echoes(message, pending.expected_id):
                with self._lock:
                    self._inflight.appendleft(pending)  # it fails with the others, as possibly applied
                return ProtocolError(f"{self.address} answered id {message.get('id')!r} where "
                                     f"{pending.expected_id!r} was expected", op=pending.op)
            error = message.get("error")
            self._last_was_too_large = isinstance(error, dict) and error.get("code") == "too_large"
            if not pending.future.done():
                try:
                    pending.future.set_result(message)
                except concurrent.futures.InvalidStateError:
                    pass  # cancelled meanwhile: the answer is dropped
        if woken:
            with self._arrived:
                self._arrived.notify_all()
        return None

    def _finish(self, failure: ClientError | None) -> None:
        with self._lock:
            if self._error is None:
                self._error = failure or ConnectionClosedError(f"the connection to {self.address} closed")
            error = self._error
            pending = list(self._inflight)
            self._inflight.clear()
            self._out.clear()
            written = self._written
            # After too_large the server reads nothing more: the requests behind it were not carried out.
            after_too_large = self._last_was_too_large
        for sock in (self._sock, self._waker_r, self._waker_w):
            try:
                sock.close()
            except OSError:
                pass
        for item in pending:
            sent = item.start < written and not after_too_large
            if isinstance(error, ProtocolError):
                exception: ClientError = ProtocolError(str(error), op=item.op)
            else:
                exception = ConnectionClosedError(str(error), may_have_been_applied=sent, op=item.op)
            if not item.future.done():
                try:
                    item.future.set_exception(exception)
                except concurrent.futures.InvalidStateError:
                    pass
        self._closed.set()
        with self._arrived:
            self._arrived.notify_all()
        if self._on_close is not None:
            self._on_close(error)


def _encode(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8") + b"\n"


def _echoes(answer: dict, expected: Any) -> bool:
    """Whether an answer carries the request's id: equal, or absent from an error the server could not
    read an id for (bad_json, too_large)."""
    if "id" in answer:
        echoed = answer["id"]
        return echoed == expected and isinstance(echoed, bool) == isinstance(expected, bool)
    return answer.get("ok") is False


def _drain(sock: socket.socket) -> None:
    try:
        while sock.recv(4096):
            pass
    except (BlockingIOError, InterruptedError, OSError):
        pass
