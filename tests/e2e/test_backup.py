#!/usr/bin/env python3
"""idemhook backup, restore and check's store findings (issue 31), through
a real lighttpd and the built programs.

SQLite (the default):
  flood     a store filled with PREFILL events (SQL, not HTTP), then a
            flood of stripe deliveries through lighttpd while `idemhook
            backup` runs: the copy opens, passes integrity_check, is one
            0600 file out of WAL mode, and holds every event answered 200
            before the backup began; deliveries kept being answered 200
            while it ran.
  restore   refused while the receivers hold the store, and while an
            `idemhook work` loop does (nothing changed); accepted once they
            are stopped: the old store kept aside, check passes; with the
            receivers started again, redeliveries of events in the backup
            are duplicates and events answered after it are accepted anew.
  corrupt   a store with a damaged page: check reports the failing quick
            check, backup refuses to write a copy, restore refuses it.
  rotation  IDEMHOOK_BACKUP_DIR and --keep: our files beyond the newest N
            removed, no other file touched; check reports the last
            backup's age, and a stale one as a problem.
  fuse      (root) the store's folder mounted through bindfs, a real FUSE
            filesystem, in a private mount namespace: check reports it,
            while the same store through its real path is reported local.
PostgreSQL (IH_DB_BACKEND=pg):
  pg        backup prints a pg_dump command and exits 2 once the server
            answered; that command, run literally, dumps the events;
            restore prints pg_restore; an unreachable server exits 1.

Usage: test_backup.py BINDIR
"""

import hashlib
import json
import os
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time

PREFILL = 10000     # events written with SQL before the flood
FLOOD_THREADS = 4

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from harness import Server, check, check_eq, suite_main  # noqa: E402
import reliability as R  # noqa: E402


def run_ih(bindir, db, *args, env=None, timeout=120):
    """idemhook with IDEMHOOK_DB=db; returns (status, stdout, stderr)."""
    e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IDEMHOOK_DB": db,
         "IDEMHOOK_STRIPE_SECRET": "whsec_backup_test"}
    for k in harness.SANITIZER_ENV:
        if k in os.environ:
            e[k] = os.environ[k]
    e.update(env or {})
    p = subprocess.run([os.path.join(bindir, "idemhook")] + list(args),
                       env=e, capture_output=True, timeout=timeout)
    return (p.returncode, p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"))


def fill(db, n, tag="fill"):
    """n done stripe events, each with an attempt, written with SQL into
    a store `idemhook init` created; about 1.4 KB of payload each."""
    c = sqlite3.connect(db, timeout=30)
    now = int(time.time() * 1000)
    pad = "x" * 900
    rows, bodies = [], []
    for i in range(n):
        eid = "evt_%s_%07d" % (tag, i)
        body = json.dumps({"id": eid, "object": "event",
                           "type": "payment_intent.succeeded",
                           "data": {"object": {"id": "pi_%d" % i,
                                               "amount": 2000,
                                               "note": pad}}}).encode()
        bodies.append((body, eid))
        rows.append(("stripe", eid, "payment_intent.succeeded",
                     "stripe-signature: t=1,v1=00\n", now - (n - i),
                     now - (n - i), "done", 1, now,
                     hashlib.sha256(body).hexdigest()))
    c.executemany(
        "INSERT INTO events (provider, event_id, event_type,"
        " headers, received_at, last_seen_at, status, attempts, done_at,"
        " fingerprint) VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
    # Each payload in the payloads table (schema version 6).  The account
    # named, the lookup is UNIQUE(provider, account, event_id)'s: without
    # it, a scan of every stripe row per payload (40 s for 10,000).
    c.executemany(
        "INSERT INTO payloads (event, payload) SELECT id, ? FROM events"
        " WHERE provider = 'stripe' AND account = 'default'"
        " AND event_id = ?", bodies)
    c.execute("INSERT INTO attempts (event, attempt, started_at,"
              " finished_at, outcome) SELECT id, 1, received_at,"
              " received_at, 'done' FROM events WHERE event_id LIKE ?",
              ("evt_%s_%%" % tag,))
    c.commit()
    c.close()


def event_ids(db):
    c = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=30)
    try:
        return {r[0] for r in c.execute(
            "SELECT event_id FROM events WHERE provider = 'stripe'")}
    finally:
        c.close()


class Flood:
    """Threads posting new stripe deliveries until stopped; each answer
    is kept as (event id, sent at, answered at, status, body status)."""

    def __init__(self, srv):
        self.srv = srv
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.answers = []
        self.threads = [threading.Thread(target=self.loop)
                        for _ in range(FLOOD_THREADS)]

    def loop(self):
        while not self.stop.is_set():
            d = R.delivery(self.srv, "stripe", tag="fl")
            t0 = time.monotonic()
            try:
                r = d.post(self.srv, timeout=30)
                st, body = r.status, (r.json() or {}).get("status")
            except Exception as e:  # noqa: BLE001 (a refused connection)
                st, body = 0, repr(e)
            with self.lock:
                self.answers.append((d.eid, t0, time.monotonic(), st, body))

    def accepted(self):
        with self.lock:
            return [a for a in self.answers if a[3] == 200]

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(60)


def locks(pid, path):
    """Whether process pid holds a lock on path, as /proc/locks says
    (readable by any user: a WAL connection keeps a shared lock on the
    store for as long as it is open)."""
    try:
        ino = os.stat(path).st_ino
        with open("/proc/locks") as f:
            lines = f.read().splitlines()
    except OSError:
        return False
    for line in lines:
        words = line.split()
        for i, w in enumerate(words):
            if w.count(":") == 2 and i > 0 and words[i - 1] == str(pid):
                if w.rsplit(":", 1)[1] == str(ino):
                    return True
    return False


def holds(pid, path):
    """Whether process pid has path open.  Its file descriptors can be
    read by root only (the programs are not dumpable); as another user,
    its locks on path tell."""
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return locks(pid, path)
    for fd in fds:
        try:
            if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == path:
                return True
        except OSError:
            pass
    return False


# ------------------------------------------------------------ SQLite

def case_flood(bindir, servers, st):
    srv = servers.add(Server(bindir, providers=["stripe"], name="backup",
                             secrets={"stripe": "whsec_backup_test"}))
    st["srv"] = srv
    rc, out, err = run_ih(bindir, srv.db, "init")
    check_eq(rc, 0, "idemhook init: %s" % err)
    fill(srv.db, PREFILL)
    srv.start()
    bdir = os.path.join(srv.tmp, "backups")
    os.makedirs(bdir)
    with Flood(srv) as fl:
        R.wait_for(lambda: len(fl.accepted()) >= 40, timeout=30)
        t0 = time.monotonic()
        rc, out, err = run_ih(bindir, srv.db, "backup", "--json",
                              bdir + "/")
        t1 = time.monotonic()
        # Deliveries answered after the backup: not in it.
        R.wait_for(lambda: any(a[1] > t1 for a in fl.accepted()),
                   timeout=30)
    check_eq(rc, 0, "backup exit status (%s)" % err[-400:])
    rep = json.loads(out)
    check_eq(rep["integrity"], "ok", "the backup's own integrity check")
    dest = rep["path"]
    check_eq(os.path.dirname(dest), bdir, "backup path")
    check(os.path.exists(dest), "no copy at %s" % dest)
    check_eq(os.stat(dest).st_mode & 0o777, 0o600, "the copy's mode")
    leftovers = [n for n in os.listdir(os.path.dirname(dest))
                 if n != os.path.basename(dest)]
    check_eq(leftovers, [], "files beside the copy")
    c = sqlite3.connect("file:%s?mode=ro" % dest, uri=True)
    try:
        check_eq(c.execute("PRAGMA integrity_check").fetchone()[0], "ok",
                 "integrity_check of the copy")
        check_eq(c.execute("PRAGMA journal_mode").fetchone()[0], "delete",
                 "the copy is one file, out of WAL mode")
        check_eq(c.execute("PRAGMA user_version").fetchone()[0],
                 rep["schema_version"], "schema version")
        n = c.execute("SELECT count(*) FROM events").fetchone()[0]
    finally:
        c.close()
    check_eq(n, rep["events"], "events in the copy against the report")
    in_copy = event_ids(dest)
    acc = fl.accepted()
    before = [a[0] for a in acc if a[2] < t0]
    during = [a for a in acc if a[1] > t0 and a[2] < t1]
    after = [a[0] for a in acc if a[1] > t1]
    missing = [e for e in before if e not in in_copy]
    check(len(before) >= 40, "only %d accepted before the backup"
          % len(before))
    check_eq(missing, [], "events answered 200 before the backup began "
             "but missing from it")
    check(n >= PREFILL + len(before), "copy holds %d events" % n)
    check(len(during) > 0, "no delivery was answered while the backup ran "
          "(%.2f s): the receivers were blocked" % (t1 - t0))
    check(not any(e in in_copy for e in after),
          "an event sent after the backup ended is in it")
    check(not [a for a in fl.answers if a[3] not in (200,)],
          "deliveries not answered 200 during the flood: %r"
          % [a for a in fl.answers if a[3] != 200][:5])
    # Every event of the copy is in the store: nothing invented.
    check(in_copy <= event_ids(srv.db), "the copy holds unknown events")
    st.update(dest=dest, before=before, after=after,
              during=[a[0] for a in during], in_copy=in_copy)
    harness.Tap().diag("backup of %d events, %d bytes, in %.2f s; %d "
                       "deliveries answered 200 meanwhile"
                       % (n, rep["bytes"], t1 - t0, len(during)))


def case_restore(bindir, servers, st):
    srv, dest = st["srv"], st["dest"]
    db = srv.db
    folder = os.path.dirname(db)
    ino = os.stat(db).st_ino
    # 1. The receivers hold the store open (they answered deliveries).
    rc, out, err = run_ih(bindir, db, "restore", dest)
    check_eq(rc, 1, "restore while the receivers run: exit status")
    check("refused" in err and "stop them first" in err,
          "no refusal: %r" % err)
    check_eq(os.stat(db).st_ino, ino, "the store was replaced")
    check(not [n for n in os.listdir(folder) if "before-restore" in n
               or ".restore." in n], "files left: %r" % os.listdir(folder))
    srv.stop()
    # 2. An idemhook work loop holds it too.
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "IDEMHOOK_DB": db, "IDEMHOOK_STRIPE_SECRET": "whsec_backup_test"}
    for k in harness.SANITIZER_ENV:
        if k in os.environ:
            env[k] = os.environ[k]
    w = subprocess.Popen([os.path.join(bindir, "idemhook"), "work"],
                         env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        check(R.wait_for(lambda: holds(w.pid, db), timeout=20),
              "idemhook work never opened the store")
        rc, out, err = run_ih(bindir, db, "restore", dest)
        check_eq(rc, 1, "restore while idemhook work runs: exit status")
        check("process %d" % w.pid in err, "the holder not named: %r" % err)
        check_eq(os.stat(db).st_ino, ino, "the store was replaced")
    finally:
        w.send_signal(signal.SIGTERM)
        w.wait(30)
    # 3. Nothing holds it: restored, the old store kept aside.
    old = event_ids(db)
    rc, out, err = run_ih(bindir, db, "restore", "--json", dest)
    check_eq(rc, 0, "restore: %s" % err[-400:])
    rep = json.loads(out)
    check_eq(rep["quick_check"], "ok", "quick check after the restore")
    check(rep["kept_as"] and os.path.exists(rep["kept_as"]),
          "the replaced store is not kept: %r" % rep["kept_as"])
    check_eq(event_ids(rep["kept_as"]), old, "the kept store's events")
    check_eq(event_ids(db), st["in_copy"], "the restored store's events")
    check(not os.path.exists(db + "-wal") or
          os.path.getsize(db + "-wal") == 0, "a stale -wal is left")
    rc, out, err = run_ih(bindir, db, "check", "--provider", "stripe",
                          env={"IDEMHOOK_BACKUP_DIR": os.path.dirname(dest)})
    check_eq(rc, 0, "check after the restore: %s" % (out + err)[-800:])
    # 4. Receivers again: the backup's events are duplicates, later ones
    # (lost with the restore) are accepted from the provider's retries.
    srv.start()
    for eid in st["before"][:30]:
        r = R.delivery(srv, "stripe", eid=eid).post(srv)
        check_eq((r.status, r.json()["status"]), (200, "duplicate"),
                 "redelivery of %s, in the backup" % eid)
    later = st["after"][:30]
    check(len(later) > 0, "no event accepted after the backup")
    for eid in later:
        r = R.delivery(srv, "stripe", eid=eid).post(srv)
        check_eq((r.status, r.json()["status"]), (200, "accepted"),
                 "redelivery of %s, after the backup" % eid)
    for eid in st["during"][:30]:
        r = R.delivery(srv, "stripe", eid=eid).post(srv)
        want = "duplicate" if eid in st["in_copy"] else "accepted"
        check_eq((r.status, r.json()["status"]), (200, want),
                 "redelivery of %s, sent during the backup" % eid)
    srv.stop()


def corrupt_copy(src, dst):
    shutil.copyfile(src, dst)
    os.chmod(dst, 0o600)
    size = os.path.getsize(dst)
    with open(dst, "r+b") as f:
        f.seek((size // 4096 // 2) * 4096)   # a page in the events' data
        f.write(b"\xab" * 4096)


def case_corrupt(bindir, servers, st):
    tmp = harness.tempfile.mkdtemp(prefix="ih-backup-")
    try:
        bad = os.path.join(tmp, "store", "events.db")
        os.makedirs(os.path.dirname(bad), mode=0o700)
        corrupt_copy(st["dest"], bad)
        rc, out, err = run_ih(bindir, bad, "check", "--provider", "stripe")
        check_eq(rc, 1, "check of a damaged store: exit status")
        check("PROBLEM: the store fails SQLite's quick integrity check"
              in out, "no quick-check problem: %r" % out[-600:])
        rc, out, err = run_ih(bindir, st["dest"], "check", "--provider",
                              "stripe")
        check("ok: the store passes SQLite's quick integrity check" in out,
              "a sound store: %r" % out[-600:])
        dest = os.path.join(tmp, "copy.db")
        rc, out, err = run_ih(bindir, bad, "backup", dest)
        check_eq(rc, 1, "backup of a damaged store: exit status")
        check("integrity" in err, "backup's reason: %r" % err)
        check(not os.path.exists(dest), "a damaged copy was written")
        check_eq([n for n in os.listdir(tmp) if n != "store"], [],
                 "temporary files left")
        # Restoring a damaged copy is refused before anything changes.
        good = os.path.join(tmp, "good", "events.db")
        os.makedirs(os.path.dirname(good), mode=0o700)
        shutil.copyfile(st["dest"], good)
        ino = os.stat(good).st_ino
        rc, out, err = run_ih(bindir, good, "restore", bad)
        check_eq(rc, 1, "restore of a damaged copy: exit status")
        check("integrity" in err or "malformed" in err, "reason: %r" % err)
        check_eq(os.stat(good).st_ino, ino, "the store was replaced")
        check_eq(sorted(os.listdir(os.path.dirname(good))),
                 ["events.db"], "files left beside the store")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def case_restore_twice(bindir, servers, st):
    """Two restores in a row, within one second, failed the second with
    "File exists" on the name kept aside (<store>.before-restore-<UTC
    time>).  Each now keeps the store it replaces under a name of its
    own; a name already taken (planted here for the next minute's
    seconds) is never replaced."""
    tmp = harness.tempfile.mkdtemp(prefix="ih-backup-")
    try:
        db = os.path.join(tmp, "store", "events.db")
        rc, out, err = run_ih(bindir, db, "init")
        check_eq(rc, 0, "init: %s" % err)
        fill(db, 3, tag="first")
        first = event_ids(db)
        src = os.path.join(tmp, "src", "events.db")
        rc, out, err = run_ih(bindir, src, "init")
        check_eq(rc, 0, "init of the source: %s" % err)
        fill(src, 4, tag="copy")
        copy = os.path.join(tmp, "copy.db")
        rc, out, err = run_ih(bindir, src, "backup", copy)
        check_eq(rc, 0, "backup: %s" % err)
        planted = {}
        now = int(time.time())
        for t in range(now, now + 60):
            name = "%s.before-restore-%s" % (
                db, time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(t)))
            with open(name, "w") as f:
                f.write("planted %d" % t)
            planted[name] = "planted %d" % t
        kept = []
        for n in range(3):
            rc, out, err = run_ih(bindir, db, "restore", "--json", copy)
            check_eq(rc, 0, "restore %d: %s" % (n + 1, err[-400:]))
            kept.append(json.loads(out)["kept_as"])
        check_eq(len(set(kept)), 3, "three names kept aside: %r" % kept)
        check(not set(kept) & set(planted), "a planted name reused: %r" % kept)
        check_eq(event_ids(kept[0]), first, "the first store kept aside")
        check_eq(event_ids(kept[1]), event_ids(src), "the second kept aside")
        check_eq(event_ids(db), event_ids(src), "the restored store")
        for name, text in planted.items():
            with open(name) as f:
                check_eq(f.read(), text, "%s replaced" % name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def case_rotation(bindir, servers, st):
    tmp = harness.tempfile.mkdtemp(prefix="ih-backup-")
    try:
        db = os.path.join(tmp, "store", "events.db")
        rc, out, err = run_ih(bindir, db, "init")
        check_eq(rc, 0, "init: %s" % err)
        fill(db, 50)
        bdir = os.path.join(tmp, "backups")
        env = {"IDEMHOOK_BACKUP_DIR": bdir}
        # No backup yet: a note while the store's events are recent, a
        # problem once one is older than IDEMHOOK_BACKUP_MAX_AGE.
        rc, out, err = run_ih(bindir, db, "check", "--provider", "stripe",
                              env=env)
        check_eq(rc, 0, "check of a new store without a backup: %s"
                 % out[-500:])
        check("note: backups: none in %s yet" % bdir in out, out[-500:])
        time.sleep(1.2)
        rc, out, err = run_ih(bindir, db, "check", "--provider", "stripe",
                              env=dict(env, IDEMHOOK_BACKUP_MAX_AGE="1s"))
        check_eq(rc, 1, "check without a backup of older events")
        check("PROBLEM: backups: none in %s, and the store holds events "
              "since" % bdir in out, out[-500:])
        rc, out, err = run_ih(bindir, db, "backup", env=env)
        check_eq(rc, 0, "backup into IDEMHOOK_BACKUP_DIR: %s" % err)
        check_eq(os.stat(bdir).st_mode & 0o777, 0o700, "the folder's mode")
        old = ["idemhook-20200101T000000Z.db", "idemhook-20200102T000000Z.db",
               "idemhook-20200103T000000Z.db"]
        for n in old + ["notes.txt", "idemhook-latest.db"]:
            with open(os.path.join(bdir, n), "w") as f:
                f.write("x")
        before = [n for n in os.listdir(bdir) if n.startswith("idemhook-2")]
        rc, out, err = run_ih(bindir, db, "backup", "--keep", "2", "--json",
                              env=env)
        check_eq(rc, 0, "backup --keep 2: %s" % err)
        rep = json.loads(out)
        # The two newest names stay (the first backup's name may be the
        # second's, within one second); every older one of ours goes.
        ours = sorted(set(before + [os.path.basename(rep["path"])]))
        check_eq(sorted(rep["removed"]), ours[:-2], "removed")
        left = sorted(os.listdir(bdir))
        check_eq([n for n in left if n.startswith("idemhook-2")], ours[-2:],
                 "kept backups")
        check("notes.txt" in left and "idemhook-latest.db" in left,
              "another file was removed: %r" % left)
        rc, out, err = run_ih(bindir, db, "check", "--provider", "stripe",
                              env=env)
        check_eq(rc, 0, "check with a fresh backup: %s" % out[-600:])
        check("ok: backups: the last one" in out, out[-500:])
        # Only a stale one: a problem.
        stale = os.path.join(tmp, "stale")
        os.makedirs(stale, mode=0o700)
        shutil.copyfile(rep["path"], os.path.join(stale, old[0]))
        os.chmod(os.path.join(stale, old[0]), 0o600)
        rc, out, err = run_ih(bindir, db, "check", "--provider", "stripe",
                              env={"IDEMHOOK_BACKUP_DIR": stale})
        check_eq(rc, 1, "check with a stale backup: exit status")
        check("older than IDEMHOOK_BACKUP_MAX_AGE 36h" in out, out[-500:])
        rc, out, err = run_ih(bindir, db, "check", "--provider", "stripe",
                              env={"IDEMHOOK_BACKUP_DIR": stale,
                                   "IDEMHOOK_BACKUP_MAX_AGE": "5000d"})
        check_eq(rc, 0, "check with a larger IDEMHOOK_BACKUP_MAX_AGE")
        # --keep needs a folder; the store itself is refused.
        rc, out, err = run_ih(bindir, db, "backup", "--keep", "2",
                              os.path.join(tmp, "one.db"))
        check_eq(rc, 2, "--keep with a file")
        rc, out, err = run_ih(bindir, db, "backup", db)
        check_eq(rc, 2, "backup onto the store itself")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def case_fuse(bindir, servers, st):
    check(shutil.which("bindfs") is not None,
          "bindfs is not installed (tests/deps.sh installs it)")
    tmp = harness.tempfile.mkdtemp(prefix="ih-backup-")
    try:
        real = os.path.join(tmp, "real")
        mnt = os.path.join(tmp, "fuse")
        os.makedirs(real, mode=0o700)
        os.makedirs(mnt, mode=0o700)
        rc, out, err = run_ih(bindir, os.path.join(real, "events.db"),
                              "init")
        check_eq(rc, 0, "init: %s" % err)
        rc, out, err = run_ih(bindir, os.path.join(real, "events.db"),
                              "check", "--provider", "stripe")
        check("ok: the store's folder is on a local filesystem" in out,
              "the real folder: %r" % out[-600:])
        # A private mount namespace: the mount ends with the process.
        ih = os.path.join(bindir, "idemhook")
        script = ('bindfs --no-allow-other "$1" "$2" || exit 99; '
                  '"$3" check --provider stripe; rc=$?; '
                  'fusermount -u "$2"; exit $rc')
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "IDEMHOOK_DB": os.path.join(mnt, "events.db"),
               "IDEMHOOK_STRIPE_SECRET": "whsec_backup_test"}
        for k in harness.SANITIZER_ENV:
            if k in os.environ:
                env[k] = os.environ[k]
        p = subprocess.run(["unshare", "--mount", "--propagation", "private",
                            "sh", "-c", script, "sh", real, mnt, ih],
                           env=env, capture_output=True, timeout=60)
        out = p.stdout.decode(errors="replace")
        check(p.returncode != 99, "bindfs could not mount: %r"
              % p.stderr.decode(errors="replace"))
        check_eq(p.returncode, 1, "check on FUSE: exit status (%s)" % out)
        check("PROBLEM: the store's folder %s is on a FUSE filesystem "
              "(type 0x65735546)" % mnt in out, out[-800:])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ------------------------------------------------------------ PostgreSQL

def case_pg(bindir, servers, st):
    db = harness.pg_new_db("ih_backup")
    rc, out, err = run_ih(bindir, db, "init")
    check_eq(rc, 0, "init on PostgreSQL: %s" % err)
    srv = servers.add(Server(bindir, providers=["stripe"], db=db,
                             name="pgbackup",
                             secrets={"stripe": "whsec_backup_test"}))
    srv.start()
    sent = []
    for _ in range(5):
        d = R.delivery(srv, "stripe", tag="pg")
        r = d.post(srv)
        check_eq(r.status, 200, "delivery")
        sent.append(d.eid)
    srv.stop()
    tmp = harness.tempfile.mkdtemp(prefix="ih-backup-")
    try:
        dump = os.path.join(tmp, "idemhook.dump")
        # trust: the password is not asked for, and never printed.
        rc, out, err = run_ih(bindir, db + "&password=secretpw", "backup",
                              dump)
        check_eq(rc, 2, "backup on PostgreSQL: exit status (%s)" % err)
        check("answered" in err, err)
        check("secretpw" not in out + err and "***" not in err,
              "the password, or its mask, in %r" % err)
        line = [ln.strip() for ln in err.splitlines()
                if ln.strip().startswith("pg_dump ")]
        check_eq(len(line), 1, "one pg_dump command in %r" % err)
        check(not os.path.exists(dump), "idemhook wrote the dump itself")
        # The printed command, run literally, makes the dump.
        p = subprocess.run(shlex.split(line[0]), capture_output=True,
                           timeout=120)
        check_eq(p.returncode, 0, "the printed pg_dump: %r" % p.stderr)
        p = subprocess.run(["pg_restore", "--list", dump],
                           capture_output=True, timeout=60)
        check(b"TABLE DATA" in p.stdout and b" events " in p.stdout,
              "the dump lacks the events: %r" % p.stdout[-500:])
        rc, out, err = run_ih(bindir, db, "restore", dump)
        check_eq(rc, 2, "restore on PostgreSQL: exit status")
        check("pg_restore --clean --if-exists --no-owner --dbname=" in err,
              err)
        # A server that does not answer: exit 1, said as such.
        port = harness.free_port()
        gone = "postgresql://idemhook@127.0.0.1:%d/idemhook?connect_timeout=3" \
            % port
        rc, out, err = run_ih(bindir, gone, "backup", dump, timeout=60)
        check_eq(rc, 1, "backup with the server unreachable: exit status")
        check("could not be reached" in err, err)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cases(tap, bindir, servers):
    if harness.pg_backend():
        tap.run("backup: PostgreSQL: the pg_dump command, run as printed; "
                "an unreachable server is exit 1", case_pg, bindir, servers,
                {})
        return
    st = {}
    # restore and corrupt work on the flood's backup.
    if tap.run("backup: during a flood through lighttpd, the copy holds "
               "every event answered before it began", case_flood,
               bindir, servers, st):
        tap.run("restore: refused while receivers or a worker hold the "
                "store; then redeliveries are duplicates, later events "
                "accepted", case_restore, bindir, servers, st)
        tap.run("check: a failing quick check; backup and restore refuse "
                "a damaged store", case_corrupt, bindir, servers, st)
    tap.run("restore: three in a row (within a second) each keep the store "
            "they replace under a name of their own; none replaced",
            case_restore_twice, bindir, servers, st)
    tap.run("backup: IDEMHOOK_BACKUP_DIR, --keep rotation, check's backup "
            "age", case_rotation, bindir, servers, st)
    tap.run_as_root("check: a store on a FUSE mount (bindfs) is reported",
                    "a FUSE mount in a private mount namespace", case_fuse,
                    bindir, servers, st)


if __name__ == "__main__":
    sys.exit(suite_main("test_backup", cases))
