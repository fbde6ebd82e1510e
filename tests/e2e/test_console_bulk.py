#!/usr/bin/env python3
"""End-to-end test of the console's replay by filter against the rule
`idemhook replay` applies (issue 24, item 8; store_bulk_check()): a status
is needed, and `done` with no other narrowing filter needs the explicit
"every done event" confirmation. Through lighttpd and console.fcgi, with
HTTP Basic sign-in, the form's CSRF token and a same-origin POST; no
browser needed.

Usage: test_console_bulk.py BINDIR   (or IH_BIN=BINDIR test_console_bulk.py)
"""

import os
import re
import subprocess
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (Server, check, check_eq, console_conf,  # noqa: E402
                     suite_main)
from standins.stripe import StripeStandin  # noqa: E402
import cases  # noqa: E402
import test_stripe as ts  # noqa: E402
from test_console import USER, basic_auth, console_settings, operator  # noqa: E402

BASE = "/hooks/console"
STRIPE_KEY = "rk_test_51Console" + "Qx4" * 8


def case_bulk_rule(srv, auth):
    ids = [ts.SPEC.new_id("cb%d" % i) for i in range(3)]
    for i, e in enumerate(ids):
        etype = "test.narrow" if i == 0 else "test.other"
        body = ts.SPEC.body(e, etype)
        cases.expect_accepted(ts.SPEC.post(srv, body, ts.SPEC.headers(srv, body, e, etype)),
                              "delivery")

    def status(e):
        return srv.rows("stripe", e)[0]["status"]
    for e in ids:
        check_eq(status(e), "done", "status before")
    r = srv.get(BASE + "/events", {"Authorization": auth})
    check_eq(r.status, 200, "events page")
    m = re.search(rb'name="csrf" value="([^"]+)"', r.body)
    check(m is not None, "no CSRF token in the events page")
    token = m.group(1).decode()
    origin = "http://127.0.0.1:%d" % srv.port

    def bulk(**form):
        form["csrf"] = token
        return srv.post(BASE + "/bulk", urllib.parse.urlencode(form).encode(), {
            "Authorization": auth, "Origin": origin,
            "Content-Type": "application/x-www-form-urlencoded"})
    # done, not narrowed, confirmed without "all": refused, nothing changes.
    r = bulk(status="done", confirm="yes")
    check_eq(r.status, 400, "done with no other filter, confirmed (body %r)" % r.body[:200])
    check(b"bad_filter" in r.body, "body %r" % r.body[:300])
    check_eq([status(e) for e in ids], ["done"] * 3, "statuses after the refusal")
    # No status: refused as the command refuses it.
    r = bulk(provider="stripe", confirm="yes")
    check_eq(r.status, 400, "no status, confirmed")
    check_eq([status(e) for e in ids], ["done"] * 3, "statuses after the refusal")
    # Narrowed by type: replayed.
    r = bulk(status="done", type="test.narrow", confirm="yes")
    check_eq(r.status, 200, "done narrowed by type (body %r)" % r.body[:200])
    check_eq([status(e) for e in ids], ["received", "done", "done"], "after the narrow one")
    # The dry run of every done event offers the explicit confirmation.
    r = bulk(status="done")
    check_eq(r.status, 200, "dry run")
    check(b'name="all" value="yes"' in r.body and b"every done event" in r.body,
          "the dry run offers no explicit confirmation: %r" % r.body[-600:])
    r = bulk(status="done", confirm="yes", all="yes")
    check_eq(r.status, 200, "every done event, confirmed")
    check_eq([status(e) for e in ids], ["received"] * 3, "after the confirmed replay")


def idemhook(bindir, srv, *args, **env):
    e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IDEMHOOK_DB": srv.db,
         "IDEMHOOK_LOG": os.path.join(srv.tmp, "cmd.log")}
    e.update({k: os.environ[k] for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS")
              if k in os.environ})
    e.update(env)
    p = subprocess.run([os.path.join(bindir, "idemhook")] + list(args), env=e,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def case_endpoints(bindir, srv, auth):
    """The overview shows each provider's last `idemhook health` result,
    kept in the store (the console holds no API key), and the signatures
    refused in the last hour and day, every value escaped."""
    for n in range(3):
        e = ts.SPEC.new_id("bad%d" % n)
        body = ts.SPEC.body(e, "test.bad")
        r = ts.SPEC.post(srv, body, ts.SPEC.headers(srv, body, e, "test.bad",
                                                    secret="whsec_the_old_secret"))
        check_eq(r.status, 401, "a wrong signature")
    api = StripeStandin(STRIPE_KEY).start()
    try:
        api.set_endpoint(status="disabled", url="https://hooks.example.com/<script>x=1</script>")
        rc, out, err = idemhook(bindir, srv, "health", "--provider", "stripe",
                                IDEMHOOK_STRIPE_API_KEY=STRIPE_KEY,
                                IDEMHOOK_STRIPE_API_BASE=api.base)
        check_eq(rc, 3, "health: %s %s" % (out, err))
    finally:
        api.stop()
    # On PostgreSQL the receiver's writer adds its refusals to the store
    # within 20 s (shared/sigfail_pend.h): wait for them that long.
    end = time.monotonic() + 120
    while True:
        r = srv.get(BASE + "/", {"Authorization": auth})
        check_eq(r.status, 200, "overview")
        row = re.search(rb"<tr><td>stripe</td>(.*?)</tr>", r.body, re.S)
        cells = re.findall(rb"<td[^>]*>(.*?)</td>", row.group(1), re.S) if row else []
        if cells[3:4] == [b"3"] or time.monotonic() >= end:
            break
        time.sleep(1)
    m = re.search(rb'<table id="endpoints">.*?</table>', r.body, re.S)
    check(m is not None, "no endpoints table: %r" % r.body[-800:])
    t = m.group(0)
    row = re.search(rb"<tr><td>stripe</td>(.*?)</tr>", t, re.S)
    check(row is not None, "no stripe row: %r" % t)
    cells = re.findall(rb"<td[^>]*>(.*?)</td>", row.group(1), re.S)
    check_eq(len(cells), 5, "cells: %r" % cells)
    with open(os.path.join(srv.tmp, "cmd.log")) as f:
        log = f.read()
    check(b"ago" in cells[0], "checked when: %r (%s)" % (cells[0], log[-500:]))
    check_eq(cells[1], b"problem (1)", "outcome")
    check(b"disabled" in cells[2] and b"&lt;script&gt;x=1&lt;/script&gt;" in cells[2],
          "findings: %r" % cells[2])
    check(b"<script>" not in r.body, "an unescaped value on the page")
    check_eq((cells[3], cells[4]), (b"3", b"3"), "bad signatures, last hour and day")
    check(STRIPE_KEY.encode() not in r.body, "the key on the page")


def run_cases(tap, bindir, servers):
    password, hsh = operator(bindir)
    auth = basic_auth(USER, password)
    srv = Server(bindir, providers=["stripe"], name="console-bulk")
    settings = console_settings(srv, hsh)
    srv.extra_conf = "\n".join(console_conf(settings, srv.settings_file()))
    servers.add(srv)
    if tap.run("lighttpd starts with the console", srv.start):
        tap.run("bulk replay: done needs a narrowing filter or the explicit 'every "
                "done event'; a status is needed", case_bulk_rule, srv, auth)
        tap.run("overview: each endpoint's last health check and bad signatures, "
                "escaped", case_endpoints, bindir, srv, auth)
        tap.run("no sanitizer reports", cases.case_sanitizers, srv)
        srv.stop()


if __name__ == "__main__":
    sys.exit(suite_main("console-bulk", run_cases, prefix=True))
