"""End-to-end harness for idemhook: a real lighttpd in front of the receivers.

Python 3 standard library only.  What it gives a test module:

  Server(...)            a lighttpd started from a generated top-level config
                         that sets the var.idemhook_* variables and includes
                         the shipped www-config/lighttpd/*.conf unchanged.
  server.post(...)       HTTP through http.client, with timeouts.
  server.rows(...)       read-only queries on the store, whichever backend.
  db_connect(location)   a DB-API-like connection to a store: sqlite3 for a
                         file, a psql-backed one for a postgresql:// URI.
  IH_DB_BACKEND=pg       every Server without an explicit db gets a fresh
                         database on the PostgreSQL server at IH_PG_URI
                         (tests/run.sh starts one) instead of a SQLite file.
  server.errorlog()      lighttpd's server.errorlog (receivers' stderr).
  sign_stripe, sign_github, sign_shopify, sign_standard, ASAAS_TOKEN_HEADER
                         signers for the five providers.
  Tap                    TAP-style reporting ("ok - name" / "not ok - name").

The directory of binaries comes from IH_BIN (or the first argument of the
test script); nothing outside the repository is referenced.
"""

import atexit
import base64
import contextlib
import hashlib
import hmac
import http.client
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CONF_DIR = os.path.join(REPO, "www-config", "lighttpd")

PROVIDERS = ("stripe", "github", "shopify", "asaas", "standard")


# -- the store, whichever backend

def is_pg(location):
    return str(location).startswith(("postgresql://", "postgres://"))


def pg_backend():
    """True when the suites run against PostgreSQL (IH_DB_BACKEND=pg)."""
    return os.environ.get("IH_DB_BACKEND", "sqlite") == "pg"


def pg_admin_uri():
    uri = os.environ.get("IH_PG_URI", "")
    if not uri:
        raise HarnessError("IH_PG_URI is unset: tests/run.sh starts a "
                           "PostgreSQL server (tests/pg_cluster.sh)")
    return uri


def pg_uri(dbname, base=None):
    """The URI of database dbname on the server of base (IH_PG_URI)."""
    base = base or pg_admin_uri()
    q = base.find("?")
    return "postgresql:///%s%s" % (dbname, base[q:] if q >= 0 else "")


_pg_seq = [0]


def pg_new_db(prefix="ih_e2e"):
    """Creates an empty database and returns its URI."""
    _pg_seq[0] += 1
    name = "%s_%d_%d_%d" % (prefix, os.getpid(), _pg_seq[0], int(time.time() * 1000) % 100000)
    psql(pg_admin_uri(), "CREATE DATABASE %s" % name)
    return pg_uri(name)


def psql(uri, sql):
    """Runs sql with psql; returns its unaligned, tuples-only output."""
    p = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                        "-d", uri, "-c", sql], capture_output=True, timeout=60)
    if p.returncode != 0:
        raise PgError(p.stderr.decode("utf-8", "replace").strip())
    return p.stdout.decode("utf-8", "replace")


class PgError(Exception):
    pass


def pg_literal(v):
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, (bytes, bytearray)):
        return "'\\x%s'::bytea" % bytes(v).hex()
    return "'%s'" % str(v).replace("'", "''")


def pg_bind(sql, args):
    """Replaces each ? outside quotes with the next argument, quoted."""
    out, i, quote = [], 0, False
    for ch in sql:
        if ch == "'":
            quote = not quote
        if ch == "?" and not quote:
            out.append(pg_literal(args[i]))
            i += 1
        else:
            out.append(ch)
    return "".join(out)


class PgRow(tuple):
    """A row that answers both r[0] and r["name"], like sqlite3.Row."""
    def __new__(cls, d):
        r = super().__new__(cls, tuple(d.values()))
        r._d = d
        return r

    def __getitem__(self, k):
        if isinstance(k, str):
            return self._d[k]
        return tuple.__getitem__(self, k)

    def keys(self):
        return list(self._d.keys())


def _pg_value(v):
    if isinstance(v, str) and v.startswith("\\x"):
        try:
            return bytes.fromhex(v[2:])
        except ValueError:
            return v
    return v


class PgCursor:
    def __init__(self, rows, rowcount):
        self.rows = rows
        self.rowcount = rowcount
        self.lastrowid = None

    def fetchone(self):
        return self.rows.pop(0) if self.rows else None

    def fetchall(self):
        rows, self.rows = self.rows, []
        return rows

    def __iter__(self):
        return iter(self.fetchall())


class PgConn:
    """Enough of sqlite3.Connection for the tests, over psql: each
    execute() is its own transaction.  SELECTs come back typed, through
    row_to_json; bytea columns as bytes."""
    def __init__(self, uri):
        self.uri = uri
        self.row_factory = None

    def execute(self, sql, args=()):
        sql = pg_bind(sql, tuple(args)).strip().rstrip(";")
        head = sql.split(None, 1)[0].upper()
        if head in ("SELECT", "WITH"):
            out = psql(self.uri, "SELECT row_to_json(q)::text FROM (%s) AS q" % sql)
            rows = []
            for line in out.splitlines():
                if line.strip():
                    d = json.loads(line)
                    rows.append(PgRow({k: _pg_value(v) for k, v in d.items()}))
            return PgCursor(rows, -1)
        if " RETURNING " in sql.upper():
            sql = "WITH q AS (%s) SELECT row_to_json(q)::text FROM q" % sql
            out = psql(self.uri, sql)
            rows = [PgRow({k: _pg_value(v) for k, v in json.loads(l).items()})
                    for l in out.splitlines() if l.strip()]
            return PgCursor(rows, len(rows))
        psql(self.uri, sql)
        return PgCursor([], -1)

    def commit(self):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def db_connect(location, timeout=5, ro=False):
    """A connection to the store at location (file or postgresql:// URI)."""
    if is_pg(location):
        return PgConn(location)
    if ro:
        return sqlite3.connect("file:%s?mode=ro" % location, uri=True, timeout=timeout)
    return sqlite3.connect(location, timeout=timeout)


@contextlib.contextmanager
def store_locked(location):
    """Holds the store's write lock (SQLite: BEGIN IMMEDIATE; PostgreSQL:
    a session holding LOCK TABLE events) until the block ends."""
    if not is_pg(location):
        c = sqlite3.connect(location, timeout=10, isolation_level=None)
        try:
            c.execute("BEGIN IMMEDIATE")
            yield
            c.execute("ROLLBACK")
        finally:
            c.close()
        return
    app = "ih_lock_%d_%d" % (os.getpid(), int(time.time() * 1000))
    holder = subprocess.Popen(
        ["psql", "-X", "-q", "-d", location, "-c",
         "BEGIN; LOCK TABLE events IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(120)"],
        env=dict(os.environ, PGAPPNAME=app),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            out = psql(location, "SELECT count(*) FROM pg_locks l JOIN pg_class c"
                       " ON c.oid = l.relation WHERE c.relname = 'events'"
                       " AND l.mode = 'AccessExclusiveLock' AND l.granted")
            if out.strip() not in ("", "0"):
                break
            if time.monotonic() > deadline or holder.poll() is not None:
                raise HarnessError("could not lock the PostgreSQL store")
            time.sleep(0.05)
        yield
    finally:
        # A killed psql would leave its backend asleep holding the lock.
        psql(location, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
             " WHERE application_name = '%s'" % app)
        holder.wait(timeout=30)


def db_exists(location):
    if is_pg(location):
        return True
    return os.path.exists(location)

# The lighttpd variable (and environment variable) holding each secret.
SECRET_VAR = {p: "idemhook_%s_secret" % p for p in PROVIDERS}
SECRET_VAR["asaas"] = "idemhook_asaas_token"


def secret_env(provider):
    """IDEMHOOK_STRIPE_SECRET, ..., IDEMHOOK_ASAAS_TOKEN."""
    return SECRET_VAR[provider].upper()

# Environment variables passed from the test's environment to the receivers
# (through lighttpd's bin-copy-environment), so sanitizer settings apply.
SANITIZER_ENV = ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS",
                 "MSAN_OPTIONS", "TSAN_OPTIONS")

# Markers of sanitizer reports in the errorlog.
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                     "runtime error:", "WARNING: ThreadSanitizer",
                     "ERROR: UndefinedBehaviorSanitizer",
                     "WARNING: MemorySanitizer")

HTTP_TIMEOUT = 15.0

# Root is the reference: as root every case runs, and Apache, nginx and
# spawn-fcgi drop to www-data.  As another user they run as that user.
IS_ROOT = os.geteuid() == 0
START_TIMEOUT = 10.0


class HarnessError(Exception):
    pass


def bin_dir(argv=None):
    """Directory of the binaries: argv[1], else $IH_BIN.  Must exist."""
    argv = sys.argv if argv is None else argv
    d = argv[1] if len(argv) > 1 else os.environ.get("IH_BIN", "")
    if not d:
        raise HarnessError("no binary directory: pass it as argument or set IH_BIN")
    d = os.path.abspath(d)
    if not os.path.isdir(d):
        raise HarnessError("IH_BIN %r is not a directory" % d)
    return d


# ---------------------------------------------------------------- signers

def hmac_sha256(key, msg):
    if isinstance(key, str):
        key = key.encode("utf-8")
    if isinstance(msg, str):
        msg = msg.encode("utf-8")
    return hmac.new(key, msg, hashlib.sha256).digest()


def stripe_v1(secret, body, t):
    """Hex HMAC-SHA256(secret, "<t>.<body>"); the whsec_ secret is the key as-is."""
    if isinstance(body, str):
        body = body.encode("utf-8")
    return hmac_sha256(secret, str(int(t)).encode() + b"." + body).hex()


def sign_stripe(secret, body, t=None, extra_v1=(), v0=None, secrets=None):
    """Stripe-Signature header value.

    secrets: list of secrets, one v1 per secret (what Stripe sends while an
    old secret is still active).  extra_v1: further raw v1 values (junk).
    v0: a raw v0 value appended (test-mode events carry one)."""
    t = int(time.time()) if t is None else int(t)
    keys = list(secrets) if secrets else [secret]
    parts = ["t=%d" % t]
    parts += ["v1=" + stripe_v1(k, body, t) for k in keys]
    parts += ["v1=" + v for v in extra_v1]
    if v0 is not None:
        parts.append("v0=" + v0)
    return ",".join(parts)


def stripe_sdk_header(payload, secret, timestamp=None, scheme="v1"):
    """Header built the way stripe-python's tests do (generate_header with
    WebhookSignature._compute_signature): payload and secret as str, UTF-8."""
    timestamp = int(time.time()) if timestamp is None else timestamp
    payload_to_sign = "%d.%s" % (timestamp, payload)
    mac = hmac.new(secret.encode("utf-8"), msg=payload_to_sign.encode("utf-8"),
                   digestmod=hashlib.sha256)
    return "t=%d,%s=%s" % (timestamp, scheme, mac.hexdigest())


def sign_github(secret, body):
    """X-Hub-Signature-256 value: 'sha256=' + hex HMAC of the raw body."""
    return "sha256=" + hmac_sha256(secret, body).hex()


def sign_github_sha1(secret, body):
    """Legacy X-Hub-Signature value."""
    if isinstance(secret, str):
        secret = secret.encode("utf-8")
    if isinstance(body, str):
        body = body.encode("utf-8")
    return "sha1=" + hmac.new(secret, body, hashlib.sha1).hexdigest()


def sign_shopify(secret, body):
    """X-Shopify-Hmac-Sha256 value: base64 HMAC of the raw body."""
    return base64.b64encode(hmac_sha256(secret, body)).decode("ascii")


ASAAS_TOKEN_HEADER = "asaas-access-token"  # static token, no HMAC


def standard_key(secret):
    """Standard Webhooks key: strip 'whsec_' and base64-decode the rest."""
    if secret.startswith("whsec_"):
        secret = secret[len("whsec_"):]
    return base64.b64decode(secret)


def sign_standard(secret, msg_id, ts, body, extra=()):
    """webhook-signature value: 'v1,<b64 HMAC(key, id.ts.body)>' (space-separated list)."""
    if isinstance(body, str):
        body = body.encode("utf-8")
    signed = ("%s.%d." % (msg_id, int(ts))).encode() + body
    sig = "v1," + base64.b64encode(hmac_sha256(standard_key(secret), signed)).decode()
    return " ".join([sig] + list(extra))


def standard_secret(raw=None):
    """A fresh Standard Webhooks secret: whsec_ + base64(24 random bytes)."""
    raw = os.urandom(24) if raw is None else raw
    return "whsec_" + base64.b64encode(raw).decode()


# Published / derived vectors (see the provider fact sheet).
VECTORS = {
    "stripe": lambda: stripe_v1("whsec_test_secret",
                                b'{"id":"evt_test_webhook","object":"event"}',
                                1492774577)
    == "88a022085c6bdb887b02cb26ff76dd681234d9675c0f22844059f55552a8883a",
    "github": lambda: sign_github("It's a Secret to Everybody", b"Hello, World!")
    == "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
    "github-octokit": lambda: sign_github("mysecret", b'{\n  "foo": "bar"\n}\n')
    == "sha256=e3eccac34c43c7dc1cbb905488b1b81347fcc700a7b025697a9d07862256023f",
    "shopify": lambda: sign_shopify("test_secret_key", b'{"foo": "bar"}')
    == "B23tXN681gZ0qIWNRrgtzBE9XSDo5yaUu6wfmhu3a7g=",
    "standard": lambda: sign_standard("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                                      "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330,
                                      b'{"test": 2432232314}')
    == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
}


def check_vector(name):
    if not VECTORS[name]():
        raise AssertionError("signer does not reproduce the %s test vector" % name)


# ---------------------------------------------------------------- TAP

class Tap:
    """Prints 'ok - name' / 'not ok - name: reason'; exit code via finish()."""

    def __init__(self, prefix=""):
        self.prefix = prefix
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.lock = threading.Lock()

    def _name(self, name):
        return self.prefix + name

    def ok(self, name):
        with self.lock:
            self.passed += 1
            print("ok - %s" % self._name(name), flush=True)

    def not_ok(self, name, reason):
        reason = " ".join(str(reason).split())  # one line
        with self.lock:
            self.failed += 1
            print("not ok - %s: %s" % (self._name(name), reason), flush=True)

    def diag(self, msg):
        for line in str(msg).splitlines():
            print("# " + line, flush=True)

    def run(self, name, fn, *args, **kw):
        """Run fn; AssertionError or any exception makes the case fail."""
        try:
            fn(*args, **kw)
        except AssertionError as e:
            self.not_ok(name, e or "assertion failed")
            return False
        except Exception as e:  # noqa: BLE001 - report, keep going
            self.not_ok(name, "%s: %s" % (type(e).__name__, e))
            self.diag(traceback.format_exc())
            return False
        self.ok(name)
        return True

    def skip(self, name, why):
        """A case that cannot run here, with its reason.  tests/run.sh
        counts it as skipped.  Root is the reference machine: as root
        nothing may be skipped, so a skip there is a failure."""
        if IS_ROOT:
            self.not_ok(name, "would be skipped as root, which runs everything: " + why)
            return
        with self.lock:
            self.skipped += 1
            print("ok - %s # SKIP %s" % (self._name(name), why), flush=True)

    def run_as_root(self, name, why, fn, *args, **kw):
        """tap.run as root; otherwise a skip saying why the case needs
        root ("needs root: <why>")."""
        if not IS_ROOT:
            self.skip(name, "needs root: " + why)
            return False
        return self.run(name, fn, *args, **kw)

    def finish(self):
        total = self.passed + self.failed + self.skipped
        print("1..%d" % total, flush=True)
        return 1 if self.failed or not total else 0


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def check_eq(got, want, what):
    if got != want:
        raise AssertionError("%s: expected %r, got %r" % (what, want, got))


# ---------------------------------------------------------------- HTTP

class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # dict, lower-case names
        self.body = body

    def header(self, name):
        return self.headers.get(name.lower())

    def json(self):
        try:
            return json.loads(self.body.decode("utf-8"))
        except Exception:
            return None

    def __repr__(self):
        b = self.body[:200]
        return "<%d %r>" % (self.status, b)


def free_port():
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, deadline):
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def conf_str(s):
    """A lighttpd string literal."""
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def conf_array(d):
    if not d:
        return "()"
    return "(\n" + "".join("  %s => %s,\n" % (conf_str(k), conf_str(v))
                           for k, v in d.items()) + ")"


def conf_list(xs):
    return "(" + ", ".join(conf_str(x) for x in xs) + ")"


def _children_of(pid):
    """Pids whose parent is pid (from /proc)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
            ppid = int(st[st.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == pid:
            out.append(int(d))
    return out


def program_of(pid):
    """The path a process was started with (argv[0]), or "".  Read from
    /proc/PID/cmdline, which stays readable when the program has made
    itself non-dumpable (its exe link then does not, except for root)."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().split(b"\0", 1)[0].decode("utf-8", "replace")
    except OSError:
        return ""


def daemon_env(keep, **fixed):
    """A server's environment: PATH, fixed, and of the caller's the
    sanitizer settings and the names in keep."""
    env = {"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")}
    env.update(fixed)
    for k in SANITIZER_ENV + keep:
        if k in os.environ:
            env[k] = os.environ[k]
    return env


def server_user():
    """The user a web server started by the tests runs the programs as:
    www-data under root, else the user running the tests."""
    import pwd
    return "www-data" if IS_ROOT else pwd.getpwuid(os.geteuid()).pw_name


def server_group():
    """The group of server_user(): www-data under root, else the group of
    the user running the tests, which need not have the user's name
    (nobody's is nogroup)."""
    import grp
    return "www-data" if IS_ROOT else grp.getgrgid(os.getegid()).gr_name


_STAGED = {}


def link_or_copy(src, dst):
    """A hard link to src at dst where the file system allows, else a copy."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def staged_programs(bin):
    """The programs of bin (*.fcgi and idemhook) in a folder of their own
    that every user can enter.  Servers started as root run them as
    www-data, which cannot reach a checkout under a 0700 folder (root's
    home, a mktemp -d folder, a Debian 12 home).  Hard links where the
    file system allows, copies otherwise; one folder per bin and test
    process, removed at exit.  Not root: bin itself."""
    if not IS_ROOT:
        return bin
    if bin in _STAGED:
        return _STAGED[bin]
    base = tempfile.mkdtemp(prefix="ih-bin-")
    os.chmod(base, 0o755)
    atexit.register(shutil.rmtree, base, True)
    for fn in sorted(os.listdir(bin)):
        src = os.path.join(bin, fn)
        if not (fn.endswith(".fcgi") or fn == "idemhook") or not os.path.isfile(src):
            continue
        link_or_copy(src, os.path.join(base, fn))
    _STAGED[bin] = base
    return base


def reach_problem(user, needs):
    """One line naming the first path user cannot use, or None.

    needs: [(path, access)], access a string of "r", "w", "x" as for
    test(1).  As root, the checks run as user (its own groups only); as
    another user they run as that user, who is us."""
    import pwd
    script = ('for a; do m=${a%%:*}; p=${a#*:}; '
              'for c in $(echo "$m" | sed "s/./& /g"); do '
              'test -"$c" "$p" || { echo "$c:$p"; exit 1; }; done; done')
    args = ["%s:%s" % (acc, path) for path, acc in needs]
    kw = {}
    if IS_ROOT:
        pw = pwd.getpwnam(user)
        kw = {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}
    r = subprocess.run(["sh", "-c", script, "sh"] + args, capture_output=True,
                       text=True, timeout=30, **kw)
    if r.returncode == 0:
        return None
    acc, _, path = r.stdout.strip().partition(":")
    what = {"r": "read", "w": "write", "x": "enter or run"}.get(acc, acc)
    # Name the folder that stops it: the first ancestor user cannot enter.
    blocker = None
    d = os.path.dirname(os.path.abspath(path))
    chain = []
    while True:
        chain.append(d)
        if d == "/":
            break
        d = os.path.dirname(d)
    for d in reversed(chain):
        if subprocess.run(["test", "-x", d], timeout=10, **kw).returncode != 0:
            blocker = d
            break
    if blocker:
        st = os.stat(blocker)
        try:
            owner = pwd.getpwuid(st.st_uid).pw_name
        except KeyError:
            owner = str(st.st_uid)
        return ("%s cannot %s %s: the folder %s (mode %04o, owner %s) is closed to it"
                % (user, what, path, blocker, st.st_mode & 0o7777, owner))
    return "%s cannot %s %s" % (user, what, path)


class Server:
    """A lighttpd serving the shipped idemhook configuration.

    bin:        directory of <provider>.fcgi binaries
    providers:  providers to mount; default: every provider that has both a
                binary in bin and a hooks-<provider>.conf
    secrets:    {provider: secret}; a random one is made for missing ones
    env:        extra IDEMHOOK_* for every receiver (var.idemhook_env)
    provider_env: {provider: {NAME: value}} (var.idemhook_<p>_env)
    db:         IDEMHOOK_DB; default <tmp>/data/events.db (created by the receiver)
    extra_conf: lines appended to the top-level config before the hook includes
    wrap:       a command prefix for every receiver (default: $IH_WRAP)
    """

    def __init__(self, bin, providers=None, secrets=None, env=None,
                 provider_env=None, db=None, max_procs=2, name="server",
                 extra_conf="", lighttpd_env=None, wrap=None):
        self.bin = bin
        self.name = name
        self.tmp = tempfile.mkdtemp(prefix="ih-e2e-")
        if db is None and pg_backend():
            db = pg_new_db()
        self.db = db or os.path.join(self.tmp, "data", "events.db")
        if providers is None:
            providers = [p for p in PROVIDERS if self.has_provider(p)]
        self.providers = list(providers)
        self.secrets = dict(secrets or {})
        for p in self.providers:
            if p not in self.secrets:
                self.secrets[p] = default_secret(p)
        self.env = dict(env or {})
        self.provider_env = dict(provider_env or {})
        self.max_procs = max_procs
        self.extra_conf = extra_conf
        self.lighttpd_env = dict(lighttpd_env or {})  # lighttpd's own environment
        self.proc = None
        self.port = None
        self.errorlog_path = os.path.join(self.tmp, "error.log")
        self.sent = {}          # path -> number of requests sent
        self.sent_lock = threading.Lock()
        self.signatures = set()  # signature values sent (must not be logged)
        self.fcgi_pids = set()
        self.wrap = wrap

    def bin_path_prefix(self):
        """var.idemhook_bin: the binary directory, preceded by the wrapper
        command in IH_WRAP when set (e.g. IH_WRAP="valgrind -q
        --error-exitcode=99"); lighttpd splits a bin-path on spaces into
        the program and its arguments, so "<wrap> <bin>/stripe.fcgi" runs
        the receiver under the wrapper.  self.wrap overrides IH_WRAP."""
        wrap = self.wrap if self.wrap is not None else os.environ.get("IH_WRAP", "")
        return (wrap.strip() + " " + self.bin) if wrap.strip() else self.bin

    def has_provider(self, p):
        return (os.path.exists(os.path.join(self.bin, p + ".fcgi"))
                and os.path.exists(os.path.join(CONF_DIR, "hooks-%s.conf" % p)))

    # -- lifecycle

    def write_conf(self, port):
        for d in ("www", "run", "upload"):
            os.makedirs(os.path.join(self.tmp, d), exist_ok=True)
        lines = [
            "# generated by tests/e2e/harness.py",
            "server.document-root = %s" % conf_str(os.path.join(self.tmp, "www")),
            'server.bind = "127.0.0.1"',
            "server.port = %d" % port,
            "server.errorlog = %s" % conf_str(self.errorlog_path),
            "server.upload-dirs = (%s)" % conf_str(os.path.join(self.tmp, "upload")),
            "server.max-keep-alive-requests = 0",
            "include %s" % conf_str(os.path.join(CONF_DIR, "idemhook.conf")),
            "var.idemhook_bin := %s" % conf_str(self.bin_path_prefix()),
            "var.idemhook_run := %s" % conf_str(os.path.join(self.tmp, "run")),
            "var.idemhook_db := %s" % conf_str(self.db),
            "var.idemhook_max_procs := %d" % self.max_procs,
            "var.idemhook_env := %s" % conf_array(self.env),
            "var.idemhook_copy_env := %s" % conf_list(
                ("PATH", "TZ", "LANG", "LC_ALL") + SANITIZER_ENV),
        ]
        for p in self.providers:
            lines.append("var.%s := %s" % (SECRET_VAR[p], conf_str(self.secrets[p])))
            if self.provider_env.get(p):
                lines.append("var.idemhook_%s_env := %s" % (p, conf_array(self.provider_env[p])))
        if self.extra_conf:
            lines.append(self.extra_conf)
        for p in self.providers:
            lines.append("include %s" % conf_str(os.path.join(CONF_DIR, "hooks-%s.conf" % p)))
        path = os.path.join(self.tmp, "lighttpd.conf")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    # The web server start() runs; its output goes to OUT_FILES[0], and
    # startup_output() reads all of OUT_FILES.  Subclasses change these.
    DAEMON = "lighttpd"
    OUT_FILES = ("lighttpd.out", "error.log")

    def daemon_argv(self, conf):
        return ["lighttpd", "-D", "-f", conf]

    def daemon_env(self):
        env = daemon_env(("TZ", "LANG", "LC_ALL"))
        env.update(self.lighttpd_env)
        return env

    def preflight(self):
        """Before the server starts: raise one HarnessError naming what
        the programs' user cannot reach, instead of a 403 or 502 in every
        case.  lighttpd runs its programs as the user running the tests."""

    def _store_needs(self):
        """The store's folder, or its nearest existing ancestor, which the
        receiver creates the rest of: the programs' user writes there."""
        if is_pg(self.db):
            return []
        d = os.path.dirname(os.path.abspath(self.db))
        while not os.path.isdir(d) and d != "/":
            d = os.path.dirname(d)
        return [(d, "wx")]

    def _reach(self, needs):
        problem = reach_problem(self.USER, needs)
        if problem:
            raise HarnessError(problem)

    def started(self):
        """Called once the server listens."""
        self._note_children()

    def start(self):
        if self.proc is not None:
            return self
        become_subreaper()
        last = ""
        for _attempt in range(3):  # a free port can be taken meanwhile
            port = free_port()
            conf = self.write_conf(port)
            self.preflight()
            env = self.daemon_env()
            out = open(os.path.join(self.tmp, self.OUT_FILES[0]), "ab")
            try:
                self.proc = subprocess.Popen(
                    self.daemon_argv(conf), stdin=subprocess.DEVNULL,
                    stdout=out, stderr=subprocess.STDOUT, env=env,
                    start_new_session=True, cwd=self.tmp)
            finally:
                out.close()
            self.port = port
            if wait_port(port, self.proc, time.monotonic() + START_TIMEOUT):
                self.started()
                return self
            last = self.startup_output()
            self._kill()
            if "Address already in use" not in last:
                break
        raise HarnessError("%s (%s) did not start: %s"
                           % (self.DAEMON, self.name, last.strip()[-2000:]))

    def startup_output(self):
        text = ""
        for fn in self.OUT_FILES:
            try:
                with open(os.path.join(self.tmp, fn), errors="replace") as f:
                    text += f.read()
            except OSError:
                pass
        return text

    def _note_children(self):
        if self.proc is not None:
            try:
                self.fcgi_pids.update(_children_of(self.proc.pid))
            except OSError:
                pass

    def _kill(self):
        """Stop lighttpd (SIGTERM to its process group, then SIGKILL) and any
        FastCGI child it spawned that survived."""
        p = self.proc
        if p is None:
            return
        self._note_children()
        pgid = p.pid  # start_new_session: lighttpd leads its own group
        try:
            os.killpg(pgid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=5)
        deadline = time.monotonic() + 3
        for pid in sorted(self.fcgi_pids):
            while time.monotonic() < deadline and _alive(pid):
                _reap(pid)
                time.sleep(0.05)
            if _alive(pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        for pid in self.fcgi_pids:
            _reap(pid)
        self.proc = None

    def stop(self):
        self._kill()

    def cleanup(self):
        self._kill()
        if os.environ.get("IH_KEEP_TMP"):
            print("# kept %s" % self.tmp, flush=True)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.cleanup()
        return False

    # -- HTTP

    def url(self, provider):
        return "/hooks/" + provider

    def request(self, method, path, body=b"", headers=None, timeout=HTTP_TIMEOUT,
                chunked=False):
        if self.proc is None:
            raise HarnessError("server %s is not running" % self.name)
        if isinstance(body, str):
            body = body.encode("utf-8")
        headers = dict(headers or {})
        for k, v in headers.items():
            if k.lower() in ("stripe-signature", "x-hub-signature-256", "x-hub-signature",
                             "x-shopify-hmac-sha256", "webhook-signature",
                             "asaas-access-token"):
                for part in str(v).replace(" ", ",").split(","):
                    part = part.split("=", 1)[-1]
                    if len(part) >= 16:
                        self.signatures.add(part)
        with self.sent_lock:
            key = path.split("?", 1)[0]
            self.sent[key] = self.sent.get(key, 0) + 1
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            if method in ("GET", "HEAD", "DELETE", "OPTIONS") and not body:
                conn.request(method, path, headers=headers)
            elif chunked:  # Transfer-Encoding: chunked, no Content-Length
                if "Content-Type" not in headers:
                    headers["Content-Type"] = "application/json"
                pieces = [body[i:i + 1000] for i in range(0, len(body), 1000)]
                conn.request(method, path, body=iter(pieces), headers=headers,
                             encode_chunked=True)
            else:
                if "Content-Type" not in headers:
                    headers["Content-Type"] = "application/json"
                conn.request(method, path, body=body, headers=headers)
            r = conn.getresponse()
            data = r.read()
            hdrs = {k.lower(): v for k, v in r.getheaders()}
            return Response(r.status, hdrs, data)
        finally:
            conn.close()

    def post(self, path, body, headers=None, timeout=HTTP_TIMEOUT, chunked=False):
        return self.request("POST", path, body, headers, timeout, chunked)

    def get(self, path, headers=None):
        return self.request("GET", path, b"", headers)

    # -- store and logs

    def connect_ro(self):
        if not db_exists(self.db):
            raise AssertionError("database %s does not exist" % self.db)
        return db_connect(self.db, ro=True)

    def rows(self, provider=None, event_id=None):
        """Rows of the events table as dicts, filtered by provider/event_id."""
        if not db_exists(self.db):
            return []
        if is_pg(self.db):
            try:
                self.connect_ro().execute("SELECT 1 FROM events LIMIT 1")
            except PgError:
                return []       # no receiver has created the schema yet
        with contextlib.closing(self.connect_ro()) as c:
            c.row_factory = sqlite3.Row
            q, args = "SELECT * FROM events WHERE 1=1", []
            if provider is not None:
                q += " AND provider=?"
                args.append(provider)
            if event_id is not None:
                q += " AND event_id=?"
                args.append(event_id)
            return [dict(r) for r in c.execute(q, args)]

    def count(self, provider=None):
        return len(self.rows(provider))

    def errorlog(self):
        try:
            with open(self.errorlog_path, "rb") as f:
                return f.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def stderr_text(self):
        """What went to lighttpd's own stderr, which its FastCGI children
        inherit as fd 2 (lighttpd -D; a daemonized lighttpd gives them
        /dev/null).  Not server.errorlog."""
        try:
            with open(os.path.join(self.tmp, "lighttpd.out"), "rb") as f:
                return f.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def log_lines(self, provider, text=None):
        """Request log lines of provider: 'provider=<p>' and 'outcome='."""
        text = self.errorlog() if text is None else text
        return [l for l in text.splitlines()
                if "provider=%s" % provider in l and "outcome=" in l]

    def sanitizer_reports(self):
        text = self.errorlog() + self.startup_output()
        return [m for m in SANITIZER_MARKERS if m in text]


_SUBREAPER = []


def become_subreaper():
    """Make this process the reaper of lighttpd's orphaned FastCGI children
    (Linux PR_SET_CHILD_SUBREAPER), so they can be waited for, not left as
    zombies.  Best effort."""
    if _SUBREAPER:
        return
    _SUBREAPER.append(True)
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except Exception:  # noqa: BLE001
        pass


def _reap(pid):
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
        return st[st.rindex(")") + 2] != "Z"
    except (OSError, ValueError, IndexError):
        return False


def default_secret(provider):
    if provider == "standard":
        return standard_secret()
    if provider == "stripe":
        return "whsec_" + os.urandom(16).hex()
    if provider == "asaas":
        # 32-255 chars, no spaces (Asaas token rules)
        return "ih" + os.urandom(20).hex()
    return os.urandom(16).hex()


class Servers:
    """Lazily started servers, all cleaned up at exit (even on errors)."""

    def __init__(self):
        self.all = []

    def add(self, server):
        self.all.append(server)
        return server

    def cleanup(self):
        for s in self.all:
            with contextlib.suppress(Exception):
                s.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cleanup()
        return False


def install_signal_cleanup(servers):
    """Turn SIGTERM/SIGINT/SIGHUP into SystemExit so 'with Servers()' cleans up."""
    def handler(signum, _frame):
        raise SystemExit(128 + signum)
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, handler)


def parallel(n, fn, timeout=60):
    """Run fn(i) for i in range(n) on n threads released together."""
    barrier = threading.Barrier(n)
    results = [None] * n

    def worker(i):
        try:
            barrier.wait(timeout=10)
            results[i] = fn(i)
        except Exception as e:  # noqa: BLE001
            results[i] = e

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.1, deadline - time.monotonic()))
    return results


# ---------------------------------------------------------------- Apache

APACHE_CONF_DIR = os.path.join(REPO, "www-config", "apache")
APACHE_MODULES = "/usr/lib/apache2/modules"


def apache_quote(s):
    """An Apache configuration argument in double quotes."""
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def env_file_text(d):
    """NAME=value lines (IDEMHOOK_CONFIG format)."""
    return "".join("%s=%s\n" % (k, v) for k, v in d.items())


class ApacheServer(Server):
    """A real Apache (apache2 -D FOREGROUND) serving the shipped
    www-config/apache files unchanged; only the top-level httpd.conf, which
    a user already has, is generated.

    mode:
      "fcgid"  shared hosting: <docroot>/hooks/.htaccess = fcgid.htaccess,
               the programs copied next to it, settings through SetEnv in
               the document root's own .htaccess (IDEMHOOK_CONFIG file).
      "cgi"    the same with cgi.htaccess under mod_cgid (plain CGI).
      "vhost"  vhost.conf included from httpd.conf with Define lines for
               the program directory (bin), the settings file and the DB;
               settings reach the programs through FcgidInitialEnv.
    Secrets, env and provider_env go into one IDEMHOOK_CONFIG file
    (provider_env with the IDEMHOOK_<P>_ names, which are global anyway).
    max_request_len: the host's FcgidMaxRequestLen for "fcgid" (it is not
    allowed in .htaccess); None leaves mod_fcgid's default of 131072
    bytes. Not used for "vhost", whose vhost.conf sets it.
    allow_override: the document root's AllowOverride arguments (default
    All), e.g. the exact line the README asks a host for.
    setenv: {NAME: value} extra SetEnv lines (request parameters under
    FastCGI, environment under CGI) in the docroot .htaccess ("fcgid",
    "cgi") or in the <Directory> of the programs ("vhost").

    Apache started as root runs its children as www-data: the temporary
    tree is made reachable by that user and the store's parent directory
    is owned by it (the receiver itself creates the DB directory 0700).
    """

    USER = server_user()

    def __init__(self, bin, mode="fcgid", setenv=None, max_request_len=33554432,
                 allow_override="All", **kw):
        if mode not in ("fcgid", "cgi", "vhost"):
            raise HarnessError("unknown Apache mode %r" % mode)
        self.mode = mode
        self.setenv = dict(setenv or {})
        self.max_request_len = max_request_len
        self.allow_override = allow_override
        kw.setdefault("name", "apache-" + mode)
        db = kw.pop("db", None)
        Server.__init__(self, staged_programs(bin), **kw)
        os.chmod(self.tmp, 0o755)
        self.store_dir = os.path.join(self.tmp, "store")
        self.db = db or os.path.join(self.store_dir, "data", "events.db")
        self.env_file = os.path.join(self.tmp, "etc", "idemhook.env")
        self.docroot = os.path.join(self.tmp, "www")
        self.hooks_dir = os.path.join(self.docroot, "hooks")
        self.errorlog_path = os.path.join(self.tmp, "error.log")

    def has_provider(self, p):
        return os.path.exists(os.path.join(self.bin, p + ".fcgi"))

    def _owner(self):
        import pwd
        pw = pwd.getpwnam(self.USER)
        return pw.pw_uid, pw.pw_gid

    def preflight(self):
        progs = self.bin if self.mode == "vhost" else self.hooks_dir
        needs = [(os.path.join(progs, p + ".fcgi"), "rx") for p in self.providers]
        needs += [(self.env_file, "r")] + self._store_needs()
        self._reach(needs)

    def _prepare_tree(self):
        uid, gid = self._owner()
        for d in ("www", "etc", "fcgid", "run"):
            os.makedirs(os.path.join(self.tmp, d), exist_ok=True)
            os.chmod(os.path.join(self.tmp, d), 0o755)
        os.makedirs(self.store_dir, exist_ok=True)
        os.chown(self.store_dir, uid, gid)
        os.chmod(self.store_dir, 0o700)
        os.chown(os.path.join(self.tmp, "fcgid"), uid, gid)
        # The settings file: mode 0600, owned by the user the programs run as.
        settings = {"IDEMHOOK_DB": self.db}
        for p in self.providers:
            settings[secret_env(p)] = self.secrets[p]
        settings.update(self.env)
        for p in self.providers:
            settings.update(self.provider_env.get(p) or {})
        with open(self.env_file, "w") as f:
            f.write("# generated by tests/e2e/harness.py\n" + env_file_text(settings))
        os.chown(self.env_file, uid, gid)
        os.chmod(self.env_file, 0o600)
        if self.mode == "vhost":
            return
        os.makedirs(self.hooks_dir, exist_ok=True)
        os.chmod(self.hooks_dir, 0o755)
        shipped = os.path.join(APACHE_CONF_DIR, "%s.htaccess" % self.mode)
        shutil.copyfile(shipped, os.path.join(self.hooks_dir, ".htaccess"))
        for p in self.providers:
            dst = os.path.join(self.hooks_dir, p + ".fcgi")
            if not os.path.exists(dst):
                link_or_copy(os.path.join(self.bin, p + ".fcgi"), dst)
        # The document root's own .htaccess: the site's settings.
        lines = ["# the site's settings (generated by tests/e2e/harness.py)",
                 "SetEnv IDEMHOOK_CONFIG %s" % apache_quote(self.env_file)]
        lines += ["SetEnv %s %s" % (k, apache_quote(v)) for k, v in self.setenv.items()]
        with open(os.path.join(self.docroot, ".htaccess"), "w") as f:
            f.write("\n".join(lines) + "\n")

    def write_conf(self, port):
        self._prepare_tree()
        t = self.tmp
        mods = ["mpm_event", "authz_core", "mime", "env", "rewrite", "alias"]
        mods.append("cgid" if self.mode == "cgi" else "fcgid")
        lines = ["# generated by tests/e2e/harness.py: the server's own httpd.conf",
                 "ServerRoot %s" % apache_quote(t)]
        lines += ["LoadModule %s_module %s" % (m, apache_quote(
            os.path.join(APACHE_MODULES, "mod_%s.so" % m))) for m in mods]
        lines += [
            "Listen 127.0.0.1:%d" % port,
            "ServerName 127.0.0.1",
            "User %s" % self.USER,
            "Group %s" % server_group(),
            "PidFile %s" % apache_quote(os.path.join(t, "run", "httpd.pid")),
            "ErrorLog %s" % apache_quote(self.errorlog_path),
            "LogLevel warn",
            "TypesConfig /etc/mime.types",
            "KeepAlive Off",
            "Timeout 60",
            "StartServers 1",
            "DocumentRoot %s" % apache_quote(self.docroot),
            "<Directory />",
            "  AllowOverride None",
            "  Require all denied",
            "</Directory>",
            "<Directory %s>" % apache_quote(self.docroot),
            "  AllowOverride %s" % self.allow_override,
            "  Options None",
            "  Require all granted",
            "</Directory>",
            '<FilesMatch "^\\.ht">',
            "  Require all denied",
            "</FilesMatch>",
        ]
        passenv = [k for k in SANITIZER_ENV if k in os.environ]
        if self.mode == "cgi":
            lines.append("ScriptSock %s" % apache_quote(os.path.join(t, "run", "cgisock")))
            if passenv:
                lines.append("PassEnv " + " ".join(passenv))
        else:
            lines += ["FcgidIPCDir %s" % apache_quote(os.path.join(t, "fcgid")),
                      "FcgidProcessTableFile %s" % apache_quote(
                          os.path.join(t, "fcgid", "shm"))]
            lines += ["FcgidInitialEnv %s %s" % (k, apache_quote(os.environ[k]))
                      for k in passenv]
            if self.max_request_len is not None and self.mode != "vhost":
                lines.append("FcgidMaxRequestLen %d" % self.max_request_len)
        if self.mode == "vhost":
            lines += ["Define IDEMHOOK_LIBEXEC %s" % self.bin,
                      "Define IDEMHOOK_ENV_FILE %s" % self.env_file,
                      "Define IDEMHOOK_DB_FILE %s" % self.db,
                      "Include %s" % apache_quote(os.path.join(APACHE_CONF_DIR, "vhost.conf"))]
            if self.setenv:
                lines.append("<Directory %s>" % apache_quote(self.bin))
                lines += ["  SetEnv %s %s" % (k, apache_quote(v))
                          for k, v in self.setenv.items()]
                lines.append("</Directory>")
        path = os.path.join(t, "httpd.conf")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    DAEMON = "apache2"
    OUT_FILES = ("apache.out", "error.log")

    def daemon_argv(self, conf):
        return ["apache2", "-f", conf, "-D", "FOREGROUND"]

    def daemon_env(self):
        env = daemon_env(("TZ",), LANG="C")
        env.update(self.lighttpd_env)
        return env

    def started(self):
        pass

    def _group_pids(self, pgid):
        out = []
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                if os.getpgid(int(d)) == pgid:
                    out.append(int(d))
            except OSError:
                continue
        return out

    def _kill(self):
        """SIGTERM to Apache's parent (a graceful stop that also ends the
        mod_fcgid programs and the cgid daemon), then SIGKILL to whatever is
        left in its process group."""
        p = self.proc
        if p is None:
            return
        pgid = p.pid
        with contextlib.suppress(ProcessLookupError):
            os.kill(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=5)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            left = [pid for pid in self._group_pids(pgid) if _alive(pid)]
            if not left:
                break
            for pid in left:
                _reap(pid)
            time.sleep(0.1)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        for pid in self._group_pids(pgid):
            _reap(pid)
        self.proc = None

    def stderr_text(self):
        """Apache's own stdout/stderr (the programs' fd 2 is the error log)."""
        try:
            with open(os.path.join(self.tmp, "apache.out"), "rb") as f:
                return f.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def url(self, provider):
        return "/hooks/" + provider


# ---------------------------------------------------------------- nginx

NGINX_CONF_DIR = os.path.join(REPO, "www-config", "nginx")


class NginxServer(Server):
    """nginx in front of one spawn-fcgi'd program per provider, with the
    shipped www-config/nginx/idemhook.conf included unchanged; the
    top-level nginx.conf (a server { } that sets $idemhook_run and
    $idemhook_config) is generated. Secrets, env and provider_env go into
    the IDEMHOOK_CONFIG file, named by idemhook.conf's fastcgi_param
    (a request parameter). (A fastcgi_param in the server { } would not
    reach the programs: nginx inherits fastcgi_param only into locations
    that define none.) Workers and programs run as www-data, like the Apache servers."""

    USER = server_user()

    def __init__(self, bin, **kw):
        kw.setdefault("name", "nginx")
        db = kw.pop("db", None)
        Server.__init__(self, staged_programs(bin), **kw)
        os.chmod(self.tmp, 0o755)
        self.store_dir = os.path.join(self.tmp, "store")
        self.db = db or os.path.join(self.store_dir, "data", "events.db")
        self.env_file = os.path.join(self.tmp, "etc", "idemhook.env")
        self.errorlog_path = os.path.join(self.tmp, "error.log")
        self.spawned = []

    def has_provider(self, p):
        return os.path.exists(os.path.join(self.bin, p + ".fcgi"))

    def write_conf(self, port):
        import pwd
        pw = pwd.getpwnam(self.USER)
        t = self.tmp
        for d in ("etc", "run", "temp"):
            os.makedirs(os.path.join(t, d), exist_ok=True)
            os.chmod(os.path.join(t, d), 0o755)
        os.chown(os.path.join(t, "run"), pw.pw_uid, pw.pw_gid)
        os.makedirs(self.store_dir, exist_ok=True)
        os.chown(self.store_dir, pw.pw_uid, pw.pw_gid)
        os.chmod(self.store_dir, 0o700)
        settings = {"IDEMHOOK_DB": self.db}
        for p in self.providers:
            settings[secret_env(p)] = self.secrets[p]
        settings.update(self.env)
        for p in self.providers:
            settings.update(self.provider_env.get(p) or {})
        with open(self.env_file, "w") as f:
            f.write(env_file_text(settings))
        os.chown(self.env_file, pw.pw_uid, pw.pw_gid)
        os.chmod(self.env_file, 0o600)
        shutil.copyfile("/etc/nginx/fastcgi_params", os.path.join(t, "fastcgi_params"))
        temp = os.path.join(t, "temp")
        lines = [
            "# generated by tests/e2e/harness.py",
            "daemon off;",
            "user %s;" % self.USER,
            "worker_processes 1;",
            "pid %s;" % os.path.join(t, "nginx.pid"),
            "error_log %s warn;" % self.errorlog_path,
            "events { worker_connections 256; }",
            "http {",
            "  access_log off;",
            "  client_body_temp_path %s/body;" % temp,
            "  fastcgi_temp_path %s/fastcgi;" % temp,
            "  proxy_temp_path %s/proxy;" % temp,
            "  uwsgi_temp_path %s/uwsgi;" % temp,
            "  scgi_temp_path %s/scgi;" % temp,
            "  server {",
            "    listen 127.0.0.1:%d;" % port,
            "    set $idemhook_run %s;" % os.path.join(t, "run"),
            "    set $idemhook_config %s;" % self.env_file,
        ]
        lines += ["    include %s;" % os.path.join(NGINX_CONF_DIR, "idemhook.conf"),
                  "  }", "}"]
        path = os.path.join(t, "nginx.conf")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    OUT_FILES = ("nginx.out", "error.log", "programs.err")

    def _spawn(self):
        env = daemon_env(("TZ",))
        run = os.path.join(self.tmp, "run")
        for p in self.providers:
            sock = os.path.join(run, p + ".sock")
            with contextlib.suppress(OSError):
                os.unlink(sock)
            out = open(os.path.join(self.tmp, "programs.err"), "ab")
            try:
                proc = subprocess.Popen(
                    ["spawn-fcgi", "-n", "-s", sock, "-M", "0660"]
                    + (["-u", self.USER, "-g", self.USER, "-U", self.USER, "-G", self.USER]
                       if IS_ROOT else [])
                    + ["--", os.path.join(self.bin, p + ".fcgi")],
                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                    env=env, start_new_session=True, cwd=self.tmp)
            finally:
                out.close()
            self.spawned.append(proc)
            deadline = time.monotonic() + START_TIMEOUT
            while not os.path.exists(sock) and time.monotonic() < deadline:
                if proc.poll() is not None:
                    raise HarnessError("spawn-fcgi for %s exited: %s"
                                       % (p, self.stderr_text()[-500:]))
                time.sleep(0.05)

    def start(self):
        if self.proc is not None:
            return self
        become_subreaper()
        port = free_port()
        conf = self.write_conf(port)
        self._reach([(os.path.join(self.bin, p + ".fcgi"), "rx") for p in self.providers]
                    + [(self.env_file, "r"), (os.path.join(self.tmp, "run"), "wx")]
                    + self._store_needs())
        self._spawn()
        out = open(os.path.join(self.tmp, self.OUT_FILES[0]), "ab")
        try:
            self.proc = subprocess.Popen(
                ["nginx", "-c", conf, "-p", self.tmp], stdin=subprocess.DEVNULL,
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                cwd=self.tmp)
        finally:
            out.close()
        self.port = port
        if not wait_port(port, self.proc, time.monotonic() + START_TIMEOUT):
            text = self.startup_output()
            self._kill()
            raise HarnessError("nginx did not start: %s" % text.strip()[-2000:])
        return self


    def _kill(self):
        procs = ([self.proc] if self.proc is not None else []) + self.spawned
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    p.wait(timeout=5)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
        self.proc = None
        self.spawned = []

    def stderr_text(self):
        """The programs' fd 2 (spawn-fcgi's output); the FastCGI stderr
        stream goes to nginx's error_log ("FastCGI sent in stderr")."""
        try:
            with open(os.path.join(self.tmp, "programs.err"), "rb") as f:
                return f.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
