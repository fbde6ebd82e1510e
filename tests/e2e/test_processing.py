#!/usr/bin/env python3
"""End-to-end tests of processing (issue 4): states, leases, retries, dead
letters, actions, the three modes and ordering, through a real lighttpd and
real processes (the receivers, `idemhook work`, the actions' shells).

Usage: test_processing.py BINDIR   (or IH_BIN=BINDIR test_processing.py)
Prints 'ok - ...' / 'not ok - ...: reason' lines; exits 1 if any failed.

Servers (each its own lighttpd, store and temporary folder):
  after   after-response mode; actions by event type: an appender, one that
          fails twice then succeeds, one that always fails
  crash   after-response, IDEMHOOK_LEASE=5, an action that sleeps 3 s; the
          receiver running it is killed with SIGKILL
  worker  IDEMHOOK_MODE=worker, Stripe and Asaas; `idemhook work` processes
  inline  IDEMHOOK_MODE=inline, an action gated by a flag file
  slow1   one FastCGI process, an action that sleeps 3 s: the next
          deliveries are answered at once (issue 14, item 5)
  inline-lock  inline Stripe with a `sleep 3` action and GitHub on one
          store, 1 s busy timeout: no 503 while the action runs (item 3)
  inline-one  inline Stripe in one process, a 4 s action: another type's
          delivery is answered while it runs (issue 24, item 4)
The worker server also runs the lease probes (item 4): two `idemhook work`
with a 3 s lease and three 1.5 s actions, and a worker stopped past its
lease; a lease not longer than the action timeout is refused.
"""

import contextlib
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (ASAAS_TOKEN_HEADER, SANITIZER_ENV,  # noqa: E402
                     SANITIZER_MARKERS, Server, Servers, check, check_eq, parallel,
                     sign_stripe, suite_main)
import cases  # noqa: E402
import harness  # noqa: E402

WORK_TIMEOUT = 90.0     # seconds any one `idemhook work` may take
POLL = 0.05

# Settings of the "after" server.
MAX_ATTEMPTS = 3
RETRY_BASE_MS = 300


# ---------------------------------------------------------------- helpers

def new_id(tag):
    return "evt_%s_%s" % (tag, os.urandom(6).hex())


def stripe_body(event_id, event_type):
    obj = {"id": event_id, "object": "event", "api_version": "2024-06-20",
           "created": int(time.time()), "type": event_type,
           "data": {"object": {"id": "pi_" + os.urandom(8).hex(),
                               "object": "payment_intent", "amount": 2000,
                               "currency": "usd"}},
           "livemode": False}
    return cases.dumps_pretty(obj)


def post_stripe(srv, body, tries=1):
    """POSTs body freshly signed; with tries > 1, a 5xx is retried (signed
    again), as Stripe would.  Returns the last response."""
    r = None
    for i in range(tries):
        h = {"Stripe-Signature": sign_stripe(srv.secrets["stripe"], body)}
        r = srv.post("/hooks/stripe", body, h)
        if r.status < 500:
            break
        time.sleep(0.2 * (i + 1))
    return r


def deliver(srv, event_id, event_type, tries=1):
    body = stripe_body(event_id, event_type)
    r = post_stripe(srv, body, tries)
    cases.expect_accepted(r, "delivery of %s (%s)" % (event_id, event_type))
    return body


def post_asaas(srv, event_id, event_type, payment):
    body = json.dumps({"id": event_id, "event": event_type,
                       "dateCreated": time.strftime("%Y-%m-%d %H:%M:%S"),
                       "payment": {"id": payment, "object": "payment",
                                   "value": 100.0, "status": "PENDING"}}
                      ).encode()
    r = srv.post("/hooks/asaas", body, {ASAAS_TOKEN_HEADER: srv.secrets["asaas"]})
    cases.expect_accepted(r, "asaas delivery %s %s %s" % (event_id, event_type, payment))


def query(srv, sql, args=()):
    """Rows of a read-only query on srv's store, as dicts."""
    with contextlib.closing(srv.connect_ro()) as c:
        c.row_factory = sqlite3.Row
        return [dict(r) for r in c.execute(sql, args)]


def event_row(srv, provider, event_id):
    rows = srv.rows(provider, event_id)
    check(len(rows) == 1, "expected one row for %s/%s, found %d"
          % (provider, event_id, len(rows)))
    return rows[0]


def attempt_rows(srv, provider, event_id):
    return query(srv, "SELECT a.* FROM attempts a JOIN events e ON e.id = a.event"
                 " WHERE e.provider = ? AND e.event_id = ? ORDER BY a.attempt",
                 (provider, event_id))


def effect_rows(srv, provider, event_id):
    return query(srv, "SELECT f.kind FROM effects f JOIN events e ON e.id = f.event"
                 " WHERE e.provider = ? AND e.event_id = ?", (provider, event_id))


def brief(row):
    keys = ("status", "attempts", "last_error", "lease_until", "next_attempt_at")
    return {k: row.get(k) for k in keys}


def wait_for(what, fn, timeout):
    """Polls fn() until it returns a true value; fails with what after
    timeout seconds, quoting the last value."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = fn()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise AssertionError("timed out after %.0f s waiting for %s (last: %r)"
                                 % (timeout, what, last))
        time.sleep(POLL)


def wait_status(srv, provider, event_id, statuses, timeout):
    def probe():
        rows = srv.rows(provider, event_id)
        if len(rows) == 1 and rows[0]["status"] in statuses:
            return rows[0]
        return None
    try:
        return wait_for("%s/%s to reach %s" % (provider, event_id, "|".join(statuses)),
                        probe, timeout)
    except AssertionError as e:
        rows = srv.rows(provider, event_id)
        raise AssertionError("%s; row now %r" % (e, [brief(r) for r in rows]))


def read_lines(path):
    try:
        with open(path) as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def write_script(srv, name, text):
    """Writes an action script into srv's folder; returns its path."""
    path = os.path.join(srv.tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def now_ms():
    return int(time.time() * 1000)


# ---------------------------------------------------------------- processes

def proc_stat(pid):
    """(comm, state, ppid) of pid, or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
        comm = st[st.index("(") + 1:st.rindex(")")]
        rest = st[st.rindex(")") + 2:].split()
        return comm, rest[0], int(rest[1])
    except (OSError, ValueError, IndexError):
        return None


def proc_env(pid):
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            data = f.read()
    except OSError:
        return {}
    env = {}
    for item in data.split(b"\0"):
        k, sep, v = item.partition(b"=")
        if sep:
            env[k.decode(errors="replace")] = v.decode(errors="replace")
    return env


def live_pids():
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = proc_stat(int(d))
            if st is not None and st[1] not in ("Z", "X"):
                yield int(d), st


def action_procs(event_id):
    """Live processes running an action of event_id: [(pid, comm, ppid)]."""
    out = []
    for pid, (comm, _state, ppid) in live_pids():
        if proc_env(pid).get("IDEMHOOK_EVENT_ID") == event_id:
            out.append((pid, comm, ppid))
    return out


def receiver_running_action(event_id, fcgi_name):
    """The pid of the fcgi_name process that runs event_id's action: the
    nearest such ancestor (the action runs under a supervisor child)."""
    for _pid, _comm, ppid in action_procs(event_id):
        for _ in range(8):
            st = proc_stat(ppid)
            if st is None:
                break
            if st[0] == fcgi_name:
                return ppid
            ppid = st[2]
    return None


def alive(pid):
    st = proc_stat(pid)
    return st is not None and st[1] not in ("Z", "X")


def reap_orphans(keep=()):
    """Reaps zombie children of this process (the harness makes it a
    subreaper, so an action's orphaned sleep ends up here)."""
    me = os.getpid()
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) in keep:
            continue
        st = proc_stat(int(d))
        if st is not None and st[2] == me and st[1] == "Z":
            try:
                os.waitpid(int(d), os.WNOHANG)
            except OSError:
                pass


class Work:
    """`idemhook work` with a clean environment: PATH, sanitizer settings,
    IDEMHOOK_DB and the given IDEMHOOK_* settings, nothing else."""

    def __init__(self, bindir, db, settings):
        self.cmd = os.path.join(bindir, "idemhook")
        self.env = {"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")}
        for k in SANITIZER_ENV:
            if k in os.environ:
                self.env[k] = os.environ[k]
        self.env["IDEMHOOK_DB"] = db
        self.env.update(settings)

    def start(self, *args):
        return subprocess.Popen([self.cmd, "work"] + list(args), env=self.env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)

    @staticmethod
    def finish(p, what, timeout=WORK_TIMEOUT):
        """Waits for p; checks exit 0 and no sanitizer report; returns the
        number of events it says it processed (None without --once)."""
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            raise AssertionError("%s did not finish within %.0f s; stderr: %s"
                                 % (what, timeout, err.decode(errors="replace")[-600:]))
        out = out.decode(errors="replace")
        err = err.decode(errors="replace")
        check(p.returncode == 0, "%s exited with %s; stderr: %s"
              % (what, p.returncode, err[-800:]))
        rep = [m for m in SANITIZER_MARKERS if m in err]
        check(not rep, "%s: sanitizer reports %r: %s" % (what, rep, err[-800:]))
        for line in out.splitlines():
            if line.startswith("processed ") and line.endswith(" event(s)"):
                return int(line.split()[1])
        return None

    def once(self, *args):
        """Runs `idemhook work --once ARGS`; returns the processed count."""
        n = self.finish(self.start("--once", *args), "idemhook work --once")
        check(n is not None, "idemhook work --once printed no 'processed N event(s)'")
        return n

    def several(self, n, *args):
        """Runs n `idemhook work --once ARGS` at once; returns their total."""
        ps = [self.start("--once", *args) for _ in range(n)]
        try:
            counts = [self.finish(p, "idemhook work --once (%d of %d)" % (i + 1, n))
                      for i, p in enumerate(ps)]
        finally:
            for p in ps:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        check(None not in counts, "idemhook work --once printed no count")
        return sum(counts)

    def loop_until(self, what, done, timeout, *args):
        """Runs `idemhook work --interval 0.05 ARGS` until done() is true,
        then stops it with SIGTERM (it finishes the event in hand)."""
        p = self.start("--interval", "0.05", *args)
        try:
            wait_for(what, done, timeout)
        finally:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        self.finish(p, "idemhook work --interval 0.05", 30)


# ---------------------------------------------------------------- migration

SHA_SH = """\
# One line per run: the event and the SHA-256 of the payload on stdin.
printf '%%s %%s\\n' "$IDEMHOOK_EVENT_ID" "$(sha256sum | cut -c1-64)" \\
    >> "%(dir)s/sha.out"
"""

# Version 6 back to the shape of version 5: the payload in the events row.
DOWN_TO_7 = {
    "sqlite": ["ALTER TABLE events ADD COLUMN payload BLOB",
               "UPDATE events SET payload = (SELECT payload FROM payloads"
               " WHERE event = events.id)",
               "DROP TRIGGER events_purge_payload", "DROP TABLE payloads",
               "PRAGMA user_version = 5"],
    "pg": ["ALTER TABLE events ADD COLUMN payload BYTEA",
           "UPDATE events SET payload = (SELECT payload FROM payloads"
           " WHERE event = events.id)",
           "DROP TABLE payloads", "UPDATE idemhook_schema SET version = 5"],
}


def case_migrate_payloads(bindir, servers):
    """A store of schema version 5, its payloads in the events rows (three
    events recorded and due, one done, one purged), is migrated by the
    first program that opens it: each payload moves byte for byte to its
    own table, each due event is processed exactly once with its payload
    (an action hashes its stdin), a second run finds nothing, and the
    receiver then records a new event and counts a redelivery."""
    srv = servers.add(Server(bindir, providers=["stripe"], name="migrate"))
    sha = write_script(srv, "sha.sh", SHA_SH % {"dir": srv.tmp})
    srv.env.update({"IDEMHOOK_MODE": "worker",
                    "IDEMHOOK_STRIPE_ACTION": "* /bin/sh " + sha})
    work = Work(bindir, srv.db, worker_settings(srv))
    srv.start()
    ids = [new_id("mig%d" % i) for i in range(5)]
    bodies = {eid: deliver(srv, eid, "payment_intent.succeeded") for eid in ids}
    check_eq(work.once("--provider", "stripe"), 5, "processed before the downgrade")
    srv.stop()
    os.unlink(os.path.join(srv.tmp, "sha.out"))
    pg = harness.is_pg(srv.db)
    with contextlib.closing(harness.db_connect(srv.db)) as c:
        # Three back to due, one left done, one purged (no payload).
        for eid in ids[:3]:
            c.execute("UPDATE events SET status = 'received', attempts = 0,"
                      " done_at = NULL WHERE event_id = ?", (eid,))
            c.execute("DELETE FROM attempts WHERE event = (SELECT id FROM events"
                      " WHERE event_id = ?)", (eid,))
            c.execute("DELETE FROM effects WHERE event = (SELECT id FROM events"
                      " WHERE event_id = ?)", (eid,))
        c.execute("DELETE FROM payloads WHERE event = (SELECT id FROM events"
                  " WHERE event_id = ?)", (ids[4],))
        c.execute("UPDATE events SET purged_at = 1 WHERE event_id = ?", (ids[4],))
        if not pg:
            c.commit()
    with contextlib.closing(harness.db_connect(srv.db)) as c:
        for q in DOWN_TO_7["pg" if pg else "sqlite"]:
            c.execute(q)
        if not pg:
            c.commit()
    check_eq(work.once("--provider", "stripe"), 3, "processed after the migration")
    runs = sorted(tuple(l.split()) for l in read_lines(os.path.join(srv.tmp, "sha.out")))
    want = sorted((eid, hashlib.sha256(bodies[eid]).hexdigest()) for eid in ids[:3])
    check_eq(runs, want, "one action run per due event, with its payload")
    check_eq(work.once("--provider", "stripe"), 0, "a second run")
    with contextlib.closing(harness.db_connect(srv.db, ro=True)) as c:
        got = {r[0]: bytes(r[1]) for r in c.execute(
            "SELECT event_id, payload FROM payloads JOIN events"
            " ON events.id = payloads.event")}
        if pg:
            v = harness.psql(srv.db, "SELECT version FROM idemhook_schema").strip()
            cols = harness.psql(srv.db, "SELECT count(*) FROM information_schema.columns"
                                " WHERE table_name = 'events' AND column_name = 'payload'")
        else:
            v = str(c.execute("PRAGMA user_version").fetchone()[0])
            cols = str(c.execute("SELECT count(*) FROM pragma_table_info('events')"
                                 " WHERE name = 'payload'").fetchone()[0])
    check_eq(v, harness.schema_version(), "schema version after migration")
    check_eq(cols.strip(), "0", "payload columns left in events")
    check_eq(got, {eid: bodies[eid] for eid in ids[:4]}, "payloads after migration")
    for eid in ids[:4]:
        row = event_row(srv, "stripe", eid)
        check_eq((row["status"], row["attempts"]), ("done", 1), "%s after migration" % eid)
        check_eq(len(attempt_rows(srv, "stripe", eid)), 1, "attempt rows of %s" % eid)
    srv.start()
    r = post_stripe(srv, bodies[ids[0]])
    check(r.status == 200 and b'"duplicate"' in r.body, "redelivery: %r" % r)
    deliver(srv, new_id("mig_new"), "payment_intent.succeeded")
    srv.stop()


# ---------------------------------------------------------------- after server

APPEND_SH = """\
# Records one line per run, and the payload it was given on stdin.
cat > "%(dir)s/payload.$IDEMHOOK_EVENT_ID"
printf '%%s %%s %%s %%s %%s\\n' "$IDEMHOOK_PROVIDER" "$IDEMHOOK_EVENT_ID" \\
    "$IDEMHOOK_EVENT_TYPE" "$IDEMHOOK_ATTEMPT" "$IDEMHOOK_IDEMPOTENCY_KEY" \\
    >> "%(dir)s/append.out"
"""

FLAKY_SH = """\
# Fails on its first two runs for an event, then succeeds.
c="%(dir)s/count.$IDEMHOOK_EVENT_ID"
n=$(cat "$c" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$c"
if [ "$n" -lt 3 ]; then
	echo "flaky action: failing run $n" >&2
	exit 3
fi
echo "$IDEMHOOK_EVENT_ID $IDEMHOOK_ATTEMPT" >> "%(dir)s/flaky.out"
"""


def after_server(bindir):
    srv = Server(bindir, providers=["stripe"], name="after")
    d = {"dir": srv.tmp}
    append = write_script(srv, "append.sh", APPEND_SH % d)
    flaky = write_script(srv, "flaky.sh", FLAKY_SH % d)
    srv.env.update({
        "IDEMHOOK_MAX_ATTEMPTS": str(MAX_ATTEMPTS),
        "IDEMHOOK_RETRY_BASE_MS": str(RETRY_BASE_MS),
        "IDEMHOOK_RETRY_MAX": "60",
        "IDEMHOOK_LEASE": "60",
        "IDEMHOOK_ACTION_TIMEOUT": "30",
        "IDEMHOOK_STRIPE_ACTION": "payment_intent.succeeded /bin/sh " + append,
        "IDEMHOOK_STRIPE_ACTION_2": "test.flaky /bin/sh " + flaky,
        "IDEMHOOK_STRIPE_ACTION_3": "test.broken echo broken action >&2; exit 7",
    })
    return srv


def case_concurrent(srv):
    """50 concurrent deliveries of one event: one accepted, 49 duplicates,
    the action runs once, one effect, done."""
    eid = new_id("c50")
    body = stripe_body(eid, "payment_intent.succeeded")
    sig = sign_stripe(srv.secrets["stripe"], body)
    res = parallel(50, lambda i: srv.post("/hooks/stripe", body, {"Stripe-Signature": sig}))
    errs = [r for r in res if not hasattr(r, "status")]
    check(not errs, "requests raised: %r" % errs[:3])
    statuses = sorted(r.status for r in res)
    check(statuses == [200] * 50, "expected 50 x 200, got %r" % statuses)
    answers = [(r.json() or {}).get("status") for r in res]
    check_eq(answers.count("accepted"), 1, "number of 'accepted' answers")
    check_eq(answers.count("duplicate"), 49, "number of 'duplicate' answers")
    row = wait_status(srv, "stripe", eid, ("done", "failed", "dead"), 20)
    check_eq(row["status"], "done", "status (last_error %r)" % row["last_error"])
    time.sleep(0.5)  # a second run, were there one, would have its line by now
    lines = [l for l in read_lines(os.path.join(srv.tmp, "append.out"))
             if l.split()[1:2] == [eid]]
    check(len(lines) == 1, "expected exactly one action line for %s, got %d: %r"
          % (eid, len(lines), lines))
    f = lines[0].split()
    check_eq(f[0], "stripe", "IDEMHOOK_PROVIDER")
    check_eq(f[2], "payment_intent.succeeded", "IDEMHOOK_EVENT_TYPE")
    check_eq(f[3], "1", "IDEMHOOK_ATTEMPT")
    check(len(f) == 5 and len(f[4]) == 64 and all(c in "0123456789abcdef" for c in f[4]),
          "IDEMHOOK_IDEMPOTENCY_KEY should be 64 hex digits, got %r" % f[4:])
    with open(os.path.join(srv.tmp, "payload." + eid), "rb") as fh:
        check_eq(fh.read(), body, "payload the action read on stdin")
    row = event_row(srv, "stripe", eid)
    check_eq(row["attempts"], 1, "attempts")
    check_eq(row["duplicates"], 49, "duplicates")
    check_eq([e["kind"] for e in effect_rows(srv, "stripe", eid)],
             ["payment_completed"], "effects rows")
    check_eq([(a["attempt"], a["outcome"]) for a in attempt_rows(srv, "stripe", eid)],
             [(1, "done")], "attempts rows")


def check_backoff(att):
    """Attempt n+1 starts no sooner than attempt n finished plus the
    smallest backoff, base * 2^(n-1) / 2 (equal jitter)."""
    for prev, cur in zip(att, att[1:]):
        n = prev["attempt"]
        least = RETRY_BASE_MS * 2 ** (n - 1) // 2
        check(prev["finished_at"] is not None, "attempt %d has no finished_at" % n)
        gap = cur["started_at"] - prev["finished_at"]
        check(gap >= least, "attempt %d started %d ms after attempt %d finished; "
              "the backoff is at least %d ms" % (n + 1, gap, n, least))


def case_flaky(srv, work):
    """An action that fails twice then succeeds: three attempts with the
    backoff respected between them, then done."""
    eid = new_id("flaky")
    deliver(srv, eid, "test.flaky")
    # The receiver makes the first attempt after its answer.
    row = wait_status(srv, "stripe", eid, ("failed", "done", "dead"), 20)
    check_eq(row["status"], "failed", "status after the receiver's attempt")
    check_eq(row["attempts"], 1, "attempts after the receiver's attempt")
    check_eq(row["last_error"], "exit status 3", "last_error after the first attempt")
    check(row["next_attempt_at"] >= attempt_rows(srv, "stripe", eid)[0]["finished_at"]
          + RETRY_BASE_MS // 2, "next_attempt_at %r earlier than finished + base/2"
          % row["next_attempt_at"])

    def settled():
        r = srv.rows("stripe", eid)
        return r and r[0]["status"] in ("done", "dead")
    work.loop_until("the flaky event to settle", settled, 30, "--provider", "stripe")
    row = event_row(srv, "stripe", eid)
    check_eq(row["status"], "done", "final status (last_error %r)" % row["last_error"])
    check_eq(row["attempts"], 3, "attempts")
    check_eq(row["last_error"], None, "last_error once done")
    att = attempt_rows(srv, "stripe", eid)
    check_eq([(a["attempt"], a["outcome"], a["error"]) for a in att],
             [(1, "failed", "exit status 3"), (2, "failed", "exit status 3"),
              (3, "done", None)], "attempts rows")
    check_backoff(att)
    check_eq(read_lines(os.path.join(srv.tmp, "count." + eid)), ["3"], "runs of the action")
    check_eq([l for l in read_lines(os.path.join(srv.tmp, "flaky.out")) if eid in l],
             ["%s 3" % eid], "successful runs (event id, IDEMHOOK_ATTEMPT)")
    check_eq(len(effect_rows(srv, "stripe", eid)), 1, "effects rows")


def case_dead(srv, work):
    """An action that always fails: dead after IDEMHOOK_MAX_ATTEMPTS, with
    its last error, visible in the store, and never retried again."""
    eid = new_id("dead")
    deliver(srv, eid, "test.broken")

    def settled():
        r = srv.rows("stripe", eid)
        return r and r[0]["status"] in ("done", "dead")
    work.loop_until("the broken event to settle", settled, 30, "--provider", "stripe")
    row = event_row(srv, "stripe", eid)
    check_eq(row["status"], "dead", "status after %d failures" % MAX_ATTEMPTS)
    check_eq(row["attempts"], MAX_ATTEMPTS, "attempts")
    check_eq(row["last_error"], "exit status 7", "last_error")
    check_eq(row["lease_owner"], None, "lease_owner of a dead event")
    att = attempt_rows(srv, "stripe", eid)
    check_eq([(a["attempt"], a["outcome"], a["error"]) for a in att],
             [(1, "failed", "exit status 7"), (2, "failed", "exit status 7"),
              (3, "dead", "exit status 7")], "attempts rows")
    check_backoff(att)
    check_eq(effect_rows(srv, "stripe", eid), [], "effects of a dead event")
    dead = query(srv, "SELECT event_id, last_error FROM events WHERE status = 'dead'")
    check({"event_id": eid, "last_error": "exit status 7"} in dead,
          "operator's query for dead events does not show it: %r" % dead)
    # A dead event stays dead: neither a worker nor a receiver retries it.
    n = work.once("--provider", "stripe")
    check_eq(n, 0, "events processed by a worker when only a dead one is left")
    deliver(srv, new_id("after-dead"), "charge.created")
    time.sleep(0.5)
    row = event_row(srv, "stripe", eid)
    check_eq((row["status"], row["attempts"]), ("dead", MAX_ATTEMPTS),
             "dead event after a worker run and another delivery")


# ---------------------------------------------------------------- crash server

# The action of the issue, as one shell command line.
SLOW_CMD = 'sleep 3; echo "$IDEMHOOK_EVENT_ID" >> "%(dir)s/crash.out"'

# The same work in a script file, the usual shape of a real action: the
# shell that runs the command line starts a second shell for the script.
SLOW_SH = """\
sleep 3; echo "$IDEMHOOK_EVENT_ID" >> "%(dir)s/crash.out"
"""

CRASH_EVENTS = 3


def crash_server(bindir):
    srv = Server(bindir, providers=["stripe"], name="crash")
    d = {"dir": srv.tmp}
    slow = write_script(srv, "slow.sh", SLOW_SH % d)
    srv.env.update({
        "IDEMHOOK_LEASE": "5",
        "IDEMHOOK_ACTION_TIMEOUT": "4",
        "IDEMHOOK_BUSY_TIMEOUT_MS": "900",  # LEASE > TIMEOUT + busy
        "IDEMHOOK_MAX_ATTEMPTS": "5",
        "IDEMHOOK_RETRY_BASE_MS": "300",
        "IDEMHOOK_STRIPE_ACTION": "payment_intent.succeeded " + SLOW_CMD % d,
        "IDEMHOOK_STRIPE_ACTION_2": "test.script /bin/sh " + slow,
    })
    return srv


def case_crash(srv, work, event_type):
    """kill -9 of the receiver while its action runs, for several events:
    the row stays 'processing' under its lease; once it expires, `idemhook
    work` runs the action again; one line per event, none lost."""
    out = os.path.join(srv.tmp, "crash.out")
    ids, lease_until, left = [], {}, []
    for i in range(CRASH_EVENTS):
        eid = new_id("crash%d" % i)
        ids.append(eid)
        # A request that lands on a receiver killed a moment ago may get a
        # 5xx from lighttpd; the provider would retry, so do we.
        deliver(srv, eid, event_type, tries=5)
        pid = wait_for("a stripe.fcgi running the action of %s" % eid,
                       lambda: receiver_running_action(eid, "stripe.fcgi"), 10)
        os.kill(pid, signal.SIGKILL)
        wait_for("killed receiver %d to go" % pid, lambda: not alive(pid), 10)
        row = event_row(srv, "stripe", eid)
        check_eq(row["status"], "processing", "status of %s after the kill" % eid)
        check_eq(row["attempts"], 1, "attempts of %s after the kill" % eid)
        check(row["lease_owner"], "no lease owner on %s after the kill" % eid)
        check(row["lease_until"] is not None and row["lease_until"] > 0,
              "no lease_until on %s after the kill" % eid)
        lease_until[eid] = row["lease_until"]
        # Shells of the action must die with the receiver; its sleep may
        # outlive them harmlessly, as nothing waits for it.
        time.sleep(0.2)
        left += ["%s: pid %d (%s)" % (eid, p, c) for p, c, _pp in action_procs(eid)
                 if c != "sleep"]
    before = [l for l in read_lines(out) if l in ids]

    # A worker that has come and gone before any lease ran out must have
    # left every event alone.
    first = min(lease_until.values())
    while now_ms() < first - 300:
        n = work.once("--provider", "stripe")
        if now_ms() < first:
            check_eq(n, 0, "events a worker took while every lease was held")
    # Once every lease has run out, several workers at once take them over.
    wait_for("every lease to run out",
             lambda: now_ms() > max(lease_until.values()) + 50, 10)
    deadline = time.monotonic() + 60
    while True:
        work.several(CRASH_EVENTS, "--provider", "stripe")
        rows = [event_row(srv, "stripe", e) for e in ids]
        if all(r["status"] == "done" for r in rows):
            break
        check(all(r["status"] in ("processing", "done") for r in rows),
              "unexpected states %r" % [brief(r) for r in rows])
        check(time.monotonic() < deadline, "events not done after 60 s: %r"
              % [brief(r) for r in rows])
        time.sleep(0.2)
    reap_orphans()

    lines = [l for l in read_lines(out) if l in ids]
    check(sorted(lines) == sorted(ids),
          "expected one line per event %r, got %r; lines present right after the "
          "kills: %r; action shells still alive "
          "after the kill: %r" % (sorted(ids), sorted(lines), before, left))
    check(not left, "action shells outlived their killed receiver: %r" % left)
    for eid in ids:
        row = event_row(srv, "stripe", eid)
        check_eq(row["attempts"], 2, "attempts of %s" % eid)
        att = attempt_rows(srv, "stripe", eid)
        check_eq([(a["attempt"], a["outcome"]) for a in att],
                 [(1, "lease_expired"), (2, "done")], "attempts rows of %s" % eid)
        check(att[1]["started_at"] >= lease_until[eid],
              "%s was taken again at %d, before its lease ran out at %d"
              % (eid, att[1]["started_at"], lease_until[eid]))
        check_eq(len(effect_rows(srv, "stripe", eid)), 1, "effects of %s" % eid)


# ---------------------------------------------------------------- worker server

ORDER_SH = """\
# Fails the first attempt of the event named in $1, so that the events
# after it for the same payment must wait for its retry.
if [ "$IDEMHOOK_EVENT_ID" = "$1" ] && [ "$IDEMHOOK_ATTEMPT" = 1 ]; then
	echo "order action: first attempt of $1 fails" >&2
	exit 4
fi
echo "$IDEMHOOK_EVENT_ID $IDEMHOOK_EVENT_TYPE" >> "%(dir)s/order.out"
"""

SLEEP10_SH = """\
sleep 10; echo "$IDEMHOOK_EVENT_ID" >> "%(dir)s/slow.out"
"""


def worker_server(bindir):
    srv = Server(bindir, providers=["stripe", "asaas"], name="worker")
    append = write_script(srv, "append.sh", APPEND_SH % {"dir": srv.tmp})
    srv.env.update({
        "IDEMHOOK_MODE": "worker",
        "IDEMHOOK_RETRY_BASE_MS": "300",
        # case_pg_big_memory's 16 MiB event (lighttpd's limit is 32 MiB).
        "IDEMHOOK_STRIPE_MAX_BODY": str(20 * 1024 * 1024),
        # Were the receiver to run actions in worker mode, this would show.
        "IDEMHOOK_STRIPE_ACTION": "* /bin/sh " + append,
        "IDEMHOOK_ASAAS_ACTION": "* /bin/sh " + append,
    })
    return srv


def worker_settings(srv):
    return {k: v for k, v in srv.env.items() if k != "IDEMHOOK_MODE"}


def case_worker_records_only(srv, work):
    """Worker mode: the receiver only records; `idemhook work --once`
    processes."""
    eid = new_id("wrk")
    deliver(srv, eid, "payment_intent.succeeded")
    time.sleep(1.0)  # time enough for an after-response attempt, were there one
    row = event_row(srv, "stripe", eid)
    check_eq((row["status"], row["attempts"]), ("received", 0),
             "status and attempts after the answer in worker mode")
    check_eq(attempt_rows(srv, "stripe", eid), [], "attempts rows before work")
    check_eq(effect_rows(srv, "stripe", eid), [], "effects before work")
    out = os.path.join(srv.tmp, "append.out")
    check_eq([l for l in read_lines(out) if eid in l], [], "action runs before work")
    n = work.once("--provider", "stripe")
    check_eq(n, 1, "events processed by idemhook work --once")
    row = event_row(srv, "stripe", eid)
    check_eq((row["status"], row["attempts"]), ("done", 1), "status and attempts after work")
    check_eq(len([l for l in read_lines(out) if l.split()[1:2] == [eid]]), 1,
             "action runs after work")
    check_eq([e["kind"] for e in effect_rows(srv, "stripe", eid)],
             ["payment_completed"], "effects after work")


def case_worker_big(srv, work):
    """A 2 MiB event, past the store's 1 MiB line for blob I/O: recorded in
    worker mode (inserted as zeros, then written into its pages), then
    read back by `idemhook work` straight into one buffer: its action gets
    the body byte for byte."""
    eid = new_id("big")
    obj = json.loads(stripe_body(eid, "payment_intent.succeeded"))
    obj["data"]["object"]["metadata"] = {"pad": "x" * (2 * 1024 * 1024)}
    body = json.dumps(obj).encode()
    r = post_stripe(srv, body)
    cases.expect_accepted(r, "delivery of the 2 MiB event")
    check_eq(work.once("--provider", "stripe"), 1, "events processed")
    row = event_row(srv, "stripe", eid)
    check_eq((row["status"], row["attempts"]), ("done", 1), "status and attempts")
    check(bytes(row["payload"]) == body, "stored payload differs from the body")
    with open(os.path.join(srv.tmp, "payload." + eid), "rb") as f:
        got = f.read()
    check(got == body, "the action got %d bytes, not the %d of the body"
          % (len(got), len(body)))


def stripe_hwm_kib(srv):
    """The largest peak RSS (VmHWM, KiB) of the server's stripe.fcgi."""
    out = 0
    for pid in harness._children_of(srv.proc.pid):
        if harness.program_of(pid).endswith("/stripe.fcgi"):
            with open("/proc/%d/status" % pid) as f:
                for ln in f:
                    if ln.startswith("VmHWM:"):
                        out = max(out, int(ln.split()[1]))
    return out


def work_peak_kib(work):
    """`idemhook work --once`'s peak RSS (KiB), by GNU time (tests/deps.sh
    installs it): a child of this script would start from its RSS."""
    env = dict(work.env)
    # Under ASan, freed memory waits in a quarantine, resident: not ours.
    env["ASAN_OPTIONS"] = ((env["ASAN_OPTIONS"] + ":")
                           if env.get("ASAN_OPTIONS") else "") + \
        "quarantine_size_mb=0"
    with tempfile.NamedTemporaryFile("r") as tf:
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", tf.name,
                            work.cmd, "work", "--once"], env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=WORK_TIMEOUT)
        check_eq(p.returncode, 0, "idemhook work --once: %s"
                 % p.stderr.decode(errors="replace")[-300:])
        return int(tf.read().split()[-1])


def case_pg_big_memory(srv, work, mib=16):
    """PostgreSQL: a 16 MiB event costs each program about its size once.
    libpq copies a statement's parameters whole into its output buffer,
    and a claim's answer came as hex text held twice and then decoded: the
    receiver grew 2x the body, idemhook work 6x.  A payload over 1 MiB is
    now written in 1 MiB slices (a large object in the recording
    transaction) and read back in binary 1 MiB slices (pg_payload.c)."""
    idle = work_peak_kib(work)
    before = stripe_hwm_kib(srv)
    eid = new_id("pgbig")
    obj = json.loads(stripe_body(eid, "payment_intent.succeeded"))
    obj["pad"] = "x" * (mib * 1024 * 1024)
    body = json.dumps(obj).encode()
    cases.expect_accepted(post_stripe(srv, body), "the %d MiB event" % mib)
    grew = (stripe_hwm_kib(srv) - before) * 1024 / len(body)
    peak = work_peak_kib(work)
    wgrew = (peak - idle) * 1024 / len(body)
    tap_note = "receiver grew %.2fx the body, idemhook work %.2fx" % (
        grew, wgrew)
    print("# " + tap_note, flush=True)
    check(grew <= 1.5 and wgrew <= 1.5, tap_note + " (bound 1.5x)")
    check_eq(event_row(srv, "stripe", eid)["status"], "done", "status")


def case_two_workers(srv, work, n_events=200):
    """Two `idemhook work --once` at once on 200 due events: each event
    processed exactly once."""
    ids = [new_id("w%03d" % i) for i in range(n_events)]
    lock = threading.Lock()
    failures = []

    def post_range(k):
        for eid in ids[k::8]:
            try:
                deliver(srv, eid, "payment_intent.succeeded")
            except Exception as e:  # noqa: BLE001
                with lock:
                    failures.append("%s: %s" % (eid, e))
    res = parallel(8, post_range, timeout=120)
    check(not failures and all(r is None for r in res),
          "deliveries failed: %r %r" % (failures[:3], [r for r in res if r][:3]))
    placeholders = ",".join("?" * len(ids))
    st = query(srv, "SELECT status, count(*) AS n FROM events WHERE provider = 'stripe'"
               " AND event_id IN (%s) GROUP BY status" % placeholders, ids)
    check_eq({r["status"]: r["n"] for r in st}, {"received": n_events},
             "states before the workers")

    a = work.start("--once", "--provider", "stripe")
    b = work.start("--once", "--provider", "stripe")
    try:
        na = Work.finish(a, "worker A")
        nb = Work.finish(b, "worker B")
    finally:
        for p in (a, b):
            if p.poll() is None:
                p.kill()
                p.wait()
    print("# worker A processed %s, worker B %s" % (na, nb), flush=True)
    check(na is not None and nb is not None, "a worker printed no count")
    check_eq(na + nb, n_events, "events processed by the two workers together")

    lines = [l.split()[1] for l in read_lines(os.path.join(srv.tmp, "append.out"))
             if l.split()[1:2] and l.split()[1] in set(ids)]
    dup = sorted({x for x in lines if lines.count(x) > 1})
    check(not dup, "events whose action ran more than once: %r" % dup[:5])
    check_eq(len(lines), n_events, "action lines")
    check_eq(set(lines), set(ids), "events whose action ran")
    st = query(srv, "SELECT status, attempts, count(*) AS n FROM events WHERE provider ="
               " 'stripe' AND event_id IN (%s) GROUP BY status, attempts" % placeholders, ids)
    check_eq([(r["status"], r["attempts"], r["n"]) for r in st], [("done", 1, n_events)],
             "(status, attempts, count) after the workers")
    n_att = query(srv, "SELECT count(*) AS n FROM attempts a JOIN events e ON e.id ="
                  " a.event WHERE e.event_id IN (%s)" % placeholders, ids)[0]["n"]
    check_eq(n_att, n_events, "attempts rows")
    n_eff = query(srv, "SELECT count(*) AS n FROM effects f JOIN events e ON e.id ="
                  " f.event WHERE e.event_id IN (%s)" % placeholders, ids)[0]["n"]
    check_eq(n_eff, n_events, "effects rows")


def case_timeout(srv, bindir):
    """IDEMHOOK_ACTION_TIMEOUT=1 and an action that sleeps 10 s: the attempt
    fails with 'killed after the 1 s timeout' and nothing of it survives."""
    eid = new_id("slow")
    deliver(srv, eid, "test.slow")
    slow = write_script(srv, "sleep10.sh", SLEEP10_SH % {"dir": srv.tmp})
    w = Work(bindir, srv.db, {"IDEMHOOK_ACTION_TIMEOUT": "1",
                              "IDEMHOOK_RETRY_BASE_MS": "60000",
                              "IDEMHOOK_STRIPE_ACTION": "test.slow /bin/sh " + slow})
    t0 = time.monotonic()
    n = w.once("--provider", "stripe")
    took = time.monotonic() - t0
    check_eq(n, 1, "events processed")
    check(took < 8, "idemhook work took %.1f s: the 10 s action was not cut short" % took)
    row = event_row(srv, "stripe", eid)
    check_eq(row["status"], "failed", "status")
    check_eq(row["last_error"], "killed after the 1 s timeout", "last_error")
    check_eq([(a["outcome"], a["error"]) for a in attempt_rows(srv, "stripe", eid)],
             [("failed", "killed after the 1 s timeout")], "attempts rows")
    wait_for("the timed-out action's processes to go",
             lambda: not action_procs(eid), 3)
    reap_orphans()


def case_order(srv, bindir):
    """Asaas: events of one payment are processed in the order received, even
    when one of them fails first; other payments' events go on."""
    order = write_script(srv, "order.sh", ORDER_SH % {"dir": srv.tmp})
    plan = [("pay_1", "PAYMENT_CREATED"), ("pay_2", "PAYMENT_CREATED"),
            ("pay_1", "PAYMENT_UPDATED"), ("pay_1", "PAYMENT_CONFIRMED"),
            ("pay_2", "PAYMENT_CONFIRMED"), ("pay_1", "PAYMENT_RECEIVED"),
            ("pay_2", "PAYMENT_RECEIVED"), ("pay_1", "PAYMENT_REFUNDED")]
    sent = []
    for pay, etype in plan:
        eid = new_id("as")
        post_asaas(srv, eid, etype, pay)
        sent.append((eid, etype, pay))
    for eid, _t, pay in sent:
        row = event_row(srv, "asaas", eid)
        check_eq((row["status"], row["order_key"]), ("received", pay),
                 "state and order key of %s as recorded" % eid)
    # The second event of pay_1 fails on its first attempt.
    fail_id = [e for e, _t, p in sent if p == "pay_1"][1]
    w = Work(bindir, srv.db, {"IDEMHOOK_RETRY_BASE_MS": "300",
                              "IDEMHOOK_ASAAS_ACTION": "* /bin/sh %s %s" % (order, fail_id)})
    deadline = time.monotonic() + 30
    while True:
        w.once("--provider", "asaas")
        rows = [event_row(srv, "asaas", e) for e, _t, _p in sent]
        if all(r["status"] == "done" for r in rows):
            break
        check(all(r["status"] in ("received", "failed", "done") for r in rows),
              "unexpected states %r" % [brief(r) for r in rows])
        check(time.monotonic() < deadline, "asaas events not done after 30 s: %r"
              % [brief(r) for r in rows])
        time.sleep(0.2)
    check_eq(event_row(srv, "asaas", fail_id)["attempts"], 2,
             "attempts of the event that failed first")
    got = [l.split() for l in read_lines(os.path.join(srv.tmp, "order.out"))]
    by_id = {e: p for e, _t, p in sent}
    for pay in ("pay_1", "pay_2"):
        want = [[e, t] for e, t, p in sent if p == pay]
        check_eq([g for g in got if by_id.get(g[0]) == pay], want,
                 "order in which %s's events were processed" % pay)


# ---------------------------------------------------------------- inline server

GATE_SH = """\
# Succeeds only once the flag file exists.
if [ ! -e "%(dir)s/flag" ]; then
	echo "gate closed" >&2
	exit 5
fi
echo "$IDEMHOOK_EVENT_ID" >> "%(dir)s/inline.out"
"""


def inline_server(bindir):
    # One process with one request thread: every delivery reuses that
    # thread's request buffer, so an inline job that freed the buffer it
    # borrowed shows at the next delivery (ASan), not by chance.
    srv = Server(bindir, providers=["stripe"], name="inline", max_procs=1)
    gate = write_script(srv, "gate.sh", GATE_SH % {"dir": srv.tmp})
    srv.env.update({"IDEMHOOK_MODE": "inline", "IDEMHOOK_THREADS": "1",
                    "IDEMHOOK_STRIPE_ACTION": "* /bin/sh " + gate})
    return srv


def case_inline(srv):
    """Inline mode: a failing action answers 500 and leaves no row; the
    provider's retry, once the action works, is accepted and done."""
    eid = new_id("inl")
    body = stripe_body(eid, "payment_intent.succeeded")
    r = post_stripe(srv, body)
    cases.expect_error(r, 500, "delivery while the action fails")
    check_eq((r.json() or {}).get("error"), "processing_failed", "error code")
    check_eq(srv.rows("stripe", eid), [], "rows after the failed inline attempt")
    check_eq(query(srv, "SELECT count(*) AS n FROM attempts")[0]["n"], 0,
             "attempts rows after the rollback")
    check_eq(read_lines(os.path.join(srv.tmp, "inline.out")), [], "action output")

    with open(os.path.join(srv.tmp, "flag"), "w"):
        pass
    time.sleep(1.1)  # the retry carries a later timestamp, as Stripe's would
    r = post_stripe(srv, body)
    cases.expect_accepted(r, "retry once the action works")
    row = event_row(srv, "stripe", eid)
    check_eq((row["status"], row["attempts"]), ("done", 1),
             "status and attempts after the retry")
    check_eq(read_lines(os.path.join(srv.tmp, "inline.out")), [eid], "action output")
    check_eq([e["kind"] for e in effect_rows(srv, "stripe", eid)],
             ["payment_completed"], "effects")
    check_eq([(a["attempt"], a["outcome"]) for a in attempt_rows(srv, "stripe", eid)],
             [(1, "done")], "attempts rows")
    cases.expect_duplicate(post_stripe(srv, body), "a further redelivery")
    check_eq(read_lines(os.path.join(srv.tmp, "inline.out")), [eid],
             "action output after a redelivery")


# ---------------------------------------------------------------- slow actions

SLOW_ACTION_S = 3
# What "a fraction of a second" means for the next delivery's answer.
ANSWER_BOUND_S = 0.5


def slow_server(bindir):
    """One FastCGI process (max_procs=1), after-response, an action that
    sleeps for test.slow events."""
    srv = Server(bindir, providers=["stripe"], name="slow1", max_procs=1)
    srv.env.update({
        "IDEMHOOK_STRIPE_ACTION": "test.slow sleep %d" % SLOW_ACTION_S,
    })
    return srv


def case_slow_blocks_nobody(srv, tap):
    """One process, a `sleep 3` action: the next delivery's answer comes
    within a fraction of a second, and both events end up done."""
    slow = new_id("slow")
    deliver(srv, slow, "test.slow")
    time.sleep(0.1)  # the action has started
    nxt = new_id("next")
    t0 = time.monotonic()
    deliver(srv, nxt, "payment_intent.created")
    took = time.monotonic() - t0
    tap.diag("next delivery's answer with a %d s action running in the only "
             "process: %.3f s" % (SLOW_ACTION_S, took))
    check(took < ANSWER_BOUND_S, "the next delivery waited %.2f s for the %d s "
          "action of another event" % (took, SLOW_ACTION_S))
    for eid in (slow, nxt):
        row = wait_status(srv, "stripe", eid, ("done", "failed", "dead"),
                          SLOW_ACTION_S + 15)
        check_eq(row["status"], "done", "status of %s (last_error %r)"
                 % (eid, row["last_error"]))
    # Several more during another slow action: every answer quick.
    slow2 = new_id("slow2")
    deliver(srv, slow2, "test.slow")
    time.sleep(0.1)
    worst = 0.0
    more = [new_id("more%d" % i) for i in range(5)]
    for eid in more:
        t0 = time.monotonic()
        deliver(srv, eid, "payment_intent.created")
        worst = max(worst, time.monotonic() - t0)
    check(worst < ANSWER_BOUND_S, "a delivery waited %.2f s behind a slow action" % worst)
    for eid in [slow2] + more:
        row = wait_status(srv, "stripe", eid, ("done", "failed", "dead"),
                          SLOW_ACTION_S + 15)
        check_eq(row["status"], "done", "status of %s" % eid)
        check_eq([(a["attempt"], a["outcome"]) for a in attempt_rows(srv, "stripe", eid)],
                 [(1, "done")], "attempts rows of %s" % eid)


# ---------------------------------------------------------------- leases

LEASE_SH = """\
# Three steps of one event's actions, each logging its start and end.
echo "start $IDEMHOOK_EVENT_ID $1 $(date +%%s.%%N)" >> "%(dir)s/lease.out"
sleep %(nap)s
echo "end $IDEMHOOK_EVENT_ID $1 $(date +%%s.%%N)" >> "%(dir)s/lease.out"
"""


def lease_settings(srv, nap, lease, timeout):
    script = write_script(srv, "lease.sh", LEASE_SH % {"dir": srv.tmp, "nap": nap})
    return {"IDEMHOOK_LEASE": str(lease), "IDEMHOOK_ACTION_TIMEOUT": str(timeout),
            "IDEMHOOK_BUSY_TIMEOUT_MS": "900",  # LEASE > TIMEOUT + busy
            "IDEMHOOK_RETRY_BASE_MS": "200", "IDEMHOOK_MAX_ATTEMPTS": "5",
            "IDEMHOOK_STRIPE_ACTION": "test.lease /bin/sh %s 1" % script,
            "IDEMHOOK_STRIPE_ACTION_2": "test.lease /bin/sh %s 2" % script,
            "IDEMHOOK_STRIPE_ACTION_3": "test.lease /bin/sh %s 3" % script}


def lease_runs(srv, eid):
    """[(step, start, end)] of eid's action runs, from lease.out."""
    starts, runs = {}, []
    for line in read_lines(os.path.join(srv.tmp, "lease.out")):
        f = line.split()
        if len(f) != 4 or f[1] != eid:
            continue
        if f[0] == "start":
            starts.setdefault(f[2], []).append(float(f[3]))
        elif starts.get(f[2]):
            runs.append((f[2], starts[f[2]].pop(0), float(f[3])))
    return sorted(runs, key=lambda r: r[1])


def case_lease_refused(srv, bindir):
    """A lease not longer than one action's timeout is refused by `idemhook
    check`, `idemhook work` and the receivers (500 bad_config)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IDEMHOOK_DB": srv.db,
           "IDEMHOOK_STRIPE_SECRET": srv.secrets["stripe"],
           "IDEMHOOK_LEASE": "2", "IDEMHOOK_ACTION_TIMEOUT": "30",
           "IDEMHOOK_STRIPE_ACTION": "* true"}
    for k in SANITIZER_ENV:
        if k in os.environ:
            env[k] = os.environ[k]
    r = subprocess.run([os.path.join(bindir, "idemhook"), "check", "--provider", "stripe"],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    out = r.stdout.decode(errors="replace")
    check(r.returncode == 1, "idemhook check with LEASE=2 < ACTION_TIMEOUT=30 exited %d: %s"
          % (r.returncode, out))
    check("IDEMHOOK_LEASE" in out and "IDEMHOOK_ACTION_TIMEOUT" in out,
          "idemhook check does not name the lease and the timeout: %s" % out)
    r = subprocess.run([os.path.join(bindir, "idemhook"), "work", "--once"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    out = r.stdout.decode(errors="replace")
    check(r.returncode != 0 and "IDEMHOOK_LEASE" in out,
          "idemhook work with LEASE=2 < ACTION_TIMEOUT=30 exited %d: %s" % (r.returncode, out))
    # Issue 24 item 9: longer than the action, but no room for the commit
    # after it (the busy timeout, 5 s by default): refused too.
    env["IDEMHOOK_LEASE"] = "35"
    r = subprocess.run([os.path.join(bindir, "idemhook"), "check", "--provider", "stripe"],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    out = r.stdout.decode(errors="replace")
    check(r.returncode == 1 and "IDEMHOOK_BUSY_TIMEOUT_MS" in out,
          "idemhook check with LEASE=35 = ACTION_TIMEOUT=30 + busy 5 s exited %d: %s"
          % (r.returncode, out))
    env["IDEMHOOK_LEASE"] = "36"
    r = subprocess.run([os.path.join(bindir, "idemhook"), "check", "--provider", "stripe"],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    out = r.stdout.decode(errors="replace")
    check("IDEMHOOK_LEASE" not in out or "problem" not in out.split("IDEMHOOK_LEASE")[0][-200:],
          "LEASE=36 > ACTION_TIMEOUT=30 + busy 5 s still reported: %s" % out)


def case_lease_refused_receiver(bindir, servers):
    srv = servers.add(Server(bindir, providers=["stripe"], name="badlease", env={
        "IDEMHOOK_LEASE": "2", "IDEMHOOK_ACTION_TIMEOUT": "30",
        "IDEMHOOK_STRIPE_ACTION": "* true"}))
    srv.start()
    try:
        r = post_stripe(srv, stripe_body(new_id("badlease"), "charge.created"))
        cases.expect_error(r, 500, "delivery with LEASE=2 < ACTION_TIMEOUT=30")
        check_eq((r.json() or {}).get("error"), "bad_config", "error code")
    finally:
        srv.cleanup()


def case_no_overlap(srv, bindir):
    """The probe: a short lease (4 s), three actions of 1.5 s each (4.5 s
    in all, each under its 3 s timeout: with 2 s, a loaded machine's
    `sleep 1.5` was cut short), two `idemhook work` loops.  The lease is
    renewed before each action, so the second worker never takes the
    event over: no two runs overlap, each step runs once, and every
    attempt row is closed."""
    settings = dict(lease_settings(srv, "1.5", 4, 3), IDEMHOOK_MODE="worker")
    w = Work(bindir, srv.db, settings)
    ids = [new_id("lease%d" % i) for i in range(2)]
    for eid in ids:
        deliver(srv, eid, "test.lease")
    a = w.start("--interval", "0.05", "--provider", "stripe")
    time.sleep(0.3)
    b = w.start("--interval", "0.05", "--provider", "stripe")
    try:
        for eid in ids:
            row = wait_status(srv, "stripe", eid, ("done", "dead"), 40)
            check_eq(row["status"], "done", "status of %s" % eid)
    finally:
        for p in (a, b):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in (a, b):
            Work.finish(p, "idemhook work --interval 0.05", 30)
    for eid in ids:
        runs = lease_runs(srv, eid)
        check_eq(sorted(r[0] for r in runs), ["1", "2", "3"],
                 "steps run for %s (runs %r)" % (eid, runs))
        for prev, cur in zip(runs, runs[1:]):
            check(cur[1] >= prev[2], "%s: step %s started at %.3f while step %s ran "
                  "until %.3f" % (eid, cur[0], cur[1], prev[0], prev[2]))
        att = attempt_rows(srv, "stripe", eid)
        check_eq([(x["attempt"], x["outcome"]) for x in att], [(1, "done")],
                 "attempts rows of %s" % eid)
        check(all(x["finished_at"] for x in att), "open attempt rows: %r" % att)


def case_lease_lost(srv, bindir):
    """A worker that loses its lease (stopped past it) stops at its next
    action: the worker that took the event over runs every step once, the
    first one runs none after the loss, and both attempt rows are closed."""
    settings = dict(lease_settings(srv, "0.5", 3, 2), IDEMHOOK_MODE="worker")
    w = Work(bindir, srv.db, settings)
    eid = new_id("lost")
    deliver(srv, eid, "test.lease")
    a = w.start("--once", "--provider", "stripe")
    try:
        wait_for("the first step of %s" % eid,
                 lambda: any(r[0] == "1" for r in lease_runs(srv, eid)) or
                 any(l.startswith("start %s 1" % eid)
                     for l in read_lines(os.path.join(srv.tmp, "lease.out"))), 10)
        os.kill(a.pid, signal.SIGSTOP)
        try:
            time.sleep(3.5)  # past the 3 s lease
            n = w.once("--provider", "stripe")
            check_eq(n, 1, "events the second worker processed")
        finally:
            os.kill(a.pid, signal.SIGCONT)
        Work.finish(a, "the stopped worker")
    finally:
        if a.poll() is None:
            a.kill()
            a.wait()
    row = event_row(srv, "stripe", eid)
    check_eq(row["status"], "done", "status")
    runs = lease_runs(srv, eid)
    steps = [r[0] for r in runs]
    check_eq(sorted(steps), ["1", "1", "2", "3"],
             "steps run (the first worker's step 1, then the second's three)")
    att = attempt_rows(srv, "stripe", eid)
    check_eq(len(att), 2, "attempts rows: %r" % att)
    check(all(x["finished_at"] for x in att), "open attempt rows: %r" % att)
    check_eq(att[1]["outcome"], "done", "the second attempt's outcome")
    check(att[0]["outcome"] in ("lease_lost", "lease_expired"),
          "the first attempt's outcome: %r" % att[0]["outcome"])


# ---------------------------------------------------------------- inline and the lock

def inline_lock_server(bindir):
    srv = Server(bindir, providers=["stripe", "github"], name="inline-lock")
    srv.env.update({"IDEMHOOK_MODE": "inline", "IDEMHOOK_BUSY_TIMEOUT_MS": "1000",
                    "IDEMHOOK_STRIPE_ACTION": "test.slow sleep %d" % SLOW_ACTION_S})
    return srv


def case_inline_no_lock(srv):
    """Inline mode, a Stripe action `sleep 3`, 1 s busy timeout: a GitHub
    delivery meanwhile is answered at once (no 503), and a redelivery of
    the Stripe event meanwhile is 503 in_progress, never 200."""
    import reliability as R
    eid = new_id("inlk")
    body = stripe_body(eid, "test.slow")
    res = {}

    def slow():
        res["stripe"] = post_stripe(srv, body)
    th = threading.Thread(target=slow)
    t0 = time.monotonic()
    th.start()
    time.sleep(0.5)
    d = R.delivery(srv, "github", tag="inlk")
    t1 = time.monotonic()
    r = d.post(srv)
    took = time.monotonic() - t1
    cases.expect_accepted(r, "GitHub delivery during the Stripe inline action")
    check(took < 0.9, "the GitHub delivery waited %.2f s" % took)
    r = post_stripe(srv, body)
    cases.expect_error(r, 503, "redelivery while the event is processed inline")
    check_eq((r.json() or {}).get("error"), "in_progress", "error code")
    th.join(30)
    check("stripe" in res, "the slow Stripe delivery got no answer")
    cases.expect_accepted(res["stripe"], "the slow Stripe delivery")
    check(time.monotonic() - t0 >= SLOW_ACTION_S, "answered before its action ended")
    row = event_row(srv, "stripe", eid)
    check_eq((row["status"], row["attempts"]), ("done", 1), "status and attempts")
    cases.expect_duplicate(post_stripe(srv, body), "redelivery once done")


# ---------------------------------------------------------------- inline, one program

INLINE_SLOW_S = 4
INLINE_SLOW_SH = """\
sleep %(secs)d
echo "$IDEMHOOK_EVENT_ID" > "%(dir)s/slow.ended"
"""


def inline_one_server(bindir):
    """Inline Stripe in one FastCGI process (max_procs=1, the default
    request threads): a test.slow action sleeps, then writes a marker."""
    srv = Server(bindir, providers=["stripe"], name="inline-one", max_procs=1)
    slow = write_script(srv, "slow.sh", INLINE_SLOW_SH % {"dir": srv.tmp,
                                                         "secs": INLINE_SLOW_S})
    srv.env.update({"IDEMHOOK_MODE": "inline",
                    "IDEMHOOK_STRIPE_ACTION": "test.slow /bin/sh " + slow})
    return srv


def case_inline_same_program(srv, tap):
    """Issue 24 item 4: inline mode, one process, a 4 s action: a delivery
    of another type to the same program, sent 0.5 s later, is answered
    while the action still runs (its marker file is not there yet); the
    slow one is answered only after its action ended (the marker is)."""
    marker = os.path.join(srv.tmp, "slow.ended")
    slow = new_id("inl1")
    res = {}

    def post_slow():
        res["slow"] = post_stripe(srv, stripe_body(slow, "test.slow"))
        res["slow_marker"] = os.path.exists(marker)
    th = threading.Thread(target=post_slow)
    th.start()
    time.sleep(0.5)
    other = new_id("inl2")
    t0 = time.monotonic()
    r = post_stripe(srv, stripe_body(other, "charge.created"))
    took = time.monotonic() - t0
    ended = os.path.exists(marker)
    tap.diag("other type's answer with a %d s inline action running in the same "
             "process: %.3f s" % (INLINE_SLOW_S, took))
    cases.expect_accepted(r, "the other delivery")
    check(not ended, "the other delivery was answered only after the %d s action "
          "ended (%.2f s)" % (INLINE_SLOW_S, took))
    th.join(INLINE_SLOW_S + 30)
    check("slow" in res, "the slow delivery got no answer")
    cases.expect_accepted(res["slow"], "the slow delivery")
    check(res["slow_marker"], "the slow delivery was answered before its action ended")
    for eid in (slow, other):
        row = event_row(srv, "stripe", eid)
        check_eq((row["status"], row["attempts"]), ("done", 1),
                 "status and attempts of %s" % eid)


# ---------------------------------------------------------------- main

def run_cases(tap, bindir, servers):
    # Our servers' folders live in a folder of our own, out of the way of
    # anything that sweeps /tmp/ih-e2e-* while we run.
    own_tmp = tempfile.mkdtemp(prefix="ih-processing-")
    tempfile.tempdir = own_tmp
    try:
        run_all(tap, bindir, servers)
    finally:
        servers.cleanup()  # before their folder goes
        tempfile.tempdir = None
        if not os.environ.get("IH_KEEP_TMP"):
            shutil.rmtree(own_tmp, ignore_errors=True)


def run_all(tap, bindir, servers):
    def t(name, fn, *args):
        t0 = time.monotonic()
        ok = tap.run(name, fn, *args)
        tap.diag("%.1f s" % (time.monotonic() - t0))
        return ok
    # The PostgreSQL pass runs what touches the store.  What is about
    # processes and settings alone (one busy process, an action's timeout,
    # the lease rule) runs once, in the SQLite pass: it cannot differ.
    on_pg = harness.pg_backend()
    if on_pg:
        tap.diag("PostgreSQL pass: the one-process, action-timeout and "
                 "lease-rule cases run in the SQLite pass only")
    srv = servers.add(after_server(bindir))
    if t("processing: lighttpd starts (after-response, actions by type)", srv.start):
        work = Work(bindir, srv.db, srv.env)
        t("processing: 50 concurrent deliveries of one event -> one action run, "
          "one effect, done", case_concurrent, srv)
        t("processing: action fails twice then succeeds -> 3 attempts, backoff "
          "respected, done", case_flaky, srv, work)
        t("processing: action always fails -> dead after IDEMHOOK_MAX_ATTEMPTS=3 "
          "with last_error", case_dead, srv, work)
        t("processing: after-response server: no sanitizer reports",
          cases.case_sanitizers, srv)
        srv.stop()

    srv = servers.add(crash_server(bindir))
    if t("processing: lighttpd starts (IDEMHOOK_LEASE=5, slow action)", srv.start):
        work = Work(bindir, srv.db, dict(srv.env, IDEMHOOK_LEASE="60"))
        t("processing: kill -9 of the receiver during its action (sleep 3; echo) "
          "-> processing until the lease expires, then idemhook work runs it; "
          "one line per event", case_crash, srv, work, "payment_intent.succeeded")
        t("processing: kill -9 of the receiver during its action (a script "
          "file) -> one line per event, the killed attempt leaves none",
          case_crash, srv, work, "test.script")
        t("processing: crash server: no sanitizer reports", cases.case_sanitizers, srv)
        srv.stop()

    srv = servers.add(worker_server(bindir))
    if t("processing: lighttpd starts (IDEMHOOK_MODE=worker)", srv.start):
        work = Work(bindir, srv.db, worker_settings(srv))
        t("processing: worker mode: the receiver only records until idemhook work "
          "--once", case_worker_records_only, srv, work)
        t("processing: a 2 MiB event recorded in worker mode reaches its action "
          "byte for byte through idemhook work", case_worker_big, srv, work)
        if on_pg:
            t("processing: PostgreSQL: a 16 MiB event, recorded and processed by "
              "idemhook work: each program's peak RSS grows <= 1.5x the body",
              case_pg_big_memory, srv, work)
        t("processing: two idemhook work on 200 due events -> each processed "
          "exactly once", case_two_workers, srv, work)
        if not on_pg:
            t("processing: IDEMHOOK_ACTION_TIMEOUT=1, action sleeps 10 -> 'killed "
              "after the 1 s timeout'", case_timeout, srv, bindir)
        t("processing: asaas events of one payment processed in the order "
          "received", case_order, srv, bindir)
        if not on_pg:
            t("processing: LEASE=2 with ACTION_TIMEOUT=30 refused by idemhook "
              "check and idemhook work", case_lease_refused, srv, bindir)
        t("processing: two idemhook work, lease 4 s, three 1.5 s actions -> lease "
          "renewed, no overlapping runs, attempt rows closed", case_no_overlap,
          srv, bindir)
        t("processing: a worker stopped past its lease runs no further action; "
          "both attempt rows closed", case_lease_lost, srv, bindir)
        t("processing: worker server: no sanitizer reports", cases.case_sanitizers, srv)
        srv.stop()
    if not on_pg:
        t("processing: LEASE=2 with ACTION_TIMEOUT=30 -> receiver answers 500 "
          "bad_config", case_lease_refused_receiver, bindir, servers)

    t("processing: a version-5 store (payloads in the events rows) is migrated; "
      "its due events processed once with their payloads", case_migrate_payloads,
      bindir, servers)

    srv = servers.add(slow_server(bindir)) if not on_pg else None
    if srv and t("processing: lighttpd starts (one process, a sleep 3 action)",
                 srv.start):
        t("processing: a sleep 3 action in the only process -> the next deliveries "
          "answered within 0.5 s; all done", case_slow_blocks_nobody, srv, tap)
        t("processing: slow server: no sanitizer reports", cases.case_sanitizers, srv)
        srv.stop()

    srv = servers.add(inline_lock_server(bindir))
    if t("processing: lighttpd starts (inline, a sleep 3 action, busy timeout 1 s)",
         srv.start):
        t("processing: inline action running -> a GitHub delivery is not blocked "
          "(no 503); the same event meanwhile -> 503 in_progress", case_inline_no_lock,
          srv)
        t("processing: inline-lock server: no sanitizer reports", cases.case_sanitizers,
          srv)
        srv.stop()

    srv = servers.add(inline_one_server(bindir)) if not on_pg else None
    if srv and t("processing: lighttpd starts (inline, one process, a 4 s action)",
                 srv.start):
        t("processing: inline 4 s action -> another type to the same process "
          "answered while it runs; the slow one after it ended",
          case_inline_same_program, srv, tap)
        t("processing: inline-one server: no sanitizer reports",
          cases.case_sanitizers, srv)
        srv.stop()

    srv = servers.add(inline_server(bindir))
    if t("processing: lighttpd starts (IDEMHOOK_MODE=inline)", srv.start):
        t("processing: inline mode: failing action -> 500, no row; retry -> "
          "accepted and done", case_inline, srv)
        t("processing: inline server: no sanitizer reports", cases.case_sanitizers, srv)
        srv.stop()


if __name__ == "__main__":
    sys.exit(suite_main("processing", run_cases,
                        needs=("stripe.fcgi", "asaas.fcgi", "idemhook")))
