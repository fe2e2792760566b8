#!/usr/bin/env python3
"""A receiver of outgoing webhooks for the tests, written from the Standard Webhooks specification
(https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md), as a real
HTTP server on a free loopback port ("listening on PORT" on stdout).

Every POST is verified: with the `standardwebhooks` package (the specification's reference library for
Python) when it can be imported, else with the specification's algorithm written here from its text
(HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>" with the base64 key after "whsec_", compared with
each space-separated "v1,<base64>" entry, the timestamp within five minutes). A message failing it is
answered 401 and counted, never recorded as delivered.

GET /state answers what it took: {"deliveries": [...], "rejected": N, "requests": N, "verifier": ...}.
POST /state merges settings: {"secrets": [...]} (the receiver's, any of which verifies),
{"fail_next": {"status": 500 | 410 | 429 | 502 | 504 | "close", "count": N, "retry_after": "2"}},
{"delay_ms": M} (each answer waits that long, to be a slow receiver), {"fail_user": U} (every message about
user U answered 500, until set to null).
"""
import base64, hashlib, hmac, json, signal, socket, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

try:
    import standardwebhooks  # type: ignore
    VERIFIER = "standardwebhooks " + getattr(standardwebhooks, "__version__", "")
except ImportError:
    standardwebhooks = None
    VERIFIER = "specification (stdlib hmac)"

lock = threading.Lock()
state = {"secrets": [], "fail_next": None, "delay_ms": 0, "fail_user": None, "deliveries": [], "rejected": 0, "requests": 0,
         "in_flight": 0, "max_in_flight": 0}


def verified(body, headers):
    """Whether the message's signature holds for one of the receiver's secrets."""
    for secret in state["secrets"]:
        if standardwebhooks is not None:
            try:
                standardwebhooks.Webhook(secret).verify(body, headers)
                return True
            except Exception:
                continue
        msg_id, stamp, signature = headers.get("webhook-id"), headers.get("webhook-timestamp"), headers.get("webhook-signature")
        if not (msg_id and stamp and signature) or abs(time.time() - int(stamp)) > 300:
            return False
        key = base64.b64decode(secret[len("whsec_"):]) if secret.startswith("whsec_") else secret.encode()
        expected = base64.b64encode(hmac.new(key, f"{msg_id}.{stamp}.".encode() + body, hashlib.sha256).digest()).decode()
        for entry in signature.split(" "):
            version, _, value = entry.partition(",")
            if version == "v1" and hmac.compare_digest(value, expected):
                return True
    return False


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, payload=b"", headers=None):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self):
        with lock:
            snapshot = {k: state[k] for k in ("deliveries", "rejected", "requests", "max_in_flight")}
            snapshot["verifier"] = VERIFIER
        self.answer(200, json.dumps(snapshot).encode(), {"Content-Type": "application/json"})

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/state":
            with lock:
                state.update(json.loads(body))
            return self.answer(200)
        headers = {name.lower(): value for name, value in self.headers.items()}
        with lock:
            state["in_flight"] += 1
            state["max_in_flight"] = max(state["max_in_flight"], state["in_flight"])
        try:
            self.take(body, headers)
        finally:
            with lock:
                state["in_flight"] -= 1

    def take(self, body, headers):
        """Answers one message: a planned failure, a delay, a signature check, then 204 and the record."""
        with lock:
            state["requests"] += 1
            delay = state["delay_ms"] / 1000
            plan = state["fail_next"]
            failure = None
            if plan and plan.get("count", 0) > 0:
                plan["count"] -= 1
                failure = plan
        if delay:
            time.sleep(delay)
        if failure is not None:
            if failure["status"] == "close":
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            extra = {"Retry-After": failure["retry_after"]} if failure.get("retry_after") else {}
            if 300 <= int(failure["status"]) < 400:
                extra["Location"] = "/moved"  # a sender that follows it would POST there as a GET without the body
            return self.answer(int(failure["status"]), b"not now", extra)
        if not verified(body, headers):
            with lock:
                state["rejected"] += 1
            return self.answer(401, b"bad signature")
        payload = json.loads(body)
        data = payload.get("data", {})
        membership = data.get("membership") or {}
        with lock:
            refused_user = state["fail_user"] is not None and membership.get("user") == state["fail_user"]
        if refused_user:
            return self.answer(500, b"cannot take this one")
        with lock:
            state["deliveries"].append({
                "id": headers.get("webhook-id"), "type": payload.get("type"), "sequence": data.get("sequence"),
                "membership": membership.get("id"), "user": membership.get("user"), "device": membership.get("device"),
                "verifier": VERIFIER,
            })
        self.answer(204)


def main():
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    # --port N: listen there (a receiver that went down comes back at its address); else a free port.
    port = int(sys.argv[sys.argv.index("--port") + 1]) if "--port" in sys.argv else 0
    ThreadingHTTPServer.allow_reuse_address = True
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
