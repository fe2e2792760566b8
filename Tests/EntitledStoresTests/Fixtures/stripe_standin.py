#!/usr/bin/env python3
"""A stand-in for the Stripe API calls entitled-stores makes, for its tests: List all invoice payments
(GET /v1/invoice_payments, https://docs.stripe.com/api/invoice-payment/list), filtered by
payment[type]=payment_intent and payment[payment_intent]; List subscriptions (GET /v1/subscriptions,
https://docs.stripe.com/api/subscriptions/list); Retrieve a subscription (GET /v1/subscriptions/{id},
https://docs.stripe.com/api/subscriptions/retrieve); List events (GET /v1/events,
https://docs.stripe.com/api/events/list). Written from Stripe's API reference:
- authentication with the secret key as a bearer token; an unknown key is 401 with an error object of type
  invalid_request_error (https://docs.stripe.com/api/authentication, .../api/errors);
- a list object {"object": "list", "data": [...], "has_more": ..., "url": ...} of invoice_payment objects
  (id, invoice, payment {type, payment_intent}, status, is_default, amount_paid, currency, livemode)
  (https://docs.stripe.com/api/invoice-payment/object), at most `limit` (1 to 100, default 10);
- a missing or unknown payment[type] is 400 invalid_request_error naming the parameter;
- too many requests is 429 with error code rate_limit (https://docs.stripe.com/rate-limits); a server error
  is 500 of type api_error (https://docs.stripe.com/error-handling). Stripe documents no Retry-After (its
  libraries read Stripe-Should-Retry); the stand-in sends one only when the test asks;
- list calls page with starting_after (the last id of the page before) and has_more, newest first, or
  backwards with ending_before (https://docs.stripe.com/api/pagination); a cursor Stripe does not know is
  400 resource_missing;
- List subscriptions without status leaves canceled subscriptions out ("By default, returns a list of
  subscriptions that have not been canceled"); status=all includes them, ended is canceled and
  incomplete_expired; expand[]=data.customer puts the customer object in place of its id
  (https://docs.stripe.com/expand);
- a subscription Stripe does not know is 404 resource_missing, param id;
- List events lists "events going back up to 30 days": older ones are left out; created[gte|gt|lte|lt]
  and types[] (or type) filter.
The test sets the state with POST /state (a JSON object merged into it): "payments" {payment intent: invoice},
"subscriptions" [subscription objects, each with "created"], "customers" {id: customer object}, "events"
[event objects, each with "created"], "key", "fail" (null, 429 or 500: every request) and standin_faults'
"fail_next" and "delay". GET /state returns it with the number of invoice payment list requests
("list_requests") and standin_faults' counts. Prints "listening on PORT" once ready. Standard library only."""
import json
import signal
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

import standin_faults as faults

state = dict(faults.defaults())
state.update({"payments": {}, "subscriptions": [], "customers": {}, "events": [], "key": "sk_test_standin", "fail": None, "list_requests": 0})
lock = faults.lock
STATUSES = ("active", "all", "canceled", "ended", "incomplete", "incomplete_expired", "past_due", "paused", "trialing", "unpaid")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, obj, headers=()):
        faults.send_json(self, status, obj, [("Request-Id", "req_standin")] + list(headers))

    def error(self, status, kind, message, code=None, param=None, headers=()):
        error = {"type": kind, "message": message}
        if code:
            error["code"] = code
        if param:
            error["param"] = param
        self.reply(status, {"error": error}, headers)

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
        fault = faults.arrive(state, "GET " + self.path)
        try:
            faults.wait(state)
            if fault and faults.misbehave(self, fault):
                return
            self.api(url, fault)
        finally:
            faults.leave(state)

    def api(self, url, fault):
        if url.path == "/v1/invoice_payments":
            with lock:
                state["list_requests"] += 1
        with lock:
            key, fail = state["key"], state["fail"]
        if self.headers.get("Authorization") != "Bearer " + key:
            return self.error(401, "invalid_request_error", "Invalid API Key provided: sk_****")
        if fault:
            fail = fault["status"]
        if fail == 429:
            headers = [("Retry-After", fault["retry_after"])] if fault and fault.get("retry_after") else []
            return self.error(429, "invalid_request_error", "Too many requests hit the API too quickly.", code="rate_limit", headers=headers)
        if fail:
            return self.error(fail, "api_error", "An unknown error occurred.")
        query = parse_qs(url.query)
        if url.path == "/v1/invoice_payments":
            return self.invoice_payments(query)
        if url.path == "/v1/subscriptions":
            return self.subscriptions(query)
        if url.path.startswith("/v1/subscriptions/"):
            return self.subscription(unquote(url.path[len("/v1/subscriptions/"):]), query)
        if url.path == "/v1/events":
            return self.events(query)
        return self.error(404, "invalid_request_error", "Unrecognized request URL (GET: %s)." % url.path)

    def invoice_payments(self, query):
        with lock:
            payments = dict(state["payments"])
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

    def listed(self, objects, query, url):
        """A list object of `objects` (newest first) after starting_after, or before ending_before, at most
        limit (1 to 100, default 10). ending_before (https://docs.stripe.com/api/pagination) "returns objects
        listed before the named object", still "in reverse chronological order": the page of the `limit`
        objects just newer than it, has_more telling whether newer ones remain (as Stripe's libraries page
        backwards: ending_before the first object of the page before, while has_more). The two cursors
        exclude each other."""
        try:
            limit = int(query.get("limit", ["10"])[0])
        except ValueError:
            limit = 0
        if not 1 <= limit <= 100:
            return self.error(400, "invalid_request_error", "Invalid integer: limit must be between 1 and 100", param="limit")
        objects = sorted(objects, key=lambda o: (o.get("created", 0), o["id"]), reverse=True)
        after = query.get("starting_after", [None])[0]
        before = query.get("ending_before", [None])[0]
        if after is not None and before is not None:
            return self.error(400, "invalid_request_error", "You may only specify one of these parameters: ending_before, starting_after.")
        ids = [o["id"] for o in objects]
        for cursor, name in ((after, "starting_after"), (before, "ending_before")):
            if cursor is not None and cursor not in ids:
                return self.error(400, "invalid_request_error", "No such object: '%s'" % cursor, code="resource_missing", param=name)
        if before is not None:
            newer = objects[:ids.index(before)]
            page = newer[max(0, len(newer) - limit):]
            return self.reply(200, {"object": "list", "data": page, "has_more": len(newer) > limit, "url": url})
        if after is not None:
            objects = objects[ids.index(after) + 1:]
        self.reply(200, {"object": "list", "data": objects[:limit], "has_more": len(objects) > limit, "url": url})

    def expanded(self, subscription, expand):
        if expand and isinstance(subscription.get("customer"), str):
            customer = subscription["customer"]
            subscription = dict(subscription, customer=state["customers"].get(customer, {"id": customer, "object": "customer"}))
        return subscription

    def subscriptions(self, query):
        status = query.get("status", [None])[0]
        if status is not None and status not in STATUSES:
            return self.error(400, "invalid_request_error", "Invalid status: must be one of %s" % ", ".join(STATUSES), param="status")
        with lock:
            every = list(state["subscriptions"])
        if status is None:
            chosen = [s for s in every if s.get("status") != "canceled"]
        elif status == "all":
            chosen = every
        elif status == "ended":
            chosen = [s for s in every if s.get("status") in ("canceled", "incomplete_expired")]
        else:
            chosen = [s for s in every if s.get("status") == status]
        # customer: "Only return subscriptions for the customer specified by this customer ID."
        customer = query.get("customer", [None])[0]
        if customer is not None:
            chosen = [s for s in chosen if s.get("customer") == customer]
        expand = "data.customer" in query.get("expand[]", [])
        self.listed([self.expanded(s, expand) for s in chosen], query, "/v1/subscriptions")

    def subscription(self, identifier, query):
        with lock:
            found = next((s for s in state["subscriptions"] if s["id"] == identifier), None)
        if found is None:
            return self.error(404, "invalid_request_error", "No such subscription: '%s'" % identifier, code="resource_missing", param="id")
        self.reply(200, self.expanded(found, "customer" in query.get("expand[]", [])))

    def events(self, query):
        oldest = int(time.time()) - 30 * 86_400
        with lock:
            chosen = [e for e in state["events"] if e["created"] >= oldest]
        bounds = {"gte": lambda c, v: c >= v, "gt": lambda c, v: c > v, "lte": lambda c, v: c <= v, "lt": lambda c, v: c < v}
        for name, test in bounds.items():
            value = query.get("created[%s]" % name, [None])[0]
            if value is not None:
                chosen = [e for e in chosen if test(e["created"], int(value))]
        types = query.get("types[]", []) + query.get("type", [])
        if len(types) > 20:
            return self.error(400, "invalid_request_error", "types may list at most 20 event types", param="types")
        if types:
            chosen = [e for e in chosen if e["type"] in types]
        self.listed(chosen, query, "/v1/events")


signal.pthread_sigmask(signal.SIG_SETMASK, [])
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print("listening on %d" % server.server_address[1], flush=True)
server.serve_forever()
