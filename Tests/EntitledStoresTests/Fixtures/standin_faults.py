"""What the stand-ins share, standard library only: the failures a test asks for (the next N requests of a
store's API answered 429 or a 5xx, answered late, never answered, or answered with a head and a stalled
body), and what they count (requests, their arrival times, how many were in flight at once).

A test sets, with POST /state:
- "fail_next": {"status": 429 | 500 | 503 | "hang" | "stall", "count": N, "retry_after": "<header value>",
  "hang_seconds": S, "after": M}: the next N API requests fail so, after M more are answered first (default
  0: at once), so that a test can fail a run in its middle. "hang" reads the request and answers nothing for S
  seconds (default 30), then closes; "stall" sends a 200 head announcing a body, a part of it, and then
  nothing for S seconds.
- "delay": seconds every API request waits before it is answered (to hold several in flight at once).
GET /state then has "requests" (API requests counted), "request_times" (their arrival, seconds on a
monotonic clock), "paths" (each request's method and path, query included, when the stand-in gives them),
"in_flight" and "max_in_flight"."""
import json
import threading
import time

lock = threading.Lock()


def defaults():
    return {"fail_next": None, "delay": 0, "requests": 0, "request_times": [], "paths": [], "in_flight": 0, "max_in_flight": 0}


def arrive(state, request=None):
    """Counts an API request on arrival (`request`: its method and path, kept in "paths"); returns the
    failure it is to get, if any."""
    with lock:
        state["requests"] += 1
        state["request_times"].append(time.monotonic())
        if request is not None:
            state["paths"].append(request)
        state["in_flight"] += 1
        state["max_in_flight"] = max(state["max_in_flight"], state["in_flight"])
        plan = state.get("fail_next")
        if plan and plan.get("after", 0) > 0:
            plan["after"] -= 1
            return None
        if plan and plan.get("count", 1) > 0:
            plan["count"] = plan.get("count", 1) - 1
            return dict(plan)
        return None


def leave(state):
    with lock:
        state["in_flight"] -= 1


def wait(state):
    if state.get("delay"):
        time.sleep(state["delay"])


def misbehave(handler, fault):
    """Applies a "hang" or "stall" fault; True when it did (the request is then done with)."""
    seconds = fault.get("hang_seconds", 30)
    if fault["status"] == "hang":
        time.sleep(seconds)
        handler.close_connection = True
        return True
    if fault["status"] == "stall":
        body = json.dumps({"partial": "x" * 64}).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body[:10])
        handler.wfile.flush()
        time.sleep(seconds)
        handler.close_connection = True
        return True
    return False


def send_json(handler, status, obj, headers=()):
    body = json.dumps(obj).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    for name, value in headers:
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)
