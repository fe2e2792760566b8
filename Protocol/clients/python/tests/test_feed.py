"""The change feed and exports (PROTOCOL.md §6, changes and export) against real servers: typed pages and
items, a waiting read that holds up nothing else, the follower across a kill -9 and restart, across waits
that time out, narrowed to a subject, ending with truncated; exports in pages equal to what the server
lists, pinned to the node that took them, and followed by the feed without missing a write. Scripted
stand-ins (tests/support.py) where a server cannot be made to answer so on cue: loading, a change of several
items."""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import queue
import threading
import time
import unittest

import entitled
from entitled import Client, FeedItem, FeedPage, TruncatedError

from .support import ADMIN_TOKEN, LOADING, LineServer, Server, ServerTestCase, free_port, utc_now

# Generous: what a test waits for an item the server has, or for a server to come back.
ITEM_TIMEOUT = 30.0


def membership_ids(items) -> list[str]:
    return [item.membership["id"] for item in items]


def drain(follower: entitled.Follower, idle: float = 1.0) -> list[FeedItem]:
    """Every item the follower delivers until none came for `idle` seconds."""
    items = []
    while True:
        item = follower.next_change(timeout=idle)
        if item is None:
            return items
        items.append(item)


def apply(copy: dict[str, dict], item: FeedItem) -> None:
    """What a consumer of the feed does with an item, as the README shows."""
    if item.membership is not None:
        copy[item.membership["id"]] = item.membership
    for gone in item.erased_memberships:
        copy.pop(gone, None)
    for kept in item.detached_memberships:
        copy.get(kept, {}).pop("device", None)


def write_once_up(write, deadline: float = ITEM_TIMEOUT):
    """Calls write() until the server takes it (after a restart); write() carries an idempotency key, so a
    write whose connection dropped is sent again safely."""
    until = time.monotonic() + deadline
    while True:
        try:
            return write()
        except (entitled.CannotConnectError, entitled.LoadingError, entitled.ConnectionClosedError):
            if time.monotonic() > until:
                raise
            time.sleep(0.05)


class ChangesPages(ServerTestCase):
    """changes(): one page of the feed, its items typed."""

    def test_every_kind_of_item_is_typed_and_keeps_its_json(self) -> None:
        c = self.client()
        c.define("pro", ["prod_pro"], reason="launch")
        first = c.grant("prod_pro", user="ann", duration="30d", transaction_id="t1", original_transaction_id="o1")
        moved = c.grant("prod_pro", user="ben", duration="30d", transaction_id="t2", original_transaction_id="o1")
        extended = c.extend(first["membership"]["id"], duration="7d", reason="goodwill")
        now = utc_now()
        c.event(first["membership"]["id"], "renewal", event_id="evt_9", event_time=now,
                          expires_at=now + dt.timedelta(days=60), transaction_id="t3")
        bought_on = c.grant("prod_pro", user="cat", device="shared-ipad")
        c.grant("prod_pro", device="shared-ipad")  # a guest purchase: erased with the device
        erased = c.erase(device="shared-ipad", reason="ticket 7")

        page = c.changes(after_seq=0)
        self.assertIsInstance(page, FeedPage)
        self.assertEqual((page.next, page.newest, page.oldest_after_seq, page.has_more), (c.last_seq, c.last_seq, 0, False))
        by_action = {item.action: item for item in page}
        self.assertEqual([item.sequence for item in page], sorted(item.sequence for item in page))

        define = by_action["define"]
        self.assertEqual((define.sequence, define.entitlement, define.products, define.reason, define.membership),
                         (1, "pro", ["prod_pro"], "launch", None))
        self.assertEqual(define.actor, "local")
        self.assertLess(abs((define.time_datetime - utc_now()).total_seconds()), 300)
        transfer = by_action["transfer"]
        self.assertEqual((transfer.sequence, transfer.membership["user"], transfer.former_owner),
                         (moved["seq"], "ben", {"user": "ann"}))
        extend = by_action["extend"]
        self.assertEqual((extend.sequence, extend.previous_expires_at, extend.reason),
                         (extended["seq"], extended["previousExpiresAt"], "goodwill"))
        renewal = by_action["renewal"]
        self.assertEqual((renewal.event_id, renewal.membership["id"]), ("evt_9", first["membership"]["id"]))
        self.assertIsNotNone(renewal.event_time)
        erase = by_action["erase"]
        self.assertEqual(erase.erased, entitled.ErasedCounts(memberships=erased["memberships"],
                                                             history_entries=erased["historyEntries"]))
        self.assertEqual(len(erase.erased_memberships), 1)
        self.assertEqual(erase.detached_memberships, [bought_on["membership"]["id"]])
        self.assertIsNone(erase.membership)
        # The JSON of each item, as the server wrote it, for what passes it on whole.
        self.assertEqual(transfer.raw["formerOwner"], {"user": "ann"})
        self.assertEqual(FeedItem.from_json(transfer.raw), transfer)

    def test_a_page_reads_on_from_next_and_a_subjects_page_moves_past_what_it_leaves_out(self) -> None:
        c = self.client()
        seqs = [c.grant("prod_p", user=f"u{i}")["seq"] for i in range(5)]
        first = c.changes(limit=2)
        self.assertEqual(([item.sequence for item in first], first.next, first.newest, first.has_more),
                         (seqs[:2], seqs[1], seqs[-1], True))
        rest = c.changes(after_seq=first.next)
        self.assertEqual([item.sequence for item in rest], seqs[2:])
        others = c.changes(after_seq=0, user="nobody")
        self.assertEqual((list(others), others.next), ([], seqs[-1]))

    def test_a_waiting_read_holds_up_none_of_the_clients_other_calls(self) -> None:
        c = self.client(connections_per_node=1)
        c.grant("prod_w", user="waiter")
        with concurrent.futures.ThreadPoolExecutor(1) as threads:
            waiting = threads.submit(c.changes, after_seq=c.last_seq, wait=dt.timedelta(seconds=30))
            time.sleep(0.3)  # let the waiting read reach the server first
            self.assertTrue(c.check(user="waiter", product="prod_w"))  # answered while the read waits
            self.assertFalse(waiting.done())
            granted = c.grant("prod_w", user="waiter", reason="wakes the read")
            page = waiting.result(timeout=ITEM_TIMEOUT)
        self.assertEqual([(item.sequence, item.reason) for item in page], [(granted["seq"], "wakes the read")])
        # A wait that passes answers an empty page, which still says where to read on.
        empty = c.changes(after_seq=c.last_seq, wait=100)
        self.assertEqual((list(empty), empty.next), ([], c.last_seq))

    def test_a_bad_wait_or_keyword_is_refused_before_anything_is_sent(self) -> None:
        c = self.client()
        with self.assertRaises(entitled.BadRequestError):
            c.changes(wait=30001)  # the server's limit
        with self.assertRaises(TypeError) as misspelt:
            c.follow_changes(0, page_sise=10)
        self.assertIn("did you mean 'page_size'", str(misspelt.exception))
        with self.assertRaises(ValueError):
            c.follow_changes(0, wait=30001)
        with self.assertRaises(ValueError):
            c.follow_changes(-1)
        with self.assertRaises(TypeError):
            c.iter_export(id="x")



class AdminOnly(ServerTestCase):
    """A server started with --auth: the feed and exports show every customer's data, so only an admin reads
    them."""

    def server_arguments(self) -> list[str]:
        import json
        import os
        path = os.path.join(self.tmp, "auth.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump([{"name": "w", "token": "python-writer-token-01", "role": "writer"},
                       {"name": "a", "token": ADMIN_TOKEN, "role": "admin"}], f)
        return ["--auth", path]

    def test_a_writer_is_forbidden_and_an_admin_reads(self) -> None:
        writer = self.client(token="python-writer-token-01")
        writer.grant("prod_a", user="u1")
        with self.assertRaises(entitled.ForbiddenError):
            writer.changes()
        with writer.follow_changes(0) as follower:
            with self.assertRaises(entitled.ForbiddenError):
                next(follower)
            with self.assertRaises(entitled.ForbiddenError):  # it ended with that error
                follower.next_change(timeout=1)
        with self.assertRaises(entitled.ForbiddenError):
            writer.iter_export()
        admin = self.client(token=ADMIN_TOKEN)
        with admin.follow_changes(0) as follower:
            self.assertEqual(next(follower).actor, "w")
        with admin.iter_export() as export:
            self.assertEqual([m["user"] for page in export for m in page], ["u1"])


class FollowingAcrossFailures(unittest.TestCase):
    """A follower against a server that is killed (-9) and started again on the same port and data."""

    def setUp(self) -> None:
        self.server = Server(port=free_port())
        self.addCleanup(self.server.remove)
        self.client = Client("127.0.0.1", self.server.port, timeout=5)
        self.addCleanup(self.client.close)

    def test_the_follower_delivers_every_change_in_order_across_a_kill_and_a_restart(self) -> None:
        c = self.client
        ids = [c.grant("prod_f", user=f"before-{i}")["membership"]["id"] for i in range(25)]
        follower = c.follow_changes(0, page_size=10, wait=2000)
        self.addCleanup(follower.close)
        delivered: queue.Queue = queue.Queue()
        ended: list[BaseException] = []

        def consume() -> None:  # as an application's consumer thread does
            try:
                for item in follower:
                    delivered.put(item)
            except BaseException as error:  # noqa: BLE001 - reported by the test
                ended.append(error)

        def take(count: int) -> list[FeedItem]:
            try:
                return [delivered.get(timeout=ITEM_TIMEOUT) for _ in range(count)]
            except queue.Empty:
                self.fail(f"the follower delivered nothing for {ITEM_TIMEOUT} s; it ended with {ended}")

        consumer = threading.Thread(target=consume, daemon=True)
        consumer.start()
        items = take(25)
        self.server.restart()  # kill -9 while the follower's read waits, then start again on the same data
        ids += [write_once_up(lambda i=i: c.grant("prod_f", user=f"after-{i}", idempotency_key=f"after-{i}"))
                ["membership"]["id"] for i in range(25)]
        items += take(25)

        self.assertEqual([item.sequence for item in items], list(range(1, 51)))  # in order, none skipped
        self.assertEqual(membership_ids(items), ids)
        self.assertEqual(follower.position, 50)
        with self.assertRaises(queue.Empty):  # nothing delivered twice
            delivered.get(timeout=1)
        follower.close()  # from another thread: its waiting read ends, and so does the iteration
        consumer.join(ITEM_TIMEOUT)
        self.assertFalse(consumer.is_alive())
        self.assertEqual(ended, [])

    def test_the_follower_reads_on_after_waits_that_time_out_empty(self) -> None:
        c = self.client
        c.grant("prod_f", user="early")
        with c.follow_changes(c.last_seq, wait=200) as follower:
            asked_before = c.stats()["requests"]["byOp"]["changes"]
            self.assertIsNone(follower.next_change(timeout=1.5))  # caught up: reads that waited 200 ms for nothing
            self.assertGreaterEqual(c.stats()["requests"]["byOp"]["changes"] - asked_before, 2)  # asked again
            self.assertEqual(follower.position, c.last_seq)
            granted = c.grant("prod_f", user="late")
            item = follower.next_change(timeout=ITEM_TIMEOUT)
            self.assertEqual((item.sequence, item.membership["id"]), (granted["seq"], granted["membership"]["id"]))
            self.assertEqual(follower.position, granted["seq"])

    def test_a_subjects_follower_sees_only_its_subject_and_moves_past_the_rest(self) -> None:
        c = self.client
        c.define("pro", ["prod_a"])  # a catalog change: no one's
        mine = [c.grant("prod_a", user="alice")]
        c.grant("prod_a", user="bob")
        guest = c.grant("prod_a", device="alices-phone")  # the device's until claimed
        c.claim(device="alices-phone", user="alice")
        mine.append(c.revoke(mine[0]["membership"]["id"], reason="refund"))
        c.grant("prod_a", user="bob", reason="the last change")
        with c.follow_changes(0, user="alice", wait=200) as follower:
            items = drain(follower)
            self.assertEqual(follower.position, c.last_seq)  # moved past bob's last change
        self.assertEqual([(item.action, item.membership["user"]) for item in items],
                         [("grant", "alice"), ("claim", "alice"), ("revoke", "alice")])
        self.assertEqual(items[1].membership["id"], guest["membership"]["id"])
        self.assertEqual(items[2].membership["status"], "revoked")


class FeedHorizon(unittest.TestCase):
    """A server whose feed keeps at least 4096 changes (--feed-retention-changes 4096) lets go of the oldest
    4096 at a time: after 13,000 grants it holds those after 8192."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = Server("--feed-retention-changes", "4096", "--fsync", "no")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()
        cls.server.remove()

    def test_a_follower_started_before_the_horizon_ends_with_truncated_and_an_export_resumes_it(self) -> None:
        with Client("127.0.0.1", self.server.port) as c:
            for batch in range(13):
                c.pipeline([{"op": "grant", "user": f"h{batch}-{i}", "product": "prod_h"} for i in range(1000)])
            follower = c.follow_changes(0)
            with self.assertRaises(TruncatedError) as truncated:
                next(follower)
            self.assertEqual(truncated.exception.code, "truncated")
            self.assertFalse(truncated.exception.may_have_been_applied)
            self.assertIn("export", truncated.exception.message)
            with self.assertRaises(TruncatedError) as again:  # it ended: every later call says why
                follower.next_change(timeout=1)
            self.assertIs(again.exception, truncated.exception)
            self.assertEqual(follower.position, 0)
            self.assertEqual(c.changes(after_seq=c.last_seq).oldest_after_seq, 8192)

            # What the message says to do: a full copy, then the feed after its seq.
            with c.iter_export() as export:
                self.assertEqual(sum(len(page) for page in export), 13000)
            with c.follow_changes(export.seq, wait=200) as resumed:
                granted = c.grant("prod_h", user="after-the-copy")
                item = resumed.next_change(timeout=ITEM_TIMEOUT)
                self.assertEqual(item.membership["id"], granted["membership"]["id"])


class Exports(ServerTestCase):
    """iter_export(): a whole copy as of one change, read on one connection."""

    def grant_many(self, c: Client, users: int, each: int) -> list[str]:
        answers = c.pipeline([{"op": "grant", "user": f"x{u}", "product": f"prod_{k}", "reason": "bulk"}
                              for u in range(users) for k in range(each)])
        return [answer["membership"]["id"] for answer in answers]

    def listed(self, c: Client, users) -> dict[str, dict]:
        return {m["id"]: m for user in users for m in c.iter_memberships(user=user, page_size=1000)}

    def test_an_export_in_pages_of_50_equals_the_memberships_the_server_lists(self) -> None:
        c = self.client()
        c.define("pro", ["prod_0", "prod_1"])
        ids = self.grant_many(c, users=30, each=10)
        for membership in ids[::7]:
            c.revoke(membership, reason="refund")
        with c.iter_export(page_size=50) as export:
            self.assertEqual((export.seq, export.entitlements), (c.last_seq, {"pro": ["prod_0", "prod_1"]}))
            self.assertLess(abs((export.time_datetime - utc_now()).total_seconds()), 300)
            pages = list(export)
        self.assertTrue(export.closed)
        self.assertTrue(all(len(page) <= 50 for page in pages))
        self.assertGreaterEqual(len(pages), 6)
        self.assertEqual({page.seq for page in pages}, {export.seq})
        self.assertEqual([page.entitlements is not None for page in pages], [True] + [False] * (len(pages) - 1))
        exported = [m for page in pages for m in page]
        self.assertEqual([m["id"] for m in exported], ids)  # creation order
        self.assertEqual({m["id"]: m for m in exported}, self.listed(c, [f"x{u}" for u in range(30)]))

    def test_an_export_with_history_carries_each_pages_audit_trail(self) -> None:
        c = self.client()
        ids = self.grant_many(c, users=3, each=4)
        c.revoke(ids[0], reason="refund")
        with c.iter_export(page_size=5, history=True) as export:
            pages = list(export)
        for page in pages:
            self.assertIsNotNone(page.history)
            on_page = {m["id"] for m in page}
            self.assertTrue({e["membership"]["id"] for e in page.history if "membership" in e} <= on_page)
        entries = [e for page in pages for e in page.history]
        self.assertEqual(sorted(e["action"] for e in entries if e["membership"]["id"] == ids[0]), ["grant", "revoke"])
        self.assertEqual(len(entries), 13)

    def test_following_from_an_exports_seq_misses_nothing_written_while_it_was_read(self) -> None:
        c = self.client()
        ids = self.grant_many(c, users=12, each=10)
        c.grant("prod_x", user="x5", device="x5-phone")
        copy: dict[str, dict] = {}
        writes = iter([
            lambda: c.grant("prod_new", user="x1"),
            lambda: c.revoke(ids[3], reason="refund"),  # already copied
            lambda: c.revoke(ids[-1], reason="refund"),  # not copied yet: the copy has it as of its seq
            lambda: c.erase(device="x5-phone", reason="ticket"),
            lambda: c.grant("prod_new", device="x2-tablet"),
            lambda: c.claim(device="x2-tablet", user="x2"),
        ])
        with c.iter_export(page_size=25) as export:
            for page in export:
                copy.update((m["id"], m) for m in page)
                write = next(writes, None)
                if write is not None:
                    write()
        for write in writes:
            write()
        self.assertLess(export.seq, c.last_seq)
        with c.follow_changes(export.seq, wait=200) as follower:
            for item in drain(follower):
                apply(copy, item)
            self.assertEqual(follower.position, c.last_seq)
        self.assertEqual(copy, self.listed(c, [f"x{u}" for u in range(12)]))

    def test_every_page_of_an_export_goes_to_the_node_that_took_it(self) -> None:
        other = Server()
        self.addCleanup(other.remove)
        holdings = {}
        for port, prefix in ((self.port, "a"), (other.port, "b")):
            with Client("127.0.0.1", port) as c:
                holdings[port] = [c.grant("prod_n", user=f"{prefix}{i}")["membership"]["id"] for i in range(30)]
        client = self.client(nodes=[f"127.0.0.1:{self.port}", other.address])
        taken_by = set()
        for _ in range(4):  # whichever node takes it, its ten pages all come from there
            with client.iter_export(page_size=3) as export:
                ids = [m["id"] for page in export for m in page]
            taken_by.add(export.node.port)
            self.assertEqual(ids, holdings[export.node.port])
        self.assertEqual(taken_by, {self.port, other.port})  # the exports started on each node in turn
        self.assertEqual(other.stop(), 0)

    def test_a_single_page_is_read_with_export(self) -> None:
        c = self.client()
        self.grant_many(c, users=1, each=3)
        first = c.export(limit=2)
        self.assertEqual((len(first), first.seq, first.entitlements), (2, c.last_seq, {}))
        rest = c.export(after=first.next)
        self.assertEqual((len(rest), rest.next, rest.entitlements, rest.history), (1, None, None, None))
        with self.assertRaises(entitled.NotFoundError):
            c.export(after="abc.0")  # a cursor of no copy this server holds


class FollowerAgainstAStandIn(unittest.TestCase):
    """A scripted server: a follower waits out loading, and its position never skips part of a change."""

    @staticmethod
    def item(sequence: int, membership: str, action: str = "claim") -> dict:
        return {"time": "2026-12-04T15:59:42.128Z", "actor": "local", "action": action, "sequence": sequence,
                "membership": {"id": membership, "user": "u"}}

    def test_a_follower_reads_again_after_a_loading_answer(self) -> None:
        page = {"ok": True, "changes": [self.item(1, "mem_a", "grant")], "next": 1, "newest": 1, "oldestAfterSeq": 0}
        asked = []

        def script(n: int, request: dict) -> dict:
            asked.append(n)
            return LOADING if len(asked) == 1 else page  # a starting server, then a ready one

        server = LineServer(script)
        self.addCleanup(server.close)
        with Client("127.0.0.1", server.port) as c, c.follow_changes(0) as follower:
            item = follower.next_change(timeout=ITEM_TIMEOUT)
            self.assertEqual(item.membership["id"], "mem_a")
            self.assertIsNone(follower.last_error)
        self.assertEqual([line["afterSeq"] for line in server.lines], [0, 0])
        self.assertNotEqual(asked[0], asked[1])  # asked again on a new connection

    def test_the_position_stays_before_a_change_until_all_its_items_are_taken(self) -> None:
        page = {"ok": True, "changes": [self.item(5, "mem_a"), self.item(5, "mem_b"), self.item(7, "mem_c", "grant")],
                "next": 9, "newest": 9, "oldestAfterSeq": 0}
        server = LineServer(lambda n, request: page if request["afterSeq"] == 4 else None)
        self.addCleanup(server.close)
        with Client("127.0.0.1", server.port) as c, c.follow_changes(4, wait=0) as follower:
            positions = []
            for _ in range(3):
                follower.next_change(timeout=ITEM_TIMEOUT)
                positions.append(follower.position)
        # Mid-change it stays before it; after change 7, the page's next (past changes 8 and 9, left out).
        self.assertEqual(positions, [4, 6, 9])


if __name__ == "__main__":
    unittest.main()
