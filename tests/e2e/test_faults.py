#!/usr/bin/env python3
"""Fault injection end to end: the receivers behind lighttpd (shipped
config) when the store cannot record, and when a receiver dies mid-way.

Usage: test_faults.py BINDIR   (or IH_BIN=BINDIR test_faults.py)

Store faults: disk full, read-only filesystem, a directory that cannot be
created, a corrupted file, a store of a newer schema, the write lock held
by another process.  Each must answer 503 + Retry-After (500 for the
newer schema), never 200, write one log line naming the cause, and accept
the same delivery once the fault is gone.

Crashes: IDEMHOOK_FAULT=before-commit|after-commit|processing kills the
receiver with SIGKILL at that step (shared/fault.h; honoured only by builds
with -DIH_FAULTS, which SANITIZE=1 gives).  After the provider's retry and
'idemhook work --once', every event has one row, is done, has one effect
row (Stripe's switch writes one) and its action ran.

The tests run as root: tmpfs mounts make a small or read-only filesystem.
Where a mount is refused, disk full falls back to a file size limit
(RLIMIT_FSIZE with SIGXFSZ ignored) set on the receivers, and read-only to
chattr +i on the store (IH_NO_MOUNT=1 forces these fallbacks).  Mounts are
always undone.
"""

import os
import resource
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import Server, check, check_eq, suite_main  # noqa: E402
import reliability as R  # noqa: E402
import harness  # noqa: E402

NO_2XX = "a delivery the store could not record must never get a 2xx"


def mount_tmpfs(path, size="2m"):
    """Mounts a tmpfs of size at path; returns None or the refusal."""
    os.makedirs(path, exist_ok=True)
    if os.environ.get("IH_NO_MOUNT"):  # exercise the fallbacks
        return "IH_NO_MOUNT is set"
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s,mode=0700" % size,
                        "tmpfs", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return None if r.returncode == 0 else (r.stdout.decode(errors="replace").strip()
                                           or "mount exited %d" % r.returncode)


def remount(path, mode):
    r = subprocess.run(["mount", "-o", "remount,%s" % mode, path],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    check(r.returncode == 0, "mount -o remount,%s %s: %s"
          % (mode, path, r.stdout.decode(errors="replace").strip()))


def umount(path):
    for _ in range(20):
        r = subprocess.run(["umount", path], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        if r.returncode == 0 or not os.path.ismount(path):
            return
        time.sleep(0.2)
    subprocess.run(["umount", "-l", path], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def expect_503(r, what):
    check(not (200 <= r.status < 300), "%s: %s; got %d %r" % (what, NO_2XX, r.status, r.body[:200]))
    check(r.status == 503, "%s: expected 503, got %d %r" % (what, r.status, r.body[:200]))
    ra = r.header("Retry-After")
    check(ra is not None and ra.strip().isdigit(),
          "%s: 503 without a numeric Retry-After (got %r)" % (what, ra))


def expect_status(r, code, body_status, what):
    j = r.json() or {}
    check(r.status == code and j.get("status") == body_status,
          "%s: expected %d %s, got %d %r" % (what, code, body_status, r.status, r.body[:200]))


def log_lines_with(srv, needle):
    return [l for l in srv.errorlog().splitlines() if needle in l]


def cause_logged(srv, status, words, what):
    """One request log line with status and a detail naming the cause."""
    lines = [l for l in log_lines_with(srv, "status=%d" % status) if "detail=" in l]
    check(lines, "%s: no log line with status=%d and a detail" % (what, status))
    hit = [l for l in lines if any(w in l.lower().replace("_", " ") for w in words)]
    check(hit, "%s: no status=%d log line naming the cause (%s); lines: %r"
          % (what, status, " or ".join(words), lines[-2:]))
    print("# %s: %s" % (what, hit[-1][hit[-1].find("idemhook:"):][:300]), flush=True)
    return hit[-1]


def refused_twice(srv, provider, tag, what, words, cause_what):
    """Starts srv; two deliveries of one event each answered 503 (what
    says under which fault), the cause logged (words, see cause_logged);
    removes srv.  Returns the delivery, for its retry once the fault is
    gone."""
    srv.start()
    d = R.delivery(srv, provider, tag=tag)
    for attempt in (1, 2):
        expect_503(R.delivery(srv, provider, eid=d.eid).post(srv),
                   "attempt %d %s" % (attempt, what))
    cause_logged(srv, 503, words, cause_what)
    srv.cleanup()
    return d


def post_until_recorded(srv, d, what, tries=20):
    """Posts d, re-sending it (freshly signed) as a provider would while
    the answer is a 5xx, e.g. lighttpd's own 500/503 while it restarts a
    receiver that died.  Returns the first non-5xx answer."""
    for _ in range(tries):
        r = R.delivery(srv, d.provider, eid=d.eid, body=d.body).post(srv)
        if r.status < 500:
            return r
        time.sleep(0.25)
    raise AssertionError("%s: still %d after %d tries" % (what, r.status, tries))


def fill(path):
    """Writes a file until the filesystem is full; returns its name."""
    name = os.path.join(path, "filler")
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (1 << 16, 4096, 512, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)
    return name


# ---------------------------------------------------------------- disk full

FSIZE_WRAPPER = (
    "import os, resource, signal, sys\n"
    "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n")


def disk_full(bindir, servers, tap):
    base = os.path.join(servers_tmp(servers), "full")
    refused = mount_tmpfs(base, "2m")
    mounted = refused is None
    if not mounted:
        tap.diag("tmpfs mount refused (%s): disk full simulated with RLIMIT_FSIZE" % refused)
    try:
        srv = Server(bindir, providers=["stripe", "asaas"], name="diskfull",
                     db=os.path.join(base, "data", "events.db"))
        if not mounted:
            wrapper = os.path.join(base, "fsize.py")
            with open(wrapper, "w") as f:
                f.write(FSIZE_WRAPPER)
            srv.wrap = "%s %s" % (sys.executable, wrapper)
        servers.add(srv)
        srv.start()
        first = R.delivery(srv, "stripe", tag="full0")
        expect_status(first.post(srv), 200, "accepted", "delivery before the disk fills")
        if mounted:
            filler = fill(base)
        else:
            size = os.path.getsize(srv.db) + os.path.getsize(srv.db + "-wal")
            srv._note_children()
            for pid in srv.fcgi_pids:
                resource.prlimit(pid, resource.RLIMIT_FSIZE, (size, resource.RLIM_INFINITY))
        n0 = R.count_rows(srv.db)
        pad = "x" * (300 * 1024)
        stuck = {}
        for p in ("stripe", "asaas"):
            eid = R.new_eid(p, "full")
            body = R.body_for(p, eid, extra={"pad": pad})
            for attempt in (1, 2, 3):
                d = R.delivery(srv, p, eid=eid, body=body)
                expect_503(d.post(srv), "%s attempt %d on a full disk" % (p, attempt))
            stuck[p] = (eid, body)
        check_eq(R.count_rows(srv.db), n0, "rows after deliveries refused on a full disk")
        cause_logged(srv, 503, ("full", "disk", "space", "too large", "i/o"),
                     "disk full")
        if mounted:
            os.unlink(filler)
        else:
            for pid in srv.fcgi_pids:
                resource.prlimit(pid, resource.RLIMIT_FSIZE,
                                 (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        for p, (eid, body) in stuck.items():
            d = R.delivery(srv, p, eid=eid, body=body)
            expect_status(d.post(srv), 200, "accepted", "%s retry once space returned" % p)
            check_eq(len(R.rows_of(srv.db, p, d.db_id)), 1, "rows of the retried event")
        check(not srv.sanitizer_reports(), "sanitizer reports: %r" % srv.sanitizer_reports())
        srv.cleanup()
    finally:
        if mounted:
            umount(base)


def servers_tmp(servers):
    if not hasattr(servers, "faults_tmp"):
        import tempfile
        servers.faults_tmp = tempfile.mkdtemp(prefix="ih-faults-")
    return servers.faults_tmp


# ---------------------------------------------------------------- read-only

def init_store(bindir, db):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IDEMHOOK_DB": db}
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
        if k in os.environ:
            env[k] = os.environ[k]
    r = subprocess.run([os.path.join(bindir, "idemhook"), "init"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    check(r.returncode == 0, "idemhook init: %s" % r.stdout.decode(errors="replace"))


def chattr(flag, *paths):
    r = subprocess.run(["chattr", flag] + list(paths), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    check(r.returncode == 0, "chattr %s: %s" % (flag, r.stdout.decode(errors="replace")))


def chmod_ro(paths, on):
    """Not root: write permission taken away (and given back), which binds
    an ordinary user as a read-only filesystem would."""
    for p in paths:
        mode = os.stat(p).st_mode & 0o7777
        os.chmod(p, (mode & ~0o222) if on else (mode | 0o200))


def read_only(bindir, servers, tap):
    """The filesystem remounted read-only (fallback: the store file and its
    directory made immutable with chattr +i, which binds root too; not
    root: the same files made read-only with chmod)."""
    base = os.path.join(servers_tmp(servers), "ro")
    refused = mount_tmpfs(base, "8m")
    mounted = refused is None
    db = os.path.join(base, "data", "events.db")
    frozen = []
    try:
        srv = servers.add(Server(bindir, providers=["stripe"], name="ro-setup", db=db))
        srv.start()
        expect_status(R.delivery(srv, "stripe").post(srv), 200, "accepted",
                      "delivery before the store turns read-only")
        srv.cleanup()  # a filesystem with files open for writing stays rw
        if mounted:
            remount(base, "ro")
        else:
            tap.diag("tmpfs mount refused (%s): chattr +i instead" % refused)
            frozen = [p for p in (db, db + "-wal", db + "-shm", os.path.dirname(db))
                      if os.path.exists(p)]
            if os.geteuid() == 0:
                chattr("+i", *frozen)
            else:
                chmod_ro(frozen, True)
        srv = servers.add(Server(bindir, providers=["stripe"], name="ro", db=db))
        d = refused_twice(srv, "stripe", "ro", "on a read-only store",
                          ("read-only", "readonly", "read only", "not permitted",
                           "unable to open", "permission denied"), "read-only store")
        if mounted:
            remount(base, "rw")
        elif os.geteuid() == 0:
            chattr("-i", *frozen)
            frozen = []
        else:
            chmod_ro(frozen, False)
            frozen = []
        srv = servers.add(Server(bindir, providers=["stripe"], name="ro-after", db=db))
        srv.start()
        expect_status(R.delivery(srv, "stripe", eid=d.eid).post(srv), 200, "accepted",
                      "retry once the store is writable again")
        check_eq(len(R.rows_of(db, "stripe", d.eid)), 1, "rows of the retried event")
        srv.cleanup()
    finally:
        if frozen and os.geteuid() == 0:
            subprocess.run(["chattr", "-i"] + frozen)
        elif frozen:
            chmod_ro(frozen, False)
        if mounted:
            umount(base)


# ---------------------------------------------------------------- missing dir

def missing_dir(bindir, servers, tap):
    base = servers_tmp(servers)
    blocker = os.path.join(base, "not-a-dir")
    with open(blocker, "w") as f:
        f.write("a regular file where a directory should be\n")
    db = os.path.join(blocker, "data", "events.db")
    srv = servers.add(Server(bindir, providers=["asaas"], name="nodir", db=db))
    d = refused_twice(srv, "asaas", "nodir",
                      "with IDEMHOOK_DB under a path that cannot be created",
                      ("directory", "not a directory", "cannot create"),
                      "uncreatable directory")
    # The operator fixes the path; the provider's retry is accepted.
    os.unlink(blocker)
    srv = servers.add(Server(bindir, providers=["asaas"], name="nodir-fixed", db=db,
                             secrets={"asaas": srv.secrets["asaas"]}))
    srv.start()
    expect_status(d.post(srv), 200, "accepted", "retry once the directory can be made")
    check_eq(len(R.rows_of(db, "asaas", d.eid)), 1, "rows")
    srv.cleanup()


# ---------------------------------------------------------------- corrupted

def corrupted(bindir, servers, tap):
    base = servers_tmp(servers)
    for what, damage in (("garbage over the whole file", "all"),
                         ("garbage over the pages after the header", "pages")):
        db = os.path.join(base, "corrupt-%s" % damage, "events.db")
        srv = servers.add(Server(bindir, providers=["stripe"], name="corrupt", db=db))
        srv.start()
        for _ in range(3):
            expect_status(R.delivery(srv, "stripe").post(srv), 200, "accepted", "before damage")
        srv.cleanup()
        for suffix in ("-wal", "-shm"):
            if os.path.exists(db + suffix):
                os.unlink(db + suffix)
        size = os.path.getsize(db)
        with open(db, "r+b") as f:
            if damage == "all":
                f.write(os.urandom(size))
            else:
                f.seek(100)  # keep the 100-byte header: SQLite opens it
                f.write(os.urandom(size - 100))
        srv = servers.add(Server(bindir, providers=["stripe"], name="corrupt2", db=db))
        srv.start()
        for attempt in (1, 2):
            r = R.delivery(srv, "stripe", tag="corrupt").post(srv)
            check(not (200 <= r.status < 300), "%s: %s; got %d" % (what, NO_2XX, r.status))
            check(r.status in (500, 503), "%s: expected 503 (or 500), got %d %r"
                  % (what, r.status, r.body[:200]))
        cause_logged(srv, r.status, ("not a database", "malformed", "corrupt", "disk image",
                                     "file is not"), what)
        check(not srv.sanitizer_reports(), "sanitizer reports: %r" % srv.sanitizer_reports())
        srv.cleanup()


def newer_schema(bindir, servers, tap):
    import sqlite3
    if harness.pg_backend():
        db = harness.pg_new_db()
        init_store(bindir, db)
        harness.psql(db, "UPDATE idemhook_schema SET version = 9999")
    else:
        db = os.path.join(servers_tmp(servers), "newer", "events.db")
        init_store(bindir, db)
        c = sqlite3.connect(db)
        c.execute("PRAGMA user_version = 9999")
        c.close()
    srv = servers.add(Server(bindir, providers=["stripe"], name="newer", db=db))
    srv.start()
    r = R.delivery(srv, "stripe", tag="newer").post(srv)
    check(r.status == 500, "store of a newer schema: expected 500, got %d %r"
          % (r.status, r.body[:200]))
    cause_logged(srv, 500, ("newer", "schema", "version"), "newer schema")
    check_eq(R.count_rows(db), 0, "rows written into a newer store")
    srv.cleanup()


# ---------------------------------------------------------------- lock

def locked(bindir, servers, tap, busy_ms=300):
    srv = servers.add(Server(bindir, name="locked",
                             env={"IDEMHOOK_BUSY_TIMEOUT_MS": str(busy_ms)}))
    srv.start()
    for p in srv.providers:  # create the store, warm every receiver
        expect_status(R.delivery(srv, p).post(srv), 200, "accepted", "%s before the lock" % p)
    held = {}
    with harness.store_locked(srv.db):
        t0 = time.monotonic()
        for p in srv.providers:
            d = R.delivery(srv, p, tag="lock")
            t1 = time.monotonic()
            expect_503(d.post(srv), "%s while another process holds the write lock" % p)
            took = time.monotonic() - t1
            check(took < busy_ms / 1000.0 + 5,
                  "%s: 503 took %.1f s with a %d ms busy timeout" % (p, took, busy_ms))
            held[p] = d
        check(time.monotonic() - t0 > busy_ms / 1000.0, "the lock was not held long enough")
    cause_logged(srv, 503, ("locked", "busy"), "write lock held")
    for p, d in held.items():
        check_eq(len(R.rows_of(srv.db, p, d.db_id)), 0, "%s rows written while locked" % p)
        r = R.delivery(srv, p, eid=d.eid, body=d.body).post(srv)
        expect_status(r, 200, "accepted", "%s retry after the lock was released" % p)
        rows = R.rows_of(srv.db, p, d.db_id)
        check(len(rows) == 1 and rows[0][2] == 0, "%s: expected one row, 0 duplicates: %r"
              % (p, rows))
    srv.cleanup()


# ---------------------------------------------------------------- crashes

def crash(bindir, servers, tap, point):
    """The receiver is killed at point while handling the first of a few
    deliveries; retries and 'idemhook work --once' finish the job."""
    tmp = servers_tmp(servers)
    fired = os.path.join(tmp, "fired-" + point)
    actions = os.path.join(tmp, "actions-" + point)
    env = {"IDEMHOOK_FAULT": point, "IDEMHOOK_FAULT_ONCE": fired,
           "IDEMHOOK_LEASE": "2", "IDEMHOOK_ACTION_TIMEOUT": "1",
           "IDEMHOOK_BUSY_TIMEOUT_MS": "900",  # LEASE > TIMEOUT + busy
           "IDEMHOOK_RETRY_BASE_MS": "100"}
    env.update(R.action_env(actions))
    srv = servers.add(Server(bindir, providers=["stripe", "asaas", "shopify"],
                             name="crash-" + point, env=env))
    srv.start()
    victim = R.delivery(srv, "stripe", tag=point)
    r = victim.post(srv)
    R.wait_for(lambda: os.path.exists(fired), timeout=10)
    check(os.path.exists(fired), "IDEMHOOK_FAULT=%s did not fire (answer %d): these "
          "binaries were built without -DIH_FAULTS (build with SANITIZE=1 or FAULTS=1)"
          % (point, r.status))
    rows = R.rows_of(srv.db, "stripe", victim.eid)
    if point == "before-commit":
        check(not (200 <= r.status < 300), "killed before the commit: %s; got %d"
              % (NO_2XX, r.status))
        check_eq(len(rows), 0, "rows after a crash before the commit")
    elif point == "after-commit":
        check(not (200 <= r.status < 300), "killed after the commit, before the answer: "
              "expected no 2xx, got %d" % r.status)
        check_eq(len(rows), 1, "rows after a crash after the commit")
    else:
        expect_status(r, 200, "accepted", "answer sent before processing crashed")
        check_eq(len(rows), 1, "rows after a crash during processing")
    # Other events meanwhile, on every provider of this server.
    others = [R.delivery(srv, p, tag="other") for p in srv.providers for _ in range(2)]
    for d in others:
        expect_status(post_until_recorded(srv, d, "after the crash"), 200, "accepted",
                      "%s delivery after the crash" % d.provider)
    # The provider's retry: re-signed, same event.
    want = "accepted" if point == "before-commit" else "duplicate"
    r = post_until_recorded(srv, victim, "retry")
    expect_status(r, 200, want, "provider's retry after a crash at %s" % point)
    time.sleep(2.3)  # the dead process's lease (IDEMHOOK_LEASE=2) expires
    R.work_once(bindir, srv)
    events = [victim] + others
    for d in events:
        rows = R.query(srv.db, "SELECT id, status FROM events WHERE provider=? AND event_id=?",
                       (d.provider, d.db_id))
        check(len(rows) == 1, "%s/%s: expected one row, got %r" % (d.provider, d.db_id, rows))
        check(rows[0][1] == "done", "%s/%s: status %r after idemhook work --once, expected done"
              % (d.provider, d.db_id, rows[0][1]))
        if d.provider == "stripe":
            n = R.query(srv.db, "SELECT count(*) FROM effects WHERE event=?", (rows[0][0],))[0][0]
            check(n == 1, "%s: %d effect rows, expected exactly 1" % (d.db_id, n))
    runs = R.action_runs(actions)
    missing = [d.db_id for d in events if runs.get((d.provider, d.db_id), 0) < 1]
    check(not missing, "actions never ran for %r" % missing)
    extra = {k: v for k, v in runs.items() if v > 1}
    if point != "processing":
        check(not extra, "actions ran more than once: %r" % extra)
    else:
        # The action had run when the process died before committing done:
        # actions' external effects are at-least-once (dispatch.h).
        check(set(extra) <= {("stripe", victim.db_id)} and extra.get(("stripe", victim.db_id), 0) <= 2,
              "actions re-run beyond the crashed event: %r" % extra)
    check_eq(R.count_rows(srv.db), len(events), "rows in the store")
    srv.cleanup()


def run_cases(tap, bindir, servers):
    t = tap.run
    try:
        t("faults: disk full -> 503 + Retry-After, never 200, cause logged; "
          "same delivery accepted once space returns", disk_full, bindir, servers, tap)
        t("faults: read-only filesystem -> 503 + Retry-After, cause logged; "
          "accepted once writable", read_only, bindir, servers, tap)
        t("faults: IDEMHOOK_DB directory cannot be created -> 503, cause logged; "
          "accepted once it can", missing_dir, bindir, servers, tap)
        t("faults: corrupted store file -> 503, cause logged, never 200",
          corrupted, bindir, servers, tap)
        t("faults: store of a newer schema -> 500, cause logged, nothing written",
          newer_schema, bindir, servers, tap)
        t("faults: write lock held past IDEMHOOK_BUSY_TIMEOUT_MS -> 503 on every "
          "provider, accepted on retry", locked, bindir, servers, tap)
        for point in ("before-commit", "after-commit", "processing"):
            t("faults: receiver killed %s -> retry + idemhook work: every event "
              "one row, done, one effect, action run" % point,
              crash, bindir, servers, tap, point)
    finally:
        if hasattr(servers, "faults_tmp"):
            servers.cleanup()
            for d in ("full", "ro"):
                p = os.path.join(servers.faults_tmp, d)
                if os.path.ismount(p):
                    umount(p)
            import shutil
            shutil.rmtree(servers.faults_tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(suite_main("faults", run_cases))
