#!/usr/bin/env python3
"""A stand-in for Stripe's API: the calls idemhook catch-up and health make.

  GET /v1/events             list, newest first; limit (1-100, default 10),
                             created (integer or created[gt|gte|lt|lte]),
                             starting_after | ending_before (not both),
                             has_more; only the last 30 days are kept
  GET /v1/webhook_endpoints  list of endpoints (status enabled/disabled)
  GET /v2/core/events/{id}   one v2 event, as idemhook work fetches a thin
                             event's full event (needs Stripe-Version);
                             404 for an unknown id
  GET <related_object.url>   the related object's current state, as set
                             with add_thin() or set_object(); 404 unknown
  GET /v2/core/event_destinations
                             the event destinations (add_destination()),
                             v2 paging: dest_page a page, next_page_url
                             "/v2/core/event_destinations?page=..."

Accounts: add_key(key, account) makes another key valid, for another
Stripe account; a v2 event (and its related object) added with
add_thin(..., account=...) is only found with that account's key (404
with another's, as Stripe answers for another account's event).

Authentication is "Authorization: Bearer <key>"; a wrong or missing key is
answered 401 with Stripe's error object.  Shapes follow
https://docs.stripe.com/api/events, /api/pagination, /api/webhook_endpoints
and /api/errors; the objects are built from fixtures/stripe_*.json.  The
v2 event follows https://docs.stripe.com/api/v2/core/events/object: id,
object "v2.core.event", type, created (RFC 3339), livemode, context,
reason, related_object {id, type, url}, data and changes; its thin
notification (thin()) is the same without data and changes.
Failures for the next calls (429 with Retry-After, 500) are queued with
fail_next(); fail_path() makes one path fail on every call.

By hand: stripe.py PORT KEY EVENTS.json  (EVENTS.json: a JSON array of
events, as GET /v1/events/{id} returns them).
"""

import copy
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from standins.base import Standin, serve_forever  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
KEEP_S = 30 * 86400


def fixture(name):
    with open(os.path.join(HERE, "fixtures", name)) as f:
        return json.load(f)


def error(status, etype, message, code=None, param=None):
    e = {"type": etype, "message": message}
    if code:
        e["code"] = code
    if param:
        e["param"] = param
    return (status, {"Request-Id": "req_standin"}, {"error": e})


class StripeStandin(Standin):
    def __init__(self, key):
        super().__init__()
        self.key = key
        self.events = []        # newest last (as created)
        self.endpoints = [fixture("stripe_webhook_endpoint.json")]
        self.v2events = {}      # id -> v2 event
        self.objects = {}       # path -> object (related objects)
        self.path_fail = {}     # path -> status answered on every call
        self.destinations = []  # v2 event destinations, oldest first
        self.dest_page = 20     # destinations per page
        self.keys = {}          # other valid key -> its account
        self.owner = {}         # v2 event id or object path -> account

    def event(self, eid, etype, obj, created):
        ev = fixture("stripe_event.json")
        ev.update({"id": eid, "type": etype, "created": created})
        ev["data"] = {"object": copy.deepcopy(obj)}
        return ev

    def add(self, ev):
        with self.lock:
            self.events.append(ev)

    def add_key(self, key, account):
        with self.lock:
            self.keys[key] = account

    def add_destination(self, event_payload="thin", status="enabled", reason=None):
        """An event destination (the Event Destination object); returns its id."""
        did = "ed_test_%s" % os.urandom(8).hex()
        ed = {"id": did, "object": "v2.core.event_destination",
              "created": "2026-11-01T10:00:00.000Z", "description": "",
              "enabled_events": ["*"], "event_payload": event_payload,
              "events_from": ["@self"], "livemode": False, "metadata": {},
              "name": "idemhook " + event_payload, "snapshot_api_version":
              "2025-03-31.basil" if event_payload == "snapshot" else None,
              "status": status, "status_details": None, "type": "webhook_endpoint",
              "updated": "2026-11-01T10:00:00.000Z",
              "webhook_endpoint": {"signing_secret": None, "url": None}}
        with self.lock:
            self.destinations.append(ed)
        self.set_destination(did, status, reason)
        return did

    def set_destination(self, did, status, reason=None):
        """enabled, or disabled with reason (user, ...); None removes it."""
        with self.lock:
            for ed in list(self.destinations):
                if ed["id"] != did:
                    continue
                if status is None:
                    self.destinations.remove(ed)
                    continue
                ed["status"] = status
                ed["status_details"] = ({"disabled": {"reason": reason or "user"}}
                                        if status == "disabled" else None)

    def add_thin(self, eid, etype, obj, url, context=None, account="default"):
        """A v2 event about obj (kept at url), of account (whose key
        finds it); returns its thin notification."""
        ev = {"id": eid, "object": "v2.core.event", "type": etype,
              "created": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
              "livemode": False, "context": context,
              "reason": {"type": "request",
                         "request": {"id": "req_standin", "idempotency_key": "ik_1"}},
              "related_object": {"id": obj["id"], "type": obj["object"], "url": url},
              "data": {}, "changes": {"after": {"status": obj.get("status")}}}
        with self.lock:
            self.v2events[eid] = ev
            self.objects[url] = copy.deepcopy(obj)
            self.owner[eid] = self.owner[url] = account
        return self.thin(eid)

    def thin(self, eid):
        """The thin notification of v2 event eid, as an event destination sends it."""
        with self.lock:
            ev = copy.deepcopy(self.v2events[eid])
        ev.pop("data", None)
        ev.pop("changes", None)
        return ev

    def set_object(self, url, obj):
        with self.lock:
            self.objects[url] = copy.deepcopy(obj)

    def fail_path(self, path, status=None):
        """Every call to path answered status (None: stop failing)."""
        with self.lock:
            if status is None:
                self.path_fail.pop(path, None)
            else:
                self.path_fail[path] = status

    def set_endpoint(self, **kw):
        self.endpoints[0].update(kw)

    def route(self, req):
        auth = req["headers"].get("authorization", "")
        if not auth:
            return error(401, "invalid_request_error",
                         "You did not provide an API key.")
        k = auth[7:] if auth.startswith("Bearer ") else auth
        with self.lock:
            account = "default" if auth == "Bearer " + self.key else self.keys.get(k)
        if account is None or not auth.startswith("Bearer "):
            return error(401, "invalid_request_error", "Invalid API Key provided: %s****%s"
                         % (k[:8], k[-4:]))
        req["account"] = account
        if req["method"] != "GET":
            return error(405, "invalid_request_error", "method not allowed")
        with self.lock:
            failing = self.path_fail.get(req["path"])
        if failing is not None:
            return error(failing, "api_error", "stand-in failure")
        if req["path"].startswith("/v2/"):
            if not req["headers"].get("stripe-version"):
                return error(400, "invalid_request_error",
                             "Stripe-Version header is required for /v2")
            if req["path"] == "/v2/core/event_destinations":
                return self.destination_page(req["query"])
            eid = req["path"][len("/v2/core/events/"):]
            with self.lock:
                ev = copy.deepcopy(self.v2events.get(eid))
                if self.owner.get(eid, account) != account:
                    ev = None       # another account's event
            if req["path"].startswith("/v2/core/events/") and ev is not None:
                return (200, {"Request-Id": "req_standin"}, ev)
            return error(404, "invalid_request_error", "No such event: '%s'" % eid,
                         "resource_missing", "id")
        with self.lock:
            obj = copy.deepcopy(self.objects.get(req["path"]))
            if self.owner.get(req["path"], account) != account:
                obj = None
        if obj is not None:
            return (200, {"Request-Id": "req_standin"}, obj)
        if req["path"] == "/v1/events":
            return self.list(req["query"], self.live_events(), "/v1/events")
        if req["path"] == "/v1/webhook_endpoints":
            return self.list(req["query"], list(reversed(self.endpoints)),
                             "/v1/webhook_endpoints")
        if req["path"].startswith("/v1/events/"):
            eid = req["path"][len("/v1/events/"):]
            for ev in self.live_events():
                if ev["id"] == eid:
                    return (200, {}, ev)
            return error(404, "invalid_request_error", "No such event: '%s'" % eid,
                         "resource_missing", "id")
        return error(404, "invalid_request_error",
                     "Unrecognized request URL (GET: %s)." % req["path"])

    def destination_page(self, q):
        """GET /v2/core/event_destinations: v2's list shape and paging."""
        try:
            start = int(q.get("page", ["0"])[-1])
        except ValueError:
            return error(400, "invalid_request_error", "Invalid page")
        with self.lock:
            items = copy.deepcopy(self.destinations)
            size = self.dest_page
        more = start + size < len(items)
        return (200, {"Request-Id": "req_standin"},
                {"data": items[start:start + size],
                 "next_page_url": ("/v2/core/event_destinations?page=%d" % (start + size)
                                   if more else None),
                 "previous_page_url": None})

    def live_events(self):
        """Kept events, newest first (ties: the later created first)."""
        now = int(time.time())
        with self.lock:
            evs = [e for e in self.events if e["created"] >= now - KEEP_S]
        order = {id(e): i for i, e in enumerate(evs)}
        return sorted(evs, key=lambda e: (e["created"], order[id(e)]), reverse=True)

    def list(self, q, items, url):
        one = {k: v[-1] for k, v in q.items()}
        try:
            limit = int(one.get("limit", "10"))
        except ValueError:
            return error(400, "invalid_request_error", "Invalid integer: %s"
                         % one["limit"], param="limit")
        if not 1 <= limit <= 100:
            return error(400, "invalid_request_error",
                         "This value must be between 1 and 100.", param="limit")
        if "starting_after" in one and "ending_before" in one:
            return error(400, "invalid_request_error", "You may only specify one of "
                         "these parameters: ending_before, starting_after.")
        ops = {"created[gt]": lambda c, v: c > v, "created[gte]": lambda c, v: c >= v,
               "created[lt]": lambda c, v: c < v, "created[lte]": lambda c, v: c <= v,
               "created": lambda c, v: c == v}
        for k, f in ops.items():
            if k in one:
                try:
                    v = int(one[k])
                except ValueError:
                    return error(400, "invalid_request_error", "Invalid integer: %s"
                                 % one[k], param=k)
                items = [e for e in items if f(e["created"], v)]
        ids = [e["id"] for e in items]
        if "starting_after" in one:
            if one["starting_after"] not in ids:
                return error(400, "invalid_request_error", "No such object: '%s'"
                             % one["starting_after"], "resource_missing",
                             "starting_after")
            items = items[ids.index(one["starting_after"]) + 1:]
        elif "ending_before" in one:
            if one["ending_before"] not in ids:
                return error(400, "invalid_request_error", "No such object: '%s'"
                             % one["ending_before"], "resource_missing", "ending_before")
            items = items[:ids.index(one["ending_before"])][-limit:]
        page = items[:limit]
        return (200, {"Request-Id": "req_standin"},
                {"object": "list", "url": url, "has_more": len(items) > limit,
                 "data": page})


def main():
    port, key, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    s = StripeStandin(key)
    with open(path) as f:
        for ev in json.load(f):
            s.add(ev)
    serve_forever(s, port)


if __name__ == "__main__":
    main()
