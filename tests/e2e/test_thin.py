#!/usr/bin/env python3
"""End-to-end test of Stripe's thin events (issue 30, item 4).

Usage: test_thin.py BINDIR   (or IH_BIN=BINDIR test_thin.py)
SQLite (and one case on PostgreSQL, IH_PG_URI), or all of it on
PostgreSQL with IH_DB_BACKEND=pg.

Through lighttpd to stripe.fcgi, which never holds an API key, and
idemhook work pointed at the Stripe stand-in (tests/e2e/standins/stripe.py,
GET /v2/core/events/{id} and the related object's URL):
1. A thin notification ("object": "v2.core.event", signed like any Stripe
   delivery) is verified, recorded waiting for its fetch, answered 200, and
   left alone by the receiver (even by the drain a later delivery starts);
   idemhook work fetches the event and its related object, runs the action
   and the switch once: the object's row and the effect are as for a
   snapshot event; a second run does nothing more.
2. A bad signature is 401 and stores nothing; a redelivery is a duplicate.
3. The fetch failing: a 500 that the client's retry absorbs; a 500 on
   every call fails the attempt, which is retried later and processed;
   a 404 forever ends as a dead letter, which replay brings back.
4. Without IDEMHOOK_STRIPE_API_KEY: a clear line, the event stays waiting.
5. The receivers link no HTTP client.
7. Accounts: a thin event of account acme is fetched with acme's own key
   (IDEMHOOK_STRIPE_API_KEY@acme, never another's) and kept in acme.
8. idemhook list --json and show --json say needs_fetch, list --needs-fetch
   lists the waiting ones only, and the console's event page (mounted on
   the same lighttpd) shows the mark until the fetch.
6. On PostgreSQL (IH_PG_URI): the same flow, and idemhook copy from SQLite
   keeps a waiting event waiting.
"""

import base64
import contextlib
import json
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (SANITIZER_ENV, Server, check, check_eq, console_conf,  # noqa: E402
                     pg_backend, pg_new_db, sign_stripe, suite_main)
from standins.stripe import StripeStandin  # noqa: E402
from test_console import USER  # noqa: E402

KEY = "sk_test_thin" + os.urandom(8).hex()
SECRET = "whsec_" + os.urandom(16).hex()       # the snapshot endpoint's
THIN_SECRET = "whsec_" + os.urandom(16).hex()  # the event destination's
VERSION = "2025-03-31.basil"
# Two accounts (issue 29), each with its thin destination's secret and
# its own API key on the stand-in.
ACCOUNTS = {a: ("whsec_" + os.urandom(16).hex(), "sk_test_%s_%s" % (a, os.urandom(8).hex()))
            for a in ("acme", "bravo")}
BRAVO_VERSION = "2025-08-27.basil"
FETCHED = '{"object":"idemhook.fetched_event",'


def idemhook(srv, bindir, api, *args, key=True, env=None, want=0):
    """The idemhook command with the store's settings and, with key, the
    API's (the receivers get neither the key nor the base); its exit
    status must be want (None: any)."""
    e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IDEMHOOK_DB": srv.db}
    e.update({k: os.environ[k] for k in SANITIZER_ENV if k in os.environ})
    e.update(srv.env)
    e["IDEMHOOK_STRIPE_API_BASE"] = api.base
    if key:
        e["IDEMHOOK_STRIPE_API_KEY"] = KEY
    e.update(env or {})
    p = subprocess.run([os.path.join(bindir, "idemhook")] + list(args), env=e,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    check((want is None or p.returncode == want) and "Sanitizer" not in err
          and "runtime error" not in err,
          "idemhook %s exited %d: %s" % (" ".join(args), p.returncode, err[-800:]))
    check(KEY not in out + err, "the key is never printed")
    return out, err


def post(srv, body, secret=THIN_SECRET, account=None):
    b = json.dumps(body, separators=(",", ":")).encode()
    path = srv.url("stripe") + ("/" + account if account else "")
    return srv.post(path, b, {"Stripe-Signature": sign_stripe(secret, b),
                                           "Content-Type": "application/json"})


def answered(r, status, what):
    check_eq((r.status, r.json().get("status")), (200, status), what)


def row(srv, eid):
    rows = srv.rows("stripe", eid)
    check_eq(len(rows), 1, "%s: one row" % eid)
    return rows[0]


def new_thin(api, tag, status="active", url=None, account="default"):
    """A v1 thin event about a new subscription, of account (whose key
    alone finds it on the stand-in); returns (eid, sub, thin)."""
    eid = "evt_thin_%s_%s" % (tag, os.urandom(4).hex())
    sub = "sub_%s_%s" % (tag, os.urandom(4).hex())
    obj = {"id": sub, "object": "subscription", "status": status,
           "customer": "cus_thin", "items": {"object": "list", "data": []}}
    thin = api.add_thin(eid, "v1.customer.subscription.updated", obj,
                        url or "/v1/subscriptions/" + sub, account=account)
    return eid, sub, thin


def runs(srv):
    try:
        with open(os.path.join(srv.tmp, "runs")) as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def runs_of(srv, eid):
    return [l for l in runs(srv) if l.split(" ")[0] == eid]


def object_of(srv, sub):
    with contextlib.closing(srv.connect_ro()) as c:
        r = c.execute("SELECT status, event_id, object_json FROM idemhook_objects"
                      " WHERE provider = 'stripe' AND kind = 'subscription'"
                      " AND object_id = ?", (sub,)).fetchall()
    return [tuple(x) for x in r]


def effects_of(srv, eid):
    with contextlib.closing(srv.connect_ro()) as c:
        return [x[0] for x in c.execute(
            "SELECT kind FROM effects WHERE event = (SELECT id FROM events"
            " WHERE provider = 'stripe' AND event_id = ?)", (eid,)).fetchall()]


def work_until(srv, bindir, api, eid, want, env=None, limit=30):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if row(srv, eid)["status"] == want:
            return row(srv, eid)
        # A run whose fetch failed exits 1 (issue 39, item 12).
        idemhook(srv, bindir, api, "work", "--once", env=env, want=None)
        time.sleep(0.05)
    check(False, "%s: status %r, wanted %s" % (eid, row(srv, eid)["status"], want))


def case_fetched(srv, bindir, api):
    """Verified, recorded waiting, 200; the receiver leaves it; work
    fetches the event and its object, processes once."""
    eid, sub, thin = new_thin(api, "ok")
    answered(post(srv, thin), "accepted", "thin notification")
    r = row(srv, eid)
    check_eq((r["status"], r["needs_fetch"], r["attempts"], r["api_version"]),
             ("received", 1, 0, None), "recorded, waiting for its fetch, not held")
    check_eq(json.loads(bytes(r["payload"])), thin, "the notification's bytes kept")
    log = [l for l in srv.log_lines("stripe") if eid in l]
    check(log and "status=200" in log[0] and "thin" in log[0], "log line: %r" % log)
    # A snapshot delivery after it: the receiver processes that one, and
    # its drain of due events leaves the thin one alone.
    snap = "evt_snap_" + os.urandom(4).hex()
    answered(post(srv, {"id": snap, "object": "event", "api_version": VERSION,
                        "type": "customer.created", "created": int(time.time()),
                        "data": {"object": {"id": "cus_snap", "object": "customer"}}},
                  SECRET), "accepted", "snapshot delivery")
    deadline = time.monotonic() + 15
    while row(srv, snap)["status"] != "done" and time.monotonic() < deadline:
        time.sleep(0.05)
    check_eq(row(srv, snap)["status"], "done", "the receiver processed the snapshot")
    time.sleep(1.2)
    r = row(srv, eid)
    check_eq((r["status"], r["attempts"]), ("received", 0), "the receiver never claims it")
    check_eq(api.calls("/v2/core/events/" + eid), [], "no receiver called Stripe")

    out, err = idemhook(srv, bindir, api, "work", "--once")
    r = row(srv, eid)
    check_eq((r["status"], r["needs_fetch"], r["attempts"]), ("done", 0, 1),
             "fetched and processed by idemhook work")
    calls = api.calls("/v2/core/events/" + eid)
    check_eq(len(calls), 1, "one GET /v2/core/events/{id}")
    h = calls[0]["headers"]
    check_eq((h.get("authorization"), h.get("stripe-version")),
             ("Bearer " + KEY, "2025-09-30.clover"), "the key and a v2 version sent")
    calls = api.calls("/v1/subscriptions/" + sub)
    check_eq([c["headers"].get("stripe-version") for c in calls], [VERSION],
             "the related object fetched once, in the version the switch expects")
    kept = bytes(r["payload"]).decode()
    check(kept.startswith(FETCHED), "the kept payload: %r" % kept[:80])
    doc = json.loads(kept)
    check_eq((doc["event"]["id"], doc["event"]["object"], doc["related_object"]["id"]),
             (eid, "v2.core.event", sub), "event and related object kept")
    check_eq(r["headers"], "Idemhook-Source: api\n", "kept headers say where it came from")
    check_eq(runs_of(srv, eid), [eid + " v1.customer.subscription.updated " + FETCHED],
             "the action ran once, on the full event")
    check_eq(effects_of(srv, eid), ["subscription_changed"], "the switch's effect")
    o = object_of(srv, sub)
    check_eq([(x[0], x[1]) for x in o], [("active", eid)], "the object's row")
    check_eq(json.loads(o[0][2])["customer"], "cus_thin", "the object's state kept")
    check("fetched=v2.core.event" in err and eid in err, "work's log: %r" % err[-400:])
    idemhook(srv, bindir, api, "work", "--once")
    check_eq(len(api.calls("/v2/core/events/" + eid)), 1, "not fetched again")
    check_eq(len(runs_of(srv, eid)), 1, "not run again")
    answered(post(srv, thin), "duplicate", "a redelivery after processing")


def listed(srv, bindir, api, *args):
    out, _ = idemhook(srv, bindir, api, "list", "--json", "--provider", "stripe", *args)
    return {e["event_id"]: e for e in json.loads(out)}


def case_marked(srv, bindir, api, auth):
    """list --json, show --json and the console's event page say that an
    event waits for its fetch (and no longer once fetched); list
    --needs-fetch lists those only."""
    eid, _, thin = new_thin(api, "mark")
    answered(post(srv, thin), "accepted", "thin notification")
    done = "evt_snap_mark_" + os.urandom(4).hex()
    answered(post(srv, {"id": done, "object": "event", "api_version": VERSION,
                        "type": "customer.created", "created": int(time.time()),
                        "data": {"object": {"id": "cus_mark", "object": "customer"}}},
                  SECRET), "accepted", "a snapshot event")
    every = listed(srv, bindir, api)
    check_eq((every[eid]["needs_fetch"], every[eid]["status"]), (True, "received"),
             "list --json marks the waiting event")
    check_eq(every[done]["needs_fetch"], False, "a snapshot event is not marked")
    waiting = listed(srv, bindir, api, "--needs-fetch")
    check(eid in waiting and done not in waiting
          and all(e["needs_fetch"] for e in waiting.values()),
          "list --needs-fetch: %r" % sorted(waiting))
    out, _ = idemhook(srv, bindir, api, "show", "--json", "stripe", eid)
    check_eq(json.loads(out)["event"]["needs_fetch"], True, "show --json marks it")
    page = "/hooks/console/events/stripe/" + eid
    r = srv.get(page, {"Authorization": auth})
    check_eq(r.status, 200, "the console's event page")
    check(b'<td id="fetch">waiting: a Stripe thin event' in r.body
          and b"IDEMHOOK_STRIPE_API_KEY</td>" in r.body,
          "the page says it waits: %r" % r.body[-1500:])
    work_until(srv, bindir, api, eid, "done")
    check_eq(listed(srv, bindir, api)[eid]["needs_fetch"], False, "fetched: not marked")
    check(eid not in listed(srv, bindir, api, "--needs-fetch"), "nor listed as waiting")
    r = srv.get(page, {"Authorization": auth})
    check(r.status == 200 and b'id="fetch"' not in r.body, "the page once fetched")


def case_badsig(srv, bindir, api):
    """A thin notification signed with another secret: 401, nothing stored."""
    eid, _, thin = new_thin(api, "bad")
    r = post(srv, thin, secret="whsec_" + os.urandom(16).hex())
    check_eq(r.status, 401, "bad signature")
    check_eq(srv.rows("stripe", eid), [], "nothing stored")
    idemhook(srv, bindir, api, "work", "--once")
    check_eq(api.calls("/v2/core/events/" + eid), [], "nothing fetched")


def case_redelivery(srv, bindir, api):
    """The same notification again (re-signed, as Stripe retries): a
    duplicate, one row, one fetch, one run."""
    eid, _, thin = new_thin(api, "dup")
    answered(post(srv, thin), "accepted", "first delivery")
    answered(post(srv, thin), "duplicate", "redelivery")
    check_eq(row(srv, eid)["duplicates"], 1, "counted as a duplicate")
    work_until(srv, bindir, api, eid, "done")
    answered(post(srv, thin), "duplicate", "redelivery once done")
    check_eq(len(api.calls("/v2/core/events/" + eid)), 1, "fetched once")
    check_eq(len(runs_of(srv, eid)), 1, "processed once")


def case_retried(srv, bindir, api):
    """A 500 the client's retry absorbs; then a 500 on every call fails
    the attempt, retried after its backoff once Stripe answers again."""
    eid, sub, thin = new_thin(api, "retry")
    answered(post(srv, thin), "accepted", "thin notification")
    api.fail_next(500)
    idemhook(srv, bindir, api, "work", "--once")
    check_eq(row(srv, eid)["status"], "done", "one 500, retried by the client")
    check_eq([c["status"] for c in api.calls("/v2/core/events/" + eid)], [500, 200],
             "the 500, then the event")

    eid, sub, thin = new_thin(api, "retry2")
    path = "/v2/core/events/" + eid
    api.fail_path(path, 500)
    answered(post(srv, thin), "accepted", "thin notification")
    fast = {"IDEMHOOK_RETRY_BASE_MS": "200"}
    # A failed fetch fails the run: said on stdout, exit 1 (issue 39, item 12).
    out, _ = idemhook(srv, bindir, api, "work", "--once", env=fast, want=1)
    check("FAILED: the fetch of 1 thin event(s) failed" in out,
          "work --once after a failed fetch says: %r" % out)
    r = row(srv, eid)
    check_eq((r["status"], r["needs_fetch"], r["attempts"]), ("failed", 1, 1),
             "the attempt failed, still waiting for its fetch")
    check("500" in (r["last_error"] or ""), "last error: %r" % r["last_error"])
    check_eq(runs_of(srv, eid), [], "nothing ran")
    api.fail_path(path, None)
    r = work_until(srv, bindir, api, eid, "done", env=fast)
    check_eq(r["attempts"], 2, "processed on the second attempt")
    check_eq(len(runs_of(srv, eid)), 1, "the action ran once")
    check_eq([x[0] for x in object_of(srv, sub)], ["active"], "the object's row")


def case_dead(srv, bindir, api):
    """Stripe answers 404 on every call: the attempts run out, a dead
    letter; replay brings it back once Stripe has it."""
    eid, sub, thin = new_thin(api, "dead")
    path = "/v2/core/events/" + eid
    api.fail_path(path, 404)
    answered(post(srv, thin), "accepted", "thin notification")
    env = {"IDEMHOOK_RETRY_BASE_MS": "100", "IDEMHOOK_MAX_ATTEMPTS": "2"}
    r = work_until(srv, bindir, api, eid, "dead", env=env)
    check_eq((r["attempts"], r["needs_fetch"]), (2, 1), "two attempts, never fetched")
    check("404" in (r["last_error"] or ""), "last error: %r" % r["last_error"])
    check_eq(runs_of(srv, eid), [], "nothing ran")
    api.fail_path(path, None)
    idemhook(srv, bindir, api, "replay", "stripe", eid)
    work_until(srv, bindir, api, eid, "done")
    check_eq(len(runs_of(srv, eid)), 1, "processed once after the replay")


def case_ping(srv, bindir, api):
    """Stripe's test of a destination: processed without reading the
    destination itself (a key with read access to events alone may not)."""
    eid = "evt_ping_" + os.urandom(4).hex()
    url = "/v2/core/event_destinations/ed_" + os.urandom(4).hex()
    thin = api.add_thin(eid, "v2.core.event_destination.ping",
                        {"id": url.rsplit("/", 1)[1], "object": "v2.core.event_destination"},
                        url)
    api.fail_path(url, 403)
    answered(post(srv, thin), "accepted", "ping")
    r = work_until(srv, bindir, api, eid, "done")
    check_eq(r["attempts"], 1, "done at the first attempt")
    check_eq(api.calls(url), [], "the destination not read")
    check_eq(json.loads(bytes(r["payload"]))["related_object"], None, "no object kept")


def case_no_key(srv, bindir, api):
    """Without a key: a clear line, the event stays waiting, never lost."""
    eid, _, thin = new_thin(api, "nokey")
    answered(post(srv, thin), "accepted", "thin notification")
    out, err = idemhook(srv, bindir, api, "work", "--once", key=False)
    check("thin events wait for their fetch" in err and "IDEMHOOK_STRIPE_API_KEY" in err,
          "the line: %r" % err[-500:])
    r = row(srv, eid)
    check_eq((r["status"], r["needs_fetch"], r["attempts"]), ("received", 1, 0),
             "still waiting")
    check_eq(api.calls("/v2/core/events/" + eid), [], "nothing fetched")
    shown, _ = idemhook(srv, bindir, api, "show", "stripe", eid, key=False)
    check("waiting: a Stripe thin event" in shown, "show says it waits: %r" % shown[:400])
    work_until(srv, bindir, api, eid, "done")
    shown, _ = idemhook(srv, bindir, api, "show", "stripe", eid, key=False)
    check("waiting" not in shown, "show once fetched: %r" % shown[:400])


def case_accounts(srv, bindir, api):
    """Two accounts' thin events: each fetched with its own account's key
    only (never another's: without acme's key, acme's event fails its
    attempt, saying so, and Stripe is not asked), its object in its
    account's version, and kept in its account with its object."""
    evs = {}
    for acct, (secret, key) in ACCOUNTS.items():
        api.add_key(key, acct)
        eid, sub, thin = new_thin(api, acct, account=acct)
        answered(post(srv, thin, secret=secret, account=acct), "accepted",
                 "%s's thin notification" % acct)
        check_eq((row(srv, eid)["account"], row(srv, eid)["needs_fetch"]), (acct, 1),
                 "recorded in %s, waiting" % acct)
        evs[acct] = (eid, sub)
    shown, _ = idemhook(srv, bindir, api, "show", "--account", "acme", "stripe",
                        evs["acme"][0])
    check("with IDEMHOOK_STRIPE_API_KEY@acme" in shown, "show names acme's key: %r"
          % shown[:600])
    env = {"IDEMHOOK_STRIPE_API_KEY@bravo": ACCOUNTS["bravo"][1],
           "IDEMHOOK_STRIPE_API_VERSIONS@bravo": BRAVO_VERSION,
           "IDEMHOOK_RETRY_BASE_MS": "100"}
    # acme's fetch fails: the run says so and exits 1 (issue 39, item 12).
    out, err = idemhook(srv, bindir, api, "work", "--once", env=env, want=1)
    eid, sub = evs["acme"]
    r = row(srv, eid)
    check_eq((r["status"], r["needs_fetch"]), ("failed", 1), "acme has no key yet")
    check("IDEMHOOK_STRIPE_API_KEY@acme is not set" in (r["last_error"] or ""),
          "acme's last error: %r" % r["last_error"])
    check_eq(api.calls("/v2/core/events/" + eid), [], "acme's event not asked with "
             "another account's key")
    env["IDEMHOOK_STRIPE_API_KEY@acme"] = ACCOUNTS["acme"][1]
    work_until(srv, bindir, api, eid, "done", env=env)
    for acct, (eid, sub) in evs.items():
        key = ACCOUNTS[acct][1]
        r = row(srv, eid)
        check_eq((r["status"], r["needs_fetch"], r["account"]), ("done", 0, acct),
                 "%s's event fetched and processed in %s" % (acct, acct))
        calls = api.calls("/v2/core/events/" + eid) + api.calls("/v1/subscriptions/" + sub)
        check_eq([(c["headers"].get("authorization"), c["status"]) for c in calls],
                 [("Bearer " + key, 200)] * 2, "%s's own key for the event and object" % acct)
        check_eq(calls[1]["headers"].get("stripe-version"),
                 BRAVO_VERSION if acct == "bravo" else VERSION,
                 "%s's object in its account's version" % acct)
        with contextlib.closing(srv.connect_ro()) as c:
            o = c.execute("SELECT account, event_id FROM idemhook_objects WHERE provider"
                          " = 'stripe' AND object_id = ?", (sub,)).fetchall()
        check_eq([tuple(x) for x in o], [(acct, eid)], "%s's object in %s" % (sub, acct))
        check(key not in out + err, "a key printed")


def case_no_curl(bindir):
    """The receivers link no HTTP client; the command does."""
    for prog in ("stripe.fcgi", "console.fcgi"):
        out = subprocess.run(["ldd", os.path.join(bindir, prog)],
                             capture_output=True).stdout.decode()
        check("libcurl" not in out, "%s links libcurl: %s" % (prog, out))
    out = subprocess.run(["ldd", os.path.join(bindir, "idemhook")],
                         capture_output=True).stdout.decode()
    check("libcurl" in out, "idemhook links libcurl: %s" % out)


def fast_hash(bindir, password):
    """The console's password hash at scrypt's lowest cost: the test's
    password is thrown away, and each request checks it."""
    p = subprocess.run([os.path.join(bindir, "idemhook"), "console-password", "--cost",
                        "10"], input=(password + "\n").encode(), capture_output=True,
                       timeout=60)
    line = p.stdout.decode().strip()
    check(p.returncode == 0 and line.startswith("IDEMHOOK_CONSOLE_PASSWORD_HASH="),
          "console-password: %r" % p.stderr)
    return line.split("=", 1)[1]


def new_server(bindir, servers, name, db=None, password=None):
    """With password, the console too (user USER), on its own settings."""
    penv = {"IDEMHOOK_STRIPE_SECRET_2": THIN_SECRET}
    penv.update({"IDEMHOOK_STRIPE_SECRET@" + a: v[0] for a, v in ACCOUNTS.items()})
    srv = Server(bindir, providers=["stripe"], name=name, db=db,
                 secrets={"stripe": SECRET}, provider_env={"stripe": penv})
    if password is not None:
        console = os.path.join(srv.tmp, "console.env")
        with open(console, "w") as f:
            f.write("IDEMHOOK_DB=%s\nIDEMHOOK_CONSOLE_USER=%s\n"
                    "IDEMHOOK_CONSOLE_PASSWORD_HASH=%s\n"
                    % (srv.db, USER, fast_hash(bindir, password)))
        os.chmod(console, 0o600)
        srv.extra_conf = "\n".join(console_conf(console, srv.settings_file()))
    srv.env.update({
        "IDEMHOOK_STRIPE_API_VERSIONS": VERSION,
        # One write per run (O_APPEND): the id, the type, the payload's start.
        "IDEMHOOK_STRIPE_ACTION": "* /bin/sh -c 'echo \"$IDEMHOOK_EVENT_ID"
                                  " $IDEMHOOK_EVENT_TYPE $(head -c 35)\" >> %s/runs'"
                                  % srv.tmp,
    })
    servers.add(srv)
    return srv


def case_pg(bindir, servers, api, lite):
    """The same flow on PostgreSQL: recorded waiting, fetched, processed;
    and idemhook copy from SQLite keeps a waiting event waiting."""
    srv = new_server(bindir, servers, "thin-pg", db=pg_new_db("ih_thin"))
    srv.start()
    ceid, _, cthin = new_thin(api, "copy")
    answered(post(lite, cthin), "accepted", "thin notification (SQLite)")
    idemhook(lite, bindir, api, "copy", "--to", srv.db, key=False)
    r = row(srv, ceid)
    check_eq((r["status"], r["needs_fetch"]), ("received", 1), "copied, still waiting")
    work_until(srv, bindir, api, ceid, "done")
    eid, sub, thin = new_thin(api, "pg")
    answered(post(srv, thin), "accepted", "thin notification")
    r = row(srv, eid)
    check_eq((r["status"], r["needs_fetch"]), ("received", 1), "recorded waiting")
    r = work_until(srv, bindir, api, eid, "done")
    check_eq(r["needs_fetch"], 0, "fetched")
    check(bytes(r["payload"]).decode().startswith(FETCHED), "full event kept")
    check_eq([x[0] for x in object_of(srv, sub)], ["active"], "the object's row")
    check_eq(len(runs_of(srv, eid)), 1, "processed once")


def cases(tap, bindir, servers):
    api = StripeStandin(KEY).start()
    try:
        password = "thin console " + os.urandom(4).hex()
        auth = "Basic " + base64.b64encode(("%s:%s" % (USER, password)).encode()).decode()
        srv = new_server(bindir, servers, "thin", password=password)
        if not tap.run("lighttpd starts (stripe: a snapshot and a thin destination)",
                       srv.start):
            return
        tap.run("thin event: verified, recorded waiting, 200, fetched by work, "
                "processed once", case_fetched, srv, bindir, api)
        tap.run("thin event: list --json, show --json and the console mark it "
                "waiting; list --needs-fetch", case_marked, srv, bindir, api, auth)
        tap.run("thin event: bad signature is 401, nothing stored", case_badsig,
                srv, bindir, api)
        tap.run("thin event: redelivery is a duplicate", case_redelivery, srv, bindir, api)
        tap.run("thin event: fetch failing (500) retried, then processed", case_retried,
                srv, bindir, api)
        tap.run("thin event: fetch failing forever (404) is a dead letter; replay",
                case_dead, srv, bindir, api)
        tap.run("thin event: a destination's ping is processed without reading the "
                "destination", case_ping, srv, bindir, api)
        tap.run("thin event: no API key, a clear line, the event waits", case_no_key,
                srv, bindir, api)
        tap.run("thin events of two accounts: each fetched with its own key, kept in "
                "its account", case_accounts, srv, bindir, api)
        tap.run("receivers link no libcurl", case_no_curl, bindir)
        if pg_backend():
            pass    # the whole suite ran on PostgreSQL
        elif os.environ.get("IH_PG_URI"):
            tap.run("postgresql: thin event recorded, fetched, processed; copied "
                    "waiting", case_pg, bindir, servers, api, srv)
        else:
            tap.skip("postgresql: thin event recorded, fetched, processed; copied "
                     "waiting",
                     "IH_PG_URI is not set (tests/run.sh starts a server)")
        tap.run("no sanitizer reports", lambda: check(
            not srv.sanitizer_reports(), "sanitizer: %r" % srv.sanitizer_reports()[:2]))
    finally:
        api.stop()


if __name__ == "__main__":
    sys.exit(suite_main("thin", cases))
