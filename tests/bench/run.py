#!/usr/bin/env python3
"""make bench: the receivers against the machine's own ceilings.

Measured in one run, on this machine, so that ratios are comparable:

  storage ceiling  tests/bench/store_ceiling: store_record() in a tight loop, one
                   durable transaction per event (FULL and NORMAL).
  stack ceiling    tests/bench/null.c under the same lighttpd (same max-procs):
                   read the body, answer 200.
  receivers        each provider's program under lighttpd, driven by wrk
                   with tests/bench/post.lua: distinct, correctly signed ~2 KB
                   events with 10% redeliveries, at 1, 16 and 64
                   connections; then stripe under plain CGI (mod_cgi, the
                   same binary), with synchronous=NORMAL, and in worker
                   mode (no processing after the answer).
  PostgreSQL       on a throwaway cluster on the same disk
                   (tests/pg_cluster.sh, fsync on, a Unix socket): its own
                   storage ceiling (store_record() loop, synchronous_commit
                   on, the same payload) and stripe through lighttpd
                   against it at 1, 16 and 64 connections, with the same
                   ratios (--no-pg leaves them out).

Every run gets a fresh store and a fresh lighttpd.  Accepted events/s is
the number of rows in the store after the run divided by wrk's duration.
RSS is read from /proc/<pid>/status of the FastCGI processes after the
run.  Signed timestamps are made just before each provider's runs and stay
inside the default 300 s tolerance (request files older than 200 s are
made again), so IDEMHOOK_TOLERANCE is left at its default.

Python 3 standard library; signers from tests/e2e/harness.py.
"""

import argparse
import datetime
import json
import os
import random
import re
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))
sys.dont_write_bytecode = True
import harness  # noqa: E402

CONF_DIR = os.path.join(REPO, "www-config", "lighttpd")
LUA = os.path.join(HERE, "post.lua")
PROVIDERS = ("stripe", "github", "shopify", "asaas", "standard")
CONNS = (1, 16, 64)
BODY_BYTES = 2048
DUP_SHARE = 0.10
DUP_WINDOW = 64          # a redelivery repeats one of the last 64 events
MAX_PROCS = 2            # the shipped default, var.idemhook_max_procs
FILE_MAX_AGE = 200       # seconds; the receivers' tolerance is 300
TICK = os.sysconf("SC_CLK_TCK")

# Targets of issue 6.
T_THROUGHPUT = 0.80      # accepted/s >= 80% of the storage ceiling
T_P99_MS = 10.0          # at 16 connections
T_RSS_KIB = 4096         # per FastCGI process
T_AFTER_COST = 0.10      # processing after the answer


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------ requests

UA = {"stripe": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
      "github": "GitHub-Hookshot/044aadd",
      "shopify": "Shopify-Captain-Hook",
      "asaas": "Java/1.8.0_292",
      "standard": "Svix-Webhooks/1.24.0"}


def padded(obj, setpad):
    """JSON of obj, padded through setpad() to exactly BODY_BYTES."""
    setpad("")
    base = len(json.dumps(obj, separators=(",", ":")).encode())
    setpad("x" * max(0, BODY_BYTES - base))
    return json.dumps(obj, separators=(",", ":")).encode()


def delivery(provider, secret, now, rng):
    """(header lines, body) of one new, correctly signed event."""
    h = ["Content-Type: application/json", "User-Agent: " + UA.get(provider, "wrk")]
    if provider == "stripe":
        eid = "evt_" + rng.randbytes(12).hex()
        obj = {"id": eid, "object": "event", "api_version": "2024-06-20",
               "created": now, "type": "payment_intent.succeeded",
               "livemode": False, "pending_webhooks": 1,
               "request": {"id": None, "idempotency_key": None},
               "data": {"object": {"id": "pi_" + rng.randbytes(8).hex(),
                                   "object": "payment_intent", "amount": 2000,
                                   "currency": "usd", "metadata": {}}}}
        body = padded(obj, lambda p: obj["data"]["object"].__setitem__(
            "description", p))
        h.append("Stripe-Signature: " + harness.sign_stripe(secret, body, now))
    elif provider == "github":
        obj = {"ref": "refs/heads/main", "before": "0" * 40,
               "after": rng.randbytes(20).hex(),
               "repository": {"id": 1296269, "full_name": "octocat/Hello-World",
                              "private": False},
               "pusher": {"name": "octocat", "email": "octocat@github.com"},
               "sender": {"login": "octocat", "id": 1}, "head_commit": {}}
        body = padded(obj, lambda p: obj["head_commit"].__setitem__(
            "message", p))
        h += ["X-GitHub-Event: push",
              "X-GitHub-Delivery: " + str(uuid.UUID(bytes=rng.randbytes(16))),
              "X-GitHub-Hook-ID: 1",
              "X-GitHub-Hook-Installation-Target-Type: repository",
              "X-GitHub-Hook-Installation-Target-ID: 1296269",
              "X-Hub-Signature-256: " + harness.sign_github(secret, body)]
    elif provider == "shopify":
        obj = {"id": rng.getrandbits(62), "email": "jon@example.com",
               "name": "#9999", "currency": "USD", "total_price": "403.00",
               "line_items": [{"id": 866550311766439020,
                               "title": "IPod Nano - 8GB", "quantity": 1,
                               "price": "199.00"}]}
        body = padded(obj, lambda p: obj.__setitem__("note", p))
        h += ["X-Shopify-Topic: orders/create",
              "X-Shopify-Webhook-Id: " + str(uuid.UUID(bytes=rng.randbytes(16))),
              "X-Shopify-Event-Id: " + str(uuid.UUID(bytes=rng.randbytes(16))),
              "X-Shopify-Shop-Domain: bench.myshopify.com",
              "X-Shopify-API-Version: 2025-07",
              "X-Shopify-Triggered-At: 2025-09-11T10:00:00.123456789Z",
              "X-Shopify-Hmac-Sha256: " + harness.sign_shopify(secret, body)]
    elif provider == "asaas":
        obj = {"id": "evt_%s&%d" % (rng.randbytes(16).hex(),
                                    rng.getrandbits(31)),
               "event": "PAYMENT_RECEIVED", "dateCreated": "2024-06-12 16:45:03",
               "payment": {"object": "payment",
                           "id": "pay_" + rng.randbytes(6).hex(),
                           "customer": "cus_000005401844", "value": 100.0,
                           "netValue": 94.51, "billingType": "PIX",
                           "status": "RECEIVED", "externalReference": "056984"}}
        body = padded(obj, lambda p: obj["payment"].__setitem__(
            "description", p))
        h.append(harness.ASAAS_TOKEN_HEADER + ": " + secret)
    elif provider == "standard":
        mid = "msg_" + rng.randbytes(12).hex()
        obj = {"type": "invoice.paid", "timestamp": "2025-09-11T10:00:00Z",
               "data": {"id": "inv_" + rng.randbytes(8).hex()}}
        body = padded(obj, lambda p: obj["data"].__setitem__("note", p))
        h += ["webhook-id: " + mid, "webhook-timestamp: %d" % now,
              "webhook-signature: " + harness.sign_standard(secret, mid, now,
                                                            body)]
    else:  # null: any 2 KB POST
        body = b'{"pad":"' + b"x" * (BODY_BYTES - 10) + b'"}'
    return "".join(x + "\r\n" for x in h).encode(), body


def write_requests(prefix, provider, secret, n, seed, nfiles=2):
    """n requests, DUP_SHARE of them redeliveries, dealt in turn into
    prefix.0 .. prefix.<nfiles-1> (one per wrk thread); returns the number
    of distinct events."""
    rng = random.Random(seed)
    now = int(time.time())
    recs = []
    distinct = 0
    for i in range(n):
        if i >= DUP_WINDOW and rng.random() < DUP_SHARE:
            recs.append(recs[i - rng.randint(1, DUP_WINDOW)])
            continue
        recs.append(delivery(provider, secret, now, rng))
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


# ------------------------------------------------------------ lighttpd

def children(pid):
    return harness._children_of(pid)


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
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
        fields = st[st.rindex(")") + 2:].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, ValueError, IndexError):
        return 0


def q(s):
    return harness.conf_str(s)


class Lighttpd:
    """One lighttpd with one endpoint at /hooks/<name>: a receiver or the
    null program, as FastCGI (the shipped hooks-<p>.conf) or plain CGI."""

    def __init__(self, tmp, bin_dir, tools, name, secret, cgi, env, db=None):
        self.tmp = tmp
        self.bin = bin_dir
        self.tools = tools
        self.name = name
        self.secret = secret
        self.cgi = cgi
        self.env = env
        self.db = db or os.path.join(tmp, "data", "events.db")
        self.proc = None
        self.port = None
        self.program = (os.path.join(tools, "null.fcgi") if name == "null"
                        else os.path.join(bin_dir, name + ".fcgi"))

    def conf(self, port):
        for d in ("www", "run", "upload", "data"):
            os.makedirs(os.path.join(self.tmp, d), exist_ok=True)
        lines = [
            "# generated by tests/bench/run.py",
            "server.document-root = %s" % q(os.path.join(self.tmp, "www")),
            'server.bind = "127.0.0.1"',
            "server.port = %d" % port,
            "server.errorlog = %s" % q(os.path.join(self.tmp, "error.log")),
            "server.upload-dirs = (%s)" % q(os.path.join(self.tmp, "upload")),
            "include %s" % q(os.path.join(CONF_DIR, "idemhook.conf")),
            "var.idemhook_bin := %s" % q(self.bin),
            "var.idemhook_run := %s" % q(os.path.join(self.tmp, "run")),
            "var.idemhook_db := %s" % q(self.db),
            "var.idemhook_max_procs := %d" % MAX_PROCS,
            "var.idemhook_env := %s" % harness.conf_array(self.env),
        ]
        svar = harness.SECRET_VAR.get(self.name)
        if self.cgi:
            env = dict(self.env)
            env["IDEMHOOK_DB"] = self.db
            if svar:
                env[svar.upper()] = self.secret
            lines += [
                'server.modules += ( "mod_alias", "mod_cgi", "mod_setenv" )',
                'alias.url = ( "/hooks/%s" => %s )' % (self.name,
                                                       q(self.program)),
                '$HTTP["url"] =^ "/hooks/" {',
                '  cgi.assign = ( ".fcgi" => "" )',
                "  setenv.add-environment = %s" % harness.conf_array(env),
                "}",
            ]
        elif self.name == "null":
            lines += [
                "fastcgi.server += ( \"/hooks/null\" => ((",
                "  \"bin-path\" => %s," % q(self.program),
                "  \"socket\" => %s," % q(os.path.join(self.tmp, "run",
                                                       "null.sock")),
                "  \"max-procs\" => var.idemhook_max_procs,",
                "  \"check-local\" => \"disable\",",
                ")) )",
            ]
        else:
            lines += ["var.%s := %s" % (svar, q(self.secret)),
                      "include %s" % q(os.path.join(
                          CONF_DIR, "hooks-%s.conf" % self.name))]
        path = os.path.join(self.tmp, "lighttpd.conf")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def start(self):
        harness.become_subreaper()
        for _ in range(3):
            port = harness.free_port()
            conf = self.conf(port)
            out = open(os.path.join(self.tmp, "lighttpd.out"), "ab")
            try:
                self.proc = subprocess.Popen(
                    ["lighttpd", "-D", "-f", conf], stdin=subprocess.DEVNULL,
                    stdout=out, stderr=subprocess.STDOUT,
                    env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                    start_new_session=True, cwd=self.tmp)
            finally:
                out.close()
            self.port = port
            if harness.wait_port(port, self.proc, time.monotonic() + 10):
                break
            self.stop()
        else:
            raise RuntimeError("lighttpd did not start: see %s" % self.tmp)
        # The FastCGI processes are spawned at start; wait for them.
        deadline = time.monotonic() + 5
        while not self.cgi and time.monotonic() < deadline:
            if len(self.fcgi_pids()) >= MAX_PROCS:
                break
            time.sleep(0.05)
        return self

    def fcgi_pids(self):
        if self.proc is None:
            return []
        want = os.path.basename(self.program)[:15]
        out = []
        for pid in children(self.proc.pid):
            try:
                with open("/proc/%d/comm" % pid) as f:
                    if f.read().strip() == want:
                        out.append(pid)
            except OSError:
                pass
        return out

    def url(self):
        return "http://127.0.0.1:%d/hooks/%s" % (self.port, self.name)

    def stop(self):
        p = self.proc
        if p is None:
            return
        kids = children(p.pid)
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait(timeout=5)
        deadline = time.monotonic() + 3
        for pid in kids:
            while time.monotonic() < deadline:
                try:
                    if os.waitpid(pid, os.WNOHANG)[0] == pid:
                        break
                except ChildProcessError:
                    break
                time.sleep(0.02)
            else:
                try:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                except (ProcessLookupError, ChildProcessError):
                    pass
        self.proc = None


# ------------------------------------------------------------ runs

def wrk(url, conns, seconds, reqfile):
    threads = 1 if conns == 1 else 2
    cmd = ["wrk", "-t", str(threads), "-c", str(conns), "-d", "%ds" % seconds,
           "--latency", "--timeout", "10s", "-s", LUA, url, "--", reqfile]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=seconds + 60)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    text = r.stdout.decode("utf-8", "replace")
    m = re.search(r"^BENCH (\{.*\})$", text, re.M)
    if r.returncode != 0 or m is None:
        raise RuntimeError("wrk failed (%d): %s" % (r.returncode, text[-2000:]))
    res = json.loads(m.group(1))
    res["wrk_cpu_s"] = (after.ru_utime + after.ru_stime
                        - before.ru_utime - before.ru_stime)
    return res


def outcomes(errorlog):
    counts = {}
    try:
        with open(errorlog, "rb") as f:
            for m in re.finditer(rb"outcome=(\w+)", f.read()):
                k = m.group(1).decode()
                counts[k] = counts.get(k, 0) + 1
    except OSError:
        pass
    return counts


def db_counts(db, window_ms):
    """Rows recorded within window_ms of the first one (requests still in
    flight when wrk stops are not counted), rows done, effects."""
    if not harness.db_exists(db):
        return 0, 0, 0
    with harness.db_connect(db, timeout=10, ro=True) as c:
        rows = c.execute("SELECT count(*) FROM events WHERE received_at <"
                         " (SELECT min(received_at) FROM events) + ?",
                         (int(window_ms),)).fetchone()[0]
        done = c.execute("SELECT count(*) FROM events WHERE status = 'done'"
                         ).fetchone()[0]
        eff = c.execute("SELECT count(*) FROM effects").fetchone()[0]
    return rows, done, eff


class Bench:
    def __init__(self, args):
        self.a = args
        self.tmp = os.path.join(os.path.dirname(os.path.abspath(args.out)),
                                "run")
        self.reqfiles = {}
        self.secrets = {p: harness.default_secret(p) for p in PROVIDERS}
        self.secrets["null"] = ""
        self.rows = []
        self.ceil = {}
        self.runs = 0
        self.seed = 1

    def fresh(self, tag):
        d = os.path.join(self.tmp, tag)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, "data"))
        return d

    def store_ceiling(self, sync, procs=1, pg=False):
        d = self.fresh("ceiling")
        db = (harness.pg_new_db("ih_bench") if pg
              else os.path.join(d, "data", "events.db"))
        cmd = [os.path.join(self.a.tools, "store_ceiling"), "-s", sync,
               "-t", str(self.a.ceiling_seconds), "-P", str(procs), db]
        out = subprocess.run(cmd, stdout=subprocess.PIPE, check=True,
                             timeout=120).stdout.decode()
        m = re.search(r"events_per_s=(\d+)", out)
        shutil.rmtree(d, ignore_errors=True)
        return float(m.group(1))

    def requests_for(self, name):
        """The request file of name, made again when its timestamps near
        the tolerance."""
        path, made = self.reqfiles.get(name, (None, 0))
        if path is not None and time.time() - made < FILE_MAX_AGE:
            return path
        path = os.path.join(self.tmp, "requests-%s" % name)
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
        n = int(rate * self.a.seconds * 1.2)
        self.seed += 1
        t0 = time.monotonic()
        write_requests(path, name, self.secrets[name], n, self.seed)
        log("wrote %d %s requests in %.1f s" % (n, name,
                                                 time.monotonic() - t0))
        self.reqfiles[name] = (path, time.time())
        return path

    def run(self, name, conns, cgi=False, sync="FULL", mode="after-response",
            tag=None, pg=False):
        reqfile = self.requests_for(name)
        d = self.fresh("srv")
        env = {}
        if name != "null":
            env = {"IDEMHOOK_SYNCHRONOUS": sync, "IDEMHOOK_MODE": mode}
        srv = Lighttpd(d, self.a.bin, self.a.tools, name, self.secrets[name],
                       cgi, env, db=harness.pg_new_db("ih_bench") if pg else None)
        if name != "null":
            # The schema exists before the first request, as in production.
            subprocess.run([os.path.join(self.a.tools, "store_ceiling"),
                            "-c", srv.db], check=True, timeout=60)
        srv.start()
        try:
            pids = srv.fcgi_pids()
            ticks0 = {p: cpu_ticks(p) for p in pids + [srv.proc.pid]}
            res = wrk(srv.url(), conns, self.a.seconds, reqfile)
            pids = srv.fcgi_pids()
            # Under CGI a process caught now is mid-request: no figure.
            mem = [proc_status(p) for p in pids] if not cgi else []
            ticks = sum(cpu_ticks(p) - ticks0.get(p, 0) for p in pids)
            lt = cpu_ticks(srv.proc.pid) - ticks0.get(srv.proc.pid, 0)
        finally:
            srv.stop()
        dur = res["duration_us"] / 1e6
        rows, done, eff = db_counts(srv.db, dur * 1000)
        oc = outcomes(os.path.join(d, "error.log"))
        for k, v in outcomes(os.path.join(d, "lighttpd.out")).items():
            oc[k] = oc.get(k, 0) + v
        reqs = res["requests"]
        r = {
            "name": name, "server": "CGI" if cgi else "FastCGI",
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
            "pss_kib": max((m.get("Pss", 0) for m in mem), default=None),
            "nprocs": len(mem),
            "fcgi_cpu_us_per_req": ticks * 1e6 / TICK / max(reqs, 1)
            if not cgi else None,
            "lighttpd_cpu_us_per_req": lt * 1e6 / TICK / max(reqs, 1),
            "wrk_cpu_us_per_req": res["wrk_cpu_s"] * 1e6 / max(reqs, 1),
        }
        self.runs += 1
        log("%-8s %-7s %-6s %-14s c=%-3d %7.0f req/s %7s acc/s p50 %6.2f "
            "p99 %7.2f ms err %d rss %s" % (
                name, r["server"], r["sync"], r["mode"], conns, r["req_s"],
                "%.0f" % r["accepted_s"] if r["accepted_s"] is not None
                else "-", r["p50_ms"], r["p99_ms"], r["errors"],
                r["rss_kib"]) + " laps %d" % r["wrap_laps"])
        self.rows.append(r)
        shutil.rmtree(d, ignore_errors=True)
        return r

    def main(self):
        a = self.a
        os.makedirs(self.tmp, exist_ok=True)
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
        if a.runs:
            # Only the named runs, e.g. for comparing two builds.
            for spec in a.runs:
                f = (spec.split(":") + ["", "", "", ""])[:5]
                self.run(f[0], int(f[1] or 16), cgi=f[4] == "cgi",
                         sync=f[2] or "FULL", mode=f[3] or "after-response")
            self.elapsed = time.monotonic() - t0
            self.load1 = os.getloadavg()
            for k in ("FULL", "NORMAL"):
                self.ceil[k + "_before"] = self.ceil[k + "_after"] = \
                    self.ceil[k]
            self.report()
            return
        for c in CONNS:
            self.run("null", c, tag="stack")
        self.run("null", 16, cgi=True, tag="stack-cgi")
        provs = [p for p in PROVIDERS if not a.only or p in a.only]
        for p in provs:
            for c in CONNS:
                self.run(p, c)
        if "stripe" in provs:
            for c in CONNS:
                self.run("stripe", c, cgi=True)
            for c in CONNS:
                self.run("stripe", c, sync="NORMAL")
            for c in CONNS:
                self.run("stripe", c, mode="worker")
            self.run("stripe", 16, sync="NORMAL", mode="worker")
        if not a.no_pg and "stripe" in provs:
            self.postgres()
        log("storage ceiling again, after the runs")
        self.ceil["FULL_after"] = self.store_ceiling("FULL")
        self.ceil["NORMAL_after"] = self.store_ceiling("NORMAL")
        # The ratios use the better of the two measurements.
        self.ceil["FULL_before"] = self.ceil["FULL"]
        self.ceil["NORMAL_before"] = self.ceil["NORMAL"]
        for k in ("FULL", "NORMAL"):
            self.ceil[k] = max(self.ceil[k + "_before"], self.ceil[k + "_after"])
        self.elapsed = time.monotonic() - t0
        self.load1 = os.getloadavg()
        shutil.rmtree(self.tmp, ignore_errors=True)
        self.report()

    def postgres(self):
        """The PostgreSQL rows: its own ceiling (one durable commit per
        event, the same payload) and stripe through lighttpd against it,
        on a cluster of its own on this disk (fsync on, a Unix socket)."""
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
            log("PostgreSQL storage ceiling")
            self.ceil["PG"] = self.store_ceiling("FULL", pg=True)
            self.ceil["PG2"] = self.store_ceiling("FULL", procs=MAX_PROCS,
                                                  pg=True)
            log("PostgreSQL ceiling: %.0f events/s, %.0f with %d writers"
                % (self.ceil["PG"], self.ceil["PG2"], MAX_PROCS))
            for c in CONNS:
                self.run("stripe", c, pg=True)
        finally:
            subprocess.run([script, "stop", d], timeout=120)

    # -------------------------------------------------------- report

    def find(self, **kw):
        for r in self.rows:
            if all(r.get(k) == v for k, v in kw.items()):
                return r
        return None

    def stack(self, conns, cgi=False):
        r = self.find(name="null", conns=conns,
                      server="CGI" if cgi else "FastCGI")
        if r is None and cgi:
            r = self.find(name="null", server="CGI")
        return r

    def ratios(self, r):
        ceil = self.ceil["NORMAL" if r["sync"] == "NORMAL" else "FULL"]
        if r.get("store") == "postgresql":
            ceil = self.ceil["PG"]
        st = self.stack(r["conns"], r["server"] == "CGI")
        return (r["accepted_s"] / ceil if r["accepted_s"] is not None
                else None,
                r["req_s"] / st["req_s"] if st else None)

    def report(self):
        a = self.a
        L = []
        ver = lambda cmd: subprocess.run(  # noqa: E731
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        ).stdout.decode(errors="replace").splitlines()[0].strip()
        L.append("Run of %s on %s: %d cores, Linux %s; %s; SQLite %s; %s. "
                 "Each wrk run %d s, 10%% redeliveries, ~%d B bodies, "
                 "max-procs %d; load average %.2f before, %.2f after; "
                 "%.0f s in all." % (
                     self.started.strftime("%Y-%m-%d %H:%M %Z"),
                     os.uname().nodename, os.cpu_count(), os.uname().release,
                     ver(["lighttpd", "-v"]).split(" - ")[0],
                     sqlite3.sqlite_version,
                     ver(["wrk", "--version"]).split(" [")[0],
                     a.seconds, BODY_BYTES, MAX_PROCS, self.load0[0],
                     self.load1[0], self.elapsed))
        L.append("")
        L.append("| ceiling | figure |")
        L.append("|---|---|")
        L.append("| storage: store_record() loop, FULL (1 process) | "
                 "%.0f events/s (%.0f before the runs, %.0f after) |" % (
                     self.ceil["FULL"], self.ceil["FULL_before"],
                     self.ceil["FULL_after"]))
        L.append("| storage: the same, %d processes at once | %.0f events/s |"
                 % (MAX_PROCS, self.ceil["FULL2"]))
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
        for c in CONNS:
            s = self.stack(c)
            if s:
                L.append("| stack: null FastCGI, %d conn | %.0f req/s, p50 "
                         "%.2f ms, p99 %.2f ms |" % (c, s["req_s"],
                                                    s["p50_ms"], s["p99_ms"]))
        s = self.stack(16, cgi=True)
        if s:
            L.append("| stack: null CGI, 16 conn | %.0f req/s, p99 %.2f ms |"
                     % (s["req_s"], s["p99_ms"]))
        L.append("")
        L.append("| provider | server | sync | mode | conn | req/s | "
                 "accepted/s | p50 ms | p99 ms | errors | "
                 "RSS / peak / private KiB | accepted ÷ storage | "
                 "req/s ÷ stack |")
        L.append("|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
        for r in self.rows:
            if r["name"] == "null":
                continue
            ra, rs = self.ratios(r)
            L.append("| %s | %s | %s | %s | %d | %.0f | %.0f | %.2f | %.2f | "
                     "%d | %s | %s | %s |" % (
                         r["name"] + (" (PostgreSQL)" if r.get("store") ==
                                      "postgresql" else ""),
                         r["server"], r["sync"], r["mode"],
                         r["conns"], r["req_s"], r["accepted_s"], r["p50_ms"],
                         r["p99_ms"], r["errors"],
                         "%d / %d / %d" % (r["rss_kib"], r["hwm_kib"],
                                           r["private_kib"] or 0)
                         if r["rss_kib"] else "-",
                         "%.2f" % ra if ra is not None else "-",
                         "%.2f" % rs if rs is not None else "-"))
        L.append("")
        L += self.targets()
        L.append("")
        L.append("CPU per request (µs, from /proc and getrusage):")
        L.append("")
        L.append("| provider | server | sync | mode | conn | FastCGI procs | "
                 "lighttpd | wrk | rows done | outcomes |")
        L.append("|---|---|---|---|--:|--:|--:|--:|--:|---|")
        for r in self.rows:
            L.append("| %s | %s | %s | %s | %d | %s | %.0f | %.0f | %s | %s |"
                     % (r["name"], r["server"], r["sync"], r["mode"],
                        r["conns"],
                        "%.0f" % r["fcgi_cpu_us_per_req"]
                        if r["fcgi_cpu_us_per_req"] is not None else "-",
                        r["lighttpd_cpu_us_per_req"], r["wrk_cpu_us_per_req"],
                        "%d of %d" % (r["done"], r["rows"])
                        if r["name"] != "null" else "-",
                        " ".join("%s=%d" % kv for kv in
                                 sorted(r["outcomes"].items())) or "-"))
        text = "\n".join(L) + "\n"
        with open(a.out, "w") as f:
            f.write(text)
        with open(os.path.splitext(a.out)[0] + ".json", "w") as f:
            json.dump({"ceilings": self.ceil, "runs": self.rows,
                       "date": self.started.isoformat()}, f, indent=1)
        print(text)
        log("results in %s" % a.out)

    def targets(self):
        L = ["| target | measured | |", "|---|---|---|"]

        def verdict(ok):
            return "met" if ok else "**missed**"
        r = self.find(name="stripe", server="FastCGI", sync="FULL",
                      mode="after-response", conns=16)
        if r:
            ra = r["accepted_s"] / self.ceil["FULL"]
            L.append("| accepted durable events/s ≥ 80%% of the storage "
                     "ceiling (stripe, FULL, 16 conn) | %.0f of %.0f = %.0f%% "
                     "| %s |" % (r["accepted_s"], self.ceil["FULL"], ra * 100,
                                 verdict(ra >= T_THROUGHPUT)))
            best = max((x for x in self.rows if x["name"] != "null"
                        and x["server"] == "FastCGI" and x["sync"] == "FULL"
                        and x["mode"] == "after-response"),
                       key=lambda x: x["accepted_s"])
            L.append("| the same, best provider and concurrency | %s at %d "
                     "conn: %.0f%% | %s |" % (
                         best["name"], best["conns"],
                         best["accepted_s"] / self.ceil["FULL"] * 100,
                         verdict(best["accepted_s"] / self.ceil["FULL"]
                                 >= T_THROUGHPUT)))
            worst = max((x for x in self.rows if x["name"] != "null"
                         and x["server"] == "FastCGI" and x["conns"] == 16),
                        key=lambda x: x["p99_ms"])
            L.append("| p99 ≤ 10 ms at 16 connections (stripe, FULL) | "
                     "%.2f ms (worst FastCGI run at 16: %s %s %s, %.2f ms) "
                     "| %s |" % (r["p99_ms"], worst["name"], worst["sync"],
                                 worst["mode"], worst["p99_ms"],
                                 verdict(r["p99_ms"] <= T_P99_MS)))
        fc = [x for x in self.rows if x["name"] != "null"
              and x["server"] == "FastCGI" and x["hwm_kib"]]
        if fc:
            m = max(fc, key=lambda x: x["hwm_kib"])
            mp = max(fc, key=lambda x: x["private_kib"] or 0)
            L.append("| RSS ≤ 4 MiB per FastCGI process | peak VmHWM %d KiB "
                     "(%s, %d conn); at most %d KiB private, the rest "
                     "shared libraries' pages | %s |" % (
                         m["hwm_kib"], m["name"], m["conns"],
                         mp["private_kib"] or 0,
                         verdict(m["hwm_kib"] <= T_RSS_KIB)))
        for sync in ("FULL", "NORMAL"):
            after = self.find(name="stripe", server="FastCGI", sync=sync,
                              mode="after-response", conns=16)
            worker = self.find(name="stripe", server="FastCGI", sync=sync,
                               mode="worker", conns=16)
            if after and worker:
                cost = 1 - after["accepted_s"] / worker["accepted_s"]
                L.append("| processing after the answer costs ≤ 10%% "
                         "(stripe, %s, 16 conn) | %.0f accepted/s vs %.0f in "
                         "worker mode: %.0f%% | %s |" % (
                             sync, after["accepted_s"], worker["accepted_s"],
                             cost * 100, verdict(cost <= T_AFTER_COST)))
        return L


def main():
    global MAX_PROCS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, help="directory of *.fcgi")
    ap.add_argument("--tools", required=True,
                    help="directory of store_ceiling and null.fcgi")
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--ceiling-seconds", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--runs", nargs="*", default=None,
                    help="only these runs: provider:conns[:sync[:mode[:cgi]]]")
    ap.add_argument("--max-procs", type=int, default=MAX_PROCS,
                    help="FastCGI processes per endpoint (default %d, the "
                    "shipped value)" % MAX_PROCS)
    ap.add_argument("--no-pg", action="store_true",
                    help="no PostgreSQL rows (they need tests/pg_cluster.sh)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    MAX_PROCS = a.max_procs
    a.bin = os.path.abspath(a.bin)
    a.tools = os.path.abspath(a.tools)
    a.out = os.path.abspath(a.out)
    for prog in ("wrk", "lighttpd"):
        if shutil.which(prog) is None:
            sys.exit("bench: %s is not installed (make deps)" % prog)
    b = Bench(a)
    try:
        b.main()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
