#!/usr/bin/env python3
"""The first burst to a fresh store (issue 14, item 17): no 503.

Usage: test_fresh_store.py BINDIR   (or IH_BIN=BINDIR test_fresh_store.py)
       IH_FRESH_ROUNDS=N (default 10) rounds of each kind

Several processes opening a store that does not exist yet used to race
to switch it to WAL mode; SQLite answers the loser "database is locked"
at once, without waiting for the busy handler, and the delivery got 503
(cannot set WAL mode).  Each round here makes a new store:

  FastCGI  a lighttpd with max_procs 4 for each of the five providers
           (20 receivers sharing one store) gets 40 first deliveries at
           once, 8 per provider;
  CGI      24 receivers started at once as plain CGI programs, one
           delivery each, as a web server's mod_cgi would run them.

Every answer must be 200 accepted, every event must be stored once, and
no log may name "database is locked".
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (PROVIDERS, Server, check, recv_all,  # noqa: E402
                     sign_stripe, suite_main)
import reliability as R  # noqa: E402

ROUNDS = int(os.environ.get("IH_FRESH_ROUNDS", "10"))
PER_PROVIDER = 8
MAX_PROCS = 4
CGI_BURST = 24


def wait_receivers(srv, want, timeout=20.0):
    """lighttpd spawns its FastCGI processes at start: wait for all of them,
    so that the burst, not the spawning, decides who opens the store first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        srv._note_children()
        if len(srv.fcgi_pids) >= want:
            return
        time.sleep(0.05)


def burst(srv, ds):
    """Sends every delivery but its last byte, then all the last bytes
    together: lighttpd passes a request on only once its body is whole, so
    the receivers get them within a fraction of a millisecond.  Returns
    (status, JSON status or None, raw answer) per delivery."""
    socks = []
    try:
        for d in ds:
            head = ["POST %s HTTP/1.1" % d.path, "Host: 127.0.0.1",
                    "Content-Type: application/json",
                    "Content-Length: %d" % len(d.body), "Connection: close"]
            head += ["%s: %s" % kv for kv in d.headers.items()]
            raw = ("\r\n".join(head) + "\r\n\r\n").encode() + d.body
            s = socket.create_connection(("127.0.0.1", srv.port), timeout=60)
            s.sendall(raw[:-1])
            socks.append((s, raw[-1:]))
        time.sleep(0.2)
        for s, last in socks:
            s.sendall(last)
        out = []
        for s, _ in socks:
            data = recv_all(s)
            status, js = 0, None
            try:
                status = int(data.split(b" ", 2)[1])
                js = json.loads(data.split(b"\r\n\r\n", 1)[1]).get("status")
            except (IndexError, ValueError):
                pass
            out.append((status, js, data))
        return out
    finally:
        for s, _ in socks:
            s.close()


def fastcgi_rounds(bindir, servers):
    def run():
        bad, sent = [], 0
        for rnd in range(ROUNDS):
            srv = servers.add(Server(bindir, max_procs=MAX_PROCS,
                                     name="fresh%d" % rnd))
            srv.start()
            wait_receivers(srv, MAX_PROCS * len(srv.providers))
            check(not os.path.exists(srv.db), "store exists before the burst")
            ds = [R.delivery(srv, p, tag="fresh%d" % rnd)
                  for p in srv.providers for _ in range(PER_PROVIDER)]
            res = burst(srv, ds)
            sent += len(ds)
            for d, (status, js, raw) in zip(ds, res):
                if status != 200 or js != "accepted":
                    bad.append("round %d %s: %r" % (rnd, d.provider, raw[-160:]))
            log = srv.errorlog()
            if "database is locked" in log or "cannot set WAL" in log:
                bad.append("round %d: log: %s" % (rnd, [
                    line for line in log.splitlines()
                    if "locked" in line or "WAL" in line][:2]))
            got = R.count_rows(srv.db)
            if got != len(ds):
                bad.append("round %d: %d rows for %d events" % (rnd, got, len(ds)))
            reports = srv.sanitizer_reports()
            if reports:
                bad.append("round %d: sanitizer: %s" % (rnd, reports[:300]))
            srv.cleanup()
        check(not bad, "%d of %d first deliveries not accepted: %s"
              % (len(bad), sent, "; ".join(bad[:6])))
    return run


def cgi_rounds(bindir):
    def run():
        secret = "whsec_" + os.urandom(12).hex()
        tmp = tempfile.mkdtemp(prefix="ih-fresh-cgi-")
        bad, sent = [], 0
        try:
            for rnd in range(ROUNDS):
                db = os.path.join(tmp, "r%d" % rnd, "events.db")
                procs = []
                for i in range(CGI_BURST):
                    eid = "evt_freshcgi_%d_%d_%s" % (rnd, i, os.urandom(3).hex())
                    body = R.body_for("stripe", eid)
                    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                           "GATEWAY_INTERFACE": "CGI/1.1",
                           "REQUEST_METHOD": "POST",
                           "CONTENT_TYPE": "application/json",
                           "CONTENT_LENGTH": str(len(body)),
                           "HTTP_STRIPE_SIGNATURE": sign_stripe(secret, body),
                           "IDEMHOOK_DB": db,
                           "IDEMHOOK_STRIPE_SECRET": secret}
                    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
                        if k in os.environ:
                            env[k] = os.environ[k]
                    p = subprocess.Popen([os.path.join(bindir, "stripe.fcgi")],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, env=env)
                    procs.append((p, body))
                # Every process is running before any reads its body.
                for p, body in procs:
                    p.stdin.write(body)
                    p.stdin.close()
                for p, _ in procs:
                    out, err = p.stdout.read(), p.stderr.read()
                    p.wait(timeout=60)
                    sent += 1
                    if b'"accepted"' not in out or p.returncode != 0:
                        bad.append("round %d: exit %s %r %r" % (
                            rnd, p.returncode, out[:100], err[-200:]))
                got = R.count_rows(db)
                if got != CGI_BURST:
                    bad.append("round %d: %d rows for %d events" % (rnd, got, CGI_BURST))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        check(not bad, "%d of %d first deliveries not accepted: %s"
              % (len(bad), sent, "; ".join(bad[:6])))
    return run


def cases(tap, bindir, servers):
    tap.run("fresh store: FastCGI, %d rounds of %d first deliveries at once "
            "(%d providers x max_procs %d on one new store): all accepted, "
            "no 503" % (ROUNDS, PER_PROVIDER * len(PROVIDERS), len(PROVIDERS),
                        MAX_PROCS),
            fastcgi_rounds(bindir, servers))
    tap.run("fresh store: plain CGI, %d rounds of %d receivers at once on a "
            "new store: all accepted, no 503" % (ROUNDS, CGI_BURST),
            cgi_rounds(bindir))


if __name__ == "__main__":
    sys.exit(suite_main("fresh store", cases))
