"""Client(nodes=...): connections spread over the nodes, a node that is down is skipped, a read lost with
its connection goes to another node, a write never does, stale reads are asked of another node, and the
token is sent to every node. Standalone servers stand in for a cluster's nodes: what is tested is the
client's choice of node, not the cluster."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import unittest

import entitled
from entitled import Client, ConnectionClosedError, EntitledError

from .support import ADMIN_TOKEN, PUSH_TIMEOUT, LineServer, Server


class SeveralNodes(unittest.TestCase):
    def node(self, *arguments: str) -> Server:
        node = Server(*arguments)
        self.addCleanup(node.remove)
        return node

    def client(self, nodes: list, **kwargs) -> Client:
        c = Client(nodes=nodes, **kwargs)
        self.addCleanup(c.close)
        return c

    def test_consecutive_clients_start_at_consecutive_nodes_and_spread_their_requests(self) -> None:
        a, b = self.node(), self.node()
        clients = [self.client([a.address, ("127.0.0.1", b.port)]) for _ in range(4)]
        self.assertEqual({c.node for c in clients}, {("127.0.0.1", a.port), ("127.0.0.1", b.port)})
        c = clients[0]
        used = set()
        for _ in range(4):
            self.assertIs(c.ping()["ok"], True)
            self.assertEqual(c.address, f"tcp 127.0.0.1:{c.node.port}")
            used.add(c.node)
        self.assertEqual(used, {("127.0.0.1", a.port), ("127.0.0.1", b.port)})  # one connection to each

    def test_a_node_that_is_down_is_skipped(self) -> None:
        a, b = self.node(), self.node()
        a.kill()
        c = self.client([a.address, b.address])
        for _ in range(4):
            self.assertFalse(c.check(user="alice"))
            self.assertEqual(c.node, ("127.0.0.1", b.port))

    def test_when_every_node_is_down_the_error_names_each(self) -> None:
        a, b = self.node(), self.node()
        a.kill()
        b.kill()
        with self.assertRaises(entitled.NoNodeAvailableError) as caught:
            Client(nodes=[a.address, b.address], timeout=5)
        self.assertEqual(sorted(address for address, _ in caught.exception.failures),
                         sorted([f"tcp {a.address}", f"tcp {b.address}"]))
        self.assertIn("refused", str(caught.exception))
        self.assertIsInstance(caught.exception, ConnectionError)
        self.assertFalse(caught.exception.may_have_been_applied)

    def test_a_read_whose_node_is_killed_is_answered_by_another(self) -> None:
        a, b = self.node(), self.node()
        c = self.client([a.address, b.address])
        self.assertFalse(c.check(user="alice"))
        first = c.node
        (a if first.port == a.port else b).kill()
        for _ in range(3):
            self.assertFalse(c.check(user="alice"))
            self.assertNotEqual(c.node, first)
        answers = c.pipeline([{"op": "check", "user": f"u{i}"} for i in range(50)])
        self.assertEqual([x["active"] for x in answers], [False] * 50)

    def test_a_read_is_sent_again_to_another_node_and_a_write_is_not(self) -> None:
        # A node that reads each line and closes the connection without answering.
        dropping = LineServer(lambda n, request: LineServer.CLOSE)
        self.addCleanup(dropping.close)
        real = self.node()
        c = self.client([dropping.address, real.address], timeout=5)
        for i in range(4):  # the requests alternate between the two nodes' connections
            self.assertFalse(c.check(user=f"reader-{i}"))
            self.assertEqual(c.node.port, real.port)
        dropped_reads = [line for line in dropping.lines if line["op"] == "check"]
        self.assertGreaterEqual(len(dropped_reads), 1)
        failures = []
        for i in range(4):
            try:
                c.grant("prod_w", user=f"writer-{i}", idempotency_key=f"write-{i}")
            except ConnectionClosedError as error:
                failures.append((i, error))
        self.assertGreaterEqual(len(failures), 1)
        with Client("127.0.0.1", real.port) as direct:
            for i, error in failures:
                self.assertTrue(error.may_have_been_applied)
                self.assertIn("same idempotency key", str(error))
                self.assertEqual(direct.memberships(user=f"writer-{i}"), [])  # not sent elsewhere

    def test_a_stale_read_is_asked_of_another_node(self) -> None:
        stale = {"ok": False, "error": {"code": "stale", "message": "this node has applied changes up to 1"}}
        lagging = LineServer(lambda n, request: stale)
        current = LineServer(lambda n, request: {"ok": True, "active": True})
        for server in (lagging, current):
            self.addCleanup(server.close)
        c = self.client([lagging.address, current.address])
        for _ in range(4):  # each asked first of either node; the lagging one's answer sends it to the other
            self.assertTrue(c.check(user="u", min_seq=5))
        self.assertGreaterEqual(len(lagging.lines), 1)
        self.assertEqual([line.get("minSeq") for line in current.lines], [5] * 4)
        with Client("127.0.0.1", lagging.port) as alone:  # one node: the stale answer is raised
            with self.assertRaises(entitled.StaleError):
                alone.check(user="u", min_seq=5)

    def test_the_token_is_sent_to_each_node_connected_to(self) -> None:
        tmp = tempfile.mkdtemp(prefix="entitled-py-auth-")
        self.addCleanup(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, "auth.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump([{"name": "py-admin", "token": ADMIN_TOKEN, "role": "admin"}], f)
        os.chmod(path, 0o600)
        a, b = self.node("--auth", path), self.node("--auth", path)
        c = self.client([a.address, b.address], token=ADMIN_TOKEN)
        for _ in range(2):
            self.assertIs(c.stats()["ok"], True)  # an admin read on each node: authenticated on both
        c.define("pro", ["prod_pro"])
        with self.assertRaises(EntitledError) as refused:
            Client(nodes=[a.address, b.address], token="not-a-token-of-this-server")
        self.assertIsInstance(refused.exception, entitled.UnauthorizedError)
        self.assertNotIn("not-a-token-of-this-server", str(refused.exception.answer))

    def test_a_watch_moves_to_another_node_when_its_node_dies(self) -> None:
        a, b = self.node(), self.node()
        c = self.client([a.address, b.address])
        with c.watch(user="carol") as stream:
            watched = stream.node
            (a if watched.port == a.port else b).kill()
            self.assertIsInstance(stream.next_push(10), entitled.Gap)
            self.assertNotEqual(stream.node, watched)
            # Standalone servers share no data: write on the node the watch moved to.
            with Client("127.0.0.1", stream.node.port) as writer:
                writer.grant("prod_c", user="carol")
            self.assertEqual(stream.next_push(PUSH_TIMEOUT).membership["productId"], "prod_c")


if __name__ == "__main__":
    unittest.main()
