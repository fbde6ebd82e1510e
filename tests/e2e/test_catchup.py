#!/usr/bin/env python3
"""End-to-end tests of idemhook catch-up and idemhook health (issue 26)
against stand-ins of the providers' APIs (tests/e2e/standins/), with the
receivers behind a real lighttpd.

Usage: test_catchup.py BINDIR   (or IH_BIN=BINDIR test_catchup.py)
Prints 'ok - ...' / 'not ok - ...: reason' lines; exits 1 if any failed.

Stripe: an endpoint down for an hour with 500 events in the window, 450
delivered before (signed, through lighttpd) and 20 while the catch-up
runs; afterwards every event is recorded once and processed once, the
subscriptions are in the in-order state, and a second run records
nothing.  The API answering 429 (Retry-After) and 500 is retried; a wait
longer than the client allows, and a wrong key, end the run with a clear
error and exit status, nothing recorded, the key never printed.  Health
reports a disabled endpoint and runs the alert.  No test reaches the
internet: every API base is a stand-in on 127.0.0.1.
"""

import json
import os
import random
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (Server, check, check_eq, sign_stripe,  # noqa: E402
                     suite_main)
from standins.stripe import StripeStandin  # noqa: E402

KEY = "rk_test_51Standin" + "Kq9" * 8
STATUSES = ["incomplete", "trialing", "active", "past_due", "active",
            "past_due", "active", "unpaid", "active", "canceled"]
NSUBS = 50


class Cmd:
    """The idemhook command with the store's and the API's settings."""

    def __init__(self, bindir, srv, tmp, **extra):
        self.bin = os.path.join(bindir, "idemhook")
        self.srv = srv
        self.log = os.path.join(tmp, "catchup.log")
        self.extra = extra

    def env(self, **kw):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "IDEMHOOK_DB": self.srv.db, "IDEMHOOK_LOG": self.log}
        for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
            if k in os.environ:
                env[k] = os.environ[k]
        env.update(self.extra)
        env.update(kw)
        return env

    def start(self, *args, **kw):
        return subprocess.Popen([self.bin] + list(args), env=self.env(**kw),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL)

    def finish(self, p):
        out, err = p.communicate(timeout=120)
        out, err = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
        check("Sanitizer" not in err and "runtime error" not in err,
              "sanitizer report: %s" % err[-1500:])
        return p.returncode, out, err

    def run(self, *args, **kw):
        return self.finish(self.start(*args, **kw))

    def logtext(self):
        try:
            with open(self.log) as f:
                return f.read()
        except FileNotFoundError:
            return ""


def stripe_events(api):
    """NSUBS subscriptions, ten events each, within the last hour; returns
    [(event, body)] in creation order."""
    base = int(time.time()) - 3500
    out = []
    for j, status in enumerate(STATUSES):
        for k in range(NSUBS):
            sid = "sub_standin%04d" % k
            etype = ("customer.subscription.created" if j == 0 else
                     "customer.subscription.deleted" if j == len(STATUSES) - 1 else
                     "customer.subscription.updated")
            obj = {"id": sid, "object": "subscription", "status": status,
                   "customer": "cus_9s6XKzkNRiz8i3",
                   "items": {"object": "list", "data": []}}
            ev = api.event("evt_%02d_%04d_%s" % (j, k, os.urandom(4).hex()), etype, obj,
                           base + j * 300 + k)
            out.append((ev, json.dumps(ev, indent=2).encode()))
    return out


def deliver(srv, body):
    r = srv.post(srv.url("stripe"), body,
                 {"Stripe-Signature": sign_stripe(srv.secrets["stripe"], body),
                  "Content-Type": "application/json"})
    check(r.status == 200, "delivery: %d %r" % (r.status, r.body[:200]))


def deliver_all(srv, bodies, threads=6):
    bodies = list(bodies)
    errors = []
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                if not bodies:
                    return
                b = bodies.pop()
            try:
                deliver(srv, b)
            except Exception as e:  # noqa: BLE001
                errors.append(e)
                return
    ts = [threading.Thread(target=worker) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    check(not errors, "deliveries failed: %r" % errors[:2])


def wait_done(srv, n, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = srv.rows("stripe")
        if len(rows) >= n and all(r["status"] == "done" for r in rows):
            return rows
        time.sleep(0.2)
    rows = srv.rows("stripe")
    check(False, "%d rows, not all done: %r" % (
        len(rows), [(r["event_id"], r["status"], r["last_error"]) for r in rows
                    if r["status"] != "done"][:4]))


def no_key(cmd, *texts):
    for t in texts + (cmd.logtext(),):
        check(KEY not in t and KEY[8:] not in t, "the API key was printed: %r" % t[-300:])


def case_wrong_key(cmd, api, srv):
    """A wrong key: exit 2, the setting named, nothing recorded, no key."""
    rc, out, err = cmd.run("catch-up", "--provider", "stripe",
                           IDEMHOOK_STRIPE_API_KEY="rk_test_wrongwrongwrong")
    check_eq(rc, 2, "exit status")
    check("IDEMHOOK_STRIPE_API_KEY" in err and "401" in err,
          "the error names the setting and the status: %r" % err)
    check("wrongwrong" not in out + err + cmd.logtext(), "the wrong key was printed")
    check_eq(len(srv.rows("stripe")), 0, "rows recorded")
    check("outcome=refused" in cmd.logtext(), "log line: %r" % cmd.logtext())
    no_key(cmd, out, err)


def case_down_an_hour(cmd, api, srv, evs):
    """500 events in the window: 450 delivered before, 20 during the
    catch-up, 30 or more only through it; 429 and 500 retried."""
    random.seed(26)
    order = list(range(len(evs)))
    random.shuffle(order)
    before, during = order[:450], order[450:470]
    deliver_all(srv, [evs[i][1] for i in before])
    check_eq(len(srv.rows("stripe")), 450, "rows after the deliveries")
    api.delay = 0.3
    api.fail_next(429, {"Retry-After": "1"},
                  {"error": {"type": "rate_limit_error", "message": "Too many requests"}})
    api.fail_next(500, {}, {"error": {"type": "api_error", "message": "stand-in"}})
    n0 = len(api.calls("/v1/events"))
    p = cmd.start("catch-up", "--provider", "stripe", "--since", "2h", "--json")
    time.sleep(0.5)
    deliver_all(srv, [evs[i][1] for i in during], threads=2)
    rc, out, err = cmd.finish(p)
    api.delay = 0
    check_eq(rc, 3, "exit status (something was missing): %s" % err[-300:])
    res = json.loads(out)
    check_eq(len(res), 1, "one provider in the JSON")
    r = res[0]
    print("# catch-up: %r" % {k: r[k] for k in ("pages", "listed", "missing", "recorded",
                                                "delivered_meanwhile")})
    check_eq(r["listed"], 500, "events listed")
    check_eq(r["pages"], 5, "pages of 100")
    check(30 <= r["recorded"] <= 50, "recorded %d" % r["recorded"])
    check_eq(r["missing"], r["recorded"] + r["delivered_meanwhile"], "missing")
    calls = api.calls("/v1/events")[n0:]
    check_eq(len(calls), 7, "calls: 429, 500, then 5 pages")
    check(calls[1]["at"] - calls[0]["at"] >= 0.95, "Retry-After: 1 waited for")
    check_eq(calls[2]["query"].get("limit"), ["100"], "limit")
    check("starting_after" in calls[3]["query"], "paged with starting_after")
    gte = int(calls[2]["query"]["created[gte]"][0])
    check(abs(gte - (time.time() - 7200 - 300)) < 60, "window with 5 min overlap")
    rows = wait_done(srv, 500)
    check_eq(len(rows), 500, "every event recorded")
    check_eq(len({r["event_id"] for r in rows}), 500, "each once")
    check(all(r["attempts"] == 1 for r in rows), "each processed once: %r" % [
        (r["event_id"], r["attempts"]) for r in rows if r["attempts"] != 1][:3])
    api_rows = [r for r in rows if "Idemhook-Source: api" in (r["headers"] or "")]
    check_eq(len(api_rows), r["recorded"], "rows marked as caught up")
    delivered_ids = {evs[i][0]["id"] for i in before}
    check(not any(x["event_id"] in delivered_ids for x in api_rows),
          "a delivered event marked as caught up")
    objs = {o[0]: o for o in srv.connect_ro().execute(
        "SELECT object_id, status, event_id FROM idemhook_objects WHERE provider='stripe'")}
    check_eq(len(objs), NSUBS, "subscriptions")
    for k in range(NSUBS):
        last = evs[(len(STATUSES) - 1) * NSUBS + k][0]
        o = objs["sub_standin%04d" % k]
        check_eq((o[1], o[2]), ("canceled", last["id"]), "subscription %d" % k)
    lines = [x for x in cmd.logtext().splitlines() if "catchup provider=stripe" in x
             and "outcome=missing" in x]
    check_eq(len(lines), 1, "one summary line")
    check("recorded=%d " % r["recorded"] in lines[0], "summary: %r" % lines[0])
    no_key(cmd, out, err)


def case_second_run(cmd, api, srv):
    """A second run finds nothing missing and records nothing."""
    rc, out, err = cmd.run("catch-up", "--provider", "stripe", "--since", "2h")
    check_eq(rc, 0, "exit status: %s" % err[-300:])
    check("500 listed, 0 missing, 0 recorded" in out, "output: %r" % out)
    check_eq(len(srv.rows("stripe")), 500, "rows")


def case_too_long_wait(cmd, api, srv):
    """429 asking for a wait past the client's limit: exit 1, nothing
    recorded, the error says why; a window past 30 days is noted."""
    api.fail_next(429, {"Retry-After": "600"},
                  {"error": {"type": "rate_limit_error", "message": "slow down"}})
    rc, out, err = cmd.run("catch-up", "--since", "40d", "--dry-run")
    check_eq(rc, 1, "exit status")
    check("asked to wait 600 s" in err, "error: %r" % err)
    rc, out, err = cmd.run("catch-up", "--since", "40d", "--dry-run", "--json")
    check_eq(rc, 0, "exit status: %s" % err[-300:])
    r = json.loads(out)[0]
    check("30 days" in (r["note"] or ""), "note: %r" % r)
    gte = int(api.calls("/v1/events")[-1]["query"]["created[gte]"][0])
    check(gte >= time.time() - 30 * 86400 - 60, "window cut at 30 days")
    check_eq(len(srv.rows("stripe")), 500, "rows")
    no_key(cmd, out, err)


def case_health(cmd, api, srv, tmp):
    """A disabled Stripe endpoint: exit 3, reported, the alert runs."""
    alert = os.path.join(tmp, "alert.txt")
    action = '{ echo "$IDEMHOOK_ALERT_REASON $IDEMHOOK_PROVIDER"; cat; } > %s' % alert
    rc, out, err = cmd.run("health", IDEMHOOK_ALERT_ACTION=action)
    check_eq(rc, 0, "healthy: %s %s" % (out, err))
    check(not os.path.exists(alert), "no alert when healthy")
    api.set_endpoint(status="disabled")
    rc, out, err = cmd.run("health", "--provider", "stripe", IDEMHOOK_ALERT_ACTION=action)
    api.set_endpoint(status="enabled")
    check_eq(rc, 3, "exit status")
    check("PROBLEM" in out and "disabled" in out and "we_1Mr5jULkdIwHu7ix1ibLTM0x" in out,
          "output: %r" % out)
    with open(alert) as f:
        text = f.read()
    check(text.startswith("endpoint stripe\n") and "disabled" in text, "alert: %r" % text)
    no_key(cmd, out, err)


def case_no_api(cmd):
    """Standard Webhooks: no API, said so."""
    rc, out, err = cmd.run("catch-up", "--provider", "standard")
    check_eq(rc, 2, "exit status")
    check("defines no API" in err, "error: %r" % err)
    rc, out, err = cmd.run("catch-up", "--help")
    check(rc == 0 and "Standard Webhooks defines no API" in out, "help: %r" % out)


def cases(tap, bindir, servers):
    srv = servers.add(Server(bindir, providers=["stripe"], name="catchup"))
    srv.start()
    api = StripeStandin(KEY).start()
    try:
        evs = stripe_events(api)
        for ev, _ in evs:
            api.add(ev)
        cmd = Cmd(bindir, srv, srv.tmp, IDEMHOOK_STRIPE_API_KEY=KEY,
                  IDEMHOOK_STRIPE_API_BASE=api.base)
        tap.run("stripe: a wrong key is refused, nothing recorded, no key shown",
                case_wrong_key, cmd, api, srv)
        tap.run("stripe: down an hour, 500 events: each recorded and processed once",
                case_down_an_hour, cmd, api, srv, evs)
        tap.run("stripe: a second run records nothing", case_second_run, cmd, api, srv)
        tap.run("stripe: a wait too long fails; 30 days at most",
                case_too_long_wait, cmd, api, srv)
        tap.run("stripe: health reports a disabled endpoint and alerts",
                case_health, cmd, api, srv, srv.tmp)
        tap.run("standard: no API, said so", case_no_api, cmd)
        tap.run("no sanitizer reports", lambda: check(
            not srv.sanitizer_reports(), "sanitizer: %r" % srv.sanitizer_reports()[:2]))
    finally:
        api.stop()


if __name__ == "__main__":
    sys.exit(suite_main("catchup", cases))
