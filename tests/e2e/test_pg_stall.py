#!/usr/bin/env python3
"""A PostgreSQL server that stops answering (issue 24, item 3).

  1. Stall at connect: IDEMHOOK_DB names a TCP listener that accepts and
     never speaks.  Deliveries through lighttpd are answered 503 with a
     numeric Retry-After within a few seconds, never 2xx; `idemhook`
     exits with an error within a few seconds too.
  2. Stall mid-session: the receivers reach the test server through a TCP
     proxy that is frozen (it stops forwarding, and stops accepting) after
     they have connected, then thawed.  While frozen, every delivery is
     answered 503 + Retry-After within a few seconds; after the thaw,
     deliveries are accepted again by the same receivers (nothing
     restarted); every event answered 200 is in the table.
  3. The URI's own connect_timeout and statement_timeout win over the
     defaults (idemhook check reports the bounds in force).

Before the fix each delivery of 1 and 2 held until the client gave up,
and `idemhook` never returned.  Needs IH_PG_URI (tests/run.sh starts a
server on a Unix socket).  Usage: test_pg_stall.py BINDIR
"""

import os
import select
import socket
import subprocess
import sys
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from harness import Server, check, check_eq, parallel, suite_main  # noqa: E402
import reliability as R  # noqa: E402

# Each answer must come within this (default timeouts: connect 3 s, a
# statement the busy timeout 5 s + 0.5 s + 0.25 s; the rest is slack for a busy
# machine).  The client itself waits far longer, to see a hang as one.
BOUND_S = 8.0
CLIENT_WAIT_S = 25.0


class Silent:
    """A TCP listener that completes the handshake and never speaks."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]

    def close(self):
        self.sock.close()


class Proxy:
    """TCP on 127.0.0.1 to the test server's Unix socket; freeze() stops
    it forwarding and accepting (connections stay open, unanswered),
    thaw() resumes."""

    def __init__(self, unix_path):
        self.target = unix_path
        self.frozen = threading.Event()
        self.stop = threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.threads = [threading.Thread(target=self.accept, daemon=True)]
        self.threads[0].start()

    def freeze(self):
        self.frozen.set()

    def thaw(self):
        self.frozen.clear()

    def held(self):
        while self.frozen.is_set() and not self.stop.is_set():
            time.sleep(0.02)

    def accept(self):
        while not self.stop.is_set():
            self.held()
            try:
                r, _w, _x = select.select([self.sock], [], [], 0.1)
            except (OSError, ValueError):
                return      # closed
            if not r or self.frozen.is_set():
                continue
            try:
                c, _a = self.sock.accept()
            except OSError:
                return
            u = socket.socket(socket.AF_UNIX)
            try:
                u.connect(self.target)
            except OSError:
                c.close()
                continue
            for a, b in ((c, u), (u, c)):
                t = threading.Thread(target=self.pump, args=(a, b), daemon=True)
                t.start()

    def pump(self, src, dst):
        try:
            while not self.stop.is_set():
                self.held()
                r, _w, _x = select.select([src], [], [], 0.1)
                if not r or self.frozen.is_set():
                    continue
                data = src.recv(65536)
                if not data:
                    break
                self.held()
                dst.sendall(data)
        except (OSError, ValueError):
            pass            # the other direction closed both sockets
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self):
        self.stop.set()
        self.sock.close()


def unix_socket_of(uri):
    q = urllib.parse.parse_qs(urllib.parse.urlparse(uri).query)
    return os.path.join(q["host"][0], ".s.PGSQL.%s" % q.get("port", ["5432"])[0])


def dbname_of(uri):
    return urllib.parse.urlparse(uri).path.lstrip("/")


def timed_post(srv, eid):
    d = R.delivery(srv, "stripe", eid=eid)
    t0 = time.monotonic()
    try:
        r = d.post(srv, timeout=CLIENT_WAIT_S)
        return (eid, r.status, r.header("Retry-After"), time.monotonic() - t0)
    except Exception as e:  # noqa: BLE001
        return (eid, "no answer (%s)" % type(e).__name__, None,
                time.monotonic() - t0)


def all_503_in_time(answers, what):
    late = [a for a in answers if a[3] > BOUND_S]
    check(not late, "%s: answered after more than %.0f s: %r" % (what, BOUND_S, late[:3]))
    not503 = [a for a in answers if a[1] != 503]
    check(not not503, "%s: not 503: %r" % (what, not503[:3]))
    no_ra = [a for a in answers if not (a[2] or "").strip().isdigit()]
    check(not no_ra, "%s: 503 without a numeric Retry-After: %r" % (what, no_ra[:3]))


def idemhook(bindir, db, *args, timeout=CLIENT_WAIT_S):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IDEMHOOK_DB": db}
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
        if k in os.environ:
            env[k] = os.environ[k]
    t0 = time.monotonic()
    try:
        p = subprocess.run([os.path.join(bindir, "idemhook")] + list(args),
                           env=env, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", time.monotonic() - t0
    return p.returncode, (p.stdout + p.stderr).decode(errors="replace"), \
        time.monotonic() - t0


def stall_at_connect(bindir, servers):
    silent = Silent()
    try:
        db = "postgresql://ih@127.0.0.1:%d/ih_silent" % silent.port
        srv = servers.add(Server(bindir, providers=["stripe"], name="silent", db=db))
        srv.start()
        answers = parallel(4, lambda i: timed_post(srv, R.new_eid("stripe", "sc%d" % i)),
                           timeout=120)
        print("# stall at connect: seconds to answer %r"
              % [(a[1], round(a[3], 2)) for a in answers])
        all_503_in_time(answers, "stall at connect")
        rc, out, took = idemhook(bindir, db, "list")
        print("# idemhook list on the silent server: exit %r after %.2f s" % (rc, took))
        check(rc is not None, "idemhook list still running after %.0f s" % CLIENT_WAIT_S)
        check(rc != 0, "idemhook list succeeded on a silent server: %s" % out[-300:])
        check(took <= BOUND_S, "idemhook list took %.1f s" % took)
        check("timeout" in out or "did not answer" in out or "connect" in out,
              "no reason given: %r" % out[-300:])
        check(not srv.sanitizer_reports(), srv.errorlog()[-2000:])
    finally:
        silent.close()


def stall_mid_session(bindir, servers):
    direct = harness.pg_new_db("ih_stall")
    proxy = Proxy(unix_socket_of(direct))
    try:
        db = "postgresql://ih@127.0.0.1:%d/%s" % (proxy.port, dbname_of(direct))
        srv = servers.add(Server(bindir, providers=["stripe"], name="frozen", db=db))
        srv.start()
        answers = []
        for i in range(4):
            answers.append(timed_post(srv, R.new_eid("stripe", "warm%d" % i)))
        check(all(a[1] == 200 for a in answers), "before the freeze: %r" % answers)
        proxy.freeze()
        frozen = []
        lock = threading.Lock()

        def late_sender(delay, i):
            time.sleep(delay)
            a = timed_post(srv, R.new_eid("stripe", "fz%d" % i))
            with lock:
                frozen.append(a)

        ts = [threading.Thread(target=late_sender, args=(d, i), daemon=True)
              for i, d in enumerate((0, 0, 0.5, 1.5, 3.0, 6.0))]
        for t in ts:
            t.start()
        for t in ts:
            t.join(CLIENT_WAIT_S + 10)
        print("# frozen: seconds to answer %r"
              % sorted((a[1], round(a[3], 2)) for a in frozen))
        check_eq(len(frozen), 6, "answers while frozen")
        all_503_in_time(frozen, "frozen")
        proxy.thaw()
        t0 = time.monotonic()
        after = []
        while time.monotonic() - t0 < 20:
            a = timed_post(srv, R.new_eid("stripe", "th"))
            after.append(a)
            if a[1] == 200:
                break
            time.sleep(0.2)
        print("# after the thaw: first 200 after %.2f s (%d tries)"
              % (time.monotonic() - t0, len(after)))
        check(after and after[-1][1] == 200, "not accepted again after the thaw: %r"
              % after[-3:])
        for i in range(5):
            after.append(timed_post(srv, R.new_eid("stripe", "th%d" % i)))
        check(all(a[1] == 200 for a in after[-5:]), "after the thaw: %r" % after[-5:])
        bad = [a for a in after if a[1] not in (200, 503)]
        check(not bad, "answers other than 200/503: %r" % bad)
        accepted = {a[0] for a in answers + frozen + after if a[1] == 200}
        stored = {r[0] for r in R.query(direct, "SELECT event_id FROM events")}
        check(not (accepted - stored), "answered 200 but not stored: %r"
              % sorted(accepted - stored)[:3])
        check(not srv.sanitizer_reports(), srv.errorlog()[-2000:])
    finally:
        proxy.close()


def uri_wins(bindir):
    direct = harness.pg_new_db("ih_stall_uri")
    proxy = Proxy(unix_socket_of(direct))
    try:
        db = "postgresql://ih@127.0.0.1:%d/%s" % (proxy.port, dbname_of(direct))
        rc, out, _t = idemhook(bindir, db, "check", "--provider", "stripe")
        check("store timeouts: connect_timeout 3 s, statement wait 5750 ms" in out,
              "defaults not reported: %s" % out[-600:])
        own = db + "?connect_timeout=7&options=-c%20statement_timeout%3D2s"
        rc, out, _t = idemhook(bindir, own, "check", "--provider", "stripe")
        check("store timeouts: connect_timeout 7 s, statement wait 2250 ms" in out,
              "the URI's own not in force: %s" % out[-600:])
        # A silent server is asked no longer than the URI says either.
        silent = Silent()
        try:
            rc, out, took = idemhook(
                bindir, "postgresql://ih@127.0.0.1:%d/x?connect_timeout=2" % silent.port,
                "list")
        finally:
            silent.close()
        print("# connect_timeout=2 on a silent server: exit %r after %.2f s" % (rc, took))
        check(rc not in (None, 0) and 1.5 <= took <= 2.9,
              "connect_timeout=2 took %.2f s (exit %r)" % (took, rc))
    finally:
        proxy.close()


def run_cases(tap, bindir, servers):
    tap.run("a server that accepts TCP and never speaks: 503 + Retry-After within "
            "%.0f s, never 2xx; idemhook exits with an error" % BOUND_S,
            stall_at_connect, bindir, servers)
    tap.run("a server frozen mid-session (TCP proxy): 503 + Retry-After within "
            "%.0f s; after the thaw accepted again without a restart; every 200 "
            "stored" % BOUND_S, stall_mid_session, bindir, servers)
    tap.run("the URI's connect_timeout and statement_timeout win over the defaults",
            uri_wins, bindir)


if __name__ == "__main__":
    sys.exit(suite_main("pg stall", run_cases, prefix=True))
