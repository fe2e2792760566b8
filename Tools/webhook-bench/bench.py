#!/usr/bin/env python3
"""The webhook deliverer of `entitled-stores serve --webhooks FILE`: its lag at a steady write rate, and how
fast it drains a backlog, to a fast local receiver (Tools/webhook-bench/README.md).

  for p in entitled entitled-stores; do swift build -c release --scratch-path .build-release --product $p; done
  python3 Tools/webhook-bench/bench.py --entitled .build-release/release/entitled \\
      --stores .build-release/release/entitled-stores [--runs 3] [--only lag,drain,receivers] [--json FILE]

Each run of a kind starts everything afresh in a temporary directory: a release `entitled` (a new data
directory, --insecure-no-auth, the default --fsync always), the Go receiver of main.go (built here with the
local Go toolchain, standard library only; it verifies every signature), and `entitled-stores serve
--webhooks FILE --state-dir DIR`, one endpoint, "start": "oldest".

- lag: the deliverer runs and has delivered a first probe grant; then `webhook-bench write` grants at
  --rate a second on one pipelined connection for --warmup + --duration seconds, keeping each grant's
  `seq` and the times it was sent and answered. The lag of a change is its arrival at the receiver minus
  the writer's receipt of the grant's answer (the change is committed and durable then: --fsync always);
  the warm-up's changes are left out of the percentiles.
- drain: --backlog grants are written (pipelined, --users users round-robin) before the receiver and
  `entitled-stores` start; then the time from the start of `entitled-stores` until the receiver holds every
  one of them, and the rate from the first arrival to the last.
- receivers: each receiver alone, under `webhook-bench blast` (8 connections, a message in flight on each,
  5 s): the Go receiver of the benchmark and the tests' Python receiver (Fixtures/webhook_receiver.py).

CPU (user + system, /proc/PID/stat) is read for entitled-stores, entitled and the receiver over each
measured phase and given per webhook; entitled-stores' also per thread (NIO event loops, the Swift
concurrency pool). Every timed run holds /tmp/client-bench.lock (flock), so that two benchmarks never run
at once, and starts once the machine's other work has settled (--quiet-wait); a run during which other
work used more than --disturbed cores on average is run again (--retries) and kept apart in the JSON
("disturbedRuns"). --perf-dir records entitled-stores with `perf record -g` (for profiles; its overhead
disturbs the numbers). Python 3.11 standard library; Go 1.19 for main.go.
"""
import argparse
import base64
import contextlib
import fcntl
import hashlib
import json
import os
import platform
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TICKS = os.sysconf("SC_CLK_TCK")
LOCK = "/tmp/client-bench.lock"
ADMIN_TOKEN = "webhook-bench-admin-token-0123456789"
PYTHON_RECEIVER = os.path.join(ROOT, "Tests", "EntitledStoresTests", "Fixtures", "webhook_receiver.py")


def log(message):
    print(message, file=sys.stderr, flush=True)


def cpu_seconds(pid):
    """User + system time of a process, from /proc/PID/stat (fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def thread_cpu_seconds(pid):
    """User + system time of each thread of a process, summed by thread name (/proc/PID/task/*/stat)."""
    totals = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/stat") as f:
                text = f.read()
        except FileNotFoundError:
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text.rsplit(")", 1)[1].split()
        totals[name] = totals.get(name, 0) + (int(fields[11]) + int(fields[12])) / TICKS
    return totals


def thread_delta(after, before):
    return {name: round(value - before.get(name, 0), 2) for name, value in sorted(after.items(), key=lambda kv: -kv[1])
            if value - before.get(name, 0) > 0}


@contextlib.contextmanager
def benchmark_lock():
    with open(LOCK, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def busy_cpu_seconds():
    """CPU time the whole machine spent busy so far, every core: the cores' time since boot less their idle
    and iowait time (/proc/stat's first line, whose idle time is kept exactly, where its busy fields are
    sampled at each tick and miss much of a load that wakes thousands of times a second)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return time.clock_gettime(time.CLOCK_BOOTTIME) * os.cpu_count() - (fields[3] + fields[4]) / TICKS


class MachineMeter:
    """The machine's busy CPU over a window, and the part of it no measured process and no part of the
    benchmark itself (this script, the writer) spent: other work on the machine, which disturbs a run."""

    def __init__(self):
        self.busy = busy_cpu_seconds()
        self.own = self.own_cpu()

    @staticmethod
    def own_cpu():
        self_usage = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the writer (waited for), not the servers
        return self_usage.ru_utime + self_usage.ru_stime + children.ru_utime + children.ru_stime

    def read(self, measured_cpu):
        busy = busy_cpu_seconds() - self.busy
        bench = self.own_cpu() - self.own
        return {"busyCPU": round(busy, 2), "benchCPU": round(bench, 2),
                "otherCPU": round(busy - bench - sum(measured_cpu.values()), 2)}


def wait_for_quiet(limit, threshold=0.25):
    """Waits (at most `limit` seconds) until the machine's other work uses under `threshold` cores over 3 s;
    returns the cores busy in the last window."""
    deadline = time.monotonic() + limit
    while True:
        before = busy_cpu_seconds()
        time.sleep(3)
        busy = (busy_cpu_seconds() - before) / 3
        if busy < threshold or time.monotonic() >= deadline:
            return busy
        log(f"  waiting for a quiet machine ({busy:.2f} cores busy)")


def percentile(sorted_values, p):
    """Nearest rank."""
    if not sorted_values:
        return None
    rank = max(1, min(len(sorted_values), int(-(-p * len(sorted_values) // 100))))
    return sorted_values[rank - 1]


def summary_ms(values_ns):
    values = sorted(v / 1e6 for v in values_ns)
    return {"count": len(values), "p50": percentile(values, 50), "p90": percentile(values, 90),
            "p99": percentile(values, 99), "p99.9": percentile(values, 99.9), "max": values[-1] if values else None,
            "mean": statistics.fmean(values) if values else None, "min": values[0] if values else None}


def http_json(url, method="GET", body=None, headers=None, timeout=10):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        text = response.read()
    try:
        return json.loads(text)
    except ValueError:
        return text.decode()


class Processes:
    """The processes a run starts, each stopped (SIGTERM, then SIGKILL) by its own pid at the end."""

    def __init__(self, directory):
        self.directory = directory
        self.started = []

    def start(self, name, command, ready, env=None):
        """Starts `command`, its stderr in DIR/NAME.log, and waits for a stdout line matching `ready`
        (a regex whose group 1 is the port)."""
        stderr = open(os.path.join(self.directory, f"{name}.log"), "w")
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True,
                                   env={**os.environ, **(env or {})})
        self.started.append(process)
        for line in process.stdout:
            match = re.search(ready, line)
            if match:
                # Keep draining its standard output, or a full pipe would one day stop it.
                threading.Thread(target=process.stdout.read, daemon=True).start()
                return process, int(match.group(1))
        raise SystemExit(f"{name} did not start: see {stderr.name}")

    def stop(self, process):
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def stop_all(self):
        for process in reversed(self.started):
            self.stop(process)


def start_entitled(processes, binary, directory):
    return processes.start("entitled", [binary, "--port", "0", "--data-dir", os.path.join(directory, "data"),
                                        "--insecure-no-auth", "--log-level", "warning"],
                           r"listening on .*?tcp 127\.0\.0\.1:(\d+)")


def start_receiver(processes, tool, secret, arguments):
    env = {"GOMAXPROCS": str(arguments.receiver_procs)} if arguments.receiver_procs else {}
    return processes.start("receiver", [tool, "receive", "--secret", secret], r"listening on (\d+)", env)


def start_stores(processes, binary, directory, entitled_port, receiver_port, secret, arguments):
    token = os.path.join(directory, "admin.token")
    with open(token, "w") as f:
        f.write(ADMIN_TOKEN + "\n")
    endpoint = {"name": "bench", "url": f"http://127.0.0.1:{receiver_port}/in", "secrets": [secret], "start": "oldest"}
    if arguments.concurrency:
        endpoint["concurrency"] = arguments.concurrency
    webhooks = os.path.join(directory, "webhooks.json")
    with open(webhooks, "w") as f:
        json.dump({"admin-token-file": token, "endpoints": [endpoint]}, f)
    return processes.start("entitled-stores", [
        binary, "serve", "--listen", "127.0.0.1:0", "--entitled", f"127.0.0.1:{entitled_port}",
        "--state-dir", os.path.join(directory, "stores-state"), "--webhooks", webhooks, "--log-level", "warning",
        "--reconcile-interval-hours", "0"], r"listening on http://127\.0\.0\.1:(\d+)")


def endpoint_status(stores_port):
    reply = http_json(f"http://127.0.0.1:{stores_port}/webhooks",
                      headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    status = reply["endpoints"][0]
    return {k: status[k] for k in ("cursor", "newest", "lag", "queued", "inFlight", "delivered", "retried")}


class Sampler:
    """Every second: the endpoint's status (queued, in flight, lag) and each process's CPU."""

    def __init__(self, stores_port, pids):
        self.stores_port, self.pids, self.samples = stores_port, pids, []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        start = time.monotonic()
        while not self.stopping.wait(1.0):
            try:
                sample = {"t": round(time.monotonic() - start, 2), **endpoint_status(self.stores_port)}
                sample.update({f"{name}CPU": cpu_seconds(pid) for name, pid in self.pids.items()})
                self.samples.append(sample)
            except Exception as error:  # a sample missed is no reason to stop the run
                self.samples.append({"t": round(time.monotonic() - start, 2), "error": str(error)})

    def stop(self):
        self.stopping.set()
        self.thread.join()
        return self.samples


def start_perf(arguments, pid, name):
    """`perf record -g` of `pid` into --perf-dir/NAME.data, when --perf-dir is given."""
    if not arguments.perf_dir:
        return None
    os.makedirs(arguments.perf_dir, exist_ok=True)
    path = os.path.join(arguments.perf_dir, f"{name}.data")
    process = subprocess.Popen(["perf", "record", "-F", "999", "-g", "-p", str(pid), "-o", path],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.2)
    return process


def stop_perf(process):
    if process is not None:
        process.send_signal(signal.SIGINT)
        process.wait()


def wait_for(receiver_port, count, timeout, poll=0.05):
    """Waits until the receiver holds `count` distinct messages; its stats then, or None at the timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stats = http_json(f"http://127.0.0.1:{receiver_port}/stats")
        if stats["distinct"] >= count:
            return stats
        time.sleep(poll)
    return None


def read_csv(path):
    with open(path) as f:
        next(f)
        return [tuple(int(x) for x in line.split(",")) for line in f if line.strip()]


def new_secret():
    return "whsec_" + base64.b64encode(os.urandom(32)).decode()


def lag_run(arguments, tool, directory):
    processes = Processes(directory)
    secret = new_secret()
    try:
        entitled, entitled_port = start_entitled(processes, arguments.entitled, directory)
        receiver, receiver_port = start_receiver(processes, tool, secret, arguments)
        stores, stores_port = start_stores(processes, arguments.stores, directory, entitled_port, receiver_port, secret,
                                           arguments)
        # A probe grant: the deliverer has found its start, read the feed and sent a message.
        probe = subprocess.run([tool, "write", "--port", str(entitled_port), "--count", "1", "--users", "1"],
                               stdout=subprocess.PIPE, text=True, check=True)
        if wait_for(receiver_port, 1, 30) is None:
            raise SystemExit(f"the probe grant was not delivered: {probe.stdout}")
        time.sleep(1)
        pids = {"stores": stores.pid, "entitled": entitled.pid, "receiver": receiver.pid}
        perf = start_perf(arguments, stores.pid, "lag-" + time.strftime("%H%M%S"))
        cpu_before = {name: cpu_seconds(pid) for name, pid in pids.items()}
        threads_before = thread_cpu_seconds(stores.pid)
        meter = MachineMeter()
        sampler = Sampler(stores_port, pids)
        writes = os.path.join(directory, "writes.csv")
        started = time.monotonic()
        writer = subprocess.run([tool, "write", "--port", str(entitled_port), "--rate", str(arguments.rate),
                                 "--warmup", str(arguments.warmup), "--duration", str(arguments.duration),
                                 "--users", str(arguments.users), "--out", writes],
                                stdout=subprocess.PIPE, text=True, check=True)
        written = json.loads(writer.stdout)
        total = int(arguments.rate * (arguments.warmup + arguments.duration))
        stats = wait_for(receiver_port, 1 + total, 60)
        elapsed = time.monotonic() - started
        cpu = {name: cpu_seconds(pid) - cpu_before[name] for name, pid in pids.items()}
        threads = thread_delta(thread_cpu_seconds(stores.pid), threads_before)
        machine_cpu = meter.read(cpu)
        samples = sampler.stop()
        stop_perf(perf)
        if stats is None:
            stats = http_json(f"http://127.0.0.1:{receiver_port}/stats")
            raise SystemExit(f"not every change was delivered within 60 s: {stats}")
        arrivals_file = os.path.join(directory, "arrivals.csv")
        http_json(f"http://127.0.0.1:{receiver_port}/dump?path={arrivals_file}", method="POST", body={})
        status = endpoint_status(stores_port)
    finally:
        processes.stop_all()
    first_arrival = {}
    payload_ms = {}
    for sequence, arrival, stamp, _ in read_csv(arrivals_file):
        if sequence not in first_arrival:
            first_arrival[sequence], payload_ms[sequence] = arrival, stamp
    lags, lags_from_send, lags_from_stamp, per_second = [], [], [], {}
    window_start = None
    for sequence, sent, answered, measured in read_csv(writes):
        if not measured:
            continue
        window_start = sent if window_start is None else window_start
        arrival = first_arrival[sequence]
        lags.append(arrival - answered)
        lags_from_send.append(arrival - sent)
        lags_from_stamp.append(arrival - payload_ms[sequence] * 1_000_000)
        second = int((sent - window_start) / 1e9)
        per_second[second] = max(per_second.get(second, 0), (arrival - answered) / 1e6)
    commit = [answered - sent for _, sent, answered, measured in read_csv(writes) if measured]
    return {
        "writer": written, "delivered": total, "elapsedSeconds": elapsed,
        "lagFromAnswerMs": summary_ms(lags), "lagFromSendMs": summary_ms(lags_from_send),
        "lagFromPayloadTimestampMs": summary_ms(lags_from_stamp), "grantAnswerMs": summary_ms(commit),
        "maxLagPerSecondMs": [round(per_second[s], 2) for s in sorted(per_second)],
        "cpuSeconds": cpu, "cpuPerWebhookUs": {name: value / total * 1e6 for name, value in cpu.items()},
        "machineCPU": machine_cpu, "storesThreadsCPUSeconds": threads,
        "receiver": stats, "endpointStatus": status, "samples": samples,
    }


def drain_run(arguments, tool, directory):
    processes = Processes(directory)
    secret = new_secret()
    try:
        entitled, entitled_port = start_entitled(processes, arguments.entitled, directory)
        writer = subprocess.run([tool, "write", "--port", str(entitled_port), "--count", str(arguments.backlog),
                                 "--users", str(arguments.users)], stdout=subprocess.PIPE, text=True, check=True)
        written = json.loads(writer.stdout)
        if written["errors"]:
            raise SystemExit(f"the backlog was not written: {written}")
        receiver, receiver_port = start_receiver(processes, tool, secret, arguments)
        time.sleep(1)
        cpu_entitled, cpu_receiver = cpu_seconds(entitled.pid), cpu_seconds(receiver.pid)
        meter = MachineMeter()
        started_ns = time.time_ns()
        started = time.monotonic()
        stores, stores_port = start_stores(processes, arguments.stores, directory, entitled_port, receiver_port, secret,
                                           arguments)
        pids = {"stores": stores.pid, "entitled": entitled.pid, "receiver": receiver.pid}
        perf = start_perf(arguments, stores.pid, "drain-" + time.strftime("%H%M%S"))
        sampler = Sampler(stores_port, pids)
        stats = wait_for(receiver_port, arguments.backlog, 600, poll=0.05)
        elapsed = time.monotonic() - started
        cpu = {"stores": cpu_seconds(stores.pid), "entitled": cpu_seconds(entitled.pid) - cpu_entitled,
               "receiver": cpu_seconds(receiver.pid) - cpu_receiver}
        threads = thread_delta(thread_cpu_seconds(stores.pid), {})
        machine_cpu = meter.read(cpu)
        samples = sampler.stop()
        stop_perf(perf)
        if stats is None:
            stats = http_json(f"http://127.0.0.1:{receiver_port}/stats")
            raise SystemExit(f"the backlog was not delivered within 600 s: {stats}")
        arrivals_file = os.path.join(directory, "arrivals.csv")
        http_json(f"http://127.0.0.1:{receiver_port}/dump?path={arrivals_file}", method="POST", body={})
        status = endpoint_status(stores_port)
    finally:
        processes.stop_all()
    arrivals = sorted(arrival for _, arrival, _, duplicate in read_csv(arrivals_file) if not duplicate)
    first, last = arrivals[0], arrivals[-1]
    per_second = [0] * (int((last - started_ns) / 1e9) + 1)
    for arrival in arrivals:
        per_second[int((arrival - started_ns) / 1e9)] += 1
    n = arguments.backlog
    return {
        "backlog": written, "delivered": n, "totalSeconds": (last - started_ns) / 1e9, "polledSeconds": elapsed,
        "firstArrivalSeconds": (first - started_ns) / 1e9, "firstToLastSeconds": (last - first) / 1e9,
        "perSecondTotal": n / ((last - started_ns) / 1e9), "perSecondFirstToLast": (n - 1) / ((last - first) / 1e9),
        "deliveredPerSecond": per_second,
        "cpuSeconds": cpu, "cpuPerWebhookUs": {name: value / n * 1e6 for name, value in cpu.items()},
        "machineCPU": machine_cpu, "storesThreadsCPUSeconds": threads,
        "receiver": stats, "endpointStatus": status, "samples": samples,
    }


def receivers_run(arguments, tool, directory):
    """Each receiver alone under the blaster; its rate and its CPU per message."""
    results = {}
    for name in ("go", "python"):
        processes = Processes(directory)
        secret = new_secret()
        try:
            if name == "go":
                receiver, port = start_receiver(processes, tool, secret, arguments)
            else:
                receiver, port = processes.start("python-receiver", [sys.executable, PYTHON_RECEIVER], r"listening on (\d+)")
                http_json(f"http://127.0.0.1:{port}/state", method="POST", body={"secrets": [secret]})
            before = cpu_seconds(receiver.pid)
            meter = MachineMeter()
            blast = subprocess.run([tool, "blast", "--url", f"http://127.0.0.1:{port}/in", "--secret", secret,
                                    "--connections", "8", "--duration", "5"],
                                   stdout=subprocess.PIPE, text=True, check=True, env={**os.environ, "GOMAXPROCS": "1"})
            cpu = cpu_seconds(receiver.pid) - before
            machine_cpu = meter.read({"receiver": cpu})
        finally:
            processes.stop_all()
        report = json.loads(blast.stdout)
        report["receiverCPU"] = cpu
        report["receiverCPUPerMessageUs"] = cpu / max(report["answered"], 1) * 1e6
        results[name] = report
        other = results.setdefault("machineCPU", {"busyCPU": 0, "benchCPU": 0, "otherCPU": 0})
        for key in other:
            other[key] = round(other[key] + machine_cpu[key], 2)
    return results


def measure_once(kind, function, arguments, tool):
    """One run of `kind` in a directory of its own, holding the benchmarks' lock, once the machine is quiet."""
    directory = tempfile.mkdtemp(prefix=f"webhook-bench-{kind}-")
    with benchmark_lock():
        quiet = wait_for_quiet(arguments.quiet_wait)
        wall_before = time.monotonic()
        result = function(arguments, tool, directory)
        wall = time.monotonic() - wall_before
    result["machine"] = {"coresBusyBefore": round(quiet, 3), "wallSeconds": round(wall, 2),
                         "loadavg": open("/proc/loadavg").read().split()[:3]}
    if arguments.keep:
        log(f"  (kept {directory})")
    else:
        shutil.rmtree(directory, ignore_errors=True)
    return result


def describe(kind, result):
    if kind == "lag":
        a = result["lagFromAnswerMs"]
        return (f"p50 {a['p50']:.2f} ms, p99 {a['p99']:.2f} ms, max {a['max']:.2f} ms; "
                f"entitled-stores {result['cpuPerWebhookUs']['stores']:.0f} µs CPU/webhook")
    if kind == "drain":
        return (f"{result['perSecondFirstToLast']:,.0f}/s first to last, {result['totalSeconds']:.1f} s in all; "
                f"entitled-stores {result['cpuPerWebhookUs']['stores']:.0f} µs CPU/webhook")
    return ", ".join(f"{n} {result[n]['perSecond']:,.0f}/s" for n in ("go", "python"))


def source_state(arguments):
    """What was measured: the binaries' sizes and times, and the repository's commit and local changes."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    diff = git("diff", "HEAD", "--", "Sources")
    return {"commit": git("rev-parse", "HEAD").strip(), "sourcesDiffSHA256": hashlib.sha256(diff.encode()).hexdigest(),
            "sourcesChanged": git("diff", "--stat", "HEAD", "--", "Sources").strip().splitlines()[-1:],
            "binaries": {path: {"bytes": os.path.getsize(path), "modified": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.path.getmtime(path)))}
                         for path in (arguments.entitled, arguments.stores)}}


def machine():
    model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    swift = subprocess.run(["swift", "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    go = subprocess.run(["go", "version"], stdout=subprocess.PIPE, text=True).stdout.strip()
    return {"nproc": os.cpu_count(), "cpu": model, "kernel": platform.release(),
            "swift": swift.strip().splitlines()[0] if swift else "", "go": go, "python": platform.python_version()}


def median_of(runs, *path):
    values = []
    for run in runs:
        value = run
        for key in path:
            value = value[key]
        values.append(value)
    return statistics.median(values)


def medians(results):
    out = {}
    lag = results.get("lag") or []
    if lag:
        out["lag"] = {
            "lagFromAnswerMs": {k: median_of(lag, "lagFromAnswerMs", k) for k in ("p50", "p90", "p99", "p99.9", "max")},
            "lagFromSendMs": {k: median_of(lag, "lagFromSendMs", k) for k in ("p50", "p99", "max")},
            "lagFromPayloadTimestampMs": {k: median_of(lag, "lagFromPayloadTimestampMs", k) for k in ("p50", "p99", "max")},
            "grantAnswerMs": {k: median_of(lag, "grantAnswerMs", k) for k in ("p50", "p99", "max")},
            "writerPerSecond": median_of(lag, "writer", "perSecond"),
            "cpuPerWebhookUs": {k: median_of(lag, "cpuPerWebhookUs", k) for k in ("stores", "entitled", "receiver")},
        }
    drain = results.get("drain") or []
    if drain:
        out["drain"] = {
            k: median_of(drain, k) for k in ("perSecondFirstToLast", "perSecondTotal", "totalSeconds",
                                              "firstArrivalSeconds", "firstToLastSeconds")
        }
        out["drain"]["backlogWritePerSecond"] = median_of(drain, "backlog", "perSecond")
        out["drain"]["cpuPerWebhookUs"] = {k: median_of(drain, "cpuPerWebhookUs", k) for k in ("stores", "entitled", "receiver")}
    receivers = results.get("receivers") or []
    if receivers:
        out["receivers"] = {name: {k: median_of(receivers, name, k) for k in ("perSecond", "receiverCPUPerMessageUs")}
                            for name in ("go", "python")}
    return out


def print_report(out, arguments):
    if "lag" in out:
        lag = out["lag"]
        a = lag["lagFromAnswerMs"]
        print(f"Lag at {arguments.rate:g} grants/s for {arguments.duration:g} s (after {arguments.warmup:g} s of warm-up), "
              f"medians of {arguments.runs} runs:")
        print(f"  commit (grant answered) -> arrival: p50 {a['p50']:.2f} ms, p90 {a['p90']:.2f} ms, p99 {a['p99']:.2f} ms, "
              f"p99.9 {a['p99.9']:.2f} ms, max {a['max']:.2f} ms   (target: p99 < 50 ms)")
        s = lag["lagFromSendMs"]
        print(f"  grant sent -> arrival: p50 {s['p50']:.2f} ms, p99 {s['p99']:.2f} ms, max {s['max']:.2f} ms")
        g = lag["grantAnswerMs"]
        print(f"  grant sent -> answered (fsync always): p50 {g['p50']:.2f} ms, p99 {g['p99']:.2f} ms, max {g['max']:.2f} ms")
        c = lag["cpuPerWebhookUs"]
        print(f"  CPU per webhook: entitled-stores {c['stores']:.0f} µs, entitled {c['entitled']:.0f} µs "
              f"(grants and feed), receiver {c['receiver']:.0f} µs")
    if "drain" in out:
        d = out["drain"]
        print(f"Drain of {arguments.backlog:,} changes, medians of {arguments.runs} runs:")
        print(f"  {d['perSecondFirstToLast']:,.0f} webhooks/s from the first arrival to the last "
              f"({d['perSecondTotal']:,.0f}/s from the start of entitled-stores); {d['totalSeconds']:.1f} s in all, "
              f"the first after {d['firstArrivalSeconds']:.2f} s   (target: 5,000/s or more)")
        c = d["cpuPerWebhookUs"]
        print(f"  CPU per webhook: entitled-stores {c['stores']:.0f} µs, entitled {c['entitled']:.0f} µs (feed), "
              f"receiver {c['receiver']:.0f} µs")
    if "receivers" in out:
        print("Receivers alone (blasted, 8 connections, 5 s):")
        for name, r in out["receivers"].items():
            print(f"  {name}: {r['perSecond']:,.0f} messages/s, {r['receiverCPUPerMessageUs']:.0f} µs CPU per message")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entitled", required=True, help="the release entitled binary")
    parser.add_argument("--stores", required=True, help="the release entitled-stores binary")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default="lag,drain,receivers", help="which measurements, comma-separated")
    parser.add_argument("--rate", type=float, default=1000)
    parser.add_argument("--warmup", type=float, default=3)
    parser.add_argument("--duration", type=float, default=30)
    parser.add_argument("--backlog", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=10_000, help="the grants go round-robin to this many users")
    parser.add_argument("--concurrency", type=int, help="the endpoint's \"concurrency\" (default: the file's default, 16)")
    parser.add_argument("--receiver-procs", type=int, help="GOMAXPROCS of the receiver (default: Go's, the cores)")
    parser.add_argument("--quiet-wait", type=float, default=180,
                        help="before each run, wait up to this many seconds for the machine's other work to settle")
    parser.add_argument("--disturbed", type=float, default=0.25,
                        help="a run during which other work on the machine used more cores than this (on average) is "
                             "disturbed: it is run again, up to --retries times, and kept apart in the JSON")
    parser.add_argument("--retries", type=int, default=3)
    parser.add_argument("--perf-dir", help="record entitled-stores with perf record -g during each measured phase, "
                        "into this directory (perf's overhead disturbs the numbers: profile, do not report)")
    parser.add_argument("--keep", action="store_true", help="keep each run's directory (logs, CSV files) and say where")
    parser.add_argument("--json", help="write the runs and medians to this file")
    arguments = parser.parse_args()
    kinds = [k for k in arguments.only.split(",") if k]
    for binary in (arguments.entitled, arguments.stores):
        if not os.access(binary, os.X_OK):
            raise SystemExit(f"not an executable: {binary}")
    build = tempfile.mkdtemp(prefix="webhook-bench-build-")
    tool = os.path.join(build, "webhook-bench")
    subprocess.run(["go", "build", "-o", tool, "."], cwd=HERE, check=True,
                   env={**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local"})
    results = {kind: [] for kind in kinds}
    disturbed = {kind: [] for kind in kinds}
    measure = {"lag": lag_run, "drain": drain_run, "receivers": receivers_run}
    try:
        for run in range(arguments.runs):
            for kind in kinds:
                for attempt in range(1 + arguments.retries):
                    result = measure_once(kind, measure[kind], arguments, tool)
                    other = result["machineCPU"]["otherCPU"] / result["machine"]["wallSeconds"]
                    label = f"run {run + 1} {kind}" + (f" (again, {attempt + 1})" if attempt else "")
                    log(f"{label}: {describe(kind, result)}; other work on the machine {other:.2f} cores")
                    if other <= arguments.disturbed:
                        break
                    result["disturbed"] = True
                    if attempt < arguments.retries:
                        disturbed[kind].append(result)
                        log(f"  disturbed (other work above {arguments.disturbed} cores): run again")
                results[kind].append(result)
    finally:
        shutil.rmtree(build, ignore_errors=True)
    out = medians(results)
    print_report(out, arguments)
    if arguments.json:
        with open(arguments.json, "w") as f:
            json.dump({"machine": machine(), "source": source_state(arguments), "arguments": vars(arguments), "medians": out,
                       "runs": results, "disturbedRuns": disturbed}, f, indent=1)


if __name__ == "__main__":
    main()
