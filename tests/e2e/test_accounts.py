#!/usr/bin/env python3
"""End-to-end test of accounts (issue 29): many accounts of one provider
on one installation, each with its own secrets and its own namespace.

Usage: test_accounts.py BINDIR   (or IH_BIN=BINDIR test_accounts.py)
SQLite, or PostgreSQL with IH_DB_BACKEND=pg (its migration case sets a
store back to version 7 by hand).

One lighttpd, whose store starts as a store of schema version 7 with two
events in it, serves:
  - two Stripe accounts (acme, bravo) with their own secrets, and the
    default account (IDEMHOOK_STRIPE_SECRET), on one stripe.fcgi;
  - the same event id under both accounts is two events, a redelivery to
    one of them a duplicate;
  - acme's signature posted to bravo's URL is 401, nothing stored; an
    unknown or malformed account is 404 with one log line, nothing stored;
  - idemhook list/show/replay --account bravo never show or touch acme's;
  - GitHub: a delivery whose X-GitHub-Hook-Installation-Target-ID routes
    to one account (IDEMHOOK_GITHUB_ROUTE_<id>) but is signed with
    another account's secret is 401; the header naming another account
    than the URL's is 401;
  - an account added to the settings file is served without a restart;
  - the store of version 7 is migrated with its rows intact (ids,
    payloads, statuses) and its pending event processed once.
Then Apache (.htaccess under mod_fcgid and under CGI, vhost.conf) and nginx
route /hooks/stripe/ACCOUNT to the program as shipped: 200 for the account's own signature, 401 for
another account's, 404 for an unknown account.
"""

import base64
import contextlib
import json
import os
import sqlite3
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (REPO, SANITIZER_ENV, ApacheServer, NginxServer,  # noqa: E402
                     Server, check, check_eq, console_conf, is_pg, pg_backend,
                     psql, schema_version, sign_github, sign_stripe,
                     suite_main)
from test_console import USER, console_hash  # noqa: E402

ACME = "whsec_" + os.urandom(16).hex()
BRAVO = "whsec_" + os.urandom(16).hex()
GH_A = os.urandom(16).hex()
GH_B = os.urandom(16).hex()
LATE = "whsec_" + os.urandom(16).hex()


def body(eid, acct=None):
    d = {"id": eid, "object": "event", "type": "invoice.paid",
         "data": {"object": {"id": "in_" + eid, "object": "invoice"}}}
    if acct:
        d["account"] = acct     # a Connect event names its account
    return json.dumps(d, separators=(",", ":")).encode()


def post(srv, path, eid, secret):
    b = body(eid)
    return srv.post(path, b, {"Stripe-Signature": sign_stripe(secret, b)})


def idemhook(srv, bindir, *args, ok=True):
    e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    e.update({k: os.environ[k] for k in SANITIZER_ENV if k in os.environ})
    e["IDEMHOOK_CONFIG"] = srv.env["IDEMHOOK_CONFIG"]
    p = subprocess.run([os.path.join(bindir, "idemhook")] + list(args), env=e,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    check("Sanitizer" not in err, "sanitizer: %s" % err[-600:])
    if ok:
        check(p.returncode == 0, "idemhook %s exited %d: %s"
              % (" ".join(args), p.returncode, err[-600:]))
    return p.returncode, out, err


def rows(srv, eid):
    """(account, status, attempts) of every row of stripe event eid."""
    return sorted((r["account"], r["status"], r["attempts"])
                  for r in srv.rows("stripe", eid))


# The shipped SQLite schema taken back to version 7 (migrations 10, 9 and
# 8 undone: no health table, no needs_fetch, no account in the rows or
# the keys).  Each edit must match as often as said, so that a schema
# change which moves them fails here rather than building another store.
TO_V7 = [("\taccount\t\tTEXT\tNOT NULL DEFAULT 'default',\n", "", 3),
         ("\tneeds_fetch\tINTEGER\tNOT NULL DEFAULT 0,\n", "", 1),
         ("UNIQUE (provider, account, event_id)", "UNIQUE (provider, event_id)", 1),
         ("PRIMARY KEY (provider, account, ", "PRIMARY KEY (provider, ", 2),
         (", account\n    FROM object", "\n    FROM object", 2)]


def v7_schema():
    with open(os.path.join(REPO, "db", "sqlite", "schema.sql")) as f:
        ddl = f.read()
    for old, new, times in TO_V7:
        check_eq(ddl.count(old), times, "version 7 from schema.sql: %r" % old)
        ddl = ddl.replace(old, new)
    return ddl + "DROP TABLE endpoint_health;\n"


def v7_store(path):
    """A store of schema version 7 with a pending and a done event."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with contextlib.closing(sqlite3.connect(path)) as c:
        c.executescript(v7_schema())
        for i, (eid, status) in enumerate((("evt_old", "received"),
                                           ("evt_olddone", "done")), 1):
            c.execute("INSERT INTO events (id, provider, event_id, event_type,"
                      " received_at, last_seen_at, status, fingerprint)"
                      " VALUES (?, 'stripe', ?, 'invoice.paid', 1000, 1000, ?, ?)",
                      (40 + i, eid, status, "f%d" % i))
            c.execute("INSERT INTO payloads (event, payload) VALUES (?, ?)",
                      (40 + i, body(eid)))
        c.execute("PRAGMA journal_mode = WAL")
        c.execute("PRAGMA user_version = 7")
        c.commit()


def settings_text(srv, extra=""):
    return ("IDEMHOOK_DB=%s\n"
            "IDEMHOOK_STRIPE_SECRET@acme=%s\n"
            "IDEMHOOK_STRIPE_SECRET@bravo=%s\n"
            "IDEMHOOK_GITHUB_SECRET@gha=%s\n"
            "IDEMHOOK_GITHUB_SECRET@ghb=%s\n"
            "IDEMHOOK_GITHUB_ROUTE_111=gha\n"
            "IDEMHOOK_GITHUB_ROUTE_222=ghb\n%s"
            % (srv.db, ACME, BRAVO, GH_A, GH_B, extra))


def write_settings(path, text):
    tmp = path + ".new"
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o600)
    os.rename(tmp, path)


def case_migrated(srv, bindir):
    """The rows of version 7 are there, in the default account, with their
    ids and payloads; the pending one is processed once."""
    with contextlib.closing(srv.connect_ro()) as c:
        check_eq(c.execute("PRAGMA user_version").fetchone()[0], int(schema_version()),
                 "schema version")
        check_eq(c.execute("PRAGMA integrity_check").fetchall(), [("ok",)],
                 "integrity_check")
        got = [tuple(r) for r in c.execute(
            "SELECT e.id, e.event_id, e.account, p.payload FROM events e"
            " JOIN payloads p ON p.event = e.id WHERE e.id IN (41, 42) ORDER BY e.id")]
    check_eq(got, [(41, "evt_old", "default", body("evt_old")),
                   (42, "evt_olddone", "default", body("evt_olddone"))], "rows kept")
    idemhook(srv, bindir, "work", "--once")
    check_eq(rows(srv, "evt_old"), [("default", "done", 1)], "processed once")
    _, out, _ = idemhook(srv, bindir, "work", "--once")
    check("processed 0 event" in out, "second run processed again: %r" % out)
    check_eq(rows(srv, "evt_olddone"), [("default", "done", 0)], "done one untouched")
    # Its redelivery to the default endpoint is a duplicate, not an event.
    r = post(srv, "/hooks/stripe", "evt_old", srv.secrets["stripe"])
    check_eq(r.status, 200, "redelivery status")
    check_eq(len(srv.rows("stripe", "evt_old")), 1, "one row after redelivery")


def case_pg_migrated(srv, bindir):
    """PostgreSQL: a store set back to version 7 (the unique key and the
    primary keys without the account, no account columns) is migrated by
    a receiver with its rows and their ids, in the default account."""
    down = ["ALTER TABLE events DROP CONSTRAINT events_provider_account_event_id_key",
            "ALTER TABLE events DROP COLUMN account",
            "ALTER TABLE events ADD CONSTRAINT events_provider_event_id_key"
            " UNIQUE (provider, event_id)",
            "DROP VIEW idemhook_objects", "DROP VIEW idemhook_object_events",
            "ALTER TABLE objects DROP CONSTRAINT objects_pkey",
            "ALTER TABLE objects DROP COLUMN account",
            "ALTER TABLE objects ADD PRIMARY KEY (provider, kind, object_id)",
            "ALTER TABLE object_events DROP CONSTRAINT object_events_pkey",
            "ALTER TABLE object_events DROP COLUMN account",
            "ALTER TABLE object_events ADD PRIMARY KEY"
            " (provider, kind, object_id, event_id)",
            "CREATE VIEW idemhook_objects AS SELECT provider, kind, object_id,"
            " status, object AS object_json, deleted, source_at, event_id,"
            " created_at, changed_at FROM objects",
            "CREATE VIEW idemhook_object_events AS SELECT provider, kind,"
            " object_id, event_id, event_type, status, source_at, deleted,"
            " verdict, recorded_at FROM object_events",
            "INSERT INTO events (id, provider, event_id, event_type, received_at,"
            " last_seen_at) VALUES (9001, 'stripe', 'evt_pgold', 'x', 1, 1)",
            "UPDATE idemhook_schema SET version = 7"]
    idemhook(srv, bindir, "init")
    psql(srv.db, "; ".join(down))
    r = post(srv, "/hooks/stripe/acme", "evt_pgold", ACME)
    check_eq(r.status, 200, "first delivery after the set-back: %s" % r.body[:300])
    check_eq(psql(srv.db, "SELECT version FROM idemhook_schema").strip(),
             schema_version(), "version")
    got = psql(srv.db, "SELECT account || ':' || (id = 9001) FROM events WHERE"
               " event_id = 'evt_pgold' ORDER BY account").split()
    check_eq(got, ["acme:false", "default:true"], "the old row, and acme's new one")


def case_two_accounts(srv):
    """One id under two accounts is two events; a redelivery a duplicate."""
    for path, sec in (("/hooks/stripe/acme", ACME), ("/hooks/stripe/bravo", BRAVO),
                      ("/hooks/stripe/acme", ACME), ("/hooks/stripe", srv.secrets["stripe"])):
        r = post(srv, path, "evt_same", sec)
        check_eq(r.status, 200, "POST %s: %s" % (path, r.body[:200]))
    got = sorted(r["account"] for r in srv.rows("stripe", "evt_same"))
    check_eq(got, ["acme", "bravo", "default"], "accounts of evt_same")
    dup = {r["account"]: r["duplicates"] for r in srv.rows("stripe", "evt_same")}
    check_eq(dup, {"acme": 1, "bravo": 0, "default": 0}, "duplicates")


def case_wrong_secret(srv):
    """acme's signature on bravo's URL: 401 and nothing stored; the
    default secret on an account's URL too."""
    r = post(srv, "/hooks/stripe/bravo", "evt_cross", ACME)
    check_eq(r.status, 401, "acme's signature to bravo")
    r = post(srv, "/hooks/stripe/acme", "evt_cross", srv.secrets["stripe"])
    check_eq(r.status, 401, "the default secret to acme")
    r = post(srv, "/hooks/stripe", "evt_cross", ACME)
    check_eq(r.status, 401, "acme's signature to the default URL")
    check_eq(srv.rows("stripe", "evt_cross"), [], "nothing stored")


def case_unknown(srv):
    """An unknown account and a malformed one: 404, one line each,
    nothing stored."""
    r = post(srv, "/hooks/stripe/nobody", "evt_unknown", ACME)
    check_eq(r.status, 404, "unknown account")
    r = post(srv, "/hooks/stripe/Bad%20Name", "evt_unknown", ACME)
    check_eq(r.status, 404, "malformed account")
    r = post(srv, "/hooks/stripe/acme/x", "evt_unknown", ACME)
    check_eq(r.status, 404, "two segments")
    check_eq(srv.rows("stripe", "evt_unknown"), [], "nothing stored")
    lines = [l for l in srv.log_lines("stripe") if "outcome=unknown_account" in l]
    check_eq(len(lines), 3, "one line per refusal: %r" % lines)
    check(any("account=nobody" in l for l in lines), "the line names it: %r" % lines)


def case_command(srv, bindir):
    """list/show/replay --account bravo see bravo's events only."""
    _, out, _ = idemhook(srv, bindir, "list", "--account", "bravo", "--json")
    evs = json.loads(out)
    check(evs and all(e["account"] == "bravo" for e in evs), "list bravo: %r" % evs)
    _, out, _ = idemhook(srv, bindir, "list", "--provider", "stripe", "--account=acme")
    check("stripe/acme" in out and "bravo" not in out, "list acme: %r" % out)
    _, out, _ = idemhook(srv, bindir, "show", "--account", "bravo", "--json",
                         "stripe", "evt_same")
    check_eq(json.loads(out)["event"]["account"], "bravo", "show bravo")
    rc, _, err = idemhook(srv, bindir, "show", "--account", "bravo", "stripe",
                          "evt_acmeonly", ok=False)
    r = post(srv, "/hooks/stripe/acme", "evt_acmeonly", ACME)
    check_eq(r.status, 200, "acme's own event")
    rc, _, err = idemhook(srv, bindir, "show", "--account", "bravo", "stripe",
                          "evt_acmeonly", ok=False)
    check(rc != 0 and "in account bravo" in err, "bravo shows acme's: %d %r" % (rc, err))
    rc, _, err = idemhook(srv, bindir, "replay", "--account", "bravo", "stripe",
                          "evt_acmeonly", ok=False)
    check(rc != 0, "bravo replays acme's event")
    idemhook(srv, bindir, "work", "--once")
    idemhook(srv, bindir, "replay", "--account", "bravo", "--provider", "stripe",
             "--status", "done")
    check_eq(rows(srv, "evt_acmeonly")[0][1], "done", "acme's untouched by bravo's replay")
    _, out, _ = idemhook(srv, bindir, "objects", "--account", "bravo", "--json")
    objs = json.loads(out)
    check(objs and all(o["account"] == "bravo" for o in objs)
          and "in_evt_acmeonly" not in out, "objects of bravo: %r" % objs)
    _, out, _ = idemhook(srv, bindir, "object", "--account", "acme", "--json",
                         "stripe", objs[0]["kind"], "in_evt_same")
    check('"account":"acme"' in out, "acme's object: %r" % out)
    # verify re-checks with bravo's own secret; the default one fails it.
    rc, out, err = idemhook(srv, bindir, "verify", "--account", "bravo", "stripe",
                            "evt_same", ok=False)
    check(rc == 0, "verify bravo's event with bravo's secret: %r" % (out + err)[-400:])
    _, out, _ = idemhook(srv, bindir, "stats", "--account", "bravo", "--json")
    st = json.loads(out)["providers"]
    check(st and all(x["account"] == "bravo" for x in st), "stats bravo: %r" % st)
    _, out, _ = idemhook(srv, bindir, "stats", "--prometheus")
    check('idemhook_events_total{provider="stripe",account="acme",status="done"}' in out
          and 'idemhook_events_total{provider="stripe",status="done"}' in out,
          "metrics' account label: %r" % out[:1500])
    rc, _, err = idemhook(srv, bindir, "list", "--account", "Not Valid", ok=False)
    check(rc == 2 and "--account" in err, "bad name: %d %r" % (rc, err))


def table(out, first):
    """The table in out whose header starts with first: (header, rows)."""
    lines = out.splitlines()
    i = next(k for k, l in enumerate(lines) if l.startswith(first))
    rows = []
    for l in lines[i + 1:]:
        if not l.strip() or l.startswith(("by API", "(no")):
            break
        rows.append(l)
    return lines[i], rows


def case_columns(srv, bindir):
    """Issue 39: objects and object show the account of two accounts'
    rows of one object id (--account filters); stats' columns line up
    whether a row names an account or not; every command's --help that
    takes --account lists it, and no other does."""
    idemhook(srv, bindir, "work", "--once")
    _, out, _ = idemhook(srv, bindir, "objects", "--provider", "stripe")
    head, rows = table(out, "PROVIDER")
    check(head.split()[:3] == ["PROVIDER", "ACCOUNT", "KIND"], "objects header: %r" % head)
    mine = sorted(r.split()[1] for r in rows if "in_evt_same " in r)
    check_eq(mine, ["acme", "bravo", "default"], "objects: accounts of in_evt_same")
    _, out, _ = idemhook(srv, bindir, "objects", "--account", "bravo")
    _, rows = table(out, "PROVIDER")
    check(rows and all(r.split()[1] == "bravo" for r in rows), "objects bravo: %r" % rows)
    for acct in ("acme", "bravo"):
        _, out, _ = idemhook(srv, bindir, "object", "--account", acct, "stripe",
                             "invoice", "in_evt_same")
        check(("\naccount     %s\n" % acct) in out, "object of %s: %r" % (acct, out[:400]))
    # stats: each number ends under its header's last letter.
    for args in (("stats",), ("stats", "--account", "bravo"),
                 ("stats", "--provider", "stripe", "--account", "acme")):
        _, out, _ = idemhook(srv, bindir, *args)
        head, rows = table(out, "PROVIDER")
        named = [r for r in rows if r.split()[0].count("/") == 1]
        check(named, "%s: no row names an account: %r" % (args, rows))
        for col in ("RECEIVED", "DUPS", "DONE", "PENDING", "P99"):
            end = head.index(col) + len(col)
            bad = [r for r in rows if len(r) <= end or r[end - 1] == " "
                   or r[end] != " "]
            check(not bad, "%s: column %s shifted: %r under %r" % (args, col, bad, head))
        start = head.index("OLDEST PENDING")
        check(all(r[start - 2:start] == "  " and r[start] != " " for r in rows),
              "%s: OLDEST PENDING shifted: %r" % (args, rows))
    for cmd in ("list", "show", "verify", "replay", "purge", "stats", "objects",
                "object", "catch-up", "init", "work", "check", "backup"):
        _, out, _ = idemhook(srv, bindir, cmd, "--help")
        takes = cmd not in ("init", "work", "check", "backup")
        check(("--account NAME" in out) == takes,
              "%s --help %s --account: %r" % (cmd, "lacks" if takes else "lists", out[-300:]))


def case_check(srv, bindir):
    """idemhook check lists each account's secrets and finds two accounts
    sharing one, without printing it."""
    _, out, _ = idemhook(srv, bindir, "check", ok=False)
    check("ok: stripe: account acme: 1 secret(s) set" in out, "acme: %r" % out[-1500:])
    check("share a secret" not in out, "no shared secret yet: %r" % out[-1500:])
    path = os.path.join(srv.tmp, "shared.env")
    write_settings(path, settings_text(srv, "IDEMHOOK_STRIPE_SECRET_2@bravo=%s\n"
                                       "IDEMHOOK_GITHUB_ROUTE_333=nobody\n" % ACME))
    e = dict(srv.env, IDEMHOOK_CONFIG=path)
    saved, srv.env = srv.env, e
    try:
        _, out, err = idemhook(srv, bindir, "check", ok=False)
    finally:
        srv.env = saved
    check("PROBLEM: stripe: accounts acme and bravo share a secret" in out,
          "shared secret not found: %r" % out[-1500:])
    check("IDEMHOOK_GITHUB_ROUTE_333 names no account" in out, "route: %r" % out[-1500:])
    check(ACME not in out + err and BRAVO not in out + err, "a secret in the output")


def case_connect(srv, bindir, auth):
    """A Connect event's account (signed, in the body) is kept and
    searchable: list --source-account and the console's search find it,
    and only it."""
    eid, other = "evt_connect1", "evt_connect2"
    for e, acct in ((eid, "acct_1Conn3ct"), (other, "acct_1Other")):
        b = body(e, acct)
        r = srv.post("/hooks/stripe/acme", b, {"Stripe-Signature": sign_stripe(ACME, b)})
        check_eq(r.status, 200, "Connect event %s" % e)
    _, out, _ = idemhook(srv, bindir, "list", "--source-account", "acct_1Conn3ct",
                         "--json")
    evs = json.loads(out)
    check_eq([(e["event_id"], e["account"], e["source_account"]) for e in evs],
             [(eid, "acme", "acct_1Conn3ct")], "list --source-account")
    _, out, _ = idemhook(srv, bindir, "list", "--source-account", "acct_none", "--json")
    check_eq(json.loads(out), [], "list of an unknown Connect account")
    r = srv.get("/hooks/console/events?q=acct_1Conn3ct", {"Authorization": auth})
    check_eq(r.status, 200, "console search")
    check(eid.encode() in r.body and other.encode() not in r.body,
          "console search by Connect account: %r" % r.body[-800:])


def case_console(srv, auth):
    """The console filters by account and shows it; an event page and a
    replay name their account; a bad name is refused, not echoed."""
    import re
    import urllib.parse
    h = {"Authorization": auth}
    r = srv.get("/hooks/console/events?account=bravo", h)
    check_eq(r.status, 200, "events of bravo")
    check(b"evt_same" in r.body and b"evt_acmeonly" not in r.body
          and b"<td>acme</td>" not in r.body and b"<td>bravo</td>" in r.body,
          "bravo's list: %r" % r.body[-1500:])
    r = srv.get("/hooks/console/events/stripe/evt_same?account=acme", h)
    check_eq(r.status, 200, "acme's event page")
    check(b"<td>acme</td>" in r.body, "the page names acme")
    r = srv.get("/hooks/console/events/stripe/evt_acmeonly", h)
    check_eq(r.status, 404, "acme's event is not the default account's")
    r = srv.get("/hooks/console/events?account=%3Cscript%3E", h)
    check_eq(r.status, 400, "a bad account name")
    check(b"<script>" not in r.body, "the name is echoed")
    m = re.search(rb'name="csrf" value="([^"]+)"', srv.get("/hooks/console/events", h).body)
    check(m is not None, "no CSRF token")
    form = {"csrf": m.group(1).decode(), "provider": "stripe", "account": "bravo",
            "event_id": "evt_acmeonly"}
    r = srv.post("/hooks/console/replay", urllib.parse.urlencode(form).encode(),
                 dict(h, Origin="http://127.0.0.1:%d" % srv.port,
                      **{"Content-Type": "application/x-www-form-urlencoded"}))
    check_eq(r.status, 409, "bravo replays acme's event (%r)" % r.body[:200])
    check_eq(rows(srv, "evt_acmeonly")[0][1], "done", "acme's event untouched")


def gh(srv, path, target, secret, guid):
    b = json.dumps({"zen": "x", "hook_id": 1}).encode()
    h = {"X-GitHub-Event": "ping", "X-GitHub-Delivery": guid,
         "X-Hub-Signature-256": sign_github(secret, b)}
    if target is not None:
        h["X-GitHub-Hook-Installation-Target-ID"] = target
    return srv.post(path, b, h)


def case_github(srv):
    """The installation header picks whose secrets are tried, never more."""
    r = gh(srv, "/hooks/github", "111", GH_B, "g-mismatch")
    check_eq(r.status, 401, "header names gha, signed by ghb")
    r = gh(srv, "/hooks/github/ghb", "111", GH_B, "g-mismatch")
    check_eq(r.status, 401, "header names gha, URL ghb")
    check_eq(srv.rows("github", "-:g-mismatch"), [], "nothing stored")
    r = gh(srv, "/hooks/github", "111", GH_A, "g-ok")
    check_eq(r.status, 200, "header names gha, signed by gha")
    r = gh(srv, "/hooks/github/ghb", "222", GH_B, "g-ok")
    check_eq(r.status, 200, "URL and header ghb")
    got = sorted(r["account"] for r in srv.rows("github", "-:g-ok"))
    check_eq(got, ["gha", "ghb"], "accounts")


def case_added_live(srv):
    """An account added to the settings file works at once."""
    r = post(srv, "/hooks/stripe/late", "evt_late", LATE)
    check_eq(r.status, 404, "before")
    write_settings(srv.env["IDEMHOOK_CONFIG"], settings_text(
        srv, "IDEMHOOK_STRIPE_SECRET@late=%s\n" % LATE))
    r = post(srv, "/hooks/stripe/late", "evt_late", LATE)
    check_eq(r.status, 200, "after: %s" % r.body[:200])
    check_eq(rows(srv, "evt_late")[0][0], "late", "its account")


def case_routing(srv):
    """The shipped configuration routes /hooks/stripe/ACCOUNT."""
    check_eq(post(srv, "/hooks/stripe/acme", "evt_r", ACME).status, 200, "acme")
    check_eq(post(srv, "/hooks/stripe/bravo/", "evt_r", BRAVO).status, 200, "bravo/")
    check_eq(post(srv, "/hooks/stripe/bravo", "evt_r2", ACME).status, 401, "cross")
    check_eq(post(srv, "/hooks/stripe/nobody", "evt_r2", ACME).status, 404, "unknown")
    got = sorted(r["account"] for r in srv.rows("stripe", "evt_r"))
    check_eq(got, ["acme", "bravo"], "accounts")
    check_eq(srv.rows("stripe", "evt_r2"), [], "nothing stored")


def cases(tap, bindir, servers):
    if pg_backend():
        tap.diag("PostgreSQL: the migration case sets a store back to version 7")
    srv = Server(bindir, providers=["stripe", "github"])
    servers.add(srv)
    if not is_pg(srv.db):
        v7_store(srv.db)
    cfg = os.path.join(srv.tmp, "accounts.env")
    write_settings(cfg, settings_text(srv))
    srv.env["IDEMHOOK_CONFIG"] = cfg
    password = "correct horse " + os.urandom(4).hex()
    auth = "Basic " + base64.b64encode(("%s:%s" % (USER, password)).encode()).decode()
    console = os.path.join(srv.tmp, "console.env")
    write_settings(console, "IDEMHOOK_DB=%s\nIDEMHOOK_CONSOLE_USER=%s\n"
                   "IDEMHOOK_CONSOLE_PASSWORD_HASH=%s\n"
                   % (srv.db, USER, console_hash(bindir, password)))
    srv.extra_conf = "\n".join(console_conf(console, cfg))
    if not tap.run("lighttpd starts (a store of version 7, two accounts)", srv.start):
        return
    if is_pg(srv.db):
        tap.run("postgresql: a store of version 7 migrated, rows kept",
                case_pg_migrated, srv, bindir)
    tap.run("stripe: one id under two accounts is two events", case_two_accounts, srv)
    tap.run("stripe: another account's signature is 401, nothing stored",
            case_wrong_secret, srv)
    tap.run("stripe: unknown account 404, one line, nothing stored", case_unknown, srv)
    tap.run("command: --account shows and replays that account only",
            case_command, srv, bindir)
    tap.run("objects and object show the account; stats' columns line up with "
            "accounts; --help lists --account where it applies", case_columns, srv, bindir)
    tap.run("console: filtered by account, shows it, replays only its own",
            case_console, srv, auth)
    tap.run("stripe: a Connect event's account is kept and searchable",
            case_connect, srv, bindir, auth)
    tap.run("github: the installation header only picks the secrets", case_github, srv)
    tap.run("check: each account's secrets, a shared secret found", case_check, srv, bindir)
    tap.run("an account added to the settings file, no restart", case_added_live, srv)
    if not is_pg(srv.db):
        tap.run("a store of version 7 migrated, rows intact, processed once",
                case_migrated, srv, bindir)
    tap.run("no sanitizer reports", lambda: check(
        not srv.sanitizer_reports(), "sanitizer: %r" % srv.sanitizer_reports()[:2]))
    srv.stop()
    env = {"IDEMHOOK_STRIPE_SECRET@acme": ACME, "IDEMHOOK_STRIPE_SECRET@bravo": BRAVO}
    for name, make in (("apache .htaccess (mod_fcgid)",
                        lambda: ApacheServer(bindir, mode="fcgid", providers=["stripe"],
                                             env=env)),
                       ("apache .htaccess (CGI)",
                        lambda: ApacheServer(bindir, mode="cgi", providers=["stripe"],
                                             env=env)),
                       ("apache vhost.conf",
                        lambda: ApacheServer(bindir, mode="vhost", providers=["stripe"],
                                             env=env)),
                       ("nginx", lambda: NginxServer(bindir, providers=["stripe"],
                                                     env=env))):
        s = servers.add(make())
        if tap.run("%s starts" % name, s.start):
            tap.run("%s routes /hooks/stripe/ACCOUNT" % name, case_routing, s)
        s.stop()


if __name__ == "__main__":
    sys.exit(suite_main("accounts", cases))
