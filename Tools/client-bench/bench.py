#!/usr/bin/env python3
"""Checks through each client library against entitled-loadgen, on one server, at the same concurrency.

For each run: one release `entitled` (a fresh data directory, no snapshots), the catalog's `pro` defined and
--users users granted it; then, one after another against that same server, `entitled-loadgen` (one
connection, --in-flight checks pipelined: its `--connections 1 --pipeline N`) and each client's benchmark
program (its pool, --in-flight checks kept in flight). Every measurer reports its checks, its window and its
own CPU time (user + system, from /proc); the generator's is read here from /proc/PID/stat, and the
server's CPU per check during its window is printed beside the table as a reference. The table gives
medians over --runs runs and each client's checks a second as a share of the generator's in the same run.
The warm-up (5 s) is long enough for the JVM's and V8's compilers to have compiled the hot path: the
window measures the steady state a long-running backend sees.

  for p in entitled entitled-loadgen; do swift build -c release --product $p; done
  python3 Tools/client-bench/bench.py [--runs 5] [--duration 5] [--warmup 5] [--in-flight 50] [--users 10000]
      [--clients node,go,java,python] [--json FILE]

Needs the toolchains of the clients measured (Tools/test.sh installs them). Python 3.11 standard library."""
import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CLIENTS = os.path.join(ROOT, "Protocol", "clients")
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """User + system time of a process, from /proc/PID/stat (fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def start_entitled(binary, directory):
    process = subprocess.Popen([binary, "--port", "0", "--data-dir", directory, "--snapshot-interval", "0",
                                "--insecure-no-auth"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in process.stdout:
        match = re.search(r"listening on .*?tcp 127\.0\.0\.1:(\d+)", line)
        if match:
            # Keep draining its standard output, or a full pipe would one day stop the server.
            threading.Thread(target=process.stdout.read, daemon=True).start()
            return process, int(match.group(1))
    raise SystemExit("entitled did not start")


def user(index):
    return f"bench-{index:08d}"


def seed(port, users):
    """Defines `pro` and grants it to every user, pipelined in batches of 1000."""
    with socket.create_connection(("127.0.0.1", port)) as connection:
        reader = connection.makefile("rb")
        requests = [{"op": "define", "entitlement": "pro", "products": ["prod_pro"]}]
        requests += [{"op": "grant", "user": user(i), "product": "prod_pro"} for i in range(users)]
        for start in range(0, len(requests), 1000):
            batch = requests[start:start + 1000]
            connection.sendall(b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in batch))
            for _ in batch:
                answer = json.loads(reader.readline())
                if not answer.get("ok"):
                    raise SystemExit(f"seeding failed: {answer}")


def loadgen_requests(directory, users):
    path = os.path.join(directory, "checks.bin")
    with open(path, "wb") as f:
        for i in range(min(users, 65536)):
            f.write(b"c" + json.dumps({"op": "check", "user": user(i), "entitlement": "pro"},
                                      separators=(",", ":")).encode() + b"\n\0")
    return path


def measure_loadgen(binary, port, server, arguments, requests):
    process = subprocess.Popen([binary, "--port", str(port), "--connections", "1", "--pipeline", str(arguments.in_flight),
                                "--warmup", str(arguments.warmup), "--duration", str(arguments.duration),
                                "--protocol", "entitled", "--requests", requests],
                               stdout=subprocess.PIPE, text=True)
    values, server_start, own_start = {}, None, None
    for line in process.stdout:
        word = line.split()
        if word == ["measuring"]:
            server_start, own_start = cpu_seconds(server.pid), cpu_seconds(process.pid)
        elif word == ["done"]:
            server_cpu, own_cpu = cpu_seconds(server.pid) - server_start, cpu_seconds(process.pid) - own_start
        elif len(word) == 2 and word[0] in ("window_ns", "answered", "errors"):
            values[word[0]] = int(word[1])
    if process.wait() != 0 or values.get("errors"):
        raise SystemExit(f"entitled-loadgen failed: {values}")
    seconds = values["window_ns"] / 1e9
    return {"checks": values["answered"], "seconds": seconds, "ownCPU": own_cpu, "serverCPU": server_cpu}


def client_command(name, port, arguments, build):
    common = ["--host", "127.0.0.1", "--port", str(port), "--in-flight", str(arguments.in_flight),
              "--duration", str(arguments.duration), "--warmup", str(arguments.warmup), "--users", str(arguments.users)]
    return {
        "node": ["node", os.path.join(CLIENTS, "node", "bench", "bench.mjs")],
        "go": [os.path.join(build, "entitled-clientbench")],
        "java": ["bash", os.path.join(CLIENTS, "java", "bench.sh")],
        "python": [sys.executable, os.path.join(CLIENTS, "python", "bench.py")],
    }[name] + common


def build_clients(names, build):
    """Builds what a client's benchmark runs from (compiled once, before any server starts)."""
    if "node" in names:
        subprocess.run(["tsc", "-p", os.path.join(CLIENTS, "node")], check=True)
    if "go" in names:
        subprocess.run(["go", "build", "-o", os.path.join(build, "entitled-clientbench"), "./cmd/entitled-clientbench"],
                       cwd=os.path.join(CLIENTS, "go"), check=True,
                       env={**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local"})
    if "java" in names:
        subprocess.run(["bash", os.path.join(CLIENTS, "java", "build.sh")], check=True, stdout=subprocess.DEVNULL)


def measure_client(name, port, arguments, build):
    """Runs a client's benchmark program, which times its own window and reads its own CPU."""
    process = subprocess.run(client_command(name, port, arguments, build), stdout=subprocess.PIPE, text=True)
    if process.returncode != 0:
        raise SystemExit(f"{name}'s benchmark failed (exit {process.returncode})")
    report = json.loads(process.stdout.strip().splitlines()[-1])
    return {"checks": report["checks"], "seconds": report["seconds"],
            "ownCPU": report["cpuUserSeconds"] + report["cpuSystemSeconds"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--duration", type=float, default=5)
    parser.add_argument("--warmup", type=float, default=5)
    parser.add_argument("--in-flight", type=int, default=50)
    parser.add_argument("--users", type=int, default=10000)
    parser.add_argument("--clients", default="node,go,java,python")
    parser.add_argument("--entitled", default=os.path.join(ROOT, ".build", "release", "entitled"))
    parser.add_argument("--loadgen", default=os.path.join(ROOT, ".build", "release", "entitled-loadgen"))
    parser.add_argument("--json")
    arguments = parser.parse_args()
    names = [n for n in arguments.clients.split(",") if n]
    build = tempfile.mkdtemp(prefix="client-bench-build-")
    build_clients(names, build)
    results = {name: [] for name in ["entitled-loadgen", *names]}
    for run in range(arguments.runs):
        directory = tempfile.mkdtemp(prefix="client-bench-")
        server, port = start_entitled(arguments.entitled, os.path.join(directory, "data"))
        try:
            seed(port, arguments.users)
            results["entitled-loadgen"].append(measure_loadgen(arguments.loadgen, port, server, arguments,
                                                               loadgen_requests(directory, arguments.users)))
            for name in names:
                results[name].append(measure_client(name, port, arguments, build))
        finally:
            server.terminate()
            server.wait()
            shutil.rmtree(directory, ignore_errors=True)
        print(f"run {run + 1}: " + ", ".join(f"{n} {r[-1]['checks'] / r[-1]['seconds']:,.0f}/s" for n, r in results.items()),
              file=sys.stderr)
    shutil.rmtree(build, ignore_errors=True)
    print_table(results, arguments)
    if arguments.json:
        with open(arguments.json, "w") as f:
            json.dump({"arguments": vars(arguments), "runs": results}, f, indent=2)


def print_table(results, arguments):
    """Medians; the share of the generator is taken run by run, then its median."""
    generator = [r["checks"] / r["seconds"] for r in results["entitled-loadgen"]]
    print(f"{arguments.in_flight} checks in flight, {arguments.runs} runs of {arguments.duration:g} s, medians; "
          f"{os.cpu_count()} cores")
    print()
    print("| Measurer | checks/s | of entitled-loadgen | its own CPU per check |")
    print("|---|---:|---:|---:|")
    server = [r["serverCPU"] / r["checks"] * 1e6 for r in results["entitled-loadgen"]]
    for name, runs in results.items():
        rates = [r["checks"] / r["seconds"] for r in runs]
        shares = [rate / generated for rate, generated in zip(rates, generator)]
        own = [r["ownCPU"] / r["checks"] * 1e6 for r in runs]
        print(f"| {name} | {statistics.median(rates):,.0f} | {statistics.median(shares):.0%} | "
              f"{statistics.median(own):.1f} µs |")
    print()
    print(f"The server's CPU per check under entitled-loadgen: {statistics.median(server):.1f} µs.")


if __name__ == "__main__":
    main()
