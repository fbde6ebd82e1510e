"""make bench: the forwarding rate (issue 41), in its own module.

stripe under lighttpd at 16 connections, as run.py's own runs, with
IDEMHOOK_STRIPE_FORWARD_URL set to a local application that answers 200
at once (node's http server when node is there, else Python's threaded
one): each receiver forwards the event it recorded after its answer.
Reported against the receive rate of the same run:

  received/s   rows first received during wrk's run / its duration
  forwarded/s  those rows / (the last one's done_at - the run's start):
               done means the application answered 2xx, so this is the
               rate at which the window's events reached it; equal to
               received/s when forwarding keeps up
  drain        how long after wrk stopped the last of them was delivered

Python 3 standard library (and node, when present).
"""

import os
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))

import harness  # noqa: E402

CONNS = 16
DRAIN_S = 300

NODE_APP = ("const http = require('http');"
            "http.createServer((q, s) => { q.resume();"
            " q.on('end', () => { s.writeHead(200); s.end('ok'); }); })"
            ".listen(+process.argv[1], '127.0.0.1');")

PY_APP = ("import http.server, sys\n"
          "class H(http.server.BaseHTTPRequestHandler):\n"
          "    protocol_version = 'HTTP/1.1'\n"
          "    def do_POST(self):\n"
          "        self.rfile.read(int(self.headers.get('Content-Length', 0)))\n"
          "        self.send_response(200)\n"
          "        self.send_header('Content-Length', '2')\n"
          "        self.end_headers()\n"
          "        self.wfile.write(b'ok')\n"
          "    def log_message(self, *a):\n"
          "        pass\n"
          "http.server.ThreadingHTTPServer(('127.0.0.1', int(sys.argv[1])),"
          " H).serve_forever()\n")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_app():
    port = free_port()
    if shutil.which("node"):
        cmd, kind = ["node", "-e", NODE_APP, str(port)], "node http"
    else:
        cmd, kind = [sys.executable, "-c", PY_APP, str(port)], "Python http.server"
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port, kind
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the forwarding bench's application did not start")


def window_figures(db, t0_ms, window_ms):
    """Rows first received in the window, those not yet done, and the
    last done_at of the done ones."""
    with harness.db_connect(db, timeout=10, ro=True) as c:
        return c.execute(
            "SELECT count(*), sum(status <> 'done'), max(done_at)"
            " FROM events WHERE received_at >= ? AND received_at < ?",
            (int(t0_ms), int(t0_ms + window_ms))).fetchone()


def measure(bench, wrk, log, seconds):
    """One run; returns its row (a dict) for results.md and .json."""
    app, port, kind = start_app()
    env = {"IDEMHOOK_MODE": "after-response",
           "IDEMHOOK_STRIPE_FORWARD_URL": "http://127.0.0.1:%d/hooks/stripe" % port,
           "IDEMHOOK_STRIPE_FORWARD_SECRET": "whsec_bench_forward_app",
           "IDEMHOOK_STRIPE_FORWARD_TIMEOUT": "10"}
    srv = bench.make_server("stripe", "lighttpd", False, env, False, ())
    reqfile = bench.requests_for("stripe")
    try:
        srv.start()
        url = "http://127.0.0.1:%d/hooks/stripe" % srv.port
        t0_ms = time.time() * 1000
        res = wrk(url, CONNS, seconds, reqfile)
        dur = res["duration_us"] / 1e6
        end = time.monotonic()
        rows, left, last = window_figures(srv.db, t0_ms, dur * 1000)
        while left and time.monotonic() - end < DRAIN_S:
            time.sleep(0.2)
            rows, left, last = window_figures(srv.db, t0_ms, dur * 1000)
        srv.stop()
    finally:
        srv.cleanup()
        app.kill()
        app.wait()
    fwd_s = (rows - (left or 0)) / ((last - t0_ms) / 1000.0) if last else 0.0
    r = {"conns": CONNS, "app": kind, "rows": rows, "undelivered": left or 0,
         "received_s": rows / dur, "forwarded_s": fwd_s,
         "drain_s": max(0.0, (last - t0_ms) / 1000.0 - dur) if last else None,
         "p99_ms": res["p99_us"] / 1000.0}
    log("forward  stripe at c=%d: received %.0f/s, forwarded %.0f/s to a "
        "local application (%s), drained %.1f s after wrk, %d undelivered"
        % (CONNS, r["received_s"], r["forwarded_s"], kind,
           r["drain_s"] or 0.0, r["undelivered"]))
    return r


def lines(r):
    """results.md's lines for the run r (measure()'s row)."""
    if not r:
        return []
    return ["Forwarding (tests/bench/forward_rate.py): stripe at %d "
            "connections, each event forwarded after the answer to a local "
            "application that answers 200 at once (%s):" % (r["conns"], r["app"]),
            "",
            "| received/s | forwarded/s | forwarded / received | drain after "
            "wrk | undelivered | answer p99 |",
            "|--:|--:|--:|--:|--:|--:|",
            "| %.0f | %.0f | %.2f | %.1f s | %d | %.2f ms |" % (
                r["received_s"], r["forwarded_s"],
                r["forwarded_s"] / r["received_s"] if r["received_s"] else 0,
                r["drain_s"] or 0.0, r["undelivered"], r["p99_ms"]),
            ""]
