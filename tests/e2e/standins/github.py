#!/usr/bin/env python3
"""A stand-in for GitHub's REST API: a hook's deliveries and redelivery.

  GET  /{scope}/hooks/{hook_id}                    the hook (active, config,
                                                   last_response)
  GET  /{scope}/hooks/{hook_id}/deliveries         attempts, newest first;
                                                   per_page (max 100, default
                                                   30), cursor from the Link
                                                   header
  GET  /{scope}/hooks/{hook_id}/deliveries/{id}    one attempt, with request
                                                   and response
  POST /{scope}/hooks/{hook_id}/deliveries/{id}/attempts
                                                   202, then the event is
                                                   sent again, signed, as a
                                                   new attempt (redelivery)

  GET  /app/hook/config, GET /app/hook/deliveries[/{id}],
  POST /app/hook/deliveries/{id}/attempts
                                                   the same for a GitHub
                                                   App's own webhook

{scope} is repos/{owner}/{repo} or orgs/{org}.  Authentication is
"Authorization: Bearer <token>"; a wrong one gets 401 "Bad credentials".
The App's paths take the App's JWT instead (RS256 over the App's key,
checked with its public key: iss, iat, exp at most 10 minutes apart).
Every answer carries the x-ratelimit-* headers.  The objects are built
from fixtures/github_*.json, which are the examples of GitHub's OpenAPI
description (@octokit/openapi, tests/openapi); test_catchup.py checks
each answer against that description's schemas.
"""

import base64
import calendar
import copy
import json
import os
import re
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from standins.base import Standin  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
HOOK_RE = re.compile(r"^/(repos/[^/]+/[^/]+|orgs/[^/]+)/hooks/(\d+)"
                     r"(/deliveries(?:/(\d+)(/attempts)?)?)?$")
APP_RE = re.compile(r"^/app/hook(/config|/deliveries(?:/(\d+)(/attempts)?)?)$")


def b64url_dec(s):
    if "=" in s or "+" in s or "/" in s:
        raise ValueError("not base64url without padding")
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def fixture(name):
    with open(os.path.join(HERE, "fixtures", name)) as f:
        return json.load(f)


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


class GitHubStandin(Standin):
    """deliver(hook_id, guid, event, body, redelivery) -> HTTP status sends
    one delivery to the receiver (signed by the caller)."""

    def __init__(self, token, deliver):
        super().__init__()
        self.token = token
        self.deliver = deliver
        self.hooks = {}         # (scope, id) -> hook object
        self.attempts = {}      # (scope, id) -> [delivery], oldest first
        self.bodies = {}        # guid -> (event, body bytes)
        self.next_id = 9000000000
        self.redelivered = []   # guids redelivered
        self.threads = []
        self.app = None         # (app id, public key, hook id)
        self.jwt_seen = []      # the claims of each App token accepted
        # Cleared: a listing of deliveries waits (up to 5 min) until set.
        self.listing = threading.Event()
        self.listing.set()

    def add_app(self, app_id, public_pem, hook_id, url):
        """The App's own webhook; its key is the (scope, id) ("app", hook_id)."""
        from cryptography.hazmat.primitives import serialization
        self.app = (str(app_id), serialization.load_pem_public_key(public_pem), str(hook_id))
        self.hooks[("app", str(hook_id))] = {"config": {"url": url, "content_type": "json",
                                                        "insecure_ssl": "0"}}
        self.attempts[("app", str(hook_id))] = []

    def jwt_ok(self, auth):
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding
        if self.app is None or not auth.startswith("Bearer "):
            return False
        try:
            h, c, s = auth[7:].split(".")
            head, claims = json.loads(b64url_dec(h)), json.loads(b64url_dec(c))
            if head.get("alg") != "RS256":
                return False
            self.app[1].verify(b64url_dec(s), (h + "." + c).encode(), padding.PKCS1v15(),
                               hashes.SHA256())
        except Exception:  # noqa: BLE001 - any defect is a refusal
            return False
        now = time.time()
        ok = (str(claims.get("iss")) == self.app[0] and claims["iat"] <= now + 60 and
              claims["exp"] > now and claims["exp"] - claims["iat"] <= 600)
        if ok:
            self.jwt_seen.append(claims)
        return ok

    def route_app(self, req, m):
        if not self.jwt_ok(req["headers"].get("authorization", "")):
            return self.error(401, "A JSON web token could not be decoded")
        key = ("app", self.app[2])
        if m.group(1) == "/config":
            if req["method"] != "GET":
                return self.error(404, "Not Found")
            return (200, self.headers(), self.hooks[key]["config"])
        return self.deliveries(req, key, m.group(2), m.group(3), "/app/hook")

    def add_hook(self, scope, hook_id, url):
        h = fixture("github_hook.json")
        h.update({"id": int(hook_id), "type": "Repository" if scope.startswith("repos/")
                  else "Organization",
                  "url": "https://api.github.com/%s/hooks/%s" % (scope, hook_id)})
        h["config"]["url"] = url
        for k in ("test_url", "ping_url", "deliveries_url"):
            h[k] = h["url"] + {"test_url": "/test", "ping_url": "/pings",
                               "deliveries_url": "/deliveries"}[k]
        self.hooks[(scope, str(hook_id))] = h
        self.attempts[(scope, str(hook_id))] = []
        return h

    def attempt(self, scope, hook_id, guid, event, body, status_code, at, redelivery=False):
        """Records one attempt, as GitHub lists it."""
        with self.lock:
            self.next_id += 1
            d = fixture("github_delivery.json")
            payload = json.loads(body)
            d.update({"id": self.next_id, "guid": guid, "delivered_at": iso(at),
                      "redelivery": redelivery, "duration": 0.05,
                      "status": "OK" if 200 <= status_code < 300 else
                      ("failed to connect" if status_code == 0 else "Invalid HTTP Response: %d"
                       % status_code),
                      "status_code": status_code, "event": event,
                      "action": payload.get("action"), "throttled_at": None,
                      "url": self.hooks[(scope, str(hook_id))]["config"]["url"]})
            d["request"]["headers"].update({"X-GitHub-Delivery": guid,
                                            "X-GitHub-Hook-ID": str(hook_id),
                                            "X-GitHub-Event": event})
            d["request"]["payload"] = payload
            self.attempts[(scope, str(hook_id))].append(d)
            self.bodies[guid] = (event, body)
            code = status_code if status_code else None
            self.hooks[(scope, str(hook_id))]["last_response"] = {
                "code": code, "status": "active" if code and code < 300 else "failed",
                "message": d["status"]}
            return d

    def headers(self):
        return {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "4999",
                "x-ratelimit-used": "1", "x-ratelimit-resource": "core",
                "x-ratelimit-reset": str(int(time.time()) + 3600),
                "X-GitHub-Api-Version-Selected": "2022-11-28"}

    def error(self, status, message):
        return (status, self.headers(), {"message": message, "documentation_url":
                                         "https://docs.github.com/rest", "status": str(status)})

    def route(self, req):
        m = APP_RE.match(req["path"])
        if m:
            return self.route_app(req, m)
        if req["headers"].get("authorization") not in ("Bearer " + self.token,
                                                       "token " + self.token):
            return self.error(401, "Bad credentials")
        m = HOOK_RE.match(req["path"])
        if not m or (m.group(1), m.group(2)) not in self.hooks:
            return self.error(404, "Not Found")
        key = (m.group(1), m.group(2))
        if m.group(3) is None:
            if req["method"] != "GET":
                return self.error(404, "Not Found")
            return (200, self.headers(), self.hooks[key])
        return self.deliveries(req, key, m.group(4), m.group(5),
                               "/%s/hooks/%s" % key)

    def deliveries(self, req, key, did, attempts, prefix):
        if did is None:
            if req["method"] != "GET":
                return self.error(404, "Not Found")
            return self.list(req, key, prefix)
        with self.lock:
            found = [d for d in self.attempts[key] if str(d["id"]) == did]
        if not found:
            return self.error(404, "Not Found")
        d = found[0]
        if attempts is None:
            if req["method"] != "GET":
                return self.error(404, "Not Found")
            return (200, self.headers(), d)
        if req["method"] != "POST":
            return self.error(404, "Not Found")
        if time.time() - calendar.timegm(time.strptime(d["delivered_at"],
                                                       "%Y-%m-%dT%H:%M:%SZ")) > 3 * 86400:
            return self.error(422, "Validation Failed")
        t = threading.Thread(target=self.redeliver, args=(key, d["guid"]), daemon=True)
        self.threads.append(t)
        t.start()
        return (202, self.headers(), {})

    def redeliver(self, key, guid):
        event, body = self.bodies[guid]
        status = self.deliver(key[1], guid, event, body, True)
        self.attempt(key[0], key[1], guid, event, body, status, time.time(), redelivery=True)
        with self.lock:
            self.redelivered.append(guid)

    def wait_redeliveries(self, timeout=30):
        for t in list(self.threads):
            t.join(timeout)

    def list(self, req, key, prefix):
        self.listing.wait(300)
        q = {k: v[-1] for k, v in req["query"].items()}
        try:
            per_page = min(int(q.get("per_page", "30")), 100)
        except ValueError:
            return self.error(400, "Bad Request")
        with self.lock:
            items = sorted(self.attempts[key], key=lambda d: d["id"], reverse=True)
        if "cursor" in q:
            c = q["cursor"]
            if not c.startswith("v1_"):
                return self.error(400, "Bad Request")
            items = [d for d in items if d["id"] < int(c[3:])]
        page = items[:per_page]
        h = self.headers()
        if len(items) > per_page:
            nxt = "%s%s/deliveries?per_page=%d&cursor=v1_%d" % (
                self.base, prefix, per_page, page[-1]["id"])
            h["Link"] = '<%s>; rel="next"' % nxt
        out = []
        for d in page:
            d = copy.deepcopy(d)
            d.pop("request", None)
            d.pop("response", None)
            d.pop("url", None)
            out.append(d)
        return (200, h, out)
