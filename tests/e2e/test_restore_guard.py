#!/usr/bin/env python3
"""idemhook backup and restore against the store's own user, a planted
schema and misnamed backups (issue 37 items 1, 5 and 7), through the
built programs.

  race      (root) restore as root into a store folder owned by nobody,
            while a process of nobody's swaps a symbolic link to a
            root-owned file in and out under the restore's temporary name:
            that file keeps its owner, mode and bytes, and every file the
            restores left in the folder is nobody's.
  owner     (root) restore as root of a root-only backup into nobody's
            store, then of the store kept aside in nobody's folder, and
            backup as root into a folder of nobody's (with --keep): all
            succeed and leave only nobody's files there.
  planted   a trigger planted in a backup: restore refuses it, nothing
            changed; one planted in the live store (and a changed one):
            check reports them; a sound copy of schema version 7 is
            still restored (migrated first).
  names     a backup named for the future: backup --keep 1 keeps the file
            it just wrote; check reports the future name and judges the
            age by the file's mtime (no negative hours, stale when old);
            one written in the future too has no age and is rotated out.
PostgreSQL (IH_DB_BACKEND=pg):
  pg        a trigger and a rule planted on the store's tables: check
            reports them.

Usage: test_restore_guard.py BINDIR
"""

import contextlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from harness import check, check_eq, suite_main  # noqa: E402
from test_backup import fill, event_ids, run_ih  # noqa: E402
from test_accounts import v7_store  # noqa: E402

NOBODY = 65534
# A Python nobody may run (the test's own may live in root's home).
PYTHON = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
RACE_TRIES = 40

# The racer: once the restore's temporary file in FOLDER holds the copy,
# swaps a link to TARGET in under its name, then the real file back, over
# and over until STOP exists.
RACER = r"""
import os, sys
folder, target, stop, ready = sys.argv[1:5]
hold = os.path.join(folder, "held")
lnk = os.path.join(folder, "link")
open(ready, "w").close()
cur = None
def spin():
    for _ in range(300):
        pass
while not os.path.exists(stop):
    if cur is None:
        for n in os.listdir(folder):
            if ".restore." in n and not n.endswith(("-journal", "-wal",
                                                    "-shm")):
                try:
                    if os.lstat(os.path.join(folder, n)).st_size > 0:
                        cur = os.path.join(folder, n)
                except OSError:
                    pass
                break
        continue
    try:
        os.symlink(target, lnk)
    except OSError:
        pass
    try:
        os.rename(cur, hold)
        os.rename(lnk, cur)
    except OSError:
        cur = None
        continue
    spin()
    try:
        os.rename(hold, cur)
    except OSError:
        cur = None
    spin()
"""


def as_nobody(bindir, db, *args):
    """idemhook as nobody (the programs' user here)."""
    e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IDEMHOOK_DB": db,
         "IDEMHOOK_STRIPE_SECRET": "whsec_backup_test"}
    for k in harness.SANITIZER_ENV:
        if k in os.environ:
            e[k] = os.environ[k]
    # The staged copy: nobody cannot reach a checkout under a 0700 folder.
    p = subprocess.run([os.path.join(harness.staged_programs(bindir),
                                     "idemhook")] + list(args),
                       env=e, capture_output=True, timeout=120, user=NOBODY,
                       group=NOBODY, extra_groups=[])
    return (p.returncode, p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"))


def owners(folder):
    """{name: uid} of every file in folder."""
    return {n: os.lstat(os.path.join(folder, n)).st_uid
            for n in os.listdir(folder)}


def nobody_store(bindir, base, name, events=0):
    """A store made by nobody in a folder of nobody's, with events."""
    folder = os.path.join(base, name)
    os.makedirs(folder, mode=0o700)
    os.chown(folder, NOBODY, NOBODY)
    db = os.path.join(folder, "events.db")
    rc, out, err = as_nobody(bindir, db, "init")
    check_eq(rc, 0, "init as nobody: %s" % err)
    if events:
        fill(db, events, tag=name)
        for n in os.listdir(folder):
            os.chown(os.path.join(folder, n), NOBODY, NOBODY)
    return folder, db


def root_backup(bindir, base, db):
    """A backup of db written by root into a folder only root can read."""
    bdir = os.path.join(base, "root-backups")
    os.makedirs(bdir, mode=0o700, exist_ok=True)
    rc, out, err = run_ih(bindir, db, "backup", "--json", bdir + "/")
    check_eq(rc, 0, "backup as root: %s" % err)
    path = json.loads(out)["path"]
    st = os.stat(path)
    check_eq((st.st_uid, st.st_mode & 0o777), (0, 0o600),
             "the root backup's owner and mode")
    return path


@contextlib.contextmanager
def tempdir():
    tmp = harness.tempfile.mkdtemp(prefix="ih-guard-")
    # nobody must reach its folders below.
    os.chmod(tmp, 0o711)
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def case_race(bindir, servers, st):
    with tempdir() as tmp:
        src_folder, src_db = nobody_store(bindir, tmp, "source", 20)
        backup = root_backup(bindir, tmp, src_db)
        outside = os.path.join(tmp, "outside")
        os.makedirs(outside, mode=0o755)
        target = os.path.join(outside, "shadow")
        with open(target, "w") as f:
            f.write("root:secret:1:0:99999:7:::\n")
        os.chmod(target, 0o600)
        before = os.stat(target)
        ctl = os.path.join(tmp, "racer")
        os.makedirs(ctl, mode=0o700)
        os.chown(ctl, NOBODY, NOBODY)
        stop = os.path.join(ctl, "stop")
        refused = 0
        rooted = {}
        for i in range(RACE_TRIES):
            folder, db = nobody_store(bindir, tmp, "s%d" % i)
            ready = os.path.join(ctl, "ready%d" % i)
            if os.path.exists(stop):
                os.unlink(stop)
            racer = subprocess.Popen(
                [PYTHON, "-c", RACER, folder, target, stop, ready],
                user=NOBODY, group=NOBODY, extra_groups=[],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                deadline = time.monotonic() + 30
                while not os.path.exists(ready):
                    check(time.monotonic() < deadline, "the racer never "
                          "started")
                    time.sleep(0.01)
                rc, out, err = run_ih(bindir, db, "restore", backup)
            finally:
                open(stop, "w").close()
                racer.wait(30)
            if rc != 0:
                refused += 1
                if os.environ.get("IH_GUARD_DEBUG"):
                    harness.Tap().diag("restore %d: %s" % (i, err.strip()))
            now = os.stat(target)
            check_eq((now.st_uid, now.st_gid, now.st_mode), (before.st_uid,
                     before.st_gid, before.st_mode),
                     "the root-owned file outside after restore %d (exit "
                     "%d: %s)" % (i, rc, err.strip()[-300:]))
            rooted.update({(i, n): u for n, u in owners(folder).items()
                           if u == 0})
        with open(target) as f:
            check_eq(f.read(), "root:secret:1:0:99999:7:::\n",
                     "the root-owned file's bytes")
        check_eq(rooted, {}, "root's files left in nobody's folders")
        harness.Tap().diag("%d restores raced by a link swapper, %d of "
                           "them failed; the root file kept its owner"
                           % (RACE_TRIES, refused))


def case_owner(bindir, servers, st):
    with tempdir() as tmp:
        src_folder, src_db = nobody_store(bindir, tmp, "source", 30)
        backup = root_backup(bindir, tmp, src_db)
        folder, db = nobody_store(bindir, tmp, "store", 5)
        old = event_ids(db)
        # A root-only backup into nobody's store.
        rc, out, err = run_ih(bindir, db, "restore", "--json", backup)
        check_eq(rc, 0, "restore as root: %s" % err[-600:])
        rep = json.loads(out)
        check_eq(rep["quick_check"], "ok", "quick check")
        check_eq(event_ids(db), event_ids(src_db), "the restored events")
        check_eq(event_ids(rep["kept_as"]), old, "the kept store's events")
        check_eq({n: u for n, u in owners(folder).items() if u != NOBODY},
                 {}, "files not nobody's after the restore")
        check_eq(os.stat(db).st_mode & 0o777, 0o600, "the store's mode")
        # The kept store, in nobody's folder: read as nobody, by name
        # (at once: the next one kept aside gets another name).
        rc, out, err = run_ih(bindir, db, "restore", "--json",
                              rep["kept_as"])
        check_eq(rc, 0, "restore of the kept store: %s" % err[-600:])
        check_eq(event_ids(db), old, "the events restored from it")
        check_eq({n: u for n, u in owners(folder).items() if u != NOBODY},
                 {}, "files not nobody's after the second restore")
        # nobody's receivers still write the restored store.
        rc, out, err = as_nobody(bindir, db, "check", "--provider",
                                 "stripe")
        check("PROBLEM" not in out or "schema" not in out, out[-600:])
        check_eq(rc, 0, "check as nobody: %s" % out[-800:])
        # Backup as root into nobody's folder, with rotation.
        bdir = os.path.join(tmp, "nobody-backups")
        os.makedirs(bdir, mode=0o700)
        os.chown(bdir, NOBODY, NOBODY)
        stale = os.path.join(bdir, "idemhook-20200101T000000Z.db")
        shutil.copyfile(backup, stale)
        os.chown(stale, NOBODY, NOBODY)
        rc, out, err = run_ih(bindir, db, "backup", "--json", "--keep", "1",
                              bdir)
        check_eq(rc, 0, "backup as root into nobody's folder: %s" % err)
        rep = json.loads(out)
        check_eq(rep["removed"], [os.path.basename(stale)], "removed")
        check_eq(owners(bdir), {os.path.basename(rep["path"]): NOBODY},
                 "the backup folder's files and owners")
        check_eq(event_ids(rep["path"]), old, "the backup's events")


def plant(db, sql):
    c = sqlite3.connect(db)
    try:
        c.executescript(sql)
        c.commit()
    finally:
        c.close()


EVIL = ("CREATE TRIGGER evil AFTER INSERT ON events BEGIN "
        "UPDATE events SET status = 'done' WHERE id = new.id; "
        "DELETE FROM payloads WHERE event = new.id; END;")


def case_planted(bindir, servers, st):
    with tempdir() as tmp:
        db = os.path.join(tmp, "store", "events.db")
        rc, out, err = run_ih(bindir, db, "init")
        check_eq(rc, 0, "init: %s" % err)
        fill(db, 10)
        rc, out, err = run_ih(bindir, db, "check", "--provider", "stripe")
        check_eq(rc, 0, "check of a sound store: %s" % out[-600:])
        check("ok: store schema: this build's" in out, out[-600:])
        copy = os.path.join(tmp, "copy.db")
        rc, out, err = run_ih(bindir, db, "backup", copy)
        check_eq(rc, 0, "backup: %s" % err)
        plant(copy, EVIL)
        ino = os.stat(db).st_ino
        rc, out, err = run_ih(bindir, db, "restore", copy)
        check_eq(rc, 1, "restore of a copy with a planted trigger: exit")
        check("the copy's schema is not the one this build creates"
              in err and "unknown trigger evil" in err, err)
        check_eq(os.stat(db).st_ino, ino, "the store was replaced")
        check_eq(sorted(os.listdir(os.path.dirname(db))),
                 sorted(n for n in os.listdir(os.path.dirname(db))
                        if ".restore." not in n), "temporary files left")
        # In the live store: check reports it, and a changed trigger.
        plant(db, EVIL + "DROP TRIGGER events_purge_payload;"
              "CREATE TRIGGER events_purge_payload AFTER UPDATE OF "
              "purged_at ON events BEGIN DELETE FROM payloads; END;"
              "CREATE VIEW spy AS SELECT 1;")
        rc, out, err = run_ih(bindir, db, "check", "--provider", "stripe")
        check_eq(rc, 1, "check of a store with planted objects: exit")
        line = [ln for ln in out.splitlines()
                if ln.startswith("PROBLEM: the store's schema differs")]
        check_eq(len(line), 1, "one schema problem in %r" % out[-900:])
        for what in ("unknown trigger evil", "unknown view spy",
                     "changed trigger events_purge_payload"):
            check(what in line[0], "%r not in %r" % (what, line[0]))
        # A sound copy of an older schema is migrated, then restored.
        old = os.path.join(tmp, "v7", "events.db")
        v7_store(old)
        plant(old, "PRAGMA wal_checkpoint(TRUNCATE); "
              "PRAGMA journal_mode = DELETE;")
        other = os.path.join(tmp, "other", "events.db")
        rc, out, err = run_ih(bindir, other, "init")
        check_eq(rc, 0, "init: %s" % err)
        rc, out, err = run_ih(bindir, other, "restore", "--json", old)
        check_eq(rc, 0, "restore of a version 7 copy: %s" % err[-600:])
        check_eq(json.loads(out)["schema_version"], 7, "the copy's version")
        rc, out, err = run_ih(bindir, other, "check", "--provider",
                              "stripe")
        check("ok: store schema: this build's" in out, out[-600:])


def hours_old(out):
    m = re.search(r"backups: the last one, .*? is (-?[0-9.]+) hours old",
                  out)
    check(m is not None, "no age in %r" % out[-600:])
    return float(m.group(1))


def case_names(bindir, servers, st):
    with tempdir() as tmp:
        db = os.path.join(tmp, "store", "events.db")
        rc, out, err = run_ih(bindir, db, "init")
        check_eq(rc, 0, "init: %s" % err)
        fill(db, 5)
        bdir = os.path.join(tmp, "backups")
        os.makedirs(bdir, mode=0o700)
        future = os.path.join(bdir, "idemhook-20991231T000000Z.db")
        rc, out, err = run_ih(bindir, db, "backup", future)
        check_eq(rc, 0, "backup to a future name: %s" % err)
        rc, out, err = run_ih(bindir, db, "backup", "--json", "--keep", "1",
                              bdir)
        check_eq(rc, 0, "backup --keep 1: %s" % err)
        rep = json.loads(out)
        check(os.path.exists(rep["path"]), "backup --keep 1 removed the "
              "backup it had just written (%r); left: %r"
              % (rep, os.listdir(bdir)))
        check_eq(sorted(os.listdir(bdir)), [os.path.basename(rep["path"])],
                 "the folder after --keep 1")
        # Only a future-named one, written two hours ago: reported, and
        # two hours old.
        os.rename(rep["path"], future)
        two = time.time() - 2 * 3600
        os.utime(future, (two, two))
        env = {"IDEMHOOK_BACKUP_DIR": bdir}
        rc, out, err = run_ih(bindir, db, "check", "--provider", "stripe",
                              env=env)
        check_eq(rc, 1, "check with a future-named backup: exit")
        check("PROBLEM: backups: %s is named or written at a time to come"
              % future in out, out[-800:])
        age = hours_old(out)
        check(1.9 <= age <= 2.5, "age %r hours, not about 2" % age)
        # Written three days ago: stale, whatever its name says.
        old = time.time() - 3 * 86400
        os.utime(future, (old, old))
        rc, out, err = run_ih(bindir, db, "check", "--provider", "stripe",
                              env=env)
        check("older than IDEMHOOK_BACKUP_MAX_AGE 36h" in out, out[-800:])
        check(hours_old(out) > 70, "age: %r" % out[-600:])
        # Written in the future too: no age to trust, never negative, and
        # never kept over a new backup.
        ahead = time.time() + 400 * 86400
        os.utime(future, (ahead, ahead))
        rc, out, err = run_ih(bindir, db, "check", "--provider", "stripe",
                              env=env)
        check_eq(rc, 1, "check with a backup named and written ahead")
        check("time to come" in out and "hours old" not in out, out[-800:])
        rc, out, err = run_ih(bindir, db, "backup", "--json", "--keep", "1",
                              bdir)
        check_eq(rc, 0, "backup --keep 1: %s" % err)
        rep = json.loads(out)
        check_eq(os.listdir(bdir), [os.path.basename(rep["path"])],
                 "the folder after --keep 1 beside a backup written ahead")


def case_pg_planted(bindir, servers, st):
    db = harness.pg_new_db("ih_guard")
    rc, out, err = run_ih(bindir, db, "init")
    check_eq(rc, 0, "init on PostgreSQL: %s" % err)
    rc, out, err = run_ih(bindir, db, "check", "--provider", "stripe")
    check("ok: store schema: no trigger or rule on idemhook's tables" in out,
          out[-800:])
    harness.psql(db, "CREATE FUNCTION evil() RETURNS trigger AS $$ BEGIN "
                 "NEW.status := 'done'; RETURN NEW; END $$ LANGUAGE plpgsql;"
                 " CREATE TRIGGER evil BEFORE INSERT ON events FOR EACH ROW"
                 " EXECUTE FUNCTION evil();"
                 " CREATE RULE quiet AS ON UPDATE TO endpoint_health DO"
                 " INSTEAD NOTHING")
    rc, out, err = run_ih(bindir, db, "check", "--provider", "stripe")
    check_eq(rc, 1, "check with a planted trigger and rule: exit")
    line = [ln for ln in out.splitlines()
            if ln.startswith("PROBLEM: the store's schema differs")]
    check_eq(len(line), 1, "one schema problem in %r" % out[-900:])
    for what in ("unknown trigger evil on events",
                 "unknown rule quiet on endpoint_health"):
        check(what in line[0], "%r not in %r" % (what, line[0]))


def cases(tap, bindir, servers):
    if harness.pg_backend():
        tap.run("check: a trigger and a rule planted on PostgreSQL's "
                "tables are reported", case_pg_planted, bindir, servers, {})
        return
    st = {}
    tap.run_as_root("restore as root into nobody's folder, raced by a "
                    "link swapper: no root-owned file changes owner",
                    "files of another user", case_race, bindir, servers, st)
    tap.run_as_root("backup and restore as root leave only the store "
                    "owner's files", "files of another user", case_owner,
                    bindir, servers, st)
    tap.run("restore refuses a planted trigger; check reports planted "
            "objects; an older sound copy is restored", case_planted, bindir,
            servers, st)
    tap.run("backups named for the future: --keep keeps the new one, "
            "check reports the name and ages by mtime", case_names, bindir,
            servers, st)


if __name__ == "__main__":
    sys.exit(suite_main("test_restore_guard", cases))
