#!/usr/bin/env python3
"""Instructions and heap allocations per check of an `entitled` binary.

Starts the binary (under valgrind's callgrind for instructions; natively, with a perf uprobe on
malloc, for allocations), gives --users users one membership of prod_pro (entitlement pro), then
sends --checks checks of entitlement pro over one connection, --pipeline at a time, and divides the
counters, zeroed right before the checks, by the number of checks. What is counted is everything the
server's threads do in user space for those checks: reading, framing, decoding, the store, encoding,
writing.

    python3 Tools/profile/check-cost.py .build/release/entitled
    python3 Tools/profile/check-cost.py --pipeline 1 .build/release/entitled
    python3 Tools/profile/check-cost.py --operation grant .build/release/entitled

With --operation grant the requests counted are grants, each to a new user (the write of
`entitled-bench durability`), instead of checks; the server runs with --fsync no, so the log is
written but not synced (a sync costs time, not instructions).

Needs valgrind (callgrind_control) and perf with uprobes (run as root); skips what it lacks.
"""
import argparse, glob, os, re, shutil, socket, subprocess, sys, tempfile, time

def start(command, data_dir):
    process = subprocess.Popen(command + ["--host", "127.0.0.1", "--port", "0", "--data-dir", data_dir,
                                          "--fsync", "no", "--snapshot-interval", "0", "--log-level", "error"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        line = process.stdout.readline()
        match = re.search(r"tcp 127\.0\.0\.1:(\d+)", line or "")
        if match:
            return process, int(match.group(1))
        if process.poll() is not None:
            break
    process.kill()
    sys.exit(f"{command[0]} did not print its listening line")

def exchange(connection, lines, pipeline):
    """Sends the lines, at most `pipeline` in flight, and checks every answer is ok."""
    reader = connection.makefile("rb")
    for start in range(0, len(lines), pipeline):
        batch = lines[start:start + pipeline]
        connection.sendall(b"".join(batch))
        for _ in batch:
            answer = reader.readline()
            if not answer.startswith(b'{"ok":true'):
                sys.exit(f"unexpected answer: {answer!r}")

def workload(users, count, operation="check"):
    """The setup lines, and `count` measured lines of `operation` (plus 1,000 more to warm up, first)."""
    grants = [b'{"op":"define","entitlement":"pro","products":["prod_pro"]}\n']
    grants += [b'{"op":"grant","user":"%012d","product":"prod_pro"}\n' % user for user in range(users)]
    if operation == "grant":
        queries = [b'{"op":"grant","user":"new%012d","product":"prod_pro"}\n' % index for index in range(count + 1000)]
    else:
        queries = [b'{"op":"check","user":"%012d","entitlement":"pro"}\n' % ((index * 7919) % users)
                   for index in range(count + 1000)]
    return grants, queries

def callgrind_instructions(binary, users, checks, pipeline, operation, keep=None):
    if not shutil.which("valgrind") or not shutil.which("callgrind_control"):
        return None
    work = tempfile.mkdtemp(prefix="check-cost-")
    # valgrind cannot read the compressed DWARF of Swift release builds: strip it from a copy.
    stripped = os.path.join(work, "entitled")
    subprocess.run(["objcopy", "--strip-debug", binary, stripped], check=True)
    out = os.path.join(work, "callgrind.out")
    process, port = start(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out + ".%p", stripped],
                          os.path.join(work, "data"))
    try:
        grants, queries = workload(users, checks, operation)
        connection = socket.create_connection(("127.0.0.1", port))
        exchange(connection, grants, 100)
        exchange(connection, queries[:1000], pipeline)  # warm up
        subprocess.run(["callgrind_control", "-z", str(process.pid)], check=True, capture_output=True)
        exchange(connection, queries[1000:], pipeline)
        subprocess.run(["callgrind_control", "-d", str(process.pid)], check=True, capture_output=True)
        connection.close()
        dumps = [path for path in glob.glob(out + ".*") if re.search(r"\.\d+\.\d+$", path)]
        total = 0
        for path in dumps:
            with open(path) as dump:
                for line in dump:
                    if line.startswith("summary:") or line.startswith("totals:"):
                        total = max(total, int(line.split()[1]))
            if keep:
                shutil.copy(path, keep)
        return total / checks
    finally:
        process.terminate()
        process.wait()
        shutil.rmtree(work, ignore_errors=True)

def perf_mallocs(binary, users, checks, pipeline, operation):
    if not shutil.which("perf"):
        return None
    libc = next((path for path in ["/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6"]
                 if os.path.exists(path)), None)
    if libc is None:
        return None
    subprocess.run(["perf", "probe", "-q", "-x", libc, "malloc"], capture_output=True)
    work = tempfile.mkdtemp(prefix="check-cost-")
    process, port = start([binary], os.path.join(work, "data"))
    try:
        grants, queries = workload(users, checks, operation)
        connection = socket.create_connection(("127.0.0.1", port))
        exchange(connection, grants, 100)
        exchange(connection, queries[:1000], pipeline)
        counter = subprocess.Popen(["perf", "stat", "-x,", "-e", "probe_libc:malloc", "-p", str(process.pid)],
                                   stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)  # perf attaches
        exchange(connection, queries[1000:], pipeline)
        time.sleep(0.2)
        counter.send_signal(2)
        _, report = counter.communicate()
        connection.close()
        match = re.search(r"^(\d+),", report, re.MULTILINE)
        return int(match.group(1)) / checks if match else None
    finally:
        process.terminate()
        process.wait()
        shutil.rmtree(work, ignore_errors=True)

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--checks", type=int, default=20_000, help="requests counted (checks, or grants)")
    parser.add_argument("--operation", choices=["check", "grant"], default="check")
    parser.add_argument("--pipeline", type=int, default=16)
    parser.add_argument("--keep-profile", metavar="FILE", help="keep the callgrind profile of the checks here (read it with callgrind_annotate)")
    arguments = parser.parse_args()
    operation = arguments.operation
    instructions = callgrind_instructions(arguments.binary, arguments.users, arguments.checks, arguments.pipeline,
                                          operation, arguments.keep_profile)
    mallocs = perf_mallocs(arguments.binary, arguments.users, arguments.checks, arguments.pipeline, operation)
    print(f"{arguments.binary}: {arguments.checks} {operation}s, pipeline {arguments.pipeline}, {arguments.users} users")
    print(f"instructions per {operation}: " + (f"{instructions:,.0f}" if instructions else "not measured (valgrind missing or failed)"))
    print(f"allocations per {operation}:  " + (f"{mallocs:.2f}" if mallocs is not None else "not measured (perf uprobes unavailable)"))

if __name__ == "__main__":
    main()
