#!/usr/bin/env python3
"""Code planted in the SQLite store's schema does not run in the writers
(issue 24, item 13): every connection sets SQLITE_DBCONFIG_DEFENSIVE and
trusted_schema = OFF.

A trigger planted on the events table calls a function that is not marked
innocuous (json_extract) or writes into a virtual table (rtree), each time
recording a marker row.  trusted_schema = OFF refuses exactly those inside
schema code, so:

  1. a delivery through lighttpd whose insert would fire the trigger is
     answered 503 + Retry-After (not stored, the provider retries), the
     marker stays empty, and the log names the refusal;
  2. `idemhook replay` (root's command) whose update would fire an
     UPDATE trigger fails the same way, with no marker;
  3. once the planted triggers are removed, the retried delivery is
     accepted (nothing was lost).

Before the fix each trigger ran: the delivery was 200 and the markers
filled.  Usage: test_sqlite_trust.py BINDIR
"""

import os
import sqlite3
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from harness import Server, check, check_eq, suite_main  # noqa: E402
import reliability as R  # noqa: E402

PLANT = {
    "function": """
        CREATE TABLE IF NOT EXISTS planted (what TEXT);
        CREATE TRIGGER planted_fn AFTER INSERT ON events BEGIN
          INSERT INTO planted VALUES (json_extract('{"a": "ran"}', '$.a'));
        END;""",
    "vtab": """
        CREATE TABLE IF NOT EXISTS planted (what TEXT);
        CREATE VIRTUAL TABLE IF NOT EXISTS planted_rt USING rtree(id, a, b);
        CREATE TRIGGER planted_vt AFTER INSERT ON events BEGIN
          INSERT INTO planted_rt VALUES (NULL, 1, 2);
          INSERT INTO planted VALUES ('vtab ran');
        END;""",
    "update": """
        CREATE TABLE IF NOT EXISTS planted (what TEXT);
        CREATE TRIGGER planted_up AFTER UPDATE ON events BEGIN
          INSERT INTO planted VALUES (json_extract('{"a": "update ran"}', '$.a'));
        END;""",
}


def plant(db, which):
    c = sqlite3.connect(db, timeout=10)
    c.executescript(PLANT[which])
    c.close()


def unplant(db):
    c = sqlite3.connect(db, timeout=10)
    for (name,) in c.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'"
                             " AND name LIKE 'planted%'").fetchall():
        c.execute("DROP TRIGGER %s" % name)
    c.commit()
    left = c.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'"
                     " AND name LIKE 'planted%'").fetchall()
    c.close()
    check_eq(left, [], "planted triggers left")


def markers(db):
    c = sqlite3.connect(db, timeout=10)
    try:
        return c.execute("SELECT what FROM planted").fetchall()
    finally:
        c.close()


def delivery_refused(srv, which):
    plant(srv.db, which)
    try:
        d = R.delivery(srv, "stripe", tag="tr")
        r = d.post(srv)
        print("# planted %s trigger: delivery answered %d" % (which, r.status))
        check_eq(markers(srv.db), [], "markers written by the planted trigger")
        check_eq(r.status, 503, "answer with a planted %s trigger" % which)
        check((r.header("Retry-After") or "").strip().isdigit(), "503 without Retry-After")
        check_eq(srv.rows("stripe", d.eid), [], "rows of the refused event")
        log = srv.errorlog()
        check("unsafe_use_of" in log, "the refusal is not in the log: %s" % log[-800:])
    finally:
        unplant(srv.db)
    r = d.post(srv)
    check(r.status == 200, "the retry once the trigger is gone: %d %s" % (r.status, srv.errorlog()[-600:]))
    check_eq(len(srv.rows("stripe", d.eid)), 1, "rows after the retry")


def command_refused(srv, bindir):
    d = R.delivery(srv, "stripe", tag="cmd")
    check_eq(d.post(srv).status, 200, "delivery before planting")
    plant(srv.db, "update")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IDEMHOOK_DB": srv.db,
           "IDEMHOOK_STRIPE_SECRET": srv.secrets["stripe"]}
    for k in harness.SANITIZER_ENV:
        if k in os.environ:
            env[k] = os.environ[k]
    try:
        p = subprocess.run([os.path.join(bindir, "idemhook"), "replay", "stripe", d.eid],
                           env=env, capture_output=True, timeout=60)
        out = (p.stdout + p.stderr).decode(errors="replace")
        print("# idemhook replay with a planted UPDATE trigger: exit %d" % p.returncode)
        check_eq(markers(srv.db), [], "markers written by the planted UPDATE trigger")
        check(p.returncode != 0, "idemhook replay ran the planted trigger: %s" % out[-400:])
        check("unsafe use of" in out, "no reason given: %s" % out[-400:])
    finally:
        unplant(srv.db)


def run_cases(tap, bindir, servers):
    tmp = harness.tempfile.mkdtemp(prefix="ih-trust-")
    srv = servers.add(Server(bindir, providers=["stripe"], name="trust",
                             db=os.path.join(tmp, "data", "events.db")))
    srv.start()
    check_eq(R.delivery(srv, "stripe").post(srv).status, 200, "first delivery")
    tap.run("a planted trigger calling json_extract (not innocuous): 503 + "
            "Retry-After, no marker, accepted once it is gone",
            delivery_refused, srv, "function")
    tap.run("a planted trigger writing into a virtual table (rtree): 503, no marker",
            delivery_refused, srv, "vtab")
    tap.run("idemhook replay with a planted UPDATE trigger: refused, no marker",
            command_refused, srv, bindir)
    tap.run("no sanitizer reports",
            lambda: check(not srv.sanitizer_reports(), srv.errorlog()[-1500:]))
    harness.shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(suite_main("sqlite trust", run_cases, prefix=True))
