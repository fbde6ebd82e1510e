#!/usr/bin/env python3
"""Settings: changes without restarts, what a request may set, the store
location, and no core dumps.

Usage: test_settings.py BINDIR   (or IH_BIN=BINDIR test_settings.py)

1. The IDEMHOOK_CONFIG file is read again when it changes (issue 14,
   item 6), through lighttpd with two FastCGI processes and no restart:
   a same-size in-place rewrite within the same second, a rotation that
   adds a secret, an atomic replace that removes the leaked one, and a
   removed file (500, fail closed).
2. FastCGI request parameters (lighttpd setenv.add-environment, which
   reaches the program exactly as Apache SetEnv and nginx fastcgi_param
   do) cannot set an action, the mode, the store or a secret when the
   program had settings at start-up; each such request logs one line
   naming them (item 8).  A request may still name IDEMHOOK_CONFIG, but
   only a file nobody else can write.
3. IDEMHOOK_DB: a malformed PostgreSQL location, an unknown scheme and a
   relative path are refused with 500 by the receivers and with an error
   by 'idemhook init' and 'check'; nothing is created in any working
   directory and the password is never shown (item 15).  An unreachable
   PostgreSQL server is 503 with Retry-After, its password never shown.
4. Core dumps: the receivers under lighttpd and 'idemhook work' run with
   a core size limit of 0 (soft and hard), not dumpable (their /proc
   files belong to root although they run as another user), and without
   the secrets in their original environment block (item 12).  A Stripe
   receiver holds no other provider's secret, from its start-up
   environment or its settings file, anywhere in its memory (as root,
   which can read it).
"""

import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (Server, _children_of, check, check_eq,  # noqa: E402
                     program_of, sign_stripe, staged_programs, suite_main)
from cases import expect_accepted, expect_error, expect_status, one_row  # noqa: E402
import test_static as ts_static  # noqa: E402
import test_stripe as ts  # noqa: E402

STRIPE = ts.SPEC
# Enough deliveries that both FastCGI processes answer some of them.
ROUNDS = 8


def new_secret():
    return "whsec_" + os.urandom(16).hex()


def deliver(srv, secret):
    eid = STRIPE.new_id("set")
    body = STRIPE.body(eid, STRIPE.default_type)
    return ts.post_signed(srv, body, sign_stripe(secret, body)), eid


def expect_all(srv, secret, status, what):
    for i in range(ROUNDS):
        r, _ = deliver(srv, secret)
        expect_status(r, status, "%s (delivery %d)" % (what, i + 1))


def write_file(path, text):
    """Writes in place: the inode stays, as with an editor that truncates."""
    with open(path, "w") as f:
        f.write(text)


def fcgi_pids(srv, want=2, timeout=10.0):
    """The receivers lighttpd runs, once want of them have exec'd."""
    deadline = time.monotonic() + timeout
    while True:
        out = []
        for pid in _children_of(srv.proc.pid):
            if program_of(pid).endswith(".fcgi"):
                out.append(pid)
        if len(out) >= want or time.monotonic() > deadline:
            return sorted(out)
        time.sleep(0.05)


# ---------------------------------------------------------------- item 6

def config_reread(bindir, servers):
    tmp = tempfile.mkdtemp(prefix="ih-settings-")
    conf = os.path.join(tmp, "idemhook.env")
    a, b, c = new_secret(), new_secret(), new_secret()
    write_file(conf, "IDEMHOOK_STRIPE_SECRET=%s\n" % a)
    # The start-up secret is empty, so the file decides.
    srv = servers.add(Server(bindir, providers=["stripe"], name="reread",
                             secrets={"stripe": ""}, env={"IDEMHOOK_CONFIG": conf}))
    srv.secrets["stripe-a"], srv.secrets["stripe-b"], srv.secrets["stripe-c"] = a, b, c
    try:
        srv.start()
        pids = fcgi_pids(srv)
        check(len(pids) == 2, "expected 2 FastCGI processes, found %r" % pids)
        expect_all(srv, a, 200, "secret A from the file")
        expect_all(srv, b, 401, "secret B not yet in the file")

        # Same size, same inode, same second: B replaces A.
        st0 = os.stat(conf)
        write_file(conf, "IDEMHOOK_STRIPE_SECRET=%s\n" % b)
        st1 = os.stat(conf)
        check(st0.st_ino == st1.st_ino and st0.st_size == st1.st_size,
              "rewrite kept neither inode nor size")
        expect_all(srv, b, 200, "secret B after the in-place rewrite")
        expect_all(srv, a, 401, "leaked secret A after the rewrite")

        # Rotation: C is added next to B.
        write_file(conf, "IDEMHOOK_STRIPE_SECRET=%s\nIDEMHOOK_STRIPE_SECRET_2=%s\n" % (b, c))
        expect_all(srv, c, 200, "new secret C added as _2")
        expect_all(srv, b, 200, "secret B still in force during rotation")

        # Atomic replace (new inode) that removes B.
        new = conf + ".new"
        write_file(new, "IDEMHOOK_STRIPE_SECRET=%s\n" % c)
        os.rename(new, conf)
        expect_all(srv, b, 401, "secret B removed by an atomic replace")
        expect_all(srv, c, 200, "secret C after the atomic replace")

        # The file disappears: nothing is accepted, not even C.
        os.unlink(conf)
        r, _ = deliver(srv, c)
        expect_error(r, 500, "config file removed")
        check(r.json().get("error") == "bad_config", "error %r" % r.body[:200])
        check(any("bad_config" in l and "cannot_open_config" in l
                  for l in srv.log_lines("stripe")),
              "no bad_config log line for the removed file")
        write_file(conf, "IDEMHOOK_STRIPE_SECRET=%s\n" % c)
        expect_all(srv, c, 200, "file restored")

        check_eq(fcgi_pids(srv), pids, "FastCGI processes (no restart)")
        check_eq(srv.sanitizer_reports(), [], "sanitizer reports")
        log = srv.errorlog() + srv.stderr_text()
        for s in (a, b, c):
            check(s not in log, "a secret reached the log")
    finally:
        srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------- item 8

def setenv_conf(d):
    pairs = ", ".join('"%s" => "%s"' % (k, v) for k, v in d.items())
    return 'server.modules += ( "mod_setenv" )\nsetenv.add-environment = ( %s )' % pairs


def request_params_ignored(bindir, servers):
    tmp = tempfile.mkdtemp(prefix="ih-settings-")
    mark = os.path.join(tmp, "action-ran")
    other_db = os.path.join(tmp, "other", "events.db")
    sneaky = new_secret()
    params = {
        "IDEMHOOK_STRIPE_ACTION": "* touch %s" % mark,
        "IDEMHOOK_ACTION": "* touch %s" % mark,
        "IDEMHOOK_MODE": "worker",
        "IDEMHOOK_DB": other_db,
        "IDEMHOOK_STRIPE_SECRET_2": sneaky,
    }
    srv = servers.add(Server(bindir, providers=["stripe"], name="params",
                             extra_conf=setenv_conf(params)))
    srv.secrets["stripe-sneaky"] = sneaky
    try:
        srv.start()
        r, eid = deliver(srv, srv.secrets["stripe"])
        expect_accepted(r, "delivery with request parameters set")
        one_row(srv, STRIPE, eid)
        check(not os.path.exists(other_db) and not os.path.exists(os.path.dirname(other_db)),
              "IDEMHOOK_DB from a request parameter was used")
        # MODE=worker from the request would leave the event 'received'.
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            row = one_row(srv, STRIPE, eid)
            if row["status"] == "done":
                break
            time.sleep(0.1)
        check_eq(row["status"], "done", "status (processed after the answer, not worker mode)")
        time.sleep(0.5)
        check(not os.path.exists(mark), "an action from a request parameter ran")

        r, eid2 = deliver(srv, sneaky)
        expect_status(r, 401, "secret given only by a request parameter")

        lines = [l for l in srv.errorlog().splitlines() if "ignored_request_settings=" in l]
        check_eq(len(lines), 2, "ignored-settings log lines for 2 requests")
        for name in params:
            check(name in lines[0], "%s not named in %r" % (name, lines[0]))
        log = srv.errorlog() + srv.stderr_text()
        check(sneaky not in log and other_db not in log and mark not in log,
              "a request parameter's value reached the log")
        check_eq(srv.sanitizer_reports(), [], "sanitizer reports")
    finally:
        srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def request_config_file(bindir, servers):
    """IDEMHOOK_CONFIG may come from a request, but only naming a file
    that nobody but root or the program's user can write."""
    tmp = tempfile.mkdtemp(prefix="ih-settings-")
    conf = os.path.join(tmp, "idemhook.env")
    secret = new_secret()
    write_file(conf, "IDEMHOOK_STRIPE_SECRET=%s\n" % secret)
    os.chmod(conf, 0o600)
    srv = servers.add(Server(bindir, providers=["stripe"], name="reqconf",
                             secrets={"stripe": ""},
                             extra_conf=setenv_conf({"IDEMHOOK_CONFIG": conf})))
    srv.secrets["stripe-file"] = secret
    try:
        srv.start()
        r, _ = deliver(srv, secret)
        expect_accepted(r, "secret from the file named by a request parameter")
        check(not any("ignored_request_settings" in l for l in srv.errorlog().splitlines()),
              "IDEMHOOK_CONFIG from a request was reported as ignored")
        os.chmod(conf, 0o666)
        r, _ = deliver(srv, secret)
        expect_error(r, 500, "request-named file writable by others")
        check(any("writable_only_by_its_owner" in l for l in srv.log_lines("stripe")),
              "no log line saying why the file was refused")
        os.chmod(conf, 0o600)
        r, _ = deliver(srv, secret)
        expect_accepted(r, "file protected again")
    finally:
        srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------- item 15

BAD_DBS = (
    ("postgresql:h/db", "a URI starting with postgresql://"),
    ("mysql://u:secretpw@h/db", "unknown scheme"),
    ("rel/events.db", "relative path"),
)


def listing(d):
    try:
        return sorted(os.listdir(d))
    except OSError:
        return []


def cwd_of(pid):
    """A process's working directory.  Not root, a non-dumpable process
    hides it; lighttpd starts its programs in their own folder."""
    try:
        return os.readlink("/proc/%d/cwd" % pid)
    except PermissionError:
        return os.path.dirname(program_of(pid))


def receiver_bad_db(bindir, servers, db, why):
    srv = servers.add(Server(bindir, providers=["stripe"], name="baddb", db=db))
    try:
        srv.start()
        pids = fcgi_pids(srv)
        check(pids, "no FastCGI process")
        cwds = {cwd_of(p) for p in pids}
        before = {d: listing(d) for d in cwds | {srv.tmp}}
        r, _ = deliver(srv, srv.secrets["stripe"])
        expect_error(r, 500, "IDEMHOOK_DB=%s" % db)
        check_eq(r.json().get("error"), "bad_config", "error")
        lines = [l for l in srv.log_lines("stripe") if "bad_config" in l]
        check_eq(len(lines), 1, "bad_config log lines")
        check(why.replace(" ", "_") in lines[0], "log line %r lacks %r" % (lines[0], why))
        for d, names in before.items():
            check_eq(listing(d), names, "entries of the working directory %s" % d)
        text = srv.errorlog() + srv.stderr_text() + r.body.decode("utf-8", "replace")
        check("secretpw" not in text, "the password reached the log or the body")
        if "secretpw" in db:
            check("***" in lines[0], "the log line does not show the redacted location")
    finally:
        srv.stop()


def command_bad_db(bindir, db, why):
    idemhook = os.path.join(bindir, "idemhook")
    cwd = tempfile.mkdtemp(prefix="ih-settings-cwd-")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
        if k in os.environ:
            env[k] = os.environ[k]
    try:
        runs = [(["init"], dict(env, IDEMHOOK_DB=db), 2),
                (["--db", db, "init"], env, 2),
                (["check", "--provider", "stripe"],
                 dict(env, IDEMHOOK_DB=db, IDEMHOOK_STRIPE_SECRET=new_secret()), 1)]
        for argv, e, want in runs:
            p = subprocess.run([idemhook] + argv, cwd=cwd, env=e, capture_output=True,
                               timeout=60)
            out = (p.stdout + p.stderr).decode("utf-8", "replace")
            check_eq(p.returncode, want, "exit status of idemhook %s (%s)" % (argv, out.strip()))
            check(why in out, "idemhook %s: no %r in %r" % (argv, why, out))
            check("secretpw" not in out, "idemhook %s printed the password" % argv)
            check_eq(os.listdir(cwd), [], "files created by idemhook %s" % argv)
    finally:
        shutil.rmtree(cwd, ignore_errors=True)


# A PostgreSQL store this build takes, on a server nobody can reach: the
# password is in the URI and must never be printed.
UNREACHABLE_PG = (
    "postgresql://u:secretpw@h.invalid/db?connect_timeout=2",
    "postgres://h.invalid/db?user=u&password=secretpw&connect_timeout=2",
)


def receiver_unreachable_pg(bindir, servers, db):
    srv = servers.add(Server(bindir, providers=["stripe"], name="nopg", db=db))
    try:
        srv.start()
        r, _ = deliver(srv, srv.secrets["stripe"])
        check_eq(r.status, 503, "status while the server is unreachable")
        check(r.header("Retry-After"), "503 without Retry-After")
        check_eq(r.json().get("error"), "store_unavailable", "error")
        text = srv.errorlog() + srv.stderr_text() + r.body.decode("utf-8", "replace")
        check("secretpw" not in text, "the password reached the log or the body")
    finally:
        srv.stop()


def command_unreachable_pg(bindir, db):
    idemhook = os.path.join(bindir, "idemhook")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IDEMHOOK_DB": db,
           "IDEMHOOK_STRIPE_SECRET": new_secret()}
    for argv in (["init"], ["list"], ["stats"], ["check", "--provider", "stripe"]):
        p = subprocess.run([idemhook] + argv, env=env, capture_output=True, timeout=60)
        out = (p.stdout + p.stderr).decode("utf-8", "replace")
        check_eq(p.returncode, 1, "exit status of idemhook %s (%s)" % (argv, out.strip()))
        check("cannot connect to the store" in out or "cannot open the store" in out,
              "idemhook %s: no reason in %r" % (argv, out))
        check("secretpw" not in out, "idemhook %s printed the password" % argv)


def command_redacts_good_db(bindir):
    """init prints the location it created, through the redaction helper;
    --db wins over a refused IDEMHOOK_DB."""
    d = tempfile.mkdtemp(prefix="ih-settings-")
    try:
        db = os.path.join(d, "events.db")
        env = dict(os.environ, IDEMHOOK_DB="rel/events.db")
        env.pop("IDEMHOOK_CONFIG", None)
        p = subprocess.run([os.path.join(bindir, "idemhook"), "--db", db, "init"],
                           capture_output=True, timeout=60, env=env, cwd=d)
        check_eq(p.returncode, 0, "idemhook init exit status (%r)" % p.stderr)
        check("rel" not in os.listdir(d), "the relative IDEMHOOK_DB was created")
        check(("store %s ready" % db) in p.stdout.decode(), "init output %r" % p.stdout)
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ---------------------------------------------------------------- item 12

def core_limits(pid):
    with open("/proc/%d/limits" % pid) as f:
        for line in f:
            if line.startswith("Max core file size"):
                parts = line.split()
                return parts[4], parts[5]
    raise AssertionError("no core line in /proc/%d/limits" % pid)


def receivers_no_core(bindir, servers):
    # The console's secrets, given to the receivers too (one environment
    # for every program): wiped from their start-up block (issue 37 item 8).
    console = {"IDEMHOOK_CONSOLE_KEY": "ck-" + os.urandom(16).hex(),
               "IDEMHOOK_CONSOLE_PASSWORD_HASH": "$6$" + os.urandom(8).hex() + "$" +
               os.urandom(20).hex()}
    srv = servers.add(Server(bindir, providers=["stripe"], name="core", env=console))
    try:
        srv.start()
        r, _ = deliver(srv, srv.secrets["stripe"])
        expect_accepted(r)
        pids = fcgi_pids(srv)
        check(len(pids) == 2, "expected 2 FastCGI processes, found %r" % pids)
        for pid in pids:
            check_eq(core_limits(pid), ("0", "0"), "core size limit (soft, hard) of %d" % pid)
            try:
                with open("/proc/%d/environ" % pid, "rb") as f:
                    environ = f.read()
            except PermissionError:
                # Not root: a non-dumpable process hides it from its own user.
                check(os.geteuid() != 0, "root cannot read /proc/%d/environ" % pid)
                continue
            check(srv.secrets["stripe"].encode() not in environ,
                  "the secret is still in the environment block of %d" % pid)
            for k, v in console.items():
                check(v.encode() not in environ,
                      "%s is still in the environment block of %d" % (k, pid))
    finally:
        srv.stop()


def memory_holds(pid, needles):
    """The needles (bytes) found anywhere in pid's readable memory: every
    readable mapping up to 256 MiB (ASan's shadow and reserved ranges are
    larger, and hold no heap data)."""
    found = set()
    with open("/proc/%d/maps" % pid) as maps, open("/proc/%d/mem" % pid, "rb", 0) as mem:
        for line in maps:
            parts = line.split()
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            if "r" not in parts[1] or hi - lo > 256 << 20 or parts[-1] in ("[vvar]", "[vsyscall]"):
                continue
            try:
                mem.seek(lo)
                data = mem.read(hi - lo)
            except (OSError, ValueError, OverflowError):
                continue
            found.update(n for n in needles if n in data)
    return found


def own_secrets_scan(bin, servers, env_too):
    """Starts Stripe receivers from bin given the GitHub secret in their
    start-up environment and the Shopify secret in their settings file,
    delivers, and checks that no receiver holds either secret anywhere in
    its memory (only the Shopify one unless env_too), while each holds its
    own (the control that the memory was read)."""
    tmp = tempfile.mkdtemp(prefix="ih-settings-own-")
    github = ("gh-other-" + os.urandom(12).hex()).encode()
    shopify = ("shpss_other-" + os.urandom(12).hex()).encode()
    # Its own provider's API keys too: only idemhook catch-up reads them.
    key_file = ("rk_live_file-" + os.urandom(12).hex()).encode()
    key_env = ("rk_live_env-" + os.urandom(12).hex()).encode()
    # The console's secrets: only the console needs them (issue 37 item 8).
    console_key = ("ck-file-" + os.urandom(12).hex()).encode()
    console_hash = ("$6$envsalt$" + os.urandom(20).hex()).encode()
    try:
        os.chmod(tmp, 0o755)
        cfg = os.path.join(tmp, "idemhook.env")
        with open(cfg, "w") as f:
            f.write("IDEMHOOK_SHOPIFY_SECRET=%s\n" % shopify.decode())
            f.write("IDEMHOOK_STRIPE_API_KEY=%s\n" % key_file.decode())
            f.write("IDEMHOOK_CONSOLE_KEY=%s\n" % console_key.decode())
        os.chmod(cfg, 0o600)
        srv = servers.add(Server(bin, providers=["stripe"], name="own-secrets",
                                 env={"IDEMHOOK_CONFIG": cfg,
                                      "IDEMHOOK_GITHUB_SECRET": github.decode(),
                                      "IDEMHOOK_STRIPE_API_KEY": key_env.decode(),
                                      "IDEMHOOK_CONSOLE_PASSWORD_HASH":
                                      console_hash.decode()}))
        try:
            srv.start()
            for _ in range(ROUNDS):
                r, _ = deliver(srv, srv.secrets["stripe"])
                expect_accepted(r)
            own = srv.secrets["stripe"].encode()
            pids = fcgi_pids(srv)
            check(pids, "no receiver found")
            seen = {pid: memory_holds(pid, (own, github, shopify, key_file, key_env,
                                            console_key, console_hash))
                    for pid in pids}
            check(all(own in f for f in seen.values()),
                  "the control failed: the Stripe secret not found in the memory of %r"
                  % [pid for pid, f in seen.items() if own not in f])
            names = {github: "GitHub (start-up environment)",
                     shopify: "Shopify (settings file)",
                     key_file: "its API key (settings file)",
                     key_env: "its API key (start-up environment)",
                     console_key: "the console's key (settings file)",
                     console_hash: "the console's password hash (start-up environment)"}
            leaks = ["%d: %s" % (pid, names[n])
                     for pid, f in seen.items() for n in f
                     if n in (shopify, key_file, console_key) or
                     (n in (github, key_env, console_hash) and env_too)]
            check(not leaks, "%s: other providers' secrets in a Stripe receiver's memory: %s"
                  % (bin, "; ".join(leaks)))
        finally:
            srv.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def own_secrets_only(bindir, servers):
    """A receiver keeps only its own provider's secrets (item 12).  The
    sanitizers' runtime keeps a copy of the start-up environment of its
    own (read from /proc/self/environ for its options), which no program
    can wipe: the start-up environment is checked on the static build
    (no sanitizer, BINDIR/static, which make check builds), the settings
    file on both."""
    own_secrets_scan(bindir, servers, env_too=False)
    own_secrets_scan(ts_static.static_dir(bindir), servers, env_too=True)


def wait_root_owned(pid, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.stat("/proc/%d/status" % pid).st_uid == 0:
            return True
        time.sleep(0.05)
    return False


def as_nobody():
    nb = pwd.getpwnam("nobody")
    os.setgroups([])
    os.setgid(nb.pw_gid)
    os.setuid(nb.pw_uid)


def run_as_nobody(argv, stdin, tmp):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "IDEMHOOK_DB": os.path.join(tmp, "events.db"),
           "IDEMHOOK_STRIPE_SECRET": new_secret()}
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
        if k in os.environ:
            env[k] = os.environ[k]
    out = open(os.path.join(tmp, "out.txt"), "wb")
    try:
        return subprocess.Popen(argv, stdin=stdin, stdout=out, stderr=subprocess.STDOUT,
                                env=env, cwd=tmp, preexec_fn=as_nobody), env
    finally:
        out.close()


def check_not_dumpable(p, env, what):
    nobody = pwd.getpwnam("nobody").pw_uid
    with open("/proc/%d/status" % p.pid) as f:
        uids = [l for l in f if l.startswith("Uid:")][0].split()[1:]
    check(all(int(u) == nobody for u in uids), "%s does not run as nobody: %r" % (what, uids))
    check(wait_root_owned(p.pid), "%s's /proc files are not root's: it is dumpable" % what)
    check_eq(core_limits(p.pid), ("0", "0"), "%s core size limit (soft, hard)" % what)
    with open("/proc/%d/environ" % p.pid, "rb") as f:
        check(env["IDEMHOOK_STRIPE_SECRET"].encode() not in f.read(),
              "%s keeps the secret in its environment block" % what)


def stop(p):
    """SIGTERM to a program started by run_as_nobody (or None), then
    SIGKILL if it has not exited within 10 s."""
    if p is None:
        return
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def fastcgi_not_dumpable(bindir):
    """stripe.fcgi as a FastCGI program (a listening socket on fd 0), run
    as nobody as a web server would: its /proc files turn root's."""
    tmp = tempfile.mkdtemp(prefix="ih-settings-")
    os.chmod(tmp, 0o777)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    p = None
    try:
        sock.bind(os.path.join(tmp, "stripe.sock"))
        sock.listen(4)
        p, env = run_as_nobody([os.path.join(bindir, "stripe.fcgi")], sock.fileno(), tmp)
        time.sleep(0.2)
        check(p.poll() is None, "stripe.fcgi exited: %r" % open(os.path.join(tmp, "out.txt")).read())
        check_not_dumpable(p, env, "stripe.fcgi")
    finally:
        stop(p)
        sock.close()
        shutil.rmtree(tmp, ignore_errors=True)


def command_not_dumpable(bindir):
    tmp = tempfile.mkdtemp(prefix="ih-settings-")
    os.chmod(tmp, 0o777)
    p = None
    try:
        p, env = run_as_nobody([os.path.join(bindir, "idemhook"), "work", "--interval", "1"],
                               subprocess.DEVNULL, tmp)
        time.sleep(0.2)
        check(p.poll() is None, "idemhook work exited: %r" % open(os.path.join(tmp, "out.txt")).read())
        check_not_dumpable(p, env, "idemhook work")
    finally:
        stop(p)
        shutil.rmtree(tmp, ignore_errors=True)


def run_cases(tap, bindir, servers):
    t = tap.run
    t("settings: IDEMHOOK_CONFIG re-read on change (same-size same-second rewrite, "
      "rotation, atomic replace, removal -> 500), no restart", config_reread, bindir, servers)
    t("settings: request parameters cannot set actions, mode, store or secrets; "
      "one log line per request", request_params_ignored, bindir, servers)
    t("settings: IDEMHOOK_CONFIG from a request parameter, only a file nobody else "
      "can write", request_config_file, bindir, servers)
    for db, why in BAD_DBS:
        t("settings: receiver with IDEMHOOK_DB=%s -> 500 (%s), nothing created, "
          "no password" % (db, why), receiver_bad_db, bindir, servers, db, why)
        t("settings: idemhook init/--db/check with %s fail (%s), no password"
          % (db, why), command_bad_db, bindir, db, why)
    for db in UNREACHABLE_PG:
        t("settings: receiver with unreachable IDEMHOOK_DB=%s -> 503 + Retry-After, "
          "no password" % db, receiver_unreachable_pg, bindir, servers, db)
        t("settings: idemhook init/list/stats/check with unreachable %s fail, "
          "no password" % db, command_unreachable_pg, bindir, db)
    t("settings: idemhook --db /abs init prints the path as it is (and wins over "
      "a relative IDEMHOOK_DB)",
      command_redacts_good_db, bindir)
    t("settings: receivers under lighttpd: core limit 0/0, secret not in /proc/pid/environ",
      receivers_no_core, bindir, servers)
    tap.run_as_root("settings: a Stripe receiver keeps no other provider's secret "
                    "(start-up environment, settings file) anywhere in its memory",
                    "reads the memory of programs that made themselves non-dumpable",
                    own_secrets_only, bindir, servers)
    tap.run_as_root("settings: stripe.fcgi as nobody: not dumpable (/proc/pid owned by "
                    "root), core 0", "runs a program as another user (nobody)",
                    fastcgi_not_dumpable, staged_programs(bindir))
    tap.run_as_root("settings: idemhook work as nobody: not dumpable, core 0, no secret "
                    "in environ", "runs a program as another user (nobody)",
                    command_not_dumpable, staged_programs(bindir))


if __name__ == "__main__":
    sys.exit(suite_main("settings", run_cases))
