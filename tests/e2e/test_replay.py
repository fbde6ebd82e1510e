#!/usr/bin/env python3
"""End-to-end test of a bulk replay over many large events (issue 24,
item 7): `idemhook replay` makes them due again in bounded batches, each
its own short transaction, so that a receiver recording meanwhile, with a
busy timeout of 1.5 s, is never refused; every event is then processed
exactly once more. SQLite, or PostgreSQL with IH_DB_BACKEND=pg.

Usage: test_replay.py BINDIR   (or IH_BIN=BINDIR test_replay.py)
"""

import os
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (SANITIZER_ENV, Server, check, check_eq,  # noqa: E402
                     parallel, suite_main)
import cases  # noqa: E402
import test_stripe as ts  # noqa: E402

EVENTS = 32             # events replayed
PAD = 1000 * 1000       # bytes of padding in each: 32 MB in all
BUSY_MS = 1500          # the receiver's busy timeout during the replay


def idemhook(srv, bindir, *args, timeout=300):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IDEMHOOK_DB": srv.db}
    env.update({k: os.environ[k] for k in SANITIZER_ENV if k in os.environ})
    env.update(srv.env)
    p = subprocess.run([os.path.join(bindir, "idemhook")] + list(args), env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    check(p.returncode == 0, "idemhook %s exited %d: %s" % (" ".join(args), p.returncode,
                                                          err[-600:]))
    return out


def runs(srv):
    try:
        with open(os.path.join(srv.tmp, "runs")) as f:
            lines = f.read().split()
    except FileNotFoundError:
        return {}
    n = {}
    for eid in lines:
        n[eid] = n.get(eid, 0) + 1
    return n


def post(srv, eid, etype, pad=0):
    body = ts.SPEC.body(eid, etype, pad=pad)
    return ts.SPEC.post(srv, body, ts.SPEC.headers(srv, body, eid, etype))


def case_bulk_replay(srv, bindir, tap):
    ids = [ts.SPEC.new_id("bulk%02d" % i) for i in range(EVENTS)]
    res = parallel(4, lambda k: [post(srv, e, "test.bulk", PAD) for e in ids[k::4]],
                   timeout=600)
    for r in res:
        check(not isinstance(r, Exception), "delivery raised %r" % (r,))
        for x in r:
            cases.expect_accepted(x, "a large delivery")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if all(srv.rows("stripe", e)[0]["status"] == "done" for e in ids):
            break
        idemhook(srv, bindir, "work", "--once")
    check(all(srv.rows("stripe", e)[0]["status"] == "done" for e in ids),
          "not every event is done before the replay")
    check_eq(set(runs(srv).get(e, 0) for e in ids), {1}, "action runs before the replay")

    # Deliveries during the replay, one after the other, each timed.
    seen, stop = [], threading.Event()

    def deliver():
        while not stop.is_set():
            t0 = time.monotonic()
            r = post(srv, ts.SPEC.new_id("during"), "charge.created")
            seen.append((r.status, time.monotonic() - t0, r.body[:200]))
    th = threading.Thread(target=deliver)
    th.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    out = idemhook(srv, bindir, "replay", "--status", "done", "--type", "test.bulk")
    took = time.monotonic() - t0
    time.sleep(0.3)
    stop.set()
    th.join(60)
    line = [x for x in out.splitlines() if "requeued" in x]
    tap.diag("replay of %d events of %d kB: %.2f s; %s; %d deliveries meanwhile, slowest "
             "%.3f s" % (EVENTS, PAD // 1000, took, line[-1] if line else out[-200:],
                         len(seen), max([s[1] for s in seen] or [0])))
    bad = [s for s in seen if s[0] != 200]
    check(seen and not bad, "deliveries during the replay refused: %r" % bad[:3])
    check(line and line[-1].startswith("%d event(s) requeued in " % EVENTS),
          "replay output: %r" % out[-300:])
    batches = int(line[-1].split(" in ")[1].split()[0])
    check(batches >= EVENTS * PAD // (2 * 1024 * 1024),
          "%d transactions for %d MB" % (batches, EVENTS * PAD // 1000000))

    # Each replayed event is processed exactly once more (the receiver's
    # drain may already have taken some of them).
    for e in ids:
        row = srv.rows("stripe", e)[0]
        check(row["status"] in ("received", "processing", "done"),
              "%s is %s after the replay" % (e, row["status"]))
        if row["status"] == "received":
            check_eq(row["attempts"], 0, "attempts of a replayed event")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        idemhook(srv, bindir, "work", "--once")
        if all(srv.rows("stripe", e)[0]["status"] == "done" for e in ids):
            break
    n = runs(srv)
    check_eq(sorted(set(n.get(e, 0) for e in ids)), [2], "action runs per event after "
             "the replay (once before, once replayed)")
    out = idemhook(srv, bindir, "replay", "--status", "done", "--type", "test.bulk",
                   "--dry-run")
    check("%d event(s) would be requeued" % EVENTS in out, "dry run after: %r" % out[-200:])


def run_cases(tap, bindir, servers):
    srv = Server(bindir, providers=["stripe"], name="replay", max_procs=1)
    srv.env.update({
        "IDEMHOOK_BUSY_TIMEOUT_MS": str(BUSY_MS),
        "IDEMHOOK_STRIPE_ACTION":
            "test.bulk /bin/sh -c 'echo $IDEMHOOK_EVENT_ID >> %s/runs'" % srv.tmp,
    })
    servers.add(srv)
    if tap.run("lighttpd starts (busy timeout %d ms, an action per event)" % BUSY_MS,
               srv.start):
        tap.run("bulk replay of %d events of %d kB: several short transactions, "
                "deliveries meanwhile all 200, each event processed exactly once more"
                % (EVENTS, PAD // 1000), case_bulk_replay, srv, bindir, tap)
        tap.run("no sanitizer reports", cases.case_sanitizers, srv)
        srv.stop()


if __name__ == "__main__":
    sys.exit(suite_main("replay", run_cases, prefix=True))
