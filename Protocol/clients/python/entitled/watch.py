"""Watch: the pushed lines of a watch, as a stream that survives reconnects."""

from __future__ import annotations

import collections
import datetime as _dt
import ssl
import threading
import time
from typing import TYPE_CHECKING, Callable, Iterator, Union

from .errors import ClientError, ConnectionClosedError, EntitledError, LoadingError, error_from_answer
from .results import Gap, Push

if TYPE_CHECKING:
    from .connection import Connection
    from .pool import Pool

__all__ = ["Watch", "DEFAULT_MAX_QUEUED_PUSHES"]

Event = Union[Push, Gap]

#: The events (Push or Gap) a watch holds undelivered before it stops reading its connection.
DEFAULT_MAX_QUEUED_PUSHES = 10_000


class Watch:
    """The stream of a watch's pushed lines: each is a Push, or a Gap when the watch's connection dropped
    and lines may have been missed. Iterate it (it ends when closed) or call next_push(timeout).

    It holds a connection of its own, read by its own thread as lines come; lines wait in memory until
    taken, at most `max_queued_pushes` events (default 10,000). When that many wait, its thread stops
    reading the connection until the application takes one (backpressure: the server holds the lines, and
    closes a watching connection that leaves 4 MiB unread; the watch then reconnects and yields a Gap, as
    after any drop). No push is dropped by the client. When the connection
    drops, a thread connects again (to a node that is up), pausing with the client's backoff, sends the
    watch again and queues a Gap (since the drop, until the watch is in force again) before any later Push.
    A watch the server refuses on reconnecting (the token was removed, say) ends the stream with its error.
    close() sends unwatch and closes the connection."""

    def __init__(self, pool: "Pool", request: dict, *, timeout: float | None, forget: Callable[["Watch"], None],
                 max_queued_pushes: int = DEFAULT_MAX_QUEUED_PUSHES):
        if isinstance(max_queued_pushes, bool) or not isinstance(max_queued_pushes, int) or max_queued_pushes < 1:
            raise ValueError(f"max_queued_pushes must be an integer of at least 1, not {max_queued_pushes!r}")
        self._max_queued = max_queued_pushes
        self._pool = pool
        self._request = request
        self._timeout = pool.timeout if timeout is None else timeout
        self._forget = forget
        self._items: collections.deque[Event] = collections.deque()
        self._arrived = threading.Condition(threading.Lock())
        self._stop = threading.Event()
        self._error: BaseException | None = None
        self._gap: tuple[_dt.datetime, str] | None = None  # a drop not yet reported
        self._connection = self._subscribe_waiting_for_loading()
        self._thread = threading.Thread(target=self._keep, name="entitled watch", daemon=True)
        self._thread.start()

    # -- reading -------------------------------------------------------------------------------------------

    def next_push(self, timeout: float | None = None) -> Event | None:
        """The next Push or Gap, waiting up to `timeout` seconds (None: as long as it takes); None when none
        came in time. Raises ConnectionClosedError once the watch is closed and nothing is left, or the
        error that ended it."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._arrived:
            while not self._items:
                if self._error is not None:
                    raise self._error
                if self._stop.is_set():
                    raise ConnectionClosedError("the watch is closed")
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._arrived.wait(remaining)
            event = self._items.popleft()
            self._arrived.notify_all()  # room again: a reader waiting for it goes on
            return event

    def __iter__(self) -> Iterator[Event]:
        return self

    def __next__(self) -> Event:
        try:
            event = self.next_push()
        except ConnectionClosedError:
            if self._error is None:
                raise StopIteration from None
            raise
        assert event is not None  # next_push without a timeout returns an event or raises
        return event

    @property
    def queued(self) -> int:
        """How many events (Push or Gap) wait to be taken: never more than max_queued_pushes."""
        with self._arrived:
            return len(self._items)

    @property
    def max_queued_pushes(self) -> int:
        return self._max_queued

    @property
    def closed(self) -> bool:
        return self._stop.is_set()

    @property
    def node(self):
        """The address of the node the watch's connection is to (it changes when it reconnects)."""
        return self._connection.address

    # -- closing ---------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Unwatches and closes the watch's connection (idempotent); iteration ends."""
        if self._stop.is_set():
            return
        self._stop.set()
        with self._arrived:
            self._arrived.notify_all()  # a reader waiting for room goes on, so unwatch's answer is read
        connection = self._connection
        if not connection.closed:
            try:
                connection.call(dict(self._request, op="unwatch"), timeout=min(self._timeout or 1.0, 1.0))
            except ClientError:
                pass  # the connection is closing anyway: its watches end with it
            connection.close()
        self._forget(self)
        with self._arrived:
            self._arrived.notify_all()

    def __enter__(self) -> "Watch":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- the connection ----------------------------------------------------------------------------------

    def _on_push(self, line: dict, connection: "Connection | None") -> None:
        """Queues a pushed line, run by the connection's reader thread. While the queue is full it waits for
        room, so the connection is not read meanwhile (backpressure). Once the watch or that connection is
        closed, a line with no room is dropped: no one will take it (a closed connection's Gap covers it)."""
        push = Push.from_line(line)
        with self._arrived:
            while True:
                if len(self._items) < self._max_queued:
                    if self._gap is not None:
                        self._report_gap()  # the Gap takes a place of its own, before the Push
                        self._arrived.notify_all()
                        continue
                    self._items.append(push)
                    self._arrived.notify_all()
                    return
                if self._stop.is_set() or (connection is not None and connection.closed):
                    return
                # close() notifies; a connection closed by the watch's own thread is seen within 0.1 s.
                self._arrived.wait(0.1)

    def _report_gap(self) -> None:
        """Queues the Gap of the last drop, if not yet (the lock is held): before the first Push after it."""
        if self._gap is not None:
            since, reason = self._gap
            self._gap = None
            self._items.append(Gap(since, _dt.datetime.now(_dt.timezone.utc), reason))

    def _subscribe(self) -> "Connection":
        opened: list["Connection"] = []
        connection = self._pool.open(self._pool.next_start(),
                                     on_push=lambda line: self._on_push(line, opened[0] if opened else None))
        opened.append(connection)
        try:
            answer = connection.call(self._request, self._timeout)
        except BaseException:
            connection.close()
            raise
        if answer.get("ok") is not True:
            connection.close()
            raise error_from_answer(answer, "watch")
        return connection

    def _subscribe_waiting_for_loading(self) -> "Connection":
        deadline = time.monotonic() + (self._pool.loading_wait or 0)
        pause = 0.05
        while True:
            try:
                return self._subscribe()
            except LoadingError:
                if time.monotonic() + pause >= deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 1.0)

    def _keep(self) -> None:
        """Watches again each time the connection drops, until close()."""
        while True:
            self._connection.wait_closed()
            if self._stop.is_set():
                return
            with self._arrived:
                if self._gap is None:
                    self._gap = (_dt.datetime.now(_dt.timezone.utc), str(self._connection.close_reason))
            attempt = 0
            while True:
                if self._stop.wait(self._pool.backoff.delay(attempt)):
                    return
                attempt += 1
                try:
                    connection = self._subscribe()
                except (ClientError, LoadingError):
                    continue  # down, dropped, timed out or starting: try again after a longer pause
                except (EntitledError, ssl.SSLError) as error:
                    with self._arrived:
                        self._error = error
                        self._arrived.notify_all()
                    return
                break
            self._connection = connection
            if self._stop.is_set():
                connection.close()
                return
            with self._arrived:
                while (self._gap is not None and len(self._items) >= self._max_queued
                       and not self._stop.is_set()):
                    self._arrived.wait()  # the Gap waits for room like a Push (next_push and close notify)
                if len(self._items) < self._max_queued:
                    self._report_gap()
                self._arrived.notify_all()
