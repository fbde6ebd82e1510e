#!/usr/bin/env python3
"""Two hosts on one PostgreSQL: two lighttpd instances, each with its own
programs' working folder, share one database (issue 16).

  1. 50 concurrent deliveries of one event, split across both hosts:
     exactly 1 accepted, 49 duplicate, 1 row.
  2. 1,000 deliveries with 20% duplicates across both (16 connections):
     rows = distinct events, every one done, one action run per event.
  3. One host with IDEMHOOK_PG_WRITERS=4: concurrent deliveries are
     recorded through more than one PostgreSQL session of the receiver
     (writer threads of their own), each event once.
  4. A receiver on host A killed with SIGKILL while its action runs: the
     event stays processing under A's lease; `idemhook work` on host B
     leaves it alone while the lease holds and processes it once after.
  5. Events that no action matches, processed in their recording
     transaction (stripe's inserts together, github's one at a time), go
     in done with their attempt closed: PostgreSQL counts no UPDATE of
     events or attempts.
  6. Twelve events of one object, one after the other: its history holds
     them in that order, numbered without reading the object's earlier
     history rows (PostgreSQL counts no index tuple read on
     object_events); their 3 KB payloads are compressed with lz4
     where the server has it (schema version 17).

Needs IH_PG_URI (tests/run.sh starts a server).  Usage: test_pg_hosts.py BINDIR
"""

import os
import random
import signal
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from harness import Server, check, check_eq, parallel, suite_main  # noqa: E402
import reliability as R  # noqa: E402
import test_processing as P  # noqa: E402

LEASE_S = 3
# The first run stops its receiver (the supervisor's parent) and waits to
# be killed with it: the receiver stays mid-processing, however long the
# test takes to find it, and its timeout cannot end the action first.
# Later runs end at once.
SLOW = ('if mkdir "%(out)s.first" 2>/dev/null; then'
        ' set -- $(cat /proc/$PPID/stat); kill -STOP "$4"; sleep 120; fi;'
        ' echo "$IDEMHOOK_EVENT_ID" >> "%(out)s"')


def status_of(r):
    try:
        return r.json().get("status")
    except Exception:  # noqa: BLE001
        return None


def hosts(bindir, servers, tmp):
    db = harness.pg_new_db("ih_hosts")
    env = R.action_env(os.path.join(tmp, "actions.log"), ["stripe"])
    # Only payment_intent.* runs the counting action; test.slow the slow one.
    env["IDEMHOOK_STRIPE_ACTION"] = "payment_intent.* " + env["IDEMHOOK_STRIPE_ACTION"][2:]
    env.update({"IDEMHOOK_LEASE": str(LEASE_S), "IDEMHOOK_ACTION_TIMEOUT": "2",
                "IDEMHOOK_BUSY_TIMEOUT_MS": "900",  # LEASE > TIMEOUT + busy
                "IDEMHOOK_RETRY_BASE_MS": "200",
                "IDEMHOOK_STRIPE_ACTION_2": "test.slow " + SLOW % {"out": os.path.join(tmp, "slow.out")}})
    secret = harness.default_secret("stripe")
    a = servers.add(Server(bindir, providers=["stripe"], name="hostA", db=db,
                           secrets={"stripe": secret}, env=dict(env)))
    b = servers.add(Server(bindir, providers=["stripe"], name="hostB", db=db,
                           secrets={"stripe": secret}, env=dict(env)))
    a.start()
    b.start()
    check(a.tmp != b.tmp, "the hosts share a working folder")
    return a, b


def one_event_50(a, b):
    eid = R.new_eid("stripe", "fifty")
    body = R.body_for("stripe", eid)

    def send(i):
        srv = (a, b)[i % 2]
        return R.delivery(srv, "stripe", eid=eid, body=body).post(srv)

    results = parallel(50, send, timeout=120)
    errors = [r for r in results if not isinstance(r, harness.Response)]
    check(not errors, "deliveries failed: %r" % errors[:3])
    codes = sorted({r.status for r in results})
    check_eq(codes, [200], "status codes")
    st = [status_of(r) for r in results]
    check_eq(st.count("accepted"), 1, "accepted answers")
    check_eq(st.count("duplicate"), 49, "duplicate answers")
    rows = a.rows("stripe", eid)
    check_eq(len(rows), 1, "rows")
    check_eq(rows[0]["duplicates"], 49, "duplicates counted")


def thousand(bindir, a, b, tmp, n=1000):
    rng = random.Random(16)
    distinct = int(n * 0.8)
    events = [R.new_eid("stripe", "k%d" % i) for i in range(distinct)]
    bodies = {e: R.body_for("stripe", e) for e in events}
    order = list(events)
    for _ in range(n - distinct):
        e = rng.choice(events)
        order.insert(rng.randint(order.index(e) + 1, len(order)), e)
    work = list(enumerate(order))
    lock = threading.Lock()
    answers = []

    def worker():
        while True:
            with lock:
                if not work:
                    return
                i, e = work.pop(0)
            srv = (a, b)[i % 2]
            r = R.delivery(srv, "stripe", eid=e, body=bodies[e]).post(srv)
            with lock:
                answers.append((e, r.status, status_of(r)))

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(16)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    took = time.monotonic() - t0
    print("# %d deliveries over two hosts in %.1f s (%.0f/s)" % (n, took, n / took))
    check_eq(len(answers), n, "answers")
    bad = [x for x in answers if x[1] != 200]
    check(not bad, "non-200 answers: %r" % bad[:5])
    acc = {}
    for e, _s, st in answers:
        if st == "accepted":
            acc[e] = acc.get(e, 0) + 1
    check_eq(len(acc), distinct, "events accepted")
    check(all(v == 1 for v in acc.values()), "an event accepted twice")
    R.work_once(bindir, b)
    R.wait_for(lambda: not R.query(a.db, "SELECT 1 FROM events WHERE status <> 'done'"
                                   " AND event_id LIKE 'evt_k%'"), timeout=60)
    rows = R.query(a.db, "SELECT event_id, status, duplicates FROM events"
                         " WHERE event_id LIKE 'evt_k%'")
    check_eq(len(rows), distinct, "rows == distinct events")
    check_eq(sum(r[2] for r in rows), n - distinct, "duplicates counted")
    check(all(r[1] == "done" for r in rows), "events not done: %r"
          % [r for r in rows if r[1] != "done"][:3])
    runs = R.action_runs(os.path.join(tmp, "actions.log"))
    mine = {k: v for k, v in runs.items() if k[1].startswith("evt_k")}
    check_eq(len(mine), distinct, "events whose action ran")
    check(all(v == 1 for v in mine.values()), "an action ran twice: %r"
          % [k for k, v in mine.items() if v != 1][:3])


def writers(bindir, servers, rounds=10):
    """Rounds of 16 concurrent deliveries to one receiver process (worker
    mode: no processing thread, so its sessions are its writers') until
    PostgreSQL has seen more than one session of it: one writer has one,
    and no more than IDEMHOOK_PG_WRITERS."""
    db = harness.pg_new_db("ih_writers")
    srv = servers.add(Server(bindir, providers=["stripe"], name="writers",
                             db=db, max_procs=1, secrets={"stripe": harness.default_secret(
                                 "stripe")},
                             env={"IDEMHOOK_PG_WRITERS": "4",
                                  "IDEMHOOK_MODE": "worker"}))
    srv.start()
    sql = ("SELECT count(*) FROM pg_stat_activity WHERE datname ="
           " current_database() AND pid <> pg_backend_pid()")
    eids, sessions = [], 0
    for k in range(rounds):
        batch = [R.new_eid("stripe", "w%d_%d" % (k, i)) for i in range(16)]
        eids += batch
        results = parallel(16, lambda i, b=batch: R.delivery(
            srv, "stripe", eid=b[i], body=R.body_for("stripe", b[i])).post(srv),
            timeout=60)
        bad = [r for r in results if not isinstance(r, harness.Response)
               or r.status != 200 or status_of(r) != "accepted"]
        check(not bad, "answers: %r" % bad[:3])
        sessions = R.query(db, sql)[0][0]
        if sessions > 1:
            break
    print("# %d sessions after %d deliveries" % (sessions, len(eids)))
    check(1 < sessions <= 4, "the receiver used %d PostgreSQL session(s)"
          % sessions)
    rows = R.query(db, "SELECT event_id, count(*) FROM events GROUP BY event_id")
    check_eq(sorted(r[0] for r in rows), sorted(eids), "events recorded")
    check(all(r[1] == 1 for r in rows), "an event recorded twice")
    check(not srv.sanitizer_reports(), srv.errorlog()[-1500:])


def inserted_done(bindir, servers):
    """16 concurrent deliveries that no action matches, to one receiver
    process: each event inserted done, its first attempt closed in its
    insert (store_record_done()), so that its switch's completion writes
    nothing: no UPDATE of events or attempts in PostgreSQL's counts, which
    a backend reports when it ends (the server stopped)."""
    db = harness.pg_new_db("ih_done")
    srv = servers.add(Server(bindir, providers=["stripe", "github"],
                             name="done", db=db, max_procs=1, secrets={
                                 p: harness.default_secret(p)
                                 for p in ("stripe", "github")}))
    srv.start()
    ds = ([R.delivery(srv, "stripe", tag="d%d" % i) for i in range(12)]
          + [R.delivery(srv, "github") for _ in range(4)])
    results = parallel(16, lambda i: ds[i].post(srv), timeout=60)
    bad = [r for r in results if not isinstance(r, harness.Response)
           or r.status != 200 or status_of(r) != "accepted"]
    check(not bad, "answers: %r" % bad[:3])
    srv.stop()
    rows = R.query(db, "SELECT status, attempts, (done_at IS NOT NULL)::int,"
                   " (SELECT count(*) FROM attempts a WHERE a.event = e.id"
                   " AND a.outcome = 'done' AND a.finished_at IS NOT NULL)"
                   " FROM events e")
    check_eq(sorted(rows), [("done", 1, 1, 1)] * 16,
             "events done, each with one attempt closed as done")
    sql = ("SELECT relname, n_tup_ins, n_tup_upd FROM pg_stat_user_tables"
           " WHERE relname IN ('events', 'attempts') ORDER BY relname")

    def inserted():
        rows = R.query(db, sql)
        return rows if len(rows) == 2 and all(r[1] >= 16 for r in rows) \
            else None
    counts = R.wait_for(inserted, timeout=30)
    check(counts, "PostgreSQL's counts of the inserts: %r"
          % R.query(db, sql))
    check_eq([(r[0], r[2]) for r in counts], [("attempts", 0), ("events", 0)],
             "rows updated")
    check(not srv.sanitizer_reports(), srv.errorlog()[-1500:])


def history_unread(bindir, servers):
    """Twelve events of one object, each sent once the one before is
    done: the history in their order, its seq taken without reading the
    object's earlier rows (before schema version 17 each insert read
    them all, 66 index tuples for twelve), and each 3 KB payload
    compressed with lz4, not pglz, where the server has lz4."""
    db = harness.pg_new_db("ih_hist")
    srv = servers.add(Server(bindir, providers=["stripe"], name="hist",
                             db=db, max_procs=1))
    srv.start()
    sent = []
    for i in range(12):
        eid = R.new_eid("stripe", "h%d" % i)
        body = harness.json.dumps({
            "id": eid, "object": "event", "type": "payment_intent.updated",
            "created": 1700000000 + i, "data": {"object": {
                "id": "pi_hist", "object": "payment_intent",
                "status": "processing", "metadata": {"pad": "x" * 3000}}}
        }, separators=(",", ":")).encode()
        r = R.delivery(srv, "stripe", eid=eid, body=body).post(srv)
        check_eq(r.status, 200, "delivery %d" % i)
        sent.append(eid)
        check(R.wait_for(lambda: R.query(
            db, "SELECT 1 FROM events WHERE event_id = ? AND status ="
            " 'done'", (eid,)), timeout=60), "event %d not done" % i)
    srv.stop()
    hist = R.query(db, "SELECT event_id FROM object_events WHERE"
                   " object_id = 'pi_hist' ORDER BY seq")
    check_eq([h[0] for h in hist], sent, "the object's history, in order")
    sql = ("SELECT t.n_tup_ins, coalesce(sum(i.idx_tup_read), 0)"
           " FROM pg_stat_user_tables t JOIN pg_stat_user_indexes i"
           " ON i.relid = t.relid WHERE t.relname = 'object_events'"
           " GROUP BY t.n_tup_ins")

    def counted():
        rows = R.query(db, sql)
        return rows if rows and rows[0][0] >= 12 else None
    counts = R.wait_for(counted, timeout=30)
    check(counts, "PostgreSQL's counts: %r" % R.query(db, sql))
    check_eq(int(counts[0][1]), 0, "history index tuples read")
    # lz4 where the server was built with it (PostgreSQL 14 or later,
    # which can also say how a value is compressed).
    lz4 = R.query(db, "SELECT count(*) FROM pg_settings WHERE name ="
                  " 'default_toast_compression' AND 'lz4' = ANY(enumvals)")
    if lz4 and lz4[0][0]:
        methods = R.query(db, "SELECT pg_column_compression(payload),"
                          " count(*) FROM payloads GROUP BY 1")
        check_eq(methods, [("lz4", 12)], "the payloads' compression")
    check(not srv.sanitizer_reports(), srv.errorlog()[-1500:])


def killed_on_a(bindir, a, b, tmp):
    out = os.path.join(tmp, "slow.out")
    eid = R.new_eid("stripe", "slow")
    body = R.body_for("stripe", eid, etype="test.slow")
    r = R.delivery(a, "stripe", eid=eid, body=body).post(a)
    check_eq(r.status, 200, "delivery to host A")

    def stopped():
        pid = P.receiver_running_action(eid, "stripe.fcgi")
        st = P.proc_stat(pid) if pid else None
        return pid if st is not None and st[1] == "T" else None
    # Holds until the kill: a loaded host only makes it come later.
    pid = P.wait_for("host A's stripe.fcgi stopped by the action", stopped, 90)
    os.kill(pid, signal.SIGKILL)
    P.wait_for("the killed receiver to go", lambda: not P.alive(pid), 60)
    row = a.rows("stripe", eid)[0]
    check_eq(row["status"], "processing", "status after the kill")
    owner = row["lease_owner"]
    check(owner and (":%d:" % pid) in owner, "lease owner %r is not the killed %d"
          % (owner, pid))
    # Host B's worker leaves it alone while A's lease holds.
    if time.time() * 1000 < row["lease_until"] - 500:
        R.work_once(bindir, b, {"IDEMHOOK_LEASE": str(LEASE_S)})
        row2 = a.rows("stripe", eid)[0]
        if time.time() * 1000 < row["lease_until"]:
            check_eq(row2["lease_owner"], owner, "owner while the lease holds")
    R.wait_for(lambda: time.time() * 1000 > row["lease_until"] + 50, timeout=30)
    R.work_once(bindir, b)
    row = a.rows("stripe", eid)[0]
    check_eq(row["status"], "done", "status after host B's worker")
    check_eq(row["attempts"], 2, "attempts")
    lines = [l for l in open(out).read().split() if l == eid] if os.path.exists(out) else []
    check_eq(len(lines), 1, "runs of the slow action to its end")


def run_cases(tap, bindir, servers):
    tmp = harness.tempfile.mkdtemp(prefix="ih-hosts-")
    box = {}

    def setup():
        box["ab"] = hosts(bindir, servers, tmp)

    if not tap.run("two lighttpd hosts on one PostgreSQL database", setup):
        return
    a, b = box["ab"]
    tap.run("50 concurrent deliveries of one event across both: 1 accepted, "
            "49 duplicate, 1 row", one_event_50, a, b)
    tap.run("1,000 deliveries, 20% duplicates, across both: rows = distinct, "
            "all done, one action run each", thousand, bindir, a, b, tmp)
    tap.run("IDEMHOOK_PG_WRITERS=4: concurrent deliveries recorded through "
            "more than one session, each event once", writers, bindir, servers)
    tap.run("SIGKILL mid-processing on A: B's worker waits for the lease, then "
            "processes it once", killed_on_a, bindir, a, b, tmp)
    tap.run("events no action matches go in done with their attempt "
            "closed: no UPDATE of events or attempts", inserted_done,
            bindir, servers)
    tap.run("an object's twelve events: history in order, no earlier row "
            "read to number it; 3 KB payloads in lz4", history_unread,
            bindir, servers)
    tap.run("no sanitizer reports on either host",
            lambda: check(not (a.sanitizer_reports() or b.sanitizer_reports()),
                          a.errorlog()[-1500:] + b.errorlog()[-1500:]))
    harness.shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(suite_main("pg hosts", run_cases, prefix=True))
