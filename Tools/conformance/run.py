#!/usr/bin/env python3
"""Runs the protocol conformance scenarios (Protocol/conformance/*.ndjson) against a running `entitled`.

Usage:
    python3 Tools/conformance/run.py --host 127.0.0.1 --port N [--require-schema] [--token-file PATH] [--keep]
        [--created-file PATH] [scenario.ndjson ...]

With no scenario files, every Protocol/conformance/*.ndjson runs. Each scenario runs on its own fresh
connections against the same server. Prints PASS or FAIL (with the first mismatch) per scenario and exits
0 only if every scenario passed.

Afterwards the runner removes what the run created, so a real server is left as it was: every user and
device a request of the run named and the server accepted is erased (`erase`), and every entitlement it
defined is removed (`undefine`). Only ids carrying the run's tag are touched. An admin token authenticates
the clean-up connection on a server started with --auth: the first of `--token T`, `--token-file PATH` (its
first line) and the ENTITLED_TOKEN environment variable, as entitlectl takes them (prefer the file or the
variable: every user of the machine can read a command line); `--keep` leaves everything in place;
`--created-file` writes what the run created (JSON) before removing it. A server that does not know `erase`
or `undefine` (an older one) is reported and the rest left in place; any other refusal fails the run.

If the module `jsonschema` can be imported, every request sent with "send" (unless marked "invalid") is
validated against Protocol/schema/request.schema.json and every response and pushed line received against
Protocol/schema/response.schema.json; a violation fails the scenario. `--require-schema` fails at once when
`jsonschema` is missing. The scenario format and the matching rules are described in
Protocol/conformance/README.md. Python 3.11 standard library only (plus the optional `jsonschema`).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import secrets
import socket
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCENARIO_DIR = ROOT / "Protocol" / "conformance"
SCHEMA_DIR = ROOT / "Protocol" / "schema"

# Response times: UTC, millisecond precision, `.mmm` only when not zero (PROTOCOL.md §4 Times).
RESPONSE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.(?!000)\d{3})?Z$")
MEMBERSHIP_ID = re.compile(r"^mem_[0-9abcdefghjkmnpqrstvwxyz]{13}$")
CAPTURE = re.compile(r"^\$(id|time|value):([A-Za-z0-9_.-]+)$")
DIRECTIVES = {"send", "sendRaw", "expect", "expectPush", "expectNoPush", "expectClosed", "comment", "sleep"}
STEP_KEYS = DIRECTIVES | {"connection", "invalid", "repeat", "newline", "timeout"}


class Mismatch(Exception):
    """The first difference between what a scenario expects and what the server did."""


# MARK: Matching


def describe(value) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= 400 else text[:400] + "…"


def json_type(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def match(expected, actual, captures: dict, path: str = "$") -> dict:
    """Returns the captures extended by this match, or raises Mismatch. Leaves `captures` untouched."""
    if isinstance(expected, str) and expected.startswith("$"):
        if expected.startswith("$$"):
            expected = expected[1:]  # "$$x" is the literal string "$x"
        else:
            return match_placeholder(expected, actual, captures, path)
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            raise Mismatch(f"{path}: expected an object, got {describe(actual)}")
        exact = expected.get("$exact") is True
        alternatives = expected.get("$anyOf")
        result = captures
        for key, value in expected.items():
            if key in ("$exact", "$anyOf"):
                continue
            if value == "$absent":
                if key in actual:
                    raise Mismatch(f"{path}.{key}: expected no such key, got {describe(actual[key])}")
                continue
            if key not in actual:
                raise Mismatch(f"{path}.{key}: missing (object was {describe(actual)})")
            result = match(value, actual[key], result, f"{path}.{key}")
        if alternatives is not None:
            # The object must also match one of these patterns (a server's mode: standalone or cluster node).
            problems = []
            for alternative in alternatives:
                try:
                    result = match(alternative, actual, result, path)
                    break
                except Mismatch as problem:
                    problems.append(str(problem))
            else:
                raise Mismatch(f"{path}: matches none of the $anyOf patterns: " + " | ".join(problems))
        if exact:
            named = {k for k, v in expected.items() if k not in ("$exact", "$anyOf") and v != "$absent"}
            for alternative in alternatives or []:
                named |= {k for k, v in alternative.items() if k != "$exact" and v != "$absent"}
            extra = sorted(set(actual) - named)
            if extra:
                raise Mismatch(f"{path}: unexpected keys {extra} (object was {describe(actual)})")
        return result
    if isinstance(expected, list):
        if not isinstance(actual, list):
            raise Mismatch(f"{path}: expected an array, got {describe(actual)}")
        if len(expected) != len(actual):
            raise Mismatch(f"{path}: expected {len(expected)} elements, got {len(actual)}: {describe(actual)}")
        result = captures
        for index, (e, a) in enumerate(zip(expected, actual)):
            result = match(e, a, result, f"{path}[{index}]")
        return result
    # Scalars: same JSON type and equal (so that true is not 1 and 1 is not "1").
    if json_type(expected) != json_type(actual) and not (
        json_type(expected) in ("integer", "number") and json_type(actual) in ("integer", "number")
    ):
        raise Mismatch(f"{path}: expected {describe(expected)}, got {describe(actual)}")
    if expected != actual:
        raise Mismatch(f"{path}: expected {describe(expected)}, got {describe(actual)}")
    return captures


def match_placeholder(expected: str, actual, captures: dict, path: str) -> dict:
    if expected == "$any":
        return captures
    if expected == "$absent":
        raise Mismatch(f"{path}: expected to be absent, got {describe(actual)}")
    simple = {
        "$string": lambda v: isinstance(v, str),
        "$integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "$number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "$bool": lambda v: isinstance(v, bool),
        "$object": lambda v: isinstance(v, dict),
        "$array": lambda v: isinstance(v, list),
        "$time": lambda v: isinstance(v, str) and RESPONSE_TIME.match(v) is not None,
        "$id": lambda v: isinstance(v, str) and MEMBERSHIP_ID.match(v) is not None,
    }
    if expected in simple:
        if not simple[expected](actual):
            raise Mismatch(f"{path}: expected {expected[1:]}, got {describe(actual)}")
        return captures
    capture = CAPTURE.match(expected)
    if not capture:
        raise Mismatch(f"{path}: unknown placeholder {expected!r} in the scenario")
    kind, name = capture.groups()
    if kind == "id" and not (isinstance(actual, str) and MEMBERSHIP_ID.match(actual)):
        raise Mismatch(f"{path}: expected a membership id for {expected}, got {describe(actual)}")
    if kind == "time" and not (isinstance(actual, str) and RESPONSE_TIME.match(actual)):
        raise Mismatch(f"{path}: expected a response time for {expected}, got {describe(actual)}")
    key = f"{kind}:{name}"
    if key in captures:
        if captures[key] != actual or json_type(captures[key]) != json_type(actual):
            raise Mismatch(f"{path}: expected {expected} = {describe(captures[key])}, got {describe(actual)}")
        return captures
    if kind == "id":
        # Different names stand for different memberships.
        for other, value in captures.items():
            if other.startswith("id:") and value == actual:
                raise Mismatch(f"{path}: {expected} is {actual}, which {other} already is")
    extended = dict(captures)
    extended[key] = actual
    return extended


def substitute(value, captures: dict, tag: str):
    """Replaces ${S} in strings with the scenario's tag and, in requests, captured "$id:X"-style values."""
    if isinstance(value, str):
        capture = CAPTURE.match(value)
        if capture:
            key = f"{capture.group(1)}:{capture.group(2)}"
            if key not in captures:
                raise Mismatch(f"the request uses {value} before any response captured it")
            return captures[key]
        return value.replace("${S}", tag)
    if isinstance(value, dict):
        return {k.replace("${S}", tag): substitute(v, captures, tag) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, captures, tag) for v in value]
    return value


def tag_only(value, tag: str):
    """Replaces ${S} in every string of an expected value (placeholders stay for `match`)."""
    if isinstance(value, str):
        return value.replace("${S}", tag)
    if isinstance(value, dict):
        return {k.replace("${S}", tag): tag_only(v, tag) for k, v in value.items()}
    if isinstance(value, list):
        return [tag_only(v, tag) for v in value]
    return value


# MARK: Schemas


class Schemas:
    """The request and response schemas, when `jsonschema` is available."""

    def __init__(self, require: bool):
        try:
            import jsonschema  # noqa: F401
        except ImportError:
            if require:
                raise SystemExit("FAIL: --require-schema given but the Python module jsonschema is missing "
                                 "(Debian: apt-get install python3-jsonschema)")
            self.enabled = False
            return
        from jsonschema import Draft202012Validator

        self.enabled = True
        self.request_root = json.loads((SCHEMA_DIR / "request.schema.json").read_text())
        self.response_root = json.loads((SCHEMA_DIR / "response.schema.json").read_text())
        for root in (self.request_root, self.response_root):
            Draft202012Validator.check_schema(root)
        self.request = Draft202012Validator(self.request_root)
        self.response = Draft202012Validator(self.response_root)

        def part(root, ref, **extra):
            sub = {k: v for k, v in root.items() if k in ("$schema", "$defs")}
            sub.update(extra)
            sub["$ref"] = ref
            return Draft202012Validator(sub)

        # Per operation: its request branch (for a readable message when a request fails the oneOf), and the
        # success shape of its answer, `$defs/success/<op>`, validated on top of the whole response schema.
        self.operations = {
            op: part(self.request_root, f"#/$defs/operations/{op}", properties=self.request_root["properties"])
            for op in self.request_root["$defs"]["operations"]
        }
        self.success = {
            op: part(self.response_root, f"#/$defs/success/{op}") for op in self.response_root["$defs"]["success"]
        }
        self.kinds = {kind: part(self.response_root, f"#/$defs/{kind}") for kind in ("successLine", "errorLine", "pushLine")}

    @staticmethod
    def first_error(validator, instance):
        from jsonschema.exceptions import best_match

        error = best_match(validator.iter_errors(instance))
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        rule = "/".join(str(p) for p in error.absolute_schema_path)
        return f"at {where}: {error.message[:300]} (schema: {rule[:200]})"

    def check_request(self, request):
        if not self.enabled:
            return
        problem = self.first_error(self.request, request)
        op = request.get("op") if isinstance(request, dict) else None
        if problem and isinstance(op, str) and op in self.operations:
            problem = self.first_error(self.operations[op], request) or problem
        if problem:
            raise Mismatch(f"request {describe(request)} violates request.schema.json {problem}")

    def check_line(self, line, op):
        if not self.enabled:
            return
        problem = self.first_error(self.response, line)
        if problem:
            # Name the rule of the kind of line it is, rather than "not valid under any of the given schemas".
            kind = "pushLine" if "push" in line else "errorLine" if line.get("ok") is False else "successLine"
            problem = self.first_error(self.kinds[kind], line) or problem
            raise Mismatch(f"line {describe(line)} violates response.schema.json {problem}")
        if op and line.get("ok") is True and op in self.success:
            problem = self.first_error(self.success[op], line)
            if problem:
                raise Mismatch(f"answer to {op} {describe(line)} violates $defs/success/{op} {problem}")


# MARK: Connections


class Connection:
    """One TCP connection: sends lines, sorts received lines into responses and pushed lines."""

    def __init__(self, name: str, host: str, port: int, schemas: Schemas):
        self.name = name
        self.socket = socket.create_connection((host, port), timeout=10)
        self.buffer = b""
        self.responses: list = []
        self.pushes: list = []
        self.sent_ops: list = []  # the op of each request still waiting for its response, in order
        self.sent_requests: list = []  # the request (a dict, or None) of each, in the same order
        self.accepted: list = []  # the requests the server answered with "ok": true
        self.closed = False
        self.schemas = schemas

    def send(self, data: bytes, op, request=None):
        self.socket.sendall(data)
        self.sent_ops.append(op)
        self.sent_requests.append(request)

    def _read_line(self, deadline: float) -> bool:
        """Reads one more line into the queues; False when the deadline passed first."""
        while b"\n" not in self.buffer:
            if self.closed:
                return False
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self.socket.settimeout(remaining)
            try:
                chunk = self.socket.recv(65536)
            except socket.timeout:
                return False
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                self.closed = True
                if self.buffer:
                    raise Mismatch(f"[{self.name}] the server closed the connection inside a line: {self.buffer[:200]!r}")
                return False
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\n", 1)
        try:
            line = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise Mismatch(f"[{self.name}] the server wrote a line that is not JSON ({error}): {raw[:300]!r}")
        if not isinstance(line, dict):
            raise Mismatch(f"[{self.name}] the server wrote a line that is not an object: {raw[:300]!r}")
        if ("ok" in line) == ("push" in line):
            raise Mismatch(f"[{self.name}] a line must have exactly one of ok and push: {describe(line)}")
        if "push" in line:
            self.schemas.check_line(line, None)
            self.pushes.append(line)
        else:
            op = self.sent_ops.pop(0) if self.sent_ops else None
            request = self.sent_requests.pop(0) if self.sent_requests else None
            if line.get("ok") is True and isinstance(request, dict):
                self.accepted.append(request)
            self.schemas.check_line(line, op)
            self.responses.append(line)
        return True

    def next_response(self, timeout: float):
        deadline = time.monotonic() + timeout
        while not self.responses:
            if not self._read_line(deadline):
                state = "the server closed the connection" if self.closed else f"no response within {timeout}s"
                raise Mismatch(f"[{self.name}] expected a response, but {state}")
        return self.responses.pop(0)

    def take_push(self, expected, captures: dict, timeout: float) -> dict:
        """Finds a pushed line that matches (pushes of different changes come in any order)."""
        deadline = time.monotonic() + timeout
        checked = 0
        while True:
            for index in range(len(self.pushes)):
                try:
                    result = match(expected, self.pushes[index], captures)
                except Mismatch:
                    continue
                del self.pushes[index]
                return result
            checked = len(self.pushes)
            if not self._read_line(deadline):
                break
        if checked:
            # Report why the closest candidate did not match.
            try:
                match(expected, self.pushes[0], captures)
            except Mismatch as mismatch:
                raise Mismatch(f"[{self.name}] no pushed line matched within {timeout}s; "
                               f"{len(self.pushes)} unmatched, the first differs: {mismatch}")
        raise Mismatch(f"[{self.name}] expected a pushed line within {timeout}s, got none")

    def expect_no_push(self, wait: float):
        deadline = time.monotonic() + wait
        while self._read_line(deadline):
            pass
        if self.pushes:
            raise Mismatch(f"[{self.name}] expected no pushed line, got {describe(self.pushes[0])}")

    def expect_closed(self, timeout: float):
        deadline = time.monotonic() + timeout
        while self._read_line(deadline):
            pass
        if self.responses:
            raise Mismatch(f"[{self.name}] expected the connection to close, got {describe(self.responses[0])}")
        if not self.closed:
            raise Mismatch(f"[{self.name}] expected the server to close the connection within {timeout}s")

    def close(self):
        try:
            self.socket.close()
        except OSError:
            pass


# MARK: Scenarios


def load_steps(path: Path) -> list:
    steps = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not text.strip():
            continue
        try:
            step = json.loads(text)
        except json.JSONDecodeError as error:
            raise SystemExit(f"{path}:{number}: not JSON: {error}")
        if not isinstance(step, dict):
            raise SystemExit(f"{path}:{number}: each line must be an object")
        kinds = [key for key in step if key in DIRECTIVES]
        unknown = [key for key in step if key not in STEP_KEYS]
        if len(kinds) != 1 or unknown:
            raise SystemExit(f"{path}:{number}: need exactly one of {sorted(DIRECTIVES)}; unknown keys: {unknown}")
        steps.append((number, kinds[0], step))
    return steps


def run_scenario(path: Path, host: str, port: int, schemas: Schemas, run_tag: str, timeout: float,
                 created: "Created") -> str | None:
    """Runs one scenario; returns None when it passed, else the first mismatch. What the server accepted
    is noted in `created`, passed or not."""
    tag = f"{path.stem}-{run_tag}"
    connections: dict[str, Connection] = {}
    captures: dict = {}

    def connection(name: str) -> Connection:
        if name not in connections:
            connections[name] = Connection(name, host, port, schemas)
        return connections[name]

    try:
        steps = load_steps(path)
        for number, kind, step in steps:
            name = step.get("connection", "main")
            step_timeout = float(step.get("timeout", timeout))
            try:
                if kind == "comment":
                    continue
                if kind == "sleep":
                    time.sleep(float(step["sleep"]))
                elif kind == "send":
                    request = substitute(step["send"], captures, tag)
                    if not step.get("invalid"):
                        schemas.check_request(request)
                    line = json.dumps(request, ensure_ascii=False, separators=(",", ":")) + "\n"
                    op = request.get("op") if isinstance(request, dict) else None
                    connection(name).send(line.encode("utf-8"), op if isinstance(op, str) else None, request)
                elif kind == "sendRaw":
                    raw = substitute(step["sendRaw"], captures, tag) * int(step.get("repeat", 1))
                    if step.get("newline", True):
                        raw += "\n"
                    try:
                        parsed = json.loads(raw)
                    except (json.JSONDecodeError, RecursionError):
                        parsed = None
                    connection(name).send(raw.encode("utf-8"), None, parsed if isinstance(parsed, dict) else None)
                elif kind == "expect":
                    response = connection(name).next_response(step_timeout)
                    captures = match(tag_only(step["expect"], tag), response, captures)
                elif kind == "expectPush":
                    captures = connection(name).take_push(tag_only(step["expectPush"], tag), captures, step_timeout)
                elif kind == "expectNoPush":
                    connection(name).expect_no_push(float(step["expectNoPush"]))
                elif kind == "expectClosed":
                    connection(name).expect_closed(step_timeout)
            except Mismatch as mismatch:
                return f"line {number} ({kind}): {mismatch}"
            except OSError as error:
                return f"line {number} ({kind}) [{name}]: connection error: {error}"
        # Every response must have been expected: an unread response is a scenario mistake or an extra line.
        for conn in connections.values():
            if conn.responses or conn.sent_ops and not conn.closed:
                try:
                    extra = conn.next_response(0.2) if not conn.responses else conn.responses[0]
                    return f"end [{conn.name}]: a response the scenario did not expect: {describe(extra)}"
                except Mismatch:
                    pass
        return None
    finally:
        for conn in connections.values():
            for request in conn.accepted:
                created.note(request, run_tag)
            conn.close()


# MARK: Clean-up


class Created:
    """The users, devices and entitlements a run made the server hold, by their ids (tagged ones only)."""

    def __init__(self):
        self.users: set = set()
        self.devices: set = set()
        self.entitlements: set = set()

    def note(self, request: dict, run_tag: str):
        def tagged(value):
            return isinstance(value, str) and run_tag in value

        if tagged(request.get("user")):
            self.users.add(request["user"])
        if tagged(request.get("device")):
            self.devices.add(request["device"])
        if request.get("op") == "define" and tagged(request.get("entitlement")):
            self.entitlements.add(request["entitlement"])

    def as_json(self) -> dict:
        return {"users": sorted(self.users), "devices": sorted(self.devices), "entitlements": sorted(self.entitlements)}

    def summary(self) -> str:
        return f"{len(self.users)} users, {len(self.devices)} devices, {len(self.entitlements)} entitlements"


def clean_up(host: str, port: int, token: str | None, created: Created, timeout: float) -> tuple[bool, str]:
    """Erases the run's subjects and undefines its entitlements. Returns (failed, message)."""
    requests = [{"op": "erase", "user": user, "reason": "conformance run clean-up"} for user in sorted(created.users)]
    requests += [{"op": "erase", "device": device, "reason": "conformance run clean-up"} for device in sorted(created.devices)]
    requests += [{"op": "undefine", "entitlement": name, "reason": "conformance run clean-up"}
                 for name in sorted(created.entitlements)]
    if not requests:
        return False, "cleanup: nothing to remove"
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError as error:
        return True, f"CLEANUP FAILED: cannot connect to {host}:{port} ({error}); left {created.summary()}"
    reader = sock.makefile("rb")

    def exchange(request: dict) -> dict:
        sock.sendall((json.dumps(request, separators=(",", ":")) + "\n").encode("utf-8"))
        while True:
            raw = reader.readline()
            if not raw:
                raise OSError("the server closed the connection")
            line = json.loads(raw)
            if "push" not in line:
                return line

    try:
        if token:
            answer = exchange({"op": "auth", "token": token})
            if answer.get("ok") is not True:
                return True, f"CLEANUP FAILED: the token was refused ({describe(answer.get('error'))}); left {created.summary()}"
        for request in requests:
            answer = exchange(request)
            error = answer.get("error") or {}
            if answer.get("ok") is True or error.get("code") == "not_found":
                continue
            if error.get("code") == "unknown_op":
                # An older server: it cannot remove anything, and says so. Not a conformance failure.
                return False, (f"CLEANUP SKIPPED: the server does not know {request['op']!r} (unknown_op); "
                               f"left {created.summary()} in place")
            return True, f"CLEANUP FAILED: {describe(request)} was answered {describe(answer)}"
    except (OSError, json.JSONDecodeError) as error:
        return True, f"CLEANUP FAILED: {error}; left (some of) {created.summary()}"
    finally:
        reader.close()
        sock.close()
    return False, f"cleanup: erased {len(created.users)} users and {len(created.devices)} devices, " \
                  f"removed {len(created.entitlements)} entitlements"


def main() -> int:
    parser = argparse.ArgumentParser(description="Run entitled's protocol conformance scenarios.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=7117)
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for each expected line")
    parser.add_argument("--require-schema", action="store_true", help="fail if the jsonschema module is missing")
    parser.add_argument("--token", help="authenticate the clean-up connection with this (admin) token; visible to ps: "
                        "prefer --token-file or ENTITLED_TOKEN")
    parser.add_argument("--token-file", type=Path, help="read the clean-up connection's (admin) token from this file's first line")
    parser.add_argument("--keep", action="store_true", help="leave what the run created on the server")
    parser.add_argument("--created-file", type=Path, help="write the users, devices and entitlements the run created (JSON)")
    parser.add_argument("scenarios", nargs="*", type=Path)
    arguments = parser.parse_args()
    if arguments.token and arguments.token_file:
        parser.error("give --token or --token-file, not both")
    token = arguments.token
    if arguments.token_file:
        try:
            lines = arguments.token_file.read_text().splitlines()
        except OSError as error:
            parser.error(f"cannot read the token file {arguments.token_file}: {error.strerror}")
        token = lines[0].strip() if lines else ""
        if not token:
            parser.error(f"the token file {arguments.token_file} is empty")
    token = token or os.environ.get("ENTITLED_TOKEN") or None

    schemas = Schemas(arguments.require_schema)
    scenarios = arguments.scenarios or sorted(SCENARIO_DIR.glob("*.ndjson"))
    if not scenarios:
        print(f"FAIL: no scenarios in {SCENARIO_DIR}")
        return 1
    print(f"schema validation: {'on' if schemas.enabled else 'off (jsonschema is not installed)'}")
    # A tag unique to this run: scenarios write ${S} into their ids, so runs against one server never meet.
    run_tag = secrets.token_hex(3)
    failed = 0
    created = Created()
    for path in scenarios:
        started = time.monotonic()
        problem = run_scenario(path, arguments.host, arguments.port, schemas, run_tag, arguments.timeout, created)
        elapsed = time.monotonic() - started
        if problem is None:
            print(f"PASS {path.name} ({elapsed:.2f}s)")
        else:
            failed += 1
            print(f"FAIL {path.name}: {problem}")
    print(f"{len(scenarios) - failed} passed, {failed} failed")
    if arguments.created_file:
        arguments.created_file.write_text(json.dumps(created.as_json(), indent=1) + "\n")
    if arguments.keep:
        print(f"cleanup: --keep, left {created.summary()} (ids containing {run_tag})")
    else:
        cleanup_failed, message = clean_up(arguments.host, arguments.port, token, created, arguments.timeout)
        print(message)
        failed += 1 if cleanup_failed else 0
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
