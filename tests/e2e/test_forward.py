#!/usr/bin/env python3
"""End-to-end tests of forwarding (issue 41): idemhook in front of the
application that already has a webhook endpoint.

A real lighttpd serves the receivers; `idemhook work` runs beside them as
cron would; the application is tests/forward-app/app.mjs, a Node server
that verifies every delivery with the provider's OFFICIAL library
(stripe's webhooks.constructEvent, @octokit/webhooks-methods' verify,
standardwebhooks' Webhook.verify; node's crypto for Shopify and Asaas, as
their documentation says) and journals what it got and answered.  The
test steers its answers (500, 400, 429 with Retry-After, slow, no answer)
and stops and restarts it.

Shown: every event reaches the application verified, exactly once
accepted, with one idempotency key over its retries; 5xx, 429 (after its
Retry-After), timeouts and a stopped application are retried; a 400 is
dead at once and a replay delivers it; the last attempt makes a dead
letter that a replay delivers; Asaas events of one payment (its order key)
arrive in order while the application was down; an event delivered more
than five minutes after it was received still verifies with Stripe's
five-minute tolerance; `idemhook check` refuses malformed settings; no
secret or signature reaches a log or `idemhook show`.

Usage: test_forward.py BINDIR   (or IH_BIN=BINDIR test_forward.py)
"""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (REPO, SANITIZER_ENV, SANITIZER_MARKERS, ApacheServer,  # noqa: E402
                     Server, check, check_eq, free_port, sign_stripe,
                     standard_secret, suite_main, wait_port)
import cases  # noqa: E402
from test_asaas import SPEC as ASAAS  # noqa: E402
from test_github import SPEC as GITHUB  # noqa: E402
from test_shopify import SPEC as SHOPIFY  # noqa: E402
from test_standard import SPEC as STANDARD  # noqa: E402
from test_stripe import SPEC as STRIPE  # noqa: E402

APP_DIR = os.path.join(REPO, "tests", "forward-app")
WAIT = 60.0
POLL = 0.1
SPECS = {"stripe": STRIPE, "github": GITHUB, "shopify": SHOPIFY,
         "asaas": ASAAS, "standard": STANDARD}
MAX_ATTEMPTS = 5

# The application's own secrets: not the ones idemhook receives with.
APP_SECRETS = {
    "stripe": "whsec_app_" + os.urandom(12).hex(),
    "github": "gh-app-" + os.urandom(12).hex(),
    "shopify": "shpss_app_" + os.urandom(12).hex(),
    "asaas": "asaas-app-" + os.urandom(12).hex(),
    "standard": standard_secret(os.urandom(24)),
    # The route of Stripe events signed the Standard Webhooks way.
    "stripe-sw": standard_secret(os.urandom(24)),
    # The account acme's own destination (test_forward_ops.py).
    "stripe-acme": "whsec_acme_app_" + os.urandom(12).hex(),
}


def wait_for(what, fn, timeout=WAIT):
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = fn()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise AssertionError("timed out after %.0f s waiting for %s (last: %r)"
                                 % (timeout, what, last))
        time.sleep(POLL)


class App:
    """The application: node app.mjs on a port of its own, journaling."""

    def __init__(self, tmp):
        self.port = free_port()
        self.journal = os.path.join(tmp, "app.jsonl")
        self.secrets = os.path.join(tmp, "app-secrets.json")
        with open(self.secrets, "w") as f:
            json.dump(APP_SECRETS, f)
        self.log = open(os.path.join(tmp, "app.out"), "ab")
        self.proc = None

    def url(self, provider):
        return "http://127.0.0.1:%d/hooks/%s" % (self.port, provider)

    def start(self):
        self.proc = subprocess.Popen(
            ["node", os.path.join(APP_DIR, "app.mjs"), str(self.port),
             self.journal, self.secrets], cwd=APP_DIR, stdin=subprocess.DEVNULL,
            stdout=self.log, stderr=self.log)
        check(wait_port(self.port, self.proc, time.monotonic() + WAIT),
              "the application did not start: see app.out")

    def stop(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def plan(self, route, steps):
        req = urllib.request.Request(
            "http://127.0.0.1:%d/control" % self.port,
            json.dumps({"route": route, "plan": steps}).encode(), method="POST")
        with urllib.request.urlopen(req, timeout=10) as r:
            r.read()

    def records(self, route=None, ident=None):
        try:
            with open(self.journal) as f:
                recs = [json.loads(l) for l in f if l.strip()]
        except FileNotFoundError:
            return []
        return [r for r in recs if r.get("route") != "-"
                and (route is None or r["route"] == route)
                and (ident is None or r.get("id") == ident)]

    def accepted(self, route, ident):
        return [r for r in self.records(route, ident)
                if r.get("status") == 200 and r.get("verified")]


class Work:
    """`idemhook work --interval 1` beside the receivers, as cron's would."""

    def __init__(self, bindir, srv, extra=None):
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        self.env.update({k: os.environ[k] for k in SANITIZER_ENV if k in os.environ})
        self.env.update(srv.env)
        self.env["IDEMHOOK_DB"] = srv.db
        self.env.update(extra or {})
        self.cmd = os.path.join(bindir, "idemhook")
        self.err = os.path.join(srv.tmp, "work.err")
        self.proc = None

    def run(self, *args, env=None):
        e = dict(self.env)
        e.update(env or {})
        p = subprocess.run([self.cmd] + list(args), env=e, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=300)
        return (p.returncode, p.stdout.decode(errors="replace"),
                p.stderr.decode(errors="replace"))

    def start(self):
        self.proc = subprocess.Popen([self.cmd, "work", "--interval", "1"], env=self.env,
                                     stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL,
                                     stderr=open(self.err, "ab"))

    def stop(self):
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def stderr(self):
        try:
            with open(self.err, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""


def forward_env(app, timeout=3):
    env = {"IDEMHOOK_RETRY_BASE_MS": "200", "IDEMHOOK_RETRY_MAX": "3",
           "IDEMHOOK_MAX_ATTEMPTS": str(MAX_ATTEMPTS), "IDEMHOOK_LEASE": "30"}
    for p in SPECS:
        P = p.upper()
        env["IDEMHOOK_%s_FORWARD_URL" % P] = app.url(p)
        env["IDEMHOOK_%s_FORWARD_SECRET" % P] = APP_SECRETS[p]
        env["IDEMHOOK_%s_FORWARD_TIMEOUT" % P] = str(timeout)
    return env


def deliver(srv, p, eid=None, body=None):
    spec = SPECS[p]
    eid = eid or spec.new_id("fwd")
    r, body = spec.deliver(srv, eid, body=body)
    cases.expect_accepted(r, "%s delivery %s" % (p, eid))
    return eid, body


def app_id(p, eid):
    """What the application sees as the event's id."""
    return eid


def row(srv, p, eid):
    rows = srv.rows(p, SPECS[p].db_event_id(eid))
    check_eq(len(rows), 1, "rows of %s/%s" % (p, eid))
    return rows[0]


def wait_status(srv, p, eid, status):
    return wait_for("%s/%s %s" % (p, eid, status),
                    lambda: row(srv, p, eid)["status"] == status and row(srv, p, eid))


def attempts(srv, p, eid):
    with contextlib.closing(srv.connect_ro()) as c:
        return c.execute(
            "SELECT a.attempt, a.outcome, a.error, a.started_at, a.finished_at"
            " FROM attempts a JOIN events e ON e.id = a.event"
            " WHERE e.provider = ? AND e.event_id = ? ORDER BY a.attempt, a.started_at",
            (p, SPECS[p].db_event_id(eid))).fetchall()


def once(app, p, eid):
    """The application accepted the event exactly once, verified."""
    got = wait_for("%s %s accepted by the application" % (p, eid),
                   lambda: app.accepted(p, app_id(p, eid)))
    time.sleep(0.3)  # a second acceptance would be journaled by now
    got = app.accepted(p, app_id(p, eid))
    check_eq(len(got), 1, "acceptances of %s %s" % (p, eid))
    recs = app.records(p, app_id(p, eid))
    check(all(r["verified"] for r in recs),
          "every delivery of %s %s verifies: %r" % (p, eid, recs))
    keys = {r["key"] for r in recs}
    check(len(keys) == 1 and None not in keys,
          "one idempotency key over the retries of %s: %r" % (eid, keys))
    return recs


# ---------------------------------------------------------------- cases

def case_each_provider(srv, app, work):
    """One event per provider reaches the application, verified by the
    provider's official library with the application's own secret."""
    for p in SPECS:
        eid, _ = deliver(srv, p)
        once(app, p, eid)
        wait_status(srv, p, eid, "done")


def case_500_retried(srv, app, work):
    app.plan("stripe", ["500", "500"])
    eid, _ = deliver(srv, "stripe")
    recs = once(app, "stripe", eid)
    check_eq([r["status"] for r in recs], [500, 500, 200], "stripe answers seen")
    wait_status(srv, "stripe", eid, "done")
    errs = [a[2] or "" for a in attempts(srv, "stripe", eid)]
    check(sum("HTTP 500 in" in e for e in errs) == 2,
          "the failed attempts name the status: %r" % errs)
    check("HTTP 200 in" in errs[-1] and "thanks" in errs[-1],
          "the attempt that ended done keeps the answer: %r" % errs)


def case_answer_masked(srv, app, work):
    """An answer that prints the forwarding secret back is kept with the
    secret masked."""
    app.plan("shopify", ["echo"])
    eid, _ = deliver(srv, "shopify")
    once(app, "shopify", eid)
    errs = [a[2] or "" for a in attempts(srv, "shopify", eid)]
    check(any("secret=***" in e for e in errs), "the masked answer: %r" % errs)
    check(not any(APP_SECRETS["shopify"][:8] in e for e in errs),
          "the secret in an attempt: %r" % errs)


def case_429_retry_after(srv, app, work):
    app.plan("github", ["429:3"])
    eid, _ = deliver(srv, "github")
    recs = once(app, "github", eid)
    check_eq([r["status"] for r in recs], [429, 200], "github answers seen")
    gap = recs[1]["at"] - recs[0]["at"]
    # The backoff alone is at most 200 ms here: the wait is Retry-After's.
    check(gap >= 2900, "retried %d ms after a 429 with Retry-After: 3" % gap)


def case_timeout(srv, app, work):
    app.plan("shopify", ["hang"])
    eid, _ = deliver(srv, "shopify")
    recs = once(app, "shopify", eid)
    check_eq([r["step"] for r in recs], ["hang", "ok"], "shopify steps seen")
    errs = [a[2] or "" for a in attempts(srv, "shopify", eid)]
    check(any("no answer after" in e for e in errs),
          "the timed-out attempt says so: %r" % errs)


def case_slow(srv, app, work):
    app.plan("standard", ["slow:1500"])
    eid, _ = deliver(srv, "standard")
    recs = once(app, "standard", eid)
    check_eq(len(recs), 1, "one slow delivery, answered within the timeout")


def case_400_dead_then_replay(srv, app, work):
    app.plan("stripe", ["400"])
    eid, _ = deliver(srv, "stripe")
    r = wait_status(srv, "stripe", eid, "dead")
    check_eq(r["attempts"], 1, "a 400 is not retried")
    check("HTTP 400" in (r["last_error"] or "") and "not retried" in r["last_error"],
          "the dead letter says why: %r" % r["last_error"])
    rc, out, err = work.run("show", "stripe", eid)
    check(rc == 0 and "HTTP 400" in out, "show names the answer: %s" % (out + err)[-600:])
    rc, out, err = work.run("replay", "stripe", eid)
    check_eq(rc, 0, "replay exit: %s" % err[-400:])
    once(app, "stripe", eid)
    wait_status(srv, "stripe", eid, "done")


def case_dead_letter_replayed(srv, app, work):
    app.plan("github", ["500"] * MAX_ATTEMPTS)
    eid, _ = deliver(srv, "github")
    r = wait_status(srv, "github", eid, "dead")
    check_eq(r["attempts"], MAX_ATTEMPTS, "attempts before the dead letter")
    check_eq(app.accepted("github", eid), [], "nothing accepted before the replay")
    rc, out, err = work.run("replay", "--status", "dead", "--provider", "github")
    check_eq(rc, 0, "replay exit: %s" % err[-400:])
    once(app, "github", eid)
    wait_status(srv, "github", eid, "done")


def case_down_in_order(srv, app, work):
    """While the application is down nothing is lost; the Asaas events of
    one payment (the order key) arrive one at a time, in order."""
    app.stop()
    pay = "pay_" + os.urandom(6).hex()
    kinds = ["PAYMENT_CREATED", "PAYMENT_UPDATED", "PAYMENT_CONFIRMED",
             "PAYMENT_RECEIVED"]
    ids = []
    for k in kinds:
        eid = ASAAS.new_id("ord")
        r, _ = ASAAS.deliver(srv, eid, k, body=ASAAS.body(eid, k, payment_id=pay))
        cases.expect_accepted(r, "asaas %s" % k)
        ids.append(eid)
    other, _ = deliver(srv, "asaas")
    wait_for("two failed attempts of the first event",
             lambda: len(attempts(srv, "asaas", ids[0])) >= 2)
    later = [len(attempts(srv, "asaas", e)) for e in ids[1:]]
    check_eq(later, [0, 0, 0], "the payment's later events wait for the first")
    # The worker waits while the application starts: on a loaded machine
    # node's start outlasted the first event's last attempts (a few
    # seconds of backoff), and it went dead before the application was up.
    work.proc.send_signal(signal.SIGSTOP)
    try:
        app.start()
    finally:
        work.proc.send_signal(signal.SIGCONT)
    for eid in ids + [other]:
        once(app, "asaas", eid)
        wait_status(srv, "asaas", eid, "done")
    got = [r["id"] for r in app.records("asaas")
           if r.get("object") == pay and r.get("status") == 200]
    check_eq(got, ids, "the payment's events in the order received")


def case_account(srv, app, work):
    """An account's event (/hooks/stripe/acme, its own secret) goes to
    the provider's destination, signed with the forwarding secret."""
    eid = STRIPE.new_id("acct")
    body = STRIPE.body(eid, "payment_intent.succeeded")
    r = srv.post("/hooks/stripe/acme", body,
                 {"Stripe-Signature": sign_stripe(ACME_SECRET, body)})
    cases.expect_accepted(r, "delivery to the account acme")
    once(app, "stripe", eid)
    rows = [x for x in srv.rows("stripe", eid) if x["account"] == "acme"]
    check_eq(len(rows), 1, "acme's row")
    wait_for("acme's event done", lambda: [
        x for x in srv.rows("stripe", eid) if x["status"] == "done"])


def case_check_refuses(srv, app, work):
    bad = [
        ({"IDEMHOOK_STRIPE_FORWARD_URL": "ftp://127.0.0.1/x"}, "FORWARD_URL"),
        ({"IDEMHOOK_STRIPE_FORWARD_URL": "http://app.example/hook"}, "https"),
        ({"IDEMHOOK_STRIPE_FORWARD_URL": "https://u:p@app.example/hook"}, "user"),
        ({"IDEMHOOK_STRIPE_FORWARD_SIGN": "hmac"}, "FORWARD_SIGN"),
        ({"IDEMHOOK_STRIPE_FORWARD_URL": None}, "nothing is forwarded"),
        ({"IDEMHOOK_STRIPE_FORWARD_SECRET": None}, "FORWARD_SECRET"),
        ({"IDEMHOOK_STRIPE_FORWARD_SIGN": "standard"}, "whsec_"),
        ({"IDEMHOOK_STRIPE_FORWARD_SIGN": "as-received"}, "remove one"),
        ({"IDEMHOOK_STRIPE_FORWARD_TIMEOUT": "0"}, "FORWARD_TIMEOUT"),
        ({"IDEMHOOK_STRIPE_FORWARD_TIMEOUT": "40"}, "IDEMHOOK_LEASE"),
        ({"IDEMHOOK_STRIPE_FORWARD_URL@acme": "https://app.example/acme"},
         "IDEMHOOK_STRIPE_FORWARD_SECRET@acme is not set"),
    ]
    for change, want in bad:
        env = dict(work.env)
        for k, v in change.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        p = subprocess.run([work.cmd, "check", "--provider", "stripe"], env=env,
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        text = (p.stdout + p.stderr).decode(errors="replace")
        check(p.returncode != 0 and want in text,
              "check with %r: exit %d, wants %r in: %s"
              % (change, p.returncode, want, text[-600:]))
        check(APP_SECRETS["stripe"] not in text, "check printed the secret")
    p = subprocess.run([work.cmd, "check", "--provider", "stripe"], env=work.env,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    text = (p.stdout + p.stderr).decode(errors="replace")
    check("ok: stripe: forwards each event to %s" % app.url("stripe") in text,
          "check names the destination: %s" % text[-800:])
    check(APP_SECRETS["stripe"] not in text, "check printed the secret")


def case_late_delivery_verifies(bindir, servers, app):
    """An event delivered ten minutes after it was received still passes
    Stripe's five-minute tolerance: each attempt is signed afresh.  The
    receiver's clock is set ten minutes back (IDEMHOOK_CLOCK_SKEW_MS, test
    builds), and `idemhook work` delivers it with the true clock."""
    srv = servers.add(Server(bindir, providers=["stripe"], name="late"))
    srv.env.update(forward_env(app))
    srv.env.update({"IDEMHOOK_MODE": "worker", "IDEMHOOK_CLOCK_SKEW_MS": "-600000"})
    srv.start()
    eid = STRIPE.new_id("late")
    body = STRIPE.body(eid, "payment_intent.succeeded")
    h = STRIPE.headers(srv, body, eid, "payment_intent.succeeded", t=int(time.time()) - 600)
    cases.expect_accepted(srv.post(srv.url("stripe"), body, h), "late delivery")
    r = row(srv, "stripe", eid)
    check(r["received_at"] <= (time.time() - 590) * 1000,
          "received ten minutes ago by the receiver's clock")
    work = Work(bindir, srv, {"IDEMHOOK_MODE": "after-response",
                              "IDEMHOOK_CLOCK_SKEW_MS": "0"})
    rc, out, err = work.run("work", "--once")
    check_eq(rc, 0, "work --once: %s" % err[-600:])
    once(app, "stripe", eid)
    wait_status(srv, "stripe", eid, "done")


def case_pause(bindir, servers, app):
    """The circuit breaker: with the application down, after two failed
    deliveries in a row `idemhook work` pauses the destination (logged,
    alerted once), retries only the last failed event (the probe), leaves
    the others waiting with no attempt spent, and resumes by itself once
    the application answers; every event then arrives once."""
    srv = servers.add(Server(bindir, providers=["stripe"], name="pause"))
    alerts = os.path.join(srv.tmp, "alerts")
    srv.env.update(forward_env(app))
    srv.env.update({"IDEMHOOK_MODE": "worker", "IDEMHOOK_MAX_ATTEMPTS": "50",
                    "IDEMHOOK_RETRY_MAX": "1",
                    "IDEMHOOK_STRIPE_FORWARD_PAUSE_AFTER": "2",
                    "IDEMHOOK_ALERT_ACTION":
                        'echo "$IDEMHOOK_ALERT_REASON" >> %s' % alerts})
    srv.start()
    app.stop()
    ids = [deliver(srv, "stripe")[0] for _ in range(6)]
    work = Work(bindir, srv, {"IDEMHOOK_MODE": "after-response"})
    work.start()
    try:
        wait_for("forward=paused in the work log",
                 lambda: "forward=paused failures=2" in work.stderr())
        wait_for("the probe retried three more times",
                 lambda: len(attempts(srv, "stripe", ids[1])) >= 4)
        spent = [len(attempts(srv, "stripe", e)) for e in ids]
        check_eq(spent[0], 1, "attempts of the first event")
        check_eq(spent[2:], [0, 0, 0, 0], "attempts of the events waiting")
        with open(alerts) as f:
            check_eq(f.read().split(), ["forward_paused"], "alerts")
        app.start()
        for eid in ids:
            once(app, "stripe", eid)
            wait_status(srv, "stripe", eid, "done")
        check("forward=resumed" in work.stderr(), "resumed logged")
        with open(alerts) as f:
            check_eq(f.read().split(), ["forward_paused"], "one alert in all")
    finally:
        work.stop()
        if app.proc is None:
            app.start()


def case_inline(bindir, servers, app):
    """IDEMHOOK_MODE=inline: the provider's answer waits for the
    delivery; a failed one answers 500 and leaves no row, so that the
    provider's retry is a delivery afresh.  Failed deliveries count
    toward the pause as in the other modes: after _PAUSE_AFTER of them
    in a row the destination is paused (logged, stats say so, alerted
    once), and the next delivery that the application takes resumes
    it."""
    srv = servers.add(Server(bindir, providers=["stripe"], name="inline"))
    alerts = os.path.join(srv.tmp, "alerts")
    srv.env.update(forward_env(app))
    srv.env.update({"IDEMHOOK_MODE": "inline",
                    "IDEMHOOK_STRIPE_FORWARD_PAUSE_AFTER": "2",
                    "IDEMHOOK_ALERT_ACTION":
                        'echo "$IDEMHOOK_ALERT_REASON" >> %s' % alerts})
    srv.start()
    app.plan("stripe", ["500"])
    eid = STRIPE.new_id("inl")
    body = STRIPE.body(eid, "payment_intent.succeeded")
    r = STRIPE.post(srv, body, STRIPE.headers(srv, body, eid, None))
    cases.expect_error(r, 500, "inline delivery the application refused")
    check_eq(srv.rows("stripe", eid), [], "rows after the failed inline attempt")
    r = STRIPE.post(srv, body, STRIPE.headers(srv, body, eid, None))
    cases.expect_accepted(r, "the provider's retry")
    check_eq(row(srv, "stripe", eid)["status"], "done", "done before the answer")
    check_eq([x["status"] for x in app.records("stripe", eid)], [500, 200],
             "what the application answered")
    # smoke's explanation of the 500 names the application, not settings.
    app.plan("stripe", ["500"])
    url = "http://127.0.0.1:%d%s" % (srv.port, srv.url("stripe"))
    rc, out, err = Work(bindir, srv).run(
        "smoke", "stripe", url, env={"IDEMHOOK_STRIPE_SECRET": srv.secrets["stripe"]})
    check(rc == 1 and "FAILED: 500 processing_failed: the receiver verified the "
          "test event (its secret and settings are good) and, in "
          "IDEMHOOK_MODE=inline, delivered it to the application at "
          "http://127.0.0.1:%d/hooks/stripe before answering; that delivery "
          "failed" % app.port in out and "not configured" not in out + err,
          "smoke, inline, the application failing: exit %d: %s"
          % (rc, (out + err)[-900:]))
    inline_pause(bindir, srv, app, alerts)
    srv.stop()


def stripe_paused(work):
    rc, out, err = work.run("stats", "--provider", "stripe", "--json")
    check_eq(rc, 0, "stats --json: %s" % err[-400:])
    return json.loads(out)["providers"][0]["forward_paused"]


def inline_pause(bindir, srv, app, alerts):
    """case_inline's pause: one delivery taken ends the failures so far,
    two refused pause the destination, the next taken resumes it."""
    work = Work(bindir, srv)
    deliver(srv, "stripe")
    check(stripe_paused(work) is False, "not paused after a delivery taken")
    app.plan("stripe", ["500", "500"])
    for _ in range(2):
        eid = STRIPE.new_id("inl")
        body = STRIPE.body(eid, "payment_intent.succeeded")
        r = STRIPE.post(srv, body, STRIPE.headers(srv, body, eid, None))
        cases.expect_error(r, 500, "inline delivery the application refused")
    check(stripe_paused(work) is True, "stats: paused after two failures")
    rc, out, err = work.run("stats", "--provider", "stripe", "--prometheus")
    check('idemhook_forward_paused{provider="stripe"} 1' in out,
          "the pause in --prometheus: %s" % out[-900:])
    check("forward=paused failures=2" in srv.errorlog() + srv.stderr_text(),
          "the pause logged")
    wait_for("the pause alerted", lambda: os.path.exists(alerts))
    with open(alerts) as f:
        check_eq(f.read().split(), ["forward_paused"], "one alert")
    eid, _ = deliver(srv, "stripe")
    check_eq(row(srv, "stripe", eid)["status"], "done", "the next one done")
    check(stripe_paused(work) is False, "stats: resumed")
    check("forward=resumed after failures=2" in srv.errorlog() +
          srv.stderr_text(),
          "the resume logged")
    with open(alerts) as f:
        check_eq(f.read().split(), ["forward_paused"], "one alert in all")


def case_sign_modes(bindir, servers, app):
    """FORWARD_SIGN=standard: Stripe events verified by the standardwebhooks
    library, webhook-id the event's id.  FORWARD_SIGN=as-received: GitHub's
    own signature passed on untouched verifies where the application holds
    the same secret; a Stripe signature passed on ten minutes late is
    refused by constructEvent (400), which makes the event dead at once."""
    srv = servers.add(Server(bindir, providers=["stripe", "github"], name="modes",
                             secrets={"github": APP_SECRETS["github"]}))
    srv.env.update(forward_env(app))
    srv.env.update({
        "IDEMHOOK_STRIPE_FORWARD_URL": app.url("stripe-sw"),
        "IDEMHOOK_STRIPE_FORWARD_SIGN": "standard",
        "IDEMHOOK_STRIPE_FORWARD_SECRET": APP_SECRETS["stripe-sw"],
        "IDEMHOOK_GITHUB_FORWARD_SIGN": "as-received",
    })
    del srv.env["IDEMHOOK_GITHUB_FORWARD_SECRET"]
    srv.start()
    eid, _ = deliver(srv, "stripe")
    got = wait_for("stripe-sw accepted", lambda: app.accepted("stripe-sw", eid))
    check_eq(got[0]["type"], "payment_intent.succeeded", "the event's type")
    eid, _ = deliver(srv, "github")
    once(app, "github", eid)
    srv.stop()

    late = servers.add(Server(bindir, providers=["stripe"], name="late-as-received",
                              secrets={"stripe": APP_SECRETS["stripe"]}))
    late.env.update(forward_env(app))
    late.env.update({"IDEMHOOK_STRIPE_FORWARD_SIGN": "as-received",
                     "IDEMHOOK_MODE": "worker",
                     "IDEMHOOK_CLOCK_SKEW_MS": "-600000"})
    del late.env["IDEMHOOK_STRIPE_FORWARD_SECRET"]
    late.start()
    eid = STRIPE.new_id("asrec")
    body = STRIPE.body(eid, "payment_intent.succeeded")
    h = STRIPE.headers(late, body, eid, None, t=int(time.time()) - 600)
    cases.expect_accepted(late.post(late.url("stripe"), body, h), "late delivery")
    work = Work(bindir, late, {"IDEMHOOK_MODE": "after-response",
                               "IDEMHOOK_CLOCK_SKEW_MS": "0"})
    rc, out, err = work.run("work", "--once")
    check_eq(rc, 0, "work --once: %s" % err[-600:])
    r = wait_status(late, "stripe", eid, "dead")
    check("HTTP 400" in r["last_error"], "refused by the application: %r"
          % r["last_error"])
    recs = app.records("stripe")
    mine = [x for x in recs if x.get("error") and "timestamp" in x["error"].lower()]
    check(mine, "constructEvent refused the old timestamp: %r" % recs[-1:])
    late.stop()


def case_cgi_layout(bindir, servers, app):
    """Plain CGI (Apache, the shipped cgi.htaccess), no idemhook work:
    the program that recorded the event forwards it after its answer."""
    env = forward_env(app)
    cgi = servers.add(ApacheServer(bindir, mode="cgi", providers=["stripe"],
                                   name="forward-cgi", env=env))
    cgi.start()
    eid, _ = deliver(cgi, "stripe")
    once(app, "stripe", eid)
    wait_status(cgi, "stripe", eid, "done")
    log = cgi.errorlog()
    check(APP_SECRETS["stripe"] not in log, "the CGI log holds the secret")
    cgi.stop()


def no_libcurl_linked(bindir):
    """The receivers load libcurl with dlopen() at their first forwarded
    event: a CGI delivery without forwarding pays nothing for it (the
    cgi layout case proves the loaded path)."""
    for p in list(SPECS) + ["console"]:
        r = subprocess.run(["ldd", os.path.join(bindir, p + ".fcgi")],
                           capture_output=True, text=True, timeout=30)
        check(r.returncode == 0 and "libsqlite3" in r.stdout,
              "ldd %s.fcgi: %r" % (p, (r.stdout + r.stderr)[:300]))
        check("libcurl" not in r.stdout, "%s.fcgi links libcurl" % p)


def case_no_secret_logged(srv, app, work):
    texts = {"error.log": srv.errorlog(), "work": work.stderr()}
    for p in SPECS:
        rc, out, err = work.run("list", "--provider", p)
        texts["list " + p] = out + err
    rc, out, err = work.run("stats")
    texts["stats"] = out + err
    for name, text in texts.items():
        for p, s in APP_SECRETS.items():
            check(s not in text, "%s holds %s's forwarding secret" % (name, p))
        for p, s in srv.secrets.items():
            check(s not in text, "%s holds %s's secret" % (name, p))
        for sig in srv.signatures:
            check(sig not in text, "%s holds a signature" % name)
        rep = [m for m in SANITIZER_MARKERS if m in text]
        check(not rep, "%s: sanitizer reports %r" % (name, rep))


CASES = [case_each_provider, case_500_retried, case_answer_masked,
         case_429_retry_after, case_timeout,
         case_slow, case_400_dead_then_replay, case_dead_letter_replayed,
         case_down_in_order, case_account, case_check_refuses]
ACME_SECRET = "whsec_acme_" + os.urandom(12).hex()


def run_cases(tap, bindir, servers):
    tap.run("the receivers do not link libcurl", no_libcurl_linked, bindir)
    if shutil.which("node") is None or not os.path.isdir(
            os.path.join(APP_DIR, "node_modules", "stripe")):
        tap.not_ok("setup", "node and tests/forward-app/node_modules are needed "
                   "(make deps runs npm ci there)")
        return
    srv = servers.add(Server(bindir, providers=list(SPECS), name="forward"))
    app = App(srv.tmp)
    app.start()
    srv.env.update(forward_env(app))
    srv.env["IDEMHOOK_STRIPE_SECRET@acme"] = ACME_SECRET
    srv.start()
    work = Work(bindir, srv)
    work.start()
    try:
        for case in CASES:
            tap.run(case.__name__[5:].replace("_", " "), case, srv, app, work)
        tap.run("late delivery verifies", case_late_delivery_verifies, bindir,
                servers, app)
        tap.run("cgi layout", case_cgi_layout, bindir, servers, app)
        tap.run("pause", case_pause, bindir, servers, app)
        tap.run("inline", case_inline, bindir, servers, app)
        tap.run("sign modes", case_sign_modes, bindir, servers, app)
        work.stop()
        tap.run("no secret logged", case_no_secret_logged, srv, app, work)
    finally:
        work.stop()
        app.stop()


if __name__ == "__main__":
    sys.exit(suite_main("forward", run_cases, prefix=True))
