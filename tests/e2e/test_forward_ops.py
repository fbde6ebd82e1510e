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
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (Server, check, check_eq, console_conf, sign_stripe,  # noqa: E402
                     suite_main)
import cases  # noqa: E402
from test_console import USER, console_hash, write_settings  # noqa: E402
from test_forward import (APP_DIR, APP_SECRETS, STRIPE, App, Work,  # noqa: E402
                          deliver, forward_env, once, wait_for)

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
    """check names acme's destination, refuses acme's setting without
    acme's URL, and flags a destination of an account with no secret."""
    rc, text = check_text(work, work.env)
    check("ok: stripe: account acme forwards each event to %s"
          % app.url("stripe-acme") in text, "check names acme's destination: %s"
          % text[-900:])
    check(APP_SECRETS["stripe-acme"] not in text, "check printed acme's secret")
    bad = [
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


CASES = [case_account_destination, case_account_check, case_object_order,
         case_waiting_shown]


def run_cases(tap, bindir, servers):
    if shutil.which("node") is None or not os.path.isdir(
            os.path.join(APP_DIR, "node_modules", "stripe")):
        tap.not_ok("setup", "node and tests/forward-app/node_modules are needed "
                   "(make deps runs npm ci there)")
        return
    srv = servers.add(Server(bindir, providers=["stripe", "github"], name="fwd-ops"))
    app = App(srv.tmp)
    app.start()
    srv.env.update(forward_env(app))
    srv.env.update({
        "IDEMHOOK_STRIPE_SECRET@acme": ACME_SECRET,
        "IDEMHOOK_STRIPE_FORWARD_URL@acme": app.url("stripe-acme"),
        "IDEMHOOK_STRIPE_FORWARD_SECRET@acme": APP_SECRETS["stripe-acme"],
        # Room for Retry-After: 8 (waiting shown).
        "IDEMHOOK_RETRY_MAX": "10",
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
    try:
        for case in CASES:
            tap.run(case.__name__[5:].replace("_", " "), case, srv, app, work)
    finally:
        work.stop()
        app.stop()


if __name__ == "__main__":
    sys.exit(suite_main("forward_ops", run_cases, prefix=True))
