#!/usr/bin/env python3
"""idemhook copy --to URI (issue 16): a SQLite store filled through the
real endpoints is copied into PostgreSQL while the receivers keep
writing; a second run copies what arrived meanwhile and nothing twice; a
third copies nothing.  Then, with IDEMHOOK_DB switched to PostgreSQL,
`idemhook work` processes exactly the events the source had not
processed, each once, and the action ran once per event over both stores.
The password in the URI is never printed.

Needs IH_PG_URI (tests/run.sh starts a server).  Usage: test_pg_copy.py BINDIR
"""

import json
import os
import subprocess
import sys
import threading

FIRST = 150     # delivered and processed before the copy
LATE = 80       # delivered while the first copy runs

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from harness import (Server, Servers, Tap, bin_dir, check, check_eq,  # noqa: E402
                     install_signal_cleanup)
import reliability as R  # noqa: E402


def idemhook(bindir, srv, db, *args):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IDEMHOOK_DB": db}
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
        if k in os.environ:
            env[k] = os.environ[k]
    env.update(srv.env)
    env["IDEMHOOK_STRIPE_SECRET"] = srv.secrets["stripe"]
    p = subprocess.run([os.path.join(bindir, "idemhook")] + list(args), env=env,
                       capture_output=True, timeout=300)
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    check("secretpw" not in out + err, "idemhook %s printed the password" % (args,))
    check_eq(p.returncode, 0, "idemhook %s exit status (%s)" % (args, err[-500:]))
    return out


def copy_case(bindir, servers, tmp):
    log = os.path.join(tmp, "actions.log")
    srv = servers.add(Server(bindir, providers=["stripe"], name="copysrc",
                             env=dict(R.action_env(log, ["stripe"]),
                                      IDEMHOOK_MODE="worker")))
    srv.start()
    first = [R.new_eid("stripe", "c%d" % i) for i in range(FIRST)]
    for e in first:
        r = R.delivery(srv, "stripe", eid=e).post(srv)
        check_eq(r.status, 200, "delivery")
    # Half are processed by the source's worker before the move.
    out = idemhook(bindir, srv, srv.db, "work", "--once")
    check("processed %d event(s)" % FIRST in out, "work on the source: %r" % out[-200:])
    late = []

    def keep_delivering():
        for i in range(LATE):
            e = R.new_eid("stripe", "late%d" % i)
            r = R.delivery(srv, "stripe", eid=e).post(srv)
            if r.status == 200:
                late.append(e)

    dst = harness.pg_new_db("ih_copy")
    shown = dst + "&password=secretpw"   # trust: the password is not asked for
    t = threading.Thread(target=keep_delivering)
    t.start()
    s1 = json.loads(idemhook(bindir, srv, srv.db, "copy", "--to", shown, "--json"))
    t.join(120)
    check("***" in s1["to"], "summary location not redacted: %r" % s1["to"])
    check_eq(s1["events"]["copied"], s1["events"]["read"], "first run: every event read copied")
    check(s1["events"]["read"] >= FIRST, "first run read %d" % s1["events"]["read"])
    check_eq(s1["attempts"]["copied"], FIRST, "attempts copied")
    check_eq(s1["effects"]["copied"], FIRST, "effects copied")
    total = FIRST + len(late)
    s2 = json.loads(idemhook(bindir, srv, srv.db, "copy", "--to", dst, "--json"))
    check_eq(s2["events"]["read"], total, "second run: events read")
    check_eq(s1["events"]["copied"] + s2["events"]["copied"], total,
             "events copied over both runs")
    check_eq(s2["attempts"]["copied"] + s2["effects"]["copied"], 0,
             "attempts and effects copied twice")
    text = idemhook(bindir, srv, srv.db, "copy", "--to", dst)
    check("%d read, 0 copied, %d already there" % (total, total) in text,
          "third run: %r" % text)
    rows = R.query(dst, "SELECT status, count(*) FROM events GROUP BY status")
    by = dict((s, n) for s, n in rows)
    check_eq(by.get("done"), FIRST, "done events in PostgreSQL")
    check_eq(by.get("received"), len(late), "pending events in PostgreSQL")
    # Switched: the PostgreSQL store's worker takes exactly what was left.
    out = idemhook(bindir, srv, dst, "work", "--once")
    check("processed %d event(s)" % len(late) in out, "work on PostgreSQL: %r" % out[-200:])
    out = idemhook(bindir, srv, dst, "work", "--once")
    check("processed 0 event(s)" in out, "a second work: %r" % out[-200:])
    runs = R.action_runs(log)
    check_eq(len(runs), total, "events whose action ran")
    check(all(v == 1 for v in runs.values()), "an action ran twice: %r"
          % [k for k, v in runs.items() if v != 1][:3])
    stats = json.loads(idemhook(bindir, srv, dst, "stats", "--json"))
    check(stats, "stats --json on PostgreSQL: %r" % stats)


def main():
    tap = Tap("pg copy: ")
    bindir = bin_dir()
    servers = Servers()
    install_signal_cleanup(servers)
    tmp = harness.tempfile.mkdtemp(prefix="ih-copy-")
    with servers:
        tap.run("copy a SQLite store filled through the endpoints into PostgreSQL while "
                "receivers write; again: only the new ones; work there processes the "
                "rest once", copy_case, bindir, servers, tmp)
    harness.shutil.rmtree(tmp, ignore_errors=True)
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
