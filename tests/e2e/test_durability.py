#!/usr/bin/env python3
"""Durability, seen from the system calls: every "accepted" answer is
written only after an fdatasync of the store's write-ahead log.

Usage: test_durability.py BINDIR   (or IH_BIN=BINDIR test_durability.py)

The receivers run behind the shipped lighttpd config under strace (the
harness's wrapper prefix), which logs, per process, each fdatasync and each
write to the FastCGI connection.  A test that only looked at the database
could not tell a durable commit from one that sits in the page cache.
Also run as plain CGI, where the answer goes to stdout.
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (HarnessError, Server, Servers, Tap, bin_dir, check,  # noqa: E402
                     check_eq, install_signal_cleanup, sign_stripe)

N = 20


def stripe_body(eid):
    return ('{"id":"%s","object":"event","type":"invoice.paid",'
            '"data":{"object":{"id":"in_1"}}}' % eid).encode()


def wal_fds(lines):
    """File descriptors opened on a -wal file in one process's trace."""
    fds = set()
    for ln in lines:
        m = re.search(r'openat\(.*-wal", .*\) = (\d+)$', ln)
        if m:
            fds.add(m.group(1))
    return fds


def accepted_after_sync(lines):
    """(answers, answers preceded by a WAL fdatasync since the previous
    answer or the start) in one process's trace."""
    fds = wal_fds(lines)
    synced = False
    answers = ok = 0
    for ln in lines:
        m = re.match(r'(?:\d+ +)?fdatasync\((\d+)\)', ln)
        if m and m.group(1) in fds:
            synced = True
            continue
        if re.match(r'(?:\d+ +)?write\(', ln) and '\\"accepted\\"' in ln:
            answers += 1
            ok += synced
            synced = False
    return answers, ok


def traces(prefix):
    out = []
    for path in sorted(glob.glob(prefix + ".*")):
        with open(path, errors="replace") as f:
            out.append(f.read().splitlines())
    return out


def through_lighttpd(bindir, servers, mode):
    def run():
        tdir = os.path.join(bindir, "..", "strace-%s-%d" % (mode, os.getpid()))
        tdir = os.path.abspath(tdir)
        shutil.rmtree(tdir, ignore_errors=True)
        os.makedirs(tdir)
        # lighttpd wants an absolute program path in bin-path.
        wrap = ("%s -ff -s 256 -e trace=openat,fdatasync,write -o %s/t"
                % (shutil.which("strace"), tdir))
        srv = servers.add(Server(bindir, providers=["stripe"], wrap=wrap,
                                 env={"IDEMHOOK_MODE": mode},
                                 name="durability-" + mode))
        srv.start()
        try:
            secret = srv.secrets["stripe"]
            for i in range(N):
                eid = "evt_dur_%s_%d_%d" % (mode, os.getpid(), i)
                body = stripe_body(eid)
                r = srv.post("/hooks/stripe", body,
                             {"Stripe-Signature": sign_stripe(secret, body),
                              "Content-Type": "application/json"})
                check_eq(r.status, 200, "delivery %d" % i)
                check(b'"accepted"' in r.body, "delivery %d: %r" % (i, r))
            time.sleep(0.5)
        finally:
            srv.stop()
        answers = synced = 0
        for lines in traces(os.path.join(tdir, "t")):
            a, s = accepted_after_sync(lines)
            answers += a
            synced += s
        shutil.rmtree(tdir, ignore_errors=True)
        check_eq(answers, N, "accepted answers seen in the traces")
        check_eq(synced, N, "accepted answers written after a WAL fdatasync")
    return run


def as_cgi(bindir):
    def run():
        tmp = os.path.abspath(os.path.join(bindir, "..", "dur-cgi-%d" % os.getpid()))
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        secret = "whsec_durability"
        try:
            for i in range(3):
                eid = "evt_dur_cgi_%d" % i
                body = stripe_body(eid)
                env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                       "REQUEST_METHOD": "POST",
                       "CONTENT_LENGTH": str(len(body)),
                       "HTTP_STRIPE_SIGNATURE": sign_stripe(secret, body),
                       "IDEMHOOK_DB": os.path.join(tmp, "db", "events.db"),
                       "IDEMHOOK_STRIPE_SECRET": secret}
                for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
                    if k in os.environ:
                        env[k] = os.environ[k]
                trace = os.path.join(tmp, "trace")
                p = subprocess.run(
                    ["strace", "-f", "-s", "256", "-e",
                     "trace=openat,fdatasync,write", "-o", trace,
                     os.path.join(bindir, "stripe.fcgi")],
                    input=body, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    env=env, timeout=30)
                check(b'"accepted"' in p.stdout, "CGI answer: %r" % p.stdout[-200:])
                with open(trace, errors="replace") as f:
                    lines = f.read().splitlines()
                a, s = accepted_after_sync(lines)
                check_eq((a, s), (1, 1), "CGI: (answers, answers after a WAL fdatasync)")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return run


def main():
    tap = Tap()
    try:
        bindir = bin_dir()
    except HarnessError as e:
        tap.not_ok("durability: setup", e)
        return tap.finish()
    if shutil.which("strace") is None:
        tap.not_ok("durability: setup", "strace is not installed (tests/deps.sh installs it)")
        return tap.finish()
    servers = Servers()
    install_signal_cleanup(servers)
    with servers:
        # The programs make themselves non-dumpable (no core, no ptrace by
        # their own user), so only root's strace can read what they write.
        why = "strace reads the memory of programs that made themselves non-dumpable"
        for mode in ("after-response", "worker"):
            tap.run_as_root("durability: FastCGI, %s mode: each of %d accepted answers "
                            "follows an fdatasync of the WAL" % (mode, N), why,
                            through_lighttpd(bindir, servers, mode))
        tap.run_as_root("durability: plain CGI: the accepted answer follows an fdatasync "
                        "of the WAL", why, as_cgi(bindir))
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
