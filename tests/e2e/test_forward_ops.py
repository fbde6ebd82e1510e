#!/usr/bin/env python3
"""End-to-end tests of forwarding (issue 41), beyond test_forward.py:
what an operator sets per account and sees, and the order of an
object's events.

The application is tests/forward-app/app.mjs, as in test_forward.py: it
verifies every delivery with the provider's official library.

Shown: an account's own destination (IDEMHOOK_STRIPE_FORWARD_URL@acme,
with its own _SECRET@acme) gets the account's events, re-signed with its
own secret, while the provider's destination gets the others, and
`idemhook check` names both, refuses an account's setting that would do
nothing and flags a destination of an account that has no secret.
The events of one Stripe object reach the application one at a time, in
the order received, the later waiting while the earlier is retried;
`idemhook stats` shows why pending events wait (their object's order, a
retry) and how long the attempts (the deliveries) take.

Usage: test_forward_ops.py BINDIR   (or IH_BIN=BINDIR test_forward_ops.py)
"""

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (Server, check, check_eq, console_conf, sign_stripe,  # noqa: E402
                     suite_main)
import cases  # noqa: E402
from test_console import USER, console_hash, write_settings  # noqa: E402
from test_forward import (APP_DIR, APP_SECRETS, GITHUB, SHOPIFY, STRIPE,  # noqa: E402
                          App, Work, deliver, forward_env, once, row, wait_for)

ACME_SECRET = "whsec_acme_" + os.urandom(12).hex()
PASSWORD = "correct horse " + os.urandom(4).hex()
AUTH = "Basic " + base64.b64encode(("%s:%s" % (USER, PASSWORD)).encode()).decode()


def check_text(work, env):
    p = subprocess.run([work.cmd, "check", "--provider", "stripe"], env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    return p.returncode, (p.stdout + p.stderr).decode(errors="replace")


def case_account_destination(srv, app, work):
    """acme's events go to acme's own destination, verified there with
    acme's forwarding secret; the default account's go to the
    provider's."""
    eid = STRIPE.new_id("acme")
    body = STRIPE.body(eid, "payment_intent.succeeded")
    r = srv.post("/hooks/stripe/acme", body,
                 {"Stripe-Signature": sign_stripe(ACME_SECRET, body)})
    cases.expect_accepted(r, "delivery to the account acme")
    once(app, "stripe-acme", eid)
    check_eq(app.records("stripe", eid), [], "acme's event at the provider's route")
    other, _ = deliver(srv, "stripe")
    once(app, "stripe", other)
    check_eq(app.records("stripe-acme", other), [],
             "the default account's event at acme's route")
    wait_for("both done", lambda: all(
        x["status"] == "done" for e in (eid, other) for x in srv.rows("stripe", e)))


def case_account_check(srv, app, work):
    """check names acme's destination and each destination's limits,
    refuses acme's setting without acme's URL and malformed limits, and
    flags a destination of an account with no secret."""
    rc, text = check_text(work, work.env)
    check("ok: stripe: account acme forwards each event to %s"
          % app.url("stripe-acme") in text, "check names acme's destination: %s"
          % text[-900:])
    check("timeout, at most 4 in flight, at most 2 a second)" in text
          and "timeout, at most 4 in flight, no rate limit)" in text,
          "check names each destination's limits: %s" % text[-900:])
    check(APP_SECRETS["stripe-acme"] not in text, "check printed acme's secret")
    bad = [
        ({"IDEMHOOK_STRIPE_FORWARD_CONCURRENCY@acme": "0"},
         "IDEMHOOK_STRIPE_FORWARD_CONCURRENCY@acme must be a whole number"),
        ({"IDEMHOOK_STRIPE_FORWARD_RATE": "5/s"},
         "IDEMHOOK_STRIPE_FORWARD_RATE must be deliveries a second"),
        ({"IDEMHOOK_STRIPE_FORWARD_TIMEOUT@beta": "5"},
         "IDEMHOOK_STRIPE_FORWARD_TIMEOUT@beta is set but "
         "IDEMHOOK_STRIPE_FORWARD_URL@beta is not"),
        ({"IDEMHOOK_STRIPE_FORWARD_PAUSE_AFTER@acme": "5"}, "is not read"),
        ({"IDEMHOOK_STRIPE_FORWARD_SIGN@acme": "hmac"},
         "IDEMHOOK_STRIPE_FORWARD_SIGN@acme must be"),
        ({"IDEMHOOK_STRIPE_FORWARD_URL@nobody": app.url("stripe-acme"),
          "IDEMHOOK_STRIPE_FORWARD_SECRET@nobody": "x" * 20},
         "IDEMHOOK_STRIPE_FORWARD_URL@nobody names no account with a secret"),
    ]
    for change, want in bad:
        env = dict(work.env)
        env.update(change)
        rc, text = check_text(work, env)
        check(rc != 0 and want in text, "check with %r: exit %d, wants %r in: %s"
              % (change, rc, want, text[-700:]))


def case_limits_check(srv, app, work):
    """With the receivers' settings, check finds the store's limits its
    own and nothing logs a replacement; with another
    IDEMHOOK_STRIPE_FORWARD_CONCURRENCY, check reports both values as a
    problem (another process runs with other settings)."""
    rc, text = check_text(work, work.env)
    check("ok: stripe: destination default: the store's limits are these "
          "settings'" in text and "ok: stripe: destination acme: the store's "
          "limits are these settings'" in text and "FORWARD_CONCURRENCY is" not in text,
          "check, the same settings: %s" % text[-900:])
    logs = work.stderr() + srv.errorlog() + srv.stderr_text()
    check("limits-replaced" not in logs,
          "a replacement logged with the same settings")
    env = dict(work.env)
    env["IDEMHOOK_STRIPE_FORWARD_CONCURRENCY"] = "3"
    rc, text = check_text(work, env)
    check(rc == 1 and "PROBLEM: stripe: destination default: "
          "IDEMHOOK_STRIPE_FORWARD_CONCURRENCY is 3 here but 4 in the store: "
          "another process runs, or ran, with other settings" in text,
          "check, another concurrency: exit %d: %s" % (rc, text[-900:]))
    limits_pause_after(srv, app, work)


def limits_pause_after(srv, app, work):
    """IDEMHOOK_STRIPE_FORWARD_PAUSE_AFTER is stored with the other
    limits: a process started with 5 claims a replayed event, writes it
    and logs the replacement; check with the receivers' 3 reports both
    values; a receiver's first claim of a new event (in its insert)
    writes 3 back and logs it too.  The background work is stopped
    meanwhile, so that it does not claim the replayed event first."""
    pause = "IDEMHOOK_STRIPE_FORWARD_PAUSE_AFTER"
    first = stripe_event(srv, "payment_intent.created",
                         "pi_lim_" + os.urandom(6).hex(), int(time.time()))
    once(app, "stripe", first)
    work.stop()
    try:
        rc, out, err = work.run("replay", "stripe", first)
        check(rc == 0, "replay: exit %d: %s" % (rc, (out + err)[-600:]))
        rc, out, err = work.run("work", "--once", "--provider", "stripe",
                                env={pause: "5"})
        check(rc == 0 and "provider=stripe forward=limits-replaced "
              "destination=default: %s 3 failures -> 5 failures: another process "
              "runs, or ran, with other settings" % pause in err,
              "work with _PAUSE_AFTER=5: exit %d: %s" % (rc, err[-900:]))
        rc, text = check_text(work, work.env)
        check(rc == 1 and "PROBLEM: stripe: destination default: %s is 3 here "
              "but 5 in the store (0: never pause): another process runs, or "
              "ran, with other settings" % pause in text,
              "check, another pause threshold: exit %d: %s" % (rc, text[-900:]))
        eid = stripe_event(srv, "payment_intent.created",
                           "pi_lim_" + os.urandom(6).hex(), int(time.time()))
        want = ("provider=stripe forward=limits-replaced destination=default: "
                "%s 5 failures -> 3 failures" % pause)
        wait_for("the receiver's limits-replaced line",
                 lambda: want in srv.errorlog() + srv.stderr_text())
        once(app, "stripe", eid)
        rc, text = check_text(work, work.env)
        check("ok: stripe: destination default: the store's limits are these "
              "settings'" in text and "%s is" % pause not in text,
              "check after the receiver's claim: exit %d: %s" % (rc, text[-900:]))
    finally:
        work.start()


def stripe_event(srv, etype, pi, created):
    eid = STRIPE.new_id("ord")
    body = json.dumps({"id": eid, "object": "event", "api_version": "2024-06-20",
                       "created": created, "type": etype, "livemode": False,
                       "data": {"object": {"id": pi, "object": "payment_intent",
                                           "status": etype.split(".")[1],
                                           "amount": 2000}}}).encode()
    r = STRIPE.post(srv, body, STRIPE.headers(srv, body, eid, etype))
    cases.expect_accepted(r, "stripe %s" % etype)
    return eid


def case_object_order(srv, app, work):
    """Stripe gives no order key: a forwarded event's object (the
    provider's mapping) is its order key, so the second event of one
    payment intent waits while the first is retried after a 500, and
    the application gets them in the order received."""
    app.plan("stripe", ["500"])
    pi = "pi_" + os.urandom(8).hex()
    now = int(time.time())
    first = stripe_event(srv, "payment_intent.processing", pi, now)
    second = stripe_event(srv, "payment_intent.succeeded", pi, now + 1)
    for eid in (first, second):
        once(app, "stripe", eid)
    got = [(r["id"], r["status"]) for r in app.records("stripe")
           if r.get("object") == pi]
    check_eq(got, [(first, 500), (first, 200), (second, 200)],
             "what the application got of the payment intent, in order")


def stripe_row(work):
    rc, out, err = work.run("stats", "--provider", "stripe", "--json")
    check_eq(rc, 0, "stats --json: %s" % err[-400:])
    rows = [x for x in json.loads(out)["providers"] if x["account"] == "default"]
    return rows[0] if rows else None


def case_waiting_shown(srv, app, work):
    """While an object's first event waits for its retry (a 429 with
    Retry-After: 8), `stats` shows it waiting for a retry and the
    object's second event waiting for its order, in --json, --prometheus
    and the table, and `list` and the console's event page say why each
    waits; once both are
    delivered, stats gives the attempts' durations."""
    app.plan("stripe", ["429:8"])
    pi = "pi_" + os.urandom(8).hex()
    now = int(time.time())
    first = stripe_event(srv, "payment_intent.processing", pi, now)
    second = stripe_event(srv, "payment_intent.succeeded", pi, now + 1)
    x = wait_for("stats: one waiting for its order, one for a retry", lambda: (
        lambda r: r if r and r["waiting"]["order"] >= 1
        and r["waiting"]["retry"] >= 1 else None)(stripe_row(work)))
    rc, out, err = work.run("list", "--provider", "stripe")
    check(rc == 0 and "waiting: behind %s, an earlier event of its object" % first
          in out, "list names what the second waits behind: %s" % (out + err)[-900:])
    check("waiting: its retry, at " in out, "list says the first waits for its "
          "retry: %s" % out[-900:])
    rc, out, err = work.run("stats", "--provider", "stripe", "--prometheus")
    check_eq(rc, 0, "stats --prometheus: %s" % err[-400:])
    for line in ('idemhook_waiting_events{provider="stripe",reason="order"}',
                 'idemhook_waiting_events{provider="stripe",reason="retry"}'):
        got = [l for l in out.splitlines() if l.startswith(line)]
        check(got and float(got[0].split()[-1]) >= 1, "%s in: %s" % (line, out[-900:]))
    rc, out, err = work.run("stats", "--provider", "stripe")
    check(rc == 0 and "WAIT-ORDER" in out, "the table: %s" % (out + err)[-900:])
    h = {"Authorization": AUTH}
    r = srv.get("/hooks/console/events/stripe/%s" % second, h)
    check(r.status == 200 and b'id="waiting">Waiting behind an earlier event of its '
          b'object: ' + first.encode() in r.body,
          "the console's page of the second: %r" % r.body[:1500])
    r = srv.get("/hooks/console/events/stripe/%s" % first, h)
    check(r.status == 200 and b'id="waiting">Waiting for its retry, at ' in r.body,
          "the console's page of the first: %r" % r.body[:1500])
    for eid in (first, second):
        once(app, "stripe", eid)
    wait_for("both done", lambda: all(
        x["status"] == "done" for e in (first, second) for x in srv.rows("stripe", e)))
    x = stripe_row(work)
    check(x["attempts"]["count"] >= 3 and x["attempts"]["p50"] is not None
          and x["attempts"]["p99"] >= x["attempts"]["p50"] >= 0,
          "the attempts' durations: %r" % x["attempts"])
    rc, out, err = work.run("stats", "--provider", "stripe", "--prometheus")
    check('idemhook_attempt_duration_seconds{provider="stripe",quantile="0.99"}'
          in out, "the attempts' p99 in: %s" % out[-900:])


# ------------------------------------------- order and pace across processes

def in_flight(recs):
    """The most deliveries the application had in flight at once, from
    the journal's arrival and answer times (an answer before an arrival
    of the same millisecond)."""
    marks = sorted([(r["at"], 1) for r in recs] + [(r["end"], -1) for r in recs])
    cur = most = 0
    for _, d in marks:
        cur += d
        most = max(most, cur)
    return most


def github_row(work):
    rc, out, err = work.run("stats", "--provider", "github", "--json")
    check_eq(rc, 0, "stats --json: %s" % err[-400:])
    rows = json.loads(out)["providers"]
    return rows[0] if rows else None


def github_push(srv):
    eid, _ = deliver(srv, "github")
    return eid


def github_issue(srv, issue_id, action):
    """An issues event of the issue issue_id: one object, so one order."""
    eid = GITHUB.new_id("iss")
    obj = json.loads(GITHUB.body(eid, "issues", action=action))
    obj["issue"]["id"] = issue_id
    body = json.dumps(obj).encode()
    r = GITHUB.post(srv, body, GITHUB.headers(srv, body, eid, "issues"))
    cases.expect_accepted(r, "github issues %s" % action)
    return eid


def case_concurrency_shared(srv, app, work):
    """IDEMHOOK_GITHUB_FORWARD_CONCURRENCY=2: with two receivers and three
    idemhook work against one store and a slow application, never more
    than two deliveries are in flight, though eight are due; stats shows
    the others waiting for concurrency."""
    app.plan("github", ["slow:1500"] * 8)
    ids = [github_push(srv) for _ in range(8)]
    wait_for("stats: waiting for concurrency", lambda: (
        lambda r: r and r["waiting"]["concurrency"] >= 1)(github_row(work)))
    for eid in ids:
        once(app, "github", eid)
    recs = [r for r in app.records("github") if r.get("id") in ids]
    check_eq(in_flight(recs), 2, "most deliveries in flight at once")


def case_pause_shared(srv, app, work):
    """The application fails: after two failed deliveries in a row, of
    any process, the destination is paused for all of them: one alert,
    stats and list say paused, and while paused only the probe is
    delivered, one request at a time; once the application answers, the
    destination resumes by itself and every event arrives once, an
    issue's two events in the order received."""
    app.plan("github", ["500", "500", "500", "429:4", "429:4"])
    issue = int.from_bytes(os.urandom(5), "big")
    first = github_issue(srv, issue, "opened")
    pushes = [github_push(srv) for _ in range(4)]
    last = github_issue(srv, issue, "closed")
    row = wait_for("stats: the destination paused, events waiting for it",
                   lambda: (lambda r: r if r and r["forward_paused"] is True
                            and r["waiting"]["paused"] >= 1 else None)(
                                github_row(work)))
    rc, out, err = work.run("list", "--provider", "github")
    check(rc == 0 and "waiting: paused, its destination after failed "
          "deliveries; the probe is " in out, "list: %s" % (out + err)[-900:])
    rc, out, err = work.run("stats", "--provider", "github", "--prometheus")
    check('idemhook_forward_paused{provider="github"} 1' in out,
          "the pause in --prometheus: %s" % out[-900:])
    # The last push is never tried before the pause: it waits for it.
    r = srv.get("/hooks/console/events/github/%s" % urllib.parse.quote(
        GITHUB.db_event_id(pushes[-1]), safe=""), {"Authorization": AUTH})
    check(r.status == 200 and b'id="waiting">Waiting (paused): its destination '
          b'is paused after failed deliveries; the probe is ' in r.body,
          "the console's page of a paused event: %r" % r.body[:1500])
    for eid in [first] + pushes + [last]:
        once(app, "github", eid)
    ids = [first] + pushes + [last]
    recs = sorted((r for r in app.records("github") if r.get("id") in ids),
                  key=lambda r: r["at"])
    failed = [r for r in recs if r["status"] != 200]
    probe = max(ids, key=lambda e: sum(1 for r in failed if r["id"] == e))
    mine = [r for r in failed if r["id"] == probe]
    check(len(mine) >= 2, "the probe retried: %r" % failed)
    resumed = min(r["at"] for r in recs if r["status"] == 200)
    paused = [r for r in recs if mine[1]["at"] <= r["at"] < resumed]
    check([r["id"] for r in paused] == [probe] * len(paused)
          and in_flight(paused) <= 1,
          "while paused, the probe alone, one at a time: %r" % paused)
    got = [r["id"] for r in recs if r["status"] == 200 and r["id"] in (first, last)]
    check_eq(got, [first, last], "the issue's events, in order")
    with open(os.path.join(srv.tmp, "alerts")) as f:
        check_eq([l for l in f.read().split() if l == "forward_paused"],
                 ["forward_paused"], "forward_paused alerts")
    check(github_row(work)["forward_paused"] is False, "resumed")
    check(row["waiting"]["paused"] >= 1, "waiting paused: %r" % row)


def case_rate_shared(srv, app, work):
    """IDEMHOOK_STRIPE_FORWARD_RATE@acme=2: acme's destination gets at
    most two deliveries a second, across every process, even though all
    six events are due at once."""
    ids = []
    for _ in range(6):
        eid = STRIPE.new_id("rate")
        body = json.dumps({"id": eid, "object": "event", "type":
                           "payment_intent.succeeded", "created": int(time.time()),
                           "api_version": "2024-06-20", "livemode": False,
                           "data": {"object": {"id": "pi_" + os.urandom(8).hex(),
                                               "object": "payment_intent",
                                               "status": "succeeded"}}}).encode()
        r = srv.post("/hooks/stripe/acme", body,
                     {"Stripe-Signature": sign_stripe(ACME_SECRET, body)})
        cases.expect_accepted(r, "delivery to acme")
        ids.append(eid)
    for eid in ids:
        once(app, "stripe-acme", eid)
    at = sorted(r["at"] for r in app.records("stripe-acme") if r.get("id") in ids)
    # Six starts 500 ms apart span 2.5 s; a delivery's own time may
    # shift one a little, never the whole.
    check(at[-1] - at[0] >= 2000, "six deliveries spread: %r" % at)
    check(max(sum(1 for b in at if a <= b < a + 1000) for a in at) <= 3,
          "at most two a second (three with the edge): %r" % at)


def case_probe_dies(srv, app, work):
    """IDEMHOOK_SHOPIFY_FORWARD_PAUSE_AFTER=2, _MAX_ATTEMPTS=3,
    _CONCURRENCY=1, and the application answers 500 five times: two
    failures pause the destination, its probe fails until it is dead,
    then the next event that fails becomes the probe; once the
    application answers, every other event is delivered once, none dead,
    and a replay delivers the dead probe."""
    app.plan("shopify", ["500"] * 5)
    ids = [deliver(srv, "shopify")[0] for _ in range(3)]
    dead = wait_for("the first probe dead", lambda: [
        e for e in ids if row(srv, "shopify", e)["status"] == "dead"])
    check_eq(len(dead), 1, "dead probes")
    probe = dead[0]
    for eid in ids:
        if eid != probe:
            once(app, "shopify", eid)
    recs = sorted((r for r in app.records("shopify") if r.get("id") in ids),
                  key=lambda r: r["at"])
    failed = [r for r in recs if r["status"] != 200]
    check_eq(len(failed), 5, "failed deliveries: %r" % failed)
    # After the first probe's last failure, another event failed: the
    # next probe, delivered first when the application came back.
    died = max(r["at"] for r in failed if r["id"] == probe)
    after = [r for r in recs if r["at"] > died]
    check(after and after[0]["id"] != probe and after[0]["status"] != 200
          and recs[recs.index(after[0]) + 1]["id"] == after[0]["id"],
          "the next failing event became the probe: %r" % recs)
    check(all(row(srv, "shopify", e)["status"] == "done" for e in ids if e != probe),
          "every other event done")
    rc, out, err = work.run("replay", "shopify", SHOPIFY.db_event_id(probe))
    check_eq(rc, 0, "replay of the dead probe: %s" % (out + err)[-400:])
    once(app, "shopify", probe)


SHARED = [case_concurrency_shared, case_pause_shared, case_rate_shared,
          case_probe_dies]


def case_smoke_forwarded(srv, app, work):
    """`idemhook smoke` with Stripe's destination set: its test event
    reaches the application, verified once, and smoke prints
    "forwarded: HTTP 200 in N ms" with the answer; when the application
    refuses it (a 400), smoke prints the FAILED line with the attempt's
    answer and exits 1; --wait 0 checks nothing (a machine without the
    store); --wait 3601 is refused."""
    url = "http://127.0.0.1:%d%s" % (srv.port, srv.url("stripe"))
    env = {"IDEMHOOK_STRIPE_SECRET": srv.secrets["stripe"]}
    rc, out, err = work.run("smoke", "stripe", url, env=env)
    check(rc == 0 and re.search(r'(?m)^forwarded: HTTP 200 in \d+ ms: "thanks"$', out),
          "smoke: exit %d: %s" % (rc, (out + err)[-900:]))
    once(app, "stripe", re.search(r"test event (idemhook_smoke_\w+)", out).group(1))
    app.plan("stripe", ["400"])
    rc, out, err = work.run("smoke", "stripe", url, env=env)
    check(rc == 1 and re.search(r'(?m)^forwarded: FAILED: attempt 1: HTTP 400 in \d+ ms, '
                                r'not retried: "no: \\x22400\\x22', out)
          and "the application did not take the test event" in err,
          "smoke, the application refusing: exit %d: %s" % (rc, (out + err)[-900:]))
    rc, out, err = work.run("smoke", "stripe", url, "--wait", "0", env=env)
    check(rc == 0 and "forwarding: to http://127.0.0.1:%d/hooks/stripe, not checked "
          "(--wait 0)" % app.port in out and "forwarded:" not in out,
          "--wait 0: exit %d: %s" % (rc, (out + err)[-600:]))
    rc, out, err = work.run("smoke", "stripe", url, "--wait", "3601", env=env)
    check(rc == 2 and "--wait 3601" in err, "--wait 3601: exit %d: %s" % (rc, err[-400:]))


CASES = [case_account_destination, case_account_check, case_limits_check,
         case_object_order,
         case_waiting_shown, case_smoke_forwarded]


def run_cases(tap, bindir, servers):
    if shutil.which("node") is None or not os.path.isdir(
            os.path.join(APP_DIR, "node_modules", "stripe")):
        tap.not_ok("setup", "node and tests/forward-app/node_modules are needed "
                   "(make deps runs npm ci there)")
        return
    srv = servers.add(Server(bindir, providers=["stripe", "github", "shopify"],
                                 name="fwd-ops"))
    app = App(srv.tmp)
    app.start()
    srv.env.update(forward_env(app))
    srv.env.update({
        "IDEMHOOK_STRIPE_SECRET@acme": ACME_SECRET,
        "IDEMHOOK_STRIPE_FORWARD_URL@acme": app.url("stripe-acme"),
        "IDEMHOOK_STRIPE_FORWARD_SECRET@acme": APP_SECRETS["stripe-acme"],
        # Room for Retry-After: 8 (waiting shown).
        "IDEMHOOK_RETRY_MAX": "10",
        "IDEMHOOK_MAX_ATTEMPTS": "20",
        # Order and pace across processes (SHARED).
        "IDEMHOOK_GITHUB_FORWARD_CONCURRENCY": "2",
        "IDEMHOOK_GITHUB_FORWARD_PAUSE_AFTER": "2",
        "IDEMHOOK_STRIPE_FORWARD_RATE@acme": "2",
        # A probe that dies (case_probe_dies): few, quick attempts.
        "IDEMHOOK_SHOPIFY_FORWARD_PAUSE_AFTER": "2",
        "IDEMHOOK_SHOPIFY_FORWARD_CONCURRENCY": "1",
        "IDEMHOOK_SHOPIFY_MAX_ATTEMPTS": "3",
        "IDEMHOOK_SHOPIFY_RETRY_BASE_MS": "200",
        "IDEMHOOK_SHOPIFY_RETRY_MAX": "1",
        "IDEMHOOK_ALERT_ACTION": 'echo "$IDEMHOOK_ALERT_REASON" >> %s'
                                 % os.path.join(srv.tmp, "alerts"),
    })
    console = os.path.join(srv.tmp, "console.env")
    write_settings(console, IDEMHOOK_DB=srv.db, IDEMHOOK_CONSOLE_USER=USER,
                   IDEMHOOK_CONSOLE_PASSWORD_HASH=console_hash(bindir, PASSWORD))
    receivers = os.path.join(srv.tmp, "receivers.env")
    write_settings(receivers, IDEMHOOK_DB=srv.db)
    srv.extra_conf = "\n".join(console_conf(console, receivers))
    srv.start()
    work = Work(bindir, srv)
    work.start()
    # Two more idemhook work beside the two receivers, for SHARED.
    more = [Work(bindir, srv) for _ in range(2)]
    try:
        for case in CASES:
            tap.run(case.__name__[5:].replace("_", " "), case, srv, app, work)
        for w in more:
            w.start()
        for case in SHARED:
            tap.run(case.__name__[5:].replace("_", " "), case, srv, app, work)
    finally:
        for w in more:
            w.stop()
        work.stop()
        app.stop()


if __name__ == "__main__":
    sys.exit(suite_main("forward_ops", run_cases, prefix=True))
