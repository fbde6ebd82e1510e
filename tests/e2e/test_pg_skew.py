#!/usr/bin/env python3
"""Hosts whose clocks disagree share one PostgreSQL store (issue 24,
item 14): leases are set and compared on the server's clock, so no host
takes over another's live lease.

A receiver (lighttpd, host A) records an event and runs its slow action
under a lease of 30 s.  While the action runs, `idemhook work --once` on
host B, whose wall clock is set off (IDEMHOOK_CLOCK_SKEW_MS, honoured by
the test builds only), looks for due events:

  1. B's clock 120 s ahead: before the fix B saw A's lease as expired and
     ran the action a second time;
  2. A's clock 120 s behind: A's lease ended, by the real clock, before it
     began; before the fix B took it over at once.

After the fix, B leaves the event alone in both cases: one run of the
action, one attempt, A's lease owner unchanged until A completes it.
Needs IH_PG_URI (tests/run.sh starts a server).  Usage: test_pg_skew.py BINDIR
"""

import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from harness import Server, check, check_eq, suite_main  # noqa: E402
import reliability as R  # noqa: E402
import test_processing as P  # noqa: E402

SKEW_MS = 120000
SLOW = ('echo "start $IDEMHOOK_EVENT_ID" >> "%(out)s"; sleep 4;'
        ' echo "end $IDEMHOOK_EVENT_ID" >> "%(out)s"')


def host_a(bindir, servers, tmp, skew_ms, name):
    out = os.path.join(tmp, name + ".out")
    env = {"IDEMHOOK_LEASE": "30", "IDEMHOOK_ACTION_TIMEOUT": "10",
           "IDEMHOOK_BUSY_TIMEOUT_MS": "900", "IDEMHOOK_RETRY_BASE_MS": "200",
           "IDEMHOOK_STRIPE_ACTION": "test.slow " + SLOW % {"out": out},
           "IDEMHOOK_CLOCK_SKEW_MS": str(skew_ms)}
    srv = servers.add(Server(bindir, providers=["stripe"], name=name,
                             db=harness.pg_new_db("ih_skew"), env=env))
    srv.start()
    return srv, out


def lines(path, eid):
    try:
        with open(path) as f:
            return [ln.split()[0] for ln in f if ln.split()[1:] == [eid]]
    except FileNotFoundError:
        return []


def skewed(bindir, servers, tmp, a_skew, b_skew, name):
    a, out = host_a(bindir, servers, tmp, a_skew, name)
    eid = R.new_eid("stripe", "skew")
    r = R.delivery(a, "stripe", eid=eid, body=R.body_for("stripe", eid, etype="test.slow")).post(a)
    check_eq(r.status, 200, "delivery to host A")
    P.wait_for("host A running the action",
               lambda: P.receiver_running_action(eid, "stripe.fcgi"), 10)
    row = a.rows("stripe", eid)[0]
    check_eq(row["status"], "processing", "status while A runs the action")
    owner = row["lease_owner"]
    print("# lease_until - real now: %.1f s (A's clock %+d s, B's %+d s)"
          % (row["lease_until"] / 1000 - time.time(), a_skew // 1000, b_skew // 1000))
    t0 = time.monotonic()
    R.work_once(bindir, a, {"IDEMHOOK_CLOCK_SKEW_MS": str(b_skew)})
    still_running = time.monotonic() - t0 < 3.5
    row2 = a.rows("stripe", eid)[0]
    print("# after B's worker: status %s, owner %s, attempts %d"
          % (row2["status"], "A's" if row2["lease_owner"] == owner else row2["lease_owner"],
             row2["attempts"]))
    check(still_running or row2["status"] == "done",
          "B's worker ran too long to tell (%.1f s)" % (time.monotonic() - t0))
    check_eq(lines(out, eid).count("start"), 1, "runs of the action started (B took it over)")
    P.wait_for("A to complete the event",
               lambda: a.rows("stripe", eid)[0]["status"] == "done", 20)
    row3 = a.rows("stripe", eid)[0]
    check_eq(row3["attempts"], 1, "attempts")
    check_eq(lines(out, eid), ["start", "end"], "action runs")
    check(not a.sanitizer_reports(), a.errorlog()[-1500:])


def run_cases(tap, bindir, servers):
    tmp = harness.tempfile.mkdtemp(prefix="ih-skew-")
    tap.run("host B's clock 120 s ahead: its worker leaves host A's live lease alone",
            skewed, bindir, servers, tmp, 0, SKEW_MS, "skewB")
    tap.run("host A's clock 120 s behind: its lease still holds against host B",
            skewed, bindir, servers, tmp, -SKEW_MS, 0, "skewA")
    harness.shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(suite_main("pg skew", run_cases, prefix=True))
