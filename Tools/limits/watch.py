#!/usr/bin/env python3
"""What watching costs the others: the time and memory of a `watch all`, the grant round trip with and
without a watcher of every subject, pipelined grants with one, and a `ping` while thousands of
memberships end at one moment. Produces the numbers in Protocol/OPERATIONS.md, "Limits" (watching).

    swift build -c release --product entitled
    python3 Tools/limits/watch.py [--entitled .build/release/entitled] [--memberships 120000]

It starts its own `entitled` (one event loop unless `--event-loops`, without authentication: an admin's watch) on a free port
with a temporary data directory, grants `--memberships` memberships of 30 to 60 days to 10,000 users,
and measures. Python 3.11 standard library only.
"""

import argparse
import socket
import statistics
import threading
import time

from limits_server import Connection, start


class Watcher(threading.Thread):
    """A connection watching every subject that reads and counts its pushed lines as they come."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.connection = Connection(port)
        started = time.perf_counter()
        self.answer = self.connection.pipeline([{"op": "watch", "all": True}])[0]
        self.seconds = time.perf_counter() - started
        self.pushes = 0
        self.expired = 0
        self.start()

    def run(self):
        for line in self.connection.reader:
            if b'"push"' in line:
                self.pushes += 1
                if b'"cause":"expired"' in line:
                    self.expired += 1


def resident_mib(pid):
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0


def grant_round_trips(connection, count, prefix):
    times = []
    for index in range(count):
        started = time.perf_counter()
        connection.pipeline([{"op": "grant", "user": "%s%d" % (prefix, index), "product": "p", "duration": "30d"}])
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99)]


def ping_ms(port):
    connection = Connection(port)
    started = time.perf_counter()
    connection.pipeline([{"op": "ping"}])
    return (time.perf_counter() - started) * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entitled", default=".build/release/entitled")
    parser.add_argument("--memberships", type=int, default=120_000)
    parser.add_argument("--grants", type=int, default=2_000, help="round trips timed with and without a watcher")
    parser.add_argument("--event-loops", type=int, default=1)
    parser.add_argument("--wide", type=int, default=200_000, help="memberships of one more user, whose watch is timed")
    arguments = parser.parse_args()

    process, port = start(arguments.entitled, "--event-loops", str(arguments.event_loops))
    try:
        admin = Connection(port)
        for start_index in range(0, arguments.memberships, 2000):
            admin.pipeline([{"op": "grant", "user": "u%d" % (i % 10_000), "product": "p%d" % (i % 20),
                             "duration": "%dd" % (30 + i % 31)}
                            for i in range(start_index, min(start_index + 2000, arguments.memberships))])
        for start_index in range(0, arguments.wide, 2000):
            admin.pipeline([{"op": "grant", "user": "wide", "product": "w%d" % (i % 50), "duration": "30d"}
                            for i in range(start_index, min(start_index + 2000, arguments.wide))])
        print("entitled: %s, %d memberships, %d event loop(s)" % (
            arguments.entitled, arguments.memberships, arguments.event_loops))
        base = resident_mib(process.pid)
        p50, p99 = grant_round_trips(admin, arguments.grants, "a")
        print("grant round trip, no watcher:        p50 %.3f ms  p99 %.3f ms" % (p50, p99))

        if arguments.wide:
            wide = Connection(port)
            started = time.perf_counter()
            wide.pipeline([{"op": "watch", "user": "wide"}])
            print("watch of a user with %d memberships answered in %.1f ms" % (
                arguments.wide, (time.perf_counter() - started) * 1000))
            wide.socket.close()
        watcher = Watcher(port)
        print("watch all answered in %.1f ms (%s), resident +%.1f MiB" % (
            watcher.seconds * 1000, watcher.answer.get("watches"), resident_mib(process.pid) - base))
        p50, p99 = grant_round_trips(admin, arguments.grants, "b")
        print("grant round trip, one watch all:     p50 %.3f ms  p99 %.3f ms" % (p50, p99))

        started = time.perf_counter()
        admin.pipeline([{"op": "grant", "user": "c%d" % i, "product": "p", "duration": "30d"} for i in range(4000)])
        pipelined = time.perf_counter() - started
        print("4,000 pipelined grants, watched:     %.3f s; then a ping %.3f ms" % (pipelined, ping_ms(port)))

        # 3,000 memberships ending at one moment, once they are all granted; pings meanwhile.
        end = time.time() + 5 + 2 * pipelined
        moment = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(end)) + ".%03dZ" % int((end % 1) * 1000)
        admin.pipeline([{"op": "grant", "user": "e%d" % i, "product": "p", "expiresAt": moment} for i in range(3000)])
        if time.time() >= end:
            print("3,000 ends at one moment: not measured, their grants took past the moment")
            end = None
        delays = []
        while end is not None and time.time() < end + 2:
            delays.append(ping_ms(port))
            time.sleep(0.005)
        deadline = time.time() + 30
        while end is not None and watcher.expired < 3000 and time.time() < deadline:
            time.sleep(0.05)
        if end is not None:
            print("3,000 ends at one moment: %d expired pushes; ping p50 %.3f ms, max %.3f ms" % (
                watcher.expired, statistics.median(delays), max(delays)))
        more = [Watcher(port) for _ in range(7)]
        print("8 watchers of everything: resident +%.1f MiB" % (resident_mib(process.pid) - base))
        for extra in more:
            extra.connection.socket.close()

        print("resident at the end: %.1f MiB" % resident_mib(process.pid))
    finally:
        process.terminate()
        process.wait()


if __name__ == "__main__":
    main()
