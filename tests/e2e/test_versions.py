#!/usr/bin/env python3
"""End-to-end test of event versions (issue 30, items 1 to 3).

Usage: test_versions.py BINDIR   (or IH_BIN=BINDIR test_versions.py)
SQLite, or PostgreSQL with IH_DB_BACKEND=pg.

Through lighttpd to the receivers, with IDEMHOOK_STRIPE_API_VERSIONS
naming the new version only and both endpoints' secrets configured
(IDEMHOOK_STRIPE_SECRET for the old endpoint, _SECRET_2 for the new):
1. Each event's version is recorded (Stripe's signed api_version, Shopify's
   X-Shopify-API-Version header) and shown by idemhook show and list --json.
2. An event of the expected version is processed; one of another version
   is answered 200, recorded as held, never processed by the receiver nor
   by idemhook work, which raises the alert with reason held; idemhook
   replay then processes it once.
3. The upgrade: one event id in both versions, from both endpoints, in
   both orders, is one event, processed once, in the expected version
   (the held old version is replaced when the new one arrives later; the
   old one arriving later is a duplicate).  Shopify's unsigned header
   labels and holds, but a header naming the expected version never
   releases a held event.
4. idemhook stats (table, --json, --prometheus) counts them by version.
"""

import json
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (SANITIZER_ENV, Server, check, check_eq, parallel,  # noqa: E402
                     sign_stripe, suite_main)
import test_shopify as tsh  # noqa: E402

OLD = "2024-06-20"
NEW = "2025-03-31.basil"
OLD_SECRET = "whsec_" + os.urandom(16).hex()
NEW_SECRET = "whsec_" + os.urandom(16).hex()


def idemhook(srv, bindir, *args, env=None, ok=True):
    e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IDEMHOOK_DB": srv.db}
    e.update({k: os.environ[k] for k in SANITIZER_ENV if k in os.environ})
    e.update(srv.env)
    e.update(env or {})
    p = subprocess.run([os.path.join(bindir, "idemhook")] + list(args), env=e,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    if ok:
        check(p.returncode == 0 and "Sanitizer" not in err,
              "idemhook %s exited %d: %s" % (" ".join(args), p.returncode, err[-600:]))
    return out


def body(eid, version):
    """A Stripe event rendered in version (one line: the action appends it)."""
    return json.dumps({"id": eid, "object": "event", "api_version": version,
                       "type": "invoice.paid", "created": int(time.time()),
                       "data": {"object": {"id": "in_" + eid, "object": "invoice",
                                           "status": "paid",
                                           "shape": "v" + version}}},
                      separators=(",", ":")).encode()


def post(srv, eid, version, secret):
    b = body(eid, version)
    return srv.post(srv.url("stripe"), b, {"Stripe-Signature": sign_stripe(secret, b),
                                           "Content-Type": "application/json"})


def runs(srv):
    """The payloads the action was given, in order."""
    try:
        with open(os.path.join(srv.tmp, "runs")) as f:
            return [json.loads(l) for l in f.read().splitlines() if l.strip()]
    except FileNotFoundError:
        return []


def runs_of(srv, eid):
    return [r["api_version"] for r in runs(srv) if r["id"] == eid]


def settle(srv, bindir, eid, want):
    """Processes what is due until eid has status want (or times out)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        rows = srv.rows("stripe", eid)
        if rows and rows[0]["status"] == want:
            return rows[0]
        idemhook(srv, bindir, "work", "--once")
        time.sleep(0.1)
    rows = srv.rows("stripe", eid)
    check(False, "%s: status %r, wanted %s" % (eid, rows and rows[0]["status"], want))


def accepted(r, what):
    check_eq(r.status, 200, what + ": HTTP status")
    check_eq(r.json().get("status"), "accepted", what + ": answer")


def case_held_then_replayed(srv, bindir):
    """Expected version processed; the other answered 200, held, listed,
    shown, never processed, alerted; replay processes it once."""
    e_new, e_old = "evt_vnew_" + os.urandom(4).hex(), "evt_vold_" + os.urandom(4).hex()
    accepted(post(srv, e_new, NEW, NEW_SECRET), "expected version")
    accepted(post(srv, e_old, OLD, OLD_SECRET), "other version")
    row = settle(srv, bindir, e_new, "done")
    check_eq(row["api_version"], NEW, "version recorded")
    idemhook(srv, bindir, "work", "--once")
    row = srv.rows("stripe", e_old)[0]
    check_eq(row["status"], "held", "the other version is held")
    check_eq(row["api_version"], OLD, "its version recorded")
    check_eq(row["attempts"], 0, "never attempted")
    check_eq(runs_of(srv, e_new), [NEW], "expected one processed once")
    check_eq(runs_of(srv, e_old), [], "held one not processed")
    listed = json.loads(idemhook(srv, bindir, "list", "--status", "held", "--json"))
    check_eq([(x["event_id"], x["api_version"]) for x in listed], [(e_old, OLD)],
             "list --status held --json")
    shown = idemhook(srv, bindir, "show", "stripe", e_old)
    check("api_version" in shown and OLD in shown, "show names the version: %r" % shown[:300])
    one = json.loads(idemhook(srv, bindir, "show", "--json", "stripe", e_new))
    check_eq(one["event"]["api_version"], NEW, "show --json")
    log = [l for l in srv.log_lines("stripe") if e_old in l]
    check(log and "status=200" in log[0] and "held" in log[0], "log line: %r" % log)

    alert = os.path.join(srv.tmp, "alert.txt")
    act = {"IDEMHOOK_ALERT_ACTION":
           '{ echo "$IDEMHOOK_ALERT_REASON $IDEMHOOK_PROVIDER"; cat; } >> %s' % alert}
    idemhook(srv, bindir, "work", "--once", env=act)
    with open(alert) as f:
        text = f.read()
    check(text.startswith("held stripe\n") and "holds 1 events" in text
          and "IDEMHOOK_STRIPE_API_VERSIONS" in text, "alert: %r" % text)

    idemhook(srv, bindir, "replay", "stripe", e_old)
    row = settle(srv, bindir, e_old, "done")
    check_eq(runs_of(srv, e_old), [OLD], "replayed: processed once, in its version")
    idemhook(srv, bindir, "work", "--once")
    check_eq(runs_of(srv, e_old), [OLD], "and only once")


def case_upgrade(srv, bindir, old_first):
    """One id from both endpoints, in both versions: one event, processed
    once, in the expected version, whichever arrives first."""
    eid = "evt_up_%s_%s" % ("old1st" if old_first else "new1st", os.urandom(4).hex())
    if old_first:
        accepted(post(srv, eid, OLD, OLD_SECRET), "old endpoint first")
        check_eq(srv.rows("stripe", eid)[0]["status"], "held", "held meanwhile")
        accepted(post(srv, eid, NEW, NEW_SECRET), "new endpoint replaces it")
    else:
        accepted(post(srv, eid, NEW, NEW_SECRET), "new endpoint first")
        r = post(srv, eid, OLD, OLD_SECRET)
        check_eq((r.status, r.json().get("status")), (200, "duplicate"), "old one after")
    row = settle(srv, bindir, eid, "done")
    rows = srv.rows("stripe", eid)
    check_eq(len(rows), 1, "one event")
    check_eq(row["api_version"], NEW, "the expected version kept")
    check_eq(json.loads(bytes(row["payload"]))["api_version"], NEW, "its payload kept")
    # Redeliveries of either, from either endpoint, change nothing.
    for v, s in ((OLD, OLD_SECRET), (NEW, NEW_SECRET)):
        r = post(srv, eid, v, s)
        check_eq((r.status, r.json().get("status")), (200, "duplicate"), "redelivery " + v)
    idemhook(srv, bindir, "work", "--once")
    check_eq(runs_of(srv, eid), [NEW], "processed once, in the expected version")
    check_eq(srv.rows("stripe", eid)[0]["status"], "done", "still done")


def case_upgrade_at_once(srv, bindir):
    """Both endpoints' deliveries of one id at the same moment (as Stripe
    sends them), for several ids: each is still one event, processed once,
    in the expected version (on PostgreSQL the insert that waited on a
    held row sees it once committed, and replaces it)."""
    ids = ["evt_race%02d_%s" % (i, os.urandom(4).hex()) for i in range(8)]
    for eid in ids:
        res = parallel(2, lambda k: post(srv, eid, (OLD, NEW)[k], (OLD_SECRET, NEW_SECRET)[k]))
        for r in res:
            check(not isinstance(r, Exception) and r.status == 200, "delivery: %r" % (r,))
    for eid in ids:
        row = settle(srv, bindir, eid, "done")
        check_eq(row["api_version"], NEW, "%s: the expected version kept" % eid)
    idemhook(srv, bindir, "work", "--once")
    for eid in ids:
        check_eq(runs_of(srv, eid), [NEW], "%s: processed once, in the new version" % eid)


def case_shopify(srv, bindir):
    """Shopify's header labels and holds; naming the expected version on
    the same delivery never releases a held event (it is unsigned)."""
    wid = tsh.SPEC.new_id("v")
    b = tsh.SPEC.body(wid, "orders/create")
    h = tsh.SPEC.headers(srv, b, wid, "orders/create")
    h["X-Shopify-API-Version"] = "2025-04"
    r = tsh.SPEC.post(srv, b, h)
    check_eq((r.status, r.json().get("status")), (200, "accepted"), "old version")
    row = srv.rows("shopify", wid)[0]
    check_eq((row["status"], row["api_version"]), ("held", "2025-04"), "held, labelled")
    h["X-Shopify-API-Version"] = "2025-07"
    r = tsh.SPEC.post(srv, b, h)
    check_eq((r.status, r.json().get("status")), (200, "duplicate"), "relabelled redelivery")
    row = srv.rows("shopify", wid)[0]
    check_eq((row["status"], row["api_version"]), ("held", "2025-04"), "still held")
    wid2 = tsh.SPEC.new_id("v")
    b2 = tsh.SPEC.body(wid2, "orders/create")
    r = tsh.SPEC.post(srv, b2, tsh.SPEC.headers(srv, b2, wid2, "orders/create"))
    check_eq(r.status, 200, "expected version")
    deadline = time.monotonic() + 30
    while srv.rows("shopify", wid2)[0]["status"] != "done" and time.monotonic() < deadline:
        idemhook(srv, bindir, "work", "--once")
        time.sleep(0.1)
    row = srv.rows("shopify", wid2)[0]
    check_eq((row["status"], row["api_version"]), ("done", tsh.API_VERSION), "processed")


def case_stats(srv, bindir):
    """stats counts the window's events by version, with the held ones,
    as a table, in JSON and as Prometheus metrics."""
    st = json.loads(idemhook(srv, bindir, "stats", "--json"))
    got = {(v["provider"], v["api_version"]): (v["events"], v["held"])
           for v in st["versions"]}
    check_eq(got.get(("stripe", NEW)), (11, 0), "stripe, new version")
    check_eq(got.get(("stripe", OLD)), (1, 0), "stripe, old version (replayed)")
    check_eq(got.get(("shopify", "2025-04")), (1, 1), "shopify, held version")
    check_eq(got.get(("shopify", tsh.API_VERSION)), (1, 0), "shopify, expected version")
    prom = idemhook(srv, bindir, "stats", "--prometheus")
    for line in ('idemhook_events_by_version_total{provider="stripe",api_version="%s"} 11'
                 % NEW,
                 'idemhook_held_events{provider="shopify",api_version="2025-04"} 1'):
        check(line in prom.splitlines(), "metric %r in %r" % (line, prom[-800:]))
    table = idemhook(srv, bindir, "stats")
    check("by API version" in table and "2025-04" in table, "table: %r" % table[-400:])


def case_bulk_replay(srv, bindir):
    """The README's replay of every held event of a provider."""
    held = [r for r in srv.rows("shopify") if r["status"] == "held"]
    check_eq(len(held), 1, "one held shopify event")
    out = idemhook(srv, bindir, "replay", "--provider", "shopify", "--status", "held")
    check("1" in out, "replay says what it did: %r" % out)
    deadline = time.monotonic() + 30
    while srv.rows("shopify", held[0]["event_id"])[0]["status"] != "done" \
            and time.monotonic() < deadline:
        idemhook(srv, bindir, "work", "--once")
        time.sleep(0.1)
    row = srv.rows("shopify", held[0]["event_id"])[0]
    check_eq((row["status"], row["api_version"]), ("done", "2025-04"), "processed")


def case_unset(bindir, servers):
    """Without the setting every version is processed as before, and the
    version is still recorded."""
    srv = servers.add(Server(bindir, providers=["stripe"], name="versions-unset",
                             secrets={"stripe": OLD_SECRET}))
    srv.start()
    eid = "evt_unset_" + os.urandom(4).hex()
    accepted(post(srv, eid, OLD, OLD_SECRET), "any version")
    row = settle(srv, bindir, eid, "done")
    check_eq(row["api_version"], OLD, "version recorded")


def cases(tap, bindir, servers):
    srv = Server(bindir, providers=["stripe", "shopify"], name="versions",
                 secrets={"stripe": OLD_SECRET},
                 provider_env={"stripe": {"IDEMHOOK_STRIPE_SECRET_2": NEW_SECRET}})
    srv.env.update({
        "IDEMHOOK_STRIPE_API_VERSIONS": NEW + ", 2025-01-27.acacia",
        "IDEMHOOK_SHOPIFY_API_VERSIONS": tsh.API_VERSION,
        # One write per run (O_APPEND), so that concurrent runs never interleave.
        "IDEMHOOK_STRIPE_ACTION": "* /bin/sh -c 'x=$(cat); printf \"%%s\\n\" \"$x\" >> %s/runs'"
                                  % srv.tmp,
    })
    servers.add(srv)
    if not tap.run("lighttpd starts (stripe expects %s; two endpoint secrets)" % NEW,
                   srv.start):
        return
    tap.run("stripe: expected version processed, the other held, alerted, replayed",
            case_held_then_replayed, srv, bindir)
    tap.run("stripe upgrade: old version first (held), then the new one replaces it",
            case_upgrade, srv, bindir, True)
    tap.run("stripe upgrade: new version first, the old one a duplicate",
            case_upgrade, srv, bindir, False)
    tap.run("stripe upgrade: both versions of an id at the same moment",
            case_upgrade_at_once, srv, bindir)
    tap.run("shopify: header version recorded and held, never released by a header",
            case_shopify, srv, bindir)
    tap.run("stats and metrics count events by version, with the held ones",
            case_stats, srv, bindir)
    tap.run("replay --provider shopify --status held processes them", case_bulk_replay,
            srv, bindir)
    tap.run("no setting: every version processed, still recorded", case_unset,
            bindir, servers)
    tap.run("no sanitizer reports", lambda: check(
        not srv.sanitizer_reports(), "sanitizer: %r" % srv.sanitizer_reports()[:2]))


if __name__ == "__main__":
    sys.exit(suite_main("versions", cases))
