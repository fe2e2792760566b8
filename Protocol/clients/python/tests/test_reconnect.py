"""Reconnecting to one address: after the server's idle timeout, a restart, a starting server; a watch
that survives a restart. What is sent again and what is not is tested here against real servers, and with
scripted stand-ins where a server cannot be made to fail at the right moment."""

from __future__ import annotations

import time
import unittest

import entitled
from entitled import Client, ConnectionClosedError

from .support import LOADING, PUSH_TIMEOUT, LineServer, Server, free_port


def connections_of(server: Server) -> dict:
    with Client("127.0.0.1", server.port) as probe:
        return probe.stats()["connections"]


class IdleTimeout(unittest.TestCase):
    """A server started with --idle-timeout 1 closes a quiet connection after a second (300 s by default):
    the next call opens another, for a read and for a write, which is sent once."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = Server("--idle-timeout", "1")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()
        cls.server.remove()

    def wait_for_idle_close(self, before: int) -> None:
        deadline = time.monotonic() + 10
        while connections_of(self.server)["closedIdle"] <= before:
            self.assertLess(time.monotonic(), deadline, "the server did not close the idle connection")
            time.sleep(0.3)
        time.sleep(0.1)  # the server counts the close as it closes: let the end of stream reach the client

    def check_reconnects(self, client: Client, name: str) -> None:
        client.grant("prod_idle", user=name)
        closed_before = connections_of(self.server)["closedIdle"]
        self.wait_for_idle_close(closed_before)
        self.assertTrue(client.check(user=name, product="prod_idle"))  # a read after the close
        self.wait_for_idle_close(closed_before + 1)
        # A write on a connection the server had already closed was never written there: it goes on a new
        # connection, once.
        client.grant("prod_idle_2", user=name, idempotency_key=f"{name}-2")
        self.assertEqual(sorted(m["productId"] for m in client.memberships(user=name)), ["prod_idle", "prod_idle_2"])

    def test_a_single_address_client_reconnects_after_the_server_closed_an_idle_connection(self) -> None:
        with Client("127.0.0.1", self.server.port) as client:
            self.check_reconnects(client, "idle-single")

    def test_a_client_of_one_node_reconnects_too(self) -> None:
        with Client(nodes=[self.server.address]) as client:
            self.check_reconnects(client, "idle-node")


class Restart(unittest.TestCase):
    """A server killed and started again on the same port, with the same data."""

    def setUp(self) -> None:
        self.server = Server(port=free_port())
        self.addCleanup(self.server.remove)

    def test_calls_fail_while_it_is_down_and_succeed_once_it_is_back(self) -> None:
        client = Client("127.0.0.1", self.server.port, timeout=5)
        self.addCleanup(client.close)
        client.grant("prod_r", user="restart")
        self.server.kill()
        try:  # sent before the reader thread saw the connection end, or not sent at all
            client.grant("prod_r2", user="restart", idempotency_key="r2")
        except ConnectionClosedError as lost:
            self.assertTrue(lost.may_have_been_applied)
        except entitled.CannotConnectError as down:
            self.assertFalse(down.may_have_been_applied)
        with self.assertRaises(entitled.CannotConnectError) as down:
            client.grant("prod_r2", user="restart", idempotency_key="r2")
        self.assertFalse(down.exception.may_have_been_applied)
        self.server.start()
        deadline = time.monotonic() + 5  # within the backoff (at most 2 s) after the failed connects
        while True:
            try:
                self.assertTrue(client.check(user="restart", product="prod_r"))
                break
            except entitled.CannotConnectError:
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.05)
        self.assertEqual([m["productId"] for m in client.memberships(user="restart")], ["prod_r"])

    def test_a_watch_survives_a_restart_and_says_what_it_may_have_missed(self) -> None:
        client = Client("127.0.0.1", self.server.port, timeout=5)
        self.addCleanup(client.close)
        with client.watch(user="watcher") as stream:
            client.grant("prod_before", user="watcher")
            self.assertEqual(stream.next_push(PUSH_TIMEOUT).membership["productId"], "prod_before")
            self.server.restart()
            gap = stream.next_push(10)
            self.assertIsInstance(gap, entitled.Gap)
            self.assertLessEqual(gap.since, gap.until)
            self.assertIn("re-read the state", str(gap))
            granted = None
            deadline = time.monotonic() + 5
            while granted is None:
                try:
                    granted = client.grant("prod_after", user="watcher")["membership"]
                except entitled.CannotConnectError:
                    self.assertLess(time.monotonic(), deadline)
                    time.sleep(0.05)
            push = stream.next_push(PUSH_TIMEOUT)
            self.assertIsInstance(push, entitled.Push)
            self.assertEqual(push.membership["id"], granted["id"])


class DroppedRequests(unittest.TestCase):
    """A stand-in that reads a line and closes the connection without answering it (connection 0), then
    answers: a read is sent again once, a write raises saying it may have been applied."""

    def server(self, answer: dict) -> LineServer:
        server = LineServer(lambda n, request: LineServer.CLOSE if n == 1 else answer)
        self.addCleanup(server.close)
        return server

    def test_a_read_whose_connection_drops_is_sent_again_once(self) -> None:
        server = self.server({"ok": True, "active": True})
        with Client("127.0.0.1", server.port, timeout=5) as client:
            client.ping()  # connection 0
            client._pool.connection().close()  # noqa: SLF001 - the next call opens connection 1, which drops
            self.assertTrue(client.check(user="u"))
        self.assertEqual([line["op"] for line in server.lines], ["ping", "check", "check"])

    def test_a_write_whose_connection_drops_after_it_was_sent_is_not_sent_again(self) -> None:
        server = self.server({"ok": True, "seq": 1, "membership": {}})
        with Client("127.0.0.1", server.port, timeout=5) as client:
            client._pool.connection().close()  # noqa: SLF001
            with self.assertRaises(ConnectionClosedError) as dropped:
                client.grant("p", user="u", idempotency_key="order-1")
            self.assertTrue(dropped.exception.may_have_been_applied)
            self.assertEqual(dropped.exception.op, "grant")
            self.assertIn("same idempotency key", str(dropped.exception))
            self.assertEqual(client.grant("p", user="u", idempotency_key="order-1")["seq"], 1)  # the caller's retry
        self.assertEqual([line["op"] for line in server.lines], ["grant", "grant"])


class StartingServer(unittest.TestCase):
    """A server that answers "loading" while it starts, then closes: the client asks again on a new
    connection, pausing 50 ms doubling to 1 s."""

    def starting(self, script) -> LineServer:
        server = LineServer(script)
        self.addCleanup(server.close)
        return server

    def test_a_request_answered_loading_is_asked_again_until_the_server_answers_it(self) -> None:
        server = self.starting(lambda n, request: LOADING if n < 2 else {"ok": True, "active": True})
        with Client("127.0.0.1", server.port, loading_wait=10) as client:
            self.assertTrue(client.check(user="u1", entitlement="pro"))
        self.assertEqual(server.connections, 3)

    def test_without_loading_wait_the_loading_answer_is_raised_at_once(self) -> None:
        server = self.starting(lambda n, request: LOADING)
        with Client("127.0.0.1", server.port, loading_wait=0) as client:
            with self.assertRaises(entitled.LoadingError) as raised:
                client.check(user="u1", entitlement="pro")
        self.assertEqual((raised.exception.code, raised.exception.loaded, raised.exception.total), ("loading", 1, 2))
        self.assertFalse(raised.exception.may_have_been_applied)
        self.assertEqual(server.connections, 1)

    def test_a_read_lost_after_a_loading_answer_is_asked_again_a_write_is_not(self) -> None:
        def script(answer):
            return lambda n, request: [LOADING, LineServer.CLOSE, answer][min(n, 2)]

        reads = self.starting(script({"ok": True, "active": True}))
        with Client("127.0.0.1", reads.port, loading_wait=10) as reader:
            self.assertTrue(reader.check(user="u1", entitlement="pro"))
        writes = self.starting(script({"ok": True, "seq": 1}))
        with Client("127.0.0.1", writes.port, loading_wait=10) as writer:
            with self.assertRaises(ConnectionClosedError) as lost:
                writer.request("grant", user="u1", product="p")
        self.assertTrue(lost.exception.may_have_been_applied)
        self.assertEqual(writes.connections, 2)


if __name__ == "__main__":
    unittest.main()
