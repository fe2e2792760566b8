"""What the tests share: the server binary, real servers, and scripted line servers standing in for one.

The binary is $ENTITLED_BINARY (a relative path is taken from the repository root), by default
.build/debug/entitled (`swift build --product entitled`). A server is started with `--port 0 --data-dir
<tempdir> --snapshot-interval 0` (plus what a test adds), its port read from the ready line on standard
output, and stopped with SIGTERM, expecting exit status 0.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest
from pathlib import Path
from typing import Callable

from entitled import Client

HERE = Path(__file__).resolve().parent
CLIENT_ROOT = HERE.parent  # Protocol/clients/python
REPO_ROOT = CLIENT_ROOT.parents[2]
FIXTURES = REPO_ROOT / "Tests" / "EntitledServerTests" / "Fixtures"
READY_TIMEOUT = 30.0
PUSH_TIMEOUT = 5.0
ADMIN_TOKEN = "python-admin-token-0001"
CHECK_TOKEN = "python-check-token-0001"


def server_binary() -> Path:
    path = Path(os.environ.get("ENTITLED_BINARY") or ".build/debug/entitled")
    if not path.is_absolute():
        path = REPO_ROOT / path
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise RuntimeError(
            f"no entitled binary at {path}: run `swift build --product entitled` in {REPO_ROOT}, or set ENTITLED_BINARY")
    return path


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """One real `entitled` in a temporary directory (its data kept across restart())."""

    def __init__(self, *arguments: str, port: int = 0, socket_path: bool = False):
        self.tmp = tempfile.mkdtemp(prefix="entitled-py-")
        self.arguments = list(arguments)
        self.socket_path = os.path.join(self.tmp, "e.sock") if socket_path else None
        self.requested_port = port
        self.proc: subprocess.Popen | None = None
        self.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        stdout_path = os.path.join(self.tmp, "stdout.txt")
        stderr_path = os.path.join(self.tmp, "stderr.txt")
        extra = ["--socket", self.socket_path] if self.socket_path else []
        with open(stdout_path, "wb") as out, open(stderr_path, "ab") as err:
            self.proc = subprocess.Popen(
                [str(server_binary()), "--port", str(self.requested_port), "--data-dir", os.path.join(self.tmp, "data"),
                 "--snapshot-interval", "0", *extra, *self.arguments],
                stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=self.tmp)
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            with open(stdout_path, encoding="utf-8", errors="replace") as f:
                match = re.search(r"listening on .*?tcp 127\.0\.0\.1:(\d+)", f.read())
            if match:
                self.port = int(match.group(1))
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        self.kill()
        with open(stderr_path, encoding="utf-8", errors="replace") as f:
            raise RuntimeError(f"entitled did not become ready; stderr:\n{f.read()}")

    def stop(self) -> int:
        """SIGTERM, then the exit status (killed after 15 s)."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()
                raise AssertionError("entitled did not exit within 15 s of SIGTERM")
        return self.proc.returncode

    def kill(self) -> None:
        """SIGKILL, as a crash would."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def restart(self) -> None:
        """Kills it and starts it again on the same port, with the same data."""
        self.kill()
        self.requested_port = self.port
        self.start()

    def remove(self) -> None:
        self.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)


class ServerTestCase(unittest.TestCase):
    """Starts a fresh server for each test (with a Unix socket too); self.client() opens a client that is
    closed after the test, and tearDown expects the server to exit 0 on SIGTERM."""

    def server_arguments(self) -> list[str]:
        """More arguments for the server, for test cases that need another configuration."""
        return []

    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="entitled-py-conf-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.server = Server(*self.server_arguments(), socket_path=True)
        self.port = self.server.port
        self.socket_path = self.server.socket_path
        self.clients: list[Client] = []

    def stop_server(self) -> int:
        return self.server.stop()

    def tearDown(self) -> None:
        for c in self.clients:
            c.close()
        try:
            self.assertEqual(self.server.stop(), 0, "entitled's exit status after SIGTERM")
        finally:
            self.server.remove()

    def client(self, **kwargs) -> Client:
        c = Client("127.0.0.1", self.port, **kwargs)
        self.clients.append(c)
        return c


class SharedServerTestCase(unittest.TestCase):
    """One server for the whole class (tests that do not interfere: ids unique per test)."""

    server_arguments: tuple[str, ...] = ()

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = Server(*cls.server_arguments)

    @classmethod
    def tearDownClass(cls) -> None:
        try:
            status = cls.server.stop()
            if status != 0:
                raise AssertionError(f"entitled's exit status after SIGTERM was {status}")
        finally:
            cls.server.remove()

    def client(self, **kwargs) -> Client:
        c = Client("127.0.0.1", self.server.port, **kwargs)
        self.addCleanup(c.close)
        return c


class LineServer:
    """A stand-in server: `script(n, request)` is called for each line of connection n (from 0) and returns
    what to send back: a dict (sent with the request's id), bytes (sent as they are), None (nothing), or
    CLOSE (close the connection without answering). Lines received are kept in `lines`, parsed."""

    CLOSE = object()

    def __init__(self, script: Callable[[int, dict], object]):
        self.script = script
        self.connections = 0
        self.lines: list[dict] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self._open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            number = self.connections
            self.connections += 1
            self._open.append(conn)
            threading.Thread(target=self._serve, args=(conn, number), daemon=True).start()

    def _serve(self, conn: socket.socket, number: int) -> None:
        with conn, conn.makefile("rb") as lines:
            try:
                for raw in lines:
                    request = json.loads(raw)
                    self.lines.append(request)
                    reply = self.script(number, request)
                    if reply is LineServer.CLOSE:
                        return
                    if reply is not None:
                        conn.sendall(reply if isinstance(reply, bytes) else
                                     json.dumps(dict(reply, id=request.get("id"))).encode() + b"\n")
            except OSError:
                return

    def send_to(self, number: int, data: bytes) -> None:
        """Sends `data` on connection `number` (waiting for it to be accepted) unasked."""
        deadline = time.monotonic() + 5
        while len(self._open) <= number:
            if time.monotonic() > deadline:
                raise AssertionError(f"connection {number} was never made")
            time.sleep(0.01)
        self._open[number].sendall(data)

    def close(self) -> None:
        self.listener.close()
        for conn in self._open:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


LOADING = {"ok": False, "error": {"code": "loading", "message": "starting", "loaded": 1, "total": 2}}
