#!/usr/bin/env python3
"""The figures of idemhook backup (issue 31), for the README: the time and
size of a backup of a store of N events, and how a writer fares while a
backup runs, with the online backup API (idemhook backup) against
VACUUM INTO (the sqlite3 shell).

    tests/bench/backup.py BINDIR [N]      (N: 100000 by default)

The store is made by `idemhook init` and filled with SQL (tests/e2e/
test_backup.py's fill(): done stripe events of about 1.4 KB of payload,
each with an attempt), in a temporary folder removed at the end.  The
writer is one process committing one row per durable transaction
(synchronous=FULL, WAL) into the same store, as a receiver does; its
commits per second are counted before and during each copy.  Not part
of make check: run it by hand with an optimised build (make BUILD=...).
"""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))

from test_backup import fill  # noqa: E402

WRITER = r"""
import os, sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], timeout=30, isolation_level=None)
c.execute("PRAGMA synchronous = FULL")
end = time.monotonic() + float(sys.argv[2])
n, i = 0, 0
stamps = []
while time.monotonic() < end and not os.path.exists(sys.argv[4]):
    i += 1
    c.execute("BEGIN IMMEDIATE")
    c.execute("INSERT INTO events (provider, event_id, event_type,"
              " received_at, last_seen_at) VALUES ('standard', ?, 't', 1, 1)",
              ("w%s_%d" % (sys.argv[3], i),))
    c.execute("COMMIT")
    stamps.append(time.monotonic())
print(" ".join("%.4f" % s for s in stamps))
"""


def writer(db, seconds, tag, stop):
    return subprocess.Popen([sys.executable, "-c", WRITER, db, str(seconds),
                             tag, stop], stdout=subprocess.PIPE)


def rate(stamps, t0, t1):
    n = len([s for s in stamps if t0 <= s <= t1])
    return n / (t1 - t0) if t1 > t0 else 0.0


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    ih = os.path.join(os.path.abspath(sys.argv[1]), "idemhook")
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
    tmp = tempfile.mkdtemp(prefix="ih-bench-backup-")
    try:
        db = os.path.join(tmp, "store", "events.db")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "IDEMHOOK_DB": db}
        subprocess.run([ih, "init"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        t = time.monotonic()
        fill(db, n)
        print("filled %d events in %.1f s; store %d bytes"
              % (n, time.monotonic() - t, os.path.getsize(db)))
        # A checkpoint, so that each copy reads the same file.
        c = sqlite3.connect(db)
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        c.close()
        with open("/proc/loadavg") as f:
            print("load average before: %s" % " ".join(f.read().split()[:3]))

        dest = os.path.join(tmp, "backup.db")
        t = time.monotonic()
        p = subprocess.run([ih, "backup", "--json", dest], env=env,
                           capture_output=True, check=True)
        idle = time.monotonic() - t
        rep = json.loads(p.stdout)
        print("idemhook backup, no writer: %.2f s wall, %d bytes, %d pages, "
              "integrity %s" % (idle, rep["bytes"], rep["pages"],
                                rep["integrity"]))
        os.unlink(dest)

        def under_writer(name, argv):
            stop = os.path.join(tmp, "stop-" + name.replace(" ", "_"))
            w = writer(db, 120, name.replace(" ", "_"), stop)
            time.sleep(2.0)
            t0 = time.monotonic()
            subprocess.run(argv, env=env, check=True,
                           stdout=subprocess.DEVNULL)
            t1 = time.monotonic()
            time.sleep(1.5)
            open(stop, "w").close()
            stamps = [float(s) for s in w.communicate()[0].split()]
            before = rate(stamps, t0 - 2.0, t0)
            during = rate(stamps, t0, t1)
            gaps = [b - a for a, b in zip(stamps, stamps[1:])
                    if t0 <= a <= t1]
            print("%-12s %.2f s; writer %.0f commits/s before, %.0f during "
                  "(%.0f%%), longest wait between commits %.0f ms"
                  % (name, t1 - t0, before, during,
                     100.0 * during / before if before else 0,
                     1000 * max(gaps) if gaps else 0))

        under_writer("backup API", [ih, "backup", dest])
        os.unlink(dest)
        under_writer("VACUUM INTO", ["sqlite3", db,
                                     "VACUUM INTO '%s'" % dest])
        print("VACUUM INTO copy: %d bytes" % os.path.getsize(dest))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
