#!/usr/bin/env python3
"""PostgreSQL stopped in the middle of a load (issue 16): while it is down
every delivery is answered 503 with Retry-After, never 2xx; once it is
back, deliveries are accepted again by the same receivers (lighttpd is not
restarted); every event that was answered 200 is in the table.

The test runs its own throwaway cluster (tests/pg_cluster.sh), so stopping
it disturbs no other test.  Usage: test_pg_restart.py BINDIR
"""

import os
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from harness import (Server, Servers, Tap, bin_dir, check, check_eq,  # noqa: E402
                     install_signal_cleanup)
import reliability as R  # noqa: E402

CLUSTER = os.path.join(harness.REPO, "tests", "pg_cluster.sh")


def cluster(cmd, d):
    p = subprocess.run([CLUSTER, cmd, d], capture_output=True, timeout=120)
    if p.returncode != 0:
        raise harness.HarnessError("pg_cluster.sh %s: %s" % (cmd, p.stderr.decode()[-800:]))
    return p.stdout.decode().strip()


def restart_case(bindir, servers, d):
    admin = cluster("start", d)
    os.environ["IH_PG_URI"] = admin
    db = harness.pg_new_db("ih_restart")
    srv = servers.add(Server(bindir, providers=["stripe"], name="restart", db=db,
                             env={"IDEMHOOK_BUSY_TIMEOUT_MS": "1000"}))
    srv.start()
    answers, lock = [], threading.Lock()
    phase = {"now": "before"}
    stop = threading.Event()

    def sender():
        while not stop.is_set():
            eid = R.new_eid("stripe", "rs")
            r = R.delivery(srv, "stripe", eid=eid).post(srv)
            with lock:
                answers.append((phase["now"], eid, r.status, r.header("Retry-After")))

    threads = [threading.Thread(target=sender, daemon=True) for _ in range(6)]
    for t in threads:
        t.start()
    try:
        time.sleep(1.0)
        phase["now"] = "stopping"
        cluster("pause", d)
        phase["now"] = "down"
        time.sleep(1.5)
        phase["now"] = "starting"
        cluster("resume", d)
        phase["now"] = "after"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with lock:
                ok_after = [a for a in answers if a[0] == "after" and a[2] == 200]
            if len(ok_after) >= 20:
                break
            time.sleep(0.2)
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    by = {}
    for ph, _e, st, _ra in answers:
        by.setdefault(ph, {}).setdefault(st, 0)
        by[ph][st] += 1
    print("# answers by phase and status: %r" % by)
    bad = [a for a in answers if a[2] not in (200, 503)]
    check(not bad, "answers other than 200/503: %r" % bad[:5])
    down = [a for a in answers if a[0] == "down"]
    check(down, "no delivery while the server was down")
    check(all(a[2] == 503 for a in down), "a 2xx while the server was down: %r"
          % [a for a in down if a[2] != 503][:3])
    no_ra = [a for a in answers if a[2] == 503 and not (a[3] or "").strip().isdigit()]
    check(not no_ra, "503 without a numeric Retry-After: %r" % no_ra[:3])
    check(by.get("before", {}).get(200, 0) > 0, "nothing accepted before the stop")
    check(by.get("after", {}).get(200, 0) >= 20,
          "deliveries not accepted again after the restart: %r" % by.get("after"))
    accepted = {e for _p, e, st, _ra in answers if st == 200}
    stored = {r[0] for r in R.query(db, "SELECT event_id FROM events")}
    missing = accepted - stored
    check(not missing, "%d events answered 200 are not in the table, e.g. %r"
          % (len(missing), sorted(missing)[:3]))
    check(not srv.sanitizer_reports(), srv.errorlog()[-2000:])


def main():
    tap = Tap("pg restart: ")
    bindir = bin_dir()
    servers = Servers()
    install_signal_cleanup(servers)
    d = tempfile.mkdtemp(prefix="ih-pgr-")
    keep = os.environ.get("IH_PG_URI")
    try:
        with servers:
            tap.run("PostgreSQL stopped mid-load: 503 + Retry-After, never 2xx; accepted "
                    "again after its restart without restarting lighttpd; every 200 stored",
                    restart_case, bindir, servers, d)
    finally:
        subprocess.run([CLUSTER, "stop", d], capture_output=True, timeout=120)
        if keep is not None:
            os.environ["IH_PG_URI"] = keep
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
