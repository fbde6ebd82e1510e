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

import os
import shutil
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (Server, check, check_eq, parallel,  # noqa: E402
                     processes, sign_stripe, strace_missing, strace_wrap,
                     stripe_body, suite_main, thread_traces, wal_writes)

ROUNDS = 5
PER_ROUND = 12
PROCS = 4

def check_traces(prefix, ids):
    """(answers, answers covered by a later WAL sync, syncs).  Threads are
    traced apart (-ff): a request thread reads the event and writes the
    answer, the writer thread commits, and with SHARED any thread of any
    process may run the sync.  So an event's commit is the end of the
    first write to the log that holds its id, and its answer is the next
    "accepted" write of the thread that read it."""
    threads = thread_traces(prefix)
    commits = {}    # event id -> end of the first WAL write holding it
    syncs = []
    for tids in processes(threads).values():
        wal_writes(threads, tids, ids, commits, syncs)
    answers = covered = 0
    for calls in threads.values():
        current = None
        for (t0, t1, call, args, ret) in calls:
            if call in ("read", "recvfrom"):
                for eid in ids:
                    if eid in args:
                        current = eid
            elif call == "write" and '\\"accepted\\"' in args:
                answers += 1
                c = commits.get(current)
                ok = c is not None and any(s0 >= c and s1 <= t0
                                           for (s0, s1) in syncs)
                covered += ok
                if not ok:
                    print("# answer for %s at %.6f: its commit's log write "
                          "ended at %s, no WAL sync started after it and "
                          "ended before the answer" % (current, t0, c))
    return answers, covered, len(syncs)


def concurrent(bindir, servers):
    def run():
        tdir, wrap = strace_wrap(bindir, "shared")
        srv = servers.add(Server(bindir, providers=["stripe"], wrap=wrap,
                                 max_procs=PROCS,
                                 env={"IDEMHOOK_SYNCHRONOUS": "SHARED"},
                                 name="shared-sync"))
        srv.start()
        secret = srv.secrets["stripe"]
        ids = []
        try:
            for k in range(ROUNDS):
                ids += ["evt_sh_%d_%d_%d" % (os.getpid(), k, i)
                        for i in range(PER_ROUND)]

                def one(i, k=k):
                    body = stripe_body(ids[k * PER_ROUND + i])
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
        answers, covered, syncs = check_traces(os.path.join(tdir, "t"), ids)
        print("# %d accepted answers, %d WAL fdatasyncs in %d processes"
              % (answers, syncs, PROCS))
        shutil.rmtree(tdir, ignore_errors=True)
        check_eq(answers, ROUNDS * PER_ROUND, "accepted answers seen in "
                 "the traces")
        check_eq(covered, answers, "answers written after a WAL fdatasync "
                 "that started after their commit")
        check_eq(len(srv.rows("stripe")), ROUNDS * PER_ROUND, "rows")
    return run


def cases(tap, bindir, servers):
    if strace_missing(tap, "shared sync"):
        return
    why = ("strace reads the memory of programs that made themselves "
           "non-dumpable")
    tap.run_as_root("shared sync: %d concurrent deliveries to %d "
                    "processes at SHARED, each accepted answer after a "
                    "WAL fdatasync (any process) begun after its commit"
                    % (ROUNDS * PER_ROUND, PROCS), why,
                    concurrent(bindir, servers))


if __name__ == "__main__":
    sys.exit(suite_main("shared sync", cases))
