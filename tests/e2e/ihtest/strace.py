"""Reading strace output: the durability tests' evidence that an answer
follows a sync of the store's write-ahead log.

  traces(prefix)          each file PREFIX.* as a list of lines (strace -ff)
  wal_fds, accepted_after_sync
                          one process's trace (strace -f): answers, and
                          those preceded by a WAL fdatasync
  thread_traces(prefix)   {tid: [(start, end, call, args, ret)]} from
                          strace -ff -ttt -T
  processes(threads)      the threads grouped into processes
  wal_writes(...)         the WAL's commits per event id and its syncs
  answers_after_commit    per process: each accepted answer, and whether a
                          WAL sync started after its commit and ended
                          before it
  strace_wrap(bindir, name)
                          a fresh folder for the traces, and the wrapper
                          prefix that writes them there
  strace_missing(tap, name)
                          reports the missing strace as a failure
"""

import glob
import os
import re
import shutil


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


LINE = re.compile(r'^(\d+\.\d+) (\w+)\((.*)\) += (-?\d+|\?)(?: .*?)?(?: <(\d+\.\d+)>)?$')


def thread_traces(prefix):
    """{tid: [(start, end, call, args, ret)]} from strace -ff -ttt -T."""
    out = {}
    for path in glob.glob(prefix + ".*"):
        tid = int(path.rsplit(".", 1)[1])
        calls = []
        with open(path, errors="replace") as f:
            for ln in f:
                m = LINE.match(ln.rstrip("\n"))
                if not m:
                    continue
                t = float(m.group(1))
                dur = float(m.group(5) or 0)
                calls.append((t, t + dur, m.group(2), m.group(3), m.group(4)))
        out[tid] = calls
    return out


def processes(threads):
    """Groups the threads into processes: a clone with CLONE_THREAD makes
    the new tid a thread of the caller's process."""
    parent = {}
    for tid, calls in threads.items():
        for (_, _, call, args, ret) in calls:
            if call in ("clone", "clone3") and "CLONE_THREAD" in args and ret.isdigit():
                parent[int(ret)] = tid
    groups = {}
    for tid in threads:
        root = tid
        while root in parent:
            root = parent[root]
        groups.setdefault(root, []).append(tid)
    return groups


def wal_writes(threads, tids, ids, commits, syncs):
    """For one process (threads tids): adds to commits {event id: end of
    the first WAL write holding it} and to syncs [(start, end) of each WAL
    fdatasync or fsync]; returns the process's WAL descriptors."""
    wal = set()
    for tid in tids:
        for (_, _, call, args, ret) in threads[tid]:
            if call == "openat" and '-wal"' in args and ret.isdigit():
                wal.add(ret)
    for tid in tids:
        for (t0, t1, call, args, ret) in threads[tid]:
            fd = args.split(",", 1)[0]
            if fd not in wal:
                continue
            if call in ("fdatasync", "fsync"):
                syncs.append((t0, t1))
            elif call in ("pwrite64", "write"):
                for eid in ids:
                    if eid in args and (eid not in commits or t1 < commits[eid]):
                        commits[eid] = t1
    return wal


def answers_after_commit(threads, tids, ids):
    """For one process: [(event id, ok)] for each accepted answer, ok when
    an fdatasync (or fsync) of the WAL started after the WAL write that
    carried the event's id, and ended before the answer was written."""
    commits = {}
    syncs = []
    wal = wal_writes(threads, tids, ids, commits, syncs)
    out = []
    for tid in tids:
        current = None  # the event whose request this thread read last
        for (t0, t1, call, args, ret) in threads[tid]:
            if call in ("read", "recvfrom") and not args.split(",", 1)[0] in wal:
                for eid in ids:
                    if eid in args:
                        current = eid
            elif call == "write" and '\\"accepted\\"' in args:
                c = commits.get(current)
                ok = c is not None and any(s0 >= c and s1 <= t0 for (s0, s1) in syncs)
                out.append((current, ok))
    return out, len(syncs)


def strace_missing(tap, name):
    """True, with a failure reported as NAME: setup, when strace is not
    installed: the durability proofs need it, so it is never a skip."""
    if shutil.which("strace") is not None:
        return False
    tap.not_ok("%s: setup" % name,
               "strace is not installed (tests/deps.sh installs it)")
    return True


def strace_wrap(bindir, name):
    """(tdir, wrap): the folder strace-NAME-PID beside bindir, made empty,
    and the wrapper prefix that traces each thread apart into tdir/t.*
    (strace -ff -ttt -T: what thread_traces reads)."""
    tdir = os.path.abspath(os.path.join(
        bindir, "..", "strace-%s-%d" % (name, os.getpid())))
    shutil.rmtree(tdir, ignore_errors=True)
    os.makedirs(tdir)
    # lighttpd wants an absolute program path in bin-path.
    wrap = ("%s -ff -ttt -T -s 65536 -e trace=openat,fdatasync,fsync,"
            "write,pwrite64,read,recvfrom,clone,clone3 -o %s/t"
            % (shutil.which("strace"), tdir))
    return tdir, wrap
