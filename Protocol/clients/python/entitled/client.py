"""Client: the entry point. A thread-safe pool of pipelined connections to one server or the nodes of a
cluster, with the typed operations, raw requests, pipelines, watches, and the change feed's follower and
exports."""

from __future__ import annotations

import concurrent.futures
import datetime as _dt
import ssl
import threading
from typing import Any, Iterable, Mapping

from .errors import LoadingError, error_from_answer
from .feed import DEFAULT_FEED_WAIT, Export, Follower
from .operations import Operations, _fold_spellings, _refuse_unknown
from .pool import Backoff, Pool
from .watch import DEFAULT_MAX_QUEUED_PUSHES, Watch
from .wire import (DEFAULT_HOST, DEFAULT_PORT, MIN_SEQ_OPERATIONS, READ_OPERATIONS, Address, parse_address,
                   wire_fields)

__all__ = ["Client"]


class Client(Operations):
    """A client of one `entitled` server, or of the nodes of a cluster; safe to share between threads.

        Client()                                   TCP to 127.0.0.1:7117
        Client("10.0.0.5", 7117)                   TCP
        Client(unix_socket="/run/entitled.sock")   a Unix socket
        Client(nodes=["10.0.0.5:7117", "10.0.0.6:7117"], connections_per_node=2)

    nodes: one or more "host:port", (host, port) or Unix socket paths; requests are spread over the open
        connections, and a node that refuses is skipped for its backoff time.
    connections_per_node: connections to each node (default 1). Requests are pipelined: many threads share
        one connection, each answer going to its request, so one is enough for most processes.
    timeout: seconds each attempt of a call may take, connecting included (None: no limit); give
        timeout= to a method for that call. A call that times out raises RequestTimeoutError at once; its
        request keeps its place on the connection (its late answer is dropped) and the connection stays
        in use.
    token: sent as {"op": "auth"} first on every connection the client opens (a server started with
        --auth); kept in memory for that, never logged or shown in an error. A refused token raises
        UnauthorizedError.
    tls: an ssl.SSLContext for a server started with --tls-cert (TCP only), such as
        ssl.create_default_context(cafile="server-ca.pem"); the host is checked against the certificate.
    loading_wait: seconds to wait out a starting server (one that answers "loading"; nothing was carried
        out): the client reconnects and sends again, pausing 0.05 s doubling to 1 s. 0 or None: raise
        LoadingError at once.
    read_your_writes: when True, check, memberships and customer carry the client's last_seq as min_seq
        unless given one, so they see every write this client made, on any node.
    backoff: the pause before connecting again to a node that refused (default: 50 ms doubling to 2 s,
        full jitter).
    max_queued_pushes: the events a watch holds until the application takes them (default 10,000; give
        max_queued_pushes= to watch() for one watch). A watch that holds that many stops reading its
        connection until one is taken: memory stays bounded, the server holds the lines, and closes the
        connection of a watch 4 MiB behind, which then reconnects and yields a Gap.

    The first connection is opened at once, so a wrong address, token or certificate fails here. When a
    connection drops, the next call opens another (see the README for what is sent again)."""

    def __init__(
        self,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        *,
        unix_socket: str | None = None,
        nodes: Iterable[Any] | None = None,
        connections_per_node: int = 1,
        timeout: float | None = 10.0,
        token: str | None = None,
        tls: ssl.SSLContext | None = None,
        loading_wait: float | None = 60.0,
        read_your_writes: bool = False,
        backoff: Backoff | None = None,
        max_queued_pushes: int = DEFAULT_MAX_QUEUED_PUSHES,
    ):
        if nodes is not None:
            if unix_socket is not None:
                raise ValueError("give nodes= or unix_socket=, not both")
            addresses = [parse_address(node) for node in nodes]
            if not addresses:
                raise ValueError("nodes= needs at least one \"host:port\", (host, port) or socket path")
        elif unix_socket is not None:
            addresses = [Address(unix_socket, None)]
        else:
            addresses = [Address(host, int(port))]
        self.read_your_writes = read_your_writes
        self.max_queued_pushes = max_queued_pushes
        #: The newest "seq" a write's answer on this client carried (None before any): give it as min_seq
        #: to a read elsewhere to see the write there.
        self.last_seq: int | None = None
        self._seq_lock = threading.Lock()
        self._pool = Pool(addresses, connections_per_node=connections_per_node, timeout=timeout, token=token,
                          tls=tls, loading_wait=loading_wait, backoff=backoff)
        self._watches: set[Watch] = set()
        self._feeds: set[Follower | Export] = set()
        try:
            self._pool.last_address = self._pool.connection().address
        except LoadingError:
            pass  # a starting server: the first call waits it out
        except BaseException:
            self._pool.close()
            raise

    # -- lifecycle ---------------------------------------------------------------------------------------------

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes every connection, watch, follower and export (idempotent); later calls raise
        ConnectionClosedError."""
        for watch in list(self._watches):
            watch.close()
        for feed in list(self._feeds):
            feed.close()
        self._pool.close()

    @property
    def closed(self) -> bool:
        """Whether close() was called. (A dropped connection does not close the client: the next call
        opens another.)"""
        return self._pool.closed

    @property
    def timeout(self) -> float | None:
        return self._pool.timeout

    @property
    def node(self) -> Address | None:
        """The node (host, port) of the connection the last call used (an Address, a named tuple)."""
        return self._pool.last_address

    @property
    def address(self) -> str:
        """The last call's node as text: "tcp 127.0.0.1:7117" or "unix /path"."""
        return str(self._pool.last_address or self._pool.nodes[0].address)

    # -- requests ----------------------------------------------------------------------------------------------

    def request(self, op: str, *, timeout: float | None = None, **fields: Any) -> dict:
        """Sends one request with any fields (snake_case names become the protocol's; None is left out) and
        returns its answer. Raises the EntitledError of an error answer."""
        answer = self.pipeline([{"op": op, **fields}], timeout=timeout)[0]
        if answer.get("ok") is not True:
            raise error_from_answer(answer, op)
        return answer

    def pipeline(self, requests: Iterable[Mapping[str, Any]], *, timeout: float | None = None) -> list[dict]:
        """Sends every request at once on one connection and returns their answers in order. Error answers
        are returned ({"ok": false, ...}), not raised; raise_for() turns one into its EntitledError.

        A pipeline of reads only is sent again, whole, when its connection drops; one with a write is not:
        ConnectionClosedError, whose .answers holds the answers received before."""
        bodies = []
        for request in requests:
            body = wire_fields(request)
            if not isinstance(body.get("op"), str):
                raise ValueError(f"a request needs an \"op\" string: {dict(request)!r}")
            bodies.append(body)
        if not bodies:
            return []
        reads = all(body["op"] in READ_OPERATIONS for body in bodies)
        answers = self._pool.execute(bodies, reads=reads, timeout=timeout)
        self._note_seq(answers)
        return answers

    def submit(self, op: str, **fields: Any) -> concurrent.futures.Future:
        """Sends one request without waiting and returns a concurrent.futures.Future of its answer (an error
        answer is a result, not an exception). Nothing is sent again: a dropped connection fails the future
        with ConnectionClosedError. For many requests in flight from one thread (see bench.py)."""
        body = wire_fields({"op": op, **fields})
        future = self._pool.submit(body)
        future.add_done_callback(self._note_future_seq)
        return future

    @staticmethod
    def raise_for(answer: Mapping[str, Any]) -> dict:
        """Returns `answer` when it is a success, raises its EntitledError otherwise."""
        if answer.get("ok") is not True:
            raise error_from_answer(answer)
        return dict(answer)

    def _call(self, op: str, fields: dict[str, Any], extra: Mapping[str, Any]) -> dict:
        _refuse_unknown(op, fields, extra)
        extra = dict(extra)
        timeout = extra.pop("timeout", None)
        if (self.read_your_writes and op in MIN_SEQ_OPERATIONS and fields.get("min_seq") is None
                and "minSeq" not in extra and self.last_seq is not None):
            fields = dict(fields, min_seq=self.last_seq)
        body = wire_fields({"op": op, **fields, **extra})
        # A read that waits (changes with wait) goes on a connection of its own for the call, so that it holds
        # up no other call, and may take its wait on top of the client's timeout.
        wait = body.get("wait") if op == "changes" else None
        waits = isinstance(wait, (int, float)) and not isinstance(wait, bool) and wait > 0
        if waits and timeout is None and self._pool.timeout is not None:
            timeout = self._pool.timeout + wait / 1000
        answer = self._pool.execute([body], reads=op in READ_OPERATIONS, timeout=timeout,
                                    retry_stale=op in MIN_SEQ_OPERATIONS, alone=waits)[0]
        if answer.get("ok") is not True:
            raise error_from_answer(answer, op)
        self._note_seq([answer])
        return answer

    def _note_seq(self, answers: list[dict]) -> None:
        """Keeps the newest "seq" the answers carry as last_seq."""
        for answer in answers:
            seq = answer.get("seq")
            if isinstance(seq, int) and not isinstance(seq, bool):
                with self._seq_lock:
                    if self.last_seq is None or seq > self.last_seq:
                        self.last_seq = seq

    def _note_future_seq(self, future: concurrent.futures.Future) -> None:
        if not future.cancelled() and future.exception() is None:
            self._note_seq([future.result()])

    # -- operations that concern the client, not one request -------------------------------------------------

    def auth(self, token: str, **extra: Any) -> dict:
        """Authenticates with another token and returns the answer: {"name": ..., "role": "check" | "writer"
        | "admin"}. The other open connections send it too (their requests sent later have the new role),
        and every connection opened later sends it first. A refused token raises UnauthorizedError and the
        client keeps the token it had."""
        _refuse_unknown("auth", {"token": token}, extra)
        extra = dict(extra)
        timeout = extra.pop("timeout", None)
        answer = self._pool.authenticate(wire_fields({"op": "auth", "token": token, **extra}), timeout)
        if answer.get("ok") is not True:
            raise error_from_answer(answer, "auth")
        return answer

    def watch(self, *, user: str | None = None, device: str | None = None, all: bool | None = None,
              **extra: Any) -> Watch:
        """Watches memberships (a user, a device, both, or all=True for every one: admin only) and returns
        the stream of their pushed lines: iterate it, or call next_push(timeout). It holds a connection of
        its own; when that drops, it reconnects with backoff, watches again and yields a Gap before the next
        Push. Close it (or use it in a with block) to unwatch. Raises the EntitledError of a refused watch.

        max_queued_pushes=N (default: the client's, 10,000) bounds the events it holds until taken: when N
        wait, it stops reading its connection until one is taken (the server holds the lines; 4 MiB behind,
        it closes the connection, and the watch reconnects and yields a Gap). No push is dropped."""
        extra = dict(extra)
        max_queued_pushes = extra.pop("max_queued_pushes", self.max_queued_pushes)
        _refuse_unknown("watch", dict(user=user, device=device, all=all), extra)
        timeout = extra.pop("timeout", None)
        request = wire_fields({"op": "watch", "user": user, "device": device, "all": all, **extra})
        watch = Watch(self._pool, request, timeout=timeout, forget=self._watches.discard,
                      max_queued_pushes=max_queued_pushes)
        self._watches.add(watch)
        return watch

    def follow_changes(self, after_seq: int = 0, *, user: str | None = None, device: str | None = None,
                       page_size: int | None = None, wait: int | _dt.timedelta = DEFAULT_FEED_WAIT,
                       timeout: float | None = None,
                       **extra: Any) -> Follower:
        """Follows the change feed (an admin operation) from after_seq on (0: from the oldest change it
        holds; an export's seq; a position stored before): returns a Follower, an iterator of FeedItems,
        oldest first, that waits for the next change once caught up and ends only when closed (or with the
        error of a refused read: TruncatedError when the feed no longer reaches back to after_seq). With
        `user` and/or `device`, only what concerns them.

        It holds a connection of its own (a waiting read would hold up the client's other calls), opened by
        its first read, and reads again from its position after a drop, a restart or a loading answer,
        pausing with the client's backoff. page_size: items a read asks for (1 to 1000, default 100).
        wait: milliseconds (or a timedelta, at most 30 s) a caught-up read waits for a change, default
        20,000. timeout: what a read may take besides its wait (default: the client's timeout)."""
        fields = dict(after_seq=after_seq, user=user, device=device, page_size=page_size, wait=wait, timeout=timeout)
        fields = _fold_spellings("follow_changes", fields, extra)
        follower = Follower(self._pool, forget=self._feeds.discard, **fields)
        self._feeds.add(follower)
        return follower

    def iter_export(self, *, page_size: int | None = None, history: bool | None = None,
                    timeout: float | None = None, **extra: Any) -> Export:
        """Takes a full copy of the store as of one change (an admin operation) and returns an Export that
        reads it page by page on one connection of its own (the server that took the copy holds it: every
        page must go there). The first page is read at once, so the Export's `seq`, `time` and
        `entitlements` are there before iterating it; iterating gives each ExportPage (a list of
        memberships, with `.history` when history=True). Then follow the feed with
        follow_changes(export.seq): nothing written meanwhile is missed. page_size: memberships a page (1 to
        1000, default 1000). Raises OverLimitError when the server already holds 4 copies."""
        fields = _fold_spellings("iter_export", dict(page_size=page_size, history=history, timeout=timeout), extra)
        export = Export(self._pool, forget=self._feeds.discard, **fields)
        if not export.closed:
            self._feeds.add(export)
        return export
