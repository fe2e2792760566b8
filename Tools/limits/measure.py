#!/usr/bin/env python3
"""What one client can cost the others: the delay a `ping` sees while other clients pipeline the
costliest requests the server accepts, and the memory a connection can hold. Produces the numbers in
Protocol/OPERATIONS.md, "Limits".

    swift build -c release --product entitled
    python3 Tools/limits/measure.py [--entitled .build/release/entitled] [--pings 300]

It starts its own `entitled` (one event loop, as on a 2-core machine by default) on a free port with a
temporary data directory, gives one user 10,000 memberships (the most `customer` goes through) and
another 1,000 memberships renewed 99 times each (100,000 recorded changes, the most `history` goes
through), then for each load measures `ping` round trips on a connection of its own. Python 3.11
standard library only.
"""

import argparse
import json
import multiprocessing
import os
import socket
import statistics
import sys
import time

from limits_server import Connection, start

SAMPLE_INTERVAL = 0.005


def load(port):
    connection = Connection(port)
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for start_index in range(0, 10_000, 1000):
        connection.pipeline([{"op": "grant", "user": "wide", "product": "p%d" % (i % 50), "duration": "30d"}
                             for i in range(start_index, start_index + 1000)])
    ids = [a["membership"]["id"] for a in connection.pipeline(
        [{"op": "grant", "user": "deep", "product": "p%d" % (i % 50), "duration": "30d"} for i in range(1000)])]
    for round_index in range(99):
        answers = connection.pipeline([{
            "op": "event", "membership": membership, "type": "renewal", "eventId": "r%d-%d" % (round_index, index),
            "eventTime": now, "expiresAt": "2030-%02d-%02dT00:00:00Z" % (round_index // 28 + 1, round_index % 28 + 1),
        } for index, membership in enumerate(ids)])
        assert all(a["ok"] for a in answers), answers[0]
    connection.pipeline([{"op": "define", "entitlement": "pro", "products": ["p1", "p2"]}])
    # A change after a moment makes a check `at` that moment read the past.
    time.sleep(0.05)
    moment = time.time()
    time.sleep(0.05)
    connection.pipeline([{"op": "grant", "user": "someone", "product": "p1"}])
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moment)) + ".%03dZ" % int(moment % 1 * 1000)


def hammer(port, request, depth, stop, answered):
    """Keeps `depth` copies of `request` in flight on a connection of its own until `stop` is set. Runs
    in a process of its own, so that it never holds up the process that times the pings."""
    connection = socket.create_connection(("127.0.0.1", port))
    line = json.dumps(request, separators=(",", ":")).encode() + b"\n"
    connection.sendall(line * depth)
    buffer = bytearray(1 << 20)
    while not stop.is_set():
        received = connection.recv_into(buffer)
        if not received:
            return
        # An answer is one line: every newline ends one, whatever chunk it falls in.
        count = buffer.count(b"\n", 0, received)
        if count:
            with answered.get_lock():
                answered.value += count
            connection.sendall(line * count)
    connection.close()


def ping_delays(port, count):
    connection = Connection(port)
    delays = []
    for _ in range(count):
        started = time.perf_counter()
        connection.pipeline([{"op": "ping"}])
        delays.append((time.perf_counter() - started) * 1000)
        time.sleep(SAMPLE_INTERVAL)
    return delays


def measure(port, name, request, clients, pings):
    stop = multiprocessing.Event()
    answered = multiprocessing.Value("q", 0)
    workers = [multiprocessing.Process(target=hammer, args=(port, request, 64, stop, answered), daemon=True) for _ in range(clients)]
    for worker in workers:
        worker.start()
    time.sleep(0.5)
    started, before = time.perf_counter(), answered.value
    delays = sorted(ping_delays(port, pings))
    rate = (answered.value - before) / (time.perf_counter() - started)
    stop.set()
    for worker in workers:
        worker.join(timeout=5)
        if worker.is_alive():
            worker.terminate()
    p99 = delays[min(len(delays) - 1, int(len(delays) * 0.99))]
    print("%-52s ping p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms  (%.0f costly answers/s)"
          % (name, statistics.median(delays), p99, delays[-1], rate))


def resident_kib(pid):
    with open("/proc/%d/status" % pid) as status:
        return int(next(line for line in status if line.startswith("VmRSS:")).split()[1])


def memory(process, port):
    before = resident_kib(process.pid)
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(1000)]
    Connection(port).pipeline([{"op": "ping"}])
    time.sleep(0.5)
    per_idle = (resident_kib(process.pid) - before) / 1000
    before = resident_kib(process.pid)
    # Clients that pipeline the largest answers (1,000 memberships, about 400 KB) and never read.
    hoarders = []
    for _ in range(20):
        hoarder = socket.socket()
        hoarder.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        hoarder.connect(("127.0.0.1", port))
        hoarder.sendall(b'{"op":"memberships","user":"wide","limit":1000}\n' * 256)
        hoarders.append(hoarder)
    time.sleep(1.5)
    Connection(port).pipeline([{"op": "ping"}])
    per_hoarder = (resident_kib(process.pid) - before) / 20
    print("memory: %.1f KiB per idle connection; %.0f KiB per connection that pipelines 256 answers of 1,000 memberships and reads none"
          % (per_idle, per_hoarder))
    for held in idle + hoarders:
        held.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entitled", default=".build/release/entitled")
    parser.add_argument("--pings", type=int, default=300)
    arguments = parser.parse_args()
    process, port = start(arguments.entitled)
    try:
        earlier = load(port)
        print("entitled %s, %d cores; user \"wide\": 10,000 memberships, user \"deep\": 1,000 memberships with 100,000 changes"
              % (arguments.entitled, os.cpu_count()))
        measure(port, "no other load", {"op": "ping"}, 0, arguments.pings)
        costly = [
            ("customer of 10,000 memberships", {"op": "customer", "user": "wide"}),
            ("check at an earlier moment, 10,000 memberships", {"op": "check", "user": "wide", "entitlement": "pro", "at": earlier}),
            ("history (page of 1,000) of 100,000 changes", {"op": "history", "user": "deep", "limit": 1000}),
            ("memberships (page of 1,000)", {"op": "memberships", "user": "wide", "limit": 1000}),
        ]
        for name, request in costly:
            measure(port, "1 client pipelining " + name, request, 1, arguments.pings)
        measure(port, "8 clients pipelining customer of 10,000", costly[0][1], 8, arguments.pings)
        memory(process, port)
    finally:
        process.terminate()
        process.wait()


if __name__ == "__main__":
    sys.exit(main())
