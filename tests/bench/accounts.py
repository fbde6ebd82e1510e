#!/usr/bin/env python3
"""make bench-accounts: one provider with 1 account and with 100 accounts
(issue 29, README "Accounts"): accepted events per second and CPU per
accepted event of stripe.fcgi under lighttpd, at one connection count.

Both runs go through account URLs (/hooks/stripe/<account>) with each
account's own secret (IDEMHOOK_STRIPE_SECRET@<account> in the settings
file), the same ~2 KB signed Stripe events and 10% redeliveries as make
bench, spread round-robin over the accounts; every run gets a fresh store
and server.  A small part of make bench, run on its own: it reuses
tests/bench/run.py's launcher, request maker, wrk driver and counters.

Usage: accounts.py --bin DIR --tools DIR [--seconds S] [--conns C]
       [--accounts 1,100] [--out FILE]
"""

import argparse
import os
import random
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


def write_requests(prefix, accounts, secrets, n, seed, nfiles=2):
    """run.write_requests(), each record naming its account's path."""
    rng = random.Random(seed)
    makers = {a: run.Maker("stripe", secrets[a]) for a in accounts}
    recs = []
    for i in range(n):
        if i >= run.DUP_WINDOW and rng.random() < run.DUP_SHARE:
            recs.append(recs[i - rng.randint(1, run.DUP_WINDOW)])
            continue
        a = accounts[i % len(accounts)]
        h, b = makers[a].one()
        recs.append((h, b, "/hooks/stripe/" + a))
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


def one(a, tmp, n_accounts):
    accounts = names(n_accounts)
    secrets = {x: "whsec_" + os.urandom(16).hex() for x in accounts}
    d = tempfile.mkdtemp(prefix="acct-%d-" % n_accounts, dir=tmp)
    db = os.path.join(d, "data", "events.db")
    cfg = os.path.join(d, "accounts.env")
    with open(cfg, "w") as f:
        f.write("IDEMHOOK_DB=%s\n" % db)
        for x in accounts:
            f.write("IDEMHOOK_STRIPE_SECRET@%s=%s\n" % (x, secrets[x]))
    os.chmod(cfg, 0o600)
    reqfile = os.path.join(d, "req")
    write_requests(reqfile, accounts, secrets, 40000, n_accounts)
    srv = run.lighttpd("stripe", a.bin, a.tools, "whsec_" + os.urandom(16).hex(),
                       False, {"IDEMHOOK_CONFIG": cfg}, db)
    subprocess.run([os.path.join(a.tools, "store_ceiling"), "-c", db],
                   check=True, timeout=60)
    try:
        srv.start()
        url = "http://127.0.0.1:%d/hooks/stripe" % srv.port
        run.wait_procs(srv, srv.bench_procs)
        pgid = srv.proc.pid
        progs0 = set(run.server_pids(srv))
        ticks0 = run.group_ticks(pgid)
        t0_ms = time.time() * 1000
        res = run.wrk(url, a.conns, a.seconds, reqfile)
        progs = set(run.server_pids(srv)) | progs0
        ticks = run.group_ticks(pgid)
        fcgi_t = sum(ticks.get(p, 0) - ticks0.get(p, 0) for p in progs if p in ticks)
        srv.stop()
        dur = res["duration_us"] / 1e6
        rows, _, _ = run.db_counts(db, t0_ms, dur * 1000)
        oc = run.outcomes(srv.errorlog())
    finally:
        srv.cleanup()
    return {"accounts": n_accounts, "accepted_s": rows / dur,
            "cpu_us": fcgi_t * 1e6 / run.TICK / rows if rows else None,
            "p99_ms": res["p99_us"] / 1000.0, "errors": res["status_errors"],
            "outcomes": oc}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--tools", required=True)
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--conns", type=int, default=16)
    ap.add_argument("--accounts", default="1,100")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ih-bench-accounts-")
    rows = [one(a, tmp, int(n)) for n in a.accounts.split(",")]
    lines = ["| accounts | accepted/s | CPU per event (stripe.fcgi) | p99 | "
             "non-2xx | outcomes |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %d | %.0f | %s | %.1f ms | %d | %s |" % (
            r["accounts"], r["accepted_s"],
            "%.0f us" % r["cpu_us"] if r["cpu_us"] else "-", r["p99_ms"],
            r["errors"], ", ".join("%s %d" % kv for kv in sorted(r["outcomes"].items()))))
    if len(rows) == 2 and rows[0]["accepted_s"] and rows[0]["cpu_us"]:
        lines.append("")
        lines.append("%d vs %d accounts: throughput %+.1f%%, CPU per event %+.1f%% "
                     "(%d s, %d connections)" % (
                         rows[1]["accounts"], rows[0]["accounts"],
                         100.0 * (rows[1]["accepted_s"] / rows[0]["accepted_s"] - 1),
                         100.0 * (rows[1]["cpu_us"] / rows[0]["cpu_us"] - 1),
                         a.seconds, a.conns))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    harness.shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
