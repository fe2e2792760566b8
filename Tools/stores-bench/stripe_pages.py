#!/usr/bin/env python3
"""A Stripe API stand-in for the benchmarks of this folder: List subscriptions and Retrieve a subscription
over N generated subscriptions, computed from their index rather than stored, so that 100,000 or 1,000,000
of them cost no memory and a page costs the same wherever it starts.

Written from Stripe's API reference, as the tests' stand-in (Tests/EntitledStoresTests/Fixtures/stripe_standin.py)
is, keeping only what the benchmarks ask:
- authentication with the secret key as a bearer token; another is 401 (https://docs.stripe.com/api/authentication);
- GET /v1/subscriptions: a list object {"object": "list", "data", "has_more", "url"}, newest first, `limit`
  1 to 100 (default 10), `starting_after` an object id, `status` (canceled ones only with `all`)
  (https://docs.stripe.com/api/subscriptions/list, https://docs.stripe.com/api/pagination);
- GET /v1/subscriptions/{id}: the subscription, or 404 resource_missing (https://docs.stripe.com/api/subscriptions/retrieve);
- the subscription object's fields the receiver reads (https://docs.stripe.com/api/subscriptions/object).

Usage: stripe_pages.py COUNT [BASE_TIME]. Subscription i (sub_00000000 ...) belongs to user_i (metadata
app_user_id), started 400 days before BASE_TIME (default: now), its period ending (i % 30) + 1 days after it; every 50th is
canceled. Prints "listening on PORT" once ready. Standard library only."""
import json
import time
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

COUNT = int(sys.argv[1])
BASE = int(sys.argv[2]) if len(sys.argv) > 2 else int(time.time())
KEY = "sk_test_bench"


def subscription(i):
    status = "canceled" if i % 50 == 49 else "active"
    end = BASE + ((i % 30) + 1) * 86_400
    return {
        "id": "sub_%08d" % i, "object": "subscription", "customer": "cus_%08d" % i, "status": status,
        "cancel_at_period_end": False, "created": BASE - 400 * 86_400 + i, "start_date": BASE - 400 * 86_400 + i,
        "latest_invoice": "in_%08d_%d" % (i, end), "livemode": False, "metadata": {"app_user_id": "user_%d" % i},
        "items": {"object": "list", "data": [{
            "id": "si_%08d" % i, "object": "subscription_item", "current_period_start": end - 30 * 86_400, "current_period_end": end,
            "price": {"id": "price_monthly", "object": "price", "product": "prod_pro"},
        }]},
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The head and the body go out in two writes: with Nagle's algorithm on, the body waits for the client's
    # delayed acknowledgement (40 ms on Linux), which would cap the benchmark at 25 answers a connection a second.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def reply(self, status, obj):
        body = json.dumps(obj, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def error(self, status, message, code=None):
        self.reply(status, {"error": {"type": "invalid_request_error", "message": message, **({"code": code} if code else {})}})

    def do_GET(self):
        if self.headers.get("Authorization") != "Bearer " + KEY:
            return self.error(401, "Invalid API Key provided")
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if url.path == "/v1/subscriptions":
            limit = int(query.get("limit", ["10"])[0])
            if not 1 <= limit <= 100:
                return self.error(400, "Invalid integer: limit must be between 1 and 100")
            every = query.get("status", [None])[0] == "all"
            after = query.get("starting_after", [None])[0]
            i = int(after[4:]) - 1 if after else COUNT - 1
            data = []
            while i >= 0 and len(data) < limit:
                if every or i % 50 != 49:
                    data.append(subscription(i))
                i -= 1
            return self.reply(200, {"object": "list", "data": data, "has_more": i >= 0, "url": "/v1/subscriptions"})
        if url.path.startswith("/v1/subscriptions/sub_"):
            i = int(url.path.rsplit("_", 1)[1])
            if not 0 <= i < COUNT:
                return self.error(404, "No such subscription", code="resource_missing")
            return self.reply(200, subscription(i))
        self.error(404, "Unrecognized request URL")


signal.pthread_sigmask(signal.SIG_SETMASK, [])
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print("listening on %d" % server.server_address[1], flush=True)
server.serve_forever()
