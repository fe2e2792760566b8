#!/usr/bin/env python3
"""A stand-in for the one Stripe API call entitled-stores makes, for its tests: List all invoice payments
(GET /v1/invoice_payments, https://docs.stripe.com/api/invoice-payment/list), filtered by
payment[type]=payment_intent and payment[payment_intent]. Written from Stripe's API reference:
- authentication with the secret key as a bearer token; an unknown key is 401 with an error object of type
  invalid_request_error (https://docs.stripe.com/api/authentication, .../api/errors);
- a list object {"object": "list", "data": [...], "has_more": ..., "url": ...} of invoice_payment objects
  (id, invoice, payment {type, payment_intent}, status, is_default, amount_paid, currency, livemode)
  (https://docs.stripe.com/api/invoice-payment/object), at most `limit` (1 to 100, default 10);
- a missing or unknown payment[type] is 400 invalid_request_error naming the parameter;
- too many requests is 429 with error code rate_limit (https://docs.stripe.com/rate-limits); a server error
  is 500 of type api_error (https://docs.stripe.com/error-handling).
The test sets the state with POST /state (a JSON object merged into it): "payments" {payment intent: invoice},
"key", and "fail" (null, 429 or 500). GET /state returns it with the number of list requests. Prints
"listening on PORT" once ready. Standard library only."""
import json
import signal
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

state = {"payments": {}, "key": "sk_test_standin", "fail": None, "list_requests": 0}
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Request-Id", "req_standin")
        self.end_headers()
        self.wfile.write(body)

    def error(self, status, kind, message, code=None, param=None):
        error = {"type": kind, "message": message}
        if code:
            error["code"] = code
        if param:
            error["param"] = param
        self.reply(status, {"error": error})

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path == "/state":
            with lock:
                state.update(json.loads(body))
            return self.reply(200, {})
        self.error(404, "invalid_request_error", "Unrecognized request URL (POST: %s)." % self.path)

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/state":
            with lock:
                return self.reply(200, state)
        if url.path != "/v1/invoice_payments":
            return self.error(404, "invalid_request_error", "Unrecognized request URL (GET: %s)." % url.path)
        with lock:
            state["list_requests"] += 1
            key, fail, payments = state["key"], state["fail"], dict(state["payments"])
        if self.headers.get("Authorization") != "Bearer " + key:
            return self.error(401, "invalid_request_error", "Invalid API Key provided: sk_****")
        if fail == 429:
            return self.error(429, "invalid_request_error", "Too many requests hit the API too quickly.", code="rate_limit")
        if fail == 500:
            return self.error(500, "api_error", "An unknown error occurred.")
        query = parse_qs(url.query)
        kind = query.get("payment[type]", [None])[0]
        if kind not in ("payment_intent", "payment_record"):
            return self.error(400, "invalid_request_error", "Invalid payment[type]: must be one of payment_intent or payment_record", param="payment[type]")
        intent = query.get("payment[payment_intent]", [None])[0]
        limit = int(query.get("limit", ["10"])[0])
        if not 1 <= limit <= 100:
            return self.error(400, "invalid_request_error", "Invalid integer: limit must be between 1 and 100", param="limit")
        data = []
        if intent in payments:
            data.append({
                "id": "inpay_" + intent[3:], "object": "invoice_payment", "amount_paid": 999, "amount_requested": 999,
                "created": 1764806400, "currency": "usd", "invoice": payments[intent], "is_default": True, "livemode": False,
                "payment": {"type": "payment_intent", "payment_intent": intent}, "status": "paid",
                "status_transitions": {"canceled_at": None, "paid_at": 1764806400},
            })
        self.reply(200, {"object": "list", "data": data[:limit], "has_more": False, "url": "/v1/invoice_payments"})


signal.pthread_sigmask(signal.SIG_SETMASK, [])
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print("listening on %d" % server.server_address[1], flush=True)
server.serve_forever()
