"""The typed answers: a check, a page, and the events of a watch. Other answers are the protocol's JSON
objects as dicts, with the protocol's (camelCase) names; fields the client does not know are kept."""

from __future__ import annotations

import dataclasses
import datetime as _dt
from typing import Any, Iterable

from .wire import parse_time

__all__ = ["CheckResult", "Page", "Push", "Gap"]


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
