"""The client's mechanics: names and values, pipelining from many threads, timeouts and late answers,
cancellation, lines the protocol does not allow, read your writes, the raw connection. Scripted stand-ins
(tests/support.py) play the server where a real one cannot be made to misbehave; one real server is shared
by the tests that need one."""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import json
import time
import unittest

import entitled
from entitled import CheckResult, Client, Connection, ProtocolError, RequestTimeoutError

from .support import LineServer, SharedServerTestCase


class Values(unittest.TestCase):
    def test_wire_names(self) -> None:
        self.assertEqual(entitled.wire_name("expires_at"), "expiresAt")
        self.assertEqual(entitled.wire_name("grace_period_expires_at"), "gracePeriodExpiresAt")
        self.assertEqual(entitled.wire_name("original_transaction_id"), "originalTransactionId")
        self.assertEqual(entitled.wire_name("expiresAt"), "expiresAt")
        self.assertEqual(entitled.wire_name("user"), "user")
        self.assertEqual(entitled.wire_name("_private"), "_private")

    def test_wire_values(self) -> None:
        berlin = dt.timezone(dt.timedelta(hours=1))
        self.assertEqual(entitled.wire_value(dt.datetime(2027, 12, 21, 0, 0, 0, 123456, tzinfo=berlin)),
                         "2027-12-20T23:00:00.123Z")
        with self.assertRaises(ValueError):
            entitled.wire_value(dt.datetime(2027, 1, 1))
        self.assertEqual(entitled.wire_value(dt.timedelta(days=30)), "2592000s")
        with self.assertRaises(ValueError):
            entitled.wire_value(dt.timedelta(seconds=1.5))
        self.assertEqual(entitled.wire_value(["a"]), ["a"])

    def test_times_the_server_writes_parse_on_every_python(self) -> None:
        utc = dt.timezone.utc
        self.assertEqual(entitled.parse_time("2026-12-22T00:31:45.833Z"), dt.datetime(2026, 12, 22, 0, 31, 45, 833000, tzinfo=utc))
        self.assertEqual(entitled.parse_time("2026-12-22T00:31:45Z"), dt.datetime(2026, 12, 22, 0, 31, 45, tzinfo=utc))
        self.assertEqual(entitled.parse_time("2026-12-22T01:31:45.5+01:00"),
                         dt.datetime(2026, 12, 22, 0, 31, 45, 500000, tzinfo=utc))
        with self.assertRaises(ValueError):
            entitled.parse_time("22/12/2026")
        self.assertEqual(CheckResult(True, "2026-12-22T00:31:45.833Z").expires_at_datetime,
                         dt.datetime(2026, 12, 22, 0, 31, 45, 833000, tzinfo=utc))
        self.assertTrue(CheckResult(True, None))
        self.assertFalse(CheckResult(False))

    def test_nodes_are_host_port_strings_tuples_or_socket_paths(self) -> None:
        self.assertEqual(entitled.parse_address("10.0.0.5:7117"), ("10.0.0.5", 7117))
        self.assertEqual(entitled.parse_address("[::1]:7117"), ("::1", 7117))
        self.assertEqual(str(entitled.parse_address("[::1]:7117")), "tcp [::1]:7117")
        self.assertEqual(entitled.parse_address(("db", 1)), ("db", 1))
        self.assertTrue(entitled.parse_address("/run/entitled.sock").is_unix)
        for bad in ["10.0.0.5", ":7117", "host:port"]:
            with self.assertRaises(ValueError):
                entitled.parse_address(bad)
        with self.assertRaises(ValueError):
            Client(nodes=[])

    def test_the_backoff_doubles_from_50_ms_to_2_s_with_full_jitter(self) -> None:
        backoff = entitled.Backoff()
        for attempt, ceiling in [(0, 0.05), (1, 0.1), (3, 0.4), (6, 2.0), (40, 2.0)]:
            delays = [backoff.delay(attempt) for _ in range(200)]
            self.assertTrue(all(0 <= d <= ceiling for d in delays), (attempt, max(delays)))
            self.assertGreater(max(delays) - min(delays), ceiling / 4)  # spread out, not one value


class Pipelining(SharedServerTestCase):
    def test_1000_requests_in_flight_on_one_connection(self) -> None:
        c = self.client()
        c.grant("prod_pipe", user="pipe-1")
        answers = c.pipeline([{"op": "check", "user": f"pipe-{i % 2}", "id": f"q{i}"} for i in range(1000)])
        self.assertEqual([a["id"] for a in answers], [f"q{i}" for i in range(1000)])
        self.assertEqual([a["active"] for a in answers], [i % 2 == 1 for i in range(1000)])
        futures = [c.submit("check", user=f"pipe-{i % 2}") for i in range(1000)]
        self.assertEqual([f.result(10)["active"] for f in futures], [i % 2 == 1 for i in range(1000)])
        self.assertEqual(c.stats()["connections"]["open"], 1)

    def test_threads_share_one_connection_and_each_gets_its_own_answers(self) -> None:
        c = self.client()
        for t in range(8):
            c.grant(f"prod_t{t}", user=f"thread-{t}")

        def work(t: int) -> list:
            return [c.check(user=f"thread-{t}", product=f"prod_t{(t + i) % 8}").active for i in range(100)]

        with concurrent.futures.ThreadPoolExecutor(8) as threads:
            results = list(threads.map(work, range(8)))
        for t, actives in enumerate(results):
            self.assertEqual(actives, [i % 8 == 0 for i in range(100)])
        self.assertEqual(c.stats()["connections"]["open"], 1)

    def test_connections_per_node_opens_that_many_and_spreads_the_requests(self) -> None:
        c = self.client(connections_per_node=3)
        for _ in range(9):
            c.ping()
        self.assertEqual(c.stats()["connections"]["open"], 3)

    def test_read_your_writes_carries_the_last_seq_as_min_seq(self) -> None:
        c = self.client(read_your_writes=True)
        seq = c.grant("prod_ryw", user="ryw")["seq"]
        self.assertEqual(c.last_seq, seq)
        self.assertTrue(c.check(user="ryw", product="prod_ryw"))
        other = self.client()
        self.assertTrue(other.check(user="ryw", min_seq=c.last_seq))
        with self.assertRaises(entitled.StaleError):
            other.check(user="ryw", min_seq=seq + 1000, timeout=10)

    def test_the_raw_connection_sends_what_it_is_given(self) -> None:
        conn = Connection.open(self.server.address)
        self.addCleanup(conn.close)
        watch = conn.send({"op": "watch", "user": "raw", "id": "w"})
        self.assertEqual(watch.result(5), {"ok": True, "id": "w", "watches": 1})
        odd = conn.send_line('{"op":"ping","id":1}\n{"op":"ping"')  # one line and a half
        self.assertEqual(len(odd), 1)
        rest = conn.send_line("}\n")
        self.assertEqual((odd[0].result(5)["id"], rest[0].result(5)), (1, {"ok": True}))
        self.assertEqual(conn.send_line("nonsense\n")[0].result(5)["error"]["code"], "bad_json")
        with Client("127.0.0.1", self.server.port) as writer:
            writer.grant("prod_raw", user="raw")
        self.assertEqual(conn.next_push(5)["cause"], "grant")


class Timeouts(unittest.TestCase):
    """A stand-in that answers the first request only with the second's answer: late."""

    def late_server(self) -> LineServer:
        held: list = []

        def script(n: int, request: dict):
            if not held:
                held.append(request)
                return None
            first = dict({"ok": True, "late": True}, id=held.pop()["id"])
            return (json.dumps(first) + "\n" + json.dumps({"ok": True, "id": request["id"]}) + "\n").encode()

        server = LineServer(script)
        self.addCleanup(server.close)
        return server

    def test_a_request_times_out_at_once_and_its_late_answer_is_dropped(self) -> None:
        server = self.late_server()
        with Client("127.0.0.1", server.port, timeout=5) as c:
            started = time.monotonic()
            with self.assertRaises(RequestTimeoutError) as raised:
                c.ping(timeout=0.3)
            self.assertLess(time.monotonic() - started, 2)
            self.assertIsInstance(raised.exception, TimeoutError)
            self.assertEqual(raised.exception.op, "ping")
            self.assertEqual(c.ping(), {"ok": True, "id": 2})  # the late answer to 1 was dropped
        self.assertEqual(server.connections, 1)  # on the same connection

    def test_a_write_that_timed_out_may_have_been_applied(self) -> None:
        server = self.late_server()
        with Client("127.0.0.1", server.port, timeout=0.3) as c:
            with self.assertRaises(RequestTimeoutError) as raised:
                c.grant("p", user="u", idempotency_key="k")
        self.assertTrue(raised.exception.may_have_been_applied)
        self.assertIn("same idempotency key", str(raised.exception))

    def test_a_cancelled_request_keeps_its_place_and_its_answer_is_dropped(self) -> None:
        server = self.late_server()
        with Client("127.0.0.1", server.port) as c:
            pending = c.submit("ping")
            self.assertTrue(pending.cancel())
            self.assertEqual(c.submit("ping").result(5), {"ok": True, "id": 2})
            self.assertTrue(pending.cancelled())


class BadLines(unittest.TestCase):
    def server(self, reply: bytes) -> LineServer:
        server = LineServer(lambda n, request: reply)
        self.addCleanup(server.close)
        return server

    def test_a_wrong_id_echo_is_a_protocol_error_that_closes_the_connection(self) -> None:
        server = self.server(b'{"ok":true,"id":999}\n')
        with Client("127.0.0.1", server.port, timeout=5) as c:
            with self.assertRaises(ProtocolError) as raised:
                c.grant("p", user="u")
            self.assertTrue(raised.exception.may_have_been_applied)
            self.assertIn("999", str(raised.exception))

    def test_a_line_that_is_not_json_is_a_protocol_error(self) -> None:
        server = self.server(b"<html>\n")
        with Client("127.0.0.1", server.port, timeout=5) as c:
            with self.assertRaises(ProtocolError):
                c.check(user="u")

    def test_a_page_whose_next_does_not_move_on_stops_the_iterator(self) -> None:
        server = self.server(b'{"ok":true,"memberships":[],"next":"mem_0000000000000"}\n')
        with Client("127.0.0.1", server.port, timeout=5) as c:
            with self.assertRaises(ProtocolError):
                list(c.iter_memberships(user="u"))  # an empty page with next would be asked for forever

    def test_a_push_before_the_answer_is_not_taken_for_it(self) -> None:
        server = self.server(b'{"push":"access","cause":"grant"}\n{"ok":true,"id":1}\n')
        conn = Connection.open(server.address)
        self.addCleanup(conn.close)
        self.assertEqual(conn.submit([{"op": "ping"}])[0].result(5), {"ok": True, "id": 1})
        self.assertEqual(conn.next_push(0), {"push": "access", "cause": "grant"})
        self.assertIsNone(conn.next_push(0))

    def test_an_answer_to_no_request_is_kept_and_the_close_is_seen(self) -> None:
        busy = b'{"ok":false,"error":{"code":"busy","message":"too many connections"}}\n'
        server = LineServer(lambda n, request: None)
        self.addCleanup(server.close)
        conn = Connection.open(server.address)
        self.addCleanup(conn.close)
        server.send_to(0, busy)  # the stand-in speaks first, as a server at its connection limit does
        self.assertEqual(conn.next_unsolicited(5)["error"]["code"], "busy")
        server.close()
        self.assertTrue(conn.wait_closed(5))
        self.assertIsInstance(conn.close_reason, entitled.ConnectionClosedError)


if __name__ == "__main__":
    unittest.main()
