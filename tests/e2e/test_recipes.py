#!/usr/bin/env python3
"""Every deployment recipe of the documentation, run as written.

The README and the folder READMEs (DOCS: the short recipes are in
README.md, their variants in www-config/README.md, the catch-up cron
lines in handlers/README.md) mark the blocks a recipe consists of with
an HTML comment just above the fenced block:

    <!-- recipe: NAME -->                a shell block: run as root, line by line
    <!-- recipe: NAME file=PATH -->      a file: written to PATH as it stands

so that when the README changes, this test changes with it.  Each recipe
runs on a fresh copy of this Debian machine's configuration: a private
mount namespace (unshare -m) with an overlay on /etc, /var, /run,
/usr/local, /home and /root, so that `make install`, /etc/idemhook,
/var/lib/idemhook, a2enconf and the servers' pid files and logs are real
and vanish afterwards.  The only change made to what the README says is
the port: Debian's files and the recipe's "listen 80" become a free
loopback port, since this machine's port 80 is not ours.

Nothing of the host is read, signalled or written: the namespace is also
a PID namespace of its own (unshare --pid --fork --mount-proc), so a
recipe's `/etc/init.d/nginx restart` or `apachectl graceful` sees only
the processes started in it, never the host's servers (whose pid files
are removed from the overlay, besides), and the host's settings file and
store are whited out of the overlay (FRESH).

Each recipe is then checked as a new user would: signed deliveries are
accepted, a redelivery is a duplicate, a forged one 401; the request and
processing lines are in the IDEMHOOK_LOG file; `idemhook check` (the
README's audit line) finds no problem; the cron lines succeed in cron's
environment (env -i, PATH=/usr/bin:/bin, as the programs' user), after
the README's `apt-get install -y cron` and crontab(1) took them.

Usage: test_recipes.py BINDIR   (or IH_BIN=BINDIR ...)
"""

import atexit
import json
import os
import pwd
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (HarnessError, REPO, Settings, check, cron_commands,  # noqa: E402
                     free_port, readme_blocks, recipe, recipe_home, shell_commands,
                     sign_github, sign_stripe, suite_main)

OVERLAID = ("/etc", "/var", "/run", "/usr/local", "/home", "/root")
FRESH = ("/var/lib/idemhook", "/etc/idemhook", "/run/idemhook", "/run/lighttpd",
         "/usr/local/libexec/idemhook", "/usr/local/share/idemhook", "/usr/local/bin/idemhook",
         "/usr/local/share/man/man1/idemhook.1", "/etc/lighttpd/idemhook",
         "/etc/lighttpd/conf-enabled/50-idemhook.conf", "/etc/apache2/conf-available/idemhook.conf",
         "/etc/apache2/conf-enabled/idemhook.conf",
         "/etc/apache2/conf-available/idemhook-server.conf",
         "/etc/apache2/conf-enabled/idemhook-server.conf", "/etc/apache2/idemhook",
         "/etc/apache2/sites-enabled/ih-other.conf", "/etc/apache2/sites-available/ih-other.conf",
         "/etc/nginx/idemhook",
         "/etc/tmpfiles.d/idemhook.conf", "/var/www/idemhook", "/root/idemhook",
         # The host's own servers' pid files: a recipe's init script must
         # never find a pid of the host's (there is none to find in the
         # PID namespace anyway).
         "/run/nginx.pid", "/run/lighttpd.pid", "/run/apache2", "/run/spawn-fcgi",
         "/run/fcgiwrap.pid", "/run/fcgiwrap.socket", "/var/spool/cron/crontabs/www-data")
CRON_ENV = ["env", "-i", "PATH=/usr/bin:/bin", "SHELL=/bin/sh"]
REAPER = """import os, time
end = time.time() + 900
while time.time() < end:
    try:
        if os.waitpid(-1, os.WNOHANG)[0] == 0:
            time.sleep(0.1)
    except ChildProcessError:
        time.sleep(0.1)
"""


_LIVE = []


def _close_all(*_):
    for ns in list(_LIVE):
        ns.close()


def _on_signal(signum, _frame):
    _close_all()
    sys.exit(128 + signum)


atexit.register(_close_all)
for _sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(_sig, _on_signal)


class Namespace:
    """A private mount namespace whose OVERLAID folders are overlays on
    this machine's: writes land in a temporary folder and vanish.  Held
    by a waiting process that reaps, as an init; run() enters it with nsenter; every process
    left in it is killed at close()."""

    def __init__(self, name, extra=()):
        self.tmp = tempfile.mkdtemp(prefix="ih-recipe-%s-" % name)
        os.chmod(self.tmp, 0o755)
        self.log = []
        self.apt = []  # the packages the recipes' apt-get lines named
        script = ["set -e"]
        for i, d in enumerate(OVERLAID + tuple(extra)):
            up, wk = os.path.join(self.tmp, "u%d" % i), os.path.join(self.tmp, "w%d" % i)
            os.makedirs(up)
            os.makedirs(wk)
            script.append("mount -t overlay overlay -o lowerdir=%s,upperdir=%s,workdir=%s %s"
                          % (d, up, wk, d))
        # The holder outlives nothing by much, whatever happens to us.
        # A fresh machine: whatever an earlier installation, make demo or
        # recipe left is removed in the overlay (whiteouts), not on the host.
        script.append("rm -rf " + " ".join(FRESH))
        # The holder is the namespace's init, and reaps as an init does:
        # a server stopped by its init script (apache2's restart waits
        # for the old parent to be gone) must not linger as a zombie.
        script += ["echo ready", "exec python3 -c %s" % shlex.quote(REAPER)]
        # A PID namespace too: the holder is its init, every
        # process of the recipe is its descendant, and the host's servers
        # are not there to be signalled by an init script's pid file.
        self.holder = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "--pid", "--fork",
             "--mount-proc", "--kill-child", "sh", "-c", "\n".join(script)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        line = self.holder.stdout.readline()
        if line.strip() != b"ready":
            err = self.holder.stderr.read().decode(errors="replace")
            self.close()
            raise HarnessError("cannot make the namespace: %s" % err.strip()[-300:])
        # nsenter goes into the namespace's init (unshare's child), whose
        # PID namespace is the new one; unshare itself stays in the host's.
        self.init = self._child(self.holder.pid)
        self.ns = os.readlink("/proc/%d/ns/mnt" % self.init)
        self.pidns = os.readlink("/proc/%d/ns/pid" % self.init)
        _LIVE.append(self)

    @staticmethod
    def _child(pid):
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            kids = f.read().split()
        if len(kids) != 1:
            raise HarnessError("the namespace's holder has children %r" % kids)
        return int(kids[0])

    def path(self, p):
        """p as the namespace sees it, from outside, with every symbolic
        link resolved inside the namespace: the kernel resolves an
        absolute link met under /proc/PID/root against our own root, so
        /etc/nginx/sites-enabled/default (a link to /etc/nginx/...) would
        otherwise open the host's file, not the overlay's."""
        root = "/proc/%d/root" % self.init
        parts, done, hops = p.split("/"), [], 0
        while parts:
            c = parts.pop(0)
            if c in ("", "."):
                continue
            if c == "..":
                if done:
                    done.pop()
                continue
            here = root + "/" + "/".join(done + [c])
            if os.path.islink(here):
                hops += 1
                if hops > 40:
                    raise HarnessError("too many links under %s" % p)
                target = os.readlink(here)
                if target.startswith("/"):
                    done = []
                parts = target.split("/") + parts
            else:
                done.append(c)
        return root + "/" + "/".join(done)

    def run(self, cmd, env=None, cwd=REPO, timeout=120, check_rc=True):
        """Runs the shell command cmd as root inside the namespace."""
        full = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                "HOME": "/root", "LANG": "C"}
        full.update(env or {})
        r = subprocess.run(["nsenter", "-t", str(self.init), "-m", "-p", "--",
                            "sh", "-c", "cd %s && %s" % (shlex.quote(cwd), cmd)],
                           env=full, capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        self.log.append("$ %s\n%s%s(exit %d)" % (cmd, r.stdout[-1500:], r.stderr[-1500:],
                                                 r.returncode))
        if check_rc and r.returncode != 0:
            raise AssertionError("%r exited %d: %s" % (cmd, r.returncode,
                                                       (r.stdout + r.stderr).strip()[-600:]))
        return r

    def read(self, p):
        with open(self.path(p)) as f:
            return f.read()

    def write(self, p, text):
        os.makedirs(os.path.dirname(self.path(p)), exist_ok=True)
        with open(self.path(p), "w") as f:
            f.write(text)

    def members(self):
        out = []
        for d in os.listdir("/proc"):
            if d.isdigit() and int(d) not in (self.holder.pid, self.init):
                try:
                    if os.readlink("/proc/%s/ns/pid" % d) == self.pidns:
                        out.append(int(d))
                except OSError:
                    pass
        return out

    def close(self):
        if self in _LIVE:
            _LIVE.remove(self)
        if getattr(self, "ns", None):
            for sig in (signal.SIGTERM, signal.SIGKILL):
                pids = self.members()
                for pid in pids:
                    try:
                        os.kill(pid, sig)
                    except OSError:
                        pass
                deadline = time.time() + 3
                while pids and time.time() < deadline and self.members():
                    time.sleep(0.05)
        try:
            os.killpg(self.holder.pid, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
        if getattr(self, "holder", None):
            self.holder.wait(timeout=10)
        shutil.rmtree(self.tmp, ignore_errors=True)


def make_env(bindir):
    """`make` in a recipe uses the build under test: BUILD (a ?=
    variable) from the environment, so that nothing is rebuilt."""
    env = {"BUILD": os.path.relpath(os.path.abspath(bindir), REPO)}
    # A sanitizer build is relinked without the sanitizers unless make
    # is told: whatever the folder's name, the program says which.
    try:
        with open(os.path.join(bindir, "stripe.fcgi"), "rb") as f:
            sanitized = b"__asan_init" in f.read()
    except OSError:
        sanitized = False
    if os.path.exists(os.path.join(bindir, "obj", "shared")) and sanitized:
        env["SANITIZE"] = "1"
    return env


def local_port(ns, port):
    """Debian's own files listen on 127.0.0.1:port instead of :80."""
    p = "/etc/apache2/ports.conf"
    ns.write(p, re.sub(r"(?m)^Listen 80$", "Listen 127.0.0.1:%d" % port, ns.read(p)))
    p = "/etc/apache2/sites-available/000-default.conf"
    ns.write(p, re.sub(r"(?m)^<VirtualHost \*:80>$", "<VirtualHost *:%d>" % port,
                       ns.read(p)))
    p = "/etc/lighttpd/lighttpd.conf"
    text = re.sub(r"(?m)^server\.port\s*=\s*80$", "server.port = %d\nserver.bind = "
                  '"127.0.0.1"' % port, ns.read(p))
    ns.write(p, text.replace('include_shell "/usr/share/lighttpd/use-ipv6.pl " + '
                             'server.port', ""))
    p = "/etc/nginx/sites-available/default"
    text = re.sub(r"(?m)^(\s*)listen 80 default_server;$",
                  r"\1listen 127.0.0.1:%d default_server;" % port, ns.read(p))
    ns.write(p, re.sub(r"(?m)^\s*listen \[::\]:80 default_server;$", "", text))


# What Debian's packages start as soon as they are installed (their
# postinst), as the recipe's server then finds it running.  Not fcgiwrap:
# without systemd its init script needs spawn-fcgi, which installing
# fcgiwrap does not bring, so the recipe starts it itself (and this
# machine's spawn-fcgi must not hide a recipe that forgets to).  Not cron:
# the test runs the crontab's lines itself, in cron's environment, and a
# cron daemon's `work --once` every minute would race the checks.
STARTED_AT_INSTALL = {"apache2": "/etc/init.d/apache2 start",
                      "lighttpd": "/etc/init.d/lighttpd start",
                      "nginx": "/etc/init.d/nginx start",
                      "postgresql": "/etc/init.d/postgresql start"}
WEB_SERVERS = ("apache2", "lighttpd", "nginx")


def deps_list(name):
    """tests/deps.sh's package list name, as a set."""
    r = subprocess.run(["sh", os.path.join(REPO, "tests", "deps.sh"), "--list", name],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, "tests/deps.sh --list %s: %s" % (name, r.stderr.strip()))
    return set(r.stdout.split())


def apt_install(ns, cmd, port):
    """A recipe's `apt-get install` line, in the namespace: its packages
    must already be installed (apt-get there would write /usr for real,
    and the tests never reach the internet), then whatever Debian starts
    at install is started, on the test's port, so that the recipe meets
    a server that was running before it enabled anything.  Returns the
    packages named."""
    words = shlex.split(cmd)
    check(words[:2] == ["apt-get", "install"], "not an apt-get install line: %r" % cmd)
    pkgs = [w for w in words[2:] if not w.startswith("-")]
    for p in pkgs:
        r = ns.run("dpkg-query -W -f='${Status}' %s" % shlex.quote(p), check_rc=False)
        check("ok installed" in r.stdout, "%r: %s is not installed here (make deps)" % (cmd, p))
    for p in pkgs:
        if p in STARTED_AT_INSTALL:
            ns.run(STARTED_AT_INSTALL[p])
            if p in WEB_SERVERS:
                wait_http("http://127.0.0.1:%d/" % port)
    ns.apt += pkgs
    return pkgs


def merge_settings(ns, path, text):
    """A settings= block as a user follows it: each NAME=value line
    replaces NAME's line of the file, or is added; comments are not
    copied.  The file keeps its owner and mode."""
    cur = ns.read(path)
    for line in text.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name = line.split("=", 1)[0]
        cur, n = re.subn(r"(?m)^%s=.*$" % re.escape(name), lambda _: line, cur)
        if n == 0:
            cur = cur.rstrip("\n") + "\n" + line + "\n"
    st = os.stat(ns.path(path))
    ns.write(path, cur)
    os.chown(ns.path(path), st.st_uid, st.st_gid)
    os.chmod(ns.path(path), st.st_mode & 0o7777)


def run_block(ns, text, env, port, fname=None):
    if isinstance(fname, Settings):
        merge_settings(ns, fname, text)
        return
    if fname:
        ns.write(fname, re.sub(r"listen 80;", "listen 127.0.0.1:%d;" % port, text))
        return
    for cmd in shell_commands(text):
        if cmd.startswith("apt-get install"):
            apt_install(ns, cmd, port)
        else:
            ns.run(cmd, env=env)


def run_recipe(ns, name, env, port):
    """Every block of recipe name, in order; returns the packages its
    apt-get lines named."""
    before = len(ns.apt)
    for f, t in recipe(name):
        run_block(ns, t, env, port, f)
    return ns.apt[before:]


def fill_secrets(ns, secrets, path="/etc/idemhook/idemhook.env"):
    """The README's manual step: the secrets of the providers used."""
    text = ns.read(path)
    for var, value in secrets.items():
        text, n = re.subn(r"(?m)^%s=.*$" % var, "%s=%s" % (var, value), text)
        check(n == 1, "%s has no %s= line" % (path, var))
    st = os.stat(ns.path(path))
    ns.write(path, text)
    os.chown(ns.path(path), st.st_uid, st.st_gid)
    os.chmod(ns.path(path), st.st_mode & 0o7777)


def post(url, body, headers):
    req = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=15) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def wait_http(url, deadline=10.0):
    end = time.time() + deadline
    while True:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            if time.time() > end:
                raise AssertionError("nothing answers at %s" % url)
            time.sleep(0.1)


def deliveries(base, secrets, tag):
    """Stripe and GitHub: accepted, duplicate, 401; returns the event ids."""
    ids = []
    for p in ("stripe", "github"):
        eid = "evt_%s_%s_%s" % (tag, p, os.urandom(4).hex())
        if p == "stripe":
            body = json.dumps({"id": eid, "object": "event", "type": "invoice.paid"}).encode()
            good = {"Stripe-Signature": sign_stripe(secrets[p], body),
                    "Content-Type": "application/json"}
            bad = {"Stripe-Signature": sign_stripe("whsec_wrong", body)}
        else:
            body = json.dumps({"action": "opened", "zen": eid}).encode()
            good = {"X-Hub-Signature-256": sign_github(secrets[p], body),
                    "X-GitHub-Event": "issues", "X-GitHub-Delivery": eid,
                    "X-GitHub-Hook-ID": "1",
                    "Content-Type": "application/json"}
            bad = dict(good, **{"X-Hub-Signature-256": sign_github("wrong", body)})
        url = base + "/hooks/" + p
        for want_status, want, hdr in ((200, "accepted", good), (200, "duplicate", good),
                                       (401, None, bad)):
            status, out = post(url, body, hdr)
            check(status == want_status and (want is None or want.encode() in out),
                  "%s: expected %d %s, got %d %r" % (url, want_status, want or "", status,
                                                     out[:200]))
        ids.append((p, eid))
    return ids


def audit_and_cron(ns, logfile, ids, user="www-data", audit="audit", cron="cron"):
    for _, text in recipe(audit):
        for cmd in shell_commands(text):
            r = ns.run(cmd, check_rc=False)
            check(r.returncode == 0 and "no problems found" in r.stdout,
                  "%r: exit %d: %s" % (cmd, r.returncode, (r.stdout + r.stderr).strip()[-900:]))
            check("settings: read as user %s" % user in r.stdout,
                  "check does not say it read the settings as %s: %s" % (user, r.stdout[:400]))
    time.sleep(0.5)
    log = ns.read(logfile)
    for p, eid in ids:
        check(re.search(r"provider=%s event=\S*%s .*outcome=accepted" % (p, eid), log),
              "no accepted request line for %s %s in %s: %s" % (p, eid, logfile, log[-600:]))
        check(re.search(r"provider=%s event=\S*%s .*processing=done" % (p, eid), log),
              "no processing line for %s %s in %s: %s" % (p, eid, logfile, log[-600:]))
    check("outcome=duplicate" in log and "outcome=bad_signature" in log,
          "duplicate or 401 not logged in %s" % logfile)
    st = os.stat(ns.path(logfile))
    check(st.st_mode & 0o077 == 0, "%s has mode %04o" % (logfile, st.st_mode & 0o7777))
    install_crontab(ns, user, cron)
    for _, text in recipe(cron):
        for cmd in cron_commands(text):
            r = ns.run(" ".join(["/usr/sbin/runuser", "-u", user, "--"] + CRON_ENV +
                                ["sh", "-c", shlex.quote(cmd)]), check_rc=False, cwd="/")
            check(r.returncode == 0, "cron line %r in cron's environment: exit %d: %s"
                  % (cmd, r.returncode, (r.stdout + r.stderr).strip()[-400:]))


def install_crontab(ns, user, cron):
    """The README's `apt-get install -y cron` (tests/deps.sh's cron list),
    then recipe cron's lines given to crontab(1) as the user's crontab,
    which refuses a line cron could not read; crontab -l shows each."""
    if "cron" not in ns.apt:
        pkgs = run_recipe(ns, "cron-install", {}, None)
        check(set(pkgs) == deps_list("cron"), "the cron recipe installs %s, not %s "
              "(tests/deps.sh --list cron)" % (sorted(pkgs), sorted(deps_list("cron"))))
    text = "".join(t for _, t in recipe(cron))
    tab = os.path.join(ns.tmp, "crontab-" + cron)
    with open(tab, "w") as f:
        f.write(text)
    ns.run("crontab -u %s %s" % (user, shlex.quote(tab)))
    listed = ns.run("crontab -u %s -l" % user).stdout
    for cmd in cron_commands(text):
        check(cmd in listed, "crontab -l lacks %r: %s" % (cmd, listed[-400:]))


def run_smoke(ns, name, base, env, port):
    """The recipe's smoke test, once it is marked <!-- recipe: NAME-smoke
    --> (until `idemhook smoke` is built it is <!-- smoke: NAME -->, not
    run): as written, but for the test's port in its URL; it must exit 0
    and print the three answers."""
    smoke = name + "-smoke"
    if not any(r == smoke for r, _, _ in readme_blocks()):
        return
    for _, text in recipe(smoke):
        for cmd in shell_commands(text):
            r = ns.run(cmd.replace("http://localhost/", base + "/"), env=env, check_rc=False)
            check(r.returncode == 0 and "accepted" in r.stdout and "duplicate" in r.stdout
                  and "401" in r.stdout, "%r: exit %d: %s" % (cmd, r.returncode,
                                                            (r.stdout + r.stderr)[-600:]))


LAYOUT_LIST = {"lighttpd": "lighttpd", "vhost": "apache", "nginx": "nginx",
               "fcgiwrap": "fcgiwrap"}


def pg_local(ns):
    """The only change made to Debian's PostgreSQL cluster: no TCP port
    (the host's network is shared; its UNIX socket is in the namespace's
    /run), as the servers get a free loopback port."""
    for ver in os.listdir(ns.path("/etc/postgresql")):
        p = "/etc/postgresql/%s/main/postgresql.conf" % ver
        if os.path.exists(ns.path(p)):
            ns.write(p, ns.read(p) + "\nlisten_addresses = ''\n")


def to_postgres(ns, base, secrets, env, port, sqlite_ids):
    """www-config/README.md's PostgreSQL on the same machine, as written,
    after a layout's recipe on SQLite: the events recorded so far are
    copied, deliveries then land in PostgreSQL (accepted, duplicate,
    401), check is clean, and the pg_dump line that replaces the nightly
    backup works in cron's environment."""
    pg_local(ns)
    pkgs = run_recipe(ns, "postgres", env, port)
    check(set(pkgs) == deps_list("postgres"), "the PostgreSQL recipe installs %s" % pkgs)
    run_recipe(ns, "postgres-switch", env, port)
    check("IDEMHOOK_DB=postgresql:///idemhook" in ns.read("/etc/idemhook/idemhook.env"),
          "the settings file does not name the database")
    ids = deliveries(base, secrets, "pg")
    r = ns.run("runuser -u www-data -- /usr/local/bin/idemhook list --json")
    rows = {(e["provider"], e["event_id"]) for e in json.loads(r.stdout)}
    for p, eid in sqlite_ids + ids:
        check(any(rp == p and eid in rid for rp, rid in rows),
              "%s %s is not in the PostgreSQL store: %r" % (p, eid, sorted(rows)[:6]))
    audit_and_cron(ns, "/var/lib/idemhook/idemhook.log", ids, cron="postgres-cron")
    dumps = os.listdir(ns.path("/var/lib/idemhook/backups"))
    check(any(d.startswith("idemhook-") and d.endswith(".dump") for d in dumps),
          "no dump in /var/lib/idemhook/backups: %r" % dumps)


def server_recipe(bindir, name, url_path="/", postgres=False):
    """The common server set-up, then recipe name, then the checks."""
    # The recipe's "make deps-build" and apt-get lines must find
    # everything installed: apt-get in the namespace would write /usr for
    # real but its records in /var's overlay.  deps.sh as another user
    # only reports what is missing.
    # The script goes on stdin: nobody may not reach the checkout.
    with open(os.path.join(REPO, "tests", "deps.sh")) as f:
        script = f.read()
    r = subprocess.run(["/usr/sbin/runuser", "-u", "nobody", "--", "sh", "-s"],
                       input=script, capture_output=True, text=True, timeout=60,
                       cwd="/")
    check(r.returncode == 0, "packages missing, run make deps first: %s" % r.stderr.strip())
    ns = Namespace(name)
    ok = False
    try:
        env = make_env(bindir)
        port = free_port()
        local_port(ns, port)
        secrets = {"stripe": "whsec_" + os.urandom(12).hex(), "github": os.urandom(12).hex()}
        check(not run_recipe(ns, "server", env, port), "the common steps install packages")
        # make install puts the man page where man finds it.
        # (Debian's /usr/local/man is a link to share/man.)
        r = ns.run("man -w idemhook", check_rc=False)
        page = ns.path("/usr/local/share/man/man1/idemhook.1")
        check(r.returncode == 0 and os.path.exists(page)
              and os.path.samefile(ns.path(r.stdout.strip()), page),
              "man -w idemhook: %r %r" % (r.stdout, r.stderr[-200:]))
        fill_secrets(ns, {"IDEMHOOK_STRIPE_SECRET": secrets["stripe"],
                          "IDEMHOOK_GITHUB_SECRET": secrets["github"]})
        run_recipe(ns, "server-after", env, port)
        # The server the recipe meets runs without the modules the recipe
        # enables (Debian starts Apache at its install, before them): a
        # module enabled on a running Apache must really be started
        # (issue 39: after a SIGHUP, mod_fcgid's children crash in a loop).
        mods = [m for _, t in recipe(name) for c in shell_commands(t)
                if c.startswith("a2enmod ") for m in c.split()[1:] if not m.startswith("-")]
        if mods:
            ns.run("a2dismod -q -f %s" % " ".join(mods))
        # Each layout installs its own server and nothing else: the
        # list tests/deps.sh holds for it (no second web server taking
        # port 80, no database server, no browser).
        pkgs = run_recipe(ns, name, env, port)
        want = deps_list(LAYOUT_LIST[name])
        check(set(pkgs) == want, "the %s recipe installs %s, not %s (tests/deps.sh --list %s)"
              % (name, sorted(pkgs), sorted(want), LAYOUT_LIST[name]))
        if name == "fcgiwrap":
            # No systemd here: fcgiwrap.socket is not started at install;
            # the recipe's own lines for that case start fcgiwrap.
            pkgs = run_recipe(ns, "fcgiwrap-nosystemd", env, port)
            check(pkgs == ["spawn-fcgi"], "without systemd, fcgiwrap's recipe installs %s, "
                  "not spawn-fcgi" % pkgs)
        base = "http://127.0.0.1:%d" % port
        wait_http(base + url_path)
        ids = deliveries(base, secrets, name)
        run_smoke(ns, name, base, env, port)
        audit_and_cron(ns, "/var/lib/idemhook/idemhook.log", ids)
        if postgres:
            to_postgres(ns, base, secrets, env, port, ids)
        elif name == "lighttpd":
            # A reboot empties /run; boot runs systemd-tmpfiles --create
            # over every tmpfiles.d file, then starts lighttpd.
            ns.run("/etc/init.d/lighttpd stop && rm -rf /run/idemhook")
            check(not os.path.exists(ns.path("/run/idemhook")), "/run/idemhook still there")
            ns.run("systemd-tmpfiles --create --prefix=/run/idemhook")
            st = os.stat(ns.path("/run/idemhook"))
            check(st.st_uid == pwd.getpwnam("www-data").pw_uid and st.st_mode & 0o7777 == 0o750,
                  "/run/idemhook after boot: uid %d mode %04o" % (st.st_uid, st.st_mode & 0o7777))
            ns.run("/etc/init.d/lighttpd start")
            wait_http(base + url_path)
            deliveries(base, secrets, name + "-reboot")
            # Without systemd: the README's var.idemhook_run line, and a
            # boot that empties /run and makes nothing but what the init
            # script makes.
            conf = "/etc/lighttpd/conf-enabled/50-idemhook.conf"
            text, n = re.subn(r'(?m)^#(var\.idemhook_run := "/run/lighttpd")', r"\1",
                              ns.read(conf))
            check(n == 1, "the README's lighttpd file lacks the no-systemd line")
            ns.write(conf, text)
            ns.run("/etc/init.d/lighttpd stop && rm -rf /run/idemhook /run/lighttpd")
            ns.run("/etc/init.d/lighttpd start")
            wait_http(base + url_path)
            deliveries(base, secrets, name + "-nosystemd")
            forward_recipe(ns, base, secrets)
        if name == "vhost":
            other_vhost(ns, base, port)
        if name == "fcgiwrap":
            fcgiwrap_served(ns)
        if name == "nginx":
            # spawn-fcgi.sh, run as root, gives the programs a clean
            # environment: the programs' user's HOME (libpq's ~/.pgpass,
            # the actions' home), never root's HOME or PATH.
            home = pwd.getpwnam("www-data").pw_dir
            seen = 0
            for pid in ns.members():
                try:
                    with open("/proc/%d/cmdline" % pid, "rb") as f:
                        argv0 = f.read().split(b"\0", 1)[0]
                    if not argv0.endswith(b".fcgi"):
                        continue
                    with open("/proc/%d/environ" % pid, "rb") as f:
                        env = dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)
                except OSError:
                    continue
                seen += 1
                check(env.get(b"HOME") == home.encode() and b"sbin" not in env.get(b"PATH", b"")
                      and b"/root" not in b"".join(env.values()),
                      "a program started by spawn-fcgi.sh has root's environment: HOME=%r "
                      "PATH=%r" % (env.get(b"HOME"), env.get(b"PATH")))
            check(seen > 0, "no program of spawn-fcgi.sh found in the namespace")
            # nginx files whatever a program writes to FastCGI stderr
            # under [error]: with IDEMHOOK_LOG nothing goes there.
            err = ns.read("/var/log/nginx/error.log")
            check("provider=" not in err, "request lines in nginx's error.log: %s"
                  % err[-400:])
        ok = True
    finally:
        if not ok or os.environ.get("IH_RECIPES_VERBOSE"):
            sys.stdout.write("".join("# " + l + "\n" for l in
                                     "\n".join(ns.log).splitlines()[-400:]))
        ns.close()


SHOP = "https://shop.example/"


def forward_recipe(ns, base, secrets):
    """www-config/README.md's "In front of your existing application" as
    written, on the lighttpd recipe's server: the application is
    tests/forward-app (Stripe's own constructEvent) at the README's
    WooCommerce URL, its host the only change; as in the README's
    example only the URL changed at Stripe, so the application verifies
    with the secret Stripe signs with.  The settings merged into the
    file take effect without a restart; `idemhook check` names the
    destination; `idemhook smoke` says its test event reached the
    application, which got it once, verified; a Stripe event reaches it
    once too."""
    from test_forward import APP_DIR, App, once, wait_for
    check(shutil.which("node") is not None and os.path.isdir(
        os.path.join(APP_DIR, "node_modules", "stripe")),
        "node and tests/forward-app/node_modules are needed (make deps runs npm ci there)")
    app_tmp = tempfile.mkdtemp(prefix="ih-recipe-app-")
    app = App(app_tmp)
    with open(app.secrets, "w") as f:
        json.dump({"stripe": secrets["stripe"]}, f)
    app.start()
    try:
        shop = "http://127.0.0.1:%d/" % app.port
        (fname, text), = recipe("forward-settings")
        text = text.replace(SHOP, shop).replace(
            "whsec_the_stripe_endpoint_signs_with", secrets["stripe"]).replace(
            "whsec_your_application_already_has", secrets["stripe"])
        run_block(ns, text, {}, None, fname)
        for _, text in recipe("forward-check"):
            for cmd in shell_commands(text):
                r = ns.run(cmd, check_rc=False)
                check(r.returncode == 0 and "no problems found" in r.stdout
                      and "stripe: forwards each event to %s" % shop in r.stdout,
                      "%r: exit %d: %s" % (cmd, r.returncode,
                                           (r.stdout + r.stderr).strip()[-900:]))
        for _, text in recipe("forward-smoke"):
            for cmd in shell_commands(text):
                r = ns.run(cmd.replace(SHOP, base + "/"), check_rc=False, timeout=200)
                out = r.stdout + r.stderr
                check(r.returncode == 0 and re.search(r"(?m)^forwarded: HTTP 200 in \d+ ms", out),
                      "%r: exit %d: %s" % (cmd, r.returncode, out[-900:]))
                sid = re.search(r"test event (idemhook_smoke_\w+)", out).group(1)
                once(app, "stripe", sid)
        eid = "evt_forward_" + os.urandom(6).hex()
        body = json.dumps({"id": eid, "object": "event", "type": "invoice.paid",
                           "data": {"object": {"id": "in_" + eid[4:],
                                               "object": "invoice"}}}).encode()
        status, out = post(base + "/hooks/stripe", body,
                           {"Stripe-Signature": sign_stripe(secrets["stripe"], body),
                            "Content-Type": "application/json"})
        check(status == 200 and b"accepted" in out, "a Stripe event: %d %r" % (status, out))
        once(app, "stripe", eid)
        wait_for("the application's answer in show", lambda: "forward: HTTP 200 in" in ns.run(
            "runuser -u www-data -- /usr/local/bin/idemhook show stripe %s" % eid).stdout)
    finally:
        app.stop()
        shutil.rmtree(app_tmp, ignore_errors=True)


def fcgiwrap_served(ns):
    """The deliveries went through fcgiwrap, as www-data: no FastCGI
    program of idemhook's keeps running (each request's is a CGI)."""
    users = {}
    for pid in ns.members():
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                argv0 = f.read().split(b"\0", 1)[0]
            uid = os.stat("/proc/%d" % pid).st_uid
        except OSError:
            continue
        users.setdefault(os.path.basename(argv0).decode(errors="replace"), set()).add(uid)
    www = pwd.getpwnam("www-data").pw_uid
    check(users.get("fcgiwrap") == {www}, "fcgiwrap runs as %r, not www-data only"
          % users.get("fcgiwrap"))
    check(not [n for n in users if n.endswith(".fcgi")], "FastCGI programs running: %r"
          % sorted(users))


def get_status(url, host):
    req = urllib.request.Request(url, headers={"Host": host})
    try:
        with urllib.request.urlopen(req, timeout=15) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def get_body(url, host):
    req = urllib.request.Request(url, headers={"Host": host})
    try:
        with urllib.request.urlopen(req, timeout=15) as r:
            return r.read()
    except OSError:
        return None


def other_vhost(ns, base, port):
    """A second name-based virtual host on the same server (another
    user's site) must not answer /hooks/*: the recipe includes vhost.conf
    in one site only, where a server-wide a2enconf answers it on every
    host."""
    ns.run("install -d -m 0755 /var/www/ih-other && echo other > /var/www/ih-other/index.html")
    ns.write("/etc/apache2/sites-available/ih-other.conf",
             "<VirtualHost *:%d>\n  ServerName other.example\n"
             "  DocumentRoot /var/www/ih-other\n</VirtualHost>\n" % port)
    ns.run("a2ensite ih-other && apachectl configtest && apachectl graceful")
    end = time.time() + 10
    while get_body(base + "/", "other.example") != b"other\n":
        check(time.time() < end, "the second virtual host does not answer")
        time.sleep(0.1)
    body = json.dumps({"id": "evt_other_" + os.urandom(4).hex(), "object": "event"}).encode()
    for p in ("stripe", "github", "console/"):
        url = base + "/hooks/" + p
        req = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Host": "other.example"})
        try:
            with urllib.request.urlopen(req, timeout=15) as r:
                status = r.status
        except urllib.error.HTTPError as e:
            status = e.code
        check(status == 404, "/hooks/%s on another virtual host answered %d, not 404"
              % (p, status))
    st = get_status(base + "/hooks/stripe", "127.0.0.1")
    check(st != 404, "/hooks/stripe on the recipe's site answered 404")


def syslog_lines(bindir):
    """IDEMHOOK_LOG=syslog: the request line and the processing line go
    to /dev/log (here a socket of the test's, in a namespace whose /dev
    is an overlay), tagged idemhook with the pid, at LOG_USER|LOG_INFO."""
    import socket
    ns = Namespace("syslog", extra=("/dev",))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        sock.bind(ns.path("/dev/log"))
        os.chmod(ns.path("/dev/log"), 0o666)
        sock.settimeout(5)
        secret = "whsec_" + os.urandom(8).hex()
        eid = "evt_syslog_" + os.urandom(4).hex()
        body = json.dumps({"id": eid, "object": "event", "type": "x.y"}).encode()
        tmp = tempfile.mkdtemp(prefix="ih-e2e-syslog-", dir=ns.tmp)
        env = {"GATEWAY_INTERFACE": "CGI/1.1", "REQUEST_METHOD": "POST",
               "CONTENT_LENGTH": str(len(body)), "SCRIPT_NAME": "/hooks/stripe",
               "HTTP_STRIPE_SIGNATURE": sign_stripe(secret, body),
               "IDEMHOOK_STRIPE_SECRET": secret, "IDEMHOOK_LOG": "syslog",
               "IDEMHOOK_DB": os.path.join(tmp, "x.db")}
        r = subprocess.run(["nsenter", "-t", str(ns.init), "-m", "-p", "--",
                            os.path.join(os.path.abspath(bindir), "stripe.fcgi")],
                           input=body, env=env, capture_output=True, timeout=30)
        check(b"accepted" in r.stdout, "CGI request: %r %r" % (r.stdout[:200], r.stderr[-200:]))
        check(b"provider=" not in r.stderr, "lines went to stderr too: %r" % r.stderr[-300:])
        got = []
        while len(got) < 8 and not (got and "processing=" in got[-1]):
            got.append(sock.recv(4096).decode(errors="replace"))
        check(re.match(r"<14>.*idemhook\[\d+\]: provider=stripe event=%s .*outcome=accepted"
                       % eid, got[0]), "request line in syslog: %r" % got)
        check(re.match(r"<14>.*idemhook\[\d+\]: provider=stripe event=%s .*processing=done"
                       % eid, got[-1]), "processing line in syslog: %r" % got)
    finally:
        sock.close()
        ns.close()


def unusable_log_said(bindir):
    """An IDEMHOOK_LOG that cannot be opened is said on the server's
    error stream, and the request is served and logged there instead."""
    tmp = tempfile.mkdtemp(prefix="ih-e2e-badlog-")
    try:
        secret = "whsec_" + os.urandom(8).hex()
        body = b'{"id":"evt_badlog_%s","object":"event","type":"x"}' % os.urandom(4).hex().encode()
        env = {"PATH": "/usr/bin:/bin", "GATEWAY_INTERFACE": "CGI/1.1",
               "REQUEST_METHOD": "POST", "CONTENT_LENGTH": str(len(body)),
               "SCRIPT_NAME": "/hooks/stripe", "HTTP_STRIPE_SIGNATURE": sign_stripe(secret, body),
               "IDEMHOOK_STRIPE_SECRET": secret, "IDEMHOOK_DB": os.path.join(tmp, "x.db"),
               "IDEMHOOK_LOG": os.path.join(tmp, "no", "such", "dir", "idemhook.log")}
        r = subprocess.run([os.path.join(bindir, "stripe.fcgi")], input=body, env=env,
                           capture_output=True, timeout=30)
        err = r.stderr.decode(errors="replace")
        check(b"accepted" in r.stdout, "request: %r" % r.stdout[:200])
        check(err.count("cannot open IDEMHOOK_LOG") == 1 and "outcome=accepted" in err,
              "stderr: %r" % err[-500:])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def demo_own_folder(bindir):
    """`make demo` as root keeps its store in its own folder (never
    /var/lib/idemhook, which the deployment recipe then could not use)
    and says where; its last section shows the processing lines."""
    ns = Namespace("demo")
    try:
        port = free_port()
        folder = os.path.join(ns.tmp, "demo")
        r = ns.run("www-config/demo.sh %s" % shlex.quote(os.path.abspath(bindir)),
                   env={"DEMO_PORT": str(port), "DEMO_DIR": folder}, timeout=180)
        check(not os.path.exists(ns.path("/var/lib/idemhook")),
              "make demo wrote into /var/lib/idemhook")
        demo_db = os.path.join(folder, "idemhook.db")
        check("store %s" % demo_db in r.stdout and os.path.exists(demo_db),
              "the demo does not say where its store is: %s" % r.stdout[:400])
        last = r.stdout.split("== processing after each answer", 1)[-1]
        check("processing=done" in last, "the demo's processing section is empty: %r"
              % last[:400])
    finally:
        ns.close()


def blocks_parse():
    """Every recipe the documentation names is there, each in one file,
    with the commands the tests rely on."""
    names = {r for r, _, _ in readme_blocks()}
    for want in ("server", "server-after", "audit", "lighttpd", "vhost", "nginx", "shared",
                 "shared-after", "shared-host", "allowoverride", "cron", "catchup-cron",
                 "postgres", "postgres-switch", "postgres-cron", "shared-upload",
                 "shared-smoke", "cron-install", "fcgiwrap", "fcgiwrap-nosystemd",
                 "fcgiwrap-smoke", "forward-settings", "forward-check", "forward-smoke"):
        check(want in names, "no <!-- recipe: %s --> in the documentation" % want)
    for name in names:
        homes = recipe_home(name)
        check(len(homes) == 1, "recipe %s is split over %s" % (name, homes))
    # Each layout of the README ends with its smoke test, kept out of the
    # recipes until `idemhook smoke` is built.
    with open(os.path.join(REPO, "README.md")) as f:
        readme = f.read()
    for layout in ("vhost", "shared", "lighttpd", "nginx"):
        m = re.search(r"(?m)^<!-- (?:smoke: %s|recipe: %s-smoke) -->\n```sh\n(.*?)```"
                      % (layout, layout), readme, re.S)
        check(m and "idemhook smoke stripe " in m.group(1),
              "README.md: no smoke block for the %s recipe" % layout)
    (_, text), = recipe("fcgiwrap-smoke")
    check("idemhook smoke stripe " in text, "no smoke block for the fcgiwrap recipe")
    # make check installs every package a recipe's apt-get line names,
    # so that this suite runs every such line (tests/deps.sh's test list).
    test_pkgs = deps_list("test")
    for name, fname, text in readme_blocks():
        for cmd in ([] if fname else shell_commands(text)):
            if cmd.startswith("apt-get install"):
                pkgs = {w for w in shlex.split(cmd)[2:] if not w.startswith("-")}
                check(pkgs <= test_pkgs, "recipe %s: %s not in tests/deps.sh's test list"
                      % (name, sorted(pkgs - test_pkgs)))
    # The build's packages only: a layout's recipe installs its server.
    (_, text), = recipe("server")
    check("make deps-build" in text and not re.search(r"make deps\b(?!-)", text),
          "the common steps install more than building needs: %r" % text[:200])
    for _, text in recipe("cron"):
        for cmd in cron_commands(text):
            check(cmd.startswith("/"), "cron line without a full path: %r" % cmd)


def demo_needs_little():
    """make demo installs what building and one lighttpd need, says so,
    and runs no npm ci; make deps-build installs no server at all."""
    r = subprocess.run(["make", "-n", "demo", "BUILD=build/ih-demo-dry"], cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    check("tests/deps.sh demo" in r.stdout and not re.search(r"tests/deps\.sh( test)?\n",
                                                              r.stdout),
          "make demo does not install the demo's list only: %r" % r.stdout[:400])
    demo, build = deps_list("demo"), deps_list("build")
    big = {"chromium", "nodejs", "postgresql", "valgrind", "clang", "apache2", "nginx",
           "libclang-rt-14-dev", "wrk", "libcmocka-dev"}
    check(not demo & big, "the demo's list holds %s" % sorted(demo & big))
    check(demo - build == {"lighttpd", "openssl", "curl", "sqlite3"},
          "the demo's list beyond the build's: %s" % sorted(demo - build))
    check(not build & (big | {"lighttpd"}), "the build's list holds %s" % sorted(build & big))
    with open(os.path.join(REPO, "tests", "deps.sh")) as f:
        script = f.read()
    for which in ("build", "demo"):
        r = subprocess.run(["/usr/sbin/runuser", "-u", "nobody", "--", "sh", "-s", which],
                           input=script, capture_output=True, text=True, timeout=60, cwd="/")
        out = r.stdout + r.stderr
        check("npm" not in out and ("deps (%s)" % which) in out,
              "tests/deps.sh %s: %r" % (which, out[-400:]))


# What the recipes write inside their namespace, as the host holds it:
# none of it may change while they run (issue 25: a link under
# /proc/PID/root once led a recipe's write to the host's nginx site).
HOST_WATCHED = ("/etc/nginx", "/etc/lighttpd", "/etc/apache2", "/etc/idemhook", "/etc/postgresql",
                "/var/lib/postgresql", "/var/spool/cron",
                "/etc/cron.d", "/etc/tmpfiles.d", "/var/lib/idemhook", "/run/idemhook",
                "/usr/local/bin", "/root/idemhook")
# Besides the recipes' own files and the paths their blocks name: the
# Debian files this suite edits (local_port(), other_vhost()) and the
# folders Debian's helpers write (a2enmod, a2enconf, a2ensite).
HOST_RECIPE_TOO = ("/etc/apache2/ports.conf", "/etc/apache2/sites-available/000-default.conf",
                   "/etc/lighttpd/lighttpd.conf", "/etc/lighttpd/conf-enabled",
                   "/etc/apache2/mods-enabled", "/etc/apache2/conf-enabled",
                   "/etc/apache2/sites-enabled", "/etc/nginx/sites-enabled")


def host_snapshot():
    """Every entry under HOST_WATCHED: its type, mode, owner and, for a
    link, its target; for a file its size and modification time too
    (never its content: the suite reads nothing of the host's files).  A
    folder's own size and time change with any entry made or removed in
    it, which the entry itself shows."""
    seen = {}
    for top in HOST_WATCHED:
        for d, dirs, files in os.walk(top):
            for n in dirs + files:
                p = os.path.join(d, n)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                link = os.readlink(p) if os.path.islink(p) else None
                if stat.S_ISDIR(st.st_mode):
                    seen[p] = (st.st_mode, st.st_uid, None, None, None)
                else:
                    seen[p] = (st.st_mode, st.st_uid, st.st_size, st.st_mtime_ns, link)
    return seen


def recipe_touches():
    """The host paths a recipe could write if its namespace leaked: the
    files FRESH removes (every file a recipe makes), the paths the
    recipes' blocks name (files and arguments), HOST_RECIPE_TOO, and any
    path with "idemhook" in it."""
    paths = set(FRESH) | set(HOST_RECIPE_TOO)
    for _, fname, text in readme_blocks():
        if fname:
            paths.add(fname)
        if not fname:
            paths.update(m.rstrip("/.;") for m in re.findall(r"(?<![\w~$])/[\w./-]+", text)
                         if m.startswith(tuple(d + "/" for d in OVERLAID)))
    return paths


def recipe_could_touch(p, paths):
    if "idemhook" in p or "ih-other" in p:
        return True
    return any(p == t or p.startswith(t + "/") or t.startswith(p + "/") for t in paths)


def host_untouched(before):
    """Fails for a change the recipes could have made; a change to a host
    file no recipe writes is another writer's (a package upgrade, another
    job on the host), said as such and not the project's failure."""
    after = host_snapshot()
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    paths = recipe_touches()
    ours = [p for p in changed if recipe_could_touch(p, paths)]
    others = [p for p in changed if p not in ours]
    if others:
        print("# another writer changed the host's %s while the recipes ran: no recipe "
              "writes there, so not theirs" % ", ".join(others[:10]))
    check(not ours, "the recipes changed the host's files: %s" % ", ".join(ours[:10]))


def host_check_fair():
    """The host check itself, on the host as it is with one entry made to
    differ: a file no recipe writes (Apache's own apache2.conf, as another
    job on the host changed /etc/apache2 once) is another writer's, said
    and passed; a file a recipe writes (the nginx site of issue 25) fails."""
    now = host_snapshot()
    for p, ours in (("/etc/apache2/apache2.conf", False),
                    ("/etc/nginx/sites-enabled/default", True)):
        before = dict(now)
        before[p] = (0, 0, 0, 0, "changed")
        try:
            host_untouched(before)
            failed = False
        except AssertionError:
            failed = True
        check(failed == ours, "a change to %s %s" % (p, "passed" if ours else "failed"))


def run_cases(tap, bindir, servers):
    host = host_snapshot()
    tap.run("the READMEs mark every recipe, each in one file; cron lines use full paths; "
            "make deps installs every package of their apt-get lines",
            blocks_parse)
    tap.run_as_root("make demo and make deps-build: the build's packages (and the demo's "
                    "lighttpd), said, no npm ci", "runuser nobody", demo_needs_little)
    tap.run("IDEMHOOK_LOG that cannot be opened: said once, lines on stderr instead",
            unusable_log_said, bindir)
    why = "a mount namespace with overlays on /etc, /var, /run, /usr/local"
    tap.run_as_root("IDEMHOOK_LOG=syslog: request and processing lines reach /dev/log",
                    why, syslog_lines, bindir)
    tap.run_as_root("make demo: its own store, said where, processing lines shown", why,
                    demo_own_folder, bindir)
    tap.run_as_root("lighttpd recipe as written: accepted, duplicate, 401, check clean, "
                    "lines in IDEMHOOK_LOG, cron; sockets again after a reboot, with and without "
                    "systemd-tmpfiles; installs lighttpd only; man idemhook; then forwarding's "
                    "recipe: check names the destination, smoke's event forwarded", why,
                    server_recipe,
                    bindir, "lighttpd")
    tap.run_as_root("Apache vhost recipe as written, on an Apache running since its install "
                    "(a2enmod then a real restart): accepted, duplicate, 401, check clean, "
                    "lines in IDEMHOOK_LOG, cron; 404 at /hooks/* on another virtual host; "
                    "installs apache2 and mod_fcgid only",
                    why, server_recipe, bindir, "vhost")
    tap.run_as_root("PostgreSQL recipe as written, after the lighttpd recipe: the cluster "
                    "started, the store copied, deliveries recorded there, check clean, "
                    "pg_dump from cron", why, server_recipe, bindir, "lighttpd", postgres=True)
    tap.run_as_root("nginx recipe as written: accepted, duplicate, 401, check clean, "
                    "lines in IDEMHOOK_LOG, cron; installs nginx and spawn-fcgi only", why,
                    server_recipe, bindir, "nginx")
    tap.run_as_root("nginx with fcgiwrap recipe as written, fcgiwrap started the way a host "
                    "without systemd must: accepted, duplicate, 401, check clean, smoke, "
                    "lines in IDEMHOOK_LOG, cron; installs nginx and fcgiwrap (and spawn-fcgi "
                    "without systemd)", why, server_recipe, bindir, "fcgiwrap")
    tap.run("the host check: another writer's change is said, a recipe's fails",
            host_check_fair)
    tap.run("the host's server, settings and store folders unchanged by every recipe above",
            host_untouched, host)


if __name__ == "__main__":
    sys.exit(suite_main("recipes", run_cases, prefix=True))
