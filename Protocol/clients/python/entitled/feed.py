"""Follower and Export: the change feed read as an iterator that survives reconnects, and a whole export read
on one connection (PROTOCOL.md §6, changes and export).

A consumer that keeps a copy of the memberships (a search index, a warehouse, another service's cache)
takes a full copy with an Export, then follows the feed from the copy's `seq` with a Follower: nothing
written meanwhile is missed. It stores the follower's `position` with what it applied; after a crash it
follows again from there, and an item it is given again is recognised by its `sequence`.
"""

from __future__ import annotations

import collections
import datetime as _dt
import ssl
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Iterator

from .errors import ClientError, ConnectionClosedError, EntitledError, LoadingError, ProtocolError, error_from_answer
from .results import ExportPage, FeedItem, FeedPage
from .wire import parse_time

if TYPE_CHECKING:
    from .connection import Connection
    from .pool import Pool
    from .wire import Address

__all__ = ["Follower", "Export", "DEFAULT_FEED_WAIT"]

#: The milliseconds a caught-up follower's read waits for a change (the protocol allows up to 30,000). Below
#: the 30 s after which some proxies and NAT tables drop a quiet connection.
DEFAULT_FEED_WAIT = 20_000
_MAX_WAIT = 30_000


def feed_wait(wait: int | _dt.timedelta) -> int:
    """A wait given in milliseconds or as a timedelta, checked against the protocol's 0 to 30,000 ms."""
    if isinstance(wait, _dt.timedelta):
        wait = wait // _dt.timedelta(milliseconds=1)
    if isinstance(wait, bool) or not isinstance(wait, int) or not 0 <= wait <= _MAX_WAIT:
        raise ValueError(f"wait is 0 to {_MAX_WAIT} milliseconds (or a timedelta), not {wait!r}")
    return wait


class Follower:
    """The change feed from a change number on, as an iterator of FeedItems, oldest first, that never ends
    by itself: iterate it (iteration ends when it is closed) or call next_change(timeout).

    It reads a page at a time on a connection of its own (a waiting read holds up whatever is sent after
    it on its connection, so it never shares the client's), reads on at once while the server has more
    (next < newest), and once caught up asks with `wait`, so a change is delivered as soon as it is made
    without polling. When its connection drops, the server restarts or answers `loading`, it connects
    again (to a node that is up), pausing with the client's backoff, and reads again from its position:
    nothing is skipped, and nothing is delivered twice. It ends with the error of a read the server
    refuses: TruncatedError when the feed no longer reaches back to its position (take a full copy with
    Client.iter_export() and follow from its seq), ForbiddenError without an admin token.

    `position` is the after_seq to follow from again later: store it with what you applied. One thread
    iterates a follower; close() may come from any (it ends a waiting read at once)."""

    def __init__(self, pool: "Pool", *, after_seq: int = 0, user: str | None = None, device: str | None = None,
                 page_size: int | None = None, wait: int | _dt.timedelta = DEFAULT_FEED_WAIT,
                 timeout: float | None = None,
                 forget: Callable[["Follower"], None] = lambda follower: None):
        if isinstance(after_seq, bool) or not isinstance(after_seq, int) or after_seq < 0:
            raise ValueError(f"after_seq is a whole number, 0 or more, not {after_seq!r}")
        self._pool = pool
        self._wait = feed_wait(wait)
        self._request: dict[str, Any] = {"op": "changes"}
        for key, value in (("user", user), ("device", device), ("limit", page_size)):
            if value is not None:
                self._request[key] = value
        # What one read may take besides its wait: the client's timeout, or this follower's.
        self._margin = pool.timeout if timeout is None else timeout
        self._forget = forget
        self._next = after_seq
        self._items: collections.deque[FeedItem] = collections.deque()
        self._caught_up = False
        self._connection: "Connection | None" = None
        self._stop = threading.Event()
        self._error: BaseException | None = None
        self._failures = 0  # reads failed in a row, for the backoff
        #: The newest change the last page could show, and the oldest after_seq the feed accepted then
        #: (None before the first page): newest - position is how far behind the follower is.
        self.newest: int | None = None
        self.oldest_after_seq: int | None = None
        #: The error of the last read when it failed and is being retried (a connection error, loading);
        #: None once a read succeeds. For a health check: the follower itself retries without end.
        self.last_error: BaseException | None = None

    # -- reading -------------------------------------------------------------------------------------------

    @property
    def position(self) -> int:
        """The after_seq to follow from again: every change up to it has been delivered (or concerned no one
        followed). Once the items of a page are all taken it is the page's `next`; while some wait, one less
        than the sequence of the first of them, so that a change whose items were partly taken is read
        again whole. Store it after applying an item: following again from it skips nothing, and delivers
        at most the other items of that item's change a second time (recognised by `sequence`)."""
        items = self._items
        if items:
            return items[0].sequence - 1
        return self._next

    def next_change(self, timeout: float | None = None) -> FeedItem | None:
        """The next item, waiting up to `timeout` seconds (None: as long as it takes); None when none came
        in time (the follower goes on). Raises the error that ended the follower (TruncatedError, ...), or
        ConnectionClosedError once it is closed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self._error is not None:
                raise self._error
            if self._stop.is_set():
                raise ConnectionClosedError("the follower is closed")
            if self._items:
                return self._items.popleft()
            if deadline is not None and deadline - time.monotonic() <= 0:
                return None
            page = self._read(deadline)
            if page is None:
                return None
            self._take(page)

    def __iter__(self) -> Iterator[FeedItem]:
        return self

    def __next__(self) -> FeedItem:
        try:
            item = self.next_change()
        except ConnectionClosedError:
            if self._error is None and self._stop.is_set():
                raise StopIteration from None
            raise
        assert item is not None  # next_change without a timeout returns an item or raises
        return item

    def _take(self, page: FeedPage) -> None:
        after = self._next
        if page.next < after:
            raise ProtocolError(f"a page of the change feed read after {after} whose \"next\" ({page.next}) goes back",
                                op="changes")
        self._items.extend(page)
        self._next = page.next
        self.newest = page.newest
        self.oldest_after_seq = page.oldest_after_seq
        # Caught up: read on with wait. A page that did not move on is taken as caught up too, rather than
        # asking again at once without end.
        self._caught_up = not page.has_more or (not page and page.next == after)

    def _read(self, deadline: float | None) -> FeedPage | None:
        """Reads the page after the position: with wait once caught up (no longer than the deadline), again
        after a connection error or loading, pausing with the backoff. None when the deadline passed."""
        while True:
            wait = self._wait if self._caught_up else 0
            if deadline is not None:
                wait = min(wait, max(0, int((deadline - time.monotonic()) * 1000)))
            request = dict(self._request, afterSeq=self._next)
            if wait:
                request["wait"] = wait
            read_timeout = None if self._margin is None else self._margin + wait / 1000
            failure: BaseException
            try:
                answer = self._connect().call(request, read_timeout)
            except (ClientError, LoadingError) as error:  # down, dropped, timed out, starting: read again
                failure = error
            except (EntitledError, ssl.SSLError) as error:  # a refused token, an untrusted certificate
                self._end(error)
                raise
            else:
                if answer.get("ok") is True:
                    self._failures = 0
                    self.last_error = None
                    return FeedPage.from_answer(answer)
                failure = error_from_answer(answer, "changes")
                if not isinstance(failure, LoadingError):
                    self._end(failure)
                    raise failure
            if self._stop.is_set():
                raise ConnectionClosedError("the follower is closed")
            self.last_error = failure
            self._disconnect()  # a timed-out read may still be waiting on it; a starting server closes it
            pause = self._pool.backoff.delay(self._failures)
            self._failures += 1
            if deadline is not None and time.monotonic() + pause >= deadline:
                return None
            if self._stop.wait(pause):
                raise ConnectionClosedError("the follower is closed")

    # -- the connection ----------------------------------------------------------------------------------

    def _connect(self) -> "Connection":
        connection = self._connection
        if connection is not None and not connection.closed:
            return connection
        connection = self._pool.open(self._pool.next_start())
        self._connection = connection
        if self._stop.is_set():  # closed meanwhile: close() may not have seen this connection
            connection.close()
            raise ConnectionClosedError("the follower is closed")
        return connection

    def _disconnect(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    def _end(self, error: BaseException) -> None:
        """Ends the follower with `error`: every later call raises it."""
        self._error = error
        self._disconnect()
        self._forget(self)

    @property
    def closed(self) -> bool:
        return self._stop.is_set()

    @property
    def node(self) -> "Address | None":
        """The node the follower's connection is to (None while it has none)."""
        connection = self._connection
        return connection.address if connection is not None else None

    def close(self) -> None:
        """Closes the follower's connection (a read waiting on it ends at once) and ends iteration.
        Idempotent; position keeps its value."""
        if self._stop.is_set():
            return
        self._stop.set()
        connection = self._connection
        if connection is not None:
            connection.close()
        self._forget(self)

    def __enter__(self) -> "Follower":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Follower position={self.position} newest={self.newest}{' closed' if self.closed else ''}>"


class Export:
    """A full copy of the store as of one change, read page by page on a connection of its own: the server
    that answered the first page holds the copy, so every page must go to it (with several nodes, the
    client's other connections may be to other nodes).

    Made by Client.iter_export(), which reads the first page at once: `seq` (the change the copy is as of:
    follow the feed with after_seq=seq once every page is read), `time` (when it was taken) and
    `entitlements` (the catalog as of seq) are there before iterating. Iterating it gives each ExportPage,
    the first included: a list of memberships in creation order, each as of seq, with the audit entries of
    its memberships in `.history` when asked for. Pages, not memberships, because a page's memberships
    and their history belong together, and writing a page at a time suits a bulk insert.

    The connection is closed after the last page, or by close() (a with block). A page whose connection
    dropped is asked again once, of the same node; after a restart that node no longer holds the copy
    (NotFoundError: start again), nor 300 s after the last page was read."""

    def __init__(self, pool: "Pool", *, page_size: int | None = None, history: bool | None = None,
                 timeout: float | None = None, forget: Callable[["Export"], None] = lambda export: None):
        self._pool = pool
        self._request: dict[str, Any] = {"op": "export"}
        for key, value in (("limit", page_size), ("history", history)):
            if value is not None:
                self._request[key] = value
        self._timeout = pool.timeout if timeout is None else timeout
        self._forget = forget
        self._connection: "Connection | None" = None
        self._node: "Address | None" = None
        self._closed = False
        try:
            first = self._page(None)
        except BaseException:
            self.close()
            raise
        self._waiting: ExportPage | None = first
        self._after = first.next
        if self._after is None:
            self._disconnect()  # one page held it all
        #: The change the copy is as of: follow the feed after it once every page is read.
        self.seq: int = first.seq
        #: When the copy was taken (RFC 3339): the memberships' statuses are as of this time.
        self.time: str = first.time
        #: The catalog as of seq: {entitlement: [products]}.
        self.entitlements: dict[str, list[str]] = first.entitlements or {}

    @property
    def time_datetime(self) -> _dt.datetime:
        """`time` as an aware datetime (UTC)."""
        return parse_time(self.time)

    @property
    def node(self) -> "Address | None":
        """The node that holds the copy."""
        return self._node

    def __iter__(self) -> Iterator[ExportPage]:
        return self

    def __next__(self) -> ExportPage:
        if self._closed:
            raise StopIteration
        if self._waiting is not None:
            page, self._waiting = self._waiting, None
        elif self._after is None:
            self.close()
            raise StopIteration
        else:
            page = self._page(self._after)
            self._after = page.next
            if self._after is None:
                self._disconnect()  # the server dropped the copy with its last page
        return page

    def memberships(self) -> Iterator[dict]:
        """Every membership of the copy left to read, page after page (the history entries, if asked for,
        are on the pages: iterate the Export itself for them)."""
        for page in self:
            yield from page

    def _page(self, after: str | None) -> ExportPage:
        """One page, asked again once of the same node when its connection drops, and again while the
        server answers loading (for the client's loading_wait)."""
        request = dict(self._request, after=after) if after is not None else self._request
        loading_until: float | None = None
        pause = 0.05
        asked_again = False
        while True:
            if self._closed:
                raise ConnectionClosedError("the export is closed")
            try:
                answer = self._connect().call(request, self._timeout)
            except LoadingError as error:  # the token was answered loading
                answer = error.answer
            except ConnectionClosedError:
                if asked_again or self._closed:
                    raise
                asked_again = True
                continue
            if answer.get("ok") is True:
                return ExportPage.from_answer(answer)
            error = error_from_answer(answer, "export")
            if isinstance(error, LoadingError) and self._pool.loading_wait:
                if loading_until is None:
                    loading_until = time.monotonic() + self._pool.loading_wait
                if time.monotonic() + pause < loading_until:
                    self._disconnect()  # a starting server closes it once it is ready
                    time.sleep(pause)
                    pause = min(pause * 2, 1.0)
                    continue
            raise error

    def _connect(self) -> "Connection":
        connection = self._connection
        if connection is not None and not connection.closed:
            return connection
        if self._node is None:
            connection = self._pool.open(self._pool.next_start())
            self._node = connection.address
        else:
            connection = self._pool.open(self._pool.index_of(self._node), only=True)
        self._connection = connection
        return connection

    def _disconnect(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Closes the export's connection (idempotent). A copy not read to its end is dropped by the server
        300 s after its last page was read."""
        if self._closed:
            return
        self._closed = True
        self._disconnect()
        self._forget(self)

    def __enter__(self) -> "Export":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Export seq={self.seq} time={self.time}{' closed' if self._closed else ''}>"
