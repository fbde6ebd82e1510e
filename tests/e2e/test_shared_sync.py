#!/usr/bin/env python3
"""IDEMHOOK_SYNCHRONOUS=SHARED, seen from the system calls of several
processes at once: no "accepted" answer is written before an fdatasync of
the store's write-ahead log, in any receiver process, that started after
the answering process last wrote to the log (its commit) and ended before
the answer.

Usage: test_shared_sync.py BINDIR   (or IH_BIN=BINDIR test_shared_sync.py)

Four FastCGI processes behind the shipped lighttpd config, under strace
-ff -ttt -T (the harness's wrapper prefix), take concurrent deliveries.
With SHARED one process's fdatasync may cover another's commit, so the
check of tests/e2e/test_durability.py (a sync in the same process) is not
enough here: the traces are merged on their timestamps.  The number of
fdatasyncs per answer is printed, since fewer syncs than answers is the
point of the setting.
"""

import glob
import os
import re
import shutil
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (HarnessError, Server, Servers, Tap, bin_dir, check,  # noqa: E402
                     check_eq, install_signal_cleanup, parallel, sign_stripe)

ROUNDS = 5
PER_ROUND = 12
PROCS = 4

LINE = re.compile(r'^(\d+\.\d+) (\w+)\((\d+)?(.*?) = (-?\d+)(?: \w+ \(.*?\))?'
                  r' <(\d+\.\d+)>$')
OPEN = re.compile(r'^\d+\.\d+ openat\(.*"([^"]*)", .*\) = (\d+) <')


def stripe_body(eid):
    return ('{"id":"%s","object":"event","type":"invoice.paid",'
            '"data":{"object":{"id":"in_1"}}}' % eid).encode()


def parse(path):
    """[(start, end, call, fd, is_wal, accepted)] of one process's trace."""
    wal = set()
    out = []
    with open(path, errors="replace") as f:
        for ln in f:
            ln = ln.rstrip("\n")
            m = OPEN.match(ln)
            if m and m.group(1).endswith("-wal"):
                wal.add(m.group(2))
                continue
            m = LINE.match(ln)
            if not m:
                continue
            start = float(m.group(1))
            call, fd = m.group(2), m.group(3)
            end = start + float(m.group(6))
            out.append((start, end, call, fd, fd in wal,
                        call == "write" and '\\"accepted\\"' in ln))
    return out


def check_traces(prefix):
    """(answers, answers covered by a later WAL sync, syncs)."""
    procs = [parse(p) for p in sorted(glob.glob(prefix + ".*"))]
    syncs = sorted((s, e) for calls in procs for s, e, c, _, w, _ in calls
                   if c == "fdatasync" and w)
    answers = covered = 0
    for calls in procs:
        last_wal_write = None
        for s, e, c, _, w, acc in calls:
            if c in ("pwrite64", "write") and w:
                last_wal_write = e
            elif acc:
                answers += 1
                ok = last_wal_write is not None and any(
                    ss >= last_wal_write and se <= s for ss, se in syncs)
                covered += ok
                if not ok:
                    print("# answer at %.6f: its commit's log write ended "
                          "at %s, no WAL fdatasync started after it and "
                          "ended before the answer" % (s, last_wal_write))
    return answers, covered, len(syncs)


def concurrent(bindir, servers):
    def run():
        tdir = os.path.abspath(os.path.join(
            bindir, "..", "strace-shared-%d" % os.getpid()))
        shutil.rmtree(tdir, ignore_errors=True)
        os.makedirs(tdir)
        wrap = ("%s -ff -ttt -T -s 256 -e trace=openat,fdatasync,write,"
                "pwrite64 -o %s/t" % (shutil.which("strace"), tdir))
        srv = servers.add(Server(bindir, providers=["stripe"], wrap=wrap,
                                 max_procs=PROCS,
                                 env={"IDEMHOOK_SYNCHRONOUS": "SHARED"},
                                 name="shared-sync"))
        srv.start()
        secret = srv.secrets["stripe"]
        try:
            for k in range(ROUNDS):
                def one(i, k=k):
                    body = stripe_body("evt_sh_%d_%d_%d" % (os.getpid(), k,
                                                            i))
                    return srv.post("/hooks/stripe", body, {
                        "Stripe-Signature": sign_stripe(secret, body),
                        "Content-Type": "application/json"})
                for i, r in enumerate(parallel(PER_ROUND, one)):
                    check(not isinstance(r, Exception) and r.status == 200
                          and b'"accepted"' in r.body,
                          "round %d delivery %d: %r" % (k, i, r))
            time.sleep(0.5)
        finally:
            srv.stop()
        answers, covered, syncs = check_traces(os.path.join(tdir, "t"))
        print("# %d accepted answers, %d WAL fdatasyncs in %d processes"
              % (answers, syncs, PROCS))
        shutil.rmtree(tdir, ignore_errors=True)
        check_eq(answers, ROUNDS * PER_ROUND, "accepted answers seen in "
                 "the traces")
        check_eq(covered, answers, "answers written after a WAL fdatasync "
                 "that started after their commit")
        check_eq(len(srv.rows("stripe")), ROUNDS * PER_ROUND, "rows")
    return run


def main():
    tap = Tap()
    try:
        bindir = bin_dir()
    except HarnessError as e:
        tap.not_ok("shared sync: setup", e)
        return tap.finish()
    if shutil.which("strace") is None:
        tap.not_ok("shared sync: setup",
                   "strace is not installed (tests/deps.sh installs it)")
        return tap.finish()
    servers = Servers()
    install_signal_cleanup(servers)
    with servers:
        why = ("strace reads the memory of programs that made themselves "
               "non-dumpable")
        tap.run_as_root("shared sync: %d concurrent deliveries to %d "
                        "processes at SHARED, each accepted answer after a "
                        "WAL fdatasync (any process) begun after its commit"
                        % (ROUNDS * PER_ROUND, PROCS), why,
                        concurrent(bindir, servers))
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
