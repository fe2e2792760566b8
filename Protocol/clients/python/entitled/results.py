"""The typed answers: a check, a page, the events of a watch, the change feed's items and pages, and an
export's pages. Other answers are the protocol's JSON objects as dicts, with the protocol's (camelCase)
names; fields the client does not know are kept."""

from __future__ import annotations

import dataclasses
import datetime as _dt
from typing import Any, Iterable, NamedTuple

from .wire import parse_time

__all__ = ["CheckResult", "Page", "Push", "Gap", "FeedItem", "FeedPage", "ErasedCounts", "ExportPage"]


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """The answer of check(). True exactly when `active`; `expires_at` is the RFC 3339 time when access
    stops by itself, or None: lifetime when active, absent when not active."""

    active: bool
    expires_at: str | None = None

    def __bool__(self) -> bool:
        return self.active

    @property
    def expires_at_datetime(self) -> _dt.datetime | None:
        """`expires_at` as an aware datetime (UTC), or None."""
        return parse_time(self.expires_at) if self.expires_at is not None else None


class Page(list):
    """One page of memberships() or history(): a list of the page's items, newest first. `next` is the
    answer's "next": pass it as after= to get the page that follows, unchanged; None on the last page.
    A Page compares equal to a list with the same items."""

    def __init__(self, items: Iterable[Any] = (), next: str | None = None):
        super().__init__(items)
        self.next = next

    def __repr__(self) -> str:
        return f"Page({list.__repr__(self)}, next={self.next!r})"


@dataclasses.dataclass(frozen=True)
class Push:
    """A pushed line of a watch: `cause` (grant, claim, revoke, transfer, extend, expired, erase, or an
    event's type), `sequence` (the change's number; None for expired), `membership` (the membership object,
    a dict) and `line`, the whole line as it came."""

    cause: str
    sequence: int | None
    membership: dict
    line: dict

    @classmethod
    def from_line(cls, line: dict) -> "Push":
        return cls(cause=line.get("cause", ""), sequence=line.get("sequence"),
                   membership=line.get("membership") or {}, line=line)


@dataclasses.dataclass(frozen=True)
class Gap:
    """A watch's connection dropped and was opened again: pushed lines may have been missed between
    `since` and `until` (aware datetimes, UTC). Re-read the state you keep with check() or customer()."""

    since: _dt.datetime
    until: _dt.datetime
    reason: str = ""

    def __str__(self) -> str:
        return (f"pushed lines may have been missed between {self.since.isoformat()} and {self.until.isoformat()}"
                f"{f' ({self.reason})' if self.reason else ''}; re-read the state with check() or customer()")


class ErasedCounts(NamedTuple):
    """What an erasure removed: its memberships and its audit entries (the protocol's "erased" object)."""

    memberships: int
    history_entries: int


@dataclasses.dataclass(frozen=True)
class FeedItem:
    """One item of the change feed (changes()): the audit entry of what one change did to one membership,
    to the catalog, or that a person was erased. The items of one change (a claim that moved several
    memberships) share its `sequence`, which is also how an item delivered again is recognised.

    What it left behind is in the fields its action has: `membership` (the membership as the change left
    it, its status as of the change; with `event_id` and `event_time` for a store event,
    `previous_expires_at` for an extend, `former_owner` ({"user": U} or {"device": D}) for a transfer);
    `entitlement` and `products` for define and undefine; `erased` for an erase, with `erased_memberships`
    (delete them from any copy) and `detached_memberships` (other users' memberships bought on the erased
    device: take the device off them). The others are None (the lists empty). `raw` is the item as the
    server wrote it, fields this client does not know included: what a webhook passes on whole."""

    sequence: int
    time: str
    actor: str
    action: str
    reason: str | None = None
    membership: dict | None = None
    event_id: str | None = None
    event_time: str | None = None
    previous_expires_at: str | None = None
    former_owner: dict | None = None
    entitlement: str | None = None
    products: list[str] | None = None
    erased: ErasedCounts | None = None
    erased_memberships: list[str] = dataclasses.field(default_factory=list)
    detached_memberships: list[str] = dataclasses.field(default_factory=list)
    raw: dict = dataclasses.field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, item: dict) -> "FeedItem":
        """Reads an item of a changes answer (a KeyError or TypeError when it has no sequence, time, actor
        or action: the protocol always sends them)."""
        erased = item.get("erased")
        return cls(
            sequence=int(item["sequence"]), time=item["time"], actor=item["actor"], action=item["action"],
            reason=item.get("reason"), membership=item.get("membership"), event_id=item.get("eventId"),
            event_time=item.get("eventTime"), previous_expires_at=item.get("previousExpiresAt"),
            former_owner=item.get("formerOwner"), entitlement=item.get("entitlement"),
            products=item.get("products"),
            erased=ErasedCounts(erased.get("memberships", 0), erased.get("historyEntries", 0))
            if isinstance(erased, dict) else None,
            erased_memberships=list(item.get("erasedMemberships") or []),
            detached_memberships=list(item.get("detachedMemberships") or []),
            raw=item,
        )

    @property
    def time_datetime(self) -> _dt.datetime:
        """`time`, when the change was made, as an aware datetime (UTC)."""
        return parse_time(self.time)


class FeedPage(list):
    """One page of the change feed (changes()): a list of FeedItems, oldest first. `next` is the after_seq
    of the next read (it moves on past the changes a subject's read leaves out, so a page may be empty and
    still move on); `newest` the newest change the page could show; `oldest_after_seq` the oldest
    after_seq the feed accepts now. While `has_more` (next < newest), read on at once; once not, the reader
    is caught up: read on with wait=. A FeedPage compares equal to a list with the same items."""

    def __init__(self, items: Iterable[FeedItem] = (), next: int = 0, newest: int = 0, oldest_after_seq: int = 0):
        super().__init__(items)
        self.next = next
        self.newest = newest
        self.oldest_after_seq = oldest_after_seq

    @classmethod
    def from_answer(cls, answer: dict) -> "FeedPage":
        return cls((FeedItem.from_json(item) for item in answer["changes"]), next=answer["next"],
                   newest=answer["newest"], oldest_after_seq=answer["oldestAfterSeq"])

    @property
    def has_more(self) -> bool:
        """Whether more changes are there to read now (next < newest)."""
        return self.next < self.newest

    def __repr__(self) -> str:
        return (f"FeedPage({list.__repr__(self)}, next={self.next!r}, newest={self.newest!r}, "
                f"oldest_after_seq={self.oldest_after_seq!r})")


class ExportPage(list):
    """One page of an export (export()): a list of its memberships (dicts), in creation order, each as of
    the copy's change. `seq` is that change (follow the feed with after_seq=seq once every page is read)
    and `time` when the copy was taken; `entitlements` the catalog as of `seq` (the first page only, else
    None); `history` the audit entries of the page's memberships (with history=True, else None); `next`
    the cursor of the next page, passed back unchanged as after= (None on the last page)."""

    def __init__(self, memberships: Iterable[dict] = (), *, seq: int = 0, time: str = "",
                 entitlements: dict[str, list[str]] | None = None, history: list[dict] | None = None,
                 next: str | None = None):
        super().__init__(memberships)
        self.seq = seq
        self.time = time
        self.entitlements = entitlements
        self.history = history
        self.next = next

    @classmethod
    def from_answer(cls, answer: dict) -> "ExportPage":
        export = answer["export"]
        return cls(answer["memberships"], seq=export["seq"], time=export["time"],
                   entitlements=answer.get("entitlements"), history=answer.get("history"), next=answer.get("next"))

    @property
    def time_datetime(self) -> _dt.datetime:
        """`time` as an aware datetime (UTC)."""
        return parse_time(self.time)

    def __repr__(self) -> str:
        return f"ExportPage({list.__repr__(self)}, seq={self.seq!r}, next={self.next!r})"
