"""A TCP proxy between entitled nodes and PostgreSQL that makes a network misbehave on command.

Usage: python3 fault_proxy.py TARGET_PORT [TARGET_HOST]

Prints one line, "LISTEN_PORT CONTROL_PORT" (both on 127.0.0.1), then forwards every connection made to
LISTEN_PORT to TARGET_HOST:TARGET_PORT (or to where `target` last pointed it). It reads PostgreSQL's wire
protocol (message frames, not bytes), so it knows which client message commits a *group of writes*: the
call of a schema's `commit_group` procedure (which commits before it answers), or a COMMIT after an INSERT
INTO a `changes` table since the connection's previous COMMIT or ROLLBACK.

It carries streaming replication too (a standby's walreceiver with `primary_conninfo` pointing here,
`pg_basebackup`): a replication connection's startup (`replication=true`) is an ordinary startup message,
its commands are simple queries, and what follows is CopyData frames either way, which are forwarded as
they come. Nothing there commits a group, so no armed action fires on it; `partition` cuts it like any link.

Commands, one per line on CONTROL_PORT, each answered with one line ("ok", or what was asked):

(Below, "the group's COMMIT" is that message.)

  arm cut          at the next group's COMMIT: forward it, drop the server's answer, and close both sides
                   0.3 s later (committed; the client never learns it)
  arm split D      at the next group's COMMIT: reset the client's side at once (it sees its connection
                   fail with the COMMIT unanswered) and hand the COMMIT to the server D seconds later, as a
                   pooler or a slow network between them would (committed after the client gave up)
  arm drop         at the next group's COMMIT: close both sides without forwarding it (not committed)
  arm hold D       at the next group's COMMIT: hold it (and what follows on that connection) for D seconds,
                   then forward it and go on (a stalled network; the client may give up meanwhile)
  arm isolate      at the next group's COMMIT: start a partition (below) without forwarding it: the client
                   loses every connection and cannot make new ones until `heal` (not committed)
  disarm           forget an armed action that has not fired
  fired            "yes" once the armed action fired, else "no"
  wait-fired T     waits up to T seconds for it: "yes" or "no"
  partition        closes every open connection and resets new ones until `heal`
  heal             ends a partition
  target PORT [HOST]
                   new connections go to HOST:PORT (HOST 127.0.0.1 when left out) from now on, and every
                   open connection is closed with a reset, as a failover to another database server breaks
                   them (re-points the proxy at a promoted standby)
  connections      how many connections are open
  quit             stops the proxy

Used by the cluster tests (Tests/EntitledClusterTests) and by Tools/faults/run.py.
"""
import os
import signal
import socket
import struct
import sys
import threading
import time

# The test runner's threads block most signals and a child inherits the mask: without this the proxy would
# outlive the runner's SIGTERM. Descriptors inherited from it (other tests' pipes) would stay open as long
# as the proxy lives.
signal.pthread_sigmask(signal.SIG_SETMASK, [])
os.closerange(3, 4096)

STARTUP_CODES_WITHOUT_REPLY_PHASE = {80877103, 80877104}  # SSLRequest, GSSENCRequest: startup goes on


class Control:
    """What the proxy was told, shared by every connection's threads."""

    def __init__(self):
        self.lock = threading.Condition()
        self.armed = None  # (mode, seconds)
        self.fired = False
        self.partitioned = False
        self.links = set()
        self.target = None  # (host, port) new connections go to: the command line's, then `target`'s
        # Counts the partitions and re-targets: a connection made while one happened is not kept.
        self.epoch = 0

    def take_armed(self):
        with self.lock:
            armed, self.armed = self.armed, None
            if armed:
                self.fired = True
                self.lock.notify_all()
            return armed


control = Control()


def reset(sock):
    """Closes `sock` with a reset (SO_LINGER 0): the peer's next read or write fails at once."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        # Wakes the link's thread blocked reading it. Until that read returns, the kernel keeps the socket
        # (close only drops the descriptor) and sends no reset: an idle peer (a standby's walreceiver, a
        # node's LISTEN connection) would go on believing in its connection.
        sock.shutdown(socket.SHUT_RD)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


def close(sock):
    for how in (socket.SHUT_RDWR,):
        try:
            sock.shutdown(how)
        except OSError:
            pass
    try:
        sock.close()
    except OSError:
        pass


class Link:
    """One client connection and its server connection."""

    def __init__(self, client, server):
        self.client = client
        self.server = server
        self.drop_answers = False
        self.closed = False
        self.lock = threading.Lock()

    def shut(self, hard=False):
        with self.lock:
            if self.closed:
                return
            self.closed = True
        (reset if hard else close)(self.client)
        close(self.server)
        with control.lock:
            control.links.discard(self)

    def client_to_server(self):
        buffer = b""
        started = False
        wrote_changes = False
        try:
            while True:
                data = self.client.recv(65536)
                if not data:
                    break
                buffer += data
                out = b""
                while True:
                    if not started:
                        if len(buffer) < 8:
                            break
                        length, code = struct.unpack("!ii", buffer[:8])
                        if len(buffer) < length:
                            break
                        out += buffer[:length]
                        buffer = buffer[length:]
                        if code not in STARTUP_CODES_WITHOUT_REPLY_PHASE:
                            started = True
                        continue
                    if len(buffer) < 5:
                        break
                    length = struct.unpack("!i", buffer[1:5])[0]
                    if len(buffer) < 1 + length:
                        break
                    kind, message = buffer[:1], buffer[: 1 + length]
                    if kind == b"P":
                        query = message[5:].split(b"\x00", 2)[1] if b"\x00" in message[5:] else b""
                        text = query.strip().upper()
                        commits_group = False
                        if text.startswith(b"CALL") and b".COMMIT_GROUP(" in text:
                            commits_group = True
                        elif b"INSERT INTO" in text and b".CHANGES" in text:
                            wrote_changes = True
                        elif text in (b"COMMIT", b"ROLLBACK"):
                            commits_group = text == b"COMMIT" and wrote_changes
                            wrote_changes = False
                        if commits_group:
                            armed = control.take_armed()
                            if armed:
                                self.server.sendall(out)
                                self.act(armed, buffer)
                                return
                    out += message
                    buffer = buffer[1 + length :]
                if out:
                    self.server.sendall(out)
        except OSError:
            pass
        self.shut()

    def act(self, armed, held):
        """Does the armed action with `held`, the client's bytes from the COMMIT on."""
        mode, seconds = armed
        if mode == "cut":
            self.drop_answers = True
            self.server.sendall(held)
            time.sleep(0.3)
            self.shut()
        elif mode == "drop":
            self.shut(hard=True)
        elif mode == "isolate":
            partition()
        elif mode == "split":
            self.drop_answers = True
            with self.lock:
                self.closed = True
            reset(self.client)
            time.sleep(seconds)
            try:
                self.server.sendall(held)
                time.sleep(0.5)
            except OSError:
                pass
            close(self.server)
            with control.lock:
                control.links.discard(self)
        elif mode == "hold":
            time.sleep(seconds)
            try:
                self.server.sendall(held)
            except OSError:
                pass
            # Go on forwarding as before.
            threading.Thread(target=self.client_to_server_after_hold, daemon=True).start()

    def client_to_server_after_hold(self):
        try:
            while True:
                data = self.client.recv(65536)
                if not data:
                    break
                self.server.sendall(data)
        except OSError:
            pass
        self.shut()

    def server_to_client(self):
        try:
            while True:
                data = self.server.recv(65536)
                if not data:
                    break
                if self.drop_answers:
                    continue
                self.client.sendall(data)
        except OSError:
            pass
        if not self.drop_answers:
            self.shut()


def partition():
    """Closes every open connection (with a reset) and refuses new ones until `heal`."""
    with control.lock:
        control.partitioned = True
        control.epoch += 1
        links = list(control.links)
    for link in links:
        link.shut(hard=True)


def retarget(target):
    """Sends new connections to `target` and closes every open one with a reset, as a failover does."""
    with control.lock:
        control.target = target
        control.epoch += 1
        links = list(control.links)
    for link in links:
        link.shut(hard=True)


def serve(listener):
    while True:
        client, _ = listener.accept()
        with control.lock:
            partitioned, target, epoch = control.partitioned, control.target, control.epoch
        if partitioned:
            reset(client)
            continue
        try:
            server = socket.create_connection(target)
        except OSError:
            reset(client)
            continue
        for sock in (client, server):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        link = Link(client, server)
        with control.lock:
            # A partition or a re-target while this connected closed every link it knew of: this one
            # (possibly to the old target) goes the same way rather than outlive it.
            current = control.epoch == epoch
            if current:
                control.links.add(link)
        if not current:
            reset(client)
            close(server)
            continue
        threading.Thread(target=link.client_to_server, daemon=True).start()
        threading.Thread(target=link.server_to_client, daemon=True).start()


def command(line):
    words = line.split()
    if not words:
        return "error: empty command"
    verb = words[0]
    if verb == "arm" and len(words) >= 2 and words[1] in ("cut", "split", "drop", "hold", "isolate"):
        seconds = float(words[2]) if len(words) > 2 else 1.0
        with control.lock:
            control.armed = (words[1], seconds)
            control.fired = False
        return "ok"
    if verb == "disarm":
        with control.lock:
            control.armed = None
        return "ok"
    if verb == "fired":
        with control.lock:
            return "yes" if control.fired else "no"
    if verb == "wait-fired":
        deadline = time.monotonic() + (float(words[1]) if len(words) > 1 else 10.0)
        with control.lock:
            while not control.fired and time.monotonic() < deadline:
                control.lock.wait(max(0.0, deadline - time.monotonic()))
            return "yes" if control.fired else "no"
    if verb == "partition":
        partition()
        return "ok"
    if verb == "heal":
        with control.lock:
            control.partitioned = False
        return "ok"
    if verb == "target" and len(words) in (2, 3) and words[1].isdigit():
        retarget((words[2] if len(words) == 3 else "127.0.0.1", int(words[1])))
        return "ok"
    if verb == "connections":
        with control.lock:
            return str(len(control.links))
    if verb == "quit":
        os._exit(0)
    return "error: unknown command " + line.strip()


def control_loop(listener):
    while True:
        connection, _ = listener.accept()
        threading.Thread(target=control_session, args=(connection,), daemon=True).start()


def control_session(connection):
    reader = connection.makefile("r")
    try:
        for line in reader:
            connection.sendall((command(line) + "\n").encode())
    except OSError:
        pass
    connection.close()


def main():
    control.target = (sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1", int(sys.argv[1]))
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    controller = socket.socket()
    controller.bind(("127.0.0.1", 0))
    controller.listen(8)
    print(listener.getsockname()[1], controller.getsockname()[1], flush=True)
    threading.Thread(target=control_loop, args=(controller,), daemon=True).start()
    serve(listener)


if __name__ == "__main__":
    main()
