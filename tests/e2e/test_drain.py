#!/usr/bin/env python3
"""End-to-end: due events processed many to a transaction (issue 40).

A worker-mode receiver behind lighttpd records N Stripe events that no
action matches; one `idemhook work --once`, under strace, then processes
them.  Its write transactions are counted from the system calls: on
SQLite each takes the store's queue lock (flock LOCK_EX on <db>-lock), on
PostgreSQL each ends in a COMMIT sent to the server.  They must be fewer
than the events (one claim and one switch transaction per event before),
and every event must still end done with exactly one effect and one
closed attempt: the switch's effects and the move to done commit
together, whatever else shares the transaction.

Python 3 standard library; strace.
"""

import contextlib
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import uuid

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (SANITIZER_ENV, SANITIZER_MARKERS, Server,  # noqa: E402
                     check, check_eq, is_pg, psql, sign_stripe,
                     strace_missing, suite_main)

EVENTS = 24


def query(srv, sql, args=()):
    """Rows of a read-only query on srv's store, either backend."""
    with contextlib.closing(srv.connect_ro()) as c:
        c.row_factory = sqlite3.Row
        return [tuple(r) for r in c.execute(sql, args)]


def deliver(srv, n, bad=-1):
    """n events; the one at index bad (if any) has an id starting
    evt_drainbad_."""
    ids = []
    for i in range(n):
        eid = "evt_drain%s_%s_%d" % ("bad" if i == bad else "",
                                     uuid.uuid4().hex[:10], i)
        body = ('{"id":"%s","object":"event","type":"invoice.paid",'
                '"created":1700000000,"data":{"object":{"id":"in_drain_%d",'
                '"object":"invoice","status":"paid"}}}' % (eid, i)).encode()
        r = srv.post("/hooks/stripe", body,
                     {"Stripe-Signature": sign_stripe(srv.secrets["stripe"],
                                                      body),
                      "Content-Type": "application/json"})
        check(r is not None and r.status == 200 and b'"accepted"' in r.body,
              "delivery %d: %r" % (i, r and (r.status, r.body)))
        ids.append(eid)
    return ids


def work_traced(bindir, srv, trace):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "IDEMHOOK_DB": srv.db,
           "IDEMHOOK_STRIPE_SECRET": srv.secrets["stripe"]}
    for k in SANITIZER_ENV:
        if k in os.environ:
            env[k] = os.environ[k]
    # LeakSanitizer cannot run under ptrace; the other checks still do.
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") +
                           ":detect_leaks=0").lstrip(":")
    p = subprocess.run(["strace", "-f", "-qq", "-s", "64", "-e",
                        "trace=flock,sendto", "-o", trace,
                        os.path.join(bindir, "idemhook"), "work", "--once"],
                       env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300)
    err = p.stderr.decode(errors="replace")
    check_eq(p.returncode, 0, "idemhook work --once exit status (%s)"
             % err[-400:])
    rep = [m for m in SANITIZER_MARKERS if m in err]
    check(not rep, "sanitizer reports %r: %s" % (rep, err[-800:]))
    return p.stdout.decode(errors="replace"), err


def case_batched(bindir, srv, tap):
    if strace_missing(tap, "drain"):
        return
    ids = deliver(srv, EVENTS)
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "trace")
        out, err = work_traced(bindir, srv, trace)
        with open(trace, errors="replace") as f:
            text = f.read()
    check("processed %d event(s)" % EVENTS in out,
          "idemhook work --once output: %r" % out)
    if is_pg(srv.db):
        txns = len(re.findall(r'sendto\(.*COMMIT', text))
        what = "COMMITs sent"
    else:
        txns = len(re.findall(r'flock\(\d+, LOCK_EX', text))
        what = "write-lock waits (flock LOCK_EX)"
    print("# %d events processed in %d transactions (%s)" % (EVENTS, txns,
                                                             what))
    check(0 < txns < EVENTS // 2,
          "%s by idemhook work for %d due events: %d, expected fewer than "
          "%d (many events to a transaction)" % (what, EVENTS, txns,
                                                 EVENTS // 2))
    for eid in ids:
        rows = query(srv, "SELECT id, status, attempts FROM events"
                        " WHERE provider = 'stripe' AND event_id = ?", (eid,))
        check_eq([(r[1], r[2]) for r in rows], [("done", 1)],
                 "status and attempts of %s" % eid)
        rid = rows[0][0]
        n = query(srv, "SELECT count(*) FROM effects WHERE event = ?",
                  (rid,))[0][0]
        check_eq(n, 1, "effects of %s" % eid)
        att = query(srv, "SELECT outcome FROM attempts WHERE event = ?", (rid,))
        check_eq([a[0] for a in att], ["done"], "attempt rows of %s" % eid)
        # The switch's line, held until the run's commit, written once.
        lines = len(re.findall(r"event=%s .*effect=" % re.escape(eid), err))
        check_eq(lines, 1, "effect lines of %s" % eid)


def case_bad_switch(bindir, srv):
    """A drain's run goes without a savepoint per event, its switches'
    log lines held until the commit (dispatch_drain.c); one switch that
    the store refuses (a trigger on effects) undoes the run, which is done
    again a savepoint each.  On PostgreSQL the effect's insert is sent
    deferred: its refusal comes at the commit of the first run, and in
    the second before the savepoint's release.  The refused event ends
    failed with a failed attempt and no effect; every other one done,
    with one effect; each one's lines logged once."""
    n = 10
    ids = deliver(srv, n, bad=n // 2)
    if is_pg(srv.db):
        psql(srv.db, "CREATE FUNCTION refuse_effect() RETURNS trigger AS $$"
             " BEGIN IF EXISTS (SELECT 1 FROM events WHERE id = NEW.event"
             " AND event_id LIKE 'evt_drainbad%') THEN RAISE EXCEPTION"
             " 'refused by the test'; END IF; RETURN NEW; END $$ LANGUAGE"
             " plpgsql; CREATE TRIGGER refuse_effect BEFORE INSERT ON"
             " effects FOR EACH ROW EXECUTE FUNCTION refuse_effect()")
    else:
        c = sqlite3.connect(srv.db, timeout=30)
        try:
            c.execute("CREATE TRIGGER refuse_effect BEFORE INSERT ON effects"
                      " WHEN (SELECT event_id FROM events WHERE id ="
                      " NEW.event) LIKE 'evt_drainbad%' BEGIN"
                      " SELECT RAISE(ABORT, 'refused by the test'); END")
            c.commit()
        finally:
            c.close()
    with tempfile.TemporaryDirectory() as d:
        _, err = work_traced(bindir, srv, os.path.join(d, "trace"))
    agg = ("string_agg(outcome, ',')" if is_pg(srv.db) else
           "group_concat(outcome)")
    for eid in ids:
        rows = query(srv, "SELECT e.status, (SELECT count(*) FROM effects f"
                     " WHERE f.event = e.id), (SELECT %s"
                     " FROM attempts a WHERE a.event = e.id) FROM events e"
                     " WHERE e.provider = 'stripe' AND e.event_id = ?" % agg,
                     (eid,))
        bad = eid.startswith("evt_drainbad")
        check_eq(rows, [("failed", 0, "failed")] if bad else
                 [("done", 1, "done")], "status, effects, attempts of %s" % eid)
        # Logged once, the refused one's too (by its failed attempt).
        lines = len(re.findall(r"event=%s .*effect=" % re.escape(eid), err))
        check_eq(lines, 1, "effect lines of %s" % eid)
        ends = re.findall(r"event=%s .*processing=(\w+)" % re.escape(eid), err)
        check_eq(ends, ["failed"] if bad else ["done"], "ends of %s" % eid)


def run_cases(tap, bindir, servers):
    srv = servers.add(Server(bindir, providers=["stripe"], name="drain",
                             env={"IDEMHOOK_MODE": "worker"}))
    if tap.run("drain: lighttpd starts (IDEMHOOK_MODE=worker, no action)",
               srv.start):
        tap.run("drain: idemhook work --once processes %d due events in fewer "
                "write transactions than half their number; each done, one "
                "effect, one attempt" % EVENTS, case_batched, bindir, srv, tap)
        if not strace_missing(tap, "drain"):
            tap.run("drain: a switch the store refuses undoes the run, done "
                    "again a savepoint each: it alone failed, each other "
                    "done with one effect and one line", case_bad_switch,
                    bindir, srv)
        srv.stop()


if __name__ == "__main__":
    sys.exit(suite_main("drain", run_cases, needs=("stripe.fcgi", "idemhook")))
