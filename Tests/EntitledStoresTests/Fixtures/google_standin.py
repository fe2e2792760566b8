#!/usr/bin/env python3
"""A stand-in for Google's OAuth token endpoint, the Play Developer API (purchases.subscriptionsv2.get,
purchases.products.get, their acknowledge, purchases.voidedpurchases.list) and Google's signing keys, for
entitled-stores' tests. It serves what the test put in its state (POST /state, a JSON object merged into it)
in Google's documented response formats, and checks what Google checks of a token request: the JWT-bearer
grant and an assertion for the Play scope.

State: "subscriptions" {token: SubscriptionPurchaseV2}, "products" {token: ProductPurchase}, "voided"
[VoidedPurchase, with a stand-in-only "subscription": true for a subscription's], "jwks", "issued" (the
access token handed out), "fail" (false, true for 503, or 429: every API request), "fail_acknowledge"
({"status": 503 | 429, "count": N}: the next N acknowledgements fail so, in Google's error object), and
standin_faults' "fail_next" and "delay" (GET requests only, errors in Google's error object). GET /state returns
the counts, "acknowledged" and "acknowledged_tokens" (each acknowledgement that succeeded, in order) among them.
Prints "listening on PORT" once ready. Standard library only."""
import base64
import json
import signal
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

import standin_faults as faults

state = dict(faults.defaults())
state.update({"subscriptions": {}, "products": {}, "voided": [], "jwks": {"keys": []}, "token_requests": 0, "issued": "ya29.test-access-token", "fail": False})
lock = faults.lock
SCOPE = "https://www.googleapis.com/auth/androidpublisher"
DAY_MS = 86_400_000


def google_error(handler, status, message, reason, headers=()):
    """Google's error object (https://cloud.google.com/apis/design/errors#http_mapping)."""
    faults.send_json(handler, status, {"error": {"code": status, "message": message, "status": reason}}, headers)


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
            with lock:
                plan = state.get("fail_acknowledge")
                failing = dict(plan) if plan and plan.get("count", 0) > 0 else None
                if failing:
                    plan["count"] -= 1
            if failing:
                # Google's error object (https://cloud.google.com/apis/design/errors#http_mapping): 429
                # RESOURCE_EXHAUSTED over the API's quota (https://developers.google.com/android-publisher/quotas),
                # 503 UNAVAILABLE when the backend cannot answer, 400 FAILED_PRECONDITION when the purchase is in
                # no state to be acknowledged; the purchase stays unacknowledged.
                status = failing["status"]
                message, reason = {
                    429: ("Quota exceeded", "RESOURCE_EXHAUSTED"),
                    400: ("The purchase cannot be acknowledged in its current state.", "FAILED_PRECONDITION"),
                }.get(status, ("The service is currently unavailable.", "UNAVAILABLE"))
                return google_error(self, status, message, reason)
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
                state.setdefault("acknowledged_tokens", []).append(token)
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
                return self.reply(200, {k: state.get(k) for k in (
                    "token_requests", "last_assertion", "acknowledged", "acknowledged_tokens", "api_requests", "requests", "request_times", "paths", "max_in_flight")})
        fault = faults.arrive(state, "GET " + self.path)
        try:
            faults.wait(state)
            if fault and faults.misbehave(self, fault):
                return
            if fault:
                headers = [("Retry-After", fault["retry_after"])] if fault.get("retry_after") else []
                return google_error(self, fault["status"], "Quota exceeded" if fault["status"] == 429 else "backend error",
                                    "RESOURCE_EXHAUSTED" if fault["status"] == 429 else "INTERNAL", headers)
            self.api_get()
        finally:
            faults.leave(state)

    def api_get(self):
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
        url = urlsplit(self.path)
        parts = [unquote(p) for p in url.path.split("/")]
        with lock:
            state["api_requests"] = state.get("api_requests", 0) + 1
        if len(parts) == 7 and parts[1:4] == ["androidpublisher", "v3", "applications"] and parts[5:7] == ["purchases", "voidedpurchases"]:
            return self.voided(parse_qs(url.query))
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


    def voided(self, query):
        """purchases.voidedpurchases.list
        (https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.voidedpurchases/list):
        startTime "cannot be older than 30 days" (default: 30 days ago), endTime "cannot be greater than the
        current time" (default: now), both in milliseconds and ignored once a page token is given; type 0
        (the default) lists one-time products only, 1 subscriptions too; maxResults at most 1000 (the
        default, https://developers.google.com/android-publisher/voided-purchases); ordered by voidedTimeMillis;
        a VoidedPurchasesListResponse {pageInfo, tokenPagination {nextPageToken}, voidedPurchases}."""
        now = int(time.time() * 1000)
        token = query.get("token", [None])[0]
        if token is not None:
            try:
                window = json.loads(base64.urlsafe_b64decode(token.encode()))
                start, end, kind, offset = window["s"], window["e"], window["t"], window["o"]
            except (ValueError, KeyError):
                return google_error(self, 400, "Invalid page token.", "INVALID_ARGUMENT")
        else:
            try:
                start = int(query.get("startTime", [now - 30 * DAY_MS])[0])
                end = int(query.get("endTime", [now])[0])
                kind = int(query.get("type", [0])[0])
            except ValueError:
                return google_error(self, 400, "Invalid value.", "INVALID_ARGUMENT")
            offset = 0
            # A minute of grace for the caller's clock: "now minus 30 days" as the caller reckons it.
            if start < now - 30 * DAY_MS - 60_000:
                return google_error(self, 400, "startTime cannot be older than 30 days.", "INVALID_ARGUMENT")
            if end > now + 60_000:
                return google_error(self, 400, "endTime cannot be greater than the current time.", "INVALID_ARGUMENT")
            if start > end:
                return google_error(self, 400, "startTime must not be after endTime.", "INVALID_ARGUMENT")
        size = int(query.get("maxResults", [1000])[0])
        if not 1 <= size <= 1000:
            return google_error(self, 400, "maxResults must be between 1 and 1000.", "INVALID_ARGUMENT")
        with lock:
            selected = [v for v in state["voided"] if start <= int(v["voidedTimeMillis"]) <= end and (kind == 1 or not v.get("subscription"))]
        selected.sort(key=lambda v: int(v["voidedTimeMillis"]))
        page = [{k: v for k, v in entry.items() if k != "subscription"} for entry in selected[offset:offset + size]]
        answer = {"pageInfo": {"totalResults": len(selected), "resultPerPage": size, "startIndex": offset}, "voidedPurchases": page}
        if offset + size < len(selected):
            following = json.dumps({"s": start, "e": end, "t": kind, "o": offset + size}).encode()
            answer["tokenPagination"] = {"nextPageToken": base64.urlsafe_b64encode(following).decode()}
        self.reply(200, answer)


# A child of the test runner inherits its blocked signals: unblock them, so SIGTERM stops this server.
signal.pthread_sigmask(signal.SIG_SETMASK, [])
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print("listening on", server.server_address[1], flush=True)
server.serve_forever()
