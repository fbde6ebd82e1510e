#!/usr/bin/env python3
"""make bench: the receivers against the machine's own ceilings.

Measured in one run, on this machine, so that ratios are comparable:

  storage ceiling  tests/bench/store_ceiling: store_record() in a tight
                   loop, one durable transaction per event (FULL and
                   NORMAL; 1, MAX_PROCS and Apache's process count of
                   processes at once).
  stack ceiling    tests/bench/null.c under the same server (the same
                   max-procs, the same mod_fcgid settings): read the body,
                   answer 200.
  receivers        each provider's program under lighttpd, driven by wrk
                   with tests/bench/post.lua: distinct, correctly signed
                   ~2 KB events built by the provider's Spec from its
                   end-to-end test, with 10% redeliveries, at 1, 16 and 64
                   connections; then stripe under plain CGI (mod_cgi, the
                   same binary), with synchronous=NORMAL, and in worker
                   mode (no processing after the answer).
  reference        tests/bench/reference.c (issue 40), a minimal Stripe
                   receiver of idemhook's own design (request threads
                   verify, one writer inserts each batch with one fsync),
                   under the same lighttpd with the same requests, at 16
                   connections beside stripe at its defaults and in
                   worker mode: the peer the issue's ratios are taken to.
  Apache           a real apache2 with the shipped www-config/apache/
                   vhost.conf (mod_fcgid): the null program and stripe at
                   4 and 16 connections, stripe with the earlier 4
                   processes per program, and with synchronous=SHARED.
  PostgreSQL       on a throwaway cluster on the same disk
                   (tests/pg_cluster.sh, fsync on, a Unix socket): its own
                   storage ceilings (store_record() loop, synchronous_commit
                   on, the same payload, from 1, 2 and 16 processes) and
                   stripe through lighttpd against it at 1, 16 and 64
                   connections (--no-pg leaves them out); and two hosts:
                   two lighttpd instances on the one database, each
                   driven by its own wrk at 16 connections with events of
                   its own, as test_pg_hosts starts them.
  accounts         stripe at 16 connections with 1 account and with
                   100 (tests/bench/accounts.py: each its own URL and
                   secret, the same requests otherwise), 3 s runs in the
                   order 1, 100, 100, 1, and instructions per request
                   from callgrind; --no-accounts leaves them out.
  forwarding       stripe at 16 connections forwarding each event to a
                   local application that answers at once
                   (tests/bench/forward_rate.py): forwarded/s against
                   received/s of the same run; --no-forward leaves it
                   out.
  growth           with --growth N (make bench BENCH_GROWTH=N): stripe at
                   16 connections on a store that already holds N done
                   events (store_ceiling -F: recorded, claimed and
                   completed through the library, random ids, --fill-bytes
                   payloads), on SQLite and on PostgreSQL, against the
                   same run on an empty store.
  memory           a signed 32 MiB event of each provider, recorded and
                   processed (tests/bench/big_rss.py): the peak RSS of
                   each FastCGI program behind lighttpd, of it as plain
                   CGI and of `idemhook work --once`, against the body,
                   on SQLite and on PostgreSQL (--no-memory leaves it
                   out).

The servers are the end-to-end tests' own launchers (harness.Server for
lighttpd, harness.ApacheServer for Apache).  Every run gets a fresh store
and a fresh server.  Accepted events/s is the number of rows first
received during wrk's run divided by its duration.  CPU is utime + stime
from /proc/PID/stat of every process of the server's process group,
before and after the run: the FastCGI programs' share per accepted event
(per request for the null program), the web server's per request.  RSS is
read from /proc/<pid>/status of the FastCGI processes after the run.
Signed timestamps are made just before each provider's runs and stay
inside the default 300 s tolerance (request files older than 200 s are
made again), so IDEMHOOK_TOLERANCE is left at its default.  The results
go to results.md, results.json and chart.svg (tests/bench/chart.py).

Python 3 standard library.
"""

import argparse
import datetime
import importlib
import json
import os
import random
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))
sys.dont_write_bytecode = True
import harness  # noqa: E402
import chart  # noqa: E402
import big_rss  # noqa: E402
import forward_rate  # noqa: E402
import pages  # noqa: E402

LUA = os.path.join(HERE, "post.lua")
PROVIDERS = ("stripe", "github", "shopify", "asaas", "standard")
CONNS = (1, 16, 64)
BODY_BYTES = 2048
DUP_SHARE = 0.10
DUP_WINDOW = 64          # a redelivery repeats one of the last 64 events
MAX_PROCS = 1            # the shipped default, var.idemhook_max_procs
FILE_MAX_AGE = 200       # seconds; the receivers' tolerance is 300
APACHE_CONNS = (4, 16)
SYNC = "SHARED"          # the default IDEMHOOK_SYNCHRONOUS
WARM_S = 3               # Apache: seconds of each warm-up round
WARM_ROUNDS = 3
TICK = os.sysconf("SC_CLK_TCK")

# Targets of issues 17 and 27.
T_THROUGHPUT = 2.5       # accepted/s >= 2.5x the storage ceiling (FULL)
T_STACK = 0.75           # and >= 0.75x the null stack ceiling
T_CPU = 4                # CPU per accepted event <= 4x null's per request
T_P99_MS = 10.0          # at 16 connections
T_RSS_KIB = 4096         # private memory per FastCGI process
T_AFTER_COST = 0.25      # processing after the answer (issue 40)
T_PG = 0.8               # PostgreSQL: >= 0.8x its own 16-writer ceiling
T_PG_P99_MS = 20.0       # at 16 connections
T_PG_HOSTS = 1.6         # two hosts >= 1.6x one (or the ceiling)
T_APACHE = 1.0           # Apache mod_fcgid >= 1x the storage ceiling
T_APACHE_P99_MS = 20.0
T_CGI = 0.5              # plain CGI >= 0.5x the null CGI program
T_GROWTH = 0.8           # a store of N events >= 0.8x an empty one
T_ACCOUNTS = 0.05        # 100 accounts within 5% of 1 (issue 29)
# Targets of issue 40: ratios to the reference (tests/bench/reference.c).
T_REF_WORKER = 0.9       # worker mode >= 0.9x the reference, 16 conn
T_REF_AFTER = 0.6        # the defaults >= 0.6x the reference
T_APACHE_LIGHTTPD = 0.8  # Apache mod_fcgid >= 0.8x lighttpd, same program
T_PG_HOST_CEIL = 0.5     # each of two hosts >= 0.5x the 16-writer ceiling
REFERENCE = "reference"  # the variant of the reference's rows


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------ requests

def spec_of(provider):
    """The provider's Spec from its end-to-end test (tests/e2e/test_<p>.py):
    the same bodies and signed headers the tests send."""
    return importlib.import_module("test_" + provider).SPEC


class Maker:
    """Signed ~BODY_BYTES deliveries of one provider, built by its Spec."""

    def __init__(self, provider, secret, prefix="b"):
        self.provider = provider
        self.secret = secret
        self.prefix = prefix
        self.spec = spec_of(provider) if provider != "null" else None
        self.pad = None
        self.n = 0

    def one(self):
        """(header lines, body) of one new, correctly signed event."""
        if self.spec is None:  # null: any 2 KB POST
            body = b'{"pad":"' + b"x" * (BODY_BYTES - 10) + b'"}'
            return b"Content-Type: application/json\r\n", body
        sp = self.spec
        self.n += 1
        # Random first, as a provider's ids fall: numbered ones would all
        # go to the right edge of the store's unique index, which never
        # misses the page cache however large the store (growth runs).
        eid = sp.new_id("%s%s%08d" % (os.urandom(4).hex(), self.prefix,
                                      self.n))
        etype = sp.default_type
        if self.pad is None:
            self.pad = max(0, BODY_BYTES - len(sp.body(eid, etype)))
        body = sp.body(eid, etype, pad=self.pad)
        h = {"Content-Type": "application/json"}
        h.update(sp.headers(None, body, eid, etype, secret=self.secret))
        return "".join("%s: %s\r\n" % kv for kv in h.items()).encode(), body


def write_requests(prefix, provider, secret, n, seed, nfiles=2, ids="b"):
    """n requests, DUP_SHARE of them redeliveries, dealt in turn into
    prefix.0 .. prefix.<nfiles-1> (one per wrk thread); returns the number
    of distinct events.  ids starts every event id (files of different
    ids never share an event)."""
    rng = random.Random(seed)
    mk = Maker(provider, secret, ids)
    recs = []
    distinct = 0
    for i in range(n):
        if i >= DUP_WINDOW and rng.random() < DUP_SHARE:
            recs.append(recs[i - rng.randint(1, DUP_WINDOW)])
            continue
        recs.append(mk.one())
        distinct += 1
    files = [open("%s.%d" % (prefix, k), "wb") for k in range(nfiles)]
    try:
        for i, (h, b) in enumerate(recs):
            f = files[i % nfiles]
            f.write(b"%d %d\n" % (len(h), len(b)))
            f.write(h)
            f.write(b)
    finally:
        for f in files:
            f.close()
    return distinct


# ------------------------------------------------------------ processes

def group_programs(pgid, program):
    """Pids of the server's process group (pgid) started as program (a
    file name): its FastCGI processes."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            if os.getpgid(int(d)) != pgid:
                continue
        except OSError:
            continue
        if os.path.basename(harness.program_of(int(d))) == program:
            out.append(int(d))
    return out


def proc_status(pid):
    """VmRSS, VmHWM (KiB) and Private/Pss from smaps_rollup (KiB)."""
    r = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "VmHWM"):
                    r[k] = int(v.split()[0])
        with open("/proc/%d/smaps_rollup" % pid) as f:
            priv = 0
            for line in f:
                k, _, v = line.partition(":")
                if k in ("Private_Clean", "Private_Dirty"):
                    priv += int(v.split()[0])
                elif k == "Pss":
                    r["Pss"] = int(v.split()[0])
            r["Private"] = priv
    except (OSError, ValueError):
        pass
    return r


def cpu_ticks(pid):
    """utime + stime of pid (clock ticks), from /proc/PID/stat."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
        fields = st[st.rindex(")") + 2:].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, ValueError, IndexError):
        return 0


def pg_server_ticks():
    """CPU ticks of the PostgreSQL cluster IH_PG_URI names: its
    postmaster and every process it started (backends, WAL writer,
    checkpointer), from postmaster.pid in the socket folder's data/."""
    m = re.search(r"host=([^&]+)", os.environ.get("IH_PG_URI", ""))
    try:
        with open(os.path.join(m.group(1), "data", "postmaster.pid")) as f:
            top = int(f.readline())
    except (AttributeError, OSError, ValueError):
        return 0
    # The postmaster's own, and its children's that ended (cutime,
    # cstime): a backend ends with its connection.
    try:
        with open("/proc/%d/stat" % top) as f:
            st = f.read()
        total = sum(int(x) for x in st[st.rindex(")") + 2:].split()[11:15])
    except (OSError, ValueError):
        return 0
    for d in harness._children_of(top):
        total += cpu_ticks(d)
    return total


def machine_ticks():
    """(busy, all) CPU ticks of the whole machine, every core, from
    /proc/stat: busy is all but idle and iowait."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v[:8]) - idle, sum(v[:8])


class CpuShare:
    """What the PostgreSQL server and the whole machine spent between
    start() and stop(): pg_s (seconds of CPU of the cluster's processes)
    and busy (the machine's busy share of all its cores, 0..1), so that a
    run shows whether the cores were used up."""

    def start(self):
        self.pg0 = pg_server_ticks()
        self.m0 = machine_ticks()
        return self

    def stop(self):
        pg1 = pg_server_ticks()
        m1 = machine_ticks()
        self.pg_s = (pg1 - self.pg0) / TICK
        dall = m1[1] - self.m0[1]
        self.busy = (m1[0] - self.m0[0]) / dall if dall > 0 else None
        return self


# ------------------------------------------------------------ servers
#
# The tests' own launchers (tests/e2e/harness.py): lighttpd from the
# shipped www-config/lighttpd files, Apache from the shipped vhost.conf.
# Only what a benchmark needs differs: keep-alive on (the tests turn it
# off), the null program mounted beside the receivers, and Apache warmed
# up before the clock starts.

def lighttpd(name, tmp_bin, tools, secret, cgi, env, db):
    """A harness.Server with one endpoint at /hooks/<name>: a receiver or
    the null program, as FastCGI (the shipped hooks-<p>.conf) or CGI."""
    q = harness.conf_str
    receiver = name != "null" and not cgi
    srv = harness.Server(tmp_bin, providers=[name] if receiver else [],
                         secrets={name: secret} if receiver else {},
                         env=env, db=db, max_procs=MAX_PROCS,
                         name="bench-" + name, wrap="")
    program = (os.path.join(tools, "null.fcgi") if name == "null"
               else os.path.join(tmp_bin, name + ".fcgi"))
    lines = ["server.max-keep-alive-requests := 1000"]
    if cgi:
        cenv = dict(env)
        cenv["IDEMHOOK_DB"] = db
        svar = harness.SECRET_VAR.get(name)
        if svar:
            cenv[svar.upper()] = secret
        lines += [
            'server.modules += ( "mod_alias", "mod_cgi", "mod_setenv" )',
            'alias.url = ( "/hooks/%s" => %s )' % (name, q(program)),
            '$HTTP["url"] =^ "/hooks/" {',
            '  cgi.assign = ( ".fcgi" => "" )',
            "  setenv.add-environment = %s" % harness.conf_array(cenv),
            "}"]
    elif name == "null":
        lines += [
            'fastcgi.server += ( "/hooks/null" => ((',
            '  "bin-path" => %s,' % q(program),
            '  "socket" => %s,' % q(os.path.join(srv.tmp, "run",
                                                 "null.sock")),
            '  "max-procs" => var.idemhook_max_procs,',
            '  "check-local" => "disable",',
            ")) )"]
    srv.extra_conf = "\n".join(lines)
    srv.bench_program = os.path.basename(program)
    srv.bench_procs = 0 if cgi else MAX_PROCS
    return srv


class Apache(harness.ApacheServer):
    """harness.ApacheServer in "vhost" mode: the shipped vhost.conf with
    its mod_fcgid settings, plus keep-alive, the null program at
    /hooks/null, and extra lines (settings under comparison) after it."""

    def __init__(self, bin, name, extra=(), **kw):
        harness.ApacheServer.__init__(self, bin, mode="vhost",
                                      name="bench-apache-" + name, **kw)
        self.bench_extra = list(extra)
        self.bench_program = name + ".fcgi"
        self.bench_procs = 0

    def write_conf(self, port):
        path = harness.ApacheServer.write_conf(self, port)
        lines = ["KeepAlive On", "MaxKeepAliveRequests 1000",
                 "Alias /hooks/null %s" % harness.apache_quote(
                     os.path.join(self.bin, "null.fcgi"))]
        with open(path, "a") as f:
            f.write("\n".join(lines + self.bench_extra) + "\n")
        return path

    def url(self, provider):
        return "/hooks/" + provider


def server_pids(srv):
    if srv.proc is None:
        return []
    return group_programs(srv.proc.pid, srv.bench_program)


def wait_procs(srv, n, seconds=5):
    deadline = time.monotonic() + seconds
    while n and time.monotonic() < deadline:
        if len(server_pids(srv)) >= n:
            break
        time.sleep(0.05)


# ------------------------------------------------------------ runs

def wrk_start(url, conns, seconds, reqfile):
    threads = 1 if conns == 1 else 2
    cmd = ["wrk", "-t", str(threads), "-c", str(conns), "-d", "%ds" % seconds,
           "--latency", "--timeout", "10s", "-s", LUA, url, "--", reqfile]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)


def wrk_result(p, seconds):
    out, _ = p.communicate(timeout=seconds + 60)
    text = out.decode("utf-8", "replace")
    m = re.search(r"^BENCH (\{.*\})$", text, re.M)
    if p.returncode != 0 or m is None:
        raise RuntimeError("wrk failed (%d): %s" % (p.returncode,
                                                    text[-2000:]))
    return json.loads(m.group(1))


def wrk(url, conns, seconds, reqfile):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    res = wrk_result(wrk_start(url, conns, seconds, reqfile), seconds)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    res["wrk_cpu_s"] = (after.ru_utime + after.ru_stime
                        - before.ru_utime - before.ru_stime)
    return res


def outcomes(text):
    counts = {}
    for m in re.finditer(r"outcome=(\w+)", text):
        counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return counts


def db_counts(db, t0_ms, window_ms, ref=False):
    """Rows first received within window_ms from t0_ms (warm-up rows and
    requests still in flight when wrk stops are not counted), rows done,
    effects.  ref: the reference's store, which has no processing."""
    if not harness.db_exists(db):
        return 0, 0, 0
    if ref:
        with sqlite3.connect(db, timeout=10) as c:
            rows = c.execute("SELECT count(*) FROM events WHERE received_at"
                             " >= ? AND received_at < ?",
                             (int(t0_ms), int(t0_ms + window_ms))
                             ).fetchone()[0]
        return rows, 0, 0
    with harness.db_connect(db, timeout=10, ro=True) as c:
        rows = c.execute("SELECT count(*) FROM events WHERE received_at >= ?"
                         " AND received_at < ?",
                         (int(t0_ms), int(t0_ms + window_ms))).fetchone()[0]
        done = c.execute("SELECT count(*) FROM events WHERE status = 'done'"
                         " AND received_at >= ? AND received_at < ?",
                         (int(t0_ms), int(t0_ms + window_ms))).fetchone()[0]
        eff = c.execute("SELECT count(*) FROM effects").fetchone()[0]
    return rows, done, eff


def group_ticks(pgid):
    """{pid: cpu ticks} of every process in the process group pgid."""
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.getpgid(int(d)) == pgid:
                    out[int(d)] = cpu_ticks(int(d))
            except OSError:
                pass
    return out


def vhost_setting(name):
    """The value of a directive in the shipped vhost.conf, or None."""
    with open(os.path.join(harness.APACHE_CONF_DIR, "vhost.conf")) as f:
        for line in f:
            w = line.split()
            if len(w) == 2 and w[0] == name:
                return w[1]
    return None


class Bench:
    def __init__(self, args):
        self.a = args
        self.tmp = os.path.join(os.path.dirname(os.path.abspath(args.out)),
                                "run")
        self.reqfiles = {}
        self.secrets = {p: harness.default_secret(p) for p in PROVIDERS}
        self.secrets["null"] = ""
        self.rows = []
        self.memory = []    # big_rss.py's rows
        self.ceil = {}
        self.pg_ceil_cpu = {}   # processes: (server µs per event, busy)
        self.runs = 0
        self.seed = 1
        self.abin = None

    def fresh(self, tag):
        d = os.path.join(self.tmp, tag)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, "data"))
        return d

    def store_ceiling(self, sync, procs=1, pg=False):
        """events/s of store_ceiling, or None when it cannot run (e.g. a
        synchronous level this build does not know)."""
        d = self.fresh("ceiling")
        db = (harness.pg_new_db("ih_bench") if pg
              else os.path.join(d, "data", "events.db"))
        cmd = [os.path.join(self.a.tools, "store_ceiling"), "-s", sync,
               "-t", str(self.a.ceiling_seconds), "-P", str(procs), db]
        share = CpuShare().start()
        p = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        share.stop()
        shutil.rmtree(d, ignore_errors=True)
        m = re.search(r"events_per_s=(\d+)", p.stdout.decode())
        if p.returncode != 0 or m is None:
            log("store_ceiling -s %s -P %d: %s" % (
                sync, procs, p.stderr.decode().strip()[-200:]))
            return None
        if pg:
            # Where a commit's CPU goes in the database's own loop.
            m = re.search(r"events=(\d+)", p.stdout.decode())
            n = float(m.group(1)) if m else 0
            self.pg_ceil_cpu[procs] = (share.pg_s * 1e6 / n if n else None,
                                       share.busy)
        return float(m.group(1))

    def requests_for(self, name, key=None, seconds=None):
        """The request file of name, made again when its timestamps near
        the tolerance; key names a separate file (a warm-up's)."""
        key = key or name
        path, made = self.reqfiles.get(key, (None, 0))
        if path is not None and time.time() - made < FILE_MAX_AGE:
            return path
        path = os.path.join(self.tmp, "requests-%s" % key)
        # Enough that no thread wraps at the fastest rate we can expect:
        # the storage ceiling (stripe also runs at NORMAL).  Should one
        # wrap, its requests are duplicates and accepted/s stays right.
        if name == "stripe":
            rate = self.ceil.get("NORMAL", 15000)
        else:
            rate = 2 * self.ceil.get("FULL", 7500)
        rate = min(max(rate, 3000), 15000)
        if name == "null":
            rate = 4000  # wrapping around costs the null program nothing
        n = int(rate * (seconds or self.a.seconds) * 1.2)
        self.seed += 1
        t0 = time.monotonic()
        write_requests(path, name, self.secrets[name], n, self.seed,
                       ids="b%d_" % self.seed)
        log("wrote %d %s requests in %.1f s" % (n, key,
                                                 time.monotonic() - t0))
        self.reqfiles[key] = (path, time.time())
        return path

    def apache_bin(self):
        """One folder with the receivers and the null program, which the
        vhost serves from its IDEMHOOK_LIBEXEC."""
        if self.abin is None:
            self.abin = os.path.join(self.tmp, "apache-bin")
            shutil.rmtree(self.abin, ignore_errors=True)
            os.makedirs(self.abin)
            progs = [os.path.join(self.a.bin, f)
                     for f in os.listdir(self.a.bin) if f.endswith(".fcgi")]
            progs.append(os.path.join(self.a.tools, "null.fcgi"))
            for p in progs:
                harness.link_or_copy(p, os.path.join(
                    self.abin, os.path.basename(p)))
        return self.abin

    def fill(self, db, n):
        """n done events in db through the library (store_ceiling -F)."""
        t0 = time.monotonic()
        log("filling a store with %d events (%d B payloads)" % (
            n, self.a.fill_bytes))
        subprocess.run([os.path.join(self.a.tools, "store_ceiling"), "-F",
                        str(n), "-b", str(self.a.fill_bytes), db],
                       check=True, timeout=7200, stdout=subprocess.DEVNULL)
        log("filled in %.0f s" % (time.monotonic() - t0))

    def ref_bin(self):
        """A folder where the reference is stripe.fcgi, so that the
        shipped hooks-stripe.conf runs it with the same settings."""
        d = os.path.join(self.tmp, "reference-bin")
        if not os.path.isdir(d):
            os.makedirs(d)
            shutil.copy(os.path.join(self.a.tools, "reference.fcgi"),
                        os.path.join(d, "stripe.fcgi"))
        return d

    def make_server(self, name, server, cgi, env, pg, extra, db=None,
                    fill=0, static=False, ref=False):
        if name != "null":
            env = dict(env, **dict(kv.split("=", 1) for kv in self.a.env))
        if server == "Apache":
            srv = Apache(self.apache_bin(), name,
                         extra=list(self.a.apache_conf or []) + list(extra),
                         providers=[name] if name != "null" else [],
                         secrets={name: self.secrets[name]}
                         if name != "null" else {}, env=env)
            return srv
        given = db is not None
        if not given:
            d = self.fresh("srv")
            db = (harness.pg_new_db("ih_bench") if pg
                  else os.path.join(d, "data", "events.db"))
        srv = lighttpd(name, self.ref_bin() if ref else
                       self.a.cgi_bin if static else self.a.bin,
                       self.a.tools, self.secrets[name], cgi, env, db)
        if name != "null" and not given and not ref:
            # The schema exists before the first request, as in production.
            subprocess.run([os.path.join(self.a.tools, "store_ceiling"),
                            "-c", srv.db], check=True, timeout=60)
            if fill:
                self.fill(srv.db, fill)
        return srv

    def run(self, name, conns, server="lighttpd", cgi=False, sync=SYNC,
            mode="after-response", tag=None, pg=False, variant="",
            extra=(), fill=0, static=False, ref=False):
        """static: under CGI, the program from --cgi-bin (make static);
        ref: stripe's requests to the reference (tests/bench/reference.c)
        instead of stripe.fcgi."""
        if static:
            variant = "static"
        env = {}
        if ref:
            variant, sync, mode = REFERENCE, "FULL", "-"
        elif name != "null":
            env = {"IDEMHOOK_SYNCHRONOUS": sync, "IDEMHOOK_MODE": mode}
        srv = self.make_server(name, server, cgi, env, pg, extra, fill=fill,
                               static=static, ref=ref)
        # After a fill, so that the request file's timestamps are fresh.
        reqfile = self.requests_for(name)
        try:
            srv.start()
            url = "http://127.0.0.1:%d/hooks/%s" % (srv.port, name)
            wait_procs(srv, srv.bench_procs)
            pages.settings_aged(srv)
            if server == "Apache":
                self.warm_up(srv, url, name, conns)
            pgid = srv.proc.pid
            progs0 = set(server_pids(srv))
            ticks0 = group_ticks(pgid)
            log0 = len(srv.errorlog()), len(srv.stderr_text())
            t0_ms = time.time() * 1000
            share = CpuShare().start()
            res = wrk(url, conns, self.a.seconds, reqfile)
            share.stop()
            progs = set(server_pids(srv)) | progs0
            ticks = group_ticks(pgid)
            # Under CGI a process caught now is mid-request: no figure.
            mem = ([proc_status(p) for p in server_pids(srv)]
                   if not cgi else [])
            fcgi_t = sum(ticks.get(p, 0) - ticks0.get(p, 0) for p in progs
                         if p in ticks)
            web_t = sum(t - ticks0.get(p, 0) for p, t in ticks.items()
                        if p not in progs)
            nprocs = len(server_pids(srv))
            srv.stop()
            dur = res["duration_us"] / 1e6
            rows, done, eff = ((0, 0, 0) if name == "null" else
                               db_counts(srv.db, t0_ms, dur * 1000, ref))
            oc = outcomes(srv.errorlog()[log0[0]:]
                          + srv.stderr_text()[log0[1]:])
            # A FULL store never makes <db>-sync: if it is there, the
            # receivers did not get the setting (their store opened with
            # store_durable_as() is what passes FULL on).
            if sync == "FULL" and not pg and not ref and os.path.exists(
                    srv.db + "-sync"):
                log("warning: IDEMHOOK_SYNCHRONOUS=FULL did not reach the "
                    "receivers' store: this row is SHARED")
                sync = "FULL (ran as SHARED)"
        finally:
            srv.cleanup()
        reqs = res["requests"]
        cpu_per = (lambda t, n: t * 1e6 / TICK / n if n else None)
        r = {
            "name": name, "server": server, "iface": "CGI" if cgi
            else "FastCGI", "variant": variant,
            "store": "postgresql" if pg else "sqlite",
            "sync": sync if name != "null" else "-",
            "mode": mode if name != "null" else "-",
            "conns": conns, "tag": tag or name,
            "req_s": reqs / dur, "requests": reqs, "seconds": dur,
            "accepted_s": rows / dur if name != "null" else None,
            "rows": rows, "done": done, "effects": eff,
            "p50_ms": res["p50_us"] / 1000.0, "p90_ms": res["p90_us"] / 1000.0,
            "p99_ms": res["p99_us"] / 1000.0, "max_ms": res["max_us"] / 1000.0,
            "errors": (res["status_errors"] + res["connect_errors"]
                       + res["read_errors"] + res["write_errors"]
                       + res["timeouts"]),
            "status_errors": res["status_errors"],
            "wrap_laps": res["wrap_laps"], "outcomes": oc,
            "rss_kib": max((m.get("VmRSS", 0) for m in mem), default=None),
            "hwm_kib": max((m.get("VmHWM", 0) for m in mem), default=None),
            "private_kib": max((m.get("Private", 0) for m in mem),
                               default=None),
            "private_sum_kib": sum(m.get("Private", 0) for m in mem),
            "pss_kib": max((m.get("Pss", 0) for m in mem), default=None),
            "nprocs": nprocs, "fill": fill,
            "fcgi_cpu_us_per_req": cpu_per(fcgi_t, reqs) if not cgi
            else None,
            "fcgi_cpu_us_per_acc": cpu_per(fcgi_t, rows)
            if not cgi and name != "null" else None,
            "web_cpu_us_per_req": cpu_per(web_t, reqs),
            "wrk_cpu_us_per_req": res["wrk_cpu_s"] * 1e6 / max(reqs, 1),
            "pg_cpu_us_per_acc": share.pg_s * 1e6 / rows
            if pg and rows else None,
            "busy": share.busy,
        }
        self.runs += 1
        log("%-8s %-8s %-7s %-6s %-14s %-10s c=%-3d %7.0f req/s %7s acc/s "
            "p50 %6.2f p99 %7.2f ms err %d procs %d cpu/acc %s" % (
                name, server, r["iface"], r["sync"], r["mode"], variant,
                conns, r["req_s"],
                "%.0f" % r["accepted_s"] if r["accepted_s"] is not None
                else "-", r["p50_ms"], r["p99_ms"], r["errors"], nprocs,
                "%.0f" % r["fcgi_cpu_us_per_acc"]
                if r["fcgi_cpu_us_per_acc"] else "-"))
        self.rows.append(r)
        return r

    def warm_up(self, srv, url, name, conns):
        """mod_fcgid starts processes only on demand, one more each time
        a request has waited a second and still finds none idle: load the
        server at twice the run's concurrency until the count stops
        growing (at most WARM_ROUNDS rounds), as a burst would."""
        warm = self.requests_for(name, name + "-warm", WARM_S)
        n = -1
        for _ in range(WARM_ROUNDS):
            wrk(url, 2 * conns, WARM_S, warm)
            m = len(server_pids(srv))
            if m == n:
                break
            n = m
        time.sleep(0.5)

    def main(self):
        a = self.a
        os.makedirs(self.tmp, exist_ok=True)
        # The servers' own folders (harness: tempfile.mkdtemp) go on the
        # disk being measured too.
        tempfile.tempdir = self.tmp
        self.started = datetime.datetime.now().astimezone()
        self.load0 = os.getloadavg()
        t0 = time.monotonic()
        log("storage ceiling (store_ceiling, %d s each)" % a.ceiling_seconds)
        self.ceil["FULL"] = self.store_ceiling("FULL")
        self.ceil["NORMAL"] = self.store_ceiling("NORMAL")
        self.ceil["FULL2"] = self.store_ceiling("FULL", procs=MAX_PROCS)
        log("storage ceiling: FULL %.0f, NORMAL %.0f, FULL with %d writers "
            "%.0f events/s" % (self.ceil["FULL"], self.ceil["NORMAL"],
                               MAX_PROCS, self.ceil["FULL2"]))
        if a.growth_only:
            # Only the growth pairs: an empty store, then a filled one.
            if not a.growth:
                sys.exit("run.py: --growth-only needs --growth N")
            self.run("stripe", 16)
            self.run("stripe", 16, fill=a.growth, variant=grown(a.growth))
            if not a.no_pg:
                self.postgres(growth_only=True)
            self.finish(t0, again=False)
            return
        if a.pg_only:
            # Only the PostgreSQL rows, e.g. for comparing two builds.
            self.postgres()
            self.finish(t0, again=False)
            return
        if a.runs:
            # Only the named runs, e.g. for comparing two builds.
            for spec in a.runs:
                f = (spec.split(":") + [""] * 6)[:6]
                if f[0] == REFERENCE:
                    self.run("stripe", int(f[1] or 16), ref=True)
                    continue
                self.run(f[0], int(f[1] or 16), cgi=f[4] in ("cgi",
                                                             "cgi-static"),
                         static=f[4] == "cgi-static",
                         server="Apache" if f[5] == "apache"
                         else "lighttpd",
                         sync=f[2] or SYNC, mode=f[3] or "after-response")
            self.finish(t0, again=False)
            return
        provs = [p for p in PROVIDERS if not a.only or p in a.only]
        if not a.apache_only:
            for c in CONNS:
                self.run("null", c, tag="stack")
            self.run("null", 16, cgi=True, tag="stack-cgi")
            for p in provs:
                for c in CONNS:
                    self.run(p, c)
            if "stripe" in provs:
                for c in CONNS:
                    self.run("stripe", c, cgi=True)
                # What the shared-hosting recipe installs (make static).
                if a.cgi_bin:
                    self.run("stripe", 16, cgi=True, static=True)
                for c in CONNS:
                    self.run("stripe", c, sync="NORMAL")
                for c in CONNS:
                    self.run("stripe", c, mode="worker")
                # Issue 40's peer, then the two it is compared with once
                # more, next to it in time.
                self.run("stripe", 16, ref=True)
                self.run("stripe", 16, mode="worker", variant="by ref")
                self.run("stripe", 16, variant="by ref")
                self.run("stripe", 16, sync="NORMAL", mode="worker")
                # Each commit fsyncing the log itself, as before SHARED.
                self.run("stripe", 16, sync="FULL")
                if a.growth:
                    self.run("stripe", 16, fill=a.growth,
                             variant=grown(a.growth))
        if not a.no_memory and not a.apache_only:
            log("memory: a signed 32 MiB event per program (SQLite)")
            self.memory += big_rss.measure(a.bin, only=provs)
        if not a.no_apache and "stripe" in provs:
            self.apache()
        if not a.no_pg and "stripe" in provs and not a.apache_only:
            self.postgres()
        if not a.no_forward and "stripe" in provs and not a.apache_only:
            self.forward = forward_rate.measure(self, wrk, log, a.seconds)
        if not a.no_accounts and "stripe" in provs and not a.apache_only:
            self.accounts()
        self.finish(t0, again=True)

    def finish(self, t0, again):
        if again:
            log("storage ceiling again, after the runs")
            self.ceil["FULL_after"] = self.store_ceiling("FULL")
            self.ceil["NORMAL_after"] = self.store_ceiling("NORMAL")
        else:
            self.ceil["FULL_after"] = self.ceil["FULL"]
            self.ceil["NORMAL_after"] = self.ceil["NORMAL"]
        # The ratios use the better of the two measurements.
        self.ceil["FULL_before"] = self.ceil["FULL"]
        self.ceil["NORMAL_before"] = self.ceil["NORMAL"]
        for k in ("FULL", "NORMAL"):
            self.ceil[k] = max(self.ceil[k + "_before"], self.ceil[k + "_after"])
        self.elapsed = time.monotonic() - t0
        self.load1 = os.getloadavg()
        if not self.a.keep:
            shutil.rmtree(self.tmp, ignore_errors=True)
        self.report()
        chart.write(self, os.path.join(os.path.dirname(self.a.out),
                                       "chart.svg"))

    def apache(self):
        """Apache with mod_fcgid, from the shipped vhost.conf: the null
        program (Apache's own stack ceiling) and stripe at APACHE_CONNS,
        at the default SHARED (one fdatasync for the commits of several
        processes) and at FULL (each commit its own), and the process
        settings shipped before, for comparison."""
        self.apache_procs = int(vhost_setting("FcgidMaxProcessesPerClass")
                                or 0)
        self.ceil["FULL_AP"] = self.store_ceiling(
            "FULL", procs=min(self.apache_procs or 4, 16))
        self.ceil["SHARED_AP"] = self.store_ceiling(
            "SHARED", procs=min(self.apache_procs or 4, 16))
        for c in APACHE_CONNS:
            self.run("null", c, server="Apache", tag="stack")
        for c in APACHE_CONNS:
            self.run("stripe", c, server="Apache")
            self.run("stripe", c, server="Apache", sync="FULL")
        # The settings shipped before: 4 processes, mod_fcgid's other
        # defaults, a restart every 10,000 requests.
        self.run("stripe", 16, server="Apache", sync="FULL",
                 variant="4 processes",
                 extra=["FcgidMaxProcessesPerClass 4",
                        "FcgidMinProcessesPerClass 3",
                        "FcgidSpawnScoreUpLimit 10",
                        "FcgidMaxRequestsPerProcess 10000"])

    def postgres(self, growth_only=False):
        """The PostgreSQL rows: its own ceilings (one durable commit per
        event, the same payload, from 1, MAX_PROCS and 16 processes at
        once, the last like pgbench -c 16) and stripe through lighttpd
        against it, on a cluster of its own on this disk (fsync on, a Unix
        socket)."""
        d = os.path.join(self.tmp, "pg")
        shutil.rmtree(d, ignore_errors=True)
        script = os.path.join(harness.REPO, "tests", "pg_cluster.sh")
        p = subprocess.run([script, "start", d], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        if p.returncode != 0:
            log("PostgreSQL rows skipped: %s" % p.stderr.decode()[-300:])
            return
        os.environ["IH_PG_URI"] = p.stdout.decode().strip()
        try:
            if growth_only:
                self.run("stripe", 16, pg=True)
                self.run("stripe", 16, pg=True, fill=self.a.growth,
                         variant=grown(self.a.growth))
                return
            log("PostgreSQL storage ceiling")
            self.ceil["PG"] = self.store_ceiling("FULL", pg=True)
            self.ceil["PG2"] = self.store_ceiling("FULL", procs=MAX_PROCS,
                                                  pg=True)
            self.ceil["PG16"] = self.store_ceiling("FULL", procs=16,
                                                   pg=True)
            log("PostgreSQL ceiling: %.0f events/s, %.0f with %d writers, "
                "%.0f with 16" % (self.ceil["PG"], self.ceil["PG2"],
                                  MAX_PROCS, self.ceil["PG16"] or 0))
            for c in CONNS:
                self.run("stripe", c, pg=True)
            self.two_hosts()
            if not self.a.no_memory:
                log("memory: a signed 32 MiB event per program "
                    "(PostgreSQL)")
                self.memory += big_rss.measure(
                    self.a.bin, pg=os.environ["IH_PG_URI"],
                    only=["stripe"])
            if self.a.growth:
                self.run("stripe", 16, pg=True, fill=self.a.growth,
                         variant=grown(self.a.growth))
        finally:
            subprocess.run([script, "stop", d], timeout=120)

    def two_hosts(self, conns=16):
        """Two lighttpd instances (two hosts, as test_pg_hosts starts
        them) on one PostgreSQL database, each driven at conns by a wrk of
        its own with events of its own, at once: accepted/s of the two
        together against one host's."""
        db = harness.pg_new_db("ih_bench")
        env = {"IDEMHOOK_SYNCHRONOUS": SYNC, "IDEMHOOK_MODE":
               "after-response"}
        srvs = [self.make_server("stripe", "lighttpd", False, env, True, (),
                                 db=db) for _ in range(2)]
        subprocess.run([os.path.join(self.a.tools, "store_ceiling"), "-c",
                        db], check=True, timeout=60)
        files = [self.requests_for("stripe", "stripe-host%d" % i)
                 for i in range(2)]
        try:
            for srv in srvs:
                srv.start()
                wait_procs(srv, srv.bench_procs)
            ticks0 = [group_ticks(srv.proc.pid) for srv in srvs]
            t0_ms = time.time() * 1000
            share = CpuShare().start()
            ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            ps = [wrk_start("http://127.0.0.1:%d/hooks/stripe" % srv.port,
                            conns, self.a.seconds, f)
                  for srv, f in zip(srvs, files)]
            res = [wrk_result(p, self.a.seconds) for p in ps]
            share.stop()
            ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            progs = set(p for srv in srvs for p in server_pids(srv))
            ticks = [group_ticks(srv.proc.pid) for srv in srvs]
            for srv in srvs:
                srv.stop()
            dur = max(r["duration_us"] for r in res) / 1e6
            rows, done, eff = db_counts(db, t0_ms, dur * 1000)
        finally:
            for srv in srvs:
                srv.cleanup()
        cpu = sum(t - t0.get(p, 0) for tk, t0 in zip(ticks, ticks0)
                  for p, t in tk.items() if p not in progs)
        fcgi = sum(t - t0.get(p, 0) for tk, t0 in zip(ticks, ticks0)
                   for p, t in tk.items() if p in progs)
        wrk_s = (ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime)
        reqs = sum(r["requests"] for r in res)
        r = {"name": "stripe", "server": "lighttpd", "iface": "FastCGI",
             "variant": "two hosts", "store": "postgresql", "sync": SYNC,
             "mode": "after-response", "conns": conns, "tag": "stripe",
             "req_s": reqs / dur, "requests": reqs, "seconds": dur,
             "accepted_s": rows / dur, "rows": rows, "done": done,
             "effects": eff,
             "p50_ms": max(x["p50_us"] for x in res) / 1000.0,
             "p90_ms": max(x["p90_us"] for x in res) / 1000.0,
             "p99_ms": max(x["p99_us"] for x in res) / 1000.0,
             "max_ms": max(x["max_us"] for x in res) / 1000.0,
             "errors": sum(x["status_errors"] + x["connect_errors"]
                           + x["read_errors"] + x["write_errors"]
                           + x["timeouts"] for x in res),
             "status_errors": sum(x["status_errors"] for x in res),
             "wrap_laps": max(x["wrap_laps"] for x in res), "outcomes": {},
             "rss_kib": None, "hwm_kib": None, "private_kib": None,
             "private_sum_kib": 0, "pss_kib": None, "nprocs": 2, "fill": 0,
             "fcgi_cpu_us_per_req": fcgi * 1e6 / TICK / max(reqs, 1),
             "fcgi_cpu_us_per_acc": fcgi * 1e6 / TICK / rows
             if rows else None,
             "web_cpu_us_per_req": cpu * 1e6 / TICK / max(reqs, 1),
             "wrk_cpu_us_per_req": wrk_s * 1e6 / max(reqs, 1),
             "pg_cpu_us_per_acc": share.pg_s * 1e6 / rows if rows else None,
             "busy": share.busy}
        self.runs += 1
        log("stripe   2 hosts  PostgreSQL c=%d each: %.0f req/s %.0f acc/s "
            "p99 %.2f ms err %d" % (conns, r["req_s"], r["accepted_s"],
                                    r["p99_ms"], r["errors"]))
        self.rows.append(r)
        return r

    # -------------------------------------------------------- report

    def find(self, **kw):
        kw.setdefault("variant", "")
        for r in self.rows:
            if all(r.get(k) == v for k, v in kw.items()):
                return r
        return None

    def stack(self, conns, server="lighttpd", cgi=False):
        iface = "CGI" if cgi else "FastCGI"
        r = self.find(name="null", conns=conns, server=server, iface=iface)
        if r is None and cgi:
            r = self.find(name="null", server=server, iface=iface)
        return r

    def storage(self, r):
        """The storage ceiling a run is compared with."""
        if r.get("store") == "postgresql":
            return self.ceil.get("PG16" if r["conns"] >= 16 else "PG")
        return self.ceil["NORMAL" if r["sync"] == "NORMAL" else "FULL"]

    def ratios(self, r):
        ceil = self.storage(r)
        st = self.stack(r["conns"], r["server"], r["iface"] == "CGI")
        return (r["accepted_s"] / ceil if r["accepted_s"] is not None
                and ceil else None,
                r["req_s"] / st["req_s"] if st else None)

    def label(self, r):
        s = "lighttpd" if r["server"] == "lighttpd" else "Apache mod_fcgid"
        if r["iface"] == "CGI":
            s = "lighttpd CGI"
        if r["variant"]:
            s += ", " + r["variant"]
        return s

    # -------------------------------------------------------- accounts
    # Issue 29: stripe with 1 account and with 100, through
    # tests/bench/accounts.py (its own make bench-accounts, longer).

    def accounts(self):
        """accounts.compare() in short: 3 s runs, A B B A, and 100
        requests counted by callgrind for each count."""
        sys.modules.setdefault("run", sys.modules[__name__])
        import accounts
        seconds = min(self.a.seconds, 3)
        rate = min(max(self.ceil.get("FULL") or 3000, 3000), 8000)
        self.acct_opts = accounts.options(
            bin=self.a.bin, tools=self.a.tools, seconds=seconds, rounds=2,
            requests=int(rate * seconds * 1.2))
        log("accounts: stripe with 1 and with 100 accounts, %d s runs"
            % seconds)
        d = self.fresh("accounts")
        self.acct = accounts.compare(self.acct_opts, d)
        shutil.rmtree(d, ignore_errors=True)
        self.acct_sum = accounts.summary(self.acct)
        self.acct_lines = accounts.table(self.acct_opts, self.acct)

    def accounts_target(self):
        s = getattr(self, "acct_sum", None)
        if not s or s["accepted_s"] is None or s["cpu_us"] is None:
            return []
        ok = abs(s["accepted_s"]) <= T_ACCOUNTS and \
            abs(s["cpu_us"]) <= T_ACCOUNTS
        return ["| 100 accounts within %.0f%% of 1 account, throughput and "
                "CPU per event (stripe, 16 conn) | %+.1f%% accepted/s, "
                "%+.1f%% CPU per event (medians, %d runs each, "
                "alternating); instructions per request %s | %s |" % (
                    100 * T_ACCOUNTS, 100 * s["accepted_s"],
                    100 * s["cpu_us"], self.acct_opts.rounds,
                    "%+.1f%%" % (100 * s["ir"]) if s["ir"] is not None
                    else "-", "met" if ok else "**missed**")]

    def report(self):
        a = self.a
        L = []
        ver = lambda cmd: subprocess.run(  # noqa: E731
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        ).stdout.decode(errors="replace").splitlines()[0].strip()
        L.append("Run of %s on %s: %d cores, Linux %s; %s; %s; SQLite %s; "
                 "%s. Each wrk run %d s, 10%% redeliveries, ~%d B bodies, "
                 "lighttpd max-procs %d, Apache FcgidMaxProcessesPerClass "
                 "%s; load average %.2f before, %.2f after; %.0f s in all."
                 % (self.started.strftime("%Y-%m-%d %H:%M %Z"),
                    os.uname().nodename, os.cpu_count(), os.uname().release,
                    ver(["lighttpd", "-v"]).split(" - ")[0],
                    ver(["apache2", "-v"]).split(": ")[-1].split(" ")[0],
                    sqlite3.sqlite_version,
                    ver(["wrk", "--version"]).split(" [")[0],
                    a.seconds, BODY_BYTES, MAX_PROCS,
                    vhost_setting("FcgidMaxProcessesPerClass"),
                    self.load0[0], self.load1[0], self.elapsed))
        L.append("")
        # chart.svg lies beside results.md, as beside tests/bench/README.md.
        L.append("![accepted events/s and p99 per connection count]"
                 "(chart.svg)")
        L.append("")
        L.append("| ceiling | figure |")
        L.append("|---|---|")
        L.append("| storage: store_record() loop, FULL (1 process) | "
                 "%.0f events/s (%.0f before the runs, %.0f after) |" % (
                     self.ceil["FULL"], self.ceil["FULL_before"],
                     self.ceil["FULL_after"]))
        L.append("| storage: the same, %d processes at once | %.0f events/s |"
                 % (MAX_PROCS, self.ceil["FULL2"]))
        if self.ceil.get("FULL_AP"):
            L.append("| storage: the same, %d processes at once (Apache's) "
                     "| %.0f events/s |" % (self.apache_procs,
                                            self.ceil["FULL_AP"]))
        if self.ceil.get("SHARED_AP"):
            L.append("| storage: the same at SHARED (one fdatasync for "
                     "several processes' commits), %d processes | "
                     "%.0f events/s |" % (self.apache_procs,
                                          self.ceil["SHARED_AP"]))
        L.append("| storage: store_record() loop, NORMAL | %.0f events/s "
                 "(%.0f before, %.0f after) |" % (
                     self.ceil["NORMAL"], self.ceil["NORMAL_before"],
                     self.ceil["NORMAL_after"]))
        if "PG" in self.ceil:
            L.append("| storage: PostgreSQL, store_record() loop, "
                     "synchronous_commit on (1 process) | %.0f events/s |"
                     % self.ceil["PG"])
            L.append("| storage: the same, %d processes at once | "
                     "%.0f events/s |" % (MAX_PROCS, self.ceil["PG2"]))
            if self.ceil.get("PG16"):
                L.append("| storage: the same, 16 processes at once "
                         "(like pgbench -c 16) | %.0f events/s |"
                         % self.ceil["PG16"])
        for server in ("lighttpd", "Apache"):
            for c in sorted({r["conns"] for r in self.rows}):
                s = self.stack(c, server)
                if s:
                    L.append("| stack: null FastCGI under %s, %d conn | "
                             "%.0f req/s, p50 %.2f ms, p99 %.2f ms, "
                             "%s µs CPU per request |" % (
                                 self.label(s), c, s["req_s"], s["p50_ms"],
                                 s["p99_ms"], fmt(s["fcgi_cpu_us_per_req"])))
        s = self.stack(16, cgi=True)
        if s:
            L.append("| stack: null CGI under lighttpd, 16 conn | %.0f "
                     "req/s, p99 %.2f ms |" % (s["req_s"], s["p99_ms"]))
        L.append("")
        L.append("| provider | server | sync | mode | conn | req/s | "
                 "accepted/s | p50 ms | p99 ms | errors | "
                 "CPU µs / accepted | RSS / peak / private KiB | "
                 "accepted ÷ storage | req/s ÷ stack |")
        L.append("|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
        for r in self.rows:
            if r["name"] == "null":
                continue
            ra, rs = self.ratios(r)
            L.append("| %s | %s | %s | %s | %d | %.0f | %.0f | %.2f | %.2f | "
                     "%d | %s | %s | %s | %s |" % (
                         r["name"] + (" (PostgreSQL)" if r.get("store") ==
                                      "postgresql" else ""),
                         self.label(r), r["sync"], r["mode"],
                         r["conns"], r["req_s"], r["accepted_s"], r["p50_ms"],
                         r["p99_ms"], r["errors"],
                         fmt(r["fcgi_cpu_us_per_acc"]),
                         "%d / %d / %d" % (r["rss_kib"], r["hwm_kib"],
                                           r["private_kib"] or 0)
                         if r["rss_kib"] else "-",
                         "%.2f" % ra if ra is not None else "-",
                         "%.2f" % rs if rs is not None else "-"))
        L.append("")
        L += self.targets()
        L += self.accounts_target()
        L.append("")
        if getattr(self, "acct_lines", None):
            L.append("Accounts (stripe with 1 and with 100 accounts, "
                     "tests/bench/accounts.py):")
            L.append("")
            L += self.acct_lines + [""]
        L += forward_rate.lines(getattr(self, "forward", None))
        L += self.apache_memory()
        if self.memory:
            L.append("")
            L.append("A signed event of %d KiB, recorded and processed "
                     "(tests/bench/big_rss.py): peak RSS per program."
                     % (self.memory[0]["body"] // 1024))
            L.append("")
            L += big_rss.table(self.memory)
        L.append("")
        L.append("CPU per request (µs, from /proc and getrusage):")
        L.append("")
        L.append("| provider | server | sync | mode | conn | FastCGI procs "
                 "per request | per accepted event | web server | wrk | "
                 "rows done | outcomes |")
        L.append("|---|---|---|---|--:|--:|--:|--:|--:|--:|---|")
        for r in self.rows:
            L.append("| %s | %s | %s | %s | %d | %s | %s | %.0f | %.0f | %s "
                     "| %s |" % (
                         r["name"] + (" (PostgreSQL)" if r.get("store") ==
                                      "postgresql" else ""),
                         self.label(r), r["sync"], r["mode"],
                         r["conns"], fmt(r["fcgi_cpu_us_per_req"]),
                         fmt(r["fcgi_cpu_us_per_acc"]),
                         r["web_cpu_us_per_req"], r["wrk_cpu_us_per_req"],
                         "%d of %d" % (r["done"], r["rows"])
                         if r["name"] != "null" else "-",
                         " ".join("%s=%d" % kv for kv in
                                  sorted(r["outcomes"].items())) or "-"))
        L += self.pg_cpu_lines()
        text = "\n".join(L) + "\n"
        with open(a.out, "w") as f:
            f.write(text)
        with open(os.path.splitext(a.out)[0] + ".json", "w") as f:
            json.dump({"ceilings": self.ceil, "runs": self.rows,
                       "accounts": getattr(self, "acct", None),
                       "forward": getattr(self, "forward", None),
                       "date": self.started.isoformat()}, f, indent=1)
        print(text)
        log("results in %s" % a.out)

    def pg_cpu_lines(self):
        """Where the CPU of the PostgreSQL runs went, per accepted event
        (per commit in the ceiling's loop), and how busy the machine's
        cores were meanwhile: near 100% the cores are the limit, well
        below it the waits (the log's flush, round trips) are."""
        rows = [r for r in self.rows if r.get("store") == "postgresql"
                and r.get("busy") is not None]
        if not rows and not self.pg_ceil_cpu:
            return []
        L = ["", "PostgreSQL: CPU per accepted event (µs; the server's "
             "processes from /proc, the machine's busy share of all its "
             "cores during the run, other users' work included):", "",
             "| run | receivers | web server + wrk | PostgreSQL server | "
             "machine busy |", "|---|--:|--:|--:|--:|"]
        for procs, (us, busy) in sorted(self.pg_ceil_cpu.items()):
            L.append("| ceiling: store_record() loop, %d process%s | - | - "
                     "| %s | %s |" % (procs, "" if procs == 1 else "es",
                                      fmt(us), "%.0f%%" % (busy * 100)
                                      if busy is not None else "-"))
        for r in rows:
            acc = r["rows"] / r["requests"] if r["requests"] else 1
            web = r["web_cpu_us_per_req"] + r["wrk_cpu_us_per_req"]
            L.append("| stripe, %s, %d conn | %s | %.0f | %s | %.0f%% |" % (
                self.label(r), r["conns"], fmt(r["fcgi_cpu_us_per_acc"]),
                web / acc if acc else web, fmt(r["pg_cpu_us_per_acc"]),
                r["busy"] * 100))
        return L

    def apache_memory(self):
        """What the shipped process count costs: processes × memory."""
        rs = [r for r in self.rows if r["server"] == "Apache"
              and r["name"] == "stripe" and not r["variant"]
              and r["rss_kib"]]
        if not rs:
            return []
        r = max(rs, key=lambda x: (x["conns"], x["nprocs"]))
        return ["Apache mod_fcgid memory (stripe, %d conn, %s): %d "
                "processes, each at most %d KiB RSS (%d KiB private); "
                "%d KiB private in all, the rest shared pages of the "
                "libraries." % (r["conns"], r["sync"], r["nprocs"],
                                r["rss_kib"],
                                r["private_kib"] or 0,
                                r["private_sum_kib"])]

    def by_ref(self, mode):
        """stripe at 16 connections in mode, from the runs made next to
        the reference when there are some."""
        kw = dict(name="stripe", server="lighttpd", iface="FastCGI",
                  sync=SYNC, mode=mode, conns=16, store="sqlite")
        return self.find(variant="by ref", **kw) or self.find(**kw)

    def reference_targets(self, verdict):
        """Issue 40's ratios: stripe.fcgi against the reference (the same
        design, minimal), Apache against lighttpd, two PostgreSQL hosts
        against one and against the database's 16-writer ceiling."""
        L = []
        ref = self.find(name="stripe", variant=REFERENCE, conns=16)
        worker, after = self.by_ref("worker"), self.by_ref("after-response")
        if ref and ref["accepted_s"]:
            for r, what, want in ((worker, "worker mode", T_REF_WORKER),
                                  (after, "the defaults (processing after "
                                   "the answer)", T_REF_AFTER)):
                if r is None:
                    continue
                q = r["accepted_s"] / ref["accepted_s"]
                L.append("| %s ≥ %.1f× the reference (stripe, %s, 16 conn; "
                         "issue 40) | %.0f vs %.0f accepted/s = %.2f×; p99 "
                         "%.2f vs %.2f ms; CPU %s vs %s µs per accepted "
                         "event | %s |" % (
                             what, want, SYNC, r["accepted_s"],
                             ref["accepted_s"], q, r["p99_ms"],
                             ref["p99_ms"], fmt(r["fcgi_cpu_us_per_acc"]),
                             fmt(ref["fcgi_cpu_us_per_acc"]),
                             verdict(q >= want)))
        if worker and after and worker["accepted_s"] and (
                worker.get("variant") == "by ref" or ref):
            cost = 1 - after["accepted_s"] / worker["accepted_s"]
            L.append("| processing cost 1 − defaults ÷ worker ≤ %.0f%% (the "
                     "runs beside the reference) | %.0f vs %.0f accepted/s: "
                     "%.0f%% (events done by the run's end: %d of %d) | "
                     "%s |" % (T_AFTER_COST * 100, after["accepted_s"],
                               worker["accepted_s"], cost * 100,
                               after["done"], after["rows"],
                               verdict(cost <= T_AFTER_COST)))
        ap = self.find(name="stripe", server="Apache", sync=SYNC, conns=16)
        lt = self.find(name="stripe", server="lighttpd", iface="FastCGI",
                       sync=SYNC, mode="after-response", conns=16,
                       store="sqlite")
        if ap and lt and lt["accepted_s"]:
            q = ap["accepted_s"] / lt["accepted_s"]
            L.append("| Apache mod_fcgid ≥ %.1f× lighttpd, p99 ≤ %.0f ms "
                     "(stripe, %s, 16 conn; issue 40) | %.0f vs %.0f "
                     "accepted/s = %.2f×; p99 %.2f ms | %s |" % (
                         T_APACHE_LIGHTTPD, T_APACHE_P99_MS, SYNC,
                         ap["accepted_s"], lt["accepted_s"], q,
                         ap["p99_ms"], verdict(
                             q >= T_APACHE_LIGHTTPD
                             and ap["p99_ms"] <= T_APACHE_P99_MS)))
        one = self.find(name="stripe", store="postgresql", conns=16)
        two = self.find(name="stripe", store="postgresql", conns=16,
                        variant="two hosts")
        if one and two and one["accepted_s"] and self.ceil.get("PG16"):
            each = two["accepted_s"] / 2 / self.ceil["PG16"]
            L.append("| PostgreSQL: each of two hosts ≥ %.1f× the "
                     "database's 16-writer ceiling (issue 40) | %.0f "
                     "accepted/s each of %.0f = %.2f×; two ÷ one %.2f× "
                     "(target %.1f×) | %s |" % (
                         T_PG_HOST_CEIL, two["accepted_s"] / 2,
                         self.ceil["PG16"], each,
                         two["accepted_s"] / one["accepted_s"], T_PG_HOSTS,
                         verdict(each >= T_PG_HOST_CEIL and
                                 two["accepted_s"] >= T_PG_HOSTS *
                                 one["accepted_s"])))
        return L

    def targets(self):
        L = ["| target | measured | |", "|---|---|---|"]

        def verdict(ok):
            return "met" if ok else "**missed**"
        r = self.find(name="stripe", server="lighttpd", iface="FastCGI",
                      sync=SYNC, mode="after-response", conns=16,
                      store="sqlite")
        if r:
            ra = r["accepted_s"] / self.ceil["FULL"]
            L.append("| accepted durable events/s ≥ %.1f× the storage "
                     "ceiling (stripe, %s, 16 conn) | %.0f of %.0f = "
                     "%.2f× | %s |" % (T_THROUGHPUT, SYNC, r["accepted_s"],
                                       self.ceil["FULL"], ra,
                                       verdict(ra >= T_THROUGHPUT)))
            st = self.stack(16)
            if st:
                rs = r["accepted_s"] / st["req_s"]
                L.append("| the same ≥ %.2f× the null stack ceiling | "
                         "%.0f of %.0f = %.2f× | %s |" % (
                             T_STACK, r["accepted_s"], st["req_s"], rs,
                             verdict(rs >= T_STACK)))
                cr, cn = r["fcgi_cpu_us_per_acc"], st["fcgi_cpu_us_per_req"]
                if cr and cn:
                    L.append("| receivers' CPU per accepted event ≤ %d× the "
                             "null program's per request (16 conn) | %.0f "
                             "µs vs %.0f µs = %.1f× | %s |" % (
                                 T_CPU, cr, cn, cr / cn,
                                 verdict(cr / cn <= T_CPU)))
            worst = max((x for x in self.rows if x["name"] != "null"
                         and x["server"] == "lighttpd" and x["conns"] == 16
                         and x["iface"] == "FastCGI"
                         and x["variant"] != REFERENCE),
                        key=lambda x: x["p99_ms"])
            L.append("| p99 ≤ 10 ms at 16 connections (stripe, %s) | "
                     "%.2f ms (worst lighttpd FastCGI run at 16: %s %s %s, "
                     "%.2f ms) | %s |" % (SYNC, r["p99_ms"], worst["name"],
                                          worst["sync"], worst["mode"],
                                          worst["p99_ms"],
                                          verdict(r["p99_ms"] <= T_P99_MS)))
        fc = [x for x in self.rows if x["name"] != "null"
              and x["iface"] == "FastCGI" and x["hwm_kib"]]
        if fc:
            m = max(fc, key=lambda x: x["hwm_kib"])
            mp = max(fc, key=lambda x: x["private_kib"] or 0)
            L.append("| private RSS ≤ 4 MiB per FastCGI process | at most "
                     "%d KiB private (%s, %s, %d conn); peak VmHWM %d KiB, "
                     "the rest shared libraries' pages | %s |" % (
                         mp["private_kib"] or 0, mp["name"], self.label(mp),
                         mp["conns"], m["hwm_kib"],
                         verdict((mp["private_kib"] or 0) <= T_RSS_KIB)))
        for sync in (SYNC, "NORMAL"):
            after = self.find(name="stripe", server="lighttpd",
                              iface="FastCGI", sync=sync,
                              mode="after-response", conns=16, store="sqlite")
            worker = self.find(name="stripe", server="lighttpd",
                               iface="FastCGI", sync=sync, mode="worker",
                               conns=16, store="sqlite")
            if after and worker:
                cost = 1 - after["accepted_s"] / worker["accepted_s"]
                L.append("| processing after the answer costs ≤ %.0f%% "
                         "(stripe, %s, 16 conn) | %.0f accepted/s vs %.0f in "
                         "worker mode: %.0f%% | %s |" % (
                             T_AFTER_COST * 100, sync, after["accepted_s"],
                             worker["accepted_s"], cost * 100,
                             verdict(cost <= T_AFTER_COST)))
        L += self.reference_targets(verdict)
        for c, sync in ((c, s) for c in APACHE_CONNS
                        for s in (SYNC, "FULL")):
            r = self.find(name="stripe", server="Apache", sync=sync,
                          conns=c)
            st = self.stack(c, "Apache")
            cpu = ""
            if r and st and r["fcgi_cpu_us_per_acc"] and \
                    st["fcgi_cpu_us_per_req"]:
                cpu = "; CPU %.0f µs per accepted event, %.1f× null's" % (
                    r["fcgi_cpu_us_per_acc"],
                    r["fcgi_cpu_us_per_acc"] / st["fcgi_cpu_us_per_req"])
            if r:
                ra = r["accepted_s"] / self.ceil["FULL"]
                L.append("| Apache mod_fcgid (stripe, %s, %d conn) ≥ "
                         "%.0f× the storage ceiling at p99 ≤ %.0f ms | "
                         "%.0f accepted/s = %.2f× storage, %s× Apache's "
                         "null stack; p99 %.2f ms%s | %s |" % (
                             sync, c, T_APACHE, T_APACHE_P99_MS,
                             r["accepted_s"], ra,
                             "%.2f" % (r["accepted_s"] / st["req_s"])
                             if st else "-", r["p99_ms"], cpu,
                             verdict(ra >= T_APACHE and
                                     r["p99_ms"] <= T_APACHE_P99_MS)))
        st = self.stack(16, cgi=True)
        for v, what in (("", ""), ("static", ", make static")):
            r = self.find(name="stripe", server="lighttpd", iface="CGI",
                          conns=16, variant=v)
            if not r or not st:
                continue
            rc = r["accepted_s"] / st["req_s"]
            L.append("| plain CGI ≥ %.1f× the null CGI program (stripe, "
                     "lighttpd mod_cgi, 16 conn%s) | %.0f accepted/s vs "
                     "%.0f req/s = %.2f×; p99 %.2f ms | %s |" % (
                         T_CGI, what, r["accepted_s"], st["req_s"], rc,
                         r["p99_ms"], verdict(rc >= T_CGI)))
        r = self.find(name="stripe", store="postgresql", conns=16)
        if r and self.ceil.get("PG16") and self.ceil.get("PG"):
            rp = r["accepted_s"] / self.ceil["PG16"]
            L.append("| PostgreSQL (stripe, 16 conn) ≥ %.1f× its own "
                     "16-writer ceiling at p99 ≤ %.0f ms | %.0f accepted/s "
                     "= %.2f× the 16-writer ceiling (%.0f), %.2f× the "
                     "1-writer one (%.0f); p99 %.2f ms | %s |" % (
                         T_PG, T_PG_P99_MS, r["accepted_s"], rp,
                         self.ceil["PG16"],
                         r["accepted_s"] / self.ceil["PG"], self.ceil["PG"],
                         r["p99_ms"], verdict(rp >= T_PG and
                                              r["p99_ms"] <= T_PG_P99_MS)))
            two = self.find(name="stripe", store="postgresql", conns=16,
                            variant="two hosts")
            if two:
                want = min(T_PG_HOSTS * r["accepted_s"], self.ceil["PG16"])
                L.append("| PostgreSQL, two hosts ≥ %.1f× one host or the "
                         "16-writer ceiling, the lower (16 conn each) | "
                         "%.0f accepted/s = %.2f× one host's %.0f "
                         "(wanted %.0f); p99 %.2f ms | %s |" % (
                             T_PG_HOSTS, two["accepted_s"],
                             two["accepted_s"] / r["accepted_s"]
                             if r["accepted_s"] else 0, r["accepted_s"],
                             want, two["p99_ms"],
                             verdict(two["accepted_s"] >= want)))
        for store in ("sqlite", "postgresql"):
            empty = self.find(name="stripe", server="lighttpd",
                              iface="FastCGI", sync=SYNC,
                              mode="after-response", conns=16, store=store)
            full = [x for x in self.rows if x.get("fill") and
                    x["store"] == store]
            if empty and full and empty["accepted_s"]:
                g = full[0]["accepted_s"] / empty["accepted_s"]
                L.append("| growth: a %s store of %s events ≥ %.1f× an "
                         "empty one (stripe, 16 conn) | %.0f vs %.0f "
                         "accepted/s = %.2f×; p99 %.2f vs %.2f ms | %s |"
                         % ("SQLite" if store == "sqlite" else
                            "PostgreSQL", format(full[0]["fill"], ","),
                            T_GROWTH, full[0]["accepted_s"],
                            empty["accepted_s"], g, full[0]["p99_ms"],
                            empty["p99_ms"], verdict(g >= T_GROWTH)))
        for store in ("SQLite", "PostgreSQL"):
            ms = [m for m in self.memory if m["backend"] == store]
            if ms:
                w = max(ms, key=lambda m: m["ratio"])
                L.append("| memory: a signed 32 MiB event recorded and "
                         "processed, peak RSS ≤ %.1f× the body (%s, every "
                         "program) | worst %s: %d KiB for %d KiB = %.2f× "
                         "(growth over a small event's peak %.2f×) | %s |"
                         % (big_rss.T_MEMORY, store, w["program"],
                            w["peak"], w["body"] // 1024, w["ratio"],
                            w["grew"], verdict(w["ratio"] <=
                                               big_rss.T_MEMORY)))
        return L


def grown(n):
    return "store of %s events" % format(n, ",")


def fmt(v):
    return "%.0f" % v if v is not None else "-"


def main():
    global MAX_PROCS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, help="directory of *.fcgi")
    ap.add_argument("--cgi-bin", default=None, metavar="DIR",
                    help="directory of a stripe.fcgi built by make static: "
                    "stripe under plain CGI once more with it, as the "
                    "shared-hosting recipe installs it (make bench passes "
                    "$(BUILD)/bench/static); --runs: stripe:16:::cgi-static")
    ap.add_argument("--tools", required=True,
                    help="directory of store_ceiling and null.fcgi")
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--ceiling-seconds", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--runs", nargs="*", default=None,
                    help="only these runs: "
                    "provider:conns[:sync[:mode[:cgi|cgi-static[:apache]]]]"
                    " or reference:conns (tests/bench/reference.c)")
    ap.add_argument("--max-procs", type=int, default=MAX_PROCS,
                    help="FastCGI processes per endpoint (default %d, the "
                    "shipped value)" % MAX_PROCS)
    ap.add_argument("--no-pg", action="store_true",
                    help="no PostgreSQL rows (they need tests/pg_cluster.sh)")
    ap.add_argument("--pg-only", action="store_true",
                    help="only the ceilings and the PostgreSQL rows")
    ap.add_argument("--env", action="append", default=[], metavar="K=V",
                    help="a setting for every receiver run, e.g. "
                    "IDEMHOOK_PG_WRITERS=1 (repeatable)")
    ap.add_argument("--no-memory", action="store_true",
                    help="no 32 MiB event's peak RSS (tests/bench/"
                    "big_rss.py)")
    ap.add_argument("--no-apache", action="store_true",
                    help="no Apache rows (they need apache2, mod_fcgid)")
    ap.add_argument("--no-forward", action="store_true",
                    help="leave out the forwarding rate (forward_rate.py)")
    ap.add_argument("--no-accounts", action="store_true",
                    help="no 1-vs-100-accounts rows (tests/bench/"
                    "accounts.py; about 2 minutes)")
    ap.add_argument("--apache-only", action="store_true",
                    help="only the ceilings and the Apache rows")
    ap.add_argument("--apache-conf", action="append", metavar="LINE",
                    help="a line appended to every Apache run's httpd.conf "
                    "after the shipped vhost.conf, e.g. "
                    "'FcgidMaxProcessesPerClass 8' (repeatable)")
    ap.add_argument("--growth", type=int, default=0, metavar="N",
                    help="also run stripe at 16 connections on stores "
                    "(SQLite, PostgreSQL) already holding N events, "
                    "filled through the library (e.g. 1000000)")
    ap.add_argument("--growth-only", action="store_true",
                    help="with --growth N: only stripe at 16 connections "
                    "on an empty and on a filled store, each backend")
    ap.add_argument("--fill-bytes", type=int, default=512,
                    help="payload bytes of each filled event (default "
                    "512: a million take about 1 GB)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the run folder (request files, stores)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    MAX_PROCS = a.max_procs
    a.bin = os.path.abspath(a.bin)
    a.tools = os.path.abspath(a.tools)
    if a.cgi_bin:
        a.cgi_bin = os.path.abspath(a.cgi_bin)
    a.out = os.path.abspath(a.out)
    need = ["wrk", "lighttpd"] + ([] if a.no_apache else ["apache2"])
    for prog in need:
        if shutil.which(prog) is None:
            sys.exit("bench: %s is not installed (make deps)" % prog)
    b = Bench(a)
    try:
        b.main()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
