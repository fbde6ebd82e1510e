"""Server: a real lighttpd serving the shipped www-config/lighttpd files
unchanged, from a generated top-level config; the base of the Apache and
nginx launchers, with the HTTP client and the store and log readers every
server shares."""

import contextlib
import http.client
import os
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time
import shutil

from ..common import (HTTP_TIMEOUT, PROVIDERS, REPO, SANITIZER_ENV,
                      SANITIZER_MARKERS, SECRET_VAR, START_TIMEOUT,
                      HarnessError, secret_env)
from ..http import Response, free_port, wait_port
from ..procs import (_alive, _children_of, _reap, become_subreaper,
                     daemon_env, reach_problem, wait_or_kill_group)
from ..sign import default_secret
from ..store import PgError, db_connect, db_exists, is_pg, pg_backend, pg_new_db

CONF_DIR = os.path.join(REPO, "www-config", "lighttpd")


def conf_str(s):
    """A lighttpd string literal."""
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def console_conf(settings, receivers_settings):
    """The lighttpd lines that serve the shipped hooks-console.conf with
    the console's own settings file, then give the receivers theirs back:
    hooks-console.conf passes var.idemhook_config as it stands where it
    is included."""
    return ["var.idemhook_config := %s" % conf_str(settings),
            "include %s" % conf_str(os.path.join(CONF_DIR, "hooks-console.conf")),
            "var.idemhook_config := %s" % conf_str(receivers_settings)]


def conf_array(d):
    if not d:
        return "()"
    return "(\n" + "".join("  %s => %s,\n" % (conf_str(k), conf_str(v))
                           for k, v in d.items()) + ")"


def conf_list(xs):
    return "(" + ", ".join(conf_str(x) for x in xs) + ")"


def env_file_text(d):
    """NAME=value lines (IDEMHOOK_CONFIG format)."""
    return "".join("%s=%s\n" % (k, v) for k, v in d.items())


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

    def as_server_user(self, db):
        """For a server whose programs run as server_user() (Apache,
        nginx): its folder open to that user, the store (default
        <tmp>/store/data/events.db) and the settings file in it."""
        os.chmod(self.tmp, 0o755)
        self.store_dir = os.path.join(self.tmp, "store")
        self.db = db or os.path.join(self.store_dir, "data", "events.db")
        self.env_file = os.path.join(self.tmp, "etc", "idemhook.env")
        self.errorlog_path = os.path.join(self.tmp, "error.log")

    def settings(self):
        """Every setting as one IDEMHOOK_CONFIG file holds them (Apache,
        nginx): the store, each secret, env, then each provider_env (its
        IDEMHOOK_<P>_ names are global anyway)."""
        settings = {"IDEMHOOK_DB": self.db}
        for p in self.providers:
            settings[secret_env(p)] = self.secrets[p]
        settings.update(self.env)
        for p in self.providers:
            settings.update(self.provider_env.get(p) or {})
        return settings

    def write_settings(self, path, uid, gid, head=""):
        """The settings file: mode 0600, owned by the user the programs
        run as."""
        with open(path, "w") as f:
            f.write(head + env_file_text(self.settings()))
        os.chown(path, uid, gid)
        os.chmod(path, 0o600)

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
            "var.idemhook_config := %s" % conf_str(self.settings_file()),
            "var.idemhook_max_procs := %d" % self.max_procs,
            "var.idemhook_env := %s" % conf_array(self.startup_env()),
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
        return self.write_lines("lighttpd.conf", lines)

    def settings_file(self):
        """The hooks files pass var.idemhook_config as IDEMHOOK_CONFIG:
        the test's own file, else an empty one of the server's, so that
        no program ever reads a settings file of this host's."""
        named = self.env.get("IDEMHOOK_CONFIG")
        if named:
            return named
        path = os.path.join(self.tmp, "etc", "empty.env")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not os.path.exists(path):
            with open(path, "w"):
                pass
            os.chmod(path, 0o644)
        return path

    def startup_env(self):
        """var.idemhook_env: the test's settings and the store, unless
        the test's own settings file names the store (the shipped hooks
        files no longer pass IDEMHOOK_DB: the file names it)."""
        env = {k: v for k, v in self.env.items() if k != "IDEMHOOK_CONFIG"}
        named = self.env.get("IDEMHOOK_CONFIG")
        in_file = False
        if named:
            try:
                with open(named) as f:
                    in_file = any(l.startswith("IDEMHOOK_DB=") for l in f)
            except OSError:
                pass
        if "IDEMHOOK_DB" not in env and not in_file:
            env["IDEMHOOK_DB"] = self.db
        return env

    def write_lines(self, name, lines):
        """Writes lines to the file name in the server's folder; returns
        its path."""
        path = os.path.join(self.tmp, name)
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
        wait_or_kill_group(p, pgid, 5)
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
            # The payload is in a table of its own (schema version 6).
            q, args = ("SELECT events.*, payloads.payload FROM events"
                       " LEFT JOIN payloads ON payloads.event = events.id"
                       " WHERE 1=1"), []
            if provider is not None:
                q += " AND events.provider=?"
                args.append(provider)
            if event_id is not None:
                q += " AND events.event_id=?"
                args.append(event_id)
            return [dict(r) for r in c.execute(q, args)]

    def count(self, provider=None):
        return len(self.rows(provider))

    def read_text(self, path):
        """The file at path (relative: in the server's folder) as text,
        undecodable bytes replaced; "" when it cannot be read."""
        try:
            with open(os.path.join(self.tmp, path), "rb") as f:
                return f.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def errorlog(self):
        return self.read_text(self.errorlog_path)

    def stderr_text(self):
        """What went to lighttpd's own stderr, which its FastCGI children
        inherit as fd 2 (lighttpd -D; a daemonized lighttpd gives them
        /dev/null).  Not server.errorlog."""
        return self.read_text("lighttpd.out")

    def log_lines(self, provider, text=None):
        """Request log lines of provider: 'provider=<p>' and 'outcome='."""
        text = self.errorlog() if text is None else text
        return [l for l in text.splitlines()
                if "provider=%s" % provider in l and "outcome=" in l]

    def sanitizer_reports(self):
        text = self.errorlog() + self.startup_output()
        return [m for m in SANITIZER_MARKERS if m in text]
