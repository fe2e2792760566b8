#!/usr/bin/env python3
"""A stand-in for the App Store Server API (https://developer.apple.com/documentation/appstoreserverapi),
for entitled-stores' tests: one process is one environment (production or sandbox), and the test runs one
of each. Standard library, plus `cryptography` to verify the JWT's ES256 signature. Written from Apple's
documentation:

- Every request carries a JWT (https://developer.apple.com/documentation/appstoreserverapi/generating-json-web-tokens-for-api-requests):
  header alg ES256, kid, typ JWT; claims iss, iat, exp, aud "appstoreconnect-v1", bid; signed with the
  in-app purchase key. A token that is not so, signed with another key, expired, or whose exp is more than
  60 minutes after its iat is answered 401 with no body (the reason is kept in the state's "last_refusal").
- Get All Subscription Statuses, GET /inApps/v1/subscriptions/{transactionId}
  (https://developer.apple.com/documentation/appstoreserverapi/get-all-subscription-statuses): a
  StatusResponse {environment, bundleId, appAppleId, data}.
- Get Transaction History v2, GET /inApps/v2/history/{transactionId}?revision=&sort=
  (https://developer.apple.com/documentation/appstoreserverapi/get-transaction-history): a HistoryResponse
  {revision, hasMore, bundleId, appAppleId, environment, signedTransactions}, "page_size" transactions a
  page (Apple: up to 20); sort ASCENDING (the default) keeps the order the test gave, DESCENDING reverses it.
- Get Notification History, POST /inApps/v1/notifications/history?paginationToken=
  (https://developer.apple.com/documentation/appstoreserverapi/get-notification-history): a
  NotificationHistoryRequest body {startDate, endDate, transactionId?, onlyFailures?}; a
  NotificationHistoryResponse {notificationHistory, hasMore, paginationToken}, "page_size" a page (Apple:
  up to 20). History is kept 180 days in production and 30 in the sandbox: an older startDate is 400
  StartDateTooFarInPastError (4000012); a startDate after the endDate 4000013; a missing one 4000015/4000016;
  an endDate in the future is taken as now.
- Errors are {errorCode, errorMessage} (https://developer.apple.com/documentation/appstoreserverapi/error-codes):
  a transaction id of another environment or unknown is 404 TransactionIdNotFoundError (4040010); one
  that is not digits 400 InvalidTransactionIdError (4000006); a bad revision 4000005, sort 4000021,
  pagination token 4000014; 429 RateLimitExceededError (4290000) with Retry-After, "a UNIX time, in
  milliseconds" (https://developer.apple.com/documentation/appstoreserverapi/identifying-rate-limits); 500
  GeneralInternalError (5000000).

State (POST /state merges a JSON object): "environment" ("Production" or "Sandbox"), "bundle_id",
"app_apple_id", "issuer_id", "key_id", "public_key" (the in-app purchase key's public half, PEM),
"statuses" {transactionId: StatusResponse.data}, "histories" {transactionId: [signed transactions]},
"notifications" [{"signedPayload", "sendAttempts", "date" (ms), "transactionId"?}], "page_size", and
standin_faults' "fail_next" (429 and 500 answered with Apple's error bodies; a 429's Retry-After is its
"retry_after", else now plus its "retry_after_ms", default 1000) and "delay". GET /state
returns the counts, "tokens" (the distinct JWTs seen) and "last_refusal". Prints "listening on PORT" once
ready."""
import base64
import json
import re
import signal
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.hazmat.primitives.serialization import load_pem_public_key

import standin_faults as faults

state = dict(faults.defaults())
state.update({
    "environment": "Production", "bundle_id": "com.example.app", "app_apple_id": 1234567890, "issuer_id": "", "key_id": "",
    "public_key": None, "statuses": {}, "histories": {}, "notifications": [], "page_size": 20, "tokens": [], "last_refusal": None,
})
DAY_MS = 86_400_000


def b64decode(part):
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def refusal(header):
    """Why the JWT of `header` (the Authorization value) is refused, or None when Apple would take it."""
    if not header or not header.startswith("Bearer "):
        return "no bearer token"
    token = header[7:]
    parts = token.split(".")
    if len(parts) != 3:
        return "not a JWT"
    try:
        head, claims, signature = json.loads(b64decode(parts[0])), json.loads(b64decode(parts[1])), b64decode(parts[2])
    except ValueError:
        return "not a JWT"
    if head.get("alg") != "ES256" or head.get("typ") != "JWT" or head.get("kid") != state["key_id"]:
        return "header is not alg ES256, typ JWT, kid %s: %s" % (state["key_id"], head)
    if len(signature) != 64 or not state["public_key"]:
        return "signature is not 64 bytes of r and s"
    key = load_pem_public_key(state["public_key"].encode())
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    try:
        key.verify(der, (parts[0] + "." + parts[1]).encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return "signature does not verify with the configured key"
    now = int(time.time())
    if claims.get("aud") != "appstoreconnect-v1" or claims.get("bid") != state["bundle_id"] or claims.get("iss") != state["issuer_id"]:
        return "claims are not aud appstoreconnect-v1, bid %s, iss %s: %s" % (state["bundle_id"], state["issuer_id"], claims)
    iat, exp = claims.get("iat"), claims.get("exp")
    if not isinstance(iat, int) or not isinstance(exp, int):
        return "iat or exp is not whole seconds"
    if exp > iat + 3600:
        return "exp is more than 60 minutes after iat"
    if exp <= now:
        return "expired"
    if iat > now + 60:
        return "issued in the future"
    with faults.lock:
        if token not in state["tokens"]:
            state["tokens"].append(token)
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def error(self, status, code, message, headers=()):
        faults.send_json(self, status, {"errorCode": code, "errorMessage": message}, headers)

    def do_GET(self):
        if self.path == "/state":
            with faults.lock:
                return faults.send_json(self, 200, {k: v for k, v in state.items() if k not in ("histories", "statuses", "notifications")})
        self.api("GET", b"")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path == "/state":
            with faults.lock:
                state.update(json.loads(body))
            return faults.send_json(self, 200, {})
        self.api("POST", body)

    def api(self, method, body):
        fault = faults.arrive(state, method + " " + self.path)
        try:
            faults.wait(state)
            if fault and faults.misbehave(self, fault):
                return
            why = refusal(self.headers.get("Authorization"))
            if why:
                state["last_refusal"] = why
                self.send_response(401)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if fault and fault["status"] == 429:
                # "retry_after_ms": a wait from now, written as Apple writes it (a UNIX time in milliseconds).
                retry = fault.get("retry_after") or str(int(time.time() * 1000) + fault.get("retry_after_ms", 1000))
                return self.error(429, 4290000, "Rate limit exceeded.", [("Retry-After", retry)])
            if fault:
                return self.error(fault["status"], 5000000, "An unknown error occurred.")
            self.route(method, body)
        finally:
            faults.leave(state)

    def route(self, method, body):
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        found = re.fullmatch(r"/inApps/v1/subscriptions/([^/]+)", url.path)
        if method == "GET" and found:
            return self.statuses(unquote(found.group(1)))
        found = re.fullmatch(r"/inApps/v2/history/([^/]+)", url.path)
        if method == "GET" and found:
            return self.history(unquote(found.group(1)), query)
        if method == "POST" and url.path == "/inApps/v1/notifications/history":
            return self.notifications(body, query)
        self.error(404, 4040000, "no such endpoint")

    def known(self, transaction, table):
        if not transaction.isdigit():
            self.error(400, 4000006, "Invalid transaction id.")
            return None
        found = state[table].get(transaction)
        if found is None:
            self.error(404, 4040010, "Transaction id not found.")
        return found

    def statuses(self, transaction):
        data = self.known(transaction, "statuses")
        if data is not None:
            faults.send_json(self, 200, {"environment": state["environment"], "bundleId": state["bundle_id"], "appAppleId": state["app_apple_id"], "data": data})

    def history(self, transaction, query):
        transactions = self.known(transaction, "histories")
        if transactions is None:
            return
        sort = query.get("sort", ["ASCENDING"])[0]
        if sort not in ("ASCENDING", "DESCENDING"):
            return self.error(400, 4000021, "Invalid sort.")
        ordered = transactions if sort == "ASCENDING" else list(reversed(transactions))
        revision = query.get("revision", [None])[0]
        start = 0
        if revision is not None:
            found = re.fullmatch(r"rev-(\d+)", revision)
            if not found:
                return self.error(400, 4000005, "Invalid request revision.")
            start = int(found.group(1))
        end = start + state["page_size"]
        faults.send_json(self, 200, {
            "revision": "rev-%d" % min(end, len(ordered)), "hasMore": end < len(ordered), "bundleId": state["bundle_id"],
            "appAppleId": state["app_apple_id"], "environment": state["environment"], "signedTransactions": ordered[start:end],
        })

    def notifications(self, body, query):
        try:
            request = json.loads(body)
        except ValueError:
            return self.error(400, 4000000, "Invalid request.")
        start, end = request.get("startDate"), request.get("endDate")
        if not isinstance(start, int):
            return self.error(400, 4000015, "Invalid start date.")
        if not isinstance(end, int):
            return self.error(400, 4000016, "Invalid end date.")
        now = int(time.time() * 1000)
        days = 180 if state["environment"] == "Production" else 30
        if start < now - days * DAY_MS:
            return self.error(400, 4000012, "Invalid request. The startDate is earlier than the earliest allowed date.")
        if start > end:
            return self.error(400, 4000013, "Invalid request. The startDate is after the endDate.")
        end = min(end, now)
        offset = 0
        token = query.get("paginationToken", [None])[0]
        if token is not None:
            found = re.fullmatch(r"page-(\d+)", token)
            if not found:
                return self.error(400, 4000014, "Invalid pagination token.")
            offset = int(found.group(1))
        selected = [n for n in state["notifications"] if start <= n["date"] <= end]
        if request.get("transactionId"):
            selected = [n for n in selected if n.get("transactionId") == request["transactionId"]]
        if request.get("onlyFailures"):
            selected = [n for n in selected if any(a.get("sendAttemptResult") != "SUCCESS" for a in n.get("sendAttempts", []))]
        page = selected[offset:offset + state["page_size"]]
        answer = {
            "notificationHistory": [{"signedPayload": n["signedPayload"], "sendAttempts": n.get("sendAttempts", [])} for n in page],
            "hasMore": offset + state["page_size"] < len(selected),
        }
        if answer["hasMore"]:
            answer["paginationToken"] = "page-%d" % (offset + state["page_size"])
        faults.send_json(self, 200, answer)


signal.pthread_sigmask(signal.SIG_SETMASK, [])
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print("listening on", server.server_address[1], flush=True)
server.serve_forever()
