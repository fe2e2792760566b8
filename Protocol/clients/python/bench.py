#!/usr/bin/env python3
"""Checks per second through the Python client, and its CPU per check.

    python3 bench.py --host 127.0.0.1 --port N [--in-flight 50] [--duration 10] [--warmup 2] [--users 1000]

Grants --users users a product first, then keeps exactly --in-flight checks of them in flight through the
client's pool (connections_per_node=1: one pipelined connection, as `entitled-loadgen --connections 1
--pipeline N` does): each answer's callback, run by the connection's reader thread, submits the next check,
and the checks submitted while a batch of answers is handed out leave in one write. Counts the answers of
the --duration seconds after --warmup, and prints one JSON line: {"client", "checks", "seconds",
"checksPerSecond", "cpuUserSeconds", "cpuSystemSeconds", "cpuMicrosecondsPerCheck"} (this process's CPU,
from getrusage).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # run from a checkout, installed or not

from entitled import Client  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--in-flight", type=int, default=50)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--users", type=int, default=1000)
    arguments = parser.parse_args()

    client = Client(arguments.host, arguments.port, timeout=30)
    users = [f"bench-user-{i}" for i in range(arguments.users)]
    for start in range(0, len(users), 500):
        for answer in client.pipeline([{"op": "grant", "user": user, "product": "bench_pro"} for user in users[start:start + 500]]):
            client.raise_for(answer)

    state = {"answers": 0, "errors": 0, "next": 0}
    stopping = threading.Event()
    finished = threading.Event()
    in_flight = [arguments.in_flight]
    lock = threading.Lock()

    def send() -> None:
        index = state["next"]
        state["next"] = index + 1
        client.submit("check", user=users[index % len(users)], product="bench_pro").add_done_callback(answered)

    def answered(future) -> None:
        if future.cancelled() or future.exception() is not None or future.result().get("active") is not True:
            state["errors"] += 1
        state["answers"] += 1
        if not stopping.is_set():
            send()
            return
        with lock:
            in_flight[0] -= 1
            if in_flight[0] == 0:
                finished.set()

    for _ in range(arguments.in_flight):
        send()
    time.sleep(arguments.warmup)
    first, started, cpu = state["answers"], time.monotonic(), resource.getrusage(resource.RUSAGE_SELF)
    time.sleep(arguments.duration)
    last, ended, cpu_end = state["answers"], time.monotonic(), resource.getrusage(resource.RUSAGE_SELF)
    stopping.set()
    finished.wait(30)
    client.close()

    checks = last - first
    seconds = ended - started
    user_cpu = cpu_end.ru_utime - cpu.ru_utime
    system_cpu = cpu_end.ru_stime - cpu.ru_stime
    print(json.dumps({
        "client": "python",
        "checks": checks,
        "seconds": round(seconds, 3),
        "checksPerSecond": round(checks / seconds, 1),
        "cpuUserSeconds": round(user_cpu, 3),
        "cpuSystemSeconds": round(system_cpu, 3),
        "cpuMicrosecondsPerCheck": round((user_cpu + system_cpu) / checks * 1e6, 2) if checks else None,
    }))
    return 1 if state["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
