#!/usr/bin/env python3
"""The time two `entitled` binaries take to recover the same data directory, alternated.

Builds a data directory once with the second binary (--users users granted one membership each, a
snapshot, then --log-grants more grants in the log; --fsync no), then for --runs rounds copies it
afresh and starts each binary on the copy (in turn first), and reads what the server logs in its
"recovered the data directory" line (`ms`), the time from launch to the ready line, and the server's
CPU time (utime + stime) at that moment. Prints each run and the medians. Both binaries must read the
same format. A recovery changes the directory it reads (a new segment, trimmed tails), hence the copy.

    python3 Tools/profile/recovery-time.py OLD/entitled NEW/entitled
    python3 Tools/profile/recovery-time.py --log-grants 0 OLD/entitled NEW/entitled   # the snapshot alone

On a shared 2-core machine single restarts vary by a third: compare medians of many alternated runs.
"""
import argparse, os, re, shutil, signal, socket, statistics, subprocess, time


def start(binary, data):
    return subprocess.Popen(
        [binary, "--port", "0", "--data-dir", data, "--fsync", "no", "--snapshot-interval", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def wait_ready(server):
    line = server.stdout.readline()
    found = re.search(r"tcp 127\.0\.0\.1:(\d+)", line)
    if not found:
        raise SystemExit("not ready: " + line + server.stderr.read())
    return int(found.group(1))


def grant(port, first, count):
    connection = socket.create_connection(("127.0.0.1", port))
    answers = connection.makefile("rb")
    for start_at in range(first, first + count, 20000):
        n = min(20000, first + count - start_at)
        lines = "".join('{"op":"grant","user":"u%d","product":"prod_pro"}\n' % i for i in range(start_at, start_at + n))
        connection.sendall(lines.encode())
        for _ in range(n):
            answer = answers.readline()
            if not answer.startswith(b'{"ok":true'):
                raise SystemExit(answer)
    return connection, answers


def build(binary, directory, users, log_grants):
    shutil.rmtree(directory, ignore_errors=True)
    server = start(binary, directory)
    port = wait_ready(server)
    connection, answers = grant(port, 0, users)
    connection.sendall(b'{"op":"snapshot"}\n')
    print(answers.readline().decode().strip())
    if log_grants:
        grant(port, users, log_grants)
    time.sleep(1)
    server.send_signal(signal.SIGKILL)
    server.wait()


def recover(binary, template, work):
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(template, work)
    os.sync()
    launched = time.monotonic()
    server = start(binary, work)
    wait_ready(server)
    ready = time.monotonic() - launched
    fields = open("/proc/%d/stat" % server.pid).read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    server.send_signal(signal.SIGKILL)
    server.wait()
    line = next(l for l in server.stderr.read().splitlines() if "recovered the data directory" in l)
    return int(re.search(r"\bms=(\d+)", line).group(1)), ready, cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first")
    parser.add_argument("second")
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--log-grants", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--work-dir", default="/var/tmp")
    arguments = parser.parse_args()
    template = os.path.join(arguments.work_dir, "entitled-recovery-template")
    work = os.path.join(arguments.work_dir, "entitled-recovery-run")
    build(arguments.second, template, arguments.users, arguments.log_grants)
    results = {arguments.first: [], arguments.second: []}
    try:
        for round_number in range(arguments.runs):
            order = [arguments.first, arguments.second]
            for binary in order if round_number % 2 == 0 else reversed(order):
                results[binary].append(recover(binary, template, work))
                print(binary, "recovery %d ms, ready %.2f s, cpu %.2f s" % results[binary][-1], flush=True)
    finally:
        shutil.rmtree(template, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    for binary, runs in results.items():
        print(
            binary, "medians of %d: recovery %d ms, ready %.2f s, cpu %.2f s" % (
                len(runs), statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs),
                statistics.median(r[2] for r in runs),
            )
        )


if __name__ == "__main__":
    main()
