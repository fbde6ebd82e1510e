#!/usr/bin/env python3
"""End-to-end tests of the receivers as plain CGI: Apache with mod_cgid and
the shipped www-config/apache/cgi.htaccess, unchanged (harness.ApacheServer
mode "cgi"). Every request runs a fresh process, which reads its settings
from the environment (SetEnv) and the IDEMHOOK_CONFIG file.

Usage: test_cgi.py BINDIR   (or IH_BIN=BINDIR test_cgi.py)
"""

import fcntl
import os
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (SANITIZER_ENV, ApacheServer, check, parallel,  # noqa: E402
                     sign_stripe, suite_main)
import cases  # noqa: E402
from cases import as_bytes, expect_accepted, expect_error, no_row, one_row  # noqa: E402
import test_stripe as ts  # noqa: E402
from test_apache import (GITHUB, STRIPE, denied_files, program_urls,  # noqa: E402
                         setenv_secret, setenv_server, stripe_cases)


def cgi_chunked(spec, srv):
    """A chunked body reaches a CGI program without CONTENT_LENGTH. The
    answer must still arrive whole: 200 accepted (body read to EOF), or the
    contract's 411 with its JSON error and nothing written. A program that
    answers without reading its input makes mod_cgid fail writing the body
    (Broken pipe) and the answer is lost."""
    eid = spec.new_id("chunked")
    body = spec.body(eid, spec.default_type, pad=5000)
    try:
        r = srv.post(srv.url(spec.name), body,
                     spec.headers(srv, body, eid, spec.default_type), chunked=True)
    except Exception as e:  # noqa: BLE001 - a lost answer is the failure
        raise AssertionError("no complete HTTP answer to a chunked POST (%s: %s)"
                             % (type(e).__name__, e))
    if r.status == 200:
        expect_accepted(r, "chunked delivery")
        check(as_bytes(one_row(srv, spec, eid)["payload"]) == body, "stored payload differs")
    else:
        expect_error(r, 411, "chunked delivery without CONTENT_LENGTH")
        no_row(srv, spec, eid)


def run_common_cgi(tap, spec, srv):
    """cases.run_common with the chunked case in its CGI form."""
    p = spec.name + ": "
    t = tap.run
    t(p + "accepted: 200, one row, payload byte-identical", cases.case_accepted, spec, srv)
    t(p + "DB directory 0700 and file 0600 when created", cases.case_db_modes, spec, srv)
    t(p + "DB is WAL with UNIQUE(provider,account,event_id)", cases.case_wal, spec, srv)
    t(p + "duplicate: identical redelivery -> duplicate, one row, duplicates=1",
      cases.case_duplicate, spec, srv)
    t(p + "300 KB body accepted byte-identical", cases.case_large_body, spec, srv)
    t(p + "forged signature -> 401, nothing written", cases.case_forged, spec, srv)
    t(p + "missing signature header -> 401", cases.case_missing_auth, spec, srv)
    t(p + "wrong secret -> 401", cases.case_wrong_secret, spec, srv)
    t(p + "signed non-JSON body -> 400", cases.case_not_json, spec, srv)
    t(p + "GET/PUT -> 405 with Allow: POST", cases.case_method, spec, srv)
    t(p + "50 concurrent deliveries of one event -> 1 accepted, 49 duplicate",
      cases.case_concurrent, spec, srv)
    t(p + "50 concurrent distinct events -> 50 accepted, 50 rows",
      cases.case_concurrent_distinct, spec, srv)
    t(p + "chunked body (no CONTENT_LENGTH under CGI) -> a whole answer: 200 or 411",
      cgi_chunked, spec, srv)
    t(p + "URL with a query string accepted", cases.case_query_string, spec, srv)


# Apache's Timeout for the slow server, and its action's length: longer
# (by 2 s, so that an action killed at the Timeout cannot end done).
SLOW_TIMEOUT_S = 3
SLOW_ACTION_S = 5


def slow_action_detached(srv):
    """Issue 24 item 6: under mod_cgi with Timeout 3, an action of 5 s after
    the answer. The answer arrives before the Timeout (the program detaches:
    the server no longer waits for its stdout or stderr), and the action is
    not killed: the event ends done after one attempt. Before, the answer
    came at the Timeout and the action was killed (the event stayed
    processing)."""
    spec = STRIPE
    eid = spec.new_id("cgislow")
    body = spec.body(eid, "test.slow")
    t0 = time.monotonic()
    r = spec.post(srv, body, spec.headers(srv, body, eid, "test.slow"))
    took = time.monotonic() - t0
    print("# answer with a %d s action after it, Apache Timeout %d: %.2f s"
          % (SLOW_ACTION_S, SLOW_TIMEOUT_S, took))
    expect_accepted(r, "delivery with a slow action")
    check(took < SLOW_TIMEOUT_S - 0.5, "the answer took %.2f s (Apache's Timeout is "
          "%d s): processing held it" % (took, SLOW_TIMEOUT_S))
    row = one_row(srv, spec, eid)
    check(row["status"] in ("received", "processing"),
          "status %r while the action runs" % row["status"])
    deadline = time.monotonic() + SLOW_ACTION_S + 20
    while time.monotonic() < deadline:
        row = one_row(srv, spec, eid)
        if row["status"] not in ("received", "processing"):
            break
        time.sleep(0.2)
    check(row["status"] == "done", "status %r, attempts %r, last_error %r: the "
          "action did not complete" % (row["status"], row["attempts"],
                                      row["last_error"]))
    check(row["attempts"] == 1, "attempts %r" % row["attempts"])
    done = time.monotonic() - t0
    check(done >= SLOW_ACTION_S, "done after %.2f s, before the %d s action could "
          "end" % (done, SLOW_ACTION_S))


def no_libpq(bindir):
    """A CGI process on SQLite pays no start-up for libpq and the ~20
    libraries it needs: the receivers load it with dlopen() only for a
    postgresql:// store (shared/store/pg_dl.h).  The PostgreSQL suites
    prove the loaded path."""
    for p in ("stripe", "github", "console"):
        r = subprocess.run(["ldd", os.path.join(bindir, p + ".fcgi")],
                           capture_output=True, text=True, timeout=30)
        check(r.returncode == 0 and "libsqlite3" in r.stdout,
              "ldd %s.fcgi: %r" % (p, (r.stdout + r.stderr)[:300]))
        check("libpq" not in r.stdout, "%s.fcgi links libpq: %r"
              % (p, [ln.strip() for ln in r.stdout.splitlines()
                     if "libpq" in ln]))


def post_type(srv, etype):
    eid = STRIPE.new_id("due")
    body = STRIPE.body(eid, etype)
    expect_accepted(ts.post_signed(srv, body, sign_stripe(srv.secrets["stripe"],
                                                          body)), etype)
    return eid


def wait_status(srv, eid, status, seconds=15):
    deadline = time.monotonic() + seconds
    while True:
        rows = srv.rows("stripe", eid)
        if rows and rows[0]["status"] == status:
            return rows[0]
        if time.monotonic() > deadline:
            check(False, "%s: %r, not %s" % (eid, rows and rows[0]["status"], status))
        time.sleep(0.1)


def drain_when_due(srv, bindir):
    """A delivery whose event is processed in its recording transaction
    forks no process after the answer unless an event is due; when one
    is, it drains it: an event made due again (idemhook replay) is done a
    second time after the next delivery, with no worker running."""
    first = post_type(srv, "test.cgidue")
    done0 = wait_status(srv, first, "done")["done_at"]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IDEMHOOK_DB": srv.db}
    env.update({k: os.environ[k] for k in SANITIZER_ENV if k in os.environ})
    p = subprocess.run([os.path.join(bindir, "idemhook"), "replay", "--status", "done",
                        "--type", "test.cgidue"], env=env, capture_output=True,
                       timeout=60)
    check(p.returncode == 0, "idemhook replay: %r" % p.stderr[-300:])
    check(srv.rows("stripe", first)[0]["status"] == "received", "not requeued")
    post_type(srv, "test.cgidue2")
    row = wait_status(srv, first, "done")
    check(row["done_at"] > done0, "done_at %r, before %r" % (row["done_at"], done0))


# shared/store/sqlite_conn.c's SQ_CLOSE_CHECKPOINT, in log frames (a
# 4 KiB page and its 24-byte header each).
CLOSE_CHECKPOINT_FRAMES = 256
WAL_FRAME = 4096 + 24


def wal_bounded(srv):
    """One delivery at a time, each CGI process opens the store alone and
    rebuilds the write-ahead log's index from every frame since the log
    last restarted; such a process never restarts it, so the log grew by
    each delivery's frames without end and every process read all of it.
    The last connection to close a long log now checkpoints and empties
    it: 40 deliveries one after the other keep it under that length and
    one delivery's frames."""
    wal = srv.db + "-wal"
    most = 0
    for i in range(40):
        r, _ = STRIPE.deliver(srv, STRIPE.new_id("wal"), pad=2000)
        expect_accepted(r, "delivery %d" % i)
        most = max(most, os.path.getsize(wal))
    limit = (CLOSE_CHECKPOINT_FRAMES + 64) * WAL_FRAME + 32
    check(most <= limit, "the -wal file reached %d bytes (%d frames), more than "
          "%d" % (most, most // WAL_FRAME, limit))


# Issue 37 item 3: the bound on detached processors, its default, and a
# burst long enough to meet it (20 deliveries at once, each action alive
# a second: unbounded, they overlapped by the dozen).
BURST = 20
BURST_SLOTS = 2
BURST_ACTION_S = 1.0


def detached_processors(srv):
    """The pids of the receivers that left their web server: leaders of
    a session of their own (io_cgi_detach()'s setsid) whose program is
    one of srv's."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        # argv[0], the path the server ran, not /proc/PID/exe: a user
        # other than root may not read the exe link of a program that
        # made itself non-dumpable, so the processors went unseen.
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                exe = f.read().split(b"\0", 1)[0].decode(errors="replace")
            with open("/proc/%s/stat" % d) as f:
                stat = f.read()
        except OSError:
            continue
        if not exe.startswith(srv.tmp) or not exe.endswith(".fcgi"):
            continue
        fields = stat.rsplit(")", 1)[1].split()
        # state ppid pgrp session: the session is the fourth field.
        if fields[0] != "Z" and int(fields[3]) == int(d):
            out.append(int(d))
    return out


def wait_all_done(srv, ids, seconds):
    deadline = time.monotonic() + seconds
    while True:
        rows = [srv.rows("stripe", e) for e in ids]
        left = [e for e, r in zip(ids, rows) if not r or r[0]["status"] != "done"]
        if not left:
            return
        if time.monotonic() > deadline:
            check(False, "%d event(s) not done, e.g. %s: %r"
                  % (len(left), left[0], srv.rows("stripe", left[0])))
        time.sleep(0.2)


def burst_bounded(srv):
    """Every accepted delivery with actions used to fork a detached
    processor with no limit (20 replays left 80 processes).  A burst of
    20 deliveries whose action takes 1 s: never more than
    IDEMHOOK_CGI_PROCESSORS (2) detached processors alive at once, and
    every event ends done, with no worker running: a delivery that finds
    every slot taken leaves its event to a slot's holder."""
    ids = [STRIPE.new_id("burst%d" % i) for i in range(BURST)]
    most, stop = [0], []

    def watch():
        while not stop:
            most[0] = max(most[0], len(detached_processors(srv)))
            time.sleep(0.01)
    w = threading.Thread(target=watch, daemon=True)
    w.start()
    try:
        results = parallel(BURST, lambda i: STRIPE.deliver(srv, ids[i], "test.burst")[0])
        for i, r in enumerate(results):
            check(not isinstance(r, Exception), "delivery %d: %r" % (i, r))
            expect_accepted(r, "delivery %d" % i)
        wait_all_done(srv, ids, BURST * BURST_ACTION_S + 60)
        deadline = time.monotonic() + 30
        while detached_processors(srv) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        stop.append(1)
        w.join()
    print("# %d deliveries, a %.1f s action each: at most %d detached processors"
          % (BURST, BURST_ACTION_S, most[0]))
    check(most[0] <= BURST_SLOTS, "%d detached processors alive at once, more than "
          "IDEMHOOK_CGI_PROCESSORS=%d" % (most[0], BURST_SLOTS))
    check(most[0] >= 1, "no detached processor seen")
    check(not detached_processors(srv), "processors left: %r" % detached_processors(srv))
    for e in ids:
        check(srv.rows("stripe", e)[0]["attempts"] == 1, "%s: attempts %r"
              % (e, srv.rows("stripe", e)[0]["attempts"]))


def hold_slots(srv, n):
    """Takes the n processing slots beside srv's store as a holder would
    (flock on <store>-proc1..n, made as the programs' user)."""
    fds = []
    uid, gid = srv._owner()
    for i in range(1, n + 1):
        fd = os.open("%s-proc%d" % (srv.db, i), os.O_RDWR | os.O_CREAT, 0o600)
        os.fchown(fd, uid, gid)
        fcntl.flock(fd, fcntl.LOCK_EX)
        fds.append(fd)
    return fds


def full_slots_left(srv, bindir):
    """Every slot taken: a delivery with actions records its event,
    answers, forks no processor and leaves the event due, marked pending
    at the gate; the next delivery with a slot free drains it, and so
    does idemhook work."""
    fds = hold_slots(srv, BURST_SLOTS)
    try:
        left = STRIPE.new_id("full")
        r, _ = STRIPE.deliver(srv, left, "test.burst")
        expect_accepted(r, "delivery with every slot taken")
        time.sleep(BURST_ACTION_S + 1)
        row = srv.rows("stripe", left)[0]
        check(row["status"] == "received" and row["attempts"] == 0,
              "with every slot taken: status %r, attempts %r" % (row["status"],
                                                                row["attempts"]))
        check(not detached_processors(srv), "a processor without a slot: %r"
              % detached_processors(srv))
        with open(srv.db + "-proc", "rb") as f:
            check(f.read(1) == b"\x01", "no pending mark at the gate")
    finally:
        for fd in fds:
            os.close(fd)
    nxt = STRIPE.new_id("next")
    r, _ = STRIPE.deliver(srv, nxt, "test.burst")
    expect_accepted(r, "next delivery")
    wait_all_done(srv, [left, nxt], 4 * BURST_ACTION_S + 30)
    # And with no delivery after it: idemhook work.
    fds = hold_slots(srv, BURST_SLOTS)
    try:
        late = STRIPE.new_id("work")
        r, _ = STRIPE.deliver(srv, late, "test.burst")
        expect_accepted(r, "delivery left to idemhook work")
    finally:
        for fd in fds:
            os.close(fd)
    check(srv.rows("stripe", late)[0]["status"] == "received", "not left")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IDEMHOOK_DB": srv.db,
           "IDEMHOOK_STRIPE_ACTION": "test.burst true"}
    env.update({k: os.environ[k] for k in SANITIZER_ENV if k in os.environ})
    p = subprocess.run([os.path.join(bindir, "idemhook"), "work", "--once"], env=env,
                       capture_output=True, timeout=120)
    check(p.returncode == 0, "idemhook work: %r" % p.stderr[-300:])
    wait_all_done(srv, [late], 30)


def bad_processors(bindir, servers):
    """IDEMHOOK_CGI_PROCESSORS that is not 1 to 64 is refused, loudly:
    500 and the setting named in the log, nothing recorded."""
    bad = servers.add(ApacheServer(
        bindir, mode="cgi", providers=["stripe"], name="cgi-badprocs",
        env={"IDEMHOOK_CGI_PROCESSORS": "0"}))
    bad.start()
    try:
        eid = STRIPE.new_id("badprocs")
        r, _ = STRIPE.deliver(bad, eid)
        expect_error(r, 500, "IDEMHOOK_CGI_PROCESSORS=0")
        check("IDEMHOOK_CGI_PROCESSORS" in bad.errorlog() + bad.stderr_text(),
              "the setting is not named in the log")
        no_row(bad, STRIPE, eid)
    finally:
        bad.stop()


def run_cases(tap, bindir, servers):
    tap.run("the programs do not link libpq (loaded only for PostgreSQL)",
            no_libpq, bindir)
    srv, s3 = setenv_server(servers, bindir, "cgi", "cgi")
    if tap.run("Apache mod_cgid starts with the shipped cgi.htaccess", srv.start):
        run_common_cgi(tap, STRIPE, srv)
        stripe_cases(tap, srv, "")
        tap.run("stripe: a secret from SetEnv (CGI environment) accepted",
                setenv_secret, srv, s3)
        tap.run("stripe: after the answer, an event due is drained (and none "
                "is looked for in a fork when nothing is due)",
                drain_when_due, srv, bindir)
        tap.run("stripe: one delivery at a time, the write-ahead log stays short "
                "(the last connection to close a long log checkpoints it)",
                wal_bounded, srv)
        run_common_cgi(tap, GITHUB, srv)
        cases.run_final(tap, STRIPE, srv)
        cases.run_final(tap, GITHUB, srv)
        # after the log checks, which count requests per URL
        tap.run("/hooks/stripe/ and /hooks/stripe.fcgi reach the program", program_urls, srv)
        tap.run("cgi.htaccess allows only the programs: settings, stores (-wal, -shm, "
                "any case), backups, swap and extensionless files -> 403", denied_files, srv)
        srv.stop()

    # Settings by SetEnv only: a small body limit and tolerance.
    lim = servers.add(ApacheServer(
        bindir, mode="cgi", providers=["stripe"], name="cgi-limits",
        setenv={"IDEMHOOK_MAX_BODY": "1024", "IDEMHOOK_TOLERANCE": "30"}))
    if tap.run("starts with IDEMHOOK_MAX_BODY=1024, IDEMHOOK_TOLERANCE=30 by SetEnv",
               lim.start):
        tap.run("stripe: IDEMHOOK_TOLERANCE=30 from SetEnv: t-45 -> 401",
                ts.timestamp_case, lim, -45, 401)
        tap.run("stripe: IDEMHOOK_TOLERANCE=30 from SetEnv: t-20 -> accepted",
                ts.timestamp_case, lim, -20, 200)
        tap.run("stripe: body > IDEMHOOK_MAX_BODY -> a whole 413; exactly the limit -> accepted",
                ts.max_body, lim, 1024)
        tap.run("limits server: no sanitizer reports", cases.case_sanitizers, lim)
        lim.stop()

    # Plain mod_cgi, a short Timeout and a longer action after the answer.
    for module in ("cgi", "cgid"):
        slow = servers.add(ApacheServer(
            bindir, mode="cgi", providers=["stripe"], name="cgi-slow-" + module,
            cgi_module=module, timeout=SLOW_TIMEOUT_S,
            env={"IDEMHOOK_STRIPE_ACTION": "test.slow sleep %d" % SLOW_ACTION_S}))
        if tap.run("mod_%s starts with Timeout %d and a %d s action"
                   % (module, SLOW_TIMEOUT_S, SLOW_ACTION_S), slow.start):
            tap.run("stripe: mod_%s, a %d s action after the answer -> answered "
                    "before the %d s Timeout, the event ends done"
                    % (module, SLOW_ACTION_S, SLOW_TIMEOUT_S),
                    slow_action_detached, slow)
            tap.run("slow server (mod_%s): no sanitizer reports" % module,
                    cases.case_sanitizers, slow)
            slow.stop()


    burst = servers.add(ApacheServer(
        bindir, mode="cgi", providers=["stripe"], name="cgi-burst",
        env={"IDEMHOOK_STRIPE_ACTION": "test.burst sleep %s" % BURST_ACTION_S}))
    if tap.run("starts with a %.1f s action and IDEMHOOK_CGI_PROCESSORS unset (2)"
               % BURST_ACTION_S, burst.start):
        tap.run("stripe: a burst of %d deliveries with a slow action: at most %d "
                "detached processors alive, every event done" % (BURST, BURST_SLOTS),
                burst_bounded, burst)
        tap.run("stripe: every slot taken: the event is left due, to the next "
                "delivery with a slot or to idemhook work", full_slots_left, burst, bindir)
        tap.run("burst server: no sanitizer reports", cases.case_sanitizers, burst)
        burst.stop()
    tap.run("IDEMHOOK_CGI_PROCESSORS=0 is refused: 500, named in the log",
            bad_processors, bindir, servers)


if __name__ == "__main__":
    sys.exit(suite_main("cgi", run_cases, prefix=True, needs=("stripe.fcgi", "github.fcgi")))
