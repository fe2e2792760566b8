"""The typed operations of PROTOCOL.md §6, as methods of Client.

Keyword arguments are snake_case and go on the wire under the protocol's names (expires_at -> expiresAt);
None means "leave it out". A keyword an operation does not take raises TypeError before anything is sent,
naming the one meant when one is close. Every method also takes id= (sent as the request's id) and
timeout= (seconds for this request, instead of the client's).
"""

from __future__ import annotations

import datetime as _dt
import difflib
from typing import Any, Iterable, Iterator, Mapping

from .errors import ProtocolError
from .results import CheckResult, ExportPage, FeedPage, Page
from .wire import wire_name

__all__ = ["Operations"]

# Keywords every typed method takes besides its fields: the request's id, and a timeout for this call only.
_CALL_OPTIONS = ("id", "timeout")


class Operations:
    """The typed methods; a subclass provides _call(op, fields, extra) -> the answer dict (raising the
    EntitledError of an error answer)."""

    def _call(self, op: str, fields: dict[str, Any], extra: Mapping[str, Any]) -> dict:
        raise NotImplementedError

    def ping(self, **extra: Any) -> dict:
        return self._call("ping", {}, extra)

    def hello(self, **extra: Any) -> dict:
        """{"protocol": 5, "server": "entitled 0.1.0", "operations": [...], "fields": {op: [...]},
        "authRequired": bool}."""
        return self._call("hello", {}, extra)

    def grant(
        self,
        product: str,
        *,
        user: str | None = None,
        device: str | None = None,
        plan: str | None = None,
        source: str | None = None,
        expires_at: str | _dt.datetime | None = None,
        duration: str | _dt.timedelta | None = None,
        purchased_at: str | _dt.datetime | None = None,
        renews_count: int | None = None,
        will_renew: bool | None = None,
        period_type: str | None = None,
        environment: str | None = None,
        ownership: str | None = None,
        grant_type: str | None = None,
        transaction_id: str | None = None,
        original_transaction_id: str | None = None,
        idempotency_key: str | None = None,
        reason: str | None = None,
        **extra: Any,
    ) -> dict:
        """Creates a membership. Returns the answer: {"seq": N, "membership": {...}} (+ "idempotentReplay": true).
        For a purchase imported after the fact, purchased_at is when the store sold it (the membership's
        createdAt, what duration counts from; at most an hour ahead of the server's clock) and
        renews_count the renewals the store made before (0 to 100000)."""
        return self._call("grant", dict(
            product=product, user=user, device=device, plan=plan, source=source, expires_at=expires_at,
            duration=duration, purchased_at=purchased_at, renews_count=renews_count, will_renew=will_renew,
            period_type=period_type, environment=environment,
            ownership=ownership, grant_type=grant_type, transaction_id=transaction_id,
            original_transaction_id=original_transaction_id, idempotency_key=idempotency_key,
            reason=reason,
        ), extra)

    def check(
        self,
        *,
        user: str | None = None,
        device: str | None = None,
        product: str | None = None,
        entitlement: str | None = None,
        at: str | _dt.datetime | None = None,
        min_seq: int | None = None,
        **extra: Any,
    ) -> CheckResult:
        """Whether the subject has access (to `product`, to `entitlement`, or to anything); with min_seq,
        once the server has applied that change (EntitledError "stale" if it does not in time)."""
        answer = self._call("check", dict(
            user=user, device=device, product=product, entitlement=entitlement, at=at, min_seq=min_seq,
        ), extra)
        return CheckResult(active=answer["active"] is True, expires_at=answer.get("expiresAt"))

    def claim(self, *, device: str, user: str, reason: str | None = None, **extra: Any) -> int:
        """Gives the device's unclaimed guest memberships to the user. Returns how many moved."""
        return self._call("claim", dict(device=device, user=user, reason=reason), extra)["claimed"]

    def revoke(self, membership: str, *, reason: str | None = None, **extra: Any) -> dict:
        """Revokes a membership. Returns the membership."""
        return self._call("revoke", dict(membership=membership, reason=reason), extra)["membership"]

    def extend(
        self,
        membership: str,
        *,
        duration: str | _dt.timedelta | None = None,
        expires_at: str | _dt.datetime | None = None,
        reason: str | None = None,
        **extra: Any,
    ) -> dict:
        """Moves a membership's expiry later by hand (an admin operation): `duration` later than its expiry
        (or than now, once it has expired), or to `expires_at`, later than both; give one of the two.
        Returns the answer: {"seq": N, "membership": {...}, "previousExpiresAt": "..."}. A duration sent
        twice extends twice: to retry safely, send expires_at (a repeat is refused, bad_request)."""
        return self._call("extend", dict(
            membership=membership, duration=duration, expires_at=expires_at, reason=reason,
        ), extra)

    def memberships(
        self,
        *,
        user: str | None = None,
        device: str | None = None,
        transaction_id: str | None = None,
        original_transaction_id: str | None = None,
        source: str | None = None,
        ended_after: str | _dt.datetime | None = None,
        at: str | _dt.datetime | None = None,
        min_seq: int | None = None,
        limit: int | None = None,
        after: str | None = None,
        **extra: Any,
    ) -> Page:
        """One page of the memberships the subject sees, newest first (with min_seq: as for check); or,
        instead of a subject, of the memberships holding a store transaction (transaction_id) or those of
        the subscription a transaction started (original_transaction_id); or of a source (source, oldest
        first, for a reconciliation; with ended_after, those whose access had not ended before it). At
        most `limit` (1 to 1000, default 100), after `after` (the .next of the page before). Returns a
        Page: .next is None on the last page; a source's page may be empty and still have a .next.
        iter_memberships() returns them all."""
        fields = dict(
            user=user, device=device, transaction_id=transaction_id, original_transaction_id=original_transaction_id,
            source=source, ended_after=ended_after, at=at, min_seq=min_seq, limit=limit, after=after,
        )
        answer = self._call("memberships", fields, extra)
        return Page(answer["memberships"], answer.get("next"))

    def iter_memberships(
        self,
        *,
        user: str | None = None,
        device: str | None = None,
        transaction_id: str | None = None,
        original_transaction_id: str | None = None,
        source: str | None = None,
        ended_after: str | _dt.datetime | None = None,
        at: str | _dt.datetime | None = None,
        min_seq: int | None = None,
        page_size: int | None = None,
        after: str | None = None,
        **extra: Any,
    ) -> Iterator[dict]:
        """Every membership memberships() lists, in its order (a source's oldest first): asks for a page of `page_size` (the
        server's default, 100, when None) at a time, from `after` on, and follows each page's .next to
        the last page. Misspelt keywords raise TypeError at once, before anything is sent."""
        fields = dict(
            user=user, device=device, transaction_id=transaction_id, original_transaction_id=original_transaction_id,
            source=source, ended_after=ended_after, at=at, min_seq=min_seq, page_size=page_size, after=after,
        )
        _refuse_unknown("iter_memberships", fields, extra)
        page_size = extra.pop("pageSize", page_size)  # the protocol's spelling, as every method takes it
        query = dict(user=user, device=device, transaction_id=transaction_id,
                     original_transaction_id=original_transaction_id, source=source, ended_after=ended_after,
                     at=at, min_seq=min_seq, **extra)
        return self._follow(lambda cursor: self.memberships(limit=page_size, after=cursor, **query), after,
                            empty_pages=source is not None)

    def _follow(self, fetch: Any, after: str | None, empty_pages: bool = False) -> Iterator[dict]:
        """Yields the items of fetch(after), then of fetch(page.next), ... until a page without next. A
        next that does not move on, or that follows an empty page, is a server fault, except that a page
        of a source's listing (empty_pages) may be empty and still have a next: it looked at as many
        memberships as one page may."""
        cursor = after
        while True:
            page = fetch(cursor)
            yield from page
            if page.next is None:
                return
            if (not page and not empty_pages) or page.next == cursor:
                raise ProtocolError(f"a page ({len(page)} items) whose \"next\" {page.next!r} does not move on from {cursor!r}")
            cursor = page.next

    def define(
        self, entitlement: str, products: Iterable[str], *, reason: str | None = None, **extra: Any
    ) -> dict:
        """Sets an entitlement's products. Returns {"entitlement": ..., "products": [sorted]}."""
        return self._call("define", dict(
            entitlement=entitlement, products=list(products), reason=reason,
        ), extra)

    def undefine(self, entitlement: str, *, reason: str | None = None, **extra: Any) -> dict:
        """Removes an entitlement from the catalog (an admin operation). Returns {"entitlement": ...,
        "products": [the products it had]}; EntitledError("not_found") when the catalog has no such
        entitlement."""
        return self._call("undefine", dict(entitlement=entitlement, reason=reason), extra)

    def erase(self, *, user: str | None = None, device: str | None = None, reason: str | None = None,
              **extra: Any) -> dict:
        """Erases a person (an admin operation; the GDPR's right to be forgotten): the user's memberships,
        the device's guest purchases, their audit entries and idempotency keys; other users' purchases on
        the device lose the device. Give user, device or both. Returns the "erased" object:
        {"memberships": N, "historyEntries": M}. The reason is kept in the audit trail, which names no
        one: give a ticket number, not the person."""
        return self._call("erase", dict(user=user, device=device, reason=reason), extra)["erased"]

    def catalog(self, **extra: Any) -> dict[str, list[str]]:
        """Every entitlement and its products."""
        return self._call("catalog", {}, extra)["entitlements"]

    def snapshot(self, **extra: Any) -> dict:
        """Writes a snapshot now. Returns {"file", "sequence", "bytes", "durationMs", "memberships"}."""
        return self._call("snapshot", {}, extra)

    def stats(self, **extra: Any) -> dict:
        """The server's counters since it started (an admin operation). Returns the answer: {"server",
        "startedAt", "uptimeSeconds", "connections", "requests" ({"total", "invalid", "byOp"}), "errors"
        ({"total", "byCode"}), "latencyMicros" ({op: {"count", "p50", "p90", "p99", "p999", "max"}}),
        "store", "persistence" (None without a data directory), or on a node of a cluster "replication"
        instead ({"connected", "writable", "appliedSequence", "lagChanges", ...})}."""
        return self._call("stats", {}, extra)

    def reload(self, **extra: Any) -> dict:
        """Has the server re-read its auth file (--auth), as SIGHUP does (an admin operation). Returns
        {"tokens": N}, how many tokens are in force now. A broken file raises EntitledError and the
        tokens in force stay in force."""
        return self._call("reload", {}, extra)

    def event(
        self,
        membership: str,
        type: str,
        *,
        event_id: str,
        event_time: str | _dt.datetime,
        expires_at: str | _dt.datetime | None = None,
        grace_period_expires_at: str | _dt.datetime | None = None,
        product: str | None = None,
        transaction_id: str | None = None,
        reason: str | None = None,
        **extra: Any,
    ) -> dict:
        """Applies a store's lifecycle event. Returns {"membership", "applied"} (+ "reason" when ignored:
        "duplicate", "out_of_order" or "revoked"). An ignored event is not an error."""
        return self._call("event", dict(
            membership=membership, type=type, event_id=event_id, event_time=event_time,
            expires_at=expires_at, grace_period_expires_at=grace_period_expires_at, product=product,
            transaction_id=transaction_id, reason=reason,
        ), extra)

    def customer(self, *, user: str | None = None, device: str | None = None, min_seq: int | None = None,
                 **extra: Any) -> dict:
        """The CustomerInfo view: entitlements, activeProducts, allPurchasedProductIds, ... (with min_seq:
        as for check)."""
        return self._call("customer", dict(user=user, device=device, min_seq=min_seq), extra)["customer"]

    def history(
        self,
        *,
        user: str | None = None,
        device: str | None = None,
        entitlement: str | None = None,
        erasures: bool | None = None,
        limit: int | None = None,
        after: str | None = None,
        **extra: Any,
    ) -> Page:
        """One page of the audit trail of a subject or an entitlement, newest first; with erasures=True, of
        the erasures (entries with action "erase", naming no one). At most `limit` entries (1 to 1000,
        default 100), after `after` (the .next of the page before, an opaque cursor passed back unchanged).
        Returns a Page: .next is None on the last page. iter_history() returns every entry."""
        answer = self._call("history", dict(
            user=user, device=device, entitlement=entitlement, erasures=erasures, limit=limit, after=after,
        ), extra)
        return Page(answer["history"], answer.get("next"))

    def iter_history(
        self,
        *,
        user: str | None = None,
        device: str | None = None,
        entitlement: str | None = None,
        erasures: bool | None = None,
        page_size: int | None = None,
        after: str | None = None,
        **extra: Any,
    ) -> Iterator[dict]:
        """Every entry history() lists, newest first: asks for a page of `page_size` (the server's
        default, 100, when None) at a time, from `after` on, and follows each page's .next to the last
        page. Misspelt keywords raise TypeError at once, before anything is sent."""
        fields = dict(user=user, device=device, entitlement=entitlement, erasures=erasures, page_size=page_size,
                      after=after)
        _refuse_unknown("iter_history", fields, extra)
        page_size = extra.pop("pageSize", page_size)
        query = dict(user=user, device=device, entitlement=entitlement, erasures=erasures, **extra)
        return self._follow(lambda cursor: self.history(limit=page_size, after=cursor, **query), after)

    def changes(
        self,
        *,
        after_seq: int | None = None,
        limit: int | None = None,
        wait: int | _dt.timedelta | None = None,
        user: str | None = None,
        device: str | None = None,
        **extra: Any,
    ) -> FeedPage:
        """One page of the change feed (an admin operation): the changes after change `after_seq` (0 or None:
        from the oldest the feed holds; TruncatedError once its retention let that go), oldest first, at
        most about `limit` items (1 to 1000, default 100; a change's items are never split). With `user`
        and/or `device`, only what concerns them (catalog changes left out). `wait` (milliseconds, 0 to
        30,000, or a timedelta): when no change is there, the server holds the answer that long for one.

        A waiting read holds up the lines sent after it on its connection, so it is sent on a connection no
        other call is using (one the client keeps for waiting reads), and its timeout is the client's plus
        the wait. Returns a FeedPage; read on from its .next. follow_changes() does all of this in a loop."""
        if isinstance(wait, _dt.timedelta):
            wait = _milliseconds(wait)
        answer = self._call("changes", dict(after_seq=after_seq, limit=limit, wait=wait, user=user, device=device),
                            extra)
        return FeedPage.from_answer(answer)

    def export(self, *, after: str | None = None, limit: int | None = None, history: bool | None = None,
               **extra: Any) -> ExportPage:
        """One page of a full copy of the store as of one change (an admin operation). Without `after`,
        takes a new copy (the server holds at most 4, each until its last page is read or 300 s after the
        last read: OverLimitError beyond); with `after` (the .next of the page before, unchanged), reads on
        from it (NotFoundError once the server dropped it: start again). At most `limit` memberships a page
        (1 to 1000, default 1000); with history=True, their audit trail too. Returns an ExportPage.

        Every page of one export must go to the server that took the copy: with several nodes, use
        iter_export(), which keeps an export on one connection and reads every page."""
        answer = self._call("export", dict(after=after, limit=limit, history=history), extra)
        return ExportPage.from_answer(answer)


def _milliseconds(wait: _dt.timedelta) -> int:
    """A wait given as a timedelta, in the protocol's whole milliseconds."""
    if wait < _dt.timedelta(0):
        raise ValueError(f"a wait cannot be negative (got {wait!r})")
    return wait // _dt.timedelta(milliseconds=1)


def _fold_spellings(op: str, fields: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments of a method that sends many requests (a follower's, an export's): `fields`
    with what `extra` gives under a parameter's protocol spelling (afterSeq for after_seq) folded in. Any
    other keyword raises TypeError as _refuse_unknown does; so does id, which one request alone could carry."""
    if "id" in extra:
        raise TypeError(f"{op}() sends many requests: it takes no id")
    _refuse_unknown(op, fields, extra)
    names = {wire_name(name): name for name in fields}
    folded = dict(fields)
    for name, value in extra.items():
        folded[names[wire_name(name)]] = value
    return folded


def _refuse_unknown(op: str, fields: Mapping[str, Any], extra: Mapping[str, Any]) -> None:
    """Raises TypeError for a keyword the typed method does not take, before anything is sent: a misspelt
    field must not reach the server (which refuses it too, but only after a round trip, and a server of
    protocol version 1 skipped it silently). `id`, `timeout`, and a parameter's protocol spelling (expiresAt
    for expires_at), are the extra keywords allowed."""
    taken = {wire_name(name): name for name in fields}
    for name in extra:
        if name in _CALL_OPTIONS or wire_name(name) in taken:
            continue
        known = list(fields) + list(_CALL_OPTIONS)
        folded = {wire_name(k).lower(): k for k in known}
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
        if not close and wire_name(name).lower() in folded:
            close = [folded[wire_name(name).lower()]]
        if not close:
            close = [folded[m] for m in difflib.get_close_matches(wire_name(name).lower(), list(folded), n=1, cutoff=0.75)]
        hint = f" (did you mean {close[0]!r}?)" if close else f"; {op}() takes {', '.join(known)}"
        raise TypeError(f"{op}() got an unexpected keyword argument {name!r}{hint}")


