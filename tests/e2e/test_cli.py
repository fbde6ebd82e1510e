#!/usr/bin/env python3
"""End-to-end tests of the operator's command: idemhook list, show, verify,
replay, purge, stats, check (and init, work), over a store filled through
the real Stripe and GitHub endpoints behind lighttpd.

Usage: test_cli.py BINDIR   (or IH_BIN=BINDIR test_cli.py)
Prints 'ok - ...' / 'not ok - ...: reason' lines; exits 1 if any failed.
"""

import contextlib
import json
import math
import shlex
import os
import sqlite3
import subprocess
import sys
import threading
import time
import uuid

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from harness import (SANITIZER_ENV, SANITIZER_MARKERS, Server,  # noqa: E402
                     check, check_eq, sign_github, sign_stripe, suite_main)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMMANDS = ("init", "work", "check", "list", "show", "verify", "replay",
            "purge", "stats", "copy", "objects", "object", "smoke")
DAY_MS = 86400 * 1000


class Ctx:
    def __init__(self, bindir, srv):
        self.bin = os.path.join(bindir, "idemhook")
        self.srv = srv
        self.ids = {}       # name -> (provider, event_id)

    def env(self, extra=None):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "IDEMHOOK_DB": self.srv.db,
               "IDEMHOOK_STRIPE_SECRET": self.srv.secrets["stripe"],
               "IDEMHOOK_GITHUB_SECRET": self.srv.secrets["github"]}
        for k in SANITIZER_ENV:
            if k in os.environ:
                env[k] = os.environ[k]
        env.update(extra or {})
        return env

    def run(self, *args, env=None, want=None, timeout=60):
        """Runs idemhook; checks the exit code (when want is set) and that no
        sanitizer spoke.  Returns (rc, stdout bytes, stderr text)."""
        p = subprocess.run([self.bin] + list(args), env=self.env(env),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, timeout=timeout)
        err = p.stderr.decode("utf-8", "replace")
        for m in SANITIZER_MARKERS:
            check(m not in err, "sanitizer report from %s: %s" % (args, err[-1500:]))
        if want is not None:
            check(p.returncode == want, "idemhook %s: exit %d, expected %d; stderr: %s; "
                  "stdout: %s" % (" ".join(args), p.returncode, want, err.strip()[-600:],
                                  p.stdout.decode("utf-8", "replace")[-600:]))
        return p.returncode, p.stdout, err

    def out(self, *args, **kw):
        return self.run(*args, want=kw.pop("want", 0), **kw)[1].decode("utf-8", "replace")

    def db(self):
        c = harness.db_connect(self.srv.db, timeout=10)
        c.row_factory = sqlite3.Row
        return contextlib.closing(c)

    def row(self, name):
        p, e = self.ids[name]
        rows = self.srv.rows(p, e)
        check(len(rows) == 1, "%s: %d rows for %s %s" % (name, len(rows), p, e))
        return rows[0]


# ---------------------------------------------------------------- deliveries

def stripe_body(eid, etype):
    return json.dumps({"id": eid, "object": "event", "type": etype,
                       "created": int(time.time()),
                       "data": {"object": {"id": "pi_" + uuid.uuid4().hex[:12],
                                           "amount": 2000,
                                           "note": "Caf\u00e9 \u2713"}}},
                      ensure_ascii=False, indent=2).encode("utf-8")


def post_stripe(srv, eid, etype="payment_intent.succeeded", body=None):
    body = body or stripe_body(eid, etype)
    r = srv.post("/hooks/stripe", body, {"Stripe-Signature": sign_stripe(srv.secrets["stripe"], body)})
    return r, body


def post_github(srv, delivery, event="push", hook="4242"):
    # One body per event: GitHub never sends one body under two GUIDs.
    body = json.dumps({"ref": "refs/heads/main", "hook_id": int(hook), "after": delivery,
                       "repository": {"full_name": "o/r"}}).encode()
    r = srv.post("/hooks/github", body, {
        "X-Hub-Signature-256": sign_github(srv.secrets["github"], body),
        "X-GitHub-Event": event, "X-GitHub-Delivery": delivery,
        "X-GitHub-Hook-ID": hook})
    return r, body


def status_of(r):
    j = r.json() or {}
    return "%d %s" % (r.status, j.get("status"))


def fill(ctx):
    srv = ctx.srv
    for name, etype in (("s1", "payment_intent.succeeded"), ("s2", "payment_intent.succeeded"),
                        ("s3", "invoice.paid"), ("dead", "charge.refunded")):
        eid = "evt_cli_%s_%s" % (name, uuid.uuid4().hex[:10])
        r, _ = post_stripe(srv, eid, etype)
        check_eq(status_of(r), "200 accepted", "stripe %s" % name)
        ctx.ids[name] = ("stripe", eid)
    for _ in range(2):  # two redeliveries of s1, re-signed as Stripe does
        r, _ = post_stripe(srv, ctx.ids["s1"][1], body=bytes(ctx.row("s1")["payload"]))
        check_eq(status_of(r), "200 duplicate", "redelivery of s1")
    for name in ("g1", "g2"):
        d = str(uuid.uuid4())
        r, _ = post_github(srv, d)
        check_eq(status_of(r), "200 accepted", "github %s" % name)
        ctx.ids[name] = ("github", "4242:" + d)
    # Worker mode: everything is received; one worker run with a failing
    # action and one attempt makes charge.refunded dead, the rest done.
    out = ctx.out("work", "--once", env={"IDEMHOOK_STRIPE_ACTION": "charge.refunded false",
                                         "IDEMHOOK_MAX_ATTEMPTS": "1"})
    check("processed 6 event(s)" in out, "work --once: %r" % out)
    check_eq(ctx.row("dead")["status"], "dead", "charge.refunded after a failing action")
    check_eq(ctx.row("s1")["status"], "done", "s1 status")
    check_eq(ctx.row("g1")["status"], "done", "g1 status")


# ---------------------------------------------------------------- cases

def case_help(ctx):
    bad = []
    for cmd in COMMANDS:
        rc, out, err = ctx.run(cmd, "--help")
        if rc != 0 or b"usage: idemhook " + cmd.encode() not in out:
            bad.append("%s --help: exit %d, %r" % (cmd, rc, out[:80]))
        if cmd in ("init",):
            continue
        rc, out, err = ctx.run(cmd, "--no-such-option")
        if rc != 2 or "usage:" not in err:
            bad.append("%s --no-such-option: exit %d" % (cmd, rc))
    rc, out, _ = ctx.run("--help")
    for cmd in COMMANDS:
        if ("  %s " % cmd).encode() not in out:
            bad.append("idemhook --help lacks %s" % cmd)
    check(b"Exit codes" in out, "idemhook --help documents no exit codes")
    check(not bad, "; ".join(bad))


def case_one_parser(ctx):
    """The global options and work's parse like every subcommand's (one
    parser, cli_args.c): --name VALUE or --name=VALUE, and a missing
    value is a usage error that names the option."""
    out = ctx.out("--db=" + ctx.srv.db, "init")
    check("ready" in out, "--db=PATH init: %r" % out)
    for args in (("work", "--once", "--provider=github", "--interval=0.5"),
                 ("work", "--once", "--provider", "github", "--interval", "0.5")):
        out = ctx.out(*args)
        check(out.startswith("processed "), "%s: %r" % (" ".join(args), out))
    for args in (("work", "--provider"), ("work", "--once", "--interval"),
                 ("--config",), ("--db",)):
        rc, _, err = ctx.run(*args)
        check(rc == 2 and "%s needs a value" % args[-1] in err,
              "%s: exit %d, %r" % (" ".join(args), rc, err[-300:]))
    rc, _, err = ctx.run("work", "--interval=0")
    check(rc == 2 and "--interval takes seconds" in err,
          "work --interval=0: exit %d, %r" % (rc, err[-300:]))


def case_init_twice(ctx):
    before = ctx.srv.count()
    for _ in range(2):
        out = ctx.out("init")
        check("ready" in out, "init: %r" % out)
    check_eq(ctx.srv.count(), before, "rows after init twice")
    with ctx.db() as c:
        q = ("SELECT max(version) FROM idemhook_schema" if harness.is_pg(ctx.srv.db)
             else "PRAGMA user_version")
        check_eq(c.execute(q).fetchone()[0] > 0, True, "schema version")


def case_list(ctx):
    out = ctx.out("list")
    lines = out.splitlines()
    check(lines and lines[0].split()[:5] == ["RECEIVED", "PROVIDER", "EVENT_ID", "TYPE", "STATUS"],
          "header: %r" % lines[:1])
    for name, (p, e) in ctx.ids.items():
        check(e in out, "list lacks %s" % name)
    col = lines[0].index("EVENT_ID")
    check(all(len(l) > col and l[col - 2:col] == "  " for l in lines[1:]),
          "EVENT_ID column not aligned:\n" + out)
    gh = ctx.out("list", "--provider", "github")
    check(ctx.ids["g1"][1] in gh and ctx.ids["s1"][1] not in gh, "--provider github: %r" % gh)
    dead = ctx.out("list", "--status", "dead")
    check(ctx.ids["dead"][1] in dead and ctx.ids["s1"][1] not in dead, "--status dead: %r" % dead)
    typ = ctx.out("list", "--type=invoice.paid")
    check_eq(len(typ.splitlines()), 2, "--type invoice.paid rows (with header)")
    check_eq(len(ctx.out("list", "--limit", "2").splitlines()), 3, "--limit 2 lines")
    # Newest first, as git log lists: the JSON's received_at never rises,
    # and --limit keeps the newest.
    got = [r["received_at"] for r in json.loads(ctx.out("list", "--json"))]
    check(len(got) > 2 and got == sorted(got, reverse=True) and got[0] > got[-1],
          "list --json not newest first: %r" % got)
    newest = json.loads(ctx.out("list", "--json", "--limit", "1"))[0]["received_at"]
    check_eq(newest, got[0], "--limit 1 keeps the newest")
    tomorrow = time.strftime("%Y-%m-%d", time.gmtime(time.time() + 86400))
    check_eq(len(ctx.out("list", "--since", tomorrow).splitlines()), 1, "--since tomorrow lines")
    check_eq(len(ctx.out("list", "--until", "1000000000").splitlines()), 1, "--until 2001 lines")
    check_eq(len(ctx.out("list", "--since", "1h").splitlines()), 1 + ctx.srv.count(), "--since 1h")
    ctx.run("list", "--status", "bogus", want=2)
    ctx.run("list", "--since", "2024-13-01", want=2)
    ctx.run("list", "--provider", "nosuch", want=2)


def case_list_json(ctx):
    rows = json.loads(ctx.out("list", "--json"))
    check_eq(len(rows), ctx.srv.count(), "--json rows")
    by = {(r["provider"], r["event_id"]): r for r in rows}
    db = {(r["provider"], r["event_id"]): r for r in ctx.srv.rows()}
    check_eq(set(by), set(db), "--json events")
    for k, r in db.items():
        j = by[k]
        for f, g in (("event_type", "type"), ("status", "status"), ("duplicates", "duplicates"),
                     ("received_at", "received_at"), ("attempts", "attempts")):
            check_eq(j[g], r[f], "%s %s" % (k, g))
    check_eq(by[ctx.ids["s1"]]["duplicates"], 2, "s1 duplicates in --json")
    j = json.loads(ctx.out("list", "--json", "--provider", "github", "--limit", "1"))
    check_eq(len(j), 1, "--json --limit 1")
    check_eq(json.loads(ctx.out("list", "--json", "--status", "quarantined")), [], "empty --json")


def case_show(ctx):
    p, e = ctx.ids["dead"]
    out = ctx.out("show", p, e)
    row = ctx.row("dead")
    payload = bytes(row["payload"])
    for want in (e, "charge.refunded", "dead", "Stripe-Signature: (masked", "attempts:",
                 "payload (%d bytes):" % len(payload), payload.decode("utf-8").splitlines()[1]):
        check(want in out, "show lacks %r:\n%s" % (want, out))
    # The signature next to its payload is all a replay needs: masked by
    # default, printed with --signatures.
    check("t=" not in out and "v1=" not in out, "show prints the signature:\n" + out)
    check("Stripe-Signature: t=" in ctx.out("show", "--signatures", p, e),
          "show --signatures lacks the signature")
    check(row["last_error"], "the dead event has no last_error")
    check("last_error    " + row["last_error"] in out, "show lacks the last error %r" % row["last_error"])
    check("#1 " in out and " dead " in out, "show lacks the dead attempt:\n" + out)
    rc, raw, _ = ctx.run("show", "--raw", p, e, want=0)
    check_eq(raw, payload, "show --raw bytes")
    g = ctx.out("show", *ctx.ids["g1"])
    check("X-GitHub-Event: push" in g and "sha256=" not in g, "github headers: %s" % g)
    g = ctx.out("show", ctx.ids["g1"][0], "--signatures", ctx.ids["g1"][1])
    check("X-Hub-Signature-256: sha256=" in g, "github headers with --signatures: %s" % g)
    ctx.run("show", "stripe", "evt_does_not_exist", want=1)
    ctx.run("show", "stripe", want=2)


def case_verify(ctx):
    for name in ("s1", "s3", "g1"):
        out = ctx.out("verify", *ctx.ids[name])
        check(out.startswith("valid:"), "%s: %r" % (name, out))
    # The retry re-signed s1: the stored header is the first delivery's
    # (or the last's); either way it verifies.  Tamper with s2's payload.
    p, e = ctx.ids["s2"]
    with ctx.db() as c:
        if harness.is_pg(ctx.srv.db):
            c.execute("UPDATE payloads SET payload = convert_to(replace(convert_from(payload,"
                      " 'UTF8'), '2000', '9000'), 'UTF8') WHERE event = (SELECT id FROM events"
                      " WHERE provider = ? AND event_id = ?)", (p, e))
        else:
            c.execute("UPDATE payloads SET payload = CAST(replace(CAST(payload AS TEXT), '2000',"
                      " '9000') AS BLOB) WHERE event = (SELECT id FROM events"
                      " WHERE provider = ? AND event_id = ?)", (p, e))
        c.commit()
    check(b"9000" in bytes(ctx.row("s2")["payload"]), "tampering failed")
    rc, out, err = ctx.run("verify", p, e, want=1)
    check(out.startswith(b"INVALID:"), "tampered: %r %r" % (out, err))
    # The same event with a different secret configured: invalid too.
    rc, out, _ = ctx.run("verify", *ctx.ids["s1"], env={"IDEMHOOK_STRIPE_SECRET": "whsec_other"},
                         want=1)
    rc, _, err = ctx.run("verify", "asaas", "any", want=1)
    check("cannot be re-verified" in err, "asaas: %r" % err)
    rc, _, err = ctx.run("verify", *ctx.ids["s1"], env={"IDEMHOOK_STRIPE_SECRET": ""}, want=2)
    check("IDEMHOOK_STRIPE_SECRET" in err, "no secret: %r" % err)


def case_replay(ctx):
    p, e = ctx.ids["dead"]
    today = time.strftime("%Y-%m-%d", time.gmtime())
    before = ctx.row("dead")
    out = ctx.out("replay", "--dry-run", "--status", "dead", "--type", "charge.refunded",
                  "--since", today)
    check(e in out and "would requeue" in out and "1 event(s)" in out, "dry-run: %r" % out)
    check_eq(ctx.row("dead")["status"], "dead", "status after --dry-run")
    ctx.run("replay", "--provider", "stripe", want=2)   # a filter needs --status
    ctx.run("replay", "--status", "processing", want=2)
    out = ctx.out("replay", "--status", "dead", "--type", "charge.refunded", "--since", today)
    check(e in out and "1 event(s) requeued" in out, "replay: %r" % out)
    r = ctx.row("dead")
    check_eq((r["status"], r["attempts"], r["lease_owner"]), ("received", 0, None), "after replay")
    check(r["next_attempt_at"] >= before["received_at"], "next_attempt_at not now")
    out = ctx.out("work", "--once")
    check("processed 1 event(s)" in out, "work after replay: %r" % out)
    check_eq(ctx.row("dead")["status"], "done", "replayed event after work --once")
    # One event by id: a done event is processed again.
    out = ctx.out("replay", *ctx.ids["s3"])
    check("1 event(s) requeued" in out, "replay s3: %r" % out)
    check_eq(ctx.row("s3")["status"], "received", "s3 after replay")
    out = ctx.out("replay", *ctx.ids["s3"])
    check("already due" in out, "replay of a due event: %r" % out)
    check("processed 1 event(s)" in ctx.out("work", "--once"), "work after replay of s3")
    check_eq(ctx.row("s3")["status"], "done", "s3 after work")
    ctx.run("replay", "stripe", "evt_nope", want=1)


def nearest_rank(vals, pct):
    vals = sorted(vals)
    if not vals:
        return None
    k = max(1, math.ceil(len(vals) * pct / 100))
    return vals[k - 1]


def expected_stats(ctx, since_ms):
    now = int(time.time() * 1000)
    exp = {}
    for r in ctx.srv.rows():
        if not (since_ms <= r["received_at"] <= now + 1000):
            continue
        e = exp.setdefault(r["provider"], {"received": 0, "duplicates": 0, "lat": [],
                                           "status": {s: 0 for s in ("received", "processing", "done",
                                                                     "failed", "dead", "quarantined")}})
        e["received"] += 1
        e["duplicates"] += r["duplicates"]
        e["status"][r["status"]] += 1
        if r["status"] == "done" and r["done_at"] is not None:
            e["lat"].append(r["done_at"] - r["received_at"])
    return exp


def case_stats(ctx):
    since = int(time.time()) - 3600
    j = json.loads(ctx.out("stats", "--json", "--since", str(since)))
    exp = expected_stats(ctx, since * 1000)
    got = {p["provider"]: p for p in j["providers"]}
    check_eq(set(got), set(exp), "providers")
    for prov, e in exp.items():
        g = got[prov]
        check_eq(g["received"], e["received"], prov + " received")
        check_eq(g["duplicates"], e["duplicates"], prov + " duplicates")
        rate = e["duplicates"] / (e["received"] + e["duplicates"])
        check(abs(g["duplicate_rate"] - rate) < 1e-5, "%s rate %r != %r" % (prov, g["duplicate_rate"], rate))
        check_eq(g["status"], e["status"], prov + " status")
        for pct in (50, 95, 99):
            check_eq(g["latency_ms"]["p%d" % pct], nearest_rank(e["lat"], pct), "%s p%d" % (prov, pct))
        check_eq(g["latency_ms"]["count"], len(e["lat"]), prov + " latency count")
    check_eq(got["stripe"]["duplicates"], 2, "stripe duplicates")
    prom = ctx.out("stats", "--prometheus", "--since", str(since))
    vals = {}
    for line in prom.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        k, v = line.rsplit(" ", 1)
        vals[k] = float(v)
    for prov, e in exp.items():
        for st, n in e["status"].items():
            k = 'idemhook_events_total{provider="%s",status="%s"}' % (prov, st)
            check_eq(vals.get(k), float(n), k)
        k = 'idemhook_duplicates_total{provider="%s"}' % prov
        check_eq(vals.get(k), float(e["duplicates"]), k)
        k = 'idemhook_processing_latency_seconds{provider="%s",quantile="0.99"}' % prov
        check(abs(vals.get(k, -1) - nearest_rank(e["lat"], 99) / 1000.0) < 1e-6, k)
    check("# TYPE idemhook_events_total gauge" in prom, "no TYPE line")
    table = ctx.out("stats")
    check("stripe" in table and "github" in table and "P99" in table, "table: %r" % table)
    # A pending event shows as the oldest pending one.
    r, _ = post_stripe(ctx.srv, "evt_cli_pending_" + uuid.uuid4().hex[:8])
    check_eq(status_of(r), "200 accepted", "pending event")
    j = json.loads(ctx.out("stats", "--json", "--provider", "stripe"))
    check_eq(len(j["providers"]), 1, "--provider stripe")
    check(j["providers"][0]["pending"] >= 1 and j["providers"][0]["oldest_pending_at"], "pending: %r" % j)
    ctx.run("stats", "--json", "--prometheus", want=2)


def age(ctx, name, days):
    p, e = ctx.ids[name]
    t = int(time.time() * 1000) - days * DAY_MS
    with ctx.db() as c:
        c.execute("UPDATE events SET received_at = ?, last_seen_at = ? WHERE provider = ? AND event_id = ?",
                  (t, t, p, e))
        c.commit()


def case_purge(ctx):
    # s1 40 days old, s2 32 days, g1 40 days but still received (pending).
    age(ctx, "s1", 40)
    age(ctx, "s2", 32)
    p, e = ctx.ids["g1"]
    with ctx.db() as c:
        c.execute("UPDATE events SET status = 'received' WHERE provider = ? AND event_id = ?", (p, e))
        c.commit()
    age(ctx, "g1", 40)
    env = {"IDEMHOOK_STRIPE_TOMBSTONE_DAYS": "35"}
    before = ctx.srv.rows()
    out = ctx.out("purge", "--dry-run", "--payload-days", "31", env=env)
    check("stripe: would drop 1 payload(s)" in out and "would delete 1 row(s)" in out, "dry-run: %r" % out)
    check_eq(ctx.srv.rows(), before, "rows after --dry-run")
    out = ctx.out("purge", "--payload-days", "31", env=env)
    check("stripe: dropped 1 payload(s)" in out and "deleted 1 row(s)" in out, "purge: %r" % out)
    check(not ctx.srv.rows(*ctx.ids["s1"]), "s1 (40 d, done, tombstone 35 d) not deleted")
    s2 = ctx.row("s2")
    check(s2["payload"] is None and s2["purged_at"], "s2 payload not dropped")
    g1 = ctx.row("g1")
    check(g1["payload"] is not None, "a pending event's payload was dropped")
    # A late redelivery of the tombstone is still a duplicate.
    r, _ = post_stripe(ctx.srv, ctx.ids["s2"][1])
    check_eq(status_of(r), "200 duplicate", "redelivery of purged s2")
    check_eq(ctx.row("s2")["duplicates"], 1, "s2 duplicates")
    out = ctx.out("show", *ctx.ids["s2"])
    check("payload: purged" in out, "show of purged: %r" % out)
    ctx.run("verify", *ctx.ids["s2"], want=1)
    ctx.run("replay", *ctx.ids["s2"], want=1)
    ctx.run("purge", "--payload-days", "x", want=2)
    rc, _, err = ctx.run("purge", "--dry-run", env={"IDEMHOOK_ASAAS_TOMBSTONE_DAYS": "3"}, want=0)
    check("warning" in err and "asaas" in err, "no warning for a short window: %r" % err)
    ctx.run("purge", env={"IDEMHOOK_TOMBSTONE_DAYS": "soon"}, want=2)
    with ctx.db() as c:  # back to done, for later cases
        c.execute("UPDATE events SET status = 'done' WHERE provider = ? AND event_id = ?", (p, e))
        c.commit()


def case_purge_concurrent(ctx):
    """Deliveries and redeliveries while purge runs in a loop: every answer
    is 200, every event is stored once, purged ones are duplicates."""
    srv = ctx.srv
    old = []
    for i in range(6):  # finished, payloads due for purge
        eid = "evt_cli_old_%d_%s" % (i, uuid.uuid4().hex[:8])
        r, _ = post_stripe(srv, eid)
        check_eq(status_of(r), "200 accepted", "old event")
        old.append(eid)
    ctx.out("work", "--once")
    stop = threading.Event()
    purges = []

    def purger():
        while not stop.is_set():
            purges.append(ctx.run("purge", "--payload-days", "0", "--provider", "stripe"))
            purges.append(ctx.run("work", "--once"))

    t = threading.Thread(target=purger, daemon=True)
    t.start()
    new = ["evt_cli_new_%d_%s" % (i, uuid.uuid4().hex[:8]) for i in range(40)]
    bad = []

    def sender(k):
        for i in range(k, len(new), 4):
            r, _ = post_stripe(srv, new[i])
            if status_of(r) != "200 accepted":
                bad.append("%s: %s" % (new[i], status_of(r)))
            r, _ = post_stripe(srv, old[i % len(old)])
            if status_of(r) != "200 duplicate":
                bad.append("redelivery %s: %s" % (old[i % len(old)], status_of(r)))

    senders = [threading.Thread(target=sender, args=(k,), daemon=True) for k in range(4)]
    for s in senders:
        s.start()
    for s in senders:
        s.join(120)
    stop.set()
    t.join(120)
    check(not bad, "; ".join(bad[:5]))
    check(len(purges) >= 2, "purge did not run during the deliveries")
    failed = [p for p in purges if p[0] != 0]
    check(not failed, "purge/work failed: %r" % (failed[:1],))
    for eid in new + old:
        rows = srv.rows("stripe", eid)
        check(len(rows) == 1, "%s: %d rows" % (eid, len(rows)))
    ctx.out("purge", "--payload-days", "0", "--provider", "stripe")
    dropped = [eid for eid in old if srv.rows("stripe", eid)[0]["payload"] is None]
    check_eq(len(dropped), len(old), "old payloads dropped")
    for eid in old[:2]:
        r, _ = post_stripe(srv, eid)
        check_eq(status_of(r), "200 duplicate", "redelivery after purge")


def case_check(ctx):
    only = ("--provider", "stripe", "--provider", "github")
    os.chmod(ctx.srv.db, 0o644)
    rc, out, _ = ctx.run("check", *only, want=1)
    check(b"chmod 600" in out and b"PROBLEM" in out, "world-readable: %r" % out)
    os.chmod(ctx.srv.db, 0o600)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(ctx.srv.db + suffix):
            os.chmod(ctx.srv.db + suffix, 0o600)
    rc, out, _ = ctx.run("check", *only, want=0)
    check(b"WAL mode" in out and b"no problems" in out, "check: %r" % out)
    rc, out, _ = ctx.run("check", want=1)   # shopify, asaas, standard lack secrets
    check(b"IDEMHOOK_SHOPIFY_SECRET" in out and b"IDEMHOOK_ASAAS_TOKEN" in out, "secrets: %r" % out)
    # A secret kept only in lighttpd's or Apache's configuration is one
    # check cannot see: it says so rather than only "no secret".
    check(b"web server's configuration is not visible here" in out,
          "no word on secrets only in the web server's configuration: %r" % out)
    rc, out, _ = ctx.run("check", *only, "--docroot", ctx.srv.tmp, want=1)
    check(b"document root" in out, "--docroot: %r" % out)
    rc, out, _ = ctx.run("check", *only, env={"DOCUMENT_ROOT": os.path.dirname(ctx.srv.db)}, want=1)
    cfg = os.path.join(ctx.srv.tmp, "idemhook.env")
    with open(cfg, "w") as f:
        f.write("IDEMHOOK_TOLERANCE=300\n")
    os.chmod(cfg, 0o644)
    rc, out, _ = ctx.run("check", *only, env={"IDEMHOOK_CONFIG": cfg}, want=1)
    check(b"config file" in out and b"chmod 600" in out, "config file: %r" % out)
    os.chmod(cfg, 0o600)
    ctx.run("check", *only, env={"IDEMHOOK_CONFIG": cfg}, want=0)
    # A start-up-only setting in the file would be ignored without a word.
    with open(cfg, "a") as f:
        f.write("IDEMHOOK_THREADS=16\n")
    rc, out, _ = ctx.run("check", *only, env={"IDEMHOOK_CONFIG": cfg}, want=1)
    check(b"IDEMHOOK_THREADS in " in out and b"start-up environment only" in out,
          "start-up setting in the file: %r" % out)
    with open(cfg, "w") as f:
        f.write("IDEMHOOK_TOLERANCE=300\n")
    missing = os.path.join(ctx.srv.tmp, "nodir", "none.db")
    rc, out, _ = ctx.run("check", *only, env={"IDEMHOOK_DB": missing}, want=1)
    check(b"idemhook init" in out, "missing store: %r" % out)
    check(not os.path.exists(missing), "check created the store")


# ---------------------------------------------------------------- hostile text and JSON

# What an attacker can put in an event id, type, header, payload or error:
# ESC (C0), CSI as the C1 character U+009B, CSI as a raw byte, BEL, DEL, a
# bidi override (U+202E) and bytes that are not UTF-8.
HOSTILE = b"\x1b[31m\xc2\x9b2J\x9b\x07\x7f\xe2\x80\xae\xff\xfe"


def insert_event(ctx, provider, event_id, status="dead", payload=b"{}", headers=b"",
                 etype=b"t", error=None, days=0, attempts=()):
    """Inserts an event (and its attempts) directly; ids and texts as bytes
    are stored as TEXT with whatever bytes they hold."""
    now = int(time.time() * 1000) - days * DAY_MS
    asb = lambda v: v if isinstance(v, bytes) else v.encode()  # noqa: E731
    if harness.is_pg(ctx.srv.db):
        # PostgreSQL text is valid UTF-8 by construction.
        txt = lambda v: v.decode() if isinstance(v, bytes) else v  # noqa: E731
        with ctx.db() as c:
            rid = c.execute(
                "INSERT INTO events (provider, event_id, event_type, headers,"
                " received_at, last_seen_at, status, attempts, last_error) VALUES (?, ?, ?, ?,"
                " ?, ?, ?, ?, ?) RETURNING id",
                (txt(provider), txt(event_id), txt(etype), txt(headers), now, now,
                 status, len(attempts), txt(error))).fetchone()[0]
            if payload is not None:
                c.execute("INSERT INTO payloads (event, payload) VALUES (?, ?)",
                          (rid, bytes(payload)))
            for i, err in enumerate(attempts):
                c.execute("INSERT INTO attempts (event, attempt, started_at, finished_at,"
                          " outcome, error) VALUES (?, ?, ?, ?, 'failed', ?)",
                          (rid, i + 1, now, now + 5, txt(err)))
        return
    with ctx.db() as c:
        cur = c.execute(
            "INSERT INTO events (provider, event_id, event_type, headers, received_at,"
            " last_seen_at, status, attempts, last_error) VALUES (CAST(? AS TEXT), CAST(? AS TEXT),"
            " CAST(? AS TEXT), CAST(? AS TEXT), ?, ?, ?, ?, CAST(? AS TEXT))",
            (asb(provider), asb(event_id), asb(etype), asb(headers), now, now, status,
             len(attempts), asb(error) if error is not None else None))
        if payload is not None:
            c.execute("INSERT INTO payloads (event, payload) VALUES (?, ?)",
                      (cur.lastrowid, payload))
        for i, err in enumerate(attempts):
            c.execute("INSERT INTO attempts (event, attempt, started_at, finished_at, outcome, error)"
                      " VALUES (?, ?, ?, ?, 'failed', CAST(? AS TEXT))",
                      (cur.lastrowid, i + 1, now, now + 5, asb(err)))
        c.commit()


def terminal_safe(what, data):
    """data (bytes) holds nothing a terminal acts on: UTF-8 only, no C0 but
    newline and tab, no DEL, no C1, no bidi override."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise AssertionError("%s: not UTF-8 (%s): %r" % (what, e, data[max(0, e.start - 40):e.end + 40]))
    bad = sorted({"U+%04X" % ord(ch) for ch in text
                  if (ord(ch) < 0x20 and ch not in "\n\t") or 0x7f <= ord(ch) <= 0x9f
                  or 0x202a <= ord(ch) <= 0x202e or 0x2066 <= ord(ch) <= 0x2069})
    check(not bad, "%s: control characters reach the terminal: %s in %r" % (what, bad, text[:300]))
    return text


def case_hostile_text(ctx):
    """Ids, types, headers, payloads and errors holding C0 and C1 controls,
    a bidi override and bytes that are not UTF-8 never reach the terminal
    raw, from any command; each is shown as \\xNN."""
    eid = b"evt_hostile_" + HOSTILE
    insert_event(ctx, "stripe", eid, etype=b"type_" + HOSTILE,
                 payload=b'{"id": "x", "note": "' + HOSTILE + b'"}\n',
                 headers=b"Stripe-Signature: t=1," + HOSTILE + b"\n",
                 error=b"last " + HOSTILE, attempts=[b"attempt " + HOSTILE])
    insert_event(ctx, b"prov_" + HOSTILE, b"evt_other", status="done")
    ctx.ids["hostile"] = ("stripe", eid.decode("utf-8", "surrogateescape"))
    arg = eid.decode("utf-8", "surrogateescape")
    runs = [("list",), ("list", "--json"), ("show", "stripe", arg), ("show", "--json", "stripe", arg),
            ("replay", "--dry-run", "--status", "dead"), ("replay", "--dry-run", "stripe", arg),
            ("verify", "stripe", arg), ("stats",), ("stats", "--json"), ("stats", "--prometheus"),
            ("replay", "stripe", arg + "x"), ("show", "nosuch" + HOSTILE.decode("utf-8", "surrogateescape"), "x")]
    for args in runs:
        p = subprocess.run([ctx.bin] + list(args), env=ctx.env(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=60)
        for m in SANITIZER_MARKERS:
            check(m.encode() not in p.stderr, "sanitizer report from %s" % (args,))
        terminal_safe("stdout of idemhook %s" % " ".join(args[:2]), p.stdout)
        terminal_safe("stderr of idemhook %s" % " ".join(args[:2]), p.stderr)
    # Paths from the settings, as check prints them.
    bad_db = os.path.join(ctx.srv.tmp, "x\x1b[2J\u009b.db")
    p = subprocess.run([ctx.bin, "check", "--provider", "stripe"],
                       env=ctx.env({"IDEMHOOK_DB": bad_db}), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=60)
    check_eq(p.returncode, 1, "check of a missing store with controls in its path")
    terminal_safe("stdout of idemhook check", p.stdout)
    check(b"x\\x1b[2J\\xc2\\x9b.db" in p.stdout, "check output: %r" % p.stdout[-400:])
    out = ctx.out("show", "stripe", arg)
    check("\\x1b[31m\\xc2\\x9b2J\\x9b\\x07\\x7f\\xe2\\x80\\xae\\xff\\xfe" in out,
          "show does not write the masked bytes as \\xNN: %r" % out[:600])
    check("evt_hostile_\\x1b" in ctx.out("list"), "list does not mask the id")
    rows = json.loads(ctx.out("list", "--json"))
    got = [r for r in rows if r["event_id"].startswith("evt_hostile_")]
    check_eq(len(got), 1, "hostile rows in list --json")
    check_eq(got[0]["event_id"], eid.decode("utf-8", "replace"), "event_id in list --json")


def case_show_json(ctx):
    """show --json: one object with the event, its attempts, its headers and
    its payload (UTF-8 text, base64 when not UTF-8, null once purged)."""
    p, e = ctx.ids["g2"]
    j = json.loads(ctx.out("show", "--json", p, e))
    row = ctx.row("g2")
    check_eq(sorted(j), ["attempts", "event", "headers", "payload", "payload_encoding"], "keys")
    ev = j["event"]
    for k, col in (("provider", "provider"), ("event_id", "event_id"), ("type", "event_type"),
                   ("status", "status"), ("received_at", "received_at"), ("attempts", "attempts"),
                   ("duplicates", "duplicates")):
        check_eq(ev[k], row[col], "event." + k)
    check_eq(ev["payload_bytes"], len(bytes(row["payload"])), "payload_bytes")
    with ctx.db() as c:
        att = c.execute("SELECT attempt, started_at, outcome FROM attempts WHERE event = ?"
                        " ORDER BY attempt", (row["id"],)).fetchall()
    check(att, "g2 has no attempts in the store")
    check_eq([(a["attempt"], a["started_at"], a["outcome"]) for a in j["attempts"]],
             [tuple(a) for a in att], "attempts")
    names = [h["name"] for h in j["headers"]]
    check("X-Hub-Signature-256" in names and "X-GitHub-Event" in names, "headers: %r" % j["headers"])
    sig = [h["value"] for h in j["headers"] if h["name"] == "X-Hub-Signature-256"][0]
    check_eq(sig, "(masked)", "the signature header's value without --signatures")
    j = json.loads(ctx.out("show", "--json", "--signatures", p, e))
    sig = [h["value"] for h in j["headers"] if h["name"] == "X-Hub-Signature-256"][0]
    check(row["headers"].endswith("\n") and ("X-Hub-Signature-256: " + sig) in row["headers"]
          and sig.startswith("sha256="),
          "header value %r not from %r" % (sig, row["headers"]))
    check_eq(j["payload_encoding"], "utf-8", "payload_encoding of a UTF-8 payload")
    check_eq(j["payload"].encode("utf-8"), bytes(row["payload"]), "payload text")
    # Not UTF-8: base64 of the exact bytes.
    p, e = ctx.ids["hostile"]
    rc, out, _ = ctx.run("show", "--json", "--signatures", p, e.encode("utf-8", "surrogateescape").decode(
        "utf-8", "surrogateescape"), want=0)
    terminal_safe("show --json", out)
    j = json.loads(out)
    check_eq(j["payload_encoding"], "base64", "payload_encoding of a non-UTF-8 payload")
    import base64
    check_eq(base64.b64decode(j["payload"]), b'{"id": "x", "note": "' + HOSTILE + b'"}\n',
             "base64 payload")
    check_eq(j["event"]["last_error"], ("last " + HOSTILE.decode("utf-8", "replace")),
             "last_error with controls")
    check_eq(j["attempts"][0]["error"], "attempt " + HOSTILE.decode("utf-8", "replace"),
             "attempt error")
    check_eq(j["headers"][0]["value"], "t=1," + HOSTILE.decode("utf-8", "replace"), "header value")
    # A purged payload: null, and so is its encoding.
    j = json.loads(ctx.out("show", "--json", *ctx.ids["s2"]))
    check_eq((j["payload"], j["payload_encoding"], j["event"]["payload_bytes"]), (None, None, None),
             "purged payload")
    ctx.run("show", "--json", "--raw", *ctx.ids["s3"], want=2)
    ctx.run("show", "--json", "stripe", "evt_nope", want=1)


def case_replay_defaults(ctx):
    """replay --dry-run with filters but no --status lists what a replay
    would make due (done, failed, dead, quarantined) and exits 0; a real
    one asks for --status naming the command; --status done alone needs a
    filter or --all; '--' lets an id start with '-'."""
    for st in ("done", "failed", "dead", "quarantined", "received", "processing"):
        insert_event(ctx, "stripe", "evt_rd_" + st, status=st, payload=b'{"id":"x"}')
    insert_event(ctx, "stripe", "evt_rd_purged", status="done", payload=None)
    with ctx.db() as c:
        c.text_factory = lambda b: b.decode("utf-8", "replace")
        want = {r["event_id"] for r in c.execute(
            "SELECT event_id FROM events WHERE provider = 'stripe' AND EXISTS (SELECT 1 FROM"
            " payloads WHERE event = events.id) AND"
            " status IN ('done', 'failed', 'dead', 'quarantined')")}
        before = {(r["provider"], r["event_id"]): r["status"]
                  for r in c.execute("SELECT provider, event_id, status FROM events")}
    check(len(want) >= 3, "too few replayable stripe events: %r" % want)
    rc, out, err = ctx.run("replay", "--dry-run", "--provider", "stripe", want=0)
    text = out.decode("utf-8", "replace")
    listed = {l.split()[3] for l in text.splitlines() if l.startswith("would requeue stripe ")}
    plain = {e for e in want if e.isprintable() and " " not in e}
    check_eq(listed & plain, plain, "events listed by replay --dry-run --provider stripe")
    for st in ("done", "failed", "dead", "quarantined"):
        check("evt_rd_" + st in listed, "%s event not listed: %r" % (st, text))
    for st in ("received", "processing", "purged"):
        check("evt_rd_" + st not in listed, "%s event listed: %r" % (st, text))
    check("%d event(s) would be requeued" % len(want) in text, "count line: %r" % text[-200:])
    rc, out, err = ctx.run("replay", "--provider", "stripe", want=2)
    check("idemhook replay --dry-run --provider stripe" in err and "--status" in err,
          "no exact command in: %r" % err)
    check("replay --status dead --provider stripe" in err, "no --status example in: %r" % err)
    rc, out, err = ctx.run("--db", ctx.srv.db, "replay", "--type", "a b", want=2)
    check("--db %s replay --dry-run --type 'a b'" % shlex.quote(ctx.srv.db) in err,
          "global options or quoting lost: %r" % err)
    # --status done alone: refused without --all; a dry run is allowed.
    rc, out, err = ctx.run("replay", "--status", "done", want=2)
    check("--all" in err and "replay --dry-run --status done" in err, "done alone: %r" % err)
    out = ctx.out("replay", "--dry-run", "--status", "done")
    check("would be requeued" in out, "dry run of --status done: %r" % out)
    with ctx.db() as c:
        c.text_factory = lambda b: b.decode("utf-8", "replace")
        after = {(r["provider"], r["event_id"]): r["status"]
                 for r in c.execute("SELECT provider, event_id, status FROM events")}
    check_eq(after, before, "statuses after refused and dry-run replays")
    out = ctx.out("replay", "--status", "done", "--provider", "github")
    check("requeued" in out, "--status done --provider github: %r" % out)
    out = ctx.out("replay", "--status", "done", "--all")
    check("requeued" in out, "--status done --all: %r" % out)
    ctx.out("work", "--once")
    # '--': an id that starts with '-'.
    insert_event(ctx, "stripe", "-evt_dash", status="dead", payload=b'{"id":"-evt_dash"}')
    rc, out, err = ctx.run("show", "stripe", "-evt_dash", want=2)
    check("--" in err, "no hint about --: %r" % err)
    out = ctx.out("show", "--", "stripe", "-evt_dash")
    check("-evt_dash" in out, "show -- stripe -evt_dash: %r" % out)
    ctx.run("verify", "--", "stripe", "-evt_dash", want=1)
    out = ctx.out("replay", "--dry-run", "--", "stripe", "-evt_dash")
    check("would requeue stripe -evt_dash" in out, "replay --dry-run --: %r" % out)
    out = ctx.out("replay", "--", "stripe", "-evt_dash")
    check("1 event(s) requeued" in out, "replay --: %r" % out)
    check_eq(ctx.srv.rows("stripe", "-evt_dash")[0]["status"], "received", "status after replay --")


def case_purge_dead(ctx):
    """purge keeps dead letters (row and payload) past retention and says
    so; --include-dead purges them like done events."""
    insert_event(ctx, "stripe", "evt_old_dead", status="dead", payload=b'{"id":"evt_old_dead"}',
                 days=40)
    insert_event(ctx, "stripe", "evt_old_done", status="done", payload=b'{"id":"evt_old_done"}',
                 days=40)
    env = {"IDEMHOOK_STRIPE_TOMBSTONE_DAYS": "35"}
    out = ctx.out("purge", "--provider", "stripe", "--payload-days", "31", env=env)
    check(not ctx.srv.rows("stripe", "evt_old_done"), "the old done event was kept")
    rows = ctx.srv.rows("stripe", "evt_old_dead")
    check(len(rows) == 1 and rows[0]["payload"] is not None,
          "purge deleted or emptied a dead letter: %r; output %r" % (rows, out))
    check("kept 1 dead event(s)" in out and "--include-dead" in out, "purge output: %r" % out)
    out = ctx.out("purge", "--provider", "stripe", "--payload-days", "31", "--include-dead",
                  "--dry-run", env=env)
    check("would delete 1 row(s)" in out, "--include-dead --dry-run: %r" % out)
    check(ctx.srv.rows("stripe", "evt_old_dead"), "--dry-run deleted")
    ctx.out("purge", "--provider", "stripe", "--payload-days", "31", "--include-dead", env=env)
    check(not ctx.srv.rows("stripe", "evt_old_dead"), "--include-dead kept the dead letter")


def case_check_hardening(ctx, tap):
    """check refuses a sticky world-writable store directory, symbolic links
    for the store and its -wal, -shm and -lock files (which init refuses
    too), store files owned by a third user, and agrees with the README
    on the settings file: 0640 root:<programs' group> or 0600."""
    import pwd
    import shutil
    import tempfile
    root = os.geteuid() == 0
    tmp = tempfile.mkdtemp(prefix="ih-cli-check-")
    try:
        os.chmod(tmp, 0o755)
        d = os.path.join(tmp, "s")
        db = os.path.join(d, "events.db")
        env = {"IDEMHOOK_DB": db}
        only = ("--provider", "stripe")
        ctx.out("init", env=env)
        rc, out, _ = ctx.run("check", *only, env=env, want=0)
        # Sticky, world-writable: another user can create the -wal first.
        os.chmod(d, 0o1777)
        rc, out, _ = ctx.run("check", *only, env=env, want=1)
        check(b"sticky" in out and b"chmod 700" in out, "sticky 1777 directory: %r" % out)
        os.chmod(d, 0o700)
        # Symbolic links: check names them; init refuses to open the store.
        target = os.path.join(tmp, "elsewhere")
        for suffix in ("-wal", "-shm", "-lock"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(db + suffix)
            os.symlink(target + suffix, db + suffix)
            rc, out, _ = ctx.run("check", *only, env=env, want=1)
            check(b"symbolic link" in out, "%s symlink not found by check: %r" % (suffix, out))
            rc, _, err = ctx.run("init", env=env, want=1)
            check("symbolic link" in err, "init with a %s symlink: %r" % (suffix, err))
            check(not os.path.exists(target + suffix), "%s followed to its target" % suffix)
            os.unlink(db + suffix)
        link = os.path.join(d, "link.db")
        os.symlink(db, link)
        rc, _, err = ctx.run("init", env={"IDEMHOOK_DB": link}, want=1)
        check("symbolic link" in err, "init through a symlinked store: %r" % err)
        rc, out, _ = ctx.run("check", *only, env={"IDEMHOOK_DB": link}, want=1)
        check(b"symbolic link" in out, "check of a symlinked store: %r" % out)
        os.unlink(link)
        ctx.run("check", *only, env=env, want=0)
        # The bad-signature counts beside the store (shared/sigfail.c):
        # owner-only, a regular file, as the store's other files.
        sf = db + "-sigfail"
        with open(sf, "wb"):
            pass
        os.chmod(sf, 0o644)
        rc, out, _ = ctx.run("check", *only, env=env, want=1)
        check(("store bad-signature counts %s has mode 0644" % sf).encode() in out
              and ("chmod 600 %s" % sf).encode() in out, "-sigfail 0644: %r" % out)
        os.unlink(sf)
        os.symlink(target + "-sigfail", sf)
        rc, out, _ = ctx.run("check", *only, env=env, want=1)
        check(("bad-signature counts %s is a symbolic link" % sf).encode() in out,
              "-sigfail symlink: %r" % out)
        os.unlink(sf)
        with open(sf, "wb"):
            pass
        os.chmod(sf, 0o600)
        rc, out, _ = ctx.run("check", *only, env=env, want=0)
        check(("store bad-signature counts %s is owner-only" % sf).encode() in out,
              "-sigfail 0600 not reported ok: %r" % out)
        # Plain CGI's processing slots (shared/cgi_slot.h): the same.
        for side in ("-proc", "-proc2"):
            ps = db + side
            with open(ps, "wb"):
                pass
            os.chmod(ps, 0o644)
            rc, out, _ = ctx.run("check", *only, env=env, want=1)
            check(("store processing slot %s has mode 0644" % ps).encode() in out,
                  "%s 0644: %r" % (side, out))
            os.unlink(ps)
            os.symlink(target + side, ps)
            rc, out, _ = ctx.run("check", *only, env=env, want=1)
            check(("processing slot %s is a symbolic link" % ps).encode() in out,
                  "%s symlink: %r" % (side, out))
            os.unlink(ps)
        # The settings file: 0600 (what the README installs) or 0640 with the
        # programs' group, never readable by others or writable by the group.
        cfg = os.path.join(tmp, "idemhook.env")
        with open(cfg, "w") as f:
            f.write("IDEMHOOK_TOLERANCE=300\n")
        cenv = dict(env, IDEMHOOK_CONFIG=cfg)
        for mode, want_rc, what in ((0o640, 0, b""), (0o600, 0, b""), (0o644, 1, b"chmod 640"),
                                    (0o660, 1, b"its group can change")):
            os.chmod(cfg, mode)
            rc, out, _ = ctx.run("check", *only, env=cenv, want=want_rc)
            check(what in out, "config file mode %o: %r" % (mode, out))
        if not root:
            tap.skip("check: owners (store, directory, settings file, --user)",
                     "needs root to give files to other users")
            return
        nobody = pwd.getpwnam("nobody").pw_uid
        wd = pwd.getpwnam("www-data")
        # Store files owned by a third user.
        os.chown(db, nobody, -1)
        rc, out, _ = ctx.run("check", *only, env=env, want=1)
        check(b"belongs to nobody" in out, "store owned by nobody: %r" % out)
        os.chown(d, nobody, -1)
        rc, out, _ = ctx.run("check", *only, "--user", "nobody", env=env, want=0)
        os.chown(d, 0, -1)
        os.chown(db, 0, -1)
        # Settings file 0640: its group must be the programs' user's.
        os.chmod(cfg, 0o640)
        os.chown(cfg, 0, 0)
        rc, out, _ = ctx.run("check", *only, "--user", "www-data", env=cenv, want=1)
        check(b"cannot be read by www-data" in out, "0640 root:root for www-data: %r" % out)
        os.chown(cfg, 0, wd.pw_gid)
        os.chown(d, wd.pw_uid, wd.pw_gid)
        for f in os.listdir(d):
            os.chown(os.path.join(d, f), wd.pw_uid, wd.pw_gid)
        rc, out, _ = ctx.run("check", *only, "--user", "www-data", env=cenv, want=0)
        os.chmod(cfg, 0o600)
        os.chown(cfg, nobody, -1)
        rc, out, _ = ctx.run("check", *only, "--user", "www-data", env=cenv, want=1)
        check(b"belongs to nobody" in out, "settings owned by a third user: %r" % out)
        ctx.run("check", "--user", "no-such-user-here", env=env, want=2)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def case_check_console_tls_proxy(ctx):
    """check says where the console takes Basic credentials: ok when
    IDEMHOOK_CONSOLE_TLS_PROXY is unset (HTTPS or loopback only), a note
    when it is 1 (a proxy is trusted to terminate TLS), a problem for a
    value the console would take as unset."""
    p = subprocess.run([ctx.bin, "console-password"], input=b"pass phrase 1234\n",
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
                       env=ctx.env())
    check(p.returncode == 0, "console-password: %r" % p.stderr)
    hsh = p.stdout.decode().strip().split("=", 1)[1]
    env = {"IDEMHOOK_CONSOLE_USER": "op", "IDEMHOOK_CONSOLE_PASSWORD_HASH": hsh}
    only = ("--provider", "stripe")
    out = ctx.out("check", *only, env=env)
    check("ok: console: Basic sign-in only over HTTPS or from loopback "
          "(IDEMHOOK_CONSOLE_TLS_PROXY unset)" in out, "unset: %s" % out)
    check("TLS_PROXY=1" not in out, "unset: %s" % out)
    out = ctx.out("check", *only, env=dict(env, IDEMHOOK_CONSOLE_TLS_PROXY="1"))
    check("note: console: IDEMHOOK_CONSOLE_TLS_PROXY=1: Basic credentials are taken from "
          "any address" in out and "reachable only through that proxy" in out
          and "Basic sign-in only over HTTPS" not in out, "=1: %s" % out)
    rc, out, _ = ctx.run("check", *only, env=dict(env, IDEMHOOK_CONSOLE_TLS_PROXY="yes"),
                         want=1)
    check(b"PROBLEM: console: IDEMHOOK_CONSOLE_TLS_PROXY must be 1" in out, "=yes: %r" % out)
    # Sign-in by the web server: only HSTS depends on the setting.
    senv = {"IDEMHOOK_CONSOLE_AUTH": "server", "IDEMHOOK_CONSOLE_KEY": "k" * 40,
            "IDEMHOOK_CONSOLE_TLS_PROXY": "1"}
    out = ctx.out("check", *only, env=senv)
    check("note: console: IDEMHOOK_CONSOLE_TLS_PROXY=1: every answer carries HSTS" in out,
          "server sign-in with =1: %s" % out)


def case_man(ctx):
    path = os.path.join(REPO, "handlers", "cli", "idemhook.1")
    with open(path) as f:
        text = f.read()
    missing = [c for c in COMMANDS if not any(l.startswith((".It Cm " + c, ".Ss " + c))
                                              for l in text.splitlines())]
    check(not missing, "man page lacks: %s" % missing)
    for sh in ("EXIT STATUS", "ENVIRONMENT", "FILES"):
        check(".Sh " + sh in text, "man page lacks " + sh)
    p = subprocess.run(["mandoc", "-T", "lint", "-W", "warning", path], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT) if _has("mandoc") else None
    if p is not None:
        check(p.returncode == 0, "mandoc -T lint: %s" % p.stdout.decode()[-800:])


def _has(prog):
    return any(os.access(os.path.join(d, prog), os.X_OK)
               for d in os.environ.get("PATH", "").split(os.pathsep))


def run_cases(tap, bindir, servers):
    srv = servers.add(Server(bindir, providers=["stripe", "github"], name="cli",
                             env={"IDEMHOOK_MODE": "worker"}))
    ctx = Ctx(bindir, srv)
    t = tap.run
    t("man page describes every subcommand, exit status, environment, files", case_man, ctx)
    if not t("lighttpd starts; store filled through the endpoints; work --once", lambda: (
            srv.start(), fill(ctx))):
        return
    t("--help for every subcommand; unknown options exit 2", case_help, ctx)
    t("one parser: --name=VALUE and --name VALUE for the global options "
      "and work; a missing value exits 2", case_one_parser, ctx)
    t("init twice is harmless", case_init_twice, ctx)
    t("list: table, filters, limit, since/until, bad values", case_list, ctx)
    t("list --json parses and matches the store", case_list_json, ctx)
    t("show: metadata, attempts, error, headers (signature masked unless "
      "--signatures), payload; --raw", case_show, ctx)
    t("verify: 0 for real events, 1 after tampering or another secret, Asaas cannot", case_verify, ctx)
    t("replay: dry-run, filter, then work --once processes it; by id", case_replay, ctx)
    t("stats --json and --prometheus match the store", case_stats, ctx)
    t("purge: dry-run, payloads, tombstone window, pending untouched, duplicate after", case_purge, ctx)
    t("purge in a loop during deliveries: nothing lost, purged redeliveries duplicate",
      case_purge_concurrent, ctx)
    if not harness.is_pg(srv.db):
        t("check: 644 store fails, 600 passes; secrets, docroot, config file, missing "
          "store", case_check, ctx)
        t("operator's command masks C0, C1, bidi controls and bad UTF-8 everywhere",
          case_hostile_text, ctx)
        t("show --json: event, attempts, headers; payload text, base64 or null",
          case_show_json, ctx)
    else:
        tap.diag("SQLite-only, not run against PostgreSQL: the store file's modes "
                 "(check 644), bad UTF-8 stored as text and show --json of it "
                 "(PostgreSQL text is valid UTF-8 by construction)")
    t("replay: dry run without --status, exact advice, --status done needs a filter, --",
      case_replay_defaults, ctx)
    t("purge keeps dead letters unless --include-dead", case_purge_dead, ctx)
    t("check: sticky directory, symlinks, owners, settings file 0640 or 0600, "
      "-sigfail file 0644 reported; -proc slots the same", case_check_hardening, ctx, tap)
    t("check: console's IDEMHOOK_CONSOLE_TLS_PROXY: ok unset, note at 1, problem "
      "otherwise", case_check_console_tls_proxy, ctx)
    t("no sanitizer reports from the receivers",
      lambda: check(not srv.sanitizer_reports(), srv.errorlog()[-2000:]))


if __name__ == "__main__":
    sys.exit(suite_main("cli", run_cases, prefix=True,
                        needs=("idemhook", "stripe.fcgi", "github.fcgi")))
