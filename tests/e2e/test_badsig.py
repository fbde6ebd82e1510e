#!/usr/bin/env python3
"""End-to-end test of the alarm on a burst of bad signatures (issue 26):
a secret rotated on one side only looks like silence to the application
while the provider sees 401s for hours.

Usage: test_badsig.py BINDIR   (or IH_BIN=BINDIR test_badsig.py)
Prints 'ok - ...' / 'not ok - ...: reason' lines; exits 1 if any failed.

Deliveries signed with the wrong secret are refused through lighttpd and
counted beside a SQLite store (<db>-sigfail, 0600, nothing of the request
kept), or in a PostgreSQL store (table sigfails, every host's receivers
adding up; run with IH_DB_BACKEND=pg); idemhook work raises IDEMHOOK_ALERT_ACTION with reason
bad_signatures once they pass IDEMHOOK_BADSIG_ALERT while no delivery was
accepted, and not below the threshold, nor once a delivery is accepted.
"""

import json
import os
import stat
import struct
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (Server, check, check_eq, is_pg, sign_stripe,  # noqa: E402
                     suite_main)


def body(n):
    return json.dumps({"id": "evt_badsig_%d_%s" % (n, os.urandom(4).hex()),
                       "object": "event", "type": "charge.created",
                       "created": int(time.time()),
                       "data": {"object": {"id": "ch_%d" % n, "object": "charge"}}}).encode()


def post(srv, secret, n):
    b = body(n)
    return srv.post(srv.url("stripe"), b, {"Stripe-Signature": sign_stripe(secret, b),
                                           "Content-Type": "application/json"}).status


def work(bindir, srv, alert, threshold="5"):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IDEMHOOK_DB": srv.db,
           "IDEMHOOK_ALERT_ACTION": '{ echo "$IDEMHOOK_ALERT_REASON $IDEMHOOK_PROVIDER"; '
                                    'cat; } >> %s' % alert,
           "IDEMHOOK_BADSIG_ALERT": threshold, "IDEMHOOK_BADSIG_WINDOW": "15"}
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
        if k in os.environ:
            env[k] = os.environ[k]
    p = subprocess.run([os.path.join(bindir, "idemhook"), "work", "--once"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    err = p.stderr.decode("utf-8", "replace")
    check(p.returncode == 0 and "Sanitizer" not in err, "work: %d %s" % (p.returncode, err))


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


def case_burst(bindir, srv):
    """Four refused: no alarm; five: one alarm, naming the provider and
    the count; then an accepted delivery: no alarm."""
    alert = os.path.join(srv.tmp, "alert.txt")
    work(bindir, srv, alert)      # creates the store, as idemhook init would
    if not is_pg(srv.db):
        # A file of the first layout (736-byte records, no hourly counts)
        # is dropped, not misread: its 60 x 1000 would count.
        minute = int(time.time()) // 60
        fd = os.open(srv.db + "-sigfail", os.O_WRONLY | os.O_CREAT, 0o600)
        for name in (b"stripe", b"github"):
            os.write(fd, name.ljust(16, b"\0") + struct.pack("<60q", *([minute] * 60)) +
                     struct.pack("<60I", *([1000] * 60)))
        os.close(fd)
    for n in range(4):
        check_eq(post(srv, "whsec_the_old_secret", n), 401, "refused")
    work(bindir, srv, alert)
    check_eq(read(alert), "", "no alarm below the threshold")
    check_eq(post(srv, "whsec_the_old_secret", 4), 401, "refused")
    work(bindir, srv, alert)
    text = read(alert)
    check(text.startswith("bad_signatures stripe\n") and "refused 5 deliveries" in text,
          "alarm: %r" % text)
    if not is_pg(srv.db):
        side = srv.db + "-sigfail"
        st = os.stat(side)
        check_eq(stat.S_IMODE(st.st_mode), 0o600, "mode of %s" % side)
        with open(side, "rb") as f:
            raw = f.read()
        check(b"evt_badsig" not in raw and b"whsec" not in raw, "only counts are kept")
    check_eq(len(srv.rows("stripe")), 0, "nothing recorded")
    os.unlink(alert)
    check_eq(post(srv, srv.secrets["stripe"], 99), 200, "accepted")
    work(bindir, srv, alert)
    check_eq(read(alert), "", "no alarm once a delivery is accepted")


def cases(tap, bindir, servers):
    srv = servers.add(Server(bindir, providers=["stripe"], name="badsig"))
    srv.start()
    tap.run("stripe%s: a burst of bad signatures alarms once"
            % (" (PostgreSQL: counted in the store)" if is_pg(srv.db) else ""),
            case_burst, bindir, srv)
    tap.run("no sanitizer reports", lambda: check(
        not srv.sanitizer_reports(), "sanitizer: %r" % srv.sanitizer_reports()[:2]))


if __name__ == "__main__":
    sys.exit(suite_main("badsig", cases))
