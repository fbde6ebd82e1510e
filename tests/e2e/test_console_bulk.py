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
import sys
import urllib.parse

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (Server, check, check_eq, console_conf,  # noqa: E402
                     suite_main)
import cases  # noqa: E402
import test_stripe as ts  # noqa: E402
from test_console import USER, basic_auth, console_settings, operator  # noqa: E402

BASE = "/hooks/console"


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
        tap.run("no sanitizer reports", cases.case_sanitizers, srv)
        srv.stop()


if __name__ == "__main__":
    sys.exit(suite_main("console-bulk", run_cases, prefix=True))
