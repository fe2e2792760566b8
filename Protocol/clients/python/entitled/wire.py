"""How values go on the wire: field names, times, durations, addresses, and which operations are reads."""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any, Mapping, NamedTuple

PROTOCOL_VERSION = 5
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7117

#: The operations that change nothing: one whose connection drops is sent again (PROTOCOL.md, What an
#: answer means). Any other request is never sent twice by the client (a grant sent twice is two grants).
READ_OPERATIONS = frozenset({"ping", "hello", "check", "memberships", "customer", "catalog", "history", "stats",
                             "changes", "export"})
#: The reads that take minSeq (read your writes).
MIN_SEQ_OPERATIONS = frozenset({"check", "memberships", "customer"})

_SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")
# The server writes "2026-12-22T00:31:45.833Z"; Python before 3.11 parses no "Z" and only 0, 3 or 6 digits.
_TIME = re.compile(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$")


def wire_name(name: str) -> str:
    """expires_at -> expiresAt; names without "_" (user, expiresAt) are returned unchanged."""
    if not _SNAKE.match(name):
        return name
    first, *rest = name.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


def wire_value(value: Any) -> Any:
    """A timezone-aware datetime as an RFC 3339 time in UTC with milliseconds (a naive one is refused: the
    protocol requires a zone); a timedelta of whole seconds as "Ns"; anything else unchanged."""
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"a time must have a zone (got the naive datetime {value!r})")
        utc = value.astimezone(_dt.timezone.utc)
        return utc.strftime("%Y-%m-%dT%H:%M:%S") + f".{utc.microsecond // 1000:03d}Z"
    if isinstance(value, _dt.timedelta):
        seconds = value.total_seconds()
        if seconds <= 0 or value.microseconds:
            raise ValueError(f"a duration must be a positive whole number of seconds (got {value!r})")
        return f"{int(seconds)}s"
    return value


def wire_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments as a request's fields: protocol names, wire values, None left out."""
    out: dict[str, Any] = {}
    for name, value in fields.items():
        if value is None:
            continue
        key = wire_name(name)
        if key in out:
            raise ValueError(f"field {key!r} given twice")
        out[key] = wire_value(value)
    return out


def parse_time(value: str) -> _dt.datetime:
    """A time the server wrote ("2026-12-22T00:31:45.833Z") as an aware datetime, on every supported Python."""
    match = _TIME.match(value)
    if not match:
        raise ValueError(f"not an RFC 3339 time: {value!r}")
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    micros = int((fraction or "0")[:6].ljust(6, "0"))
    if zone == "Z":
        tz = _dt.timezone.utc
    else:
        sign = 1 if zone[0] == "+" else -1
        tz = _dt.timezone(sign * _dt.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    return _dt.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micros, tzinfo=tz)


class Address(NamedTuple):
    """Where a server listens: TCP (host, port) or a Unix socket path (host is the path, port None)."""

    host: str
    port: int | None = None

    @property
    def is_unix(self) -> bool:
        return self.port is None

    def __str__(self) -> str:
        if self.port is None:
            return f"unix {self.host}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"tcp {host}:{self.port}"


def parse_address(node: Any) -> Address:
    """("10.0.0.5", 7117), "10.0.0.5:7117", "[::1]:7117", or a Unix socket path ("/run/entitled.sock": any
    string with a "/") -> Address."""
    if isinstance(node, Address):
        return node
    if isinstance(node, tuple):
        host, port = node
        return Address(str(host), int(port))
    text = str(node)
    if "/" in text:
        return Address(text, None)
    host, separator, port = text.rpartition(":")
    if not separator or not host or not port.isdigit():
        raise ValueError(f"a node is \"host:port\", (host, port) or a Unix socket path, not {node!r}")
    return Address(host.strip("[]"), int(port))
