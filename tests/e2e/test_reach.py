#!/usr/bin/env python3
"""The suite's own set-up, wherever the checkout lies (issue 13).

Usage: test_reach.py BINDIR   (or IH_BIN=BINDIR test_reach.py)

  - the programs are staged where the servers' user can run them, even
    when BINDIR is under a folder that user cannot enter;
  - a server whose programs' user cannot reach a path it needs fails to
    start with one line naming the path, the folder that stops it and the
    user, instead of answering 403 or 502 case after case.
As root the servers' user is www-data and the closed folder is a root-owned
0700 folder; as another user it is that user and a folder of mode 0000.
"""

import os
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (IS_ROOT, ApacheServer, HarnessError, NginxServer,  # noqa: E402
                     check, reach_problem, server_user, staged_programs,
                     suite_main)
import cases  # noqa: E402
import test_stripe as ts  # noqa: E402


def closed_folder():
    """A folder the servers' user cannot enter, and a path inside it."""
    d = tempfile.mkdtemp(prefix="ih-closed-")
    os.chmod(d, 0o700 if IS_ROOT else 0o000)
    return d


def reopen(d):
    os.chmod(d, 0o700)
    shutil.rmtree(d, ignore_errors=True)


def staged_from_closed(bindir):
    """Programs copied under a closed folder are staged where the servers'
    user runs them; the staged folder passes the reach check."""
    d = closed_folder()
    try:
        os.chmod(d, 0o700)
        inner = os.path.join(d, "build")
        os.mkdir(inner)
        shutil.copy2(os.path.join(bindir, "stripe.fcgi"), inner)
        if not IS_ROOT:
            os.chmod(d, 0o000)
        problem = reach_problem(server_user(), [(os.path.join(inner, "stripe.fcgi"), "rx")])
        check(problem is not None, "the closed folder %s did not stop %s" % (d, server_user()))
        if IS_ROOT:
            staged = staged_programs(inner)
            check(staged != inner and not staged.startswith(d),
                  "programs not staged out of the closed folder: %s" % staged)
            check(reach_problem(server_user(), [(os.path.join(staged, "stripe.fcgi"), "rx")])
                  is None, "%s cannot run the staged program" % server_user())
    finally:
        reopen(d)


def one_line(make_server, servers):
    """A store folder under a closed folder: start() raises one line that
    names the user, the path and the folder; no delivery is tried."""
    d = closed_folder()
    try:
        srv = servers.add(make_server(d))
        try:
            srv.start()
        except HarnessError as e:
            msg = str(e)
            check("\n" not in msg.strip(), "more than one line: %r" % msg)
            check(server_user() in msg, "the user is not named: %r" % msg)
            check(d in msg, "the closed folder %s is not named: %r" % (d, msg))
            return
        finally:
            srv.cleanup()
        raise AssertionError("the server started although %s cannot reach %s"
                             % (server_user(), d))
    finally:
        reopen(d)


def staged_serves(bindir, servers):
    """An Apache vhost serving the staged programs answers accepted."""
    srv = servers.add(ApacheServer(bindir, mode="vhost", providers=["stripe"],
                                   name="reach-vhost"))
    try:
        srv.start()
        cases.expect_accepted(ts.SPEC.deliver(srv, ts.SPEC.new_id("reach"))[0], "stripe")
    finally:
        srv.cleanup()


def run_cases(tap, bindir, servers):
    tap.run("programs under a closed folder are staged where %s can run them"
            % server_user(), staged_from_closed, bindir)
    tap.run("Apache vhost on the staged programs: accepted", staged_serves, bindir, servers)
    tap.run("Apache: an unreachable store folder -> one line naming it and the user",
            one_line, lambda d: ApacheServer(
                bindir, mode="vhost", providers=["stripe"], name="reach-apache",
                db=os.path.join(d, "data", "events.db")), servers)
    tap.run("nginx: an unreachable store folder -> one line naming it and the user",
            one_line, lambda d: NginxServer(
                bindir, providers=["stripe"], name="reach-nginx",
                db=os.path.join(d, "data", "events.db")), servers)


if __name__ == "__main__":
    sys.exit(suite_main("reach", run_cases, prefix=True))
