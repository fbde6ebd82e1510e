#!/usr/bin/env python3
"""End-to-end tests of the objects table (issue 19) through lighttpd.

Usage: test_objects.py BINDIR   (or IH_BIN=BINDIR test_objects.py)
Prints 'ok - ...' / 'not ok - ...: reason' lines; exits 1 if any failed.

Each provider's lifecycle of one object (a Stripe subscription, a Shopify
order, an Asaas payment, a GitHub issue, a Standard Webhooks invoice) is
delivered in every order of its four events, and concurrently; every run
must end in the row that in-order delivery leaves.  Redeliveries change
nothing, an older event is recorded as stale and leaves the row, ties are
broken as the README documents, purge keeps the rows, the views are read
through the sqlite3 client (read-only) while deliveries are recorded, and
the idemhook objects / object commands show state and verdicts.  Runs on
PostgreSQL too (IH_DB_BACKEND=pg).
"""

import contextlib
import itertools
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import uuid

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from harness import (ASAAS_TOKEN_HEADER, Server, Servers, Tap, bin_dir,  # noqa: E402
                     check, check_eq, install_signal_cleanup, parallel,
                     sign_github, sign_shopify, sign_standard, sign_stripe)

DONE_TIMEOUT = 60.0
T0 = 1714560000  # 2024-05-01T10:40:00Z


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def dumps(obj):
    return json.dumps(obj, indent=2).encode("utf-8")


# ------------------------------------------------------------ providers
#
# Each provider: lifecycle(oid, tag) -> [(event_id, body, headers_fn)], in
# order, and kind/object id as the store keys them.

class Provider:
    name = None
    kind = None

    def sid(self, eid):
        """The event id as the store keys it."""
        return eid

    def post(self, srv, ev):
        eid, body, extra = ev
        return srv.post(srv.url(self.name), body, self.headers(srv, eid, body, extra))


class Stripe(Provider):
    name = "stripe"
    kind = "subscription"

    def event(self, eid, etype, oid, status, t, extra=None):
        obj = {"id": oid, "object": "subscription", "status": status,
               "customer": "cus_9s6XKzkNRiz8i3", "items": {"object": "list", "data": []}}
        obj.update(extra or {})
        body = dumps({"id": eid, "object": "event", "api_version": "2024-06-20",
                      "created": t, "type": etype, "livemode": False,
                      "data": {"object": obj}})
        return (eid, body, etype)

    def lifecycle(self, oid, tag):
        p = "evt_%s_%s_" % (tag, oid[-8:])
        return [
            self.event(p + "1", "customer.subscription.created", oid, "incomplete", T0),
            self.event(p + "2", "customer.subscription.updated", oid, "past_due", T0 + 60),
            self.event(p + "3", "customer.subscription.updated", oid, "active", T0 + 120),
            self.event(p + "4", "customer.subscription.deleted", oid, "canceled", T0 + 180),
        ]

    def new_oid(self):
        return "sub_" + os.urandom(8).hex()

    def headers(self, srv, eid, body, extra):
        return {"Stripe-Signature": sign_stripe(srv.secrets["stripe"], body),
                "User-Agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)"}


class Shopify(Provider):
    name = "shopify"
    kind = "orders"
    # orders/delete's body is only {"id": ...}: its source time is when it
    # was received, never the unsigned X-Shopify-Triggered-At.
    received_time_last = True

    def event(self, eid, topic, oid, status, t, delete=False):
        if delete:
            body = dumps({"id": oid})
        else:
            body = dumps({"id": oid, "email": "jon@example.com", "name": "#1001",
                          "financial_status": status, "total_price": "10.00",
                          "updated_at": iso(t).replace("Z", "-00:00")})
        return (eid, body, (topic, iso(t)))

    def lifecycle(self, oid, tag):
        p = "wh-%s-%d-" % (tag, oid)
        return [
            self.event(p + "1", "orders/create", oid, "pending", T0),
            self.event(p + "2", "orders/updated", oid, "paid", T0 + 60),
            self.event(p + "3", "orders/updated", oid, "refunded", T0 + 120),
            self.event(p + "4", "orders/delete", oid, None, T0 + 180, delete=True),
        ]

    def new_oid(self):
        return int.from_bytes(os.urandom(6), "big")

    def headers(self, srv, eid, body, extra):
        topic, triggered = extra
        return {"X-Shopify-Topic": topic, "X-Shopify-Webhook-Id": eid,
                "X-Shopify-Event-Id": str(uuid.uuid4()),
                "X-Shopify-Shop-Domain": "shop.myshopify.com",
                "X-Shopify-API-Version": "2025-07",
                "X-Shopify-Triggered-At": triggered,
                "X-Shopify-Hmac-Sha256": sign_shopify(srv.secrets["shopify"], body),
                "User-Agent": "Shopify-Captain-Hook"}


class Asaas(Provider):
    name = "asaas"
    kind = "payment"

    def event(self, eid, etype, oid, status, t):
        body = dumps({"id": eid, "event": etype,
                      "dateCreated": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t)),
                      "payment": {"object": "payment", "id": oid, "value": 100.0,
                                  "status": status, "billingType": "PIX"}})
        return (eid, body, None)

    def lifecycle(self, oid, tag):
        p = "evt_%s_%s&" % (tag, oid[-8:])
        return [
            self.event(p + "1", "PAYMENT_CREATED", oid, "PENDING", T0),
            self.event(p + "2", "PAYMENT_CONFIRMED", oid, "CONFIRMED", T0 + 60),
            self.event(p + "3", "PAYMENT_RECEIVED", oid, "RECEIVED", T0 + 120),
            self.event(p + "4", "PAYMENT_REFUNDED", oid, "REFUNDED", T0 + 180),
        ]

    def new_oid(self):
        return "pay_" + os.urandom(8).hex()

    def headers(self, srv, eid, body, extra):
        return {ASAAS_TOKEN_HEADER: srv.secrets["asaas"], "User-Agent": "Java/1.8.0_292"}


class Github(Provider):
    name = "github"
    kind = "issue"

    def event(self, eid, action, oid, state, t):
        body = dumps({"action": action,
                      "issue": {"id": oid, "number": 1347, "title": "Found a bug",
                                "state": state, "updated_at": iso(t)},
                      "repository": {"id": 1296269, "full_name": "octocat/Hello-World"},
                      "sender": {"login": "octocat", "id": 1}})
        return (eid, body, "issues")

    def lifecycle(self, oid, tag):
        p = "%08x-%s-" % (oid & 0xffffffff, tag)
        return [
            self.event(p + "1", "opened", oid, "open", T0),
            self.event(p + "2", "edited", oid, "open", T0 + 60),
            self.event(p + "3", "closed", oid, "closed", T0 + 120),
            self.event(p + "4", "reopened", oid, "open", T0 + 180),
        ]

    def new_oid(self):
        return int.from_bytes(os.urandom(6), "big")

    def sid(self, eid):
        return "292430182:" + eid

    def headers(self, srv, eid, body, extra):
        return {"X-GitHub-Event": extra, "X-GitHub-Delivery": eid,
                "X-GitHub-Hook-ID": "292430182",
                "X-Hub-Signature-256": sign_github(srv.secrets["github"], body),
                "User-Agent": "GitHub-Hookshot/044aadd"}


class Standard(Provider):
    name = "standard"
    kind = "invoice"

    def event(self, eid, etype, oid, status, t):
        body = dumps({"type": etype, "timestamp": iso(t).replace("Z", ".000000Z"),
                      "data": {"id": oid, "status": status, "amount": 1000}})
        return (eid, body, None)

    def lifecycle(self, oid, tag):
        p = "msg_%s_%s_" % (tag, oid[-8:])
        return [
            self.event(p + "1", "invoice.created", oid, "draft", T0),
            self.event(p + "2", "invoice.updated", oid, "open", T0 + 60),
            self.event(p + "3", "invoice.paid", oid, "paid", T0 + 120),
            self.event(p + "4", "invoice.deleted", oid, "void", T0 + 180),
        ]

    def new_oid(self):
        return "inv_" + os.urandom(8).hex()

    def headers(self, srv, eid, body, extra):
        # The attempt's time: never the object's source time.
        t = int(time.time())
        return {"webhook-id": eid, "webhook-timestamp": str(t),
                "webhook-signature": sign_standard(srv.secrets["standard"], eid, t, body),
                "User-Agent": "Svix-Webhooks/1.0"}


PROVIDERS = [Stripe(), Shopify(), Asaas(), Github(), Standard()]
# The lifecycle's expected end, in order: which event (1-based) set the row.
EXPECTED = {
    "stripe": (4, "canceled", 1),
    "shopify": (4, "deleted", 1),
    "asaas": (4, "REFUNDED", 0),
    "github": (4, "open", 0),
    "standard": (4, "void", 1),
}


# ------------------------------------------------------------ store access

def objects_rows(srv, provider, oid=None):
    q = ("SELECT provider, kind, object_id, status, object_json, deleted, source_at,"
         " event_id, created_at, changed_at FROM idemhook_objects WHERE provider = ?")
    args = [provider]
    if oid is not None:
        q += " AND object_id = ?"
        args.append(str(oid))
    with contextlib.closing(srv.connect_ro()) as c:
        cols = ["provider", "kind", "object_id", "status", "object_json", "deleted",
                "source_at", "event_id", "created_at", "changed_at"]
        return [dict(zip(cols, r)) for r in c.execute(q, args).fetchall()]


def history(srv, provider, kind, oid):
    with contextlib.closing(srv.connect_ro()) as c:
        return {r[0]: r[1] for r in c.execute(
            "SELECT event_id, verdict FROM idemhook_object_events"
            " WHERE provider = ? AND kind = ? AND object_id = ?",
            (provider, kind, str(oid))).fetchall()}


BINDIR = None


def nudge(srv, provider):
    """Runs the documented safety net, idemhook work --once, for events a
    receiver recorded unclaimed while its processing thread was finishing
    (they wait for the provider's next request or the cron job)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IDEMHOOK_DB": srv.db}
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
        if k in os.environ:
            env[k] = os.environ[k]
    subprocess.run([os.path.join(BINDIR, "idemhook"), "work", "--once",
                    "--provider", provider], env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=60)


def wait_done(srv, provider, eids, timeout=DONE_TIMEOUT):
    eids = set(eids)
    start = time.monotonic()
    deadline = start + timeout
    left = eids
    nudged = False
    while time.monotonic() < deadline:
        rows = srv.rows(provider)
        done = {r["event_id"] for r in rows if r["status"] == "done"}
        left = eids - done
        if not left:
            return
        waiting = [r for r in rows if r["event_id"] in left and r["status"] == "received"]
        if not nudged and waiting and time.monotonic() - start > 20:
            print("# %s: %d event(s) still received after 20 s: idemhook work --once"
                  % (provider, len(waiting)))
            nudge(srv, provider)
            nudged = True
        time.sleep(0.1)
    rows = {r["event_id"]: r for r in srv.rows(provider)}
    check(False, "%s: %d event(s) not done within %.0fs: %r"
          % (provider, len(left), timeout,
             [(e, rows[e]["status"], rows[e]["attempts"], rows[e]["last_error"])
              if e in rows else (e, "missing") for e in sorted(left)[:4]]))


def one_object(srv, p, oid):
    rows = objects_rows(srv, p.name, oid)
    check(len(rows) == 1, "%s: expected one object row for %s, found %d"
          % (p.name, oid, len(rows)))
    return rows[0]


def shape(p, row, evs):
    """What must not depend on delivery order: the row, with the event that
    set it as its index in the lifecycle."""
    idx = [p.sid(e[0]) for e in evs].index(row["event_id"]) + 1
    at = row["source_at"]
    if getattr(p, "received_time_last", False) and idx == len(evs):
        at = None
    return (row["kind"], row["status"], int(row["deleted"]), at, idx,
            row["object_json"])


def deliver_all(srv, p, evs):
    for ev in evs:
        r = p.post(srv, ev)
        check(r.status == 200, "%s %s: HTTP %d %r" % (p.name, ev[0], r.status, r.body[:200]))


# ------------------------------------------------------------ cases

def case_orders(p, srv):
    """Every order of the four events, and all four at once, ends in the
    row in-order delivery leaves; redeliveries change nothing."""
    oid = p.new_oid()
    evs = p.lifecycle(oid, "inorder")
    t0 = int(time.time() * 1000) - 2000
    deliver_all(srv, p, evs)
    wait_done(srv, p.name, [p.sid(e[0]) for e in evs])
    t1 = int(time.time() * 1000) + 2000
    want = shape(p, one_object(srv, p, oid), evs)
    idx, status, deleted = EXPECTED[p.name]
    check_eq((want[4], want[1], want[2]), (idx, status, deleted),
             "%s in order: (setter, status, deleted)" % p.name)
    check_eq(want[0], p.kind, "%s kind" % p.name)
    # The provider's time for the last state (Standard Webhooks: the
    # payload's timestamp, not the webhook-timestamp header, which is now).
    # Shopify's delete has none in its body: the time it was received,
    # never its unsigned X-Shopify-Triggered-At.
    if getattr(p, "received_time_last", False):
        at = int(one_object(srv, p, oid)["source_at"])
        check(t0 <= at <= t1, "%s source time %d, not the delete's receipt (%d..%d)"
              % (p.name, at, t0, t1))
    else:
        check_eq(want[3], (T0 + 180) * 1000, "%s source time" % p.name)
    check(json.loads(want[5]) is not None, "object_json is JSON")
    hist = history(srv, p.name, p.kind, oid)
    check_eq(sorted(hist.values()), ["applied"] * 4, "%s in-order verdicts" % p.name)
    before = one_object(srv, p, oid)
    # Redeliveries: duplicates, the row is untouched (changed_at too).
    for ev in evs:
        r = p.post(srv, ev)
        check(r.status == 200 and b"duplicate" in r.body,
              "%s redelivery: %d %r" % (p.name, r.status, r.body[:100]))
    check_eq(one_object(srv, p, oid), before, "%s row after redeliveries" % p.name)
    n = 0
    for perm in itertools.permutations(range(4)):
        if perm == (0, 1, 2, 3):
            continue
        o2 = p.new_oid()
        evs2 = p.lifecycle(o2, "p%d" % n)
        deliver_all(srv, p, [evs2[i] for i in perm])
        wait_done(srv, p.name, [p.sid(e[0]) for e in evs2])
        got = shape(p, one_object(srv, p, o2), evs2)
        got = got[:5] + (got[5].replace(str(o2), str(oid)),)
        check_eq(got, want, "%s order %r" % (p.name, perm))
        n += 1
    for round_ in range(3):
        o3 = p.new_oid()
        evs3 = p.lifecycle(o3, "c%d" % round_)
        res = parallel(4, lambda i: p.post(srv, evs3[i]))
        for r in res:
            check(not isinstance(r, Exception) and r.status == 200,
                  "%s concurrent: %r" % (p.name, r))
        wait_done(srv, p.name, [p.sid(e[0]) for e in evs3])
        got = shape(p, one_object(srv, p, o3), evs3)
        got = got[:5] + (got[5].replace(str(o3), str(oid)),)
        check_eq(got, want, "%s concurrent round %d" % (p.name, round_))


def case_stale(p, srv):
    """A newer event first, then an older one: the row stays, the older
    event is done and its history says stale."""
    oid = p.new_oid()
    evs = p.lifecycle(oid, "stale")
    deliver_all(srv, p, [evs[2], evs[0]])
    new, older = p.sid(evs[2][0]), p.sid(evs[0][0])
    wait_done(srv, p.name, [new, older])
    row = one_object(srv, p, oid)
    check_eq(row["event_id"], new, "%s: row set by the newer event" % p.name)
    hist = history(srv, p.name, p.kind, oid)
    check_eq(hist, {new: "applied", older: "stale"}, "%s history" % p.name)


def case_stripe_ties(srv):
    """Stripe's created has whole seconds: a tie is broken by the status's
    rank (terminal above the rest), then by event id; never by arrival."""
    p = PROVIDERS[0]
    for order in ((0, 1), (1, 0)):
        oid = p.new_oid()
        a = p.event("evt_tieA_%s" % oid[-8:], "customer.subscription.updated", oid,
                    "canceled", T0)
        b = p.event("evt_tieB_%s" % oid[-8:], "customer.subscription.updated", oid,
                    "active", T0)
        pair = (a, b)
        deliver_all(srv, p, [pair[i] for i in order])
        wait_done(srv, p.name, [a[0], b[0]])
        row = one_object(srv, p, oid)
        check_eq((row["status"], row["event_id"]), ("canceled", a[0]),
                 "terminal wins a tie, order %r" % (order,))
        hist = history(srv, p.name, p.kind, oid)
        check_eq(hist[b[0]], "tied" if order == (0, 1) else "applied",
                 "verdict of the open status, order %r" % (order,))
        # Same time and rank: the greater event id wins, whatever the order.
        oid = p.new_oid()
        a = p.event("evt_tie1_%s" % oid[-8:], "customer.subscription.updated", oid,
                    "past_due", T0)
        b = p.event("evt_tie2_%s" % oid[-8:], "customer.subscription.updated", oid,
                    "active", T0)
        pair = (a, b)
        deliver_all(srv, p, [pair[i] for i in order])
        wait_done(srv, p.name, [a[0], b[0]])
        row = one_object(srv, p, oid)
        check_eq((row["status"], row["event_id"]), ("active", b[0]),
                 "equal ranks: greater id wins, order %r" % (order,))


def case_cli(ctx, srv):
    """idemhook objects / object: state and history with verdicts."""
    p = PROVIDERS[0]
    oid = p.new_oid()
    evs = p.lifecycle(oid, "cli")
    deliver_all(srv, p, [evs[3], evs[1]])
    wait_done(srv, p.name, [evs[3][0], evs[1][0]])
    out = ctx.out("objects", "--provider", "stripe", "--kind", "subscription",
                  "--status", "canceled", "--json")
    rows = json.loads(out)
    mine = [r for r in rows if r["object_id"] == oid]
    check(len(mine) == 1, "objects --json lacks %s: %r" % (oid, out[:300]))
    check_eq((mine[0]["status"], mine[0]["deleted"], mine[0]["event_id"]),
             ("canceled", True, evs[3][0]), "objects --json row")
    check_eq(mine[0]["object"]["id"], oid, "objects --json object")
    out = ctx.out("objects", "--provider", "stripe")
    check(oid in out and "canceled" in out and "PROVIDER" in out, "objects table: %r"
          % out[:300])
    out = ctx.out("objects", "--provider", "stripe", "--status", "no-such", "--json")
    check_eq(json.loads(out), [], "objects filtered to nothing")
    out = ctx.out("object", "stripe", "subscription", oid)
    check("canceled" in out and "stale" in out and "applied" in out
          and evs[1][0] in out, "object: %r" % out[:600])
    j = json.loads(ctx.out("object", "stripe", "subscription", oid, "--json"))
    check_eq([(h["event_id"], h["verdict"]) for h in j["history"]],
             [(evs[3][0], "applied"), (evs[1][0], "stale")], "object --json history")
    rc, _, err = ctx.run("object", "stripe", "subscription", "sub_nope")
    check(rc == 1 and "no stripe subscription" in err, "missing object: %d %r" % (rc, err))
    ctx.run("objects", "--since", "soon", want=2)
    ctx.run("object", "stripe", want=2)
    # A hostile status is masked on a terminal.
    o2 = p.new_oid()
    ev = p.event("evt_esc_%s" % o2[-8:], "customer.subscription.updated", o2,
                 "\x1b]0;pwned\x07", T0)
    deliver_all(srv, p, [ev])
    wait_done(srv, p.name, [ev[0]])
    out = ctx.out("object", "stripe", "subscription", o2)
    check("\x1b" not in out and "\x07" not in out, "control bytes reached the terminal")
    # Raw DEL, C1 and a bidirectional override inside the object's JSON
    # (valid JSON) come out escaped, as the same strings.
    o3 = p.new_oid()
    note = "a\u202eb\x7fc\u0085d"
    eid = "evt_raw_%s" % o3[-8:]
    body = json.dumps({"id": eid, "object": "event", "created": T0,
                       "type": "customer.subscription.updated",
                       "data": {"object": {"id": o3, "object": "subscription",
                                           "status": "active", "note": note}}},
                      ensure_ascii=False).encode("utf-8")
    check("\u202e".encode("utf-8") in body, "the body holds the raw character")
    deliver_all(srv, p, [(eid, body, None)])
    wait_done(srv, p.name, [eid])
    out = ctx.out("objects", "--provider", "stripe", "--json")
    for ch in ("\u202e", "\x7f", "\u0085"):
        check(ch not in out, "objects --json wrote %r raw" % ch)
    mine = [r for r in json.loads(out) if r["object_id"] == o3]
    check_eq(mine[0]["object"]["note"], note, "the escaped string")


def case_purge_keeps(ctx, srv):
    """Purging events (payloads and rows) leaves objects and history."""
    p = PROVIDERS[0]
    oid = p.new_oid()
    evs = p.lifecycle(oid, "purge")
    deliver_all(srv, p, evs)
    wait_done(srv, p.name, [p.sid(e[0]) for e in evs])
    before = one_object(srv, p, oid)
    old = int(time.time() * 1000) - 400 * 86400 * 1000
    with contextlib.closing(harness.db_connect(srv.db, timeout=10)) as c:
        for e in evs:
            c.execute("UPDATE events SET received_at = ?, last_seen_at = ?"
                      " WHERE provider = 'stripe' AND event_id = ?", (old, old, e[0]))
        c.commit()
    out = ctx.out("purge", "--provider", "stripe", "--payload-days", "1")
    check("deleted" in out, "purge: %r" % out)
    check_eq([r for r in srv.rows("stripe") if r["event_id"] in {e[0] for e in evs}], [],
             "purged event rows")
    check_eq(one_object(srv, p, oid), before, "object row after purge")
    check_eq(len(history(srv, p.name, p.kind, oid)), 4, "history after purge")


def case_view_while_recording(srv):
    """The sqlite3 client reads the view (read-only) while deliveries are
    recorded: every read succeeds and sees whole rows."""
    if harness.is_pg(srv.db):
        # The same through psql, which is PostgreSQL's client.
        client = ["psql", "-X", "-q", "-A", "-t", "-d", srv.db, "-c"]
    else:
        client = ["sqlite3", "-readonly", "-bail", "file:%s?mode=ro" % srv.db]
    if shutil.which(client[0]) is None:
        check(False, "%s is not installed" % client[0])
    p = PROVIDERS[0]
    stop = threading.Event()
    reads = []

    def reader():
        while not stop.is_set():
            q = ("SELECT count(*), coalesce(sum(CASE WHEN length(object_json)"
                 " > 2 THEN 1 ELSE 0 END), 0) FROM idemhook_objects;")
            r = subprocess.run(client + [q], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=30)
            reads.append((r.returncode, r.stdout.decode().strip(),
                          r.stderr.decode().strip()))
    th = threading.Thread(target=reader, daemon=True)
    th.start()
    ids = []
    try:
        # At least 6 rounds, then more until the client has read twice
        # while recording: on a loaded machine one client start can
        # outlast 6 rounds, which says nothing of the reads themselves.
        for k in range(60):
            if k >= 6 and len(reads) >= 2:
                break
            oid = p.new_oid()
            evs = p.lifecycle(oid, "view%d" % k)
            res = parallel(4, lambda i: p.post(srv, evs[i]))
            for r in res:
                check(not isinstance(r, Exception) and r.status == 200,
                      "delivery while reading: %r" % (r,))
            ids += [e[0] for e in evs]
        wait_done(srv, p.name, ids)
    finally:
        stop.set()
        th.join(30)
    check(len(reads) >= 2, "the client read %d time(s)" % len(reads))
    for rc, out, err in reads:
        check(rc == 0, "client read failed: %r" % err)
        n, full = (int(x) for x in out.split("|"))
        check_eq(full, n, "every row read whole")


def case_action_status(bindir, servers):
    """An action matched on the object's new status runs for the event
    that makes the object take it: not for a later event that leaves the
    status as it is, nor for a stale one, nor for other statuses."""
    srv = servers.add(Server(bindir, providers=["stripe"], name="objects-action"))
    marker = os.path.join(srv.tmp, "canceled.log")
    script = os.path.join(srv.tmp, "on-cancel.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\necho \"$IDEMHOOK_EVENT_ID\" >> %s\n" % marker)
    os.chmod(script, 0o755)
    srv.provider_env = {"stripe": {
        "IDEMHOOK_STRIPE_ACTION": "customer.subscription.*@canceled " + script}}
    srv.start()
    p = PROVIDERS[0]
    oid = p.new_oid()
    evs = p.lifecycle(oid, "action")
    cancel = p.event("evt_cancel_%s" % oid[-8:], "customer.subscription.updated",
                     oid, "canceled", T0 + 150)
    late = p.event("evt_late_%s" % oid[-8:], "customer.subscription.updated",
                   oid, "canceled", T0 + 100)
    for ev in evs[:3] + [cancel, evs[3], late]:
        deliver_all(srv, p, [ev])
        wait_done(srv, p.name, [ev[0]])
    with open(marker) as f:
        ran = f.read().split()
    check_eq(ran, [cancel[0]], "events the status action ran for")
    hist = history(srv, p.name, p.kind, oid)
    check_eq((hist[evs[3][0]], hist[late[0]]), ("applied", "stale"), "verdicts")


VIEW_ROWS = ("SELECT provider, kind, object_id, status, object_json, deleted,"
             " source_at, event_id, created_at, changed_at FROM idemhook_objects"
             " WHERE event_id NOT LIKE 'evt!_raw!_%' ESCAPE '!'"
             " ORDER BY provider, kind, object_id")
HISTORY_ROWS = ("SELECT provider, kind, object_id, event_id, event_type, status,"
                " source_at, deleted, verdict, recorded_at FROM idemhook_object_events")


def view_rows(location, sql):
    with contextlib.closing(harness.db_connect(location, ro=True)) as c:
        return [tuple(r) for r in c.execute(sql).fetchall()]


def case_copy(ctx, srv):
    """idemhook copy brings the objects and their history into PostgreSQL,
    the same through the views; a second copy adds nothing."""
    dst = harness.pg_new_db("ih_objcopy")
    s1 = json.loads(ctx.out("copy", "--to", dst, "--json"))
    src = view_rows(srv.db, VIEW_ROWS)
    check(len(src) > 100, "source objects: %d" % len(src))
    check_eq((s1["objects"]["read"], s1["objects"]["copied"]),
             (len(src) + 1, len(src) + 1), "objects read and copied")
    hist = sorted(view_rows(srv.db, HISTORY_ROWS))
    check_eq(s1["object_events"]["copied"], len(hist), "history rows copied")
    got = sorted(view_rows(dst, VIEW_ROWS))
    check_eq(len(got), len(src), "objects in PostgreSQL")
    for a, b in zip(sorted(src), got):
        check_eq(tuple(b), tuple(a), "copied object")
    check_eq(sorted(view_rows(dst, HISTORY_ROWS)), hist, "copied history")
    s2 = json.loads(ctx.out("copy", "--to", dst, "--json"))
    check_eq((s2["objects"]["copied"], s2["object_events"]["copied"]), (0, 0),
             "a second copy")


def case_migrate_from_3(bindir, tmp):
    """A store at schema version 3 (no objects) is migrated to 4 by
    idemhook init (and on to the current version): the tables and the
    views appear, events are kept, and
    a receiver then maps objects into it."""
    if harness.pg_backend():
        db = harness.pg_new_db("ih_objmig")
    else:
        db = os.path.join(tmp, "v3", "events.db")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IDEMHOOK_DB": db}
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
        if k in os.environ:
            env[k] = os.environ[k]
    idemhook = os.path.join(bindir, "idemhook")
    subprocess.run([idemhook, "init"], env=env, check=True, timeout=60,
                   stdout=subprocess.DEVNULL)
    down = ["DROP VIEW idemhook_objects", "DROP VIEW idemhook_object_events",
            "DROP VIEW idemhook_views", "DROP TABLE objects",
            "DROP TABLE object_events"]
    # Version 8's payloads table, back in the events row.
    if harness.is_pg(db):
        down += ["ALTER TABLE events ADD COLUMN payload BYTEA", "DROP TABLE payloads"]
    else:
        down += ["ALTER TABLE events ADD COLUMN payload BLOB",
                 "DROP TRIGGER events_purge_payload", "DROP TABLE payloads"]
    if harness.is_pg(db):
        harness.psql(db, "; ".join(down + ["UPDATE idemhook_schema SET version = 3"]))
    else:
        with contextlib.closing(harness.db_connect(db)) as c:
            for q in down + ["PRAGMA user_version = 3"]:
                c.execute(q)
            c.commit()
    out = subprocess.run([idemhook, "objects"], env=env, timeout=60,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check(out.returncode == 0, "objects on a migrated store: %r" % out.stderr[-300:])
    with contextlib.closing(harness.db_connect(db, ro=True)) as c:
        check_eq([tuple(r) for r in c.execute("SELECT version FROM idemhook_views")],
                 [(1,)], "views' interface version")
        check_eq([tuple(r) for r in c.execute(
            "SELECT count(*) FROM idemhook_object_events")], [(0,)], "empty history")
        if harness.is_pg(db):
            v = harness.psql(db, "SELECT version FROM idemhook_schema").strip()
        else:
            v = str(c.execute("PRAGMA user_version").fetchone()[0])
    check_eq(v, harness.schema_version(), "schema version after migration")


def case_pg_contract_note(srv):
    """Which backend this run used (for the log)."""
    print("# backend: %s" % ("postgresql" if harness.is_pg(srv.db) else "sqlite"))


class Ctx:
    def __init__(self, bindir, srv):
        self.bin = os.path.join(bindir, "idemhook")
        self.srv = srv

    def env(self):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "IDEMHOOK_DB": self.srv.db}
        for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
            if k in os.environ:
                env[k] = os.environ[k]
        return env

    def run(self, *args, want=None):
        p = subprocess.run([self.bin] + list(args), env=self.env(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, timeout=60)
        err = p.stderr.decode("utf-8", "replace")
        check("Sanitizer" not in err and "runtime error" not in err,
              "sanitizer report from %s: %s" % (args, err[-1500:]))
        if want is not None:
            check(p.returncode == want, "idemhook %s: exit %d, expected %d: %s"
                  % (" ".join(args), p.returncode, want, err[-400:]))
        return p.returncode, p.stdout.decode("utf-8", "replace"), err

    def out(self, *args):
        return self.run(*args, want=0)[1]


def main():
    global BINDIR
    bindir = bin_dir()
    BINDIR = bindir
    tap = Tap("objects: ")
    with Servers() as servers:
        install_signal_cleanup(servers)
        srv = servers.add(Server(bindir, name="objects"))
        missing = [p.name for p in PROVIDERS if not srv.has_provider(p.name)]
        check(not missing, "no binaries for %r" % missing)
        srv.start()
        tap.run("backend", case_pg_contract_note, srv)
        for p in PROVIDERS:
            tap.run("%s: every order and concurrency end alike" % p.name,
                    case_orders, p, srv)
            tap.run("%s: an older event is stale" % p.name, case_stale, p, srv)
        tap.run("stripe: ties by rank, then event id", case_stripe_ties, srv)
        ctx = Ctx(bindir, srv)
        tap.run("idemhook objects and object", case_cli, ctx, srv)
        tap.run("views read by the database's client while recording",
                case_view_while_recording, srv)
        tap.run("purge keeps objects and history", case_purge_keeps, ctx, srv)
        if harness.pg_backend():
            pass        # the copy's source is SQLite: run in the SQLite pass
        elif os.environ.get("IH_PG_URI"):
            tap.run("idemhook copy: objects and history into PostgreSQL",
                    case_copy, ctx, srv)
        else:
            tap.skip("idemhook copy: objects and history into PostgreSQL",
                     "IH_PG_URI is unset (tests/run.sh starts a server)")
        tap.run("a version-3 store is migrated to 4", case_migrate_from_3, bindir,
                srv.tmp)
        tap.run("no sanitizer reports", lambda: check(
            not srv.sanitizer_reports(), "sanitizer: %r" % srv.sanitizer_reports()[:2]))
        tap.run("action matched on the object's new status", case_action_status,
                bindir, servers)
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
