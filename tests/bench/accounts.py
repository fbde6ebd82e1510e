#!/usr/bin/env python3
"""make bench-accounts: one provider with 1 account and with 100 accounts
(issue 29, README "Accounts"): accepted events per second and CPU per
accepted event of stripe.fcgi under lighttpd, at one connection count,
and instructions per event (callgrind), which no other load blurs.

Both counts send the same requests but for the account: one sequence of
~2 KB signed Stripe events of one shape (their ids and objects random,
as in make bench), the same 10% redeliveries in the same places, through
account URLs of one length (/hooks/stripe/acct-NNN) with each account's
own secret (IDEMHOOK_STRIPE_SECRET@<account> in the settings file),
dealt round-robin over the accounts; every run gets a fresh store and
server.  The timed runs alternate (1, 100, 100, 1, 1, 100, ... with
--rounds), so that a drift of the machine's load favours neither; the
ratios are of the medians, and each round's pair is shown too.  Beside
the receiver's CPU per event: lighttpd's and wrk's CPU per request, and
the bytes the receiver wrote per event (/proc/PID/io).  A small part of
make bench (run.py runs it as its "accounts" section); it reuses
tests/bench/run.py's launcher, request maker, wrk driver and counters.

Usage: accounts.py --bin DIR --tools DIR [--seconds S] [--conns C]
       [--accounts 1,100] [--rounds R] [--cg-events N] [--out FILE]
"""

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import run  # noqa: E402

harness = run.harness


def names(n):
    return ["acct-%03d" % i for i in range(n)]


def records(accounts, secrets, n, seed=1):
    """n requests as (header lines, body, path): one event sequence for
    any number of accounts (one maker, its secret switched per event,
    one seed), so that only the account, its URL and its signature
    differ."""
    rng = random.Random(seed)
    mk = run.Maker("stripe", "")
    recs = []
    for i in range(n):
        if i >= run.DUP_WINDOW and rng.random() < run.DUP_SHARE:
            recs.append(recs[i - rng.randint(1, run.DUP_WINDOW)])
            continue
        a = accounts[i % len(accounts)]
        mk.secret = secrets[a]
        h, b = mk.one()
        recs.append((h, b, "/hooks/stripe/" + a))
    return recs


def write_requests(prefix, recs, nfiles=2):
    """run.write_requests()'s files, each record naming its path."""
    files = [open("%s.%d" % (prefix, k), "wb") for k in range(nfiles)]
    try:
        for i, (h, b, path) in enumerate(recs):
            f = files[i % nfiles]
            f.write(b"%d %d %s\n" % (len(h), len(b), path.encode()))
            f.write(h)
            f.write(b)
    finally:
        for f in files:
            f.close()


def prepare(a, tmp, n_accounts):
    """One account count's settings file (each account's secret; the
    store is the server's own, through IDEMHOOK_DB) and request files,
    made once for all its runs."""
    accounts = names(n_accounts)
    secrets = {x: "whsec_" + os.urandom(16).hex() for x in accounts}
    d = tempfile.mkdtemp(prefix="acct-%d-" % n_accounts, dir=tmp)
    cfg = os.path.join(d, "accounts.env")
    with open(cfg, "w") as f:
        for x in accounts:
            f.write("IDEMHOOK_STRIPE_SECRET@%s=%s\n" % (x, secrets[x]))
    os.chmod(cfg, 0o600)
    s = {"n": n_accounts, "dir": d, "cfg": cfg, "accounts": accounts,
         "secrets": secrets, "reqfile": os.path.join(d, "req"), "made": 0}
    fresh_requests(a, s)
    # A file changed in the last 2 s is read again on every request
    # (config_file.c, CONFIG_RACY_NS): no run starts inside that window.
    time.sleep(max(0.0, os.stat(cfg).st_ctime + 2.1 - time.time()))
    return s


def fresh_requests(a, s):
    """s's request files, made again when their signed timestamps near
    the receivers' 300 s tolerance (run.FILE_MAX_AGE)."""
    if time.time() - s["made"] < run.FILE_MAX_AGE:
        return
    write_requests(s["reqfile"], records(s["accounts"], s["secrets"],
                                         a.requests))
    s["made"] = time.time()


def server(a, s, wrap=""):
    """A fresh store and a lighttpd with stripe.fcgi for prepare()'s s;
    returns (server, folder of the store)."""
    d = tempfile.mkdtemp(prefix="run-", dir=s["dir"])
    db = os.path.join(d, "data", "events.db")
    srv = run.lighttpd("stripe", a.bin, a.tools,
                       "whsec_" + os.urandom(16).hex(), False,
                       {"IDEMHOOK_CONFIG": s["cfg"]}, db)
    srv.wrap = wrap
    subprocess.run([os.path.join(a.tools, "store_ceiling"), "-c", db],
                   check=True, timeout=60)
    return srv, d


def written(pids):
    """Bytes the processes wrote through system calls (wchar of
    /proc/PID/io: the WAL's pages, the answers, the log)."""
    n = 0
    for p in pids:
        try:
            with open("/proc/%d/io" % p) as f:
                for ln in f:
                    if ln.startswith("wchar:"):
                        n += int(ln.split()[1])
        except OSError:
            pass
    return n


def timed(a, s):
    """One wrk run of a.seconds at a.conns connections."""
    fresh_requests(a, s)
    srv, d = server(a, s)
    try:
        srv.start()
        url = "http://127.0.0.1:%d/hooks/stripe" % srv.port
        run.wait_procs(srv, srv.bench_procs)
        pgid = srv.proc.pid
        progs0 = set(run.server_pids(srv))
        ticks0 = run.group_ticks(pgid)
        w0 = written(progs0)
        t0_ms = time.time() * 1000
        res = run.wrk(url, a.conns, a.seconds, s["reqfile"])
        progs = set(run.server_pids(srv)) | progs0
        ticks = run.group_ticks(pgid)
        wr = written(progs) - w0
        fcgi_t = sum(ticks.get(p, 0) - ticks0.get(p, 0)
                     for p in progs if p in ticks)
        web_t = sum(t - ticks0.get(p, 0) for p, t in ticks.items()
                    if p not in progs)
        srv.stop()
        dur = res["duration_us"] / 1e6
        rows, _, _ = run.db_counts(srv.db, t0_ms, dur * 1000)
        oc = run.outcomes(srv.errorlog())
    finally:
        srv.cleanup()
        shutil.rmtree(d, ignore_errors=True)
    return {"accounts": s["n"], "accepted_s": rows / dur,
            "cpu_us": fcgi_t * 1e6 / run.TICK / rows if rows else None,
            "kib": wr / 1024.0 / rows if rows else None,
            "web_us": web_t * 1e6 / run.TICK / res["requests"]
            if res["requests"] else None,
            "wrk_us": res["wrk_cpu_s"] * 1e6 / res["requests"]
            if res["requests"] else None,
            "p99_ms": res["p99_us"] / 1000.0, "errors": res["status_errors"],
            "outcomes": oc}


def send(srv, recs):
    """recs one at a time; a 503 (the program under valgrind still
    starting) is retried for up to a minute."""
    deadline = time.monotonic() + 60
    for h, b, path in recs:
        hd = dict(ln.split(": ", 1) for ln in
                  h.decode().split("\r\n") if ln)
        r = srv.post(path, b, hd)
        while (r is not None and r.status == 503 and
               time.monotonic() < deadline):
            time.sleep(0.5)
            r = srv.post(path, b, hd)
        if r is None or r.status != 200:
            raise SystemExit("%s: %r" % (path, r and (r.status, r.body)))


def cg_total(a, s, n):
    """callgrind's instruction total of stripe.fcgi over the first n
    requests, one at a time (start-up and shutdown included)."""
    cg = tempfile.mkdtemp(prefix="cg-", dir=s["dir"])
    wrap = ("%s --tool=callgrind --dump-instr=no "
            "--callgrind-out-file=%s/cg.%%p" % (shutil.which("valgrind"), cg))
    srv, d = server(a, s, wrap)
    try:
        srv.start()
        send(srv, records(s["accounts"], s["secrets"], n))
    finally:
        srv.stop()
        srv.cleanup()
        shutil.rmtree(d, ignore_errors=True)
    total = 0
    for f in os.listdir(cg):
        with open(os.path.join(cg, f)) as fh:
            for ln in fh:
                if ln.startswith(("totals:", "summary:")):
                    total = max(total, int(ln.split()[1]))
    shutil.rmtree(cg, ignore_errors=True)
    if total == 0:
        raise SystemExit("callgrind wrote no totals")
    return total


def instructions(a, s):
    """Instructions per request: runs of W and W+N requests, the
    difference over N (start-up, shutdown and warm-up cancel out)."""
    warm = max(a.cg_events // 4, 10)
    lo = cg_total(a, s, warm)
    hi = cg_total(a, s, warm + a.cg_events)
    return (hi - lo) / a.cg_events


def compare(a, tmp):
    """The whole comparison: {"counts", "timed": [rows], "ir": {n: x}}.
    The timed runs alternate A B B A ..., so that a drift of the
    machine's load over the minutes favours neither."""
    counts = [int(n) for n in a.accounts.split(",")]
    sets = [prepare(a, tmp, n) for n in counts]
    out = {"counts": counts, "timed": [], "ir": {}}
    if a.cg_events and shutil.which("valgrind"):
        for s in sets:
            out["ir"][s["n"]] = instructions(a, s)
    for r in range(a.rounds):
        for s in (sets if r % 2 == 0 else sets[::-1]):
            out["timed"].append(timed(a, s))
    return out


def med(rows, n, key):
    v = [r[key] for r in rows if r["accounts"] == n and r[key]]
    return statistics.median(v) if v else None


def pct(x, y):
    return "%+.1f%%" % (100.0 * (x / y - 1)) if x and y else "-"


def summary(res):
    """Ratios of the last count to the first, minus 1: "ir" (callgrind),
    "accepted_s" and "cpu_us" (of the medians), and "rounds": the same
    two of each round's pair, run in the same minute."""
    lo, hi = res["counts"][0], res["counts"][-1]
    t = res["timed"]
    out = {"ir": None, "rounds": []}
    if res["ir"]:
        out["ir"] = res["ir"][hi] / res["ir"][lo] - 1
    for k in ("accepted_s", "cpu_us"):
        x, y = med(t, hi, k), med(t, lo, k)
        out[k] = x / y - 1 if x and y else None
    k = len(res["counts"])
    for i in range(0, len(t) - k + 1, k):
        pair = {r["accounts"]: r for r in t[i:i + k]}
        out["rounds"].append(tuple(
            pair[hi][key] / pair[lo][key] - 1
            if pair[hi][key] and pair[lo][key] else None
            for key in ("accepted_s", "cpu_us")))
    return out


def table(a, res):
    """Markdown lines of compare()'s result."""
    def us(v):
        return "%.0f us" % v if v else "-"
    lines = ["| accounts | accepted/s | CPU per event (stripe.fcgi) | "
             "lighttpd, wrk CPU per request | KiB written per event | p99 | "
             "non-2xx | outcomes |", "|---|---|---|---|---|---|---|---|"]
    for r in res["timed"]:
        lines.append("| %d | %.0f | %s | %s, %s | %s | %.1f ms | %d | %s |" % (
            r["accounts"], r["accepted_s"], us(r["cpu_us"]),
            us(r["web_us"]), us(r["wrk_us"]),
            "%.1f" % r["kib"] if r["kib"] else "-", r["p99_ms"],
            r["errors"], ", ".join("%s %d" % kv
                                   for kv in sorted(r["outcomes"].items()))))
    c = res["counts"]
    if len(c) == 2:
        lo, hi = c
        t = res["timed"]
        lines.append("")
        if res["ir"]:
            lines.append("Instructions per request (callgrind, %d requests "
                         "one at a time): %.0f with %d, %.0f with %d "
                         "accounts (%s)." % (
                             a.cg_events, res["ir"][lo], lo, res["ir"][hi],
                             hi, pct(res["ir"][hi], res["ir"][lo])))
        if t:
            lines.append(
                "%d vs %d accounts, medians of %d runs each, alternating "
                "(%d s, %d connections): throughput %s, CPU per event %s." % (
                    hi, lo, a.rounds, a.seconds, a.conns,
                    pct(med(t, hi, "accepted_s"), med(t, lo, "accepted_s")),
                    pct(med(t, hi, "cpu_us"), med(t, lo, "cpu_us"))))
            lines.append("Each round's pair: " + "; ".join(
                "%s, %s" % tuple("%+.1f%%" % (100 * v) if v is not None
                                 else "-" for v in r)
                for r in summary(res)["rounds"]) + ".")
    return lines


def options(**kw):
    """compare()'s options with their defaults (run.py's section)."""
    o = argparse.Namespace(seconds=3, conns=16, accounts="1,100",
                           rounds=3, cg_events=100, requests=40000)
    for k, v in kw.items():
        setattr(o, k, v)
    return o


def main():
    d = options()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--tools", required=True)
    ap.add_argument("--seconds", type=int, default=d.seconds)
    ap.add_argument("--conns", type=int, default=d.conns)
    ap.add_argument("--accounts", default=d.accounts)
    ap.add_argument("--rounds", type=int, default=d.rounds,
                    help="timed runs of each count, alternating")
    ap.add_argument("--cg-events", type=int, default=d.cg_events,
                    help="requests counted by callgrind (0: none)")
    ap.add_argument("--requests", type=int, default=d.requests,
                    help="requests in each count's wrk file")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ih-bench-accounts-")
    try:
        text = "\n".join(table(a, compare(a, tmp))) + "\n"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.stdout.write(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
