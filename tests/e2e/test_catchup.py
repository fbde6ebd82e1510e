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
reports a disabled endpoint, or a disabled v2 event destination, and runs
the alert.  No test reaches the
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

import uuid  # noqa: E402

from harness import (ASAAS_TOKEN_HEADER, Server, check, check_eq,  # noqa: E402
                     cron_commands, db_connect, free_port, pg_backend, recipe,
                     sign_github, sign_shopify, sign_stripe, suite_main)
from standins.shopify import ShopifyStandin  # noqa: E402
from standins.asaas import AsaasStandin  # noqa: E402
from standins.base import Standin  # noqa: E402
from standins import openapi  # noqa: E402
from standins.github import GitHubStandin  # noqa: E402
from standins.raw import RawStandin  # noqa: E402
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


def wait_done(srv, n, timeout=60, provider="stripe"):
    """The provider's rows once there are n or more, all done."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = srv.rows(provider)
        if len(rows) >= n and all(r["status"] == "done" for r in rows):
            return rows
        time.sleep(0.2)
    rows = srv.rows(provider)
    check(False, "%s: %d rows, wanted %d, not all done: %r" % (
        provider, len(rows), n,
        [(r["event_id"], r["status"], r["last_error"]) for r in rows
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
    # Spread over the run (about 4 s: the 429's second, the 500's backoff,
    # 5 pages at 0.3 s), so that some arrive after catch-up recorded them.
    outcomes = []
    for i in during:
        time.sleep(0.2)
        b = evs[i][1]
        r = srv.post(srv.url("stripe"), b, {
            "Stripe-Signature": sign_stripe(srv.secrets["stripe"], b),
            "Content-Type": "application/json"})
        check_eq(r.status, 200, "a delivery during the catch-up")
        outcomes.append(json.loads(r.body)["status"])
    running = p.poll() is None
    rc, out, err = cmd.finish(p)
    print("# deliveries during the catch-up: %d accepted, %d duplicate; still running "
          "after them: %s" % (outcomes.count("accepted"), outcomes.count("duplicate"),
                              running))
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
    check_eq(r["recorded"] + outcomes.count("accepted"), 50,
             "each of the 50 recorded once, by catch-up or by its delivery")
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
    # Progress on a terminal: stderr a pty, the line rewritten per page.
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen([cmd.bin, "catch-up", "--provider", "stripe", "--since", "2h"],
                         env=cmd.env(), stdout=subprocess.PIPE, stderr=slave,
                         stdin=subprocess.DEVNULL)
    os.close(slave)
    tty = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        tty += chunk
    p.communicate(timeout=60)
    os.close(master)
    tty = tty.decode("utf-8", "replace")
    check("\rstripe: 5 page(s), 500 event(s), 0 missing, 0 recorded" in tty,
          "progress on a terminal: %r" % tty[-400:])
    check_eq(p.returncode, 0, "exit status with a terminal")
    frm = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 7200))
    rc, out, err = cmd.run("catch-up", "--provider", "stripe", "--from", frm)
    check(rc == 0 and "500 listed, 0 missing" in out, "--from: %d %r" % (rc, out))
    rc, out, err = cmd.run("catch-up", "--since", "2h", "--from", frm)
    check(rc == 2 and "one option" in err, "--since with --from: %d %r" % (rc, err))
    api_ids = [x["event_id"] for x in srv.rows("stripe")
               if "Idemhook-Source: api" in (x["headers"] or "")]
    rc, out, err = cmd.run("verify", "stripe", api_ids[0],
                           IDEMHOOK_STRIPE_SECRET=srv.secrets["stripe"])
    check(rc == 1 and out.startswith("UNSIGNED: stripe %s: recorded by catch-up"
                                     % api_ids[0]), "verify: %d %r %r" % (rc, out, err))
    rc, out, err = cmd.run("show", "stripe", api_ids[0])
    check(rc == 0 and "Idemhook-Source: api" in out, "show: %r" % out[:600])


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
    # The same checks in idemhook work, with IDEMHOOK_HEALTH_INTERVAL.
    os.unlink(alert)
    rc, out, err = cmd.run("work", "--once", IDEMHOOK_ALERT_ACTION=action,
                           IDEMHOOK_HEALTH_INTERVAL="60")
    check(rc == 0 and not os.path.exists(alert), "work, healthy: %d %r" % (rc, err))
    api.set_endpoint(status="disabled")
    rc, out, err = cmd.run("work", "--once", IDEMHOOK_ALERT_ACTION=action,
                           IDEMHOOK_HEALTH_INTERVAL="60")
    api.set_endpoint(status="enabled")
    check_eq(rc, 0, "work exit status: %s" % err[-300:])
    with open(alert) as f:
        text = f.read()
    check(text.startswith("endpoint stripe\n") and "disabled" in text,
          "work's alert: %r" % text)
    check("health provider=stripe problems=1 outcome=problem" in cmd.logtext(),
          "work's health line: %r" % cmd.logtext()[-400:])
    no_key(cmd, out, err)


def case_destinations(cmd, api, tmp):
    """Stripe's v2 event destinations, read page by page: a disabled one
    is a problem (exit 3, the alert) like a disabled endpoint; a key that
    may not read them is said, not a problem."""
    alert = os.path.join(tmp, "alert-ed.txt")
    action = '{ echo "$IDEMHOOK_ALERT_REASON $IDEMHOOK_PROVIDER"; cat; } > %s' % alert
    thin = api.add_destination("thin")
    snap = api.add_destination("snapshot")
    api.dest_page = 1
    try:
        n = len(api.calls("/v2/core/event_destinations"))
        rc, out, err = cmd.run("health", "--provider", "stripe")
        check_eq(rc, 0, "both enabled: %s %s" % (out, err))
        check(thin in out and snap in out and "(thin events, webhook_endpoint): enabled"
              in out, "both reported: %r" % out)
        calls = api.calls("/v2/core/event_destinations")[n:]
        check_eq([(c["status"], c["query"].get("page"), c["headers"].get("stripe-version"))
                  for c in calls],
                 [(200, None, "2025-09-30.clover"), (200, ["1"], "2025-09-30.clover")],
                 "two pages through next_page_url, with a v2 Stripe-Version")
        api.set_destination(thin, "disabled", "user")
        rc, out, err = cmd.run("health", "--provider", "stripe",
                               IDEMHOOK_ALERT_ACTION=action)
        check_eq(rc, 3, "a disabled destination is a problem: %s %s" % (out, err))
        bad = [l for l in out.splitlines() if thin in l]
        check(len(bad) == 1 and "PROBLEM" in bad[0] and "disabled (reason: user)" in bad[0],
              "the problem: %r" % out)
        check(not [l for l in out.splitlines() if snap in l and "PROBLEM" in l],
              "the enabled one is fine: %r" % out)
        with open(alert) as f:
            text = f.read()
        check(text.startswith("endpoint stripe\n") and thin in text, "alert: %r" % text)
        api.fail_path("/v2/core/event_destinations", 403)
        rc, out, err = cmd.run("health", "--provider", "stripe")
        check(rc == 0 and "event destinations not checked: HTTP 403" in out,
              "a key without v2 access: %d %r %r" % (rc, out, err))
    finally:
        api.fail_path("/v2/core/event_destinations", None)
        api.set_destination(thin, None)
        api.set_destination(snap, None)
        api.dest_page = 20
    no_key(cmd, out, err)


def wait_until(what, cond, seconds):
    deadline = time.monotonic() + seconds
    while not cond():
        check(time.monotonic() < deadline, "%s: not within %d s" % (what, seconds))
        time.sleep(0.1)


def case_health_off_path(cmd, api, srv, tmp):
    """Issue 37 item 6: idemhook work ran its health checks on its
    processing thread, so a provider API that stalls held up every
    provider's events for as long as the call could take.  With Stripe's
    API stalling every call (60 s), events made due are processed while
    the health call is still waiting, and a SIGTERM ends work without
    waiting for it."""
    ids = ["evt_offpath_%s_%d" % (os.urandom(4).hex(), i) for i in range(3)]
    for eid in ids:
        deliver(srv, json.dumps({"id": eid, "object": "event", "type": "test.offpath",
                                 "api_version": "2024-06-20", "created": int(time.time()),
                                 "data": {"object": {"id": "x_" + eid}}}).encode())
    wait_until("delivered events done", lambda: all(
        srv.rows("stripe", e) and srv.rows("stripe", e)[0]["status"] == "done"
        for e in ids), 30)
    rc, out, err = cmd.run("replay", "--status", "done", "--type", "test.offpath")
    check_eq(rc, 0, "replay: %s %s" % (out, err))
    check(all(srv.rows("stripe", e)[0]["status"] == "received" for e in ids), "not due")
    n = len(api.calls())
    api.delay = 60
    p = cmd.start("work", "--interval", "0.2", IDEMHOOK_HEALTH_INTERVAL="1",
                  IDEMHOOK_API_TIMEOUT="120")
    try:
        def stalled():
            return [c for c in api.calls()[n:] if "status" not in c]
        wait_until("the health call made", lambda: stalled() or p.poll() is not None, 30)
        if p.poll() is not None:
            check(False, "work ended: %r" % (cmd.finish(p),))
        wait_until("events processed", lambda: all(
            srv.rows("stripe", e)[0]["status"] == "done" for e in ids), 30)
        check(stalled(), "the health call was answered before the events were done")
        p.terminate()
        rc, out, err = cmd.finish(p)
        check_eq(rc, 0, "work after SIGTERM: %r" % err[-400:])
        check(stalled(), "work waited for the stalled health call before ending")
    finally:
        api.delay = 0
        if p.poll() is None:
            p.kill()
            p.communicate()


PAGE_MAX = 1000     # handlers/cli/api_session.h CATCHUP_PAGE_MAX


def case_page_cap(cmd, api, tmp):
    """Issue 37 item 6: a page of the answer is read in one pass and may
    hold at most 1000 items (every provider's pages hold 250 at most): a
    page of 1001 is refused and said, one of 1000 is read whole.  Before,
    any page was read, 8 items per pass over the whole answer (40,000
    items took 8.9 s); test_json's items_one_pass counts the passes."""
    ids = [api.add_destination("thin") for _ in range(PAGE_MAX + 1)]
    try:
        api.dest_page = PAGE_MAX + 1
        n = len(api.calls("/v2/core/event_destinations"))
        rc, out, err = cmd.run("health", "--provider", "stripe")
        check(rc != 0 and ("more than %d items" % PAGE_MAX) in err,
              "a page of %d: %d %r" % (PAGE_MAX + 1, rc, err[-400:]))
        check_eq(len(api.calls("/v2/core/event_destinations")) - n, 1,
                 "one page asked for")
        api.dest_page = PAGE_MAX
        rc, out, err = cmd.run("health", "--provider", "stripe")
        check(rc == 0 and "more than" not in err, "pages of %d: %d %r %r"
              % (PAGE_MAX, rc, out[-300:], err[-300:]))
        check_eq(len(api.calls("/v2/core/event_destinations")) - n, 3,
                 "then two pages")
    finally:
        for d in ids:
            api.set_destination(d, None)
        api.dest_page = 20


def case_no_api(cmd):
    """Standard Webhooks: no API, said so."""
    rc, out, err = cmd.run("catch-up", "--provider", "standard")
    check_eq(rc, 2, "exit status")
    check("defines no API" in err, "error: %r" % err)
    rc, out, err = cmd.run("catch-up", "--help")
    check(rc == 0 and "Standard Webhooks defines no API" in out, "help: %r" % out)
    # No key at all: one line each (api_each_provider()), exit 2.
    for what in ("catch-up", "health"):
        rc, out, err = cmd.run(what, "--json", IDEMHOOK_STRIPE_API_KEY="")
        check(rc == 2 and err.count("no provider has an API key") == 1 and
              ("idemhook: %s: " % what) in err and out.strip() == "[]",
              "%s without keys: %d %r %r" % (what, rc, out, err))


GH_TOKEN = "github_pat_11Standin" + "Zx7" * 10
GH_SCOPE = "repos/octocat/Hello-World"
GH_HOOK = "12345678"


def gh_body(action):
    return json.dumps({"action": action, "issue": {
        "number": 1347, "title": "Found a bug", "id": int.from_bytes(os.urandom(6), "big")},
        "repository": {"id": 1296269, "full_name": "octocat/Hello-World"},
        "sender": {"login": "octocat", "id": 1}}, indent=2).encode()


def gh_deliver(srv):
    def deliver(hook_id, guid, event, body, redelivery):
        h = {"X-GitHub-Event": event, "X-GitHub-Delivery": guid, "X-GitHub-Hook-ID": hook_id,
             "X-GitHub-Hook-Installation-Target-Type": "repository",
             "X-GitHub-Hook-Installation-Target-ID": "1296269",
             "User-Agent": "GitHub-Hookshot/b8c71d8", "Content-Type": "application/json",
             "X-Hub-Signature-256": sign_github(srv.secrets["github"], body)}
        return srv.post(srv.url("github"), body, h).status
    return deliver


def gh_scenario(api, srv):
    """Attempts as GitHub would list them; returns the GUIDs by group."""
    now = time.time()
    g = {k: [] for k in "ABCDEF"}

    def ev(group):
        guid = str(uuid.uuid4())
        g[group].append(guid)
        return guid, gh_body("opened")
    deliver = gh_deliver(srv)
    for i in range(150):            # delivered fine: two pages of attempts
        guid, body = str(uuid.uuid4()), gh_body("edited")
        api.attempt(GH_SCOPE, GH_HOOK, guid, "issues", body, 200, now - 72000 + i * 400)
    for i in range(6):              # A: delivered and recorded
        guid, body = ev("A")
        check_eq(deliver(GH_HOOK, guid, "issues", body, False), 200, "delivery A")
        api.attempt(GH_SCOPE, GH_HOOK, guid, "issues", body, 200, now - 50000 + i)
    for i in range(4):              # B: failed, never recorded
        guid, body = ev("B")
        api.attempt(GH_SCOPE, GH_HOOK, guid, "issues", body, 502 if i % 2 else 0,
                    now - 40000 + i * 600)
    for i in range(3):              # C: failed, then redelivered by hand
        guid, body = ev("C")
        api.attempt(GH_SCOPE, GH_HOOK, guid, "issues", body, 502, now - 30000 + i)
        check_eq(deliver(GH_HOOK, guid, "issues", body, True), 200, "delivery C")
        api.attempt(GH_SCOPE, GH_HOOK, guid, "issues", body, 200, now - 20000 + i,
                    redelivery=True)
    for i in range(2):              # D: recorded, but GitHub timed out
        guid, body = ev("D")
        check_eq(deliver(GH_HOOK, guid, "issues", body, False), 200, "delivery D")
        api.attempt(GH_SCOPE, GH_HOOK, guid, "issues", body, 0, now - 10000 + i)
    guid, body = ev("E")         # E: failed two days ago, outside --since 1d
    api.attempt(GH_SCOPE, GH_HOOK, guid, "issues", body, 502, now - 2 * 86400)
    guid, body = ev("F")         # F: redelivered three times, failing
    for i in range(4):
        api.attempt(GH_SCOPE, GH_HOOK, guid, "issues", body, 500, now - 5000 + i,
                    redelivery=i > 0)
    return g


def gh_template(path):
    import re
    t = re.sub(r"^/repos/[^/]+/[^/]+/", "/repos/{owner}/{repo}/", path)
    t = re.sub(r"^/orgs/[^/]+/", "/orgs/{org}/", t)
    t = re.sub(r"/hooks/\d+", "/hooks/{hook_id}", t)
    return re.sub(r"/deliveries/\d+", "/deliveries/{delivery_id}", t)


def case_github(cmd, api, srv):
    """Failed deliveries are redelivered (signed, verified, recorded by the
    receiver); failed-then-succeeded and recorded ones are not; a dry run
    asks nothing; the stand-in's answers match GitHub's OpenAPI."""
    g = gh_scenario(api, srv)
    rows0 = len(srv.rows("github"))
    check_eq(rows0, 11, "github rows before")
    rc, out, err = cmd.run("catch-up", "--provider", "github", "--since", "1d",
                           "--dry-run", "--json")
    check_eq(rc, 3, "dry run exit status: %s" % err[-300:])
    r = json.loads(out)[0]
    check_eq((r["missing"], r["asked"], r["failed"]), (5, 0, 1), "dry run: %r" % r)
    check_eq(api.redelivered, [], "nothing redelivered by a dry run")
    rc, out, err = cmd.run("catch-up", "--provider", "github", "--since", "1d", "--json")
    check_eq(rc, 3, "exit status: %s" % err[-300:])
    r = json.loads(out)[0]
    print("# github: %r" % {k: r[k] for k in ("pages", "listed", "missing", "asked",
                                              "failed")})
    check_eq((r["missing"], r["asked"], r["failed"]), (5, 4, 1), "run: %r" % r)
    check_eq(r["pages"], 2, "pages of 100, the second through the Link header")
    api.wait_redeliveries()
    check_eq(sorted(api.redelivered), sorted(g["B"]), "redelivered")
    rows = {x["event_id"]: x for x in wait_done(srv, rows0 + 4, 30, "github")}
    for guid in g["B"]:
        x = rows.get("%s:%s" % (GH_HOOK, guid))
        check(x is not None, "B event %s not recorded" % guid)
        check("X-Hub-Signature-256" in (x["headers"] or "") and
              "Idemhook-Source" not in (x["headers"] or ""),
              "a redelivery is a signed delivery: %r" % x["headers"])
    calls = [c for c in api.calls() if c["path"].endswith("/deliveries")]
    check(any("cursor" in c["query"] for c in calls), "a page by cursor")
    rc, out, err = cmd.run("catch-up", "--provider", "github", "--since", "1d", "--json")
    r = json.loads(out)[0]
    check_eq((rc, r["missing"], r["asked"]), (3, 1, 0), "second run: %r" % r)
    desc_check(api)
    no_key_in(GH_TOKEN, cmd, out, err)


class ManyAttempts(Standin):
    """A hook listing n attempts, all answered 200, newest first, 100 a
    page by cursor (as GitHub does), made up per page."""

    def __init__(self, n):
        super().__init__()
        self.n = n
        self.now = int(time.time())

    def route(self, req):
        if req["headers"].get("authorization") != "Bearer " + GH_TOKEN:
            return (401, {}, {"message": "Bad credentials"})
        q = {k: v[-1] for k, v in req["query"].items()}
        start = int(q.get("cursor", "v1_0")[3:])
        end = min(start + 100, self.n)
        page = [{"id": 5000000 + self.n - i, "guid": "g-%08d" % i, "event": "push",
                 "delivered_at": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                               time.gmtime(self.now - i // 100)),
                 "status_code": 200, "redelivery": False, "status": "OK"}
                for i in range(start, end)]
        h = {}
        if end < self.n:
            h["Link"] = '<%s/%s/hooks/%s/deliveries?per_page=100&cursor=v1_%d>; rel="next"' % (
                self.base, GH_SCOPE, GH_HOOK, end)
        return (200, h, page)


def case_github_cap(bindir, srv):
    """More attempts in the window than a run collects (100,000): the run
    says how many it did not look at, and its exit status is 1 (issue 37
    item 9)."""
    api = ManyAttempts(100000 + 250).start()
    try:
        cmd = Cmd(bindir, srv, srv.tmp, IDEMHOOK_GITHUB_API_KEY=GH_TOKEN,
                  IDEMHOOK_GITHUB_API_BASE=api.base,
                  IDEMHOOK_GITHUB_HOOKS="%s/%s" % (GH_SCOPE, GH_HOOK))
        rc, out, err = cmd.run("catch-up", "--provider", "github", "--since", "2d",
                               "--dry-run")
        check_eq(rc, 1, "exit status: %r %r" % (out[-300:], err[-300:]))
        check("github: incomplete: 250 listed in the window not looked at" in out,
              "stdout: %r" % out[-500:])
        check("250 attempt(s) of the window not looked at" in err, "stderr: %r" % err[-500:])
        with open(cmd.log) as f:
            line = [x for x in f if "catchup provider=github" in x][-1]
        check("listed=100000 " in line and "not_looked_at=250 " in line
              and "outcome=failed" in line, "log: %r" % line)
    finally:
        api.stop()


def desc_check(api, least=8):
    if not os.path.exists(openapi.GITHUB):
        check(False, "GitHub's OpenAPI description is not installed: run "
              "tests/deps.sh (npm ci in tests/openapi)")
    desc = openapi.Description(openapi.GITHUB)
    n = 0
    for c in api.calls():
        if c["status"] in (200, 202):
            desc.check(c["method"], gh_template(c["path"]), c["query"], c["status"],
                       c["answer"])
            n += 1
    print("# %d stand-in answers checked against GitHub's OpenAPI description" % n)
    check(n >= least, "answers checked: %d" % n)


APP_ID = "1234567"
APP_HOOK = "87654321"


def app_key(path):
    """A GitHub App's private key as GitHub gives it (PKCS#1 PEM), 0600;
    returns its public key's PEM."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    k = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(k.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption()))
    return k.public_key().public_bytes(serialization.Encoding.PEM,
                                       serialization.PublicFormat.SubjectPublicKeyInfo)


def case_github_app(bindir, srv, tmp):
    """The GitHub App's own webhook (IDEMHOOK_GITHUB_HOOKS=app/HOOK_ID),
    with the App's JWT (RS256, checked by the stand-in with the public
    key) and no token: a failed delivery is redelivered, signed and
    recorded; a recorded one is left alone; health reads its config and
    last delivery; another key is refused (exit 2, nothing asked); the
    answers match GitHub's OpenAPI description."""
    keyfile, other = os.path.join(tmp, "app.pem"), os.path.join(tmp, "other.pem")
    pub = app_key(keyfile)
    app_key(other)
    deliver = gh_deliver(srv)
    api = GitHubStandin("no-token-for-the-app", deliver).start()
    try:
        api.add_app(APP_ID, pub, APP_HOOK, srv.url("github"))
        now = time.time()
        ok_guid, failed_guid = str(uuid.uuid4()), str(uuid.uuid4())
        body = gh_body("opened")
        check_eq(deliver(APP_HOOK, ok_guid, "issues", body, False), 200, "delivery")
        api.attempt("app", APP_HOOK, ok_guid, "issues", body, 200, now - 600)
        api.attempt("app", APP_HOOK, failed_guid, "issues", gh_body("closed"), 502, now - 300)
        cmd = Cmd(bindir, srv, tmp, IDEMHOOK_GITHUB_API_BASE=api.base,
                  IDEMHOOK_GITHUB_HOOKS="app/" + APP_HOOK, IDEMHOOK_GITHUB_APP_ID=APP_ID,
                  IDEMHOOK_GITHUB_APP_KEY_FILE=keyfile)
        rc, out, err = cmd.run("catch-up", "--provider", "github", "--since", "1h", "--json")
        check_eq(rc, 3, "exit status: %s" % err[-300:])
        r = json.loads(out)[0]
        check_eq((r["listed"], r["missing"], r["asked"]), (2, 1, 1), "run: %r" % r)
        api.wait_redeliveries()
        check_eq(api.redelivered, [failed_guid], "redelivered")
        row = [x for x in srv.rows("github") if x["event_id"] == "%s:%s" % (APP_HOOK,
                                                                            failed_guid)]
        check(row and "X-Hub-Signature-256" in (row[0]["headers"] or ""),
              "the redelivery recorded, signed: %r" % row)
        check(api.jwt_seen and all(c["iss"] == APP_ID for c in api.jwt_seen),
              "the App's JWT: %r" % api.jwt_seen[:1])
        rc, out, err = cmd.run("health", "--provider", "github")
        check(rc == 0 and "app/%s %s" % (APP_HOOK, srv.url("github")) in out,
              "health: %d %r %r" % (rc, out, err))
        n = len(api.calls())
        rc, out, err = cmd.run("catch-up", "--provider", "github",
                               IDEMHOOK_GITHUB_APP_KEY_FILE=other)
        check(rc == 2 and "IDEMHOOK_GITHUB_APP_KEY_FILE" in err, "another key: %d %r" % (rc, err))
        check_eq([c["status"] for c in api.calls()[n:]], [401], "refused, nothing asked")
        desc_check(api, 4)
        # The tokens the stand-in was sent and the keys' own lines, looked
        # for whole and by part: "eyJ" alone is also in any base64 text
        # that happens to hold it (a flake once in 30 runs).
        secrets = [line for f in (keyfile, other) for line in open(f).read().split()
                   if len(line) >= 40]
        for r in api.requests:
            tok = r["headers"].get("authorization", "").split()[-1:]
            if tok and tok[0].count(".") == 2:
                secrets += [tok[0]] + [p for p in tok[0].split(".")[1:] if len(p) >= 20]
        check(any(s.count(".") == 2 for s in secrets), "no App token seen by the stand-in")
        for t in (out, err, cmd.logtext()):
            check("PRIVATE KEY" not in t and not any(s in t for s in secrets),
                  "the key or token was printed")
    finally:
        api.stop()


def no_key_in(key, cmd, *texts):
    for t in texts + (cmd.logtext(),):
        check(key not in t and key[12:] not in t, "the token was printed")


def case_release_off_path(cmd, api, srv):
    """idemhook work released GitHub's held repeats on its processing
    thread, so a deliveries API that stalls held up every provider's
    events for as long as the call could take.  With the listing of
    deliveries stalled, Stripe's events made due meanwhile are processed;
    the held repeat is released once the listing is answered; and a
    SIGTERM ends work without waiting for a stalled listing."""
    body = gh_body("transferred")
    guids = [str(uuid.uuid4()) for _ in range(3)]
    gdeliver = gh_deliver(srv)
    for guid in guids[:2]:
        check_eq(gdeliver(GH_HOOK, guid, "issues", body, False), 200, "delivery")
        api.attempt(GH_SCOPE, GH_HOOK, guid, "issues", body, 200, time.time())

    def gh_status(guid):
        rows = srv.rows("github", "%s:%s" % (GH_HOOK, guid))
        return rows[0]["status"] if rows else None
    check_eq(gh_status(guids[1]), "held", "the repeat")
    ids = ["evt_reloff_%s_%d" % (os.urandom(4).hex(), i) for i in range(3)]
    for eid in ids:
        deliver(srv, json.dumps({"id": eid, "object": "event", "type": "test.reloff",
                                 "api_version": "2024-06-20", "created": int(time.time()),
                                 "data": {"object": {"id": "x_" + eid}}}).encode())
    wait_until("delivered events done", lambda: all(
        srv.rows("stripe", e) and srv.rows("stripe", e)[0]["status"] == "done"
        for e in ids), 30)
    listing = "/%s/hooks/%s/deliveries" % (GH_SCOPE, GH_HOOK)
    n = len(api.calls(listing))

    def stalled():
        return [c for c in api.calls(listing)[n:] if "status" not in c]
    api.listing.clear()
    p = cmd.start("work", "--interval", "0.2", IDEMHOOK_API_TIMEOUT="120")
    try:
        wait_until("the listing asked for", lambda: stalled() or p.poll() is not None, 60)
        if p.poll() is not None:
            check(False, "work ended: %r" % (cmd.finish(p),))
        # Made due while the listing waits: done without waiting for it.
        rc, out, err = cmd.run("replay", "--status", "done", "--type", "test.reloff")
        check_eq(rc, 0, "replay: %s %s" % (out, err))
        wait_until("events processed", lambda: all(
            srv.rows("stripe", e)[0]["status"] == "done" for e in ids), 60)
        check(stalled(), "the listing was answered before the events were done")
        api.listing.set()
        wait_until("the held repeat released and done",
                   lambda: gh_status(guids[1]) == "done", 120)
        p.terminate()
        rc, out, err = cmd.finish(p)
        check_eq(rc, 0, "work after SIGTERM: %r" % err[-400:])
        # Another repeat held: a SIGTERM while its listing stalls.
        check_eq(gdeliver(GH_HOOK, guids[2], "issues", body, False), 200, "delivery")
        check_eq(gh_status(guids[2]), "held", "the third")
        n = len(api.calls(listing))
        api.listing.clear()
        p = cmd.start("work", "--interval", "0.2", IDEMHOOK_API_TIMEOUT="120")
        wait_until("the listing asked for again",
                   lambda: stalled() or p.poll() is not None, 60)
        p.terminate()
        rc, out, err = cmd.finish(p)
        check_eq(rc, 0, "work after SIGTERM: %r" % err[-400:])
        check(stalled(), "work waited for the stalled listing before ending")
    finally:
        api.listing.set()
        if p.poll() is None:
            p.kill()
            p.communicate()


def case_github_health(cmd, api, srv):
    """The hook's active flag and last response; GitHub's exhausted rate
    limit waited for until its reset; a wrong token."""
    reset = int(time.time()) + 2
    api.fail_next(403, {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "0",
                        "x-ratelimit-used": "5000", "x-ratelimit-resource": "core",
                        "x-ratelimit-reset": str(reset)},
                  {"message": "API rate limit exceeded for user ID 1.",
                   "documentation_url": "https://docs.github.com/rest/overview/"
                                        "rate-limits-for-the-rest-api"})
    n0 = len(api.calls())
    rc, out, err = cmd.run("health", "--provider", "github")
    check_eq(rc, 0, "healthy: %s %s" % (out, err))
    calls = api.calls()[n0:]
    check_eq([c["status"] for c in calls], [403, 200], "rate limited, then answered")
    check(time.time() >= reset and calls[1]["at"] - calls[0]["at"] >= 0.9,
          "waited for X-RateLimit-Reset")
    check("active" in out, "output: %r" % out)
    api.hooks[(GH_SCOPE, GH_HOOK)]["active"] = False
    api.hooks[(GH_SCOPE, GH_HOOK)]["last_response"] = {
        "code": 502, "status": "failed", "message": "Invalid HTTP Response: 502"}
    rc, out, err = cmd.run("health", "--provider", "github", "--json")
    api.hooks[(GH_SCOPE, GH_HOOK)]["active"] = True
    check_eq(rc, 3, "exit status")
    r = json.loads(out)[0]
    check_eq(r["problems"], 2, "problems: %r" % r)
    rc, out, err = cmd.run("catch-up", "--provider", "github",
                           IDEMHOOK_GITHUB_API_KEY="github_pat_wrongwrong")
    check_eq(rc, 2, "wrong token: exit status")
    check("IDEMHOOK_GITHUB_API_KEY" in err and "wrongwrong" not in out + err,
          "wrong token: %r" % err)
    desc_check(api)
    no_key_in(GH_TOKEN, cmd, out, err)


AS_KEY = "$aact_hmlg_000MzkwODA2MWY2OGM3MWRlMDU2NWM3MzJlNzZmNGZhZGY6OnN0YW5kaW4"


def as_body(eid, etype, status):
    return json.dumps({"id": eid, "event": etype, "dateCreated": "2026-11-20 10:00:00",
                       "payment": {"object": "payment", "id": "pay_standin01", "value": 100.0,
                                   "status": status, "billingType": "PIX"}},
                      indent=2).encode()


def case_asaas(cmd, api, srv):
    """An interrupted queue: reported; --repair resumes it, Asaas sends what
    it held, in order; the payment ends in the in-order state."""
    steps = [("PAYMENT_CREATED", "PENDING"), ("PAYMENT_UPDATED", "PENDING"),
             ("PAYMENT_CONFIRMED", "CONFIRMED"), ("PAYMENT_RECEIVED", "RECEIVED"),
             ("PAYMENT_REFUNDED", "REFUNDED")]
    bodies = [as_body("evt_%s&%d" % (os.urandom(8).hex(), i), e, st)
              for i, (e, st) in enumerate(steps)]
    api.interrupt(bodies)
    rc, out, err = cmd.run("health", "--provider", "asaas")
    check_eq(rc, 3, "health exit status: %s" % out)
    check("interrupted" in out and "under penalty" in out, "health: %r" % out)
    rc, out, err = cmd.run("catch-up", "--provider", "asaas")
    check_eq(rc, 3, "exit status: %s" % err[-300:])
    check("--repair" in out, "says how to resume: %r" % out)
    check(not [c for c in api.calls() if c["method"] == "PUT"], "no change without --repair")
    rc, out, err = cmd.run("catch-up", "--provider", "asaas", "--repair", "--json")
    check_eq(rc, 3, "exit status: %s" % err[-300:])
    r = json.loads(out)[0]
    check_eq((r["missing"], r["asked"]), (1, 1), "repair: %r" % r)
    api.wait_sent()
    check_eq([s for _, s in api.sent], [200] * 5, "held events sent and accepted")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        rows = srv.rows("asaas")
        if len(rows) == 5 and all(x["status"] == "done" for x in rows):
            break
        time.sleep(0.2)
    check_eq(sorted(x["status"] for x in srv.rows("asaas")), ["done"] * 5, "processed")
    o = srv.connect_ro().execute("SELECT status FROM idemhook_objects WHERE "
                                 "provider='asaas' AND object_id='pay_standin01'").fetchall()
    check_eq([tuple(x) for x in o], [("REFUNDED",)], "payment in order")
    rc, out, err = cmd.run("catch-up", "--provider", "asaas")
    check_eq(rc, 0, "second run: %s %s" % (out, err))
    rc, out, err = cmd.run("health", "--provider", "asaas")
    check_eq(rc, 0, "healthy again: %s" % out)
    rc, out, err = cmd.run("catch-up", "--provider", "asaas",
                           IDEMHOOK_ASAAS_API_KEY="$aact_hmlg_wrongwrongwrong")
    check("IDEMHOOK_ASAAS_API_KEY" in err and "wrongwrong" not in out + err and rc == 2,
          "wrong key: %d %r" % (rc, err))
    no_key_in(AS_KEY, cmd, out, err)


SH_TOKEN = "shpat_" + "5tand1n" * 4


def case_shopify(cmd, api, srv):
    """A missing subscription: reported with the gap; --repair re-creates it."""
    body = json.dumps({"id": 820982911946154508, "email": "jon@example.com",
                       "financial_status": "paid", "total_price": "10.00",
                       "updated_at": "2026-11-26T01:00:00-00:00"}).encode()
    r = srv.post(srv.url("shopify"), body, {
        "X-Shopify-Topic": "orders/create", "X-Shopify-Webhook-Id": str(uuid.uuid4()),
        "X-Shopify-Event-Id": str(uuid.uuid4()), "X-Shopify-Shop-Domain": "shop.myshopify.com",
        "X-Shopify-API-Version": "2025-07", "Content-Type": "application/json",
        "X-Shopify-Hmac-Sha256": sign_shopify(srv.secrets["shopify"], body)})
    check_eq(r.status, 200, "a Shopify delivery")
    rc, out, err = cmd.run("health", "--provider", "shopify")
    check_eq(rc, 3, "health exit status: %s %s" % (out, err))
    check("orders/paid: not subscribed; no orders/paid delivery is recorded" in out,
          "health: %r" % out)
    rc, out, err = cmd.run("catch-up", "--provider", "shopify")
    check_eq(rc, 3, "exit status: %s" % err[-300:])
    check("orders/paid: not subscribed (--repair re-creates it)" in out, "out: %r" % out)
    check("note: the earliest gap: no orders/paid delivery is recorded" in out
          or "note: the earliest gap: no app/uninstalled delivery" in out, "gap: %r" % out)
    n = len(api.subs)
    # Orders: one updated before the gap, three states of two after it.
    later = lambda dt: time.strftime("%Y-%m-%dT%H:%M:%S-00:00", time.gmtime(time.time() + dt))
    api.order(1001, "pending", "2026-01-01T00:00:00-05:00")
    api.order(1002, "pending", later(2))
    api.order(1002, "paid", later(4))
    api.order(1003, "refunded", later(6))
    rc, out, err = cmd.run("catch-up", "--provider", "shopify", "--repair", "--json")
    check_eq(rc, 3, "exit status: %s" % err[-300:])
    r = json.loads(out)[0]
    check_eq((r["listed"], r["missing"], r["asked"], r["recorded"]), (7, 4, 1, 3),
             "repair: %r" % r)
    rows = [x for x in srv.rows("shopify") if "Idemhook-Source: api" in (x["headers"] or "")]
    check_eq(sorted(x["event_id"].split(":")[1] for x in rows), ["1002", "1002", "1003"],
             "the gap's orders recorded")
    check(all(x["event_type"] == "orders/updated" and "X-Shopify-Topic: orders/updated"
              in x["headers"] for x in rows), "as orders/updated: %r" % rows[:1])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(
            x["status"] != "done" for x in srv.rows("shopify")):
        time.sleep(0.2)
    objs = dict(tuple(x) for x in srv.connect_ro().execute(
        "SELECT object_id, status FROM idemhook_objects WHERE provider='shopify' "
        "AND object_id IN ('1001', '1002', '1003')"))
    check_eq(objs, {"1002": "paid", "1003": "refunded"}, "orders in the in-order state")
    check_eq(len(api.subs), n + 1, "one subscription created")
    check_eq((api.subs[-1]["topic"], api.subs[-1]["uri"]),
             ("ORDERS_PAID", "https://hooks.example.com/hooks/shopify"), "re-created")
    check(r["pages"] >= 3, "paged by endCursor: %r" % r)
    rc, out, err = cmd.run("catch-up", "--provider", "shopify")
    check_eq(rc, 0, "second run: %s %s" % (out, err))
    rc, out, err = cmd.run("health", "--provider", "shopify",
                           IDEMHOOK_SHOPIFY_API_KEY="shpat_wrongwrong")
    check(rc == 2 and "IDEMHOOK_SHOPIFY_API_KEY" in err and "wrongwrong" not in out + err,
          "wrong token: %d %r" % (rc, err))
    no_key_in(SH_TOKEN, cmd, out, err)


def shopify_post(srv, topic, oid):
    body = json.dumps({"id": oid, "financial_status": "paid", "total_price": "1.00",
                       "updated_at": "2026-11-26T01:00:00-00:00"}).encode()
    r = srv.post(srv.url("shopify"), body, {
        "X-Shopify-Topic": topic, "X-Shopify-Webhook-Id": str(uuid.uuid4()),
        "X-Shopify-Event-Id": str(uuid.uuid4()), "X-Shopify-Shop-Domain": "shop.myshopify.com",
        "X-Shopify-API-Version": "2025-07", "Content-Type": "application/json",
        "X-Shopify-Hmac-Sha256": sign_shopify(srv.secrets["shopify"], body)})
    check_eq(r.status, 200, "a Shopify %s delivery" % topic)


def case_shopify_topic_gap(cmd, api, srv):
    """The gap of a missing subscription starts at that topic's last
    delivery, not the last delivery of any topic (issue 37 item 10):
    orders/paid last arrived three hours ago, orders/create a moment ago."""
    shopify_post(srv, "orders/paid", 777001)
    then_ms = int(time.time() * 1000) - 3 * 3600 * 1000
    c = db_connect(srv.db)
    c.execute("UPDATE events SET received_at = ?, last_seen_at = ? WHERE provider = 'shopify'"
              " AND event_type = 'orders/paid'", (then_ms, then_ms))
    c.commit()
    c.close()
    shopify_post(srv, "orders/create", 777002)
    api.remove("ORDERS_PAID")
    rc, out, err = cmd.run("catch-up", "--provider", "shopify")
    check_eq(rc, 3, "exit status: %s" % err[-300:])
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(then_ms // 1000))
    check("orders/paid: not subscribed (--repair re-creates it); the last orders/paid"
          " delivery was recorded at %s" % when in out, "catch-up: %r" % out)
    check("note: the earliest gap: the last orders/paid delivery was recorded at %s" % when
          in out, "note: %r" % out)
    rc, out, err = cmd.run("health", "--provider", "shopify")
    check("orders/paid: not subscribed; the last orders/paid delivery was recorded at %s"
          % when in out, "health: %r" % out)


def case_modes(cmd, srv, tmp):
    """Caught-up events follow IDEMHOOK_MODE and the actions as deliveries
    do: after-response and inline run each event's action once (more
    events than one recording batch), worker leaves them to idemhook
    work, which runs them once."""
    for mode in ("after-response", "inline", "worker"):
        api = StripeStandin(KEY).start()
        try:
            now = int(time.time())
            ids = ["evt_%s_%03d" % (mode.replace("-", ""), i) for i in range(70)]
            for i, eid in enumerate(ids):
                api.add(api.event(eid, "customer.subscription.updated",
                                  {"id": "sub_%s_%d" % (mode, i % 7), "object": "subscription",
                                   "status": "active"}, now - 600 + i))
            ran = os.path.join(tmp, "ran-%s.txt" % mode)
            env = dict(IDEMHOOK_STRIPE_API_BASE=api.base, IDEMHOOK_MODE=mode,
                       IDEMHOOK_STRIPE_ACTION="customer.subscription.* /bin/sh -c "
                       "'cat >/dev/null; echo $IDEMHOOK_EVENT_ID >> %s'" % ran)
            rc, out, err = cmd.run("catch-up", "--provider", "stripe", "--since", "1h",
                                   "--json", **env)
            check_eq(rc, 3, "%s: exit status: %s" % (mode, err[-300:]))
            check_eq(json.loads(out)[0]["recorded"], 70, "%s: recorded" % mode)
            if mode == "worker":
                check(not os.path.exists(ran), "worker: nothing ran before idemhook work")
                rc, out, err = cmd.run("work", "--once", **env)
                check_eq(rc, 0, "work: %s" % err[-300:])
            with open(ran) as f:
                got = f.read().split()
            check_eq(sorted(got), sorted(ids), "%s: each action ran once" % mode)
            rows = [x for x in srv.rows("stripe") if x["event_id"] in set(ids)]
            check_eq(sorted(x["status"] for x in rows), ["done"] * 70, "%s: done" % mode)
        finally:
            api.stop()


def case_client_limits(cmd, srv, tmp):
    """The client's guarantees: a certificate nobody signed is refused
    (TLS verification on), a redirect is not followed (the key goes
    nowhere else), plain http to a host other than loopback is refused
    before any call; each with a clear error, nothing recorded."""
    key, crt = os.path.join(tmp, "standin.key"), os.path.join(tmp, "standin.crt")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", key, "-out", crt], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=60)
    n0 = len(srv.rows("stripe"))
    tls = StripeStandin(KEY).start(tls=(crt, key))
    redir = StripeStandin(KEY).start()
    try:
        tls.add(tls.event("evt_tls_1", "charge.created", {"id": "ch_1", "object": "charge"},
                          int(time.time()) - 60))
        rc, out, err = cmd.run("catch-up", "--provider", "stripe",
                               IDEMHOOK_STRIPE_API_BASE=tls.base)
        check(rc == 1 and "certificate" in err.lower(), "self-signed: %d %r" % (rc, err))
        check_eq(len(tls.calls()), 0, "requests the stand-in answered")
        redir.fail_next(302, {"Location": "http://127.0.0.2:9/steal"}, {})
        rc, out, err = cmd.run("catch-up", "--provider", "stripe",
                               IDEMHOOK_STRIPE_API_BASE=redir.base)
        check(rc == 1 and "HTTP 302" in err, "redirect: %d %r" % (rc, err))
        rc, out, err = cmd.run("catch-up", "--provider", "stripe",
                               IDEMHOOK_STRIPE_API_BASE="http://192.0.2.1")
        check(rc == 2 and "https only" in err, "plain http: %d %r" % (rc, err))
        check_eq(len(srv.rows("stripe")), n0, "nothing recorded")
        no_key(cmd, out, err)
    finally:
        tls.stop()
        redir.stop()


def case_no_network(cmd, srv):
    """No network (nothing listens at the API's address): catch-up's
    stdout says the run FAILED, with the cause, instead of a summary of
    zeros; exit 1; nothing recorded (issue 39, item 12)."""
    n0 = len(srv.rows("stripe"))
    base = "http://127.0.0.1:%d" % free_port()
    rc, out, err = cmd.run("catch-up", "--provider", "stripe",
                           IDEMHOOK_STRIPE_API_BASE=base, IDEMHOOK_API_TIMEOUT="2")
    check_eq(rc, 1, "catch-up without network: exit (stderr %r)" % err[-400:])
    check("stripe: " in out and "FAILED after 0 page(s)" in out,
          "stdout does not say the run failed: %r" % out)
    check("Z: 0 page(s)" not in out, "a zero summary on stdout: %r" % out)
    check_eq(len(srv.rows("stripe")), n0, "nothing recorded")


def case_stall_and_cap(cmd, srv):
    """An API that accepts and never answers: catch-up and health end
    after IDEMHOOK_API_TIMEOUT (2 s; not tried again) with a clear error
    and exit 1; an answer claiming, or streaming, more than 32 MiB is
    refused; nonsense limits are refused (exit 2) before any call;
    nothing recorded."""
    n0 = len(srv.rows("stripe"))
    stall = RawStandin("stall").start()
    try:
        for what in (("catch-up", "--provider", "stripe"),
                     ("health", "--provider", "stripe")):
            t0 = time.monotonic()
            rc, out, err = cmd.run(*what, IDEMHOOK_STRIPE_API_BASE=stall.base,
                                   IDEMHOOK_API_TIMEOUT="2")
            took = time.monotonic() - t0
            check(rc == 1 and "no answer within 2 s (IDEMHOOK_API_TIMEOUT" in err,
                  "%s, stalled: %d %r" % (what[0], rc, err))
            check(1.5 < took < 6, "%s took %.1f s" % (what[0], took))
        check_eq(stall.accepted, 2, "one call each: a stall is not tried again")
        for bad in (dict(IDEMHOOK_API_TIMEOUT="0"), dict(IDEMHOOK_API_TIMEOUT="2s"),
                    dict(IDEMHOOK_API_TIMEOUT="5", IDEMHOOK_API_CONNECT_TIMEOUT="9")):
            rc, out, err = cmd.run("health", "--provider", "stripe",
                                   IDEMHOOK_STRIPE_API_BASE=stall.base, **bad)
            name = sorted(bad)[-1] if len(bad) == 1 else "IDEMHOOK_API_CONNECT_TIMEOUT"
            check(rc == 2 and name + ": not a whole number" in err,
                  "%r: %d %r" % (bad, rc, err))
        check_eq(stall.accepted, 2, "no call with nonsense limits")
    finally:
        stall.stop()
    for mode in ("huge", "stream"):
        big = RawStandin(mode).start()
        try:
            rc, out, err = cmd.run("catch-up", "--provider", "stripe",
                                   IDEMHOOK_STRIPE_API_BASE=big.base)
            check(rc == 1 and "answer over 33554432 bytes: refused" in err,
                  "%s: %d %r" % (mode, rc, err))
        finally:
            big.stop()
    check_eq(len(srv.rows("stripe")), n0, "nothing recorded")
    no_key(cmd, out, err)


def readme_cron():
    """The command lines of the documentation's <!-- recipe: catchup-cron
    --> block (handlers/README.md, Catching up), read as test_recipes
    reads every recipe."""
    (_, text), = recipe("catchup-cron")
    return cron_commands(text)


def case_readme_cron(bindir, srv, settings, tmp):
    """The README's cron lines, as written but for the binary's folder,
    with one settings file naming every provider's key and stand-in."""
    path = os.path.join(tmp, "catchup.env")
    with open(path, "w") as f:
        f.write("".join("%s=%s\n" % kv for kv in sorted(settings.items())))
    os.chmod(path, 0o600)
    cmd = Cmd(bindir, srv, tmp, IDEMHOOK_CONFIG=path)
    lines = readme_cron()
    check_eq(len(lines), 3, "cron lines")
    for line in lines:
        check(line.startswith("/usr/local/bin/idemhook "), "full path: %r" % line)
        args = line.split()[1:]
        rc, out, err = cmd.run(*args)
        check(rc in (0, 3), "%r: exit %d: %s %s" % (line, rc, out[-300:], err[-300:]))
        for p in ("stripe", "github", "asaas", "shopify"):
            check(p + ":" in out, "%r: nothing about %s: %r" % (line, p, out))
        for k in (KEY, GH_TOKEN, AS_KEY, SH_TOKEN):
            check(k not in out + err + cmd.logtext(), "a key was printed")


def cases(tap, bindir, servers):
    srv = servers.add(Server(bindir, providers=["stripe", "github", "asaas", "shopify"],
                             name="catchup"))
    srv.start()
    stops = []
    try:
        api = StripeStandin(KEY).start()
        stops.append(api)
        evs = stripe_events(api)
        for ev, _ in evs:
            api.add(ev)
        stripe_env = dict(IDEMHOOK_STRIPE_API_KEY=KEY, IDEMHOOK_STRIPE_API_BASE=api.base)
        cmd = Cmd(bindir, srv, srv.tmp, **stripe_env)
        tap.run("stripe: a wrong key is refused, nothing recorded, no key shown",
                case_wrong_key, cmd, api, srv)
        tap.run("stripe: down an hour, 500 events: each recorded and processed once",
                case_down_an_hour, cmd, api, srv, evs)
        tap.run("stripe: a second run records nothing", case_second_run, cmd, api, srv)
        # The PostgreSQL pass runs what records or reads the store; the
        # API client's own rules (waits, TLS, stalls) cannot differ there.
        on_pg = pg_backend()
        if on_pg:
            tap.diag("PostgreSQL pass: the client's waits, TLS and stall cases "
                     "and Standard Webhooks' no-API run in the SQLite pass only")
        if not on_pg:
            tap.run("stripe: a wait too long fails; 30 days at most",
                    case_too_long_wait, cmd, api, srv)
        tap.run("stripe: health reports a disabled endpoint and alerts",
                case_health, cmd, api, srv, srv.tmp)
        tap.run("stripe: health reports a disabled event destination (v2)",
                case_destinations, cmd, api, srv.tmp)
        tap.run("stripe: work's health call stalled: events processed meanwhile, "
                "SIGTERM ends work at once", case_health_off_path, cmd, api, srv, srv.tmp)
        tap.run("stripe: a page of more than %d items refused, said; %d read in "
                "one pass" % (PAGE_MAX, PAGE_MAX), case_page_cap, cmd, api, srv.tmp)
        if not on_pg:
            tap.run("standard: no API, said so", case_no_api, cmd)
        tap.run("stripe: caught-up events follow IDEMHOOK_MODE and the actions",
                case_modes, cmd, srv, srv.tmp)
        if not on_pg:
            tap.run("the client: TLS verified, no redirect, https only",
                    case_client_limits, cmd, srv, srv.tmp)
            tap.run("the client: a stall ends at IDEMHOOK_API_TIMEOUT, 32 MiB at "
                    "most", case_stall_and_cap, cmd, srv)
            tap.run("stripe: no network: stdout says FAILED, not a zero summary; "
                    "exit 1", case_no_network, cmd, srv)

        gh = GitHubStandin(GH_TOKEN, gh_deliver(srv)).start()
        stops.append(gh)
        gh.add_hook(GH_SCOPE, GH_HOOK, srv.url("github"))
        github_env = dict(IDEMHOOK_GITHUB_API_KEY=GH_TOKEN, IDEMHOOK_GITHUB_API_BASE=gh.base,
                          IDEMHOOK_GITHUB_HOOKS="%s/%s" % (GH_SCOPE, GH_HOOK))
        ghcmd = Cmd(bindir, srv, srv.tmp, **github_env)
        tap.run("github: failed deliveries redelivered, the rest left alone",
                case_github, ghcmd, gh, srv)
        tap.run("github: health and a wrong token", case_github_health, ghcmd, gh, srv)
        tap.run("github: work's release of held repeats stalled: other events "
                "processed meanwhile, the repeat released once answered, SIGTERM "
                "ends work at once", case_release_off_path, ghcmd, gh, srv)
        tap.run("github: the App's own webhook, with the App's JWT", case_github_app,
                bindir, srv, srv.tmp)
        if not on_pg:
            # 1,003 pages (about a minute): the store plays no part.
            tap.run("github: attempts past the 100,000 a run collects are counted, and"
                    " the run is incomplete", case_github_cap, bindir, srv)

        def as_deliver(body):
            return srv.post(srv.url("asaas"), body,
                            {ASAAS_TOKEN_HEADER: srv.secrets["asaas"],
                             "Content-Type": "application/json"}).status
        asa = AsaasStandin(AS_KEY, as_deliver).start()
        stops.append(asa)
        asaas_env = dict(IDEMHOOK_ASAAS_API_KEY=AS_KEY, IDEMHOOK_ASAAS_API_BASE=asa.base + "/v3")
        tap.run("asaas: an interrupted queue reported, resumed with --repair",
                case_asaas, Cmd(bindir, srv, srv.tmp, **asaas_env), asa, srv)

        sh = ShopifyStandin(SH_TOKEN).start()
        stops.append(sh)
        url = "https://hooks.example.com/hooks/shopify"
        for t in ("ORDERS_CREATE", "ORDERS_UPDATED", "APP_UNINSTALLED"):
            sh.subscribe(t, url)
        sh.subscribe("PRODUCTS_UPDATE", "https://other.example.com/x")
        sh.subscribe("ORDERS_PAID", "https://other.example.com/x")
        shopify_env = dict(IDEMHOOK_SHOPIFY_API_KEY=SH_TOKEN,
                           IDEMHOOK_SHOPIFY_API_BASE=sh.base + "/admin/api/2025-07",
                           IDEMHOOK_SHOPIFY_TOPICS="orders/create orders/updated "
                           "orders/paid app/uninstalled",
                           IDEMHOOK_SHOPIFY_WEBHOOK_URL=url)
        tap.run("shopify: a missing subscription reported, re-created with --repair",
                case_shopify, Cmd(bindir, srv, srv.tmp, **shopify_env), sh, srv)
        tap.run("shopify: a missing subscription's gap starts at its topic's last delivery",
                case_shopify_topic_gap, Cmd(bindir, srv, srv.tmp, **shopify_env), sh, srv)
        every = {"IDEMHOOK_DB": srv.db}
        for e in (stripe_env, github_env, asaas_env, shopify_env):
            every.update(e)
        tap.run("the README's catch-up cron lines, against the stand-ins",
                case_readme_cron, bindir, srv, every, srv.tmp)
        tap.run("no sanitizer reports", lambda: check(
            not srv.sanitizer_reports(), "sanitizer: %r" % srv.sanitizer_reports()[:2]))
    finally:
        for x in stops:
            x.stop()


if __name__ == "__main__":
    sys.exit(suite_main("catchup", cases))
