"""A TCP proxy between an entitled node and PostgreSQL that can lose a COMMIT's answer.

Usage: commit_cutting_proxy.py TARGET_PORT ARM_FILE
Prints the port it listens on (127.0.0.1), then forwards every connection to 127.0.0.1:TARGET_PORT.
While ARM_FILE exists, the first client message that holds the query COMMIT of a transaction that wrote
changes (an INSERT INTO the changes table since that connection's previous COMMIT: a group of writes, not
a transaction of the node's own reads) is forwarded to the server, and 0.3 s later (the server has
committed by then) both sides of that connection are closed, so the client never learns the outcome;
ARM_FILE is then removed and the proxy goes on forwarding.
"""
import os
import signal
import socket
import sys
import threading
import time

# Descriptors inherited from the test process (other tests' pipes) would keep those pipes open for as long as
# the proxy lives.
os.closerange(3, 4096)
# The test runner's threads block most signals, and a child inherits the mask: without this the proxy
# would outlive the test's SIGTERM.
signal.pthread_sigmask(signal.SIG_SETMASK, [])

target_port = int(sys.argv[1])
arm_file = sys.argv[2]
lock = threading.Lock()


def pump(source, destination, watch_commit, cut):
    """Forwards source to destination. `cut` is shared by a connection's two pumps: once set, the
    server's answers are dropped, so the client never sees the COMMIT's outcome."""
    wrote_changes = False
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            if cut.is_set() and not watch_commit:
                continue
            if watch_commit and b".changes (" in data and b"INSERT INTO" in data:
                wrote_changes = True
            if watch_commit and b"COMMIT\x00" in data:
                with lock:
                    armed = os.path.exists(arm_file)
                    if armed and wrote_changes:
                        os.remove(arm_file)
                        cut.set()
                wrote_changes = False
            destination.sendall(data)
            if watch_commit and cut.is_set():
                time.sleep(0.3)
                for s in (source, destination):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                break
    except OSError:
        pass
    for s in (source, destination):
        try:
            s.close()
        except OSError:
            pass


listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(64)
print(listener.getsockname()[1], flush=True)
while True:
    client, _ = listener.accept()
    try:
        server = socket.create_connection(("127.0.0.1", target_port))
    except OSError:
        client.close()
        continue
    cut = threading.Event()
    threading.Thread(target=pump, args=(client, server, True, cut), daemon=True).start()
    threading.Thread(target=pump, args=(server, client, False, cut), daemon=True).start()
