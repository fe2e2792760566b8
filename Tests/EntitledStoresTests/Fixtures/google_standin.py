#!/usr/bin/env python3
"""A stand-in for Google's OAuth token endpoint, the Play Developer API (purchases.subscriptionsv2.get,
purchases.products.get) and Google's signing keys, for entitled-stores' tests. It serves what the test put
in its state (POST /state, a JSON object merged into it) in Google's documented response formats, and
checks what Google checks of a token request: the JWT-bearer grant and an assertion for the Play scope.
Prints "listening on PORT" once ready. Standard library only."""
import base64
import json
import signal
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote

state = {"subscriptions": {}, "products": {}, "jwks": {"keys": []}, "token_requests": 0, "issued": "ya29.test-access-token", "fail": False}
lock = threading.Lock()
SCOPE = "https://www.googleapis.com/auth/androidpublisher"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path == "/token":
            form = parse_qs(body.decode())
            if form.get("grant_type") != ["urn:ietf:params:oauth:grant-type:jwt-bearer"]:
                return self.reply(400, {"error": "unsupported_grant_type"})
            parts = form.get("assertion", [""])[0].split(".")
            if len(parts) != 3:
                return self.reply(400, {"error": "invalid_grant", "error_description": "not a JWT"})
            claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
            if claims.get("scope") != SCOPE or not claims.get("aud", "").endswith("/token") or "@" not in claims.get("iss", ""):
                return self.reply(400, {"error": "invalid_scope"})
            with lock:
                state["token_requests"] += 1
                state["last_assertion"] = ".".join(parts)
            return self.reply(200, {"access_token": state["issued"], "expires_in": 3599, "token_type": "Bearer"})
        if self.path == "/state":
            with lock:
                state.update(json.loads(body))
            return self.reply(200, {"ok": True})
        # purchases.subscriptions.acknowledge and purchases.products.acknowledge
        # (https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.subscriptions/acknowledge,
        # .../purchases.products/acknowledge): POST .../{subscriptionId or productId}/tokens/{token}:acknowledge,
        # an empty response body on success; a purchase acknowledged already is 400.
        if self.path.endswith(":acknowledge"):
            if self.headers.get("Authorization") != "Bearer " + state["issued"]:
                return self.reply(401, {"error": {"code": 401, "message": "Request had invalid authentication credentials."}})
            if state["fail"]:
                return self.reply(503, {"error": {"code": 503, "message": "backend error"}})
            parts = [unquote(p) for p in self.path[: -len(":acknowledge")].split("/")]
            kind, token = parts[6], parts[9] if len(parts) > 9 else None
            with lock:
                found = (state["subscriptions"] if kind == "subscriptions" else state["products"]).get(token)
                if found is None:
                    return self.reply(404, {"error": {"code": 404, "message": "The purchase token was not found."}})
                if kind == "subscriptions":
                    if found.get("acknowledgementState") == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED":
                        return self.reply(400, {"error": {"code": 400, "message": "The subscription purchase is not owned by the user or has been acknowledged."}})
                    found["acknowledgementState"] = "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED"
                else:
                    if found.get("acknowledgementState") == 1:
                        return self.reply(400, {"error": {"code": 400, "message": "The product purchase is not owned by the user or has been acknowledged."}})
                    found["acknowledgementState"] = 1
                state["acknowledged"] = state.get("acknowledged", 0) + 1
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        return self.reply(404, {"error": {"code": 404, "message": "no such route"}})

    def do_GET(self):
        if self.path == "/certs":
            return self.reply(200, state["jwks"])
        if self.path == "/state":
            with lock:
                return self.reply(200, {k: state.get(k) for k in ("token_requests", "last_assertion", "acknowledged", "api_requests")})
        if state["fail"] == 429:
            # Over quota (https://developers.google.com/android-publisher/quotas): 429 RESOURCE_EXHAUSTED.
            body = json.dumps({"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED"}}).encode()
            self.send_response(429)
            self.send_header("Content-Type", "application/json")
            self.send_header("Retry-After", "30")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if state["fail"]:
            return self.reply(503, {"error": {"code": 503, "message": "backend error"}})
        if self.headers.get("Authorization") != "Bearer " + state["issued"]:
            return self.reply(401, {"error": {"code": 401, "message": "Request had invalid authentication credentials."}})
        parts = [unquote(p) for p in self.path.split("/")]
        with lock:
            state["api_requests"] = state.get("api_requests", 0) + 1
        # /androidpublisher/v3/applications/{package}/purchases/subscriptionsv2/tokens/{token}
        # /androidpublisher/v3/applications/{package}/purchases/products/{sku}/tokens/{token}
        if len(parts) >= 9 and parts[1:4] == ["androidpublisher", "v3", "applications"] and parts[5] == "purchases":
            if parts[6] == "subscriptionsv2" and parts[7] == "tokens":
                found = state["subscriptions"].get(parts[8])
            elif parts[6] == "products" and len(parts) >= 10 and parts[8] == "tokens":
                found = state["products"].get(parts[9])
            else:
                found = None
            if found is None:
                return self.reply(404, {"error": {"code": 404, "message": "The purchase token was not found."}})
            return self.reply(200, found)
        return self.reply(404, {"error": {"code": 404, "message": "no such route"}})


# A child of the test runner inherits its blocked signals: unblock them, so SIGTERM stops this server.
signal.pthread_sigmask(signal.SIG_SETMASK, [])
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print("listening on", server.server_address[1], flush=True)
server.serve_forever()
