#!/usr/bin/env python3
"""Benchmarks of entitled-stores' pulls from the stores (STORES.md, "Bringing your subscribers" and "Missed
notifications"), against stripe_pages.py, a Stripe stand-in that generates its subscriptions:

  import     `entitled-stores import --stripe-all` of N subscriptions (pages of 100) into a fresh `entitled`
             with its defaults (a data directory, fsync always): subscriptions a second, the importer's
             memory sampled from /proc as it runs (flat: one page at a time), and CPU per subscription of
             both processes.
  reconcile  `entitled-stores reconcile` over an `entitled` holding M Stripe memberships of which only K are
             within the reconciliation window: the listing walks every membership a page at a time; only
             the K are asked of Stripe. The reconciler's memory sampled the same way.

Release builds: for p in entitled entitled-stores; do swift build -c release --product $p; done. Runs each benchmark
--runs times and prints the median. Python 3.11 standard library only."""
import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TICKS = os.sysconf("SC_CLK_TCK")


def start_entitled(binary, directory, *options):
    process = subprocess.Popen([binary, "--port", "0", "--data-dir", directory, "--insecure-no-auth", *options],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in process.stdout:
        match = re.search(r"127\.0\.0\.1:(\d+)", line)
        if match and "listening on" in line:
            return process, int(match.group(1))
    raise SystemExit("entitled did not start")


def start_stand_in(count):
    process = subprocess.Popen([sys.executable, os.path.join(HERE, "stripe_pages.py"), str(count)], stdout=subprocess.PIPE, text=True)
    match = re.search(r"listening on (\d+)", process.stdout.readline())
    if not match:
        raise SystemExit("the Stripe stand-in did not start")
    return process, int(match.group(1))


def cpu_seconds(pid):
    """User and system CPU of process `pid` so far (/proc/PID/stat fields 14 and 15)."""
    with open("/proc/%d/stat" % pid) as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Sampler(threading.Thread):
    """The resident memory of a process every 0.1 s while it runs."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.samples = []

    def run(self):
        while True:
            try:
                self.samples.append(rss_kib(self.pid))
            except (FileNotFoundError, ProcessLookupError):
                return
            time.sleep(0.1)


def run_stores(binary, arguments):
    """Runs entitled-stores to its end; returns (seconds, its CPU seconds, RSS samples in KiB, its output)."""
    started = time.monotonic()
    process = subprocess.Popen([binary, *arguments], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    sampler = Sampler(process.pid)
    sampler.start()
    # Read while it runs: a line per corrected membership fills the pipe long before the end.
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(process.stdout), daemon=True)
    reader.start()
    cpu = 0.0
    while process.poll() is None:
        try:
            cpu = cpu_seconds(process.pid)
        except (FileNotFoundError, ProcessLookupError):
            break
        time.sleep(0.05)
    reader.join()
    output = "".join(lines)
    elapsed = time.monotonic() - started
    sampler.join()
    if process.returncode != 0:
        raise SystemExit("entitled-stores failed (%d): %s" % (process.returncode, output))
    return elapsed, cpu, sampler.samples, output


def memory_line(samples):
    """Peak, and the memory at a quarter, half and three quarters of the run: flat or growing."""
    if not samples:
        return "no samples"
    pick = lambda f: samples[min(len(samples) - 1, int(len(samples) * f))] // 1024
    return "peak %d MiB; at 25%% %d, 50%% %d, 75%% %d MiB" % (max(samples) // 1024, pick(0.25), pick(0.5), pick(0.75))


def bench_import(args):
    rates, results = [], []
    for run in range(args.runs):
        directory = tempfile.mkdtemp(prefix="stores-bench-")
        entitled, port = start_entitled(args.entitled, directory + "/data")
        stand_in, stripe_port = start_stand_in(args.subscriptions)
        key_file = directory + "/stripe.key"
        with open(key_file, "w") as f:
            f.write("sk_test_bench\n")
        try:
            server_cpu_before = cpu_seconds(entitled.pid)
            elapsed, cpu, samples, output = run_stores(args.stores, [
                "import", "--stripe-all", "--entitled", "127.0.0.1:%d" % port, "--stripe-api-key-file", key_file,
                "--stripe-api-url", "http://127.0.0.1:%d" % stripe_port, "--state-dir", directory + "/state", "--concurrency", str(args.concurrency),
            ])
            server_cpu = cpu_seconds(entitled.pid) - server_cpu_before
        finally:
            entitled.kill()
            stand_in.kill()
        summary = output.strip().splitlines()[0]
        rate = args.subscriptions / elapsed
        rates.append(rate)
        results.append(rate)
        print("run %d: %d subscriptions in %.1f s = %.0f/s; importer CPU %.0f µs and entitled CPU %.0f µs a subscription; importer memory %s; %s" % (
            run + 1, args.subscriptions, elapsed, rate, cpu / args.subscriptions * 1e6, server_cpu / args.subscriptions * 1e6, memory_line(samples), summary))
    print("import: median %.0f subscriptions/s over %d runs" % (statistics.median(rates), args.runs))


def load_memberships(port, total, active):
    """`total` Stripe memberships as the receiver grants them: the first `active` match the stand-in's
    subscriptions sub_00000000...; the others ended two years ago, outside the reconciliation window."""
    connection = socket.create_connection(("127.0.0.1", port))
    reader = connection.makefile("rb")
    now = time.time()
    batch = []

    def flush():
        connection.sendall(b"".join(batch))
        for _ in batch:
            answer = json.loads(reader.readline())
            if not answer.get("ok"):
                raise SystemExit("a grant failed: %s" % answer)
        batch.clear()

    for i in range(total):
        if i < active:
            end = int(now) + ((i % 30) + 1) * 86_400
            grant = {"op": "grant", "user": "user_%d" % i, "product": "prod_pro", "source": "stripe", "expiresAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(end)),
                     "willRenew": True, "transactionId": "in_%08d_%d" % (i, end), "originalTransactionId": "sub_%08d" % i}
        else:
            grant = {"op": "grant", "user": "old_%d" % i, "product": "prod_pro", "source": "stripe", "expiresAt": "2024-01-01T00:00:00Z",
                     "transactionId": "in_old_%d" % i, "originalTransactionId": "sub_old_%d" % i}
        batch.append(json.dumps(grant, separators=(",", ":")).encode() + b"\n")
        if len(batch) == 2000:
            flush()
    if batch:
        flush()
    connection.close()


def bench_reconcile(args):
    durations = []
    for run in range(args.runs):
        directory = tempfile.mkdtemp(prefix="stores-bench-")
        entitled, port = start_entitled(args.entitled, directory + "/data", "--fsync", "no", "--snapshot-interval", "0")
        stand_in, stripe_port = start_stand_in(args.active)
        key_file = directory + "/stripe.key"
        with open(key_file, "w") as f:
            f.write("sk_test_bench\n")
        try:
            loaded = time.monotonic()
            load_memberships(port, args.memberships, args.active)
            loading = time.monotonic() - loaded
            elapsed, cpu, samples, output = run_stores(args.stores, [
                "reconcile", "--entitled", "127.0.0.1:%d" % port, "--stripe-api-key-file", key_file,
                "--stripe-api-url", "http://127.0.0.1:%d" % stripe_port, "--state-dir", directory + "/state", "--log-level", "error",
            ])
        finally:
            entitled.kill()
            stand_in.kill()
        durations.append(elapsed)
        print("run %d: %d memberships (loaded in %.0f s), %d within the window: reconciled in %.1f s, reconciler CPU %.1f s; its memory %s; %s" % (
            run + 1, args.memberships, loading, args.active, elapsed, cpu, memory_line(samples), " / ".join(output.strip().splitlines()[-1:])))
    print("reconcile: median %.1f s over %d runs" % (statistics.median(durations), args.runs))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("benchmark", choices=["import", "reconcile"])
    parser.add_argument("--entitled", default=os.path.join(ROOT, ".build/release/entitled"))
    parser.add_argument("--stores", default=os.path.join(ROOT, ".build/release/entitled-stores"))
    parser.add_argument("--subscriptions", type=int, default=100_000, help="import: subscriptions in Stripe")
    parser.add_argument("--concurrency", type=int, default=16, help="import: the importer's --concurrency")
    parser.add_argument("--memberships", type=int, default=1_000_000, help="reconcile: memberships in entitled")
    parser.add_argument("--active", type=int, default=10_000, help="reconcile: those within the window, asked of Stripe")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    bench_import(args) if args.benchmark == "import" else bench_reconcile(args)


if __name__ == "__main__":
    main()
