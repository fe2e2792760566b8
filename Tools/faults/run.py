"""A Jepsen-style test of an entitled cluster: three nodes on a real replicated PostgreSQL, workers writing and
reading on every node, one fault at a time (a failover of the database among them), and a check of every
promise against what the nodes hold at the end.

Usage: python3 Tools/faults/run.py --entitled PATH [--duration SECONDS] [--workers N] [--seed N]
                                   [--replication sync|async] [--report FILE] [--keep]

Short form (the test suite runs it, Tests/EntitledClusterTests/ClusterFaultRunTests.swift):
    --duration 80 (every fault once). Long form (before a release): --duration 900 or more (faults drawn
    at random, about one every 10 s). Prints a summary; writes a JSON report (--report); exits 0 when every
    promise held, 1 when one broke (each violation is listed), 77 when PostgreSQL cannot be had here.

What runs: PostgreSQL from /usr/lib/postgresql/N/bin, as the `postgres` user when run as root, on free
loopback ports, everything in one temporary directory: a primary (initdb) and a streaming standby of it
(`pg_basebackup -R -X stream`, its walreceiver reaching the primary through a Tools/faults/fault_proxy.py
of its own, the replication link). The nodes reach the primary through proxies a failover re-points:
n1 through its fault proxy (the COMMIT faults below act on n1's link only), n2 and n3 through a second
fault_proxy.py used only as a router. --workers threads (default 8) each with a connection to every node.
--replication sync (the default): every server runs with synchronous_standby_names='*' and
synchronous_commit=on, so a commit returns once the standby flushed it and a failover loses nothing
acknowledged. --replication async: no synchronous standby; a failover loses what the standby had not
received yet.

The workers' operations (each one's request, node, answer and the answer's time recorded):
  keyed grant   an idempotency key from a small shared pool, sent to any node: the same key, the same body
  grant         a new user, then a read of it on another node with minSeq (read your writes)
  guest grant   a new device; later claimed by two users at once on two nodes (a race)
  claim race    the device's two claims, on two nodes, at the same moment
  revoke        of a membership whose grant was acknowledged
  event         a renewal with a new event id, sent to one node or to two at once (a shared event id)
  read          a check of any subject on any node; right after a write that failed, on that write's node
Faults, one at a time (the short form runs each once, in this order):
  kill9      kill -9 of a node, started again 1-3 s later
  sigstop    SIGSTOP of a node for 5-10 s
  failover   the replication link cut (the standby lags), 1 s later the primary stopped (`pg_ctl stop -m
             immediate`), the standby promoted (`pg_ctl promote -w`), both node proxies re-pointed at it
             (their open connections reset), and a new standby of it made through a fresh replication link
             (so later faults, failovers and sync commits have one); each step logged with its time
  terminate  pg_terminate_backend of every node's connection to the primary
  pgstop     `pg_ctl stop -m immediate` of the primary for 5-10 s
  hold, cut, split
             on n1's link at a group's COMMIT: hold it 6 s (past --write-timeout 5), cut it (committed,
             never answered), split it (the node's side reset, the COMMIT delivered 0.5 s later)
terminate and pgstop act on the primary of the moment.

Promises checked at the end (PROTOCOL.md "What an answer means", CLUSTER.md "Guarantees"):
  - every acknowledged write is on every node; every write answered "not applied" (unavailable,
    busy, ...) is on none; outcome_unknown or a lost connection may have gone either way
  - all nodes hold the same memberships and the same applied change number
  - one membership per idempotency key; each event id applied at most once
  - a raced device ends with exactly the owner whose claim moved it
  - change numbers of new changes are unique, and increase on each connection
  - a read with minSeq on another node sees the write (or answers stale); no read ever saw a membership
    that is not committed (an active check of a subject that holds nothing at the end)
In sync mode every promise holds over the whole run. In async mode a failover may lose acknowledged
writes, so writes answered before the end of the last failover need not survive it (an acknowledged grant,
guest grant, revoke, claim or event may be missing, and then applied again, a lost number followed by a
lower one), and reads answered before that end plus 10 s (the nodes' detection) may have seen what was
lost; these are listed as "allowed", not as violations. Everything answered after must hold every promise,
and whatever the mode, over the whole run: all nodes end with the same state and the same applied change
number, nothing answered "not applied" is there, and no change number is ever answered for two changes.
"""
import argparse
import glob
import json
import os
import pwd
import random
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

# A test runner's threads block most signals and a child inherits the mask: the nodes this starts must
# see the SIGTERM that stops them.
signal.pthread_sigmask(signal.SIG_SETMASK, [])

HERE = os.path.dirname(os.path.abspath(__file__))
WRITE_TIMEOUT = 5
# How long after a failover the nodes may go on serving what it lost (async mode): until they notice.
DETECTION = 10
# How far behind the standby is when its primary stops in a failover (seconds of commits it has not got).
LAG = 1
# Error codes whose answer means the write was certainly not applied (PROTOCOL.md, "What an answer means").
NOT_APPLIED = {"bad_json", "bad_request", "unknown_op", "not_found", "conflict", "too_large", "unauthorized",
               "forbidden", "busy", "unavailable", "stale"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Unavailable(Exception):
    pass


class Programs:
    """PostgreSQL's programs (the newest /usr/lib/postgresql/N/bin, else the PATH), run as the `postgres`
    user when this runs as root (PostgreSQL refuses root)."""

    def __init__(self, directory):
        candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                            key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
        if candidates:
            self.bin = os.path.dirname(candidates[-1])
        elif shutil.which("initdb"):
            self.bin = os.path.dirname(shutil.which("initdb"))
        else:
            raise Unavailable("no initdb in /usr/lib/postgresql/*/bin or on the PATH (apt-get install postgresql)")
        if not os.path.exists(os.path.join(self.bin, "pg_basebackup")):
            raise Unavailable(f"no pg_basebackup beside {self.bin}/initdb (standbys are made with it)")
        self.prefix = []
        if os.geteuid() == 0:
            try:
                entry = pwd.getpwnam("postgres")
            except KeyError:
                raise Unavailable("running as root and there is no `postgres` user to run PostgreSQL as")
            self.prefix = ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--init-groups", "--"]
            os.chown(directory, entry.pw_uid, entry.pw_gid)

    def path(self, name):
        program = os.path.join(self.bin, name)
        return program if os.path.exists(program) else name

    def run(self, arguments, check=True, timeout=60):
        result = subprocess.run(self.prefix + arguments, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, timeout=timeout)
        if check and result.returncode != 0:
            raise RuntimeError(f"{os.path.basename(arguments[0])} failed: {result.stdout}")
        return result


class Postgres:
    """One throwaway PostgreSQL server: a new cluster (initdb), or a streaming standby of another made with
    `pg_basebackup -R`; start, stop -m immediate, promote, psql. Trust authentication: the run tests the
    nodes, not passwords."""

    def __init__(self, programs, directory, name, settings, standby_of_port=None):
        self.programs, self.name, self.settings = programs, name, settings
        self.data = os.path.join(directory, name)
        self.log = os.path.join(directory, name + ".log")
        # Sockets outside the data directory: pg_basebackup would copy a socket's lock file into a standby.
        self.sockets = directory
        self.port = free_port()
        if standby_of_port is None:
            programs.run([programs.path("initdb"), "-D", self.data, "-U", "postgres", "-A", "trust", "--no-sync"])
        else:
            # -R writes standby.signal and a primary_conninfo naming this host and port (the replication
            # link's proxy); -X stream copies the WAL written meanwhile; -c fast checkpoints at once rather
            # than spread over minutes.
            programs.run([programs.path("pg_basebackup"), "-D", self.data, "-R", "-X", "stream", "-c", "fast",
                          "--no-sync", "-h", "127.0.0.1", "-p", str(standby_of_port), "-U", "postgres"], timeout=120)
        self.start()

    def start(self):
        # pg_ctl hands the options to a shell.
        options = " ".join([f"-p {self.port} -k {self.sockets}"] +
                           [f"-c {shlex.quote(f'{name}={value}')}" for name, value in self.settings.items()])
        self.programs.run([self.programs.path("pg_ctl"), "-D", self.data, "-l", self.log, "-w", "-o", options, "start"])

    def stop_immediately(self):
        self.programs.run([self.programs.path("pg_ctl"), "-D", self.data, "-m", "immediate", "-w", "stop"], check=False)

    def promote(self):
        """Ends recovery (`pg_ctl promote -w` returns once the server takes writes)."""
        self.programs.run([self.programs.path("pg_ctl"), "-D", self.data, "-w", "promote"])

    def timeline(self):
        """The timeline it writes on: 1 for a new cluster, one more at each promotion."""
        return int(self.psql("SELECT substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8)"), 16)

    def psql(self, sql, database="postgres"):
        return self.programs.run([self.programs.path("psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                                  "-d", database, "-Atqc", sql]).stdout.strip()


class Database:
    """What the nodes use as their PostgreSQL: a primary, a streaming standby of it (pg_basebackup through a
    proxy of its own, the replication link), and the proxies the nodes reach the primary through, which a
    failover re-points at the promoted standby: n1's fault proxy (the COMMIT faults, on n1's link only)
    and a router for n2 and n3 (a fault_proxy.py that is only ever re-pointed).

    `sync` mode: every server runs with synchronous_standby_names='*' (ignored while it is a standby), so a
    primary's commit returns only once its standby flushed it and a failover loses nothing acknowledged;
    a promoted standby's commits wait until its new standby streams, or rather until pg_basebackup's own
    WAL stream, which PostgreSQL counts as a synchronous standby while the copy is made, has them (the copy
    then holds them). `async` mode: commits return at once, and a failover loses what the standby had not
    received yet."""

    def __init__(self, directory, mode, log):
        self.directory, self.log = directory, log
        self.programs = Programs(directory)
        # A standby whose link broke (the primary stopped) tries again after 1 s rather than 5: sync
        # commits then wait for it little longer than the fault lasts.
        self.settings = {"listen_addresses": "127.0.0.1", "max_connections": "200", "wal_retrieve_retry_interval": "1s"}
        if mode == "sync":
            self.settings.update({"synchronous_standby_names": "*", "synchronous_commit": "on"})
        self.servers, self.proxies = [], []
        try:
            self.primary = self.server()
            self.standby, self.replication = self.new_standby()
            # Only now: in sync mode this commit waits for a standby.
            self.primary.psql("CREATE DATABASE entitled")
            self.link = self.proxy(self.primary.port)
            self.router = self.proxy(self.primary.port)
        except BaseException:
            self.close()
            raise

    def server(self, standby_of_port=None):
        server = Postgres(self.programs, self.directory, f"pg{len(self.servers) + 1}", self.settings, standby_of_port)
        self.servers.append(server)
        return server

    def proxy(self, port):
        proxy = Proxy(port)
        self.proxies.append(proxy)
        return proxy

    def new_standby(self):
        """A streaming standby of the primary through a fresh replication-link proxy: (server, proxy)."""
        replication = self.proxy(self.primary.port)
        return self.server(standby_of_port=replication.port), replication

    @staticmethod
    def url(proxy):
        return f"postgres://postgres@127.0.0.1:{proxy.port}/entitled?sslmode=disable"

    def failover(self):
        """Cuts the replication link, stops the primary at once a second later, promotes the standby,
        re-points the nodes' proxies at it, and gives it a standby of its own (later faults, failovers and
        sync commits need one), logging each step.

        The cut first makes the standby lag as it does when a failover follows a network fault: what the
        primary commits in that second is then on the primary alone. In async mode it was acknowledged and
        is lost (on a healthy loopback link the standby is a millisecond behind, and a failover would
        almost never lose anything); in sync mode those commits wait for the standby, unanswered, and die
        with the primary."""
        old, promoted = self.primary, self.standby
        self.log(f"failover: the replication link to {promoted.name} cut")
        self.replication.command("partition")
        time.sleep(LAG)
        self.log(f"failover: pg_ctl stop -m immediate of the primary {old.name} (port {old.port})")
        old.stop_immediately()
        self.log(f"failover: pg_ctl promote -w of the standby {promoted.name} (port {promoted.port})")
        promoted.promote()
        self.log(f"failover: {promoted.name} is the primary (timeline {promoted.timeline()}); re-pointing the nodes' proxies")
        self.link.retarget(promoted.port)
        self.router.retarget(promoted.port)
        self.primary = promoted
        self.replication.close()
        self.log(f"failover: pg_basebackup of a new standby of {promoted.name}")
        self.standby, self.replication = self.new_standby()
        self.log(f"failover: done; {self.standby.name} (port {self.standby.port}) streams from {promoted.name}")

    def close(self):
        for proxy in self.proxies:
            proxy.close()
        for server in self.servers:
            server.stop_immediately()
class Proxy:
    """Tools/faults/fault_proxy.py in front of PostgreSQL, and its control connection."""

    def __init__(self, target_port):
        self.process = subprocess.Popen([sys.executable, os.path.join(HERE, "fault_proxy.py"), str(target_port)],
                                        stdout=subprocess.PIPE, text=True)
        self.port, control = map(int, self.process.stdout.readline().split())
        self.control = socket.create_connection(("127.0.0.1", control))
        self.reader = self.control.makefile("r")

    def command(self, line):
        self.control.sendall((line + "\n").encode())
        return self.reader.readline().strip()

    def retarget(self, port):
        """Sends the proxy's new connections to `port` and resets its open ones (`target PORT`)."""
        answer = self.command(f"target {port}")
        if answer != "ok":
            raise RuntimeError(f"the proxy on {self.port} refused `target {port}`: {answer}")

    def close(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class Node:
    """One `entitled --postgres` process on a fixed port, started again on the same port after a kill."""

    def __init__(self, binary, name, url, directory):
        self.binary, self.name, self.url = os.path.abspath(binary), name, url
        self.directory = os.path.join(directory, name)
        os.makedirs(self.directory)
        self.port = free_port()
        self.process = None
        self.log = open(os.path.join(self.directory, "stderr.log"), "ab")

    def start(self, timeout=60):
        self.process = subprocess.Popen(
            [self.binary, "--postgres", self.url, "--node-name", self.name, "--port", str(self.port),
             "--snapshot-interval", "0", "--write-timeout", str(WRITE_TIMEOUT)],
            cwd=self.directory, stdout=subprocess.DEVNULL, stderr=self.log, stdin=subprocess.DEVNULL)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}; see {self.log.name}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b'{"op":"ping"}\n')
                    if b'"ok":true' in s.recv(4096):
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"{self.name} did not answer within {timeout} s")

    def signal(self, number):
        if self.process and self.process.poll() is None:
            os.kill(self.process.pid, number)

    def kill9(self):
        if self.process is None:
            return
        self.signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        if self.process is None:
            return
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill9()


class Connection:
    """One line-protocol connection; any failure closes it and the next request connects again."""

    def __init__(self, port, timeout=12):
        self.port, self.timeout = port, timeout
        self.sock = None
        self.buffer = b""

    def request(self, message):
        """The answer as a dict, or None when the connection failed (the outcome is unknown)."""
        return self.pipelined([message])[0]

    def pipelined(self, messages, batch=200):
        """The answers to `messages`, sent `batch` at a time without waiting (a node answers a connection's
        requests in order): the final check's tens of thousands of reads take seconds, not a round trip
        each. None for each request of a batch the connection failed in; the next batch connects again."""
        answers = []
        for first in range(0, len(messages), batch):
            chunk = messages[first:first + batch]
            try:
                if self.sock is None:
                    self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=2)
                    self.sock.settimeout(self.timeout)
                    self.buffer = b""
                self.sock.sendall(b"".join((json.dumps(m, separators=(",", ":")) + "\n").encode() for m in chunk))
                lines = []
                while len(lines) < len(chunk):
                    received = self.sock.recv(65536)
                    if not received:
                        raise OSError("closed")
                    *complete, self.buffer = (self.buffer + received).split(b"\n")
                    lines += complete
                answers += [json.loads(line) for line in lines]
            except (OSError, ValueError):
                self.close()
                answers.extend([None] * (first + len(chunk) - len(answers)))
        return answers

    def close(self):
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
        self.sock = None


def outcome(answer):
    """'applied', 'not_applied' or 'unknown' for a write's answer."""
    if answer is None:
        return "unknown"
    if answer.get("ok"):
        return "applied"
    code = answer.get("error", {}).get("code")
    return "not_applied" if code in NOT_APPLIED else "unknown"


class History:
    """Everything the workers sent and were answered, shared by all their threads. Each answer is kept with
    the time it came (time.time()): in async mode a failover may lose what was answered before it."""

    def __init__(self):
        self.lock = threading.Lock()
        self.counter = 0
        self.keys = []                 # idempotency keys used so far
        self.key_answers = {}          # key -> [(outcome, time)]
        self.grants = {}               # user -> (outcome, node, time)
        self.guest = {}                # device -> (outcome, time)
        self.claims = {}               # device -> [(user, outcome, claimed, time)]
        self.claimable = []
        self.revocable = []            # membership ids of acknowledged plain grants
        self.revokes = {}              # membership id -> (outcome, reason, time)
        self.events = {}               # transaction id of the renewal -> (membership, [(answer, time)])
        self.reads = []                # (subject kind, subject, node, answer, time)
        self.seq_reads = []            # (user, seq, node, answer, the grant's time, the read's time)
        self.sequences = []            # (connection, seq, description, time) for new changes
        self.codes = {}
        self.writes_acked = 0
        self.reads_done = 0

    def next(self):
        with self.lock:
            self.counter += 1
            return self.counter

    def count(self, answer, write):
        with self.lock:
            code = "connection lost" if answer is None else ("ok" if answer.get("ok") else answer["error"]["code"])
            self.codes[code] = self.codes.get(code, 0) + 1
            if write and answer is not None and answer.get("ok"):
                self.writes_acked += 1
            if not write:
                self.reads_done += 1


class Worker(threading.Thread):
    def __init__(self, index, nodes, history, stop, seed):
        super().__init__(daemon=True)
        self.index, self.nodes, self.history, self.stop = index, nodes, history, stop
        self.random = random.Random(seed)
        self.connections = [Connection(node.port) for node in nodes]

    def send(self, node, message, write):
        answer = self.connections[node].request(message)
        self.history.count(answer, write)
        return answer

    def note_sequence(self, node, answer, description):
        if answer and answer.get("ok") and isinstance(answer.get("seq"), int):
            with self.history.lock:
                self.history.sequences.append(((self.index, node), answer["seq"], description, time.time()))

    def other(self, node):
        return self.random.choice([n for n in range(len(self.nodes)) if n != node])

    def run(self):
        operations = [(self.keyed_grant, 20), (self.grant, 20), (self.guest_grant, 10), (self.claim_race, 8),
                      (self.revoke, 8), (self.event, 12), (self.read, 22)]
        choices, weights = zip(*operations)
        while not self.stop.is_set():
            self.random.choices(choices, weights)[0]()

    def keyed_grant(self):
        h = self.history
        with h.lock:
            if not h.keys or self.random.random() < 0.4:
                h.counter += 1
                h.keys.append(f"k{h.counter}")
            key = self.random.choice(h.keys[-20:])
        node = self.random.randrange(len(self.nodes))
        message = {"op": "grant", "user": f"user-{key}", "product": "pro_monthly", "duration": "30d",
                   "transactionId": f"tx-{key}", "idempotencyKey": key}
        answer = self.send(node, message, True)
        with h.lock:
            h.key_answers.setdefault(key, []).append((outcome(answer), time.time()))
        if answer and answer.get("ok") and not answer.get("idempotentReplay"):
            self.note_sequence(node, answer, f"keyed grant {key}")
        self.after_write(node, "user", f"user-{key}", answer)

    def grant(self):
        n = self.history.next()
        user, node = f"u{n}", self.random.randrange(len(self.nodes))
        answer = self.send(node, {"op": "grant", "user": user, "product": "pro_monthly", "duration": "30d",
                                  "transactionId": f"tx-{user}"}, True)
        answered = time.time()
        with self.history.lock:
            self.history.grants[user] = (outcome(answer), node, answered)
        self.note_sequence(node, answer, f"grant {user}")
        if answer and answer.get("ok"):
            other = self.other(node)
            read = self.send(other, {"op": "check", "user": user, "minSeq": answer["seq"]}, False)
            with self.history.lock:
                self.history.seq_reads.append((user, answer["seq"], other, read, answered, time.time()))
                self.history.reads.append(("user", user, other, read, time.time()))
                self.history.revocable.append(answer["membership"]["id"])
        self.after_write(node, "user", user, answer)

    def after_write(self, node, kind, subject, answer):
        """After a write that failed, a read of its subject on its node: what that node now serves."""
        if answer is None or not answer.get("ok"):
            read = self.send(node, {"op": "check", kind: subject}, False)
            with self.history.lock:
                self.history.reads.append((kind, subject, node, read, time.time()))

    def guest_grant(self):
        n = self.history.next()
        device, node = f"d{n}", self.random.randrange(len(self.nodes))
        answer = self.send(node, {"op": "grant", "device": device, "product": "pro_monthly", "duration": "30d",
                                  "transactionId": f"tx-{device}"}, True)
        self.note_sequence(node, answer, f"guest grant {device}")
        with self.history.lock:
            self.history.guest[device] = (outcome(answer), time.time())
            if answer and answer.get("ok"):
                self.history.claimable.append(device)
        self.after_write(node, "device", device, answer)

    def claim_race(self):
        with self.history.lock:
            if not self.history.claimable:
                return
            device = self.history.claimable.pop(self.random.randrange(len(self.history.claimable)))
        first = self.random.randrange(len(self.nodes))
        second = self.other(first)
        results = []

        def claim(node, user, connection):
            answer = connection.request({"op": "claim", "device": device, "user": user})
            self.history.count(answer, True)
            results.append((node, user, answer, time.time()))

        helper = Connection(self.nodes[second].port)
        other = threading.Thread(target=claim, args=(second, f"{device}-B", helper))
        other.start()
        claim(first, f"{device}-A", self.connections[first])
        other.join()
        helper.close()
        with self.history.lock:
            self.history.claims[device] = [(user, outcome(a), (a or {}).get("claimed"), t) for _, user, a, t in results]
        for node, user, answer, answered in results:
            if answer and answer.get("ok") and answer.get("claimed", 0) > 0:
                # The helper's connection made one request: its own key, so only the uniqueness is checked.
                with self.history.lock:
                    connection = (self.index, node) if node == first else ("helper", device)
                    self.history.sequences.append((connection, answer["seq"], f"claim {device} by {user}", answered))

    def revoke(self):
        with self.history.lock:
            if not self.history.revocable:
                return
            membership = self.history.revocable.pop(self.random.randrange(len(self.history.revocable)))
        n = self.history.next()
        node = self.random.randrange(len(self.nodes))
        answer = self.send(node, {"op": "revoke", "membership": membership, "reason": f"r{n}"}, True)
        with self.history.lock:
            self.history.revokes[membership] = (outcome(answer), f"r{n}", time.time())
        self.note_sequence(node, answer, f"revoke {membership}")

    def event(self):
        with self.history.lock:
            if not self.history.revocable:
                return
            membership = self.random.choice(self.history.revocable[-50:])
        n = self.history.next()
        # Event times increase with n, so a later event is never out of order against an earlier one.
        event_time = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_700_000_000 + n))
        message = {"op": "event", "membership": membership, "type": "renewal", "eventId": f"e{n}",
                   "eventTime": event_time, "expiresAt": "2099-01-01T00:00:00Z", "transactionId": f"et{n}"}
        results = []
        first = self.random.randrange(len(self.nodes))

        def send(node, connection):
            answer = connection.request(message)
            self.history.count(answer, True)
            results.append((answer, time.time()))

        if self.random.random() < 0.5:
            helper = Connection(self.nodes[self.other(first)].port)
            other = threading.Thread(target=send, args=(self.other(first), helper))
            other.start()
            send(first, self.connections[first])
            other.join()
            helper.close()
        else:
            send(first, self.connections[first])
        with self.history.lock:
            self.history.events[f"et{n}"] = (membership, results)

    def read(self):
        with self.history.lock:
            users = list(self.history.grants.keys())[-200:]
        if not users:
            return
        user, node = self.random.choice(users), self.random.randrange(len(self.nodes))
        answer = self.send(node, {"op": "check", "user": user}, False)
        with self.history.lock:
            self.history.reads.append(("user", user, node, answer, time.time()))


class Faults(threading.Thread):
    """One fault at a time; the short form runs each kind once in a fixed order. The failover comes early
    (after faults the nodes are over within a second, not pgstop, after which they may still be waiting to
    reconnect and would not see it) so that the faults after it act on the promoted primary and through
    the re-pointed proxies."""

    KINDS = ["kill9", "sigstop", "failover", "terminate", "pgstop", "hold", "cut", "split"]

    def __init__(self, nodes, database, stop, duration, seed, log):
        super().__init__(daemon=True)
        self.nodes, self.database, self.stop = nodes, database, stop
        self.duration, self.random, self.log = duration, random.Random(seed), log
        self.done = []
        self.failovers = []  # (start, end) of each failover, time.time()
        self.error = None

    def pause(self, seconds):
        self.stop.wait(seconds)

    def run(self):
        try:
            start = time.time()
            kinds = list(self.KINDS)
            while time.time() - start < self.duration - 8 and not self.stop.is_set():
                self.pause(2)
                kind = kinds.pop(0) if kinds else self.random.choice(self.KINDS)
                self.log(f"fault: {kind}")
                self.done.append(kind)
                getattr(self, kind)()
        except Exception as error:  # reported; the run then fails
            self.error = f"{type(error).__name__}: {error}"

    def kill9(self):
        node = self.random.choice(self.nodes)
        node.kill9()
        self.pause(self.random.uniform(1, 3))
        node.start()

    def sigstop(self):
        node = self.random.choice(self.nodes)
        node.signal(signal.SIGSTOP)
        time.sleep(self.random.uniform(5, 10))
        node.signal(signal.SIGCONT)

    def terminate(self):
        self.database.primary.psql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                   "WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'")

    def pgstop(self):
        primary = self.database.primary
        primary.stop_immediately()
        time.sleep(self.random.uniform(5, 10))
        primary.start()

    def failover(self):
        started = time.time()
        try:
            self.database.failover()
        finally:
            self.failovers.append((started, time.time()))
        # The nodes notice and reconnect: the next fault should meet them working again.
        self.pause(5)

    def armed(self, action):
        proxy = self.database.link
        proxy.command(f"arm {action}")
        fired = proxy.command("wait-fired 15")
        if fired != "yes":
            proxy.command("disarm")
        self.pause(8 if action.startswith("hold") else 3)

    def hold(self):
        self.armed("hold 6")

    def cut(self):
        self.armed("cut")

    def split(self):
        self.armed("split 0.5")


def settle(nodes, timeout=60):
    """Waits until every node answers and all applied the same change number, unchanged for a moment."""
    deadline = time.time() + timeout
    previous = None
    while time.time() < deadline:
        applied = []
        for node in nodes:
            answer = Connection(node.port, timeout=5).request({"op": "stats"})
            applied.append(((answer or {}).get("replication") or {}).get("appliedSequence"))
        if None not in applied and len(set(applied)) == 1 and applied == previous:
            return applied[0]
        previous = applied
        time.sleep(0.5)
    raise RuntimeError(f"the nodes did not settle on one change number within {timeout} s: {previous}")


def check(history, nodes, lossy_until=None):
    """Every promise, against what each node holds now: (violations, allowances).

    `lossy_until` (async mode: the end of the last failover) lets writes answered before it be lost and
    reads answered before it plus DETECTION have seen what was lost; each such case is listed in
    `allowances` rather than as a violation. Nothing else is relaxed."""
    violations, allowances = [], []
    connections = [Connection(node.port, timeout=30) for node in nodes]

    def may_be_lost(answered):
        return lossy_until is not None and answered < lossy_until

    def may_have_seen_lost(answered):
        return lossy_until is not None and answered < lossy_until + DETECTION

    def broke(message, excused=False):
        """A broken promise: a violation, or an allowance when a failover excuses it (async mode)."""
        (allowances if excused else violations).append(message)

    # Every subject's memberships on every node, fetched at once. One page holds them all: every subject
    # here has one membership, or a promise broke.
    subjects = ([("user", user) for user in history.grants] + [("user", f"user-{key}") for key in history.key_answers]
                + [("transactionId", f"tx-{device}") for device in history.guest])
    requests = [{"op": "memberships", kind: subject, "limit": 1000} for kind, subject in subjects]
    fetched = dict(zip(subjects, zip(*(c.pipelined(requests) for c in connections))))

    def held(kind, subject):
        """The subject's memberships on each node (the same on all, or a violation)."""
        answers = fetched[(kind, subject)]
        lists = [sorted(json.dumps(m, sort_keys=True) for m in (a or {}).get("memberships", [])) for a in answers]
        if any(a is None or not a.get("ok") for a in answers) or any(l != lists[0] for l in lists):
            violations.append(f"nodes differ on {kind} {subject}: {answers}")
        if any(a and a.get("next") for a in answers):
            violations.append(f"{kind} {subject} holds more than 1000 memberships")
        return [json.loads(m) for m in lists[0]]

    final = {}
    for user, (result, node, answered) in history.grants.items():
        final[("user", user)] = held("user", user)
        count = len(final[("user", user)])
        if result == "applied" and count != 1:
            message = f"acknowledged grant of {user} (node {node}) left {count} memberships"
            broke(message, excused=count == 0 and may_be_lost(answered))
        if result == "not_applied" and count != 0:
            violations.append(f"grant of {user} answered not applied on node {node}, yet it was applied")
        if count > 1:
            violations.append(f"one grant of {user} made {count} memberships")
    for key, results in history.key_answers.items():
        memberships = held("user", f"user-{key}")
        final[("user", f"user-{key}")] = memberships
        if len(memberships) > 1:
            violations.append(f"idempotency key {key} made {len(memberships)} memberships")
        acknowledged = [answered for result, answered in results if result == "applied"]
        if acknowledged and len(memberships) != 1:
            message = f"idempotency key {key} was acknowledged and holds {len(memberships)} memberships"
            broke(message, excused=not memberships and all(map(may_be_lost, acknowledged)))
        if all(result == "not_applied" for result, _ in results) and memberships:
            violations.append(f"every grant with key {key} was answered not applied, yet it was applied")
    for device, (result, answered) in history.guest.items():
        # By its transaction: once claimed, the membership is its user's, no longer the device's alone.
        memberships = held("transactionId", f"tx-{device}")
        final[("device", device)] = memberships
        if result == "applied" and len(memberships) != 1:
            message = f"acknowledged guest grant of {device} left {len(memberships)} memberships"
            broke(message, excused=not memberships and may_be_lost(answered))
        if result == "not_applied" and memberships:
            violations.append(f"guest grant of {device} answered not applied, yet it was applied")
        claims = history.claims.get(device)
        if not claims or len(memberships) != 1:
            continue
        owner = memberships[0].get("user")
        movers = [(user, answered) for user, result, claimed, answered in claims if result == "applied" and claimed]
        # A claim that moved it and was lost leaves the device to the other claim (or to no one).
        kept = [user for user, answered in movers if not may_be_lost(answered)]
        if any(user != owner for user, answered in movers if may_be_lost(answered)):
            broke(f"the acknowledged claim of {device} that moved it was lost: {claims}, it belongs to {owner}", excused=True)
        if len(kept) > 1:
            violations.append(f"both claims of {device} moved it: {claims}")
        if kept and owner != kept[0]:
            violations.append(f"{device} was moved to {kept[0]} (acknowledged) but belongs to {owner}")
        for user, result, _, _ in claims:
            if result == "not_applied" and owner == user:
                violations.append(f"the claim of {device} by {user} was answered not applied, yet it moved it")
        if owner is not None and owner not in {user for user, _, _, _ in claims}:
            violations.append(f"{device} belongs to {owner}, who never claimed it")
    by_id = {m["id"]: m for memberships in final.values() for m in memberships}
    for membership, (result, reason, answered) in history.revokes.items():
        revoked = by_id.get(membership, {}).get("status") == "revoked"
        if result == "applied" and not revoked:
            message = f"acknowledged revoke of {membership} is not revoked"
            broke(message, excused=may_be_lost(answered))
        if result == "not_applied" and revoked:
            violations.append(f"revoke of {membership} answered not applied, yet it is revoked")
    for transaction, (membership, answers) in history.events.items():
        found = [t for t in by_id.get(membership, {}).get("transactions", []) if t.get("id") == transaction]
        applied = [answered for a, answered in answers if a and a.get("ok") and a.get("applied")]
        # Once an application is lost, the event may be applied again.
        kept = [answered for answered in applied if not may_be_lost(answered)]
        if len(found) > 1 or len(kept) > 1:
            violations.append(f"event {transaction} applied {len(found)} times ({len(applied)} answers said applied)")
        if applied and not found:
            message = f"event {transaction} was acknowledged applied but is not on {membership}"
            broke(message, excused=not kept)
        definite_no = all(outcome(a) == "not_applied" or (a and a.get("ok") and a.get("reason") == "out_of_order")
                          for a, _ in answers)
        if definite_no and found:
            violations.append(f"event {transaction} was answered not applied everywhere, yet it was applied")
    for user, seq, node, read, written, answered in history.seq_reads:
        if read and read.get("ok") and read.get("active") is not True:
            message = f"check of {user} with minSeq {seq} on node {node} answered without the grant: {read}"
            broke(message, excused=may_be_lost(written) or may_have_seen_lost(answered))
    for kind, subject, node, read, answered in history.reads:
        memberships = final.get((kind, subject))
        if read and read.get("ok") and read.get("active") and memberships is not None and not memberships:
            message = f"node {node} served {kind} {subject} as active; nothing of it was committed"
            broke(message, excused=may_have_seen_lost(answered))
    # Over the whole run, whatever the mode: a number names one change.
    seen = {}
    for connection, seq, description, _ in history.sequences:
        if seq in seen and seen[seq] != description:
            violations.append(f"change number {seq} answered for two changes: {seen[seq]} and {description}")
        seen[seq] = description
    last = {}
    for connection, seq, description, answered in history.sequences:
        if connection in last and seq <= last[connection][0]:
            message = f"change numbers went back on connection {connection}: {last[connection][0]} then {seq}"
            # After a lost change the numbering goes on from the promoted standby's newest.
            broke(message, excused=may_be_lost(last[connection][1]))
        last[connection] = (seq, answered)
    for c in connections:
        c.close()
    return violations, allowances


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("--entitled", required=True, help="the entitled executable")
    parser.add_argument("--duration", type=float, default=80, help="seconds of faults and traffic (default 80: the short form)")
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--replication", choices=["sync", "async"], default="sync",
                        help="how the primary replicates to its standby (default sync: a failover loses nothing acknowledged)")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--report", help="a file for the JSON report")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (logs)")
    arguments = parser.parse_args()

    started = time.time()

    def log(text):
        print(f"[{time.time() - started:6.1f} s] {text}", flush=True)

    directory = tempfile.mkdtemp(prefix="entitled-faults-")
    os.chmod(directory, 0o755)
    database = None
    nodes = []
    stop = threading.Event()
    report = {"seed": arguments.seed, "duration": arguments.duration, "workers": arguments.workers,
              "replication": arguments.replication}
    try:
        try:
            database = Database(directory, arguments.replication, log)
        except Unavailable as reason:
            print(f"skipped: {reason}")
            return 77
        urls = [database.url(database.link), database.url(database.router), database.url(database.router)]
        nodes = [Node(arguments.entitled, f"n{i + 1}", url, directory) for i, url in enumerate(urls)]
        for node in nodes:
            node.start()
        Connection(nodes[1].port).request({"op": "define", "entitlement": "pro", "products": ["pro_monthly"]})
        primary, standby = database.primary, database.standby
        log(f"PostgreSQL: primary {primary.name} on {primary.port}, {arguments.replication} standby {standby.name} on "
            f"{standby.port} through the link proxy on {database.replication.port}; n1 through its fault proxy on "
            f"{database.link.port}, n2 and n3 through the router on {database.router.port}; nodes on "
            f"{[n.port for n in nodes]}, seed {arguments.seed}")
        history = History()
        workers = [Worker(i, nodes, history, stop, arguments.seed * 100 + i) for i in range(arguments.workers)]
        faults = Faults(nodes, database, stop, arguments.duration, arguments.seed, log)
        for thread in workers + [faults]:
            thread.start()
        stop.wait(arguments.duration)
        stop.set()
        faults.join()
        for worker in workers:
            worker.join(timeout=60)
        database.link.command("heal")
        for node in nodes:
            node.signal(signal.SIGCONT)
            if node.process.poll() is not None:
                node.start()
        log(f"workers done: {history.writes_acked} writes acknowledged, {history.reads_done} reads; settling")
        try:
            applied, unsettled = settle(nodes), None
            log(f"settled on change {applied}; checking")
        except RuntimeError as error:
            # A promise broken like the others: what each node holds is still checked and reported.
            applied, unsettled = None, str(error)
            log(f"{error}; checking what they hold")
        # Async mode: what was answered before the end of the last failover may have been lost by one.
        lossy_until = max((end for _, end in faults.failovers), default=None) if arguments.replication == "async" else None
        violations, allowances = check(history, nodes, lossy_until)
        if unsettled:
            violations.insert(0, unsettled)
        if faults.error:
            violations.append(f"a fault could not be carried out: {faults.error}")
        report.update({"faults": faults.done, "acknowledgedWrites": history.writes_acked,
                       "reads": history.reads_done, "answers": history.codes, "appliedSequence": applied,
                       "failovers": [[round(start - started, 1), round(end - started, 1)] for start, end in faults.failovers],
                       "violations": violations, "allowances": allowances})
        log(f"faults {faults.done}; answers {history.codes}; applied change {applied}")
        if lossy_until is not None:
            print(f"async: writes answered before {lossy_until - started:.1f} s (the end of the last failover) "
                  f"need not survive, reads before {lossy_until + DETECTION - started:.1f} s may have seen what was "
                  f"lost; {len(allowances)} such cases (all in the report){':' if allowances else ''}")
            for allowance in allowances[:20]:
                print(f"ALLOWED: {allowance}")
        for violation in violations[:100]:
            print(f"VIOLATION: {violation}")
        if len(violations) > 100:
            print(f"... and {len(violations) - 100} more violations (all in the report)")
        print("every promise held" if not violations else f"{len(violations)} violations")
        return 1 if violations else 0
    finally:
        stop.set()
        for node in nodes:
            node.stop()
        if database:
            database.close()
        if arguments.report:
            with open(arguments.report, "w") as file:
                json.dump(report, file, indent=2)
        if arguments.keep:
            print(f"kept {directory}")
        else:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
