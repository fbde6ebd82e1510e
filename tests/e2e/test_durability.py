#!/usr/bin/env python3
"""Durability, seen from the system calls: every "accepted" answer is
written only after an fdatasync of the store's write-ahead log that
started after the commit carrying its event; and the group commit's
other promises: a receiver killed in the middle of a batch leaves no 2xx
without its row, 50 concurrent deliveries of one event are 1 accepted
and 49 duplicates with one row, and one event that fails in a batch
fails alone.  Past SQLite's auto-checkpoint length, the checkpoint syncs
the store's file only after its commit has left the writers' queue.

With IH_DB_BACKEND=pg the group-commit tests run against PostgreSQL; the
strace tests do not, since there the write-ahead log is the server's and
its flush happens in another process.

Usage: test_durability.py BINDIR   (or IH_BIN=BINDIR test_durability.py)

The receivers run behind the shipped lighttpd config under strace (the
harness's wrapper prefix), which logs, per process, each fdatasync and each
write to the FastCGI connection.  A test that only looked at the database
could not tell a durable commit from one that sits in the page cache.
Also run as plain CGI, where the answer goes to stdout.
"""

import collections
import threading
import os
import re
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from harness import (Server, accepted_after_sync,  # noqa: E402
                     answers_after_commit, check, check_eq, db_connect,
                     parallel, pg_backend, processes, sign_stripe,
                     strace_missing, strace_wrap, stripe_body, suite_main,
                     thread_traces, traces)
from ihtest.strace import on_wal, wal_spans  # noqa: E402

N = 20
ALONE = 10


def through_lighttpd(bindir, servers, mode):
    def run():
        tdir, wrap = strace_wrap(bindir, mode)
        srv = servers.add(Server(bindir, providers=["stripe"], wrap=wrap,
                                 env={"IDEMHOOK_MODE": mode}, max_procs=1,
                                 name="durability-" + mode))
        srv.start()
        ids = ["evt_dur_%s_%d_%d" % (mode, os.getpid(), i) for i in range(N)]
        try:
            secret = srv.secrets["stripe"]

            def one(i):
                body = stripe_body(ids[i])
                return srv.post("/hooks/stripe", body,
                                {"Stripe-Signature": sign_stripe(secret, body),
                                 "Content-Type": "application/json"})
            # Concurrent, so that commits carry several events each.
            results = parallel(N, one)
            for i, r in enumerate(results):
                check(not isinstance(r, Exception) and r is not None,
                      "delivery %d: %r" % (i, r))
                check_eq(r.status, 200, "delivery %d" % i)
                check(b'"accepted"' in r.body, "delivery %d: %r" % (i, r))
            time.sleep(0.5)
        finally:
            srv.stop()
        threads = thread_traces(os.path.join(tdir, "t"))
        # Each answer leaves with its log lines in two writes (the stderr
        # stream whole, then the answer), not one more per line.
        fcgi = [c for calls in threads.values() for c in calls
                if c[2] == "write" and re.match(r'\d+, "\\1\\[67]', c[3])]
        check(len(fcgi) <= 2 * N, "%d FastCGI stdout/stderr writes for %d "
              "deliveries: more than two each" % (len(fcgi), N))
        # Read to its end, a request's connection is closed at once, not
        # shut down and read until the server closes it (io_fcgi_end()).
        shut = [c for calls in threads.values() for c in calls
                if c[2] == "shutdown"]
        check(not shut, "%d connections shut down and drained for %d "
              "deliveries, not closed at once" % (len(shut), N))
        seen = []
        nsyncs = 0
        for root, tids in processes(threads).items():
            got, n = answers_after_commit(threads, tids, ids)
            seen += got
            nsyncs += n
        shutil.rmtree(tdir, ignore_errors=True)
        check_eq(len(seen), N, "accepted answers seen in the traces")
        lost = [ok for e, ok in seen if e is None]
        check(not lost, "%d accepted answer(s) whose request is not in the "
              "thread's reads before it" % len(lost))
        check_eq(sorted(e for e, _ in seen), sorted(ids), "events of the answers")
        late = [e for e, ok in seen if not ok]
        check(not late, "%d accepted answer(s) written without a WAL sync that "
              "started after their event's commit, e.g. %r" % (len(late), late[:3]))
        # Group commit: fewer syncs than events (each commit syncs the WAL).
        check(nsyncs < N, "%d WAL syncs for %d concurrent events: no batching"
              % (nsyncs, N))
    return run


def alone_on_own_thread(bindir, servers):
    """Deliveries one at a time (the only request in flight, as every
    request under mod_fcgid): each is recorded on the thread that read
    it, with no hand-over to the writer thread, and still answered only
    after a WAL sync begun after its commit."""
    def run():
        tdir, wrap = strace_wrap(bindir, "alone")
        srv = servers.add(Server(bindir, providers=["stripe"], wrap=wrap,
                                 max_procs=1, name="durability-alone"))
        srv.start()
        ids = ["evt_alone_%d_%d" % (os.getpid(), i) for i in range(ALONE)]
        try:
            for eid in ids:
                check_eq(status_of(deliver(srv, eid)), (200, "accepted"), eid)
        finally:
            srv.stop()
        threads = thread_traces(os.path.join(tdir, "t"))
        shutil.rmtree(tdir, ignore_errors=True)
        # The first read and the first WAL write of each event (a page
        # written again later holds the earlier events' rows too).
        readers, writers, seen = {}, {}, []
        for root, tids in processes(threads).items():
            spans = wal_spans(threads, tids)
            for tid in tids:
                for (t0, _t1, call, args, _ret) in threads[tid]:
                    fd = args.split(",", 1)[0]
                    for eid in ids:
                        if eid not in args:
                            continue
                        if call in ("read", "recvfrom") and not on_wal(spans, fd, t0):
                            got = readers
                        elif call == "pwrite64" and on_wal(spans, fd, t0):
                            got = writers
                        else:
                            continue
                        if eid not in got or t0 < got[eid][0]:
                            got[eid] = (t0, tid)
            seen += answers_after_commit(threads, tids, ids)[0]
        check_eq(sorted(readers), sorted(ids), "events read in the traces")
        check_eq(sorted(writers), sorted(ids), "events written to the WAL")
        other = [e for e in ids if readers[e][1] != writers[e][1]]
        check(not other, "%d of %d events written to the WAL by another thread "
              "than the one that read them (a hand-over), e.g. %r"
              % (len(other), len(ids), other[:2]))
        late = [e for e, ok in seen if not ok]
        check_eq(len(seen), len(ids), "accepted answers seen in the traces")
        check(not late, "accepted answer(s) without a WAL sync after their "
              "commit: %r" % late[:3])
    return run


def trace_parser():
    """The parser of the FastCGI traces, on a made-up process whose
    request thread read an event on fd 20 before the store opened its log
    as fd 20 (numbers are reused; on a loaded machine the late processing
    thread's log often takes a number a connection had), then read a
    second event cut in two by its reads: both answers are matched to
    their events, and each follows its commit's sync.  Before, every read
    on a number ever used by the log was skipped, and the answer had no
    event (a TypeError in the sort above)."""
    a, b = "evt_parse_a", "evt_parse_b"

    def rd(t, fd, data):
        return (t, t + 0.001, "read", '%d, "%s", 8192' % (fd, data), "9")

    def wr(t, fd, data, call="write"):
        return (t, t + 0.001, call, '%d, "%s", 99' % (fd, data), "9")
    acc = '\\"status\\":\\"accepted\\"'
    threads = {
        1: [rd(1.0, 20, '{\\"id\\": \\"%s\\"}' % a), (1.1, 1.2, "close", "20", "0"),
            wr(3.0, 21, acc),
            rd(4.0, 22, '{\\"id\\": \\"evt_pa'), rd(4.1, 22, 'rse_b\\"}'),
            wr(6.0, 22, acc)],
        2: [(2.0, 2.01, "openat", 'AT_FDCWD, "/s/events.db-wal", O_RDWR', "20"),
            wr(2.1, 20, "frame %s" % a, "pwrite64"), (2.2, 2.3, "fdatasync", "20", "0"),
            wr(5.0, 20, "frame %s" % b, "pwrite64"), (5.1, 5.2, "fdatasync", "20", "0")],
    }
    got, nsyncs = answers_after_commit(threads, [1, 2], [a, b])
    check_eq(got, [(a, True), (b, True)], "answers matched to their events")
    check_eq(nsyncs, 2, "WAL syncs")


def folder_syncs(lines, folder):
    """fsync or fdatasync calls on a descriptor opened on folder."""
    fds, n = set(), 0
    for ln in lines:
        m = re.search(r'openat\([^"]*"([^"]*)", ([^)]*)\) = (\d+)$', ln)
        if m and (m.group(1).rstrip("/") == folder or "O_DIRECTORY" in m.group(2)):
            fds.add(m.group(3))
            continue
        m = re.match(r'(?:\d+ +)?f(?:data)?sync\((\d+)\)', ln)
        if m and m.group(1) in fds:
            n += 1
    return n


def as_cgi(bindir):
    def run():
        tmp = os.path.abspath(os.path.join(bindir, "..", "dur-cgi-%d" % os.getpid()))
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        secret = "whsec_durability"
        try:
            db = os.path.join(tmp, "db", "events.db")
            for i in range(4):
                if i == 3:
                    # The last connection of another program deletes the
                    # log; the next one is a new file, whose entry must
                    # reach the disk too.
                    c = db_connect(db)
                    c.execute("SELECT count(*) FROM sqlite_master").fetchall()
                    c.close()
                    check(not os.path.exists(db + "-wal"), "-wal left")
                eid = "evt_dur_cgi_%d" % i
                body = stripe_body(eid)
                env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                       "REQUEST_METHOD": "POST",
                       "CONTENT_LENGTH": str(len(body)),
                       "HTTP_STRIPE_SIGNATURE": sign_stripe(secret, body),
                       "IDEMHOOK_DB": os.path.join(tmp, "db", "events.db"),
                       "IDEMHOOK_STRIPE_SECRET": secret}
                for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
                    if k in os.environ:
                        env[k] = os.environ[k]
                trace = os.path.join(tmp, "trace")
                p = subprocess.run(
                    ["strace", "-f", "-s", "256", "-e",
                     "trace=openat,fdatasync,fsync,write", "-o", trace,
                     os.path.join(bindir, "stripe.fcgi")],
                    input=body, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    env=env, timeout=30)
                check(b'"accepted"' in p.stdout, "CGI answer: %r" % p.stdout[-200:])
                with open(trace, errors="replace") as f:
                    lines = f.read().splitlines()
                a, s = accepted_after_sync(lines)
                check_eq((a, s), (1, 1), "CGI: (answers, answers after a WAL fdatasync)")
                # The log's folder was synced once, when the log was made
                # (delivery 0); SQLite's own sync did it again in every
                # process, a second disk flush per delivery.
                if i in (1, 2):
                    check_eq(folder_syncs(lines, os.path.join(tmp, "db")), 0,
                             "CGI delivery %d: syncs of the store's folder" % i)
                if i == 3:
                    check(folder_syncs(lines, os.path.join(tmp, "db")) >= 1,
                          "CGI delivery on a new log: the folder not synced")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return run


# A store's own file (not its -wal, -shm, -lock or -sync) and the
# writers' queue (<db>-lock), as a receiver opens them.
OPEN_RE = re.compile(r'openat\(AT_FDCWD, "([^"]+)", [^)]*\)\s+= (\d+)')
CLOSE_RE = re.compile(r'close\((\d+)\)')
FLOCK_RE = re.compile(r'flock\((\d+), (LOCK_[A-Z_|]+)\)\s+= 0')
SYNC_RE = re.compile(r'f(?:data)?sync\((\d+)\)')


def syncs_in_queue(tdir, db, since):
    """From strace -ff -ttt files in tdir: (syncs of the store's own file,
    db its names, after the epoch time since; those made by a thread that
    held its writers' queue then).  Descriptors are the process's, the
    queue per thread."""
    events = []
    for name in os.listdir(tdir):
        with open(os.path.join(tdir, name), errors="replace") as f:
            for line in f:
                ts, _, call = line.partition(" ")
                try:
                    events.append((float(ts), name, call))
                except ValueError:
                    continue
    events.sort()
    kind, held, total, inside = {}, set(), 0, 0
    for ts, thread, call in events:
        m = OPEN_RE.match(call)
        if m:
            path, fd = m.group(1), m.group(2)
            kind[fd] = ("db" if path in db else
                        "queue" if path in [d + "-lock" for d in db]
                        else None)
            continue
        m = CLOSE_RE.match(call)
        if m:
            kind.pop(m.group(1), None)
            continue
        m = FLOCK_RE.match(call)
        if m and kind.get(m.group(1)) == "queue":
            key = (thread, m.group(1))
            if "LOCK_EX" in m.group(2):
                held.add(key)
            elif "LOCK_UN" in m.group(2):
                held.discard(key)
            continue
        m = SYNC_RE.match(call)
        if m and kind.get(m.group(1)) == "db" and ts > since:
            total += 1
            if any(t == thread for t, _fd in held):
                inside += 1
    return total, inside


def checkpoint_outside_queue(bindir, servers):
    """Past SQLite's auto-checkpoint length, the checkpoint (the store's
    own file written and synced) runs after the commit has left the
    writers' queue, where it held up every other writer (Apache's 24
    processes)."""
    def run():
        tdir = os.path.abspath(os.path.join(
            bindir, "..", "strace-ckpt-%d" % os.getpid()))
        shutil.rmtree(tdir, ignore_errors=True)
        os.makedirs(tdir)
        wrap = ("%s -ff -ttt -e trace=openat,close,flock,fsync,fdatasync "
                "-o %s/t" % (shutil.which("strace"), tdir))
        srv = servers.add(Server(bindir, providers=["stripe"], wrap=wrap,
                                 max_procs=1, name="durability-ckpt"))
        srv.start()
        try:
            stem = "evt_ckpt_%d_" % os.getpid()
            check_eq(status_of(deliver(srv, stem + "first")), (200, "accepted"),
                     "first delivery")
            since = time.time()
            # A 64 KiB payload is about 16 more log pages: 70 events one
            # at a time pass 1,000 pages at least once.
            pad = "x" * 65536
            for i in range(70):
                body = ('{"id":"%s%d","object":"event","type":"invoice.paid",'
                        '"data":{"object":{"id":"in_1","metadata":{"pad":"%s"}}}}'
                        % (stem, i, pad)).encode()
                r = srv.post("/hooks/stripe", body, {
                    "Stripe-Signature": sign_stripe(srv.secrets["stripe"], body),
                    "Content-Type": "application/json"})
                check_eq(status_of(r), (200, "accepted"), "delivery %d" % i)
            db = [os.path.abspath(srv.db), os.path.realpath(srv.db)]
            srv.stop()
            total, inside = syncs_in_queue(tdir, db, since)
            check(total > 0, "no sync of %s after 70 deliveries: no "
                  "checkpoint ran" % db[0])
            check_eq(inside, 0, "syncs of the store's file (of %d) made while "
                     "their thread held the writers' queue" % total)
        finally:
            shutil.rmtree(tdir, ignore_errors=True)
    return run


def deliver(srv, eid):
    body = stripe_body(eid)
    secret = srv.secrets["stripe"]
    return srv.post("/hooks/stripe", body,
                    {"Stripe-Signature": sign_stripe(secret, body),
                     "Content-Type": "application/json"})


def rows_of(srv, eid):
    return srv.rows("stripe", eid)


def status_of(r):
    if isinstance(r, Exception) or r is None:
        return (None, None)
    try:
        return (r.status, (r.json() or {}).get("status"))
    except ValueError:
        return (r.status, None)


def killed_in_batch(bindir, servers, point):
    """A receiver killed (SIGKILL) while a batch is in flight: at the fault
    point before or after its commit, with concurrent deliveries queued.
    No 2xx may be without its row; every event ends with one row once the
    provider retries."""
    def run():
        tmp = os.path.abspath(os.path.join(bindir, "..", "kill-%s-%d" % (point, os.getpid())))
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        fired = os.path.join(tmp, "fired")
        srv = servers.add(Server(bindir, providers=["stripe"], max_procs=1,
                                 env={"IDEMHOOK_FAULT": point,
                                      "IDEMHOOK_FAULT_ONCE": fired},
                                 name="kill-" + point))
        srv.start()
        try:
            n = 16
            ids = ["evt_kill_%s_%d_%d" % (point, os.getpid(), i) for i in range(n)]
            results = parallel(n, lambda i: deliver(srv, ids[i]))
            check(os.path.exists(fired), "IDEMHOOK_FAULT=%s did not fire: build with "
                  "FAULTS=1 (SANITIZE=1 does)" % point)
            ok2xx = [ids[i] for i, r in enumerate(results)
                     if status_of(r)[0] is not None and 200 <= status_of(r)[0] < 300]
            lost = [e for e in ok2xx if len(rows_of(srv, e)) != 1]
            check(not lost, "2xx answers without their row: %r" % lost)
            check(len(ok2xx) < n, "the kill at %s cost no delivery its 2xx: "
                  "it did not land in a batch" % point)
            # The provider's retries: each event ends with exactly one row.
            for eid in ids:
                for _ in range(20):
                    st = status_of(deliver(srv, eid))
                    if st[0] == 200:
                        break
                    time.sleep(0.2)
                check_eq(st[0], 200, "retry of %s" % eid)
                check_eq(len(rows_of(srv, eid)), 1, "rows of %s" % eid)
        finally:
            srv.stop()
            shutil.rmtree(tmp, ignore_errors=True)
    return run


def killed_under_load(bindir, servers):
    """SIGKILL to the receiver at an arbitrary moment of a flood of
    deliveries: every 2xx answer has its row."""
    def run():
        srv = servers.add(Server(bindir, providers=["stripe"], max_procs=1,
                                 name="kill-load"))
        srv.start()
        try:
            stop = time.monotonic() + 2.0
            answers = []

            def client(i):
                k = 0
                while time.monotonic() < stop:
                    eid = "evt_flood_%d_%d_%d" % (os.getpid(), i, k)
                    k += 1
                    try:
                        answers.append((eid, status_of(deliver(srv, eid))))
                    except Exception:  # noqa: BLE001
                        answers.append((eid, (None, None)))
            ts = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(12)]
            for t in ts:
                t.start()
            time.sleep(0.8)
            pids = receiver_pids(srv)
            check(pids, "no receiver process found to kill")
            for pid in pids:
                try:
                    os.kill(pid, 9)
                except ProcessLookupError:
                    pass
            for t in ts:
                t.join(30)
            ok = [e for e, st in answers if st[0] is not None and 200 <= st[0] < 300]
            check(len(ok) > 0, "no delivery was accepted")
            # One query for all (a query per event is minutes on PostgreSQL).
            count = collections.Counter(r["event_id"] for r in srv.rows("stripe"))
            lost = [e for e in ok if count[e] != 1]
            check(not lost, "%d 2xx answers without their row, e.g. %r" % (len(lost), lost[:3]))
        finally:
            srv.stop()
    return run


def concurrent_duplicates(bindir, servers):
    """50 concurrent deliveries of one event into one process, whose
    threads put them in the same commits: 1 accepted, 49 duplicate, 1 row."""
    def run():
        srv = servers.add(Server(bindir, providers=["stripe"], max_procs=1,
                                 name="dup-batch"))
        srv.start()
        try:
            eid = "evt_dupbatch_%d" % os.getpid()
            body = stripe_body(eid)
            h = {"Stripe-Signature": sign_stripe(srv.secrets["stripe"], body),
                 "Content-Type": "application/json"}
            results = parallel(50, lambda i: srv.post("/hooks/stripe", body, h))
            counts = {}
            for r in results:
                counts[status_of(r)] = counts.get(status_of(r), 0) + 1
            check_eq(counts, {(200, "accepted"): 1, (200, "duplicate"): 49},
                     "answers to 50 concurrent deliveries of one event")
            rows = rows_of(srv, eid)
            check_eq(len(rows), 1, "rows")
            check_eq(rows[0].get("duplicates"), 49, "duplicates counted")
        finally:
            srv.stop()
    return run


def receiver_pids(srv):
    pids, todo = [], [srv.proc.pid]
    while todo:
        for p in harness._children_of(todo.pop()):
            todo.append(p)
            if harness.program_of(p).endswith("stripe.fcgi"):
                pids.append(p)
    return pids


def threads_setting(bindir, servers):
    """IDEMHOOK_THREADS=3 in worker mode: each receiver runs 3 request
    threads and its writer, and still answers concurrent deliveries (one
    writer on PostgreSQL too: IDEMHOOK_PG_WRITERS=1)."""
    def run():
        srv = servers.add(Server(bindir, providers=["stripe"], max_procs=1,
                                 env={"IDEMHOOK_THREADS": "3",
                                      "IDEMHOOK_PG_WRITERS": "1",
                                      "IDEMHOOK_MODE": "worker"},
                                 name="threads"))
        srv.start()
        try:
            ids = ["evt_thr_%d_%d" % (os.getpid(), i) for i in range(12)]
            results = parallel(12, lambda i: deliver(srv, ids[i]))
            check_eq([status_of(r) for r in results], [(200, "accepted")] * 12,
                     "answers with 3 threads")
            pids = receiver_pids(srv)
            check_eq(len(pids), 1, "receiver processes")
            check_eq(len(os.listdir("/proc/%d/task" % pids[0])), 4,
                     "threads of the receiver: 3 request threads and the writer")
        finally:
            srv.stop()
    return run


def bad_event_in_batch(bindir, servers):
    """One event whose insert fails in the store (a trigger refuses it)
    among good ones delivered at the same time: it alone gets 503 with
    Retry-After; the others are accepted and recorded."""
    def run():
        srv = servers.add(Server(bindir, providers=["stripe"], max_procs=1,
                                 name="bad-in-batch"))
        srv.start()
        try:
            first = "evt_first_%d" % os.getpid()
            check_eq(status_of(deliver(srv, first)), (200, "accepted"), "first delivery")
            if pg_backend():
                # PostgreSQL aborts the whole transaction on an error: only
                # the event's savepoint keeps the others.
                harness.psql(srv.db, "CREATE FUNCTION refuse_bad() RETURNS trigger"
                             " AS $$ BEGIN IF NEW.event_id LIKE 'evt_bad%' THEN"
                             " RAISE EXCEPTION 'refused by the test'; END IF;"
                             " RETURN NEW; END $$ LANGUAGE plpgsql;"
                             " CREATE TRIGGER refuse_bad BEFORE INSERT ON events"
                             " FOR EACH ROW EXECUTE FUNCTION refuse_bad()")
            else:
                c = db_connect(srv.db)
                c.execute("CREATE TRIGGER refuse_bad BEFORE INSERT ON events "
                          "WHEN NEW.event_id LIKE 'evt_bad%' "
                          "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END")
                c.commit()
                c.close()
            n = 20
            ids = ["evt_good_%d_%d" % (os.getpid(), i) for i in range(n)]
            ids[n // 2] = "evt_bad_%d" % os.getpid()
            results = parallel(n, lambda i: deliver(srv, ids[i]))
            for i, r in enumerate(results):
                st = status_of(r)
                if ids[i].startswith("evt_bad"):
                    check_eq(st[0], 503, "the refused event")
                    check(r.header("Retry-After") is not None, "503 without Retry-After")
                    check_eq(len(rows_of(srv, ids[i])), 0, "rows of the refused event")
                else:
                    check_eq(st, (200, "accepted"), "good event %s" % ids[i])
                    check_eq(len(rows_of(srv, ids[i])), 1, "rows of %s" % ids[i])
        finally:
            srv.stop()
    return run


def bad_switch_in_batch(bindir, servers):
    """One event whose switch fails in the store (a trigger refuses its
    effect) among good ones recorded at the same time, each processed in
    its recording transaction: a run goes without a savepoint per event
    (batch.c, record_many()) and, on the failure (on PostgreSQL, where the
    effect's insert is sent deferred, at the commit), is recorded again
    one savepoint each, the switch's refusal read before its release.  Every answer is 200 accepted; the refused event
    is recorded, not done and without effect; every other one is done
    with its one effect."""
    def run():
        srv = servers.add(Server(bindir, providers=["stripe"], max_procs=1,
                                 env={"IDEMHOOK_PG_WRITERS": "1"},
                                 name="bad-switch"))
        srv.start()
        try:
            first = "evt_swfirst_%d" % os.getpid()
            check_eq(status_of(deliver(srv, first)), (200, "accepted"), "first delivery")
            if pg_backend():
                harness.psql(srv.db, "CREATE FUNCTION refuse_effect() RETURNS"
                             " trigger AS $$ BEGIN IF EXISTS (SELECT 1 FROM"
                             " events WHERE id = NEW.event AND event_id LIKE"
                             " 'evt_swbad%') THEN RAISE EXCEPTION 'refused by"
                             " the test'; END IF; RETURN NEW; END $$ LANGUAGE"
                             " plpgsql; CREATE TRIGGER refuse_effect BEFORE"
                             " INSERT ON effects FOR EACH ROW EXECUTE FUNCTION"
                             " refuse_effect()")
            else:
                c = db_connect(srv.db)
                c.execute("CREATE TRIGGER refuse_effect BEFORE INSERT ON effects"
                          " WHEN (SELECT event_id FROM events WHERE id ="
                          " NEW.event) LIKE 'evt_swbad%' BEGIN"
                          " SELECT RAISE(ABORT, 'refused by the test'); END")
                c.commit()
                c.close()
            n = 20
            ids = ["evt_swgood_%d_%d" % (os.getpid(), i) for i in range(n)]
            ids[n // 2] = "evt_swbad_%d" % os.getpid()
            results = parallel(n, lambda i: deliver(srv, ids[i]))
            check_eq([status_of(r) for r in results], [(200, "accepted")] * n,
                     "answers")
            c = db_connect(srv.db)
            try:
                got = dict(c.execute(
                    "SELECT e.event_id, e.status || ':' || (SELECT count(*)"
                    " FROM effects f WHERE f.event = e.id) FROM events e"
                    " WHERE e.event_id LIKE 'evt_sw%'").fetchall())
            finally:
                c.close()
            for eid in ids:
                want = "done:1" if eid.startswith("evt_swgood") else None
                st = got.get(eid, "no row")
                if want is None:
                    check(st in ("failed:0", "processing:0", "dead:0"),
                          "the refused event: %s" % st)
                else:
                    check_eq(st, want, "status:effects of %s" % eid)
        finally:
            srv.stop()
    return run


def cases(tap, bindir, servers):
    tap.run("durability: the trace parser matches an answer to its event when the "
            "connection's descriptor later became the WAL's, and when a read cut "
            "its id in two", trace_parser)
    tap.run("durability: 50 concurrent deliveries of one event into one process: "
            "1 accepted, 49 duplicate, 1 row", concurrent_duplicates(bindir, servers))
    for point in ("before-commit", "after-commit"):
        tap.run("durability: receiver killed at %s with a batch in flight: no 2xx "
                "without its row, retries end with one row each" % point,
                killed_in_batch(bindir, servers, point))
    tap.run("durability: IDEMHOOK_THREADS=3: 3 request threads and a writer",
            threads_setting(bindir, servers))
    tap.run("durability: receiver SIGKILLed under a flood: no 2xx without its row",
            killed_under_load(bindir, servers))
    tap.run("durability: one event refused by the store in a batch of good "
            "ones: it alone gets 503", bad_event_in_batch(bindir, servers))
    tap.run("durability: one event whose switch the store refuses in a "
            "batch processed where it is recorded: all accepted, it alone "
            "not done", bad_switch_in_batch(bindir, servers))
    if strace_missing(tap, "durability"):
        return
    if pg_backend():
        # The write-ahead log is the server's there: the strace tests
        # below are SQLite's (see the module's docstring).
        return
    # The programs make themselves non-dumpable (no core, no ptrace by
    # their own user), so only root's strace can read what they write.
    why = "strace reads the memory of programs that made themselves non-dumpable"
    for mode in ("after-response", "worker"):
        tap.run_as_root("durability: FastCGI, %s mode: each of %d concurrent "
                        "accepted answers follows a WAL sync that started after "
                        "its event's commit; fewer syncs than events" % (mode, N), why,
                        through_lighttpd(bindir, servers, mode))
    tap.run_as_root("durability: FastCGI, %d deliveries one at a time: each recorded on "
                    "the thread that read it (no hand-over), answered after a WAL "
                    "sync begun after its commit" % ALONE, why,
                    alone_on_own_thread(bindir, servers))
    tap.run_as_root("durability: FastCGI, 70 deliveries of 64 KiB one at a time: the "
                    "checkpoint past 1,000 log pages syncs the store's file "
                    "outside the writers' queue", why,
                    checkpoint_outside_queue(bindir, servers))
    tap.run_as_root("durability: plain CGI: the accepted answer follows an fdatasync "
                    "of the WAL; the store's folder is synced only when the WAL "
                    "is new", why, as_cgi(bindir))


if __name__ == "__main__":
    sys.exit(suite_main("durability", cases))
