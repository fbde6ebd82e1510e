#!/usr/bin/env python3
"""make bench-pg-cost: the PostgreSQL server's instructions per event,
counted with callgrind, so that a loaded machine does not blur them
(issue 40, target 5).

A throwaway cluster (tests/pg_cluster.sh's settings, autovacuum off) runs
under valgrind --tool=callgrind, which follows the postmaster's forks, so
that each backend writes its own count when it exits.  stripe.fcgi (or
--provider's program) runs behind lighttpd, as make bench-pages runs it,
on a fresh database of that cluster, and is sent W events one at a time
(--conc K: from K clients), then stopped; the same again with W + N
events.  The instructions of the receiver's own backends (those connected
to its database when it stops, the harness's reads left out), the second
run's less the first's, divided by N, are the server's work per event:
start-up and shutdown cancel out.  With --statements the cluster loads
pg_stat_statements, and each statement's calls per event are printed
(pg_stat_statements' own work is then in the count).

Usage:

  python3 tests/bench/pg_cost.py --bin BUILD [--events N] [--warm W]
      [--conc K] [--objects K] [--statements] [--keep DIR]

Python 3 standard library; valgrind and the PostgreSQL server.
"""

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
sys.dont_write_bytecode = True
import harness  # noqa: E402
import pages  # noqa: E402

PORT = "5439"


def bindir():
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                  key=lambda d: [int(x) for x in d.split("/")[4].split(".")])
    if not dirs:
        raise SystemExit("PostgreSQL server not installed (make deps)")
    return dirs[-1]


def as_owner(argv):
    return ["runuser", "-u", "postgres", "--"] + argv if os.getuid() == 0 \
        else argv


def cluster_start(d, statements):
    """initdb in d and the postmaster under callgrind; returns (proc,
    URI)."""
    os.chmod(d, 0o755)
    os.makedirs(os.path.join(d, "cg"))
    if os.getuid() == 0:
        shutil.chown(d, "postgres")
        shutil.chown(os.path.join(d, "cg"), "postgres")
    b = bindir()
    subprocess.run(as_owner([b + "/initdb", "-D", d + "/data", "-A", "trust",
                             "-U", "ih", "-E", "UTF8", "--no-sync"]),
                   check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    opts = ["-k", d, "-c", "listen_addresses=", "-p", PORT,
            "-c", "max_connections=100", "-c", "shared_buffers=32MB",
            "-c", "autovacuum=off"]
    if statements:
        opts += ["-c", "shared_preload_libraries=pg_stat_statements",
                 "-c", "pg_stat_statements.track_planning=on"]
    log = open(os.path.join(d, "server.log"), "w")
    proc = subprocess.Popen(as_owner(
        ["valgrind", "--tool=callgrind", "--dump-instr=no",
         "--callgrind-out-file=%s/cg/cg.%%p" % d,
         b + "/postgres", "-D", d + "/data"] + opts),
        stdout=log, stderr=subprocess.STDOUT)
    uri = "postgresql:///postgres?host=%s&port=%s&user=ih" % (d, PORT)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            harness.psql(uri, "SELECT 1")
            return proc, uri
        except harness.PgError:
            time.sleep(1)
    proc.kill()
    raise SystemExit("the cluster did not start: %s/server.log" % d)


def totals(path):
    """The count in a backend's finished callgrind file (its last line,
    totals:, is written last), or None."""
    with open(path) as fh:
        for ln in fh:
            if ln.startswith("totals:"):
                return int(ln.split()[1])
    return None


def run(a, d, n):
    """The receiver's backends' instructions for n events, and the
    statements' calls (pg_stat_statements) when loaded."""
    srv = pages.server(a.bin, None, "after-response", "pgcost", a.uri)
    pids = []
    stmts = []
    try:
        srv.start()
        pages.settings_aged(srv)
        pages.send(srv, "cg", 0, n, a.conc)
        pages.settled(srv, n, "after-response", timeout=900)
        pids = [int(x) for x in harness.psql(
            srv.db, "SELECT pid FROM pg_stat_activity WHERE datname ="
            " current_database() AND pid <> pg_backend_pid()").split()]
        if a.statements:
            stmts = harness.psql(
                srv.db, "SELECT calls, plans, round(total_exec_time::numeric, 1),"
                " round(total_plan_time::numeric, 1), left(regexp_replace("
                "query, '\\s+', ' ', 'g'), 90) FROM pg_stat_statements"
                " WHERE dbid = (SELECT oid FROM pg_database WHERE datname ="
                " current_database()) AND query NOT LIKE 'SELECT row_to%'"
                " AND query NOT LIKE '%pg_stat_activity%'"
                " ORDER BY calls DESC, query").splitlines()
            harness.psql(srv.db, "SELECT pg_stat_statements_reset()")
    finally:
        srv.stop()
        srv.cleanup()
    counts = []
    for pid in pids:
        f = "%s/cg/cg.%d" % (d, pid)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            t = totals(f) if os.path.exists(f) else None
            if t is not None:
                break
            time.sleep(0.5)
        else:
            raise SystemExit("no count from backend %d" % pid)
        counts.append(t)
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
            shutil.copy(f, os.path.join(a.keep, "%d.cg.%d" % (n, pid)))
    return sorted(counts, reverse=True), stmts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--events", type=int, default=100)
    ap.add_argument("--warm", type=int, default=20)
    ap.add_argument("--conc", type=int, default=1)
    ap.add_argument("--objects", type=int, default=0, metavar="K",
                    help="the events update K objects in turn")
    ap.add_argument("--statements", action="store_true",
                    help="load pg_stat_statements and print each"
                    " statement's calls per event")
    ap.add_argument("--keep", metavar="DIR",
                    help="copy the backends' callgrind files here")
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    pages.OBJECTS[0] = a.objects
    d = tempfile.mkdtemp(prefix="ih-pgcost-")
    proc = None
    try:
        proc, uri = cluster_start(d, a.statements)
        os.environ["IH_PG_URI"] = uri
        a.uri = uri
        if a.statements:
            harness.psql(uri, "CREATE EXTENSION pg_stat_statements")
            harness.psql("postgresql:///template1?host=%s&port=%s&user=ih"
                         % (d, PORT), "CREATE EXTENSION pg_stat_statements")
        lo, _ = run(a, d, a.warm)
        hi, stmts = run(a, d, a.warm + a.events)
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(d, ignore_errors=True)
    print("%s, %d events %s after %d warm-up; the server, per event:"
          % (pages.PROVIDER[0], a.events, "one at a time" if a.conc == 1
             else "from %d clients at once" % a.conc, a.warm))
    print("  instructions  %12.1f  all its backends (%d and %d)"
          % ((sum(hi) - sum(lo)) / a.events, len(lo), len(hi)))
    if a.conc == 1 and lo and hi:
        # The writer's backend does the most; the others' work (the
        # processing thread's polls) goes with time, not with events.
        print("  instructions  %12.1f  the busiest backend (the writer's)"
              % ((hi[0] - lo[0]) / a.events))
    if stmts:
        n = a.warm + a.events
        print("  statements (calls and plans per event, exec ms, plan ms, query):")
        for ln in stmts:
            calls, plans, ex, pl, q = ln.split("|", 4)
            print("  %6.2f %6.2f %9s %7s  %s" % (int(calls) / n,
                                               int(plans) / n, ex, pl, q))


if __name__ == "__main__":
    main()
