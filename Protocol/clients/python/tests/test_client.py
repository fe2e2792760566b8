"""The operations against a real `entitled` server, a fresh one for each test (tests/support.py): every
operation's method, its arguments and answers, errors, pages, pipelines, watches, TLS and tokens.

    python3 -m unittest discover -s Protocol/clients/python -v        # from the repository root
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
import unittest

import entitled
from entitled import CheckResult, Client, ConnectionClosedError, EntitledError, Page

from .support import ADMIN_TOKEN, CHECK_TOKEN, FIXTURES, PUSH_TIMEOUT, ServerTestCase, utc_now


class Authentication(ServerTestCase):
    """A server started with --auth: the token argument, auth(), and the errors of refused requests."""

    def server_arguments(self) -> list[str]:
        path = os.path.join(self.tmp, "auth.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump([{"name": "py-admin", "token": ADMIN_TOKEN, "role": "admin"},
                       {"name": "py-check", "token": CHECK_TOKEN, "role": "check"}], f)
        return ["--auth", path]

    def test_a_token_given_to_the_client_authenticates_it(self) -> None:
        admin = self.client(token=ADMIN_TOKEN)
        self.assertTrue(admin.hello()["authRequired"])
        admin.grant("prod_pro", user="u1")
        self.assertTrue(admin.check(user="u1", product="prod_pro"))
        self.assertEqual(admin.history(user="u1")[0]["actor"], "py-admin")

    def test_without_a_token_only_ping_hello_and_auth_are_answered(self) -> None:
        c = self.client()
        self.assertIs(c.ping()["ok"], True)
        with self.assertRaises(EntitledError) as raised:
            c.check(user="u1")
        self.assertEqual(raised.exception.code, "unauthorized")
        self.assertEqual(c.auth(CHECK_TOKEN)["role"], "check")
        self.assertFalse(c.check(user="u1"))

    def test_a_check_token_is_forbidden_to_change_anything(self) -> None:
        c = self.client(token=CHECK_TOKEN)
        with self.assertRaises(EntitledError) as raised:
            c.grant("prod_pro", user="u1")
        self.assertEqual(raised.exception.code, "forbidden")

    def test_stats_is_forbidden_to_a_check_token_and_answered_to_an_admin_token(self) -> None:
        checker = self.client(token=CHECK_TOKEN)
        with self.assertRaises(EntitledError) as raised:
            checker.stats()
        self.assertEqual(raised.exception.code, "forbidden")
        stats = self.client(token=ADMIN_TOKEN).stats()
        self.assertEqual(stats["requests"]["byOp"]["auth"], 2)
        self.assertEqual(stats["requests"]["invalid"], 1)  # the refused stats made no request
        self.assertEqual(stats["errors"]["byCode"]["forbidden"], 1)
        self.assertEqual(stats["connections"]["open"], 2)

    def test_reload_puts_a_new_token_in_force_and_is_forbidden_to_a_check_token(self) -> None:
        with self.assertRaises(EntitledError) as raised:
            self.client(token=CHECK_TOKEN).reload()
        self.assertEqual(raised.exception.code, "forbidden")
        new_token = "python-new-token-0001"
        with open(os.path.join(self.tmp, "auth.json"), "w", encoding="utf-8") as f:
            json.dump([{"name": "py-admin", "token": ADMIN_TOKEN, "role": "admin"},
                       {"name": "py-new", "token": new_token, "role": "check"}], f)
        self.assertEqual(self.client(token=ADMIN_TOKEN).reload()["tokens"], 2)
        self.assertEqual(self.client(token=new_token).auth(new_token)["name"], "py-new")
        with self.assertRaises(EntitledError) as raised:
            Client("127.0.0.1", self.port, token=CHECK_TOKEN)
        self.assertEqual(raised.exception.code, "unauthorized")

    def test_an_unknown_token_raises_unauthorized_and_never_shows_the_token(self) -> None:
        with self.assertRaises(EntitledError) as raised:
            Client("127.0.0.1", self.port, token="python-wrong-token-0001")
        self.assertEqual(raised.exception.code, "unauthorized")
        self.assertNotIn("python-wrong-token-0001", str(raised.exception.answer))


class TransportSecurity(ServerTestCase):
    """A server started with --tls-cert and --tls-key: the tls= argument, and a client that does not trust it."""

    def server_arguments(self) -> list[str]:
        return ["--tls-cert", str(FIXTURES / "test-tls-cert.pem"), "--tls-key", str(FIXTURES / "test-tls-key.pem")]

    def test_a_client_trusting_the_certificate_works_over_tls(self) -> None:
        import ssl
        context = ssl.create_default_context(cafile=str(FIXTURES / "test-tls-cert.pem"))
        c = self.client(tls=context)
        c.grant("prod_pro", user="u1")
        self.assertTrue(c.check(user="u1"))
        # Answers larger than a TLS record (16 KB) arrive whole.
        c.pipeline([{"op": "grant", "user": "big", "product": f"prod_{i}"} for i in range(200)])
        page = c.memberships(user="big", limit=1000)
        self.assertEqual((len(page), page.next), (200, None))
        self.assertEqual([m["id"] for m in c.iter_memberships(user="big")], [m["id"] for m in page])

    def test_a_client_that_does_not_trust_the_certificate_fails_to_connect(self) -> None:
        import ssl
        with self.assertRaises(ssl.SSLCertVerificationError) as raised:
            Client("127.0.0.1", self.port, tls=ssl.create_default_context())
        self.assertIn("self-signed certificate", raised.exception.verify_message)

    def test_a_client_without_tls_is_told_to_use_it(self) -> None:
        c = self.client()
        with self.assertRaises(EntitledError) as raised:
            c.ping()
        self.assertEqual(raised.exception.code, "tls_required")
        self.assertIn("connect with TLS", raised.exception.message)
        self.assertIn("Python tls=", raised.exception.message)


class TLSClientOnAPlainPort(ServerTestCase):
    """A TLS client against a server without TLS fails at once (the server answers its handshake with a plain
    line, which is no TLS record), instead of waiting for its timeout."""

    def test_the_handshake_fails_at_once_with_a_wrong_version_number(self) -> None:
        import ssl
        import time
        started = time.monotonic()
        with self.assertRaises(ssl.SSLError) as raised:
            Client("127.0.0.1", self.port, timeout=60,
                   tls=ssl.create_default_context(cafile=str(FIXTURES / "test-tls-cert.pem")))
        self.assertEqual(raised.exception.reason, "WRONG_VERSION_NUMBER")
        self.assertLess(time.monotonic() - started, 20)


class HelloAndBasics(ServerTestCase):
    def test_hello(self) -> None:
        c = self.client()
        hello = c.hello()
        self.assertIs(hello["ok"], True)
        self.assertEqual(hello["protocol"], entitled.PROTOCOL_VERSION)
        self.assertTrue(hello["server"].startswith("entitled "))
        for op in ["ping", "hello", "grant", "check", "claim", "revoke", "memberships", "define", "catalog",
                   "snapshot", "event", "customer", "history", "watch", "unwatch", "auth", "stats", "reload", "undefine",
                   "erase", "extend"]:
            self.assertIn(op, hello["operations"])
        self.assertEqual(hello["fields"]["check"], ["user", "device", "product", "entitlement", "at", "minSeq"])
        self.assertEqual(hello["fields"]["memberships"],
                         ["user", "device", "source", "at", "transactionId", "originalTransactionId", "limit", "minSeq",
                          "after", "endedAfter"])
        self.assertEqual(hello["fields"]["history"], ["user", "device", "entitlement", "limit", "erasures", "after"])
        self.assertEqual(hello["fields"]["ping"], [])
        self.assertEqual(set(hello["fields"]), set(hello["operations"]))
        self.assertIs(c.ping()["ok"], True)

    def test_id_is_echoed(self) -> None:
        c = self.client()
        self.assertEqual(c.request("ping", id="abc")["id"], "abc")
        answers = c.pipeline([{"op": "ping", "id": {"n": [1, 2]}}, {"op": "ping", "id": None}, {"op": "ping"}])
        self.assertEqual(answers[0]["id"], {"n": [1, 2]})
        self.assertIsInstance(answers[1]["id"], int)  # None means absent: the client's own id
        self.assertEqual(answers[2]["id"], answers[1]["id"] + 1)

    def test_context_manager_closes(self) -> None:
        with Client("127.0.0.1", self.port) as c:
            self.assertIs(c.ping()["ok"], True)
        self.assertTrue(c.closed)
        with self.assertRaises(ConnectionClosedError):
            c.ping()


class Access(ServerTestCase):
    def test_define_grant_check(self) -> None:
        c = self.client()
        defined = c.define("pro", ["prod_pro_yearly", "prod_pro_monthly", "prod_pro_monthly"])
        self.assertEqual(defined["products"], ["prod_pro_monthly", "prod_pro_yearly"])
        self.assertEqual(c.catalog(), {"pro": ["prod_pro_monthly", "prod_pro_yearly"]})

        # Nothing yet: inactive, falsy, no expiry.
        before = c.check(user="alice", entitlement="pro")
        self.assertEqual(before, CheckResult(active=False, expires_at=None))
        self.assertFalse(before)

        grant = c.grant("prod_pro_monthly", user="alice", duration="30d", source="app_store")
        membership = grant["membership"]
        self.assertEqual(membership["status"], "active")
        self.assertEqual(membership["user"], "alice")
        self.assertNotIn("idempotentReplay", grant)

        by_entitlement = c.check(user="alice", entitlement="pro")
        self.assertTrue(by_entitlement)
        self.assertIs(by_entitlement.active, True)
        self.assertEqual(by_entitlement.expires_at, membership["expiresAt"])
        expires = by_entitlement.expires_at_datetime
        self.assertAlmostEqual((expires - utc_now()).total_seconds(), 30 * 86400, delta=120)

        self.assertTrue(c.check(user="alice", product="prod_pro_monthly"))
        self.assertTrue(c.check(user="alice"))  # any product
        self.assertFalse(c.check(user="alice", product="prod_pro_yearly"))
        self.assertFalse(c.check(user="bob", entitlement="pro"))
        # The past: before the grant, alice had nothing.
        self.assertFalse(c.check(user="alice", entitlement="pro", at=utc_now() - dt.timedelta(days=1)))
        # The future: after 30 days, the membership has expired.
        self.assertFalse(c.check(user="alice", entitlement="pro", at=utc_now() + dt.timedelta(days=31)))

        # An expiry in the past (an import) is inactive at once; a lifetime grant is active with no expiry.
        old = c.grant("prod_pro_yearly", user="carol", expires_at=dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc))
        self.assertEqual(old["membership"]["status"], "expired")
        self.assertEqual(old["membership"]["expiresAt"], "2020-01-01T00:00:00Z")
        self.assertFalse(c.check(user="carol", entitlement="pro"))
        c.grant("prod_pro_yearly", user="carol", source="promotional")
        lifetime = c.check(user="carol", entitlement="pro")
        self.assertTrue(lifetime)
        self.assertIsNone(lifetime.expires_at)  # active and lifetime: still truthy

    def test_snake_case_fields_reach_the_server(self) -> None:
        c = self.client()
        grant = c.grant("prod_premium", user="u1", duration=dt.timedelta(days=7), period_type="trial",
                        will_renew=True, transaction_id="t-1", idempotency_key="order-1", reason="trial")
        m = grant["membership"]
        self.assertEqual((m["status"], m["periodType"], m["willRenew"]), ("trialing", "trial", True))
        self.assertEqual(m["transactions"][0]["id"], "t-1")
        replay = c.grant("prod_premium", user="u1", idempotency_key="order-1")
        self.assertIs(replay["idempotentReplay"], True)
        self.assertEqual(replay["membership"]["id"], m["id"])
        with self.assertRaises(EntitledError) as caught:
            c.grant("prod_other", user="u1", idempotencyKey="order-1")  # wire names pass through too
        self.assertEqual(caught.exception.code, "conflict")

    def test_guest_purchase_and_claim(self) -> None:
        # The seeds' "How Guest Purchases Work" table (PROTOCOL.md, Guest purchases and claim).
        c = self.client()
        c.define("pro", ["prod_pro_monthly"])
        # Purchase without login: the membership is tied to the device.
        guest = c.grant("prod_pro_monthly", device="dev_A", duration="30d")["membership"]
        self.assertNotIn("user", guest)
        self.assertTrue(c.check(device="dev_A", entitlement="pro"))
        self.assertFalse(c.check(user="user_42", entitlement="pro"))
        self.assertEqual([m["id"] for m in c.memberships(device="dev_A")], [guest["id"]])
        # Login after purchase: the membership is claimed by the user account.
        self.assertEqual(c.claim(device="dev_A", user="user_42"), 1)
        self.assertTrue(c.check(user="user_42", device="dev_A", entitlement="pro"))
        self.assertEqual(c.memberships(user="user_42")[0]["user"], "user_42")
        # Same user, new device: the user sees everything, with or without the new device.
        self.assertTrue(c.check(user="user_42", device="dev_B", entitlement="pro"))
        # Logout: the device alone no longer sees the claimed membership.
        self.assertFalse(c.check(device="dev_A", entitlement="pro"))
        self.assertEqual(c.memberships(device="dev_A"), [])
        # A repeated claim, or a claim by another user, moves nothing.
        self.assertEqual(c.claim(device="dev_A", user="user_42"), 0)
        self.assertEqual(c.claim(device="dev_A", user="user_99"), 0)
        self.assertFalse(c.check(user="user_99", entitlement="pro"))
        customer = c.customer(user="user_42")
        self.assertEqual(customer["activeProducts"], ["prod_pro_monthly"])
        self.assertIs(customer["entitlements"]["pro"]["isActive"], True)

    def test_revoke(self) -> None:
        c = self.client()
        m = c.grant("prod_x", user="dave")["membership"]
        self.assertTrue(c.check(user="dave", product="prod_x"))
        revoked = c.revoke(m["id"], reason="refund")
        self.assertEqual((revoked["id"], revoked["status"], revoked["isActive"]), (m["id"], "revoked", False))
        self.assertEqual(revoked["reason"], "refund")
        self.assertFalse(c.check(user="dave", product="prod_x"))
        again = c.revoke(m["id"], reason="chargeback")  # idempotent: the first reason stays
        self.assertEqual((again["reason"], again["revokedAt"]), ("refund", revoked["revokedAt"]))

    def test_extend(self) -> None:
        c = self.client()
        m = c.grant("prod_x", user="erin", expires_at="2099-01-31T00:00:00Z")["membership"]
        answer = c.extend(m["id"], duration="1mo", reason="outage")
        self.assertEqual(answer["membership"]["expiresAt"], "2099-02-28T00:00:00Z")
        self.assertEqual(answer["previousExpiresAt"], "2099-01-31T00:00:00Z")
        self.assertIsInstance(answer["seq"], int)
        until = dt.datetime(2099, 6, 1, tzinfo=dt.timezone.utc)
        self.assertEqual(c.extend(m["id"], expires_at=until)["membership"]["expiresAt"], "2099-06-01T00:00:00Z")
        with self.assertRaises(EntitledError) as caught:  # the same moment again is no extension
            c.extend(m["id"], expires_at=until)
        self.assertEqual(caught.exception.code, "bad_request")
        lifetime = c.grant("prod_life", user="erin")["membership"]
        with self.assertRaises(EntitledError) as caught:
            c.extend(lifetime["id"], duration=dt.timedelta(days=7))
        self.assertEqual(caught.exception.code, "conflict")
        # The newest extension, wherever the lifetime grant of the same millisecond sorts (a plain grant keeps
        # no change number: PROTOCOL.md, Audit trail).
        entry = next(e for e in c.history(user="erin", limit=3) if e["action"] == "extend")
        self.assertEqual(entry["previousExpiresAt"], "2099-02-28T00:00:00Z")
        with self.assertRaises(TypeError):
            c.extend(m["id"], duraton="1d")

    def test_errors_raise_entitled_error(self) -> None:
        c = self.client()
        with self.assertRaises(EntitledError) as caught:
            c.check(user="alice", entitlement="gold")
        self.assertEqual(caught.exception.code, "not_found")
        self.assertTrue(caught.exception.message)
        self.assertEqual(caught.exception.answer["ok"], False)
        self.assertIn("not_found", str(caught.exception))

        with self.assertRaises(EntitledError) as caught:
            c.revoke("mem_0000000000000")
        self.assertEqual(caught.exception.code, "not_found")
        with self.assertRaises(EntitledError) as caught:
            c.request("grant", user="alice")  # no product
        self.assertEqual(caught.exception.code, "bad_request")
        with self.assertRaises(EntitledError) as caught:
            c.grant("p", user="alice", duration="1 month")
        self.assertEqual(caught.exception.code, "bad_request")
        with self.assertRaises(EntitledError) as caught:
            c.history(user="alice", limit=0)
        self.assertEqual(caught.exception.code, "bad_request")
        with self.assertRaises(EntitledError) as caught:
            c.request("refund")
        self.assertEqual(caught.exception.code, "unknown_op")
        # The connection stays usable after errors.
        self.assertIs(c.ping()["ok"], True)


    def test_a_misspelt_keyword_raises_type_error_and_sends_nothing(self) -> None:
        c = self.client()
        c.define("pro", ["prod_pro"])
        c.grant("prod_basic", user="alice")
        sent_before = c.request("ping")["id"]
        with self.assertRaises(TypeError) as caught:
            c.check(user="alice", entitlment="pro")
        self.assertIn("'entitlment'", str(caught.exception))
        self.assertIn("did you mean 'entitlement'?", str(caught.exception))
        with self.assertRaises(TypeError) as caught:
            c.grant("prod_pro", user="bob", duraton="30d")
        self.assertIn("did you mean 'duration'?", str(caught.exception))
        with self.assertRaises(TypeError) as caught:
            c.ping(foo=1)
        self.assertIn("ping() takes id", str(caught.exception))
        # Nothing was sent: the next request is the next id, and bob has nothing.
        self.assertEqual(c.request("ping")["id"], sent_before + 1)
        self.assertFalse(c.check(user="bob"))
        self.assertFalse(c.check(user="alice", entitlement="pro"))
        # The protocol's own spelling of a parameter is still taken.
        carol = c.grant("prod_pro", user="carol", expiresAt="2099-01-01T00:00:00Z")["membership"]
        self.assertTrue(carol["expiresAt"].startswith("2099-01-01T00:00:00"))

    def test_the_server_refuses_an_unknown_field_sent_raw(self) -> None:
        c = self.client()
        with self.assertRaises(EntitledError) as caught:
            c.request("grant", user="bob", product="pro", duraton="P1M")
        self.assertEqual(caught.exception.code, "bad_request")
        self.assertIn('unknown field "duraton" (did you mean "duration"?)', caught.exception.message)
        self.assertEqual(c.memberships(user="bob"), [])


    def test_a_purchase_is_found_by_its_transaction_and_moves_on_a_restore(self) -> None:
        c = self.client()
        first = c.grant("pro", user="ann", duration="30d", transaction_id="tx-900")
        self.assertEqual([m["id"] for m in c.memberships(transaction_id="tx-900")], [first["membership"]["id"]])
        self.assertEqual([m["id"] for m in c.memberships(original_transaction_id="tx-900")], [first["membership"]["id"]])
        moved = c.request("grant", user="ben", product="pro", transactionId="tx-901", originalTransactionId="tx-900")
        self.assertEqual(moved["membership"]["id"], first["membership"]["id"])
        self.assertEqual(moved["transferredFrom"], {"user": "ann"})
        self.assertEqual(c.memberships(user="ann"), [])
        with self.assertRaises(EntitledError) as caught:
            c.memberships(user="ann", transaction_id="tx-900")
        self.assertEqual(caught.exception.code, "bad_request")

    def test_define_needs_products_and_undefine_removes(self) -> None:
        c = self.client()
        with self.assertRaises(EntitledError) as caught:
            c.define("pro", [])
        self.assertEqual(caught.exception.code, "bad_request")
        self.assertIn("undefine", caught.exception.message)
        c.define("pro", ["prod_b", "prod_a"])
        answer = c.undefine("pro", reason="retired")
        self.assertEqual((answer["entitlement"], answer["products"]), ("pro", ["prod_a", "prod_b"]))
        self.assertEqual(c.catalog(), {})
        with self.assertRaises(EntitledError) as caught:
            c.undefine("pro")
        self.assertEqual(caught.exception.code, "not_found")
        self.assertEqual([e["action"] for e in c.history(entitlement="pro")], ["undefine", "define"])

    def test_erase_forgets_a_person(self) -> None:
        c = self.client()
        c.grant("prod_pro", device="phone-42", duration="30d")
        c.claim(device="phone-42", user="gdpr-user")
        c.grant("prod_basic", user="gdpr-user", reason="goodwill")
        self.assertEqual(c.erase(user="gdpr-user", device="phone-42", reason="ticket 1"),
                         {"memberships": 2, "historyEntries": 3})
        self.assertFalse(c.check(user="gdpr-user"))
        self.assertEqual(c.memberships(user="gdpr-user"), [])
        self.assertEqual(c.history(device="phone-42"), [])
        [entry] = c.history(erasures=True)
        self.assertEqual((entry["action"], entry["reason"], entry["erased"]), ("erase", "ticket 1",
                                                                               {"memberships": 2, "historyEntries": 3}))
        with self.assertRaises(TypeError):
            c.erase(usr="gdpr-user")


class Paging(ServerTestCase):
    """memberships and history a page at a time (protocol version 4): limit, after, Page.next, the
    iterators that follow next, the refusals, and over_limit."""

    def ids(self, items) -> list[str]:
        return [m["id"] for m in items]

    def test_memberships_pages_follow_next_and_a_grant_between_pages_is_not_listed_again(self) -> None:
        c = self.client()
        granted = [c.grant(f"prod_{i}", user="paula")["membership"]["id"] for i in range(5)]
        newest_first = granted[::-1]

        first = c.memberships(user="paula", limit=2)
        self.assertIsInstance(first, Page)
        self.assertEqual(self.ids(first), newest_first[:2])
        self.assertEqual(first.next, first[-1]["id"])
        late = c.grant("prod_late", user="paula")["membership"]["id"]  # between pages
        second = c.memberships(user="paula", limit=2, after=first.next)
        self.assertEqual((self.ids(second), second.next), (newest_first[2:4], newest_first[3]))
        last = c.memberships(user="paula", limit=2, after=second.next)
        self.assertEqual((self.ids(last), last.next), (newest_first[4:], None))
        self.assertNotIn(late, self.ids(first + second + last))

        # From the start again the late grant leads; the old cursor still gives the same page.
        self.assertEqual(self.ids(c.memberships(user="paula", limit=2)), [late, newest_first[0]])
        self.assertEqual(self.ids(c.memberships(user="paula", limit=2, after=first.next)), newest_first[2:4])
        # A Page is a list: the default page holds all six, and the last page's next is None.
        everything = c.memberships(user="paula")
        self.assertEqual(self.ids(everything), [late] + newest_first)
        self.assertIsNone(everything.next)
        self.assertEqual(c.memberships(user="nobody"), [])
        self.assertIn("next=None", repr(c.memberships(user="nobody")))

        # The iterator follows next, whatever the page size, from an after too.
        for size in (None, 1, 2, 6, 7, 1000):
            self.assertEqual(self.ids(c.iter_memberships(user="paula", page_size=size)), [late] + newest_first)
        self.assertEqual(self.ids(c.iter_memberships(user="paula", page_size=2, after=newest_first[1])),
                         newest_first[2:])
        self.assertEqual(self.ids(c.iter_memberships(user="paula", pageSize=4)), [late] + newest_first)
        # With at (statuses then), for a device, by transaction.
        future = utc_now() + dt.timedelta(days=365)
        self.assertEqual(self.ids(c.iter_memberships(user="paula", at=future, page_size=4)), [late] + newest_first)
        guest = [c.grant("prod_g", device="phone", duration="1d")["membership"]["id"] for _ in range(3)]
        self.assertEqual(self.ids(c.iter_memberships(device="phone", page_size=2)), guest[::-1])
        self.assertEqual(self.ids(c.iter_memberships(user="paula", device="phone", page_size=4)),
                         guest[::-1] + [late] + newest_first)
        bought = c.grant("prod_t", user="tom", transaction_id="tx-1")["membership"]["id"]
        self.assertEqual(self.ids(c.iter_memberships(transaction_id="tx-1", page_size=1)), [bought])
        self.assertEqual(self.ids(c.iter_memberships(original_transaction_id="tx-1", page_size=1)), [bought])

    def test_imports_are_dated_at_the_purchase_and_a_sources_listing_is_followed_to_its_end(self) -> None:
        c = self.client()
        imported = c.grant("prod_i", user="ivan", source="whop", purchased_at="2024-03-01T10:00:00Z",
                           duration="1mo", renews_count=23)["membership"]
        self.assertEqual((imported["createdAt"], imported["expiresAt"]), ("2024-03-01T10:00:00Z", "2024-04-01T10:00:00Z"))
        self.assertEqual((imported["renewsCount"], imported["status"]), (23, "expired"))
        self.assertFalse(c.check(user="ivan", at="2024-02-29T00:00:00Z"))
        self.assertTrue(c.check(user="ivan", at="2024-03-15T00:00:00Z"))
        lifetime = [c.grant("prod_w", user=f"w{i}", source="whop")["membership"]["id"] for i in range(3)]
        # Oldest first; with ended_after, the import that ended before it is left out.
        every = self.ids(c.iter_memberships(source="whop", page_size=1))
        self.assertEqual(every[-4:], [imported["id"]] + lifetime)
        recent = self.ids(c.iter_memberships(source="whop", ended_after="2025-01-01T00:00:00Z", page_size=2))
        self.assertNotIn(imported["id"], recent)
        self.assertEqual(recent[-3:], lifetime)
        first = c.memberships(source="whop", limit=1)
        self.assertIsNotNone(first.next)
        with self.assertRaises(EntitledError) as refused:
            c.memberships(source="whop", after=imported["id"])
        self.assertEqual(refused.exception.code, "bad_request")

    def test_history_pages_follow_next(self) -> None:
        c = self.client()
        m = c.grant("prod_h", user="hana", duration="30d", reason="signup")["membership"]
        for i in range(4):
            c.grant(f"prod_{i}", user="hana")
        c.revoke(m["id"], reason="refund")
        full = c.history(user="hana", limit=1000)
        self.assertEqual(len(full), 6)
        self.assertIsNone(full.next)
        first = c.history(user="hana", limit=4)
        self.assertEqual(first, full[:4])
        self.assertIsInstance(first.next, str)
        c.grant("prod_between", user="hana")  # recorded between pages: newer than the first page
        rest = c.history(user="hana", limit=4, after=first.next)
        self.assertEqual((rest, rest.next), (full[4:], None))
        self.assertEqual(list(c.iter_history(user="hana", page_size=1))[1:], full)
        self.assertEqual(c.history(user="hana", limit=4, after=first.next), full[4:])  # the cursor still holds

        c.define("pro", ["a"], reason="launch")
        c.define("pro", ["a", "b"], reason="more")
        c.define("pro", ["b"], reason="less")
        self.assertEqual([e["reason"] for e in c.iter_history(entitlement="pro", page_size=2)], ["less", "more", "launch"])
        for who in ("x1", "x2", "x3"):
            c.erase(user=who, reason=f"ticket {who}")
        self.assertEqual([e["reason"] for e in c.iter_history(erasures=True, page_size=2)],
                         ["ticket x3", "ticket x2", "ticket x1"])

    def test_bad_limits_and_cursors_are_refused(self) -> None:
        c = self.client()
        first, second = (c.grant("prod_a", user="rita")["membership"]["id"] for _ in range(2))
        for limit in (0, 1001):
            with self.assertRaises(EntitledError) as caught:
                c.memberships(user="rita", limit=limit)
            self.assertEqual(caught.exception.code, "bad_request")
            self.assertIn('field "limit" must be from 1 to 1000', caught.exception.message)
        self.assertEqual(len(c.memberships(user="rita", limit=1000)), 2)
        with self.assertRaises(EntitledError) as caught:
            c.memberships(user="rita", after="not-an-id")
        self.assertEqual(caught.exception.code, "bad_request")
        self.assertIn('field "after" must be a membership id', caught.exception.message)
        with self.assertRaises(EntitledError) as caught:
            c.memberships(user="rita", after="mem_0000000000000")
        self.assertEqual(caught.exception.code, "bad_request")
        self.assertTrue(caught.exception.message.startswith('"after" names no membership'), caught.exception.message)
        with self.assertRaises(EntitledError) as caught:
            c.history(user="rita", after="not-a-cursor")
        self.assertEqual(caught.exception.code, "bad_request")
        self.assertIn('field "after" is not a history cursor', caught.exception.message)
        with self.assertRaises(EntitledError) as caught:
            c.history(user="rita", limit=1001)
        self.assertEqual(caught.exception.code, "bad_request")
        # An after naming a membership erased since: the listing has to start again.
        page = c.memberships(user="rita", limit=1)
        self.assertEqual((self.ids(page), page.next), ([second], second))
        c.erase(user="rita")
        with self.assertRaises(EntitledError) as caught:
            list(c.iter_memberships(user="rita", after=page.next))
        self.assertEqual(caught.exception.code, "bad_request")
        # A misspelt keyword of an iterator raises at the call, before anything is sent.
        sent_before = c.request("ping")["id"]
        with self.assertRaises(TypeError) as caught:
            c.iter_memberships(user="rita", pagesize=2)
        self.assertIn("did you mean 'page_size'?", str(caught.exception))
        with self.assertRaises(TypeError):
            c.iter_history(user="rita", limit=2)  # the iterators take page_size
        self.assertEqual(c.request("ping")["id"], sent_before + 1)
        self.assertIs(c.ping()["ok"], True)

    def test_a_read_through_more_than_10000_memberships_is_over_limit(self) -> None:
        c = self.client(timeout=60)
        answers = c.pipeline([{"op": "grant", "user": "whale", "product": f"prod_{i}"} for i in range(10_001)])
        self.assertTrue(all(a["ok"] is True for a in answers))
        past = answers[0]["membership"]["createdAt"]  # before the newest change
        refused = {
            "customer": lambda: c.customer(user="whale"),
            "history": lambda: c.history(user="whale", limit=1),
            "check at": lambda: c.check(user="whale", at=past),
            "memberships at": lambda: c.memberships(user="whale", at=past, limit=1),
        }
        for name, read in refused.items():
            with self.subTest(name):
                with self.assertRaises(EntitledError) as caught:
                    read()
                self.assertEqual(caught.exception.code, "over_limit")
                self.assertEqual(caught.exception.answer["ok"], False)
        # Checking now, and listing page by page, are never refused.
        self.assertTrue(c.check(user="whale", product="prod_10000"))
        self.assertEqual(sum(1 for _ in c.iter_memberships(user="whale", page_size=1000)), 10_001)
        first = c.memberships(user="whale")
        self.assertEqual((len(first), first.next), (100, first[-1]["id"]))
        self.assertIs(c.ping()["ok"], True)


class Pipelining(ServerTestCase):
    def test_pipeline_100_requests(self) -> None:
        c = self.client()
        requests = []
        for i in range(50):
            requests.append({"op": "grant", "user": f"user_{i}", "product": f"prod_{i}", "duration": "1d"})
            requests.append({"op": "check", "user": f"user_{i}", "product": f"prod_{i}"})
        requests[51] = {"op": "check", "user": "user_25", "entitlement": "undefined"}  # an error in the middle
        self.assertEqual(len(requests), 100)
        answers = c.pipeline(requests)
        self.assertEqual(len(answers), 100)
        ids = [a["id"] for a in answers]
        self.assertEqual(ids, list(range(ids[0], ids[0] + 100)))  # in request order
        for i in range(50):
            grant, check = answers[2 * i], answers[2 * i + 1]
            self.assertEqual(grant["membership"]["user"], f"user_{i}")
            self.assertEqual(grant["membership"]["productId"], f"prod_{i}")
            if i == 25:
                self.assertEqual(check["ok"], False)
                self.assertEqual(check["error"]["code"], "not_found")
                with self.assertRaises(EntitledError):
                    Client.raise_for(check)
            else:
                self.assertEqual(check["active"], True)
                self.assertEqual(check["expiresAt"], grant["membership"]["expiresAt"])
        self.assertIs(c.ping()["ok"], True)

    def test_large_pipeline_does_not_deadlock(self) -> None:
        # About 450 KB of answers, far beyond the server's 64 KiB of unsent output: the client has to read
        # while it writes.
        c = self.client()
        answers = c.pipeline([{"op": "hello"} for _ in range(3000)])
        self.assertEqual(len(answers), 3000)
        self.assertTrue(all(a["protocol"] == entitled.PROTOCOL_VERSION for a in answers))


class Watching(ServerTestCase):
    def test_push_after_a_grant_from_another_client(self) -> None:
        watcher, writer = self.client(), self.client()
        with watcher.watch(user="wendy") as stream:
            self.assertIsNone(stream.next_push(0))
            m = writer.grant("prod_w", user="wendy", duration="1h")["membership"]
            push = stream.next_push(PUSH_TIMEOUT)
            self.assertIsInstance(push, entitled.Push)
            self.assertEqual((push.line["push"], push.cause), ("access", "grant"))
            self.assertNotIn("ok", push.line)
            self.assertEqual(push.membership["id"], m["id"])
            self.assertIsInstance(push.sequence, int)

            # The watch holds its own connection: the client's own requests are never behind pushes.
            m2 = writer.grant("prod_w2", user="wendy")["membership"]
            self.assertEqual(watcher.check(user="wendy", product="prod_w2"), CheckResult(active=True, expires_at=None))
            answers = watcher.pipeline([{"op": "ping"}] * 20)
            self.assertTrue(all(a["ok"] is True and "push" not in a for a in answers))
            push = stream.next_push(PUSH_TIMEOUT)
            self.assertEqual((push.cause, push.membership["id"]), ("grant", m2["id"]))
            writer.revoke(m["id"])
            push = stream.next_push(PUSH_TIMEOUT)
            self.assertEqual((push.cause, push.membership["status"]), ("revoke", "revoked"))
        # Closed: it unwatched, iteration ends, and next_push says so.
        self.assertTrue(stream.closed)
        self.assertEqual(list(stream), [])
        with self.assertRaises(ConnectionClosedError):
            stream.next_push(0)
        writer.grant("prod_w3", user="wendy")
        self.assertEqual(writer.stats()["connections"]["open"], 2)  # the watch's connection is gone

    def test_watch_errors_and_targets(self) -> None:
        c = self.client()
        with self.assertRaises(entitled.BadRequestError) as caught:
            c.watch()
        self.assertEqual(caught.exception.code, "bad_request")
        with self.assertRaises(entitled.BadRequestError):
            c.watch(user="u", all=True)
        with self.assertRaises(TypeError):
            c.watch(usr="u")
        with c.watch(all=True) as everything, c.watch(device="d") as device:
            c.grant("prod_d", device="d")
            c.grant("prod_e", user="e")
            self.assertEqual(sorted(everything.next_push(PUSH_TIMEOUT).membership["productId"] for _ in range(2)),
                             ["prod_d", "prod_e"])
            self.assertEqual(device.next_push(PUSH_TIMEOUT).membership["productId"], "prod_d")
            self.assertIsNone(device.next_push(0.2))

    def test_a_watch_read_slower_than_pushes_come_holds_at_most_max_queued_pushes(self) -> None:
        watcher, writer = self.client(), self.client(max_queued_pushes=5)
        self.assertEqual(watcher.max_queued_pushes, entitled.DEFAULT_MAX_QUEUED_PUSHES)
        with self.assertRaises(ValueError):
            watcher.watch(user="b", max_queued_pushes=0)
        with watcher.watch(user="bounded", max_queued_pushes=10) as stream, writer.watch(user="bounded") as other:
            self.assertEqual((stream.max_queued_pushes, other.max_queued_pushes), (10, 5))
            granted = [writer.grant(f"prod_{i:03}", user="bounded")["membership"]["id"] for i in range(200)]
            # Not read: the queue fills to its bound and stays there (the reader waits, the server holds the rest).
            deadline = time.monotonic() + PUSH_TIMEOUT
            while stream.queued < 10 and time.monotonic() < deadline:
                time.sleep(0.01)
            for _ in range(30):
                self.assertLessEqual(stream.queued, 10)
                self.assertLessEqual(other.queued, 5)
                time.sleep(0.01)
            self.assertEqual((stream.queued, other.queued), (10, 5))
            # Then read: every push, in order (or a Gap and the pushes after it, had the server cut it).
            seen: list[str] = []
            gaps = 0
            sequence = 0
            while not seen or seen[-1] != granted[-1]:
                event = stream.next_push(PUSH_TIMEOUT)
                self.assertIsNotNone(event, f"no push after {len(seen)} of 200")
                self.assertLessEqual(stream.queued, 10)
                if isinstance(event, entitled.Gap):
                    gaps += 1
                    continue
                self.assertGreater(event.sequence, sequence)
                sequence = event.sequence
                seen.append(event.membership["id"])
            self.assertEqual(seen, granted if gaps == 0 else [m for m in granted if m in set(seen)])
            self.assertEqual(seen[:10], granted[:10])
            # A watch whose reader waits for room still closes at once.
            started = time.monotonic()
        self.assertLess(time.monotonic() - started, 1.0)
        self.assertTrue(other.closed)


class EventsAndHistory(ServerTestCase):
    def test_event_applied_then_duplicate(self) -> None:
        c = self.client()
        m = c.grant("prod_sub", user="erin", duration="7d", will_renew=True, transaction_id="1000")["membership"]
        now = utc_now()
        renewal = dict(event_id="evt_1", event_time=now, expires_at=now + dt.timedelta(days=30),
                       transaction_id="1001")
        first = c.event(m["id"], "renewal", **renewal)
        self.assertIs(first["applied"], True)
        self.assertNotIn("reason", first)
        self.assertEqual(first["membership"]["renewsCount"], 1)
        self.assertEqual([t["id"] for t in first["membership"]["transactions"]], ["1000", "1001"])

        again = c.event(m["id"], "renewal", **renewal)  # the store redelivers it
        self.assertIs(again["applied"], False)
        self.assertEqual(again["reason"], "duplicate")
        self.assertEqual(again["membership"]["renewsCount"], 1)

        late = c.event(m["id"], "billing_issue", event_id="evt_0", event_time=now - dt.timedelta(hours=1))
        self.assertEqual((late["applied"], late["reason"]), (False, "out_of_order"))

        with self.assertRaises(EntitledError) as caught:
            c.event(m["id"], "renewal", event_id="evt_2", event_time=now)  # renewal needs expiresAt
        self.assertEqual(caught.exception.code, "bad_request")
        with self.assertRaises(EntitledError) as caught:
            c.event("mem_0000000000000", "pause", event_id="e", event_time=now)
        self.assertEqual(caught.exception.code, "not_found")

    def test_history_newest_first(self) -> None:
        c = self.client()
        m = c.grant("prod_h", user="hank", duration="30d", reason="signup")["membership"]
        c.event(m["id"], "cancellation", event_id="evt_c", event_time=utc_now(), reason="ticket 1")
        c.revoke(m["id"], reason="refund")
        trail = c.history(user="hank")
        self.assertEqual([e["action"] for e in trail], ["revoke", "cancellation", "grant"])
        self.assertEqual([e.get("reason") for e in trail], ["refund", "ticket 1", "signup"])
        times = [entitled.parse_time(e["time"]) for e in trail]
        self.assertEqual(times, sorted(times, reverse=True))
        sequences = [e["sequence"] for e in trail]
        self.assertEqual(sequences, sorted(sequences, reverse=True))
        self.assertEqual([e["action"] for e in c.history(user="hank", limit=1)], ["revoke"])

        c.define("pro", ["a"], reason="launch")
        c.define("pro", ["a", "b"], reason="more")
        defines = c.history(entitlement="pro")
        self.assertEqual([(e["reason"], e["products"]) for e in defines], [("more", ["a", "b"]), ("launch", ["a"])])
        self.assertEqual(c.history(user="nobody"), [])

    def test_snapshot(self) -> None:
        c = self.client()
        c.grant("p", user="s")
        snap = c.snapshot()
        self.assertTrue(snap["file"].startswith("snapshot-"))
        self.assertEqual(snap["memberships"], 1)
        self.assertTrue(os.path.exists(os.path.join(self.server.tmp, "data", snap["file"])))


class ChangeNumbers(ServerTestCase):
    """seq in write answers, last_seq, min_seq on reads, and stale (protocol version 3)."""

    def server_arguments(self) -> list[str]:
        return ["--min-seq-wait", "200"]

    def test_writes_carry_seq_and_the_client_keeps_the_newest(self) -> None:
        c = self.client()
        self.assertIsNone(c.last_seq)
        defined = c.define("pro", ["prod_pro"])
        self.assertEqual(defined["seq"], 1)
        grant = c.grant("prod_pro", device="phone", duration="30d")
        self.assertEqual(grant["seq"], 2)
        self.assertEqual(c.last_seq, 2)
        self.assertEqual(c.claim(device="phone", user="alice"), 1)
        self.assertEqual(c.last_seq, 3)
        self.assertEqual(c.claim(device="phone", user="alice"), 0)
        self.assertEqual(c.last_seq, 3, "a claim that moved nothing answers the newest change it saw")
        c.revoke(grant["membership"]["id"])
        self.assertEqual(c.last_seq, 4)
        # Reads carry none and leave it.
        c.check(user="alice")
        self.assertEqual(c.last_seq, 4)

    def test_a_read_with_min_seq_sees_the_write_and_a_change_not_made_is_stale(self) -> None:
        writer, reader = self.client(), self.client()
        writer.grant("prod_pro", user="bob")
        self.assertTrue(reader.check(user="bob", product="prod_pro", min_seq=writer.last_seq))
        self.assertEqual(len(reader.memberships(user="bob", min_seq=writer.last_seq)), 1)
        self.assertEqual(reader.customer(user="bob", min_seq=writer.last_seq)["activeProducts"], ["prod_pro"])
        started = time.monotonic()
        with self.assertRaises(EntitledError) as raised:
            reader.check(user="bob", min_seq=writer.last_seq + 1000)
        self.assertEqual(raised.exception.code, "stale")
        self.assertGreaterEqual(time.monotonic() - started, 0.19)
        # The connection goes on.
        self.assertTrue(reader.check(user="bob"))
        with self.assertRaises(TypeError):
            reader.check(user="bob", minseq=1)


class Statistics(ServerTestCase):
    def test_stats_counts_requests_errors_latency_the_store_and_the_snapshot(self) -> None:
        c = self.client()
        first = c.stats()
        self.assertTrue(first["server"].startswith("entitled "))
        self.assertIsInstance(entitled.parse_time(first["startedAt"]), dt.datetime)
        self.assertIsInstance(first["uptimeSeconds"], int)
        by_op = first["requests"]["byOp"]
        self.assertEqual(list(by_op), c.hello()["operations"])  # every operation, in hello's order
        self.assertEqual(first["requests"], {"total": 0, "invalid": 0, "byOp": dict.fromkeys(by_op, 0)})
        self.assertEqual(first["errors"]["total"], 0)
        self.assertIn("not_found", first["errors"]["byCode"])
        self.assertEqual(first["latencyMicros"], {})
        self.assertEqual(first["store"], {"users": 0, "devices": 0, "memberships": 0, "entitlements": 0})
        self.assertEqual(first["persistence"]["fsync"], "always")
        self.assertIsNone(first["persistence"]["snapshot"])
        self.assertEqual(first["connections"]["open"], 1)

        c.define("pro", ["prod_pro"])
        c.grant("prod_pro", device="dev_A", duration="30d")
        c.grant("prod_pro", user="alice")
        self.assertTrue(c.check(user="alice", entitlement="pro"))
        self.assertFalse(c.check(user="bob", entitlement="pro"))
        with self.assertRaises(EntitledError):
            c.check(user="alice", entitlement="gold")  # not_found: a check that failed
        with self.assertRaises(EntitledError):
            c.request("grant", user="alice")  # bad_request: refused before it made a request
        snap = c.snapshot()

        stats = c.stats()
        by_op = stats["requests"]["byOp"]
        # The first stats and the hello count now; a stats counts from the next one on.
        self.assertEqual({op: n for op, n in by_op.items() if n},
                         {"define": 1, "grant": 2, "check": 3, "snapshot": 1, "hello": 1, "stats": 1})
        self.assertEqual(stats["requests"]["invalid"], 1)
        self.assertEqual(stats["requests"]["total"], sum(by_op.values()) + 1)
        self.assertEqual({code: n for code, n in stats["errors"]["byCode"].items() if n}, {"not_found": 1, "bad_request": 1})
        self.assertEqual(stats["errors"]["total"], 2)
        self.assertEqual(stats["store"], {"users": 1, "devices": 1, "memberships": 2, "entitlements": 1})
        self.assertEqual(set(stats["latencyMicros"]), {"define", "grant", "check", "snapshot", "hello", "stats"})
        check = stats["latencyMicros"]["check"]
        self.assertEqual(set(check), {"count", "p50", "p90", "p99", "p999", "max"})
        self.assertEqual(check["count"], 3)
        self.assertTrue(0 <= check["p50"] <= check["p90"] <= check["p99"] <= check["p999"] <= check["max"], check)
        persistence = stats["persistence"]
        self.assertEqual(persistence["lastChange"], snap["sequence"])
        self.assertEqual(persistence["changesSinceSnapshot"], 0)
        self.assertEqual(persistence["logBytesSinceSnapshot"], 0)
        self.assertGreater(persistence["logBytesWritten"], 0)
        self.assertEqual(persistence["snapshotsWritten"], 1)
        snapshot = persistence["snapshot"]
        self.assertEqual((snapshot["file"], snapshot["change"], snapshot["bytes"]), (snap["file"], snap["sequence"], snap["bytes"]))
        self.assertIsInstance(entitled.parse_time(snapshot["writtenAt"]), dt.datetime)
        self.assertEqual(stats["startedAt"], first["startedAt"])


class Connections(ServerTestCase):
    def test_unix_socket(self) -> None:
        with Client(unix_socket=self.socket_path) as unix:
            self.assertEqual(unix.hello()["protocol"], entitled.PROTOCOL_VERSION)
            unix.define("pro", ["prod_u"])
            unix.grant("prod_u", device="dev_U", duration="1h")
            self.assertTrue(unix.check(device="dev_U", entitlement="pro"))
            answers = unix.pipeline([{"op": "check", "device": "dev_U"}] * 100)
            self.assertTrue(all(a["active"] is True for a in answers))
        # TCP and the Unix socket share one store.
        self.assertTrue(self.client().check(device="dev_U", entitlement="pro"))

    def test_server_going_away_is_a_clear_error(self) -> None:
        c = self.client()
        self.assertIs(c.ping()["ok"], True)
        self.assertEqual(self.stop_server(), 0)
        with self.assertRaises(entitled.CannotConnectError) as caught:
            c.ping()
        self.assertIn(f"tcp 127.0.0.1:{self.port}", str(caught.exception))
        self.assertIsInstance(caught.exception, ConnectionError)
        self.assertIsInstance(caught.exception.reason, ConnectionRefusedError)
        self.assertFalse(caught.exception.may_have_been_applied)
        self.assertFalse(c.closed)  # the next call connects again

    def test_too_large_closes_the_connection(self) -> None:
        c = self.client()
        with self.assertRaises(EntitledError) as caught:
            c.request("ping", padding="x" * 70000)
        self.assertIsInstance(caught.exception, entitled.TooLargeError)
        self.assertIs(c.ping()["ok"], True)  # the server closed that connection; the client opened another
        # In a pipeline, the requests after the long line get no answer, and were not carried out.
        d = self.client()
        with self.assertRaises(ConnectionClosedError) as closed:
            d.pipeline([{"op": "ping"}, {"op": "ping", "padding": "x" * 70000}, {"op": "grant", "user": "t", "product": "p"}])
        self.assertEqual([a["ok"] for a in closed.exception.answers], [True, False])
        self.assertFalse(closed.exception.may_have_been_applied)
        self.assertEqual(d.memberships(user="t"), [])


if __name__ == "__main__":
    unittest.main()
