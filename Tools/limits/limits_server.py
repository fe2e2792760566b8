"""What both measurement tools of this folder share: an `entitled` of their own on a free port with a temporary
data directory, and a connection that pipelines requests. Python 3.11 standard library only."""

import json
import re
import socket
import subprocess
import tempfile


def start(binary, *options):
    """Starts `binary` without authentication or syncs, with `options`; returns the process and its port."""
    directory = tempfile.mkdtemp(prefix="entitled-limits-")
    process = subprocess.Popen(
        [binary, "--port", "0", "--data-dir", directory, "--insecure-no-auth", "--fsync", "no", "--snapshot-interval", "0", *options],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in process.stdout:
        match = re.search(r"127\.0\.0\.1:(\d+)", line)
        if match and "listening on" in line:
            return process, int(match.group(1))
    raise SystemExit("entitled did not start")


class Connection:
    def __init__(self, port):
        self.socket = socket.create_connection(("127.0.0.1", port))
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = self.socket.makefile("rb")

    def send(self, requests):
        self.socket.sendall(b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in requests))

    def answers(self, count):
        """The next `count` answers, pushed lines passed over."""
        found = []
        while len(found) < count:
            line = json.loads(self.reader.readline())
            if "push" not in line:
                found.append(line)
        return found

    def pipeline(self, requests):
        self.send(requests)
        return self.answers(len(requests))
