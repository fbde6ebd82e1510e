#!/usr/bin/env python3
"""make bench-pages: the per-event work of the real program, measured with
deterministic tools, so that a loaded machine does not blur it (issue 27).

stripe.fcgi (or --provider's program) runs behind lighttpd (the end-to-end
harness's launcher, one process), and this script sends it distinct, signed
~2 KB events of that provider, each of its own object, one at a time (so
each commit carries one event: the worst case, and the same every run),
waits until each is processed (after-response by default), then reports
per event:

  WAL pages, WAL bytes   pwrite64 calls of a page's size on the -wal
                         file and all bytes written to it (strace -f);
                         db bytes: checkpoints into the main file
  fsyncs                 fdatasync + fsync on any descriptor
  store pages            growth of the store file plus its WAL, in pages
  instructions           valgrind --tool=callgrind: two runs of W and W+N
                         events, the difference divided by N (start-up
                         and shutdown cancel out)
  work_*                 with --mode worker, the same counts for one
                         `idemhook work --once` that then processes all
                         W+N events (claim, switch, done: per event)
  db reads, wal reads    pread64 calls on the main file and on the -wal
                         file: pages SQLite's cache did not hold

With --store FILE the server starts on a copy of FILE, a SQLite store
already holding events (store_ceiling -F fills one, as make bench
BENCH_GROWTH does): what a grown store costs per event, against the same
run on an empty store (issue 27's growth target).  With --random-ids
the events' and objects' ids are random, as real ones are: numbered ids
share their indexes' pages, and so never miss the page cache.  With
--objects K the events update K objects in turn (a later event of an
object that exists, as a payment's succeeded event follows its created
one), instead of each inserting an object of its own.

With --pg URI the store is a fresh database on that PostgreSQL server,
and the count is of round trips instead of pages: pg_sends, the sendto
calls of the receiver on its connection (libpq sends each round trip's
messages in one call and waits for the answer), and pg_recvs; commits
counts the COMMITs sent (savepoints the SAVEPOINTs, per event), so
events per commit and sends per commit say what a batch of that size
costs.  pg_stmts counts the statements the server ran
(pg_stat_statements' calls, when the server loaded it: each costs the
server a statement's start and end, whether its answer was waited for
or not).  With --conc K, K clients send at once
(each its share, one at a time), so that commits carry several events:
how many each carries is the writer's to decide, and is reported.

With --reference TOOL (make bench-pages builds $(BUILD)/bench/tools/
reference.fcgi) the same counts are taken of the bench's reference, a
minimal receiver of the same design (tests/bench/reference.c; issue 40),
run as stripe.fcgi under the same shipped configuration.  Every run also
counts the system calls by name (syscalls, futex, writes: write and
writev; pwrites: pwrite64 on any file), per event, and lighttpd's own
(web_syscalls, web_writes: strace attached to the server for the measured
events; its CPU is in make bench's figures too).  --calls lists both
programs' system calls per event by name.

A warm-up of W events comes first in the strace run too, and only the
system calls after it count.  Usage:

  python3 tests/bench/pages.py --bin BUILD [--events N] [--warm W]
      [--mode after-response|worker] [--no-callgrind] [--pg URI]
      [--conc K] [--store FILE] [--reference TOOL] [--objects K]
      [--provider stripe|github|shopify|asaas|standard] [--calls]

Python 3 standard library; strace and valgrind.
"""

import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
sys.dont_write_bytecode = True
import harness  # noqa: E402

PAD = 1800      # bytes of metadata: a ~2 KB event, as make bench sends


RANDOM = [False]  # --random-ids
OBJECTS = [0]     # --objects: 0, an object of its own per event


def rid(prefix):
    """prefix and 24 random letters and digits, as Stripe's ids look."""
    al = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return prefix + "".join(al[b % len(al)] for b in os.urandom(24))


PROVIDER = ["stripe"]  # --provider


def iso(i):
    """Event i's time, as the providers that send ISO 8601 write it."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1700000000 + i))


def body(eid, i):
    """An event of its own object in --provider's shape, about 2 KB: a
    Stripe invoice.paid, a GitHub issue edited, a Shopify order updated,
    an Asaas PAYMENT_RECEIVED or a Standard Webhooks invoice.paid."""
    oid = rid("in_") if RANDOM[0] else "in_pages_%d" % (
        i % OBJECTS[0] if OBJECTS[0] else i)
    pad = {"pad": "x" * PAD}
    p = PROVIDER[0]
    if p == "github":
        ev = {"action": "edited",
              "issue": {"id": 1000000 + i, "number": i, "state": "open",
                        "updated_at": iso(i), "title": oid,
                        "body": "x" * PAD},
              "repository": {"id": 1, "full_name": "o/r"}}
    elif p == "shopify":
        ev = {"id": 820982911946154508 + i, "name": oid,
              "financial_status": "paid", "updated_at": iso(i),
              "created_at": iso(0), "total_price": "10.00",
              "note_attributes": pad}
    elif p == "asaas":
        ev = {"id": eid, "event": "PAYMENT_RECEIVED",
              "dateCreated": iso(i).replace("T", " ")[:19],
              "payment": {"object": "payment", "id": oid,
                          "status": "RECEIVED", "value": 100.0,
                          "description": "x" * PAD}}
    elif p == "standard":
        ev = {"type": "invoice.paid", "timestamp": iso(i),
              "data": {"id": oid, "status": "paid",
                       "amount_paid": 1000 + i, "metadata": pad}}
    else:
        ev = {"id": eid, "object": "event", "type": "invoice.paid",
              "created": 1700000000 + i, "livemode": False,
              "data": {"object": {"id": oid, "object": "invoice",
                                  "status": "paid",
                                  "amount_paid": 1000 + i,
                                  "metadata": pad}}}
    return json.dumps(ev, separators=(",", ":")).encode()


def headers(secret, eid, b):
    """The signed request's headers for --provider."""
    p = PROVIDER[0]
    h = {"Content-Type": "application/json"}
    if p == "github":
        h.update({"X-Hub-Signature-256": harness.sign_github(secret, b),
                  "X-GitHub-Event": "issues", "X-GitHub-Delivery": eid,
                  "X-GitHub-Hook-ID": "1"})
    elif p == "shopify":
        h.update({"X-Shopify-Hmac-Sha256": harness.sign_shopify(secret, b),
                  "X-Shopify-Topic": "orders/updated",
                  "X-Shopify-Webhook-Id": eid})
    elif p == "asaas":
        h["asaas-access-token"] = secret
    elif p == "standard":
        t = int(time.time())
        h.update({"webhook-id": eid, "webhook-timestamp": str(t),
                  "webhook-signature": harness.sign_standard(secret, eid, t,
                                                             b)})
    else:
        h["Stripe-Signature"] = harness.sign_stripe(secret, b)
    return h


def send(srv, prefix, first, n, conc=1):
    if conc > 1:
        errs = []

        def one(k):
            try:
                send(srv, "%s%d" % (prefix, k), first + k * n // conc,
                     (k + 1) * n // conc - k * n // conc)
            except BaseException as e:  # noqa: B902 (reported below)
                errs.append(e)
        ts = [threading.Thread(target=one, args=(k,)) for k in range(conc)]
        for th in ts:
            th.start()
        for th in ts:
            th.join()
        if errs:
            raise errs[0]
        return
    secret = srv.secrets[PROVIDER[0]]
    for i in range(first, first + n):
        eid = rid("evt_") if RANDOM[0] else "evt_%s_%d" % (prefix, i)
        b = body(eid, i)
        r = srv.post("/hooks/" + PROVIDER[0], b, headers(secret, eid, b))
        if r is None or r.status != 200 or b'"accepted"' not in r.body:
            raise SystemExit("event %s: %r" % (eid, r and (r.status, r.body)))


def first_id(srv):
    """The row id after those of a store's earlier events (--store)."""
    if srv.db.startswith("postgresql:") or not os.path.exists(srv.db) \
            or srv.bench_mode == "reference":
        return 0
    with harness.db_connect(srv.db, timeout=5, ro=True) as c:
        return c.execute("SELECT coalesce(max(id), 0) FROM events"
                         ).fetchone()[0]


def settled(srv, total, mode, timeout=120, after=0):
    """Waits until total events are recorded (row ids past after), and
    processed unless the mode is worker; then a moment for the last
    commit's syscalls."""
    want = "received" if mode in ("worker", "reference") else "done"
    col = "rowid" if mode == "reference" else "id"
    deadline = time.monotonic() + timeout
    n = 0
    while time.monotonic() < deadline:
        # A PostgreSQL store (a URI) is there already.
        if not harness.db_exists(srv.db):
            time.sleep(0.1)
            continue
        with harness.db_connect(srv.db, timeout=5, ro=True) as c:
            n = c.execute("SELECT count(*) FROM events WHERE status = ?"
                          " AND %s > ?" % col, (want, after)).fetchone()[0]
        if n >= total:
            time.sleep(0.5)
            return
        time.sleep(0.1)
    raise SystemExit("only %d of %d events %s" % (n, total, want))


def store_pages(db):
    if db.startswith("postgresql:"):
        return 0, 0
    size = sum(os.path.getsize(p) for p in (db, db + "-wal")
               if os.path.exists(p))
    with sqlite3.connect("file:%s?mode=ro" % db, uri=True) as c:
        page = c.execute("PRAGMA page_size").fetchone()[0]
    return size, page


def server(bindir, wrap, mode, name, pg=None, store=None):
    db = None
    if store:
        d = tempfile.mkdtemp(prefix="ih-pages-store-")
        db = os.path.join(d, "events.db")
        shutil.copyfile(store, db)
    elif pg:
        os.environ["IH_PG_URI"] = pg
        db = harness.pg_new_db("ih_pages")
    srv = harness.Server(bindir, providers=[PROVIDER[0]], wrap=wrap,
                         env={"IDEMHOOK_MODE": mode}, max_procs=1,
                         name=name, db=db)
    srv.bench_mode = mode
    return srv


def drop_copy(a, srv):
    """Removes the copy of --store the server ran on."""
    if a.store:
        shutil.rmtree(os.path.dirname(srv.db), ignore_errors=True)


def count_trace(text, start, end, page):
    """Per-call sums over text[start:end], the WAL and main file found by
    their openat anywhere before end: by descriptor alone, as the
    process's threads share them (strace -f names each thread: a file
    one thread opened is read and written by the writer thread)."""
    wal, main = set(), set()
    # One line each: a failed openat (EEXIST: the store existed) must not
    # run on into the next line's.
    for m in re.finditer(r'^(\d+) +openat\([^"\n]*"([^"\n]*)"[^\n]*\) = '
                         r'(\d+)$', text[:end], re.M):
        if m.group(2).endswith("-wal"):
            wal.add(m.group(3))
        elif m.group(2).endswith(".db"):
            main.add(m.group(3))
    out = {"wal_pages": 0, "wal_bytes": 0, "db_bytes": 0, "fsyncs": 0,
           "pg_sends": 0, "pg_recvs": 0, "commits": 0, "savepoints": 0,
           "db_reads": 0, "wal_reads": 0, "syscalls": 0, "futex": 0,
           "writes": 0, "pwrites": 0, "calls": {}}
    for ln in text[start:end].splitlines():
        m = re.match(r'(\d+) +(\w+)\(', ln)
        if m:
            out["syscalls"] += 1
            out["futex"] += m.group(2) == "futex"
            out["writes"] += m.group(2) in ("write", "writev")
            out["pwrites"] += m.group(2) == "pwrite64"
            out["calls"][m.group(2)] = out["calls"].get(m.group(2), 0) + 1
        m = re.match(r'(\d+) +(\w+)\((\d+)(.*)\) += (-?\d+)', ln)
        if not m:
            continue
        pid, call, fd, rest, ret = m.groups()
        if call in ("fsync", "fdatasync"):
            out["fsyncs"] += 1
        elif call == "sendto" and int(ret) > 0:
            out["pg_sends"] += 1
            out["commits"] += rest.count("COMMIT\\0")
            out["savepoints"] += rest.count("SAVEPOINT ih\\0")
        elif call == "recvfrom" and int(ret) > 0:
            out["pg_recvs"] += 1
        elif call == "pwrite64" and fd in wal:
            out["wal_bytes"] += int(ret)
            out["wal_pages"] += int(ret) == page
        elif call == "pwrite64" and fd in main:
            out["db_bytes"] += int(ret)
        elif call == "pread64" and fd in main:
            out["db_reads"] += 1
        elif call == "pread64" and fd in wal:
            out["wal_reads"] += 1
    return out


def work_run(a, srv, page):
    """Worker mode: idemhook work --once processes what the receiver
    recorded, under strace; its counts per event."""
    tdir = tempfile.mkdtemp(prefix="ih-pages-work-")
    trace = os.path.join(tdir, "trace")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "IDEMHOOK_DB": srv.db}
    subprocess.run([shutil.which("strace"), "-f", "-qq", "-s", "0", "-e",
                    "trace=openat,pread64,pwrite64,write,fsync,fdatasync",
                    "-o",
                    trace, os.path.join(a.bin, "idemhook"), "work",
                    "--once"], env=env, check=True, timeout=600,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(trace, errors="replace") as f:
        text = f.read()
    shutil.rmtree(tdir, ignore_errors=True)
    out = count_trace(text, 0, len(text), page)
    out.pop("calls")
    return {"work_" + k: v / (a.warm + a.events) for k, v in out.items()}


def web_calls(path, start, end):
    """lighttpd's system calls in its trace's [start, end): by name."""
    calls = {}
    with open(path, errors="replace") as f:
        f.seek(start)
        text = f.read(end - start)
    for m in re.finditer(r'^(?:\d+ +)?(\w+)\(', text, re.M):
        calls[m.group(1)] = calls.get(m.group(1), 0) + 1
    return calls


def web_trace(srv, path):
    """strace attached to the running lighttpd (the process group's
    leader), writing to path; returns the strace process once it is."""
    p = subprocess.Popen([shutil.which("strace"), "-f", "-qq", "-s", "0",
                          "-o", path, "-p", str(srv.proc.pid)],
                         stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.05)
    # Attached once the first call is written (lighttpd wakes each second).
    while (os.path.exists(path) and os.path.getsize(path) == 0
           and time.monotonic() < deadline):
        time.sleep(0.05)
    return p


def strace_run(a):
    tdir = tempfile.mkdtemp(prefix="ih-pages-")
    trace = os.path.join(tdir, "trace")
    # On PostgreSQL the messages are kept, to count the COMMITs.
    # Every call is traced, so that all of them are counted.
    wrap = ("%s -f -qq -s %d -o %s" % (shutil.which("strace"),
                                       1 << 20 if a.pg else 0, trace))
    srv = server(a.bin, wrap, a.mode, "pages-strace", a.pg, a.store)
    web = os.path.join(tdir, "web")
    wp = None
    try:
        srv.start()
        settings_aged(srv)
        base = first_id(srv)
        wp = web_trace(srv, web)
        send(srv, "warm", 0, a.warm)
        settled(srv, a.warm, a.mode, after=base)
        size0, page = store_pages(srv.db)
        mark = os.path.getsize(trace)
        wmark = os.path.getsize(web)
        stmts = pg_statements(srv, reset=True) if a.pg else None
        send(srv, "run", a.warm, a.events, a.conc)
        settled(srv, a.warm + a.events, a.mode, after=base)
        if stmts is not None:
            stmts = pg_statements(srv)
        size1, _ = store_pages(srv.db)
        end = os.path.getsize(trace)
        wend = os.path.getsize(web)
        work = work_run(a, srv, page) if a.mode == "worker" else {}
    finally:
        if wp is not None:
            wp.terminate()
            wp.wait()
        srv.stop()
        srv.cleanup()
        drop_copy(a, srv)
    with open(trace, errors="replace") as f:
        text = f.read()
    wcalls = web_calls(web, wmark, wend)
    shutil.rmtree(tdir, ignore_errors=True)
    n = a.events
    out = count_trace(text, mark, end, page)
    calls = out.pop("calls")
    res = {k: v / n for k, v in out.items()}
    res["calls"] = {k: v / n for k, v in calls.items()}
    res["web_calls"] = {k: v / n for k, v in wcalls.items()}
    res["web_syscalls"] = sum(wcalls.values()) / n
    res["web_writes"] = (wcalls.get("write", 0) + wcalls.get("writev", 0)) / n
    if page:
        res["store_pages"] = (size1 - size0) / page / n
    res["page_size"] = page
    if a.pg and stmts is not None:
        res["pg_stmts"] = stmts / n
    res.update(work)
    return res


def pg_statements(srv, reset=False):
    """The statements the server ran in srv's database since the last
    reset (pg_stat_statements' calls, which count a deferred statement as
    one as well as a waited one), or None when the server did not load
    pg_stat_statements (make bench-pg-trips loads it when installed).
    The harness's own reads (its row_to_json wrapper) are left out."""
    try:
        if reset:
            harness.psql(srv.db, "CREATE EXTENSION IF NOT EXISTS "
                         "pg_stat_statements")
            harness.psql(srv.db, "SELECT pg_stat_statements_reset()")
            return 0
        out = harness.psql(srv.db, "SELECT coalesce(sum(calls), 0) FROM "
                           "pg_stat_statements WHERE dbid = (SELECT oid "
                           "FROM pg_database WHERE datname = "
                           "current_database()) AND query NOT LIKE "
                           "'%pg_stat_statements%' AND query NOT LIKE "
                           "'SELECT row_to_json(q)%'")
        return int(out.strip())
    except harness.PgError:
        return None


def settings_aged(srv):
    """Waits until the server's settings files (the harness writes them
    in <tmp>/etc) are over 2 s old: a file changed that recently is read
    again at each request until then (config_file.h), which an
    installation pays only after an edit, never per event; a measured
    run started at once would count it (make bench, callgrind here)."""
    etc = os.path.join(srv.tmp, "etc")
    newest = 0
    for root, _, files in os.walk(etc):
        for f in files:
            st = os.stat(os.path.join(root, f))
            newest = max(newest, st.st_mtime, st.st_ctime)
    age = time.time() - newest
    if age < 2.2:
        time.sleep(2.2 - age)


def callgrind_total(a, n):
    tdir = tempfile.mkdtemp(prefix="ih-pages-cg-")
    wrap = ("%s --tool=callgrind --dump-instr=no --callgrind-out-file=%s/cg.%%p"
            % (shutil.which("valgrind"), tdir))
    srv = server(a.bin, wrap, a.mode, "pages-cg", a.pg, a.store)
    try:
        srv.start()
        settings_aged(srv)
        base = first_id(srv)
        send(srv, "cg", 0, n, a.conc)
        settled(srv, n, a.mode, timeout=600, after=base)
    finally:
        srv.stop()
        srv.cleanup()
        drop_copy(a, srv)
    if a.keep_callgrind:
        os.makedirs(a.keep_callgrind, exist_ok=True)
        for f in os.listdir(tdir):
            shutil.copy(os.path.join(tdir, f), os.path.join(
                a.keep_callgrind, "%d.%s" % (n, f)))
    total = 0
    for f in os.listdir(tdir):
        with open(os.path.join(tdir, f)) as fh:
            for ln in fh:
                if ln.startswith("totals:") or ln.startswith("summary:"):
                    total = max(total, int(ln.split()[1]))
    shutil.rmtree(tdir, ignore_errors=True)
    if total == 0:
        raise SystemExit("callgrind wrote no totals (did the program exit?)")
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--events", type=int, default=200)
    ap.add_argument("--warm", type=int, default=20)
    ap.add_argument("--mode", default="after-response")
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("--conc", type=int, default=1,
                    help="clients sending at once (default 1)")
    ap.add_argument("--pg", metavar="URI",
                    help="a PostgreSQL server (tests/pg_cluster.sh start"
                    " DIR prints one): count its round trips")
    ap.add_argument("--store", metavar="FILE",
                    help="start from a copy of this SQLite store (one"
                    " that store_ceiling -F filled)")
    ap.add_argument("--reference", metavar="TOOL",
                    help="count the bench's reference receiver (tests/"
                    "bench/reference.c, built as TOOL) instead")
    ap.add_argument("--keep-callgrind", metavar="DIR",
                    help="copy callgrind's output files here (named"
                    " <events>.cg.<pid>) for callgrind_annotate")
    ap.add_argument("--provider", default="stripe",
                    choices=("stripe", "github", "shopify", "asaas",
                             "standard"),
                    help="whose program and events (default stripe)")
    ap.add_argument("--random-ids", action="store_true",
                    help="random event and object ids (as a store of"
                    " real events has them), not numbered ones that"
                    " share their index pages")
    ap.add_argument("--objects", type=int, default=0, metavar="K",
                    help="the events update K objects in turn (each"
                    " newer than the last), not one new object each"
                    " (Stripe, Asaas and Standard Webhooks' ids)")
    ap.add_argument("--calls", action="store_true",
                    help="list the receiver's and lighttpd's system calls"
                    " per event by name")
    a = ap.parse_args()
    RANDOM[0] = a.random_ids
    OBJECTS[0] = a.objects
    PROVIDER[0] = a.provider
    if a.reference and a.provider != "stripe":
        ap.error("--reference receives Stripe's events only")
    a.bin = os.path.abspath(a.bin)
    refdir = None
    if a.reference:
        refdir = tempfile.mkdtemp(prefix="ih-pages-ref-")
        os.chmod(refdir, 0o755)
        shutil.copy(a.reference, os.path.join(refdir, "stripe.fcgi"))
        a.bin, a.mode = refdir, "reference"
    try:
        measure(a)
    finally:
        if refdir:
            shutil.rmtree(refdir, ignore_errors=True)


def measure(a):
    res = strace_run(a)
    if not a.no_callgrind:
        lo = callgrind_total(a, a.warm)
        hi = callgrind_total(a, a.warm + a.events)
        res["instructions"] = (hi - lo) / a.events
    print("%s, %s, %d events %s after %d warm-up, per event:"
          % (a.provider, a.mode, a.events, "one at a time" if a.conc == 1 else
             "from %d clients at once" % a.conc, a.warm))
    keys = ("pg_sends", "pg_recvs", "pg_stmts", "savepoints") if a.pg else (
        "wal_pages", "wal_bytes", "db_bytes", "fsyncs", "store_pages",
        "db_reads", "wal_reads")
    keys += ("syscalls", "futex", "writes", "pwrites", "web_syscalls",
             "web_writes")
    for k in keys + ("instructions", "work_wal_pages", "work_wal_bytes",
              "work_db_bytes", "work_fsyncs", "work_db_reads"):
        if k in res:
            print("  %-13s %12.1f" % (k, res[k]))
    if a.calls:
        for who, key in (("receiver", "calls"), ("lighttpd", "web_calls")):
            print("  %s's system calls per event:" % who)
            for k, v in sorted(res[key].items(), key=lambda kv: -kv[1]):
                if v >= 0.005:
                    print("    %-13s %10.2f" % (k, v))
    if not a.pg:
        print("  (page size %d)" % res["page_size"])
    elif res["commits"] > 0:
        print("  %-13s %12.2f" % ("events/commit", 1 / res["commits"]))
        print("  %-13s %12.2f" % ("sends/commit",
                                  res["pg_sends"] / res["commits"]))
        if "pg_stmts" in res:
            print("  %-13s %12.2f" % ("stmts/commit",
                                      res["pg_stmts"] / res["commits"]))


if __name__ == "__main__":
    main()
