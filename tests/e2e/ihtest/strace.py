"""Reading strace output: the durability tests' evidence that an answer
follows a sync of the store's write-ahead log.

  traces(prefix)          each file PREFIX.* as a list of lines (strace -ff)
  wal_fds, accepted_after_sync
                          one process's trace (strace -f): answers, and
                          those preceded by a WAL fdatasync
  thread_traces(prefix)   {tid: [(start, end, call, args, ret)]} from
                          strace -ff -ttt -T
  processes(threads)      the threads grouped into processes
  wal_spans, on_wal       when a descriptor was the WAL (numbers are reused)
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


def wal_spans(threads, tids):
    """{fd: [(from, until)]}: when each descriptor of one process (threads
    tids) was open on a -wal file, from the end of its openat to the start
    of its close (until None: not closed in the trace).  A descriptor's
    number is reused: before the store opened its log as fd 20, fd 20 may
    have been a FastCGI connection that carried an event, and after a
    close it may be one again; a set of numbers would take those reads
    for the log's (an answer whose event is not found)."""
    opens, closes = [], {}
    for tid in tids:
        for (t0, t1, call, args, ret) in threads[tid]:
            if call == "openat" and '-wal"' in args and ret.isdigit():
                opens.append((t1, ret))
            elif call == "close":
                closes.setdefault(args.strip(), []).append(t0)
    spans = {}
    for (t, fd) in opens:
        ends = [c for c in closes.get(fd, ()) if c >= t]
        spans.setdefault(fd, []).append((t, min(ends) if ends else None))
    return spans


def on_wal(spans, fd, t):
    """Was fd open on a -wal file at time t (spans: wal_spans())?"""
    return any(a <= t and (b is None or t <= b) for (a, b) in spans.get(fd, ()))


def wal_writes(threads, tids, ids, commits, syncs):
    """For one process (threads tids): adds to commits {event id: end of
    the first WAL write holding it} and to syncs [(start, end) of each WAL
    fdatasync or fsync]; returns the process's wal_spans()."""
    spans = wal_spans(threads, tids)
    for tid in tids:
        for (t0, t1, call, args, ret) in threads[tid]:
            fd = args.split(",", 1)[0]
            if fd not in spans or not on_wal(spans, fd, t0):
                continue
            if call in ("fdatasync", "fsync"):
                syncs.append((t0, t1))
            elif call in ("pwrite64", "write"):
                for eid in ids:
                    if eid in args and (eid not in commits or t1 < commits[eid]):
                        commits[eid] = t1
    return spans


READ_DATA = re.compile(r'^\d+, "(.*)"(?:\.\.\.)?, \d+$')


def read_event(ids, tails, fd, args):
    """The event id a read of fd brings (the one that ends last), or None.
    tails keeps, per descriptor, the end of what was read before it, so
    that an id cut in two by the reads (a loaded machine hands the
    request over in pieces) is still found."""
    m = READ_DATA.match(args)
    data = m.group(1) if m else args
    window = tails.get(fd, "") + data
    keep = max((len(e) for e in ids), default=1) - 1
    tails[fd] = window[-keep:] if keep > 0 else ""
    best, at = None, -1
    for eid in ids:
        i = window.rfind(eid)
        if i >= 0 and i + len(eid) > at:
            best, at = eid, i + len(eid)
    return best


def answers_after_commit(threads, tids, ids):
    """For one process: [(event id, ok)] for each accepted answer, ok when
    an fdatasync (or fsync) of the WAL started after the WAL write that
    carried the event's id, and ended before the answer was written.  The
    event id is None for an answer whose request was not found."""
    commits = {}
    syncs = []
    spans = wal_writes(threads, tids, ids, commits, syncs)
    out = []
    for tid in tids:
        current = None  # the event whose request this thread read last
        tails = {}
        for (t0, t1, call, args, ret) in threads[tid]:
            fd = args.split(",", 1)[0]
            if call in ("read", "recvfrom") and not on_wal(spans, fd, t0):
                eid = read_event(ids, tails, fd, args)
                if eid is not None:
                    current = eid
            elif call == "write" and '\\"accepted\\"' in args:
                c = commits.get(current)
                ok = c is not None and any(s0 >= c and s1 <= t0 for (s0, s1) in syncs)
                out.append((current, ok))
                current = None
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
    # close: a descriptor's number is the log's only between its openat
    # and its close (wal_spans()); shutdown: how connections end.
    wrap = ("%s -ff -ttt -T -s 65536 -e trace=openat,close,fdatasync,fsync,"
            "write,pwrite64,read,recvfrom,clone,clone3,shutdown -o %s/t"
            % (shutil.which("strace"), tdir))
    return tdir, wrap
