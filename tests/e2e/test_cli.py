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
import os
import sqlite3
import subprocess
import sys
import threading
import time
import uuid

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (HarnessError, SANITIZER_ENV, SANITIZER_MARKERS,  # noqa: E402
                     Server, Servers, Tap, bin_dir, check, check_eq,
                     install_signal_cleanup, sign_github, sign_stripe)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMMANDS = ("init", "work", "check", "list", "show", "verify", "replay",
            "purge", "stats")
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
        c = sqlite3.connect(self.srv.db, timeout=10)
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
    body = json.dumps({"ref": "refs/heads/main", "hook_id": int(hook),
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


def case_init_twice(ctx):
    before = ctx.srv.count()
    for _ in range(2):
        out = ctx.out("init")
        check("ready" in out, "init: %r" % out)
    check_eq(ctx.srv.count(), before, "rows after init twice")
    with ctx.db() as c:
        check_eq(c.execute("PRAGMA user_version").fetchone()[0] > 0, True, "schema version")


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
        c.execute("UPDATE events SET payload = CAST(replace(CAST(payload AS TEXT), '2000', '9000')"
                  " AS BLOB) WHERE provider = ? AND event_id = ?", (p, e))
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
    missing = os.path.join(ctx.srv.tmp, "nodir", "none.db")
    rc, out, _ = ctx.run("check", *only, env={"IDEMHOOK_DB": missing}, want=1)
    check(b"idemhook init" in out, "missing store: %r" % out)
    check(not os.path.exists(missing), "check created the store")


def case_man(ctx):
    path = os.path.join(REPO, "docs", "idemhook.1")
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


def main():
    tap = Tap("cli: ")
    try:
        bindir = bin_dir()
    except HarnessError as e:
        tap.not_ok("setup", e)
        return tap.finish()
    for prog in ("idemhook", "stripe.fcgi", "github.fcgi"):
        if not os.path.exists(os.path.join(bindir, prog)):
            tap.not_ok("setup", "no %s in %s" % (prog, bindir))
            return tap.finish()
    servers = Servers()
    install_signal_cleanup(servers)
    with servers:
        srv = servers.add(Server(bindir, providers=["stripe", "github"], name="cli",
                                 env={"IDEMHOOK_MODE": "worker"}))
        ctx = Ctx(bindir, srv)
        t = tap.run
        t("man page describes every subcommand, exit status, environment, files", case_man, ctx)
        if not t("lighttpd starts; store filled through the endpoints; work --once", lambda: (
                srv.start(), fill(ctx))):
            return tap.finish()
        t("--help for every subcommand; unknown options exit 2", case_help, ctx)
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
        t("check: 644 store fails, 600 passes; secrets, docroot, config file, missing store",
          case_check, ctx)
        t("no sanitizer reports from the receivers",
          lambda: check(not srv.sanitizer_reports(), srv.errorlog()[-2000:]))
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
