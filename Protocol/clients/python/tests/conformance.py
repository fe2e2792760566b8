"""Runs the protocol's conformance scenarios (Protocol/conformance/*.ndjson) through this client's raw
connection API: one entitled.Connection per scenario connection, its futures for answers (sends do not
wait: a scenario's sends are pipelined), its pushed-line queue, its unsolicited answers and its closed
signal. The scenario format and the matcher are the project's (Tools/conformance/run.py, described in
Protocol/conformance/README.md): this module imports them rather than restating them, so only the
transport differs from the reference runner.

    python3 -m tests.conformance --port N [scenario.ndjson ...]     # from Protocol/clients/python
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import importlib.util
import secrets
import sys
import time
from pathlib import Path

from entitled import ClientError, Connection

from .support import REPO_ROOT

SCENARIOS = REPO_ROOT / "Protocol" / "conformance"


def _reference():
    spec = importlib.util.spec_from_file_location("entitled_conformance_reference", REPO_ROOT / "Tools" / "conformance" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


reference = _reference()
Mismatch = reference.Mismatch


class ScenarioConnection:
    """One scenario connection over entitled.Connection: answers in the order of the requests sent."""

    def __init__(self, name: str, address: str, schemas):
        self.name = name
        self.connection = Connection.open(address, timeout=10)
        self.awaiting: collections.deque = collections.deque()  # (future, op) of each line sent
        self.pushes: list[dict] = []
        self.schemas = schemas

    def send(self, request, op) -> None:
        try:
            self.awaiting.append((self.connection.send(request), op))
        except ClientError as error:
            self.awaiting.append((_failed(error), op))  # closed already (after too_large): no answer will come

    def send_raw(self, text: str) -> None:
        try:
            self.awaiting.extend((future, None) for future in self.connection.send_line(text))
        except ClientError as error:
            self.awaiting.extend((_failed(error), None) for _ in range(text.count("\n")))

    def next_response(self, timeout: float) -> dict:
        if not self.awaiting:
            try:
                answer = self.connection.next_unsolicited(timeout)
            except ClientError:
                raise Mismatch(f"[{self.name}] expected a response, but the server closed the connection")
            if answer is None:
                raise Mismatch(f"[{self.name}] expected a response, got none within {timeout}s")
            self.schemas.check_line(answer, None)
            return answer
        future, op = self.awaiting.popleft()
        try:
            answer = future.result(timeout)
        except concurrent.futures.TimeoutError:
            raise Mismatch(f"[{self.name}] expected a response, got none within {timeout}s")
        except ClientError as error:
            raise Mismatch(f"[{self.name}] expected a response, but the connection closed ({error})")
        self.schemas.check_line(answer, op)
        return answer

    def _collect(self, timeout: float) -> bool:
        """Moves pushed lines that came into `pushes`, waiting up to `timeout` for one; False when none came."""
        try:
            push = self.connection.next_push(max(timeout, 0.0))
        except ClientError:
            return False
        if push is None:
            return False
        self.schemas.check_line(push, None)
        self.pushes.append(push)
        return True

    def take_push(self, expected, captures: dict, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for index, push in enumerate(self.pushes):
                try:
                    result = reference.match(expected, push, captures)
                except Mismatch:
                    continue
                del self.pushes[index]
                return result
            if not self._collect(deadline - time.monotonic()):
                break
        if self.pushes:
            try:
                reference.match(expected, self.pushes[0], captures)
            except Mismatch as mismatch:
                raise Mismatch(f"[{self.name}] no pushed line matched within {timeout}s; {len(self.pushes)} "
                               f"unmatched, the first differs: {mismatch}")
        raise Mismatch(f"[{self.name}] expected a pushed line within {timeout}s, got none")

    def expect_no_push(self, wait: float) -> None:
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            self._collect(deadline - time.monotonic())
        if self.pushes:
            raise Mismatch(f"[{self.name}] expected no pushed line, got {reference.describe(self.pushes[0])}")

    def expect_closed(self, timeout: float) -> None:
        if not self.connection.wait_closed(timeout):
            raise Mismatch(f"[{self.name}] expected the server to close the connection within {timeout}s")
        for future, _op in self.awaiting:
            if future.exception() is None:
                raise Mismatch(f"[{self.name}] expected the connection to close, got {reference.describe(future.result())}")
        self.awaiting.clear()
        try:
            extra = self.connection.next_unsolicited(0)
        except ClientError:
            extra = None
        if extra is not None:
            raise Mismatch(f"[{self.name}] expected the connection to close, got {reference.describe(extra)}")

    def unexpected_answer(self) -> dict | None:
        """An answer no expect took (given 0.2 s to come), or None."""
        for future, _op in self.awaiting:
            try:
                return future.result(0.2)
            except (concurrent.futures.TimeoutError, ClientError):
                return None
        return None

    def close(self) -> None:
        self.connection.close()


def _failed(error: BaseException) -> concurrent.futures.Future:
    future: concurrent.futures.Future = concurrent.futures.Future()
    future.set_exception(error)
    return future


def run_scenario(path: Path, address: str, schemas, run_tag: str, timeout: float = 5.0) -> str | None:
    """Runs one scenario; None when it passed, else its first mismatch."""
    tag = f"{path.stem}-{run_tag}"
    connections: dict[str, ScenarioConnection] = {}
    captures: dict = {}

    def connection(name: str) -> ScenarioConnection:
        if name not in connections:
            connections[name] = ScenarioConnection(name, address, schemas)
        return connections[name]

    try:
        for number, kind, step in reference.load_steps(path):
            name = step.get("connection", "main")
            step_timeout = float(step.get("timeout", timeout))
            try:
                if kind == "sleep":
                    time.sleep(float(step["sleep"]))
                elif kind == "send":
                    request = reference.substitute(step["send"], captures, tag)
                    if not step.get("invalid"):
                        schemas.check_request(request)
                    op = request.get("op") if isinstance(request, dict) else None
                    connection(name).send(request, op if isinstance(op, str) else None)
                elif kind == "sendRaw":
                    text = reference.substitute(step["sendRaw"], captures, tag) * int(step.get("repeat", 1))
                    connection(name).send_raw(text + ("\n" if step.get("newline", True) else ""))
                elif kind == "expect":
                    answer = connection(name).next_response(step_timeout)
                    captures = reference.match(reference.tag_only(step["expect"], tag), answer, captures)
                elif kind == "expectPush":
                    captures = connection(name).take_push(reference.tag_only(step["expectPush"], tag), captures, step_timeout)
                elif kind == "expectNoPush":
                    connection(name).expect_no_push(float(step["expectNoPush"]))
                elif kind == "expectClosed":
                    connection(name).expect_closed(step_timeout)
            except Mismatch as mismatch:
                return f"line {number} ({kind}): {mismatch}"
            except ClientError as error:
                return f"line {number} ({kind}) [{name}]: {type(error).__name__}: {error}"
        for conn in connections.values():
            extra = conn.unexpected_answer()
            if extra is not None:
                return f"end [{conn.name}]: a response the scenario did not expect: {reference.describe(extra)}"
        return None
    finally:
        for conn in connections.values():
            conn.close()


def run_all(paths: list[Path], address: str, out=sys.stdout) -> list[str]:
    """Runs the scenarios one after another; prints PASS/FAIL lines and returns the failures."""
    schemas = reference.Schemas(require=False)
    run_tag = secrets.token_hex(3)
    failures = []
    for path in paths:
        started = time.monotonic()
        problem = run_scenario(path, address, schemas, run_tag)
        if problem is None:
            print(f"PASS {path.name} ({time.monotonic() - started:.2f}s)", file=out)
        else:
            failures.append(f"{path.name}: {problem}")
            print(f"FAIL {path.name}: {problem}", file=out)
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description="Run the conformance scenarios through the Python client.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("scenarios", nargs="*", type=Path)
    arguments = parser.parse_args()
    failures = run_all(arguments.scenarios or sorted(SCENARIOS.glob("*.ndjson")), f"{arguments.host}:{arguments.port}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
