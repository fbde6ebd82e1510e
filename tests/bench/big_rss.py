#!/usr/bin/env python3
"""Peak RSS of a signed 32 MiB event, recorded and processed (issue 27's
memory target: at most 1.5x the body), per program, on SQLite and on
PostgreSQL.  make bench runs it (run.py's memory rows); alone:

  python3 tests/bench/big_rss.py --bin BUILD [--pg URI] [--only P,...]

For each provider, one signed event of BIG bytes, built and signed by its
end-to-end Spec (the bodies the tests send, a long string of padding):

  fcgi    the provider's FastCGI program behind lighttpd (one process,
          after-response: it records the event, answers, then processes
          it from the request's own buffer): the process's VmHWM after
          the event, against its VmHWM after a small warm-up event
  cgi     the same program as plain CGI in worker mode (it records only;
          it exits after the answer), with GNU time's view of the peak:
          wait4()'s ru_maxrss of the child
  work    `idemhook work --once` then processing that event alone
          (claim, payload read back, switch, done), ru_maxrss likewise

Each figure is absolute (the program's own ~4-12 MiB of libraries and
heap included) and is divided by the body: the target is peak / body <=
1.5.  "grew" is the peak less the same program's peak for a ~2 KB event.
Python 3 standard library; lighttpd, as the end-to-end tests use it.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
sys.dont_write_bytecode = True
import harness  # noqa: E402
from ihtest.procs import _children_of, program_of  # noqa: E402

BIG = 32 * 1024 * 1024 - 4096  # within lighttpd's shipped 32 MiB limit
PROVIDERS = ("stripe", "github", "shopify", "asaas", "standard")
T_MEMORY = 1.5           # peak RSS <= 1.5x the body


def spec_of(provider):
    import importlib
    return importlib.import_module("test_" + provider).SPEC


def event(provider, secret, tag, size):
    """(headers, body) of one signed event of about size bytes: the
    Spec's body with a top-level "pad" of plain letters (a string with
    escapes is decoded into a copy by the parser: README, JSON)."""
    sp = spec_of(provider)
    eid = sp.new_id("rss%s%d" % (tag, os.getpid()))
    obj = json.loads(sp.body(eid, sp.default_type))
    n = len(json.dumps(obj, separators=(",", ":")))
    obj["pad"] = "x" * max(0, size - n - 10)
    body = json.dumps(obj, separators=(",", ":")).encode()
    h = {"Content-Type": "application/json"}
    h.update(sp.headers(None, body, eid, sp.default_type, secret=secret))
    return h, body


def rusage_run(argv, env, stdin=None):
    """Runs argv under GNU time; (exit status, peak RSS KiB, stdout).  Not
    wait4() from here: a child's ru_maxrss starts from its parent's RSS
    at the fork (this script's, holding the bodies); GNU time is small."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as inp, \
            tempfile.NamedTemporaryFile("r") as tf:
        if stdin is not None:
            inp.write(stdin)
            inp.seek(0)
        st = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", tf.name]
                            + argv, env=env, stdin=inp, stdout=out,
                            stderr=subprocess.DEVNULL,
                            timeout=300).returncode
        out.seek(0)
        return st, int(tf.read().split()[-1]), out.read()


def base_env(db, extra=None):
    env = {"PATH": "/usr/bin:/bin", "IDEMHOOK_CONFIG": "/dev/null",
           "IDEMHOOK_DB": db, "IDEMHOOK_MAX_BODY": str(BIG + (1 << 20))}
    env.update(extra or {})
    return env


def cgi_record(bindir, provider, secret, db, h, body):
    env = base_env(db, {
        harness.secret_env(provider): secret, "IDEMHOOK_MODE": "worker",
        "REQUEST_METHOD": "POST", "CONTENT_LENGTH": str(len(body)),
        "SCRIPT_NAME": "/hooks/" + provider, "REMOTE_ADDR": "127.0.0.1"})
    for k, v in h.items():
        name = k.upper().replace("-", "_")
        env[name if name == "CONTENT_TYPE" else "HTTP_" + name] = v
    st, kib, out = rusage_run([os.path.join(bindir, provider + ".fcgi")],
                              env, body)
    if st != 0 or b"accepted" not in out:
        raise RuntimeError("%s CGI: status %d, %r" % (provider, st,
                                                       out[:300]))
    return kib


def work_once(bindir, db):
    st, kib, out = rusage_run([os.path.join(bindir, "idemhook"), "work",
                               "--once"], base_env(db))
    if st != 0 or b"processed 1 " not in out:
        raise RuntimeError("idemhook work: status %d, %r" % (st, out[:300]))
    return kib


def vm_hwm(pid):
    with open("/proc/%d/status" % pid) as f:
        for ln in f:
            if ln.startswith("VmHWM:"):
                return int(ln.split()[1])
    raise RuntimeError("no VmHWM for %d" % pid)


def fcgi_pid(srv, provider):
    for c in _children_of(srv.proc.pid):
        if program_of(c).endswith("/%s.fcgi" % provider):
            return c
    raise RuntimeError("no %s.fcgi process" % provider)


def post(srv, provider, h, body):
    r = srv.post("/hooks/" + provider, body, h, timeout=120)
    if r is None or r.status != 200:
        raise RuntimeError("%s: %r" % (provider, r and (r.status,
                                                         r.body[:200])))


def done(db, want, timeout=60):
    """Waits until want events are done (processing after the answer)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with harness.db_connect(db, timeout=5, ro=True) as c:
            n = c.execute("SELECT count(*) FROM events WHERE status ="
                          " 'done'").fetchone()[0]
        if n >= want:
            return
        time.sleep(0.1)
    raise RuntimeError("the event was not processed")


def fcgi_rows(bindir, provs, pg, size):
    """The FastCGI programs behind lighttpd, one process each."""
    db = harness.pg_new_db("ih_rss") if pg else None
    srv = harness.Server(bindir, providers=list(provs), max_procs=1,
                         name="rss", db=db,
                         env={"IDEMHOOK_MAX_BODY": str(size + (1 << 20))})
    rows = []
    try:
        srv.start()
        n = 0
        for p in provs:
            post(srv, p, *event(p, srv.secrets[p], "fw", 2048))
            n += 1
            done(srv.db, n)
            pid = fcgi_pid(srv, p)
            base = vm_hwm(pid)
            h, body = event(p, srv.secrets[p], "fb", size)
            post(srv, p, h, body)
            n += 1
            done(srv.db, n)
            rows.append({"program": "%s.fcgi (FastCGI)" % p,
                         "peak": vm_hwm(pid), "base": base,
                         "body": len(body)})
    finally:
        srv.stop()
        srv.cleanup()
    return rows


def cgi_rows(bindir, provs, pg, size, tmp):
    """Each program as plain CGI (worker mode), then idemhook work."""
    rows = []
    for p in provs:
        secret = harness.default_secret(p)
        db = (harness.pg_new_db("ih_rss") if pg
              else os.path.join(tmp, "%s.db" % p))
        small = cgi_record(bindir, p, secret, db,
                           *event(p, secret, "cw", 2048))
        wsmall = work_once(bindir, db)
        h, body = event(p, secret, "cb", size)
        big = cgi_record(bindir, p, secret, db, h, body)
        wbig = work_once(bindir, db)
        rows.append({"program": "%s.fcgi (CGI, records)" % p, "peak": big,
                     "base": small, "body": len(body)})
        rows.append({"program": "idemhook work (%s)" % p, "peak": wbig,
                     "base": wsmall, "body": len(body)})
    return rows


def measure(bindir, pg=None, only=None, size=BIG):
    """The rows of one backend: SQLite, or PostgreSQL when pg is a server
    URI (IH_PG_URI)."""
    provs = [p for p in PROVIDERS if not only or p in only]
    bindir = os.path.abspath(bindir)
    if pg:
        os.environ["IH_PG_URI"] = pg
    tmp = tempfile.mkdtemp(prefix="ih-rss-")
    try:
        rows = fcgi_rows(bindir, provs, pg, size)
        rows += cgi_rows(bindir, provs, pg, size, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for r in rows:
        r["backend"] = "PostgreSQL" if pg else "SQLite"
        r["ratio"] = r["peak"] * 1024 / r["body"]
        r["grew"] = (r["peak"] - r["base"]) * 1024 / r["body"]
    return rows


def table(rows):
    """Markdown lines of rows."""
    out = ["| store | program | body KiB | peak RSS KiB | peak ÷ body "
           "| small event's peak KiB | growth ÷ body |",
           "|---|---|--:|--:|--:|--:|--:|"]
    for r in rows:
        out.append("| %s | %s | %d | %d | %.2f | %d | %.2f |" % (
            r["backend"], r["program"], r["body"] // 1024, r["peak"],
            r["ratio"], r["base"], r["grew"]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--pg", metavar="URI", help="also on this PostgreSQL"
                    " server (tests/pg_cluster.sh start DIR prints one)")
    ap.add_argument("--only", help="providers, comma-separated")
    ap.add_argument("--size", type=int, default=BIG)
    a = ap.parse_args()
    bindir = os.path.abspath(a.bin)
    only = a.only.split(",") if a.only else None
    rows = measure(bindir, None, only, a.size)
    if a.pg:
        rows += measure(bindir, a.pg, only, a.size)
    print("\n".join(table(rows)))
    worst = max(rows, key=lambda r: r["ratio"])
    print("worst: %s on %s, %.2fx the body (target %.1fx)" % (
        worst["program"], worst["backend"], worst["ratio"], T_MEMORY))


if __name__ == "__main__":
    main()
