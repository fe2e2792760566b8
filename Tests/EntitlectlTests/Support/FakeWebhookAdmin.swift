/// A stand-in for entitled-stores' webhook admin routes, serving the documented JSON: the real deliverer
/// gives a message up only after its retry period (at least a day), so the given-up messages and their
/// redelivery are tested against this. Endpoint `crm` has given up `msg_a` (redelivered: taken) and
/// `msg_b` (redelivered: answered 500, so 502); `billing` is set aside. Run with the admin token as its
/// argument.
enum FakeWebhookAdmin {
    static let script = #"""
        import json, sys
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        TOKEN = sys.argv[1]
        def given_up(id, sequence, result):
            return {"id": id, "type": "membership.updated", "sequence": sequence, "attempts": 14, "lastResult": result,
                    "firstTriedAt": "2026-11-20T07:00:00.000Z", "gaveUpAt": "2026-11-21T07:00:01.000Z"}
        state = {"endpoints": [
            {"name": "crm", "url": "https://crm.example.com/in", "cursor": 118, "newest": 120, "lag": 2, "queued": 2, "inFlight": 1,
             "delivered": 117, "failed": 2, "retried": 31, "givenUp": [given_up("msg_a", 57, "HTTP 500"), given_up("msg_b", 58, "timed out")]},
            {"name": "billing", "url": "http://10.0.0.5/hooks", "cursor": 90, "newest": 120, "lag": 30, "queued": 0, "inFlight": 0,
             "delivered": 89, "failed": 1, "retried": 0, "setAside": {"reason": "HTTP 410 Gone", "since": "2026-11-21T08:00:00.000Z"}, "givenUp": []},
        ]}
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *arguments):
                pass
            def answer(self, status, body, kind="application/json"):
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            def authorized(self):
                if self.headers.get("Authorization") == "Bearer " + TOKEN:
                    return True
                self.answer(401, "the webhook admin routes need Authorization: Bearer and the token of the webhooks file's admin-token-file", "text/plain")
                return False
            def do_GET(self):
                if not self.authorized():
                    return
                if self.path == "/webhooks":
                    return self.answer(200, json.dumps(state))
                self.answer(404, "not found", "text/plain")
            def do_POST(self):
                if not self.authorized():
                    return
                parts = self.path.strip("/").split("/")
                if len(parts) != 4 or parts[0] != "webhooks" or parts[2] != "redeliver":
                    return self.answer(404, "not found", "text/plain")
                if parts[1] != "crm":
                    return self.answer(404, "no webhook endpoint is named %s; the endpoints are crm, billing" % parts[1], "text/plain")
                crm = state["endpoints"][0]
                if parts[3] == "msg_a":
                    crm["givenUp"] = [m for m in crm["givenUp"] if m["id"] != "msg_a"]
                    return self.answer(200, json.dumps({"delivered": True, "result": "delivered (HTTP 200)"}))
                if parts[3] == "msg_b":
                    return self.answer(502, json.dumps({"delivered": False, "result": "HTTP 500"}))
                self.answer(404, "endpoint crm has given up no message %s" % parts[3], "text/plain")
        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print("listening on %d" % server.server_address[1], flush=True)
        server.serve_forever()
        """#

    /// Starts it, accepting `token`.
    static func start(token: String) throws -> PythonServer {
        try PythonServer(arguments: ["-c", script, token])
    }
}
