#!/usr/bin/env python3
"""Tests of the static build (make static) and of make install.

Usage: test_static.py BINDIR   (or IH_BIN=BINDIR test_static.py)

The static programs are taken from $IH_STATIC, else BINDIR/static (where
make check puts them); if they are missing there, this test builds them
with make STATIC_DIR=BINDIR/static static.

  - ldd finds no shared library in any of them;
  - stripe.fcgi, run as CGI in a chroot that holds nothing but the program
    and its data (no libfcgi, libsqlite3, libssl, libcrypto, not even libc),
    answers a signed delivery 200 accepted and writes the row, with its
    settings from the shipped www-config/idemhook.env.example; the
    dynamically linked BINDIR/stripe.fcgi cannot even start in the same
    chroot, which shows the libraries really are out of reach;
  - as CGI in the chroot, it reads no openssl.cnf from the path built into
    it, only the file OPENSSL_CONF names;
  - the static stripe.fcgi serves FastCGI behind lighttpd;
  - make install-files DESTDIR=... puts every file in its place.
"""

import base64
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (PROVIDERS, REPO, Server, check, check_eq,  # noqa: E402
                     console_conf, sign_stripe, suite_main)
import cases  # noqa: E402
import test_stripe as ts  # noqa: E402

LIBS = ("libfcgi", "libsqlite3", "libyajl", "libssl", "libcrypto")
PROGRAMS = [p + ".fcgi" for p in PROVIDERS] + ["idemhook"]


def make_env():
    env = dict(os.environ)
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
        env.pop(k, None)
    return env


def static_dir(bindir):
    d = os.environ.get("IH_STATIC") or os.path.join(bindir, "static")
    if all(os.path.exists(os.path.join(d, p)) for p in PROGRAMS):
        return d
    r = subprocess.run(["make", "-C", REPO, "--no-print-directory",
                        "STATIC_DIR=" + d, "static"], capture_output=True,
                       text=True, timeout=600, env=make_env())
    if r.returncode != 0:
        raise AssertionError("make static failed (%d): %s"
                             % (r.returncode, (r.stdout + r.stderr)[-1500:]))
    return d


def no_shared_libs(sdir):
    bad = []
    for p in PROGRAMS:
        path = os.path.join(sdir, p)
        r = subprocess.run(["ldd", path], capture_output=True, text=True, timeout=30)
        out = r.stdout + r.stderr
        if "not a dynamic executable" in out or "statically linked" in out:
            continue
        found = [lib for lib in LIBS if lib in out]
        if found:
            bad.append("%s needs %s" % (p, ", ".join(found)))
    check(not bad, "; ".join(bad))


def control_ldd(bindir):
    """The control binary is dynamic and does need the libraries."""
    r = subprocess.run(["ldd", os.path.join(bindir, "stripe.fcgi")],
                       capture_output=True, text=True, timeout=30)
    for lib in ("libfcgi", "libsqlite3", "libyajl", "libcrypto"):
        check(lib in r.stdout, "ldd %s/stripe.fcgi does not list %s: %r"
              % (bindir, lib, r.stdout[:300]))


class Jail:
    """A directory used as the root of a CGI run: /bin/<program>,
    /etc/idemhook.env and /data; no library anywhere."""

    def __init__(self, program):
        self.root = tempfile.mkdtemp(prefix="ih-e2e-jail-")
        os.makedirs(os.path.join(self.root, "bin"))
        os.makedirs(os.path.join(self.root, "etc"))
        self.prog = "/bin/" + os.path.basename(program)
        shutil.copy2(program, self.root + self.prog)

    def path(self, p):
        return os.path.join(self.root, p.lstrip("/"))

    def cgi(self, body, env, timeout=30):
        """Runs the program as CGI inside the chroot; returns
        (status, headers, body, stderr) or raises OSError if it cannot start."""
        full = {"GATEWAY_INTERFACE": "CGI/1.1", "REQUEST_METHOD": "POST",
                "CONTENT_LENGTH": str(len(body)), "CONTENT_TYPE": "application/json",
                "SCRIPT_NAME": "/hooks/stripe", "SERVER_PROTOCOL": "HTTP/1.1"}
        full.update(env)
        root = self.root

        def enter():
            os.chroot(root)
            os.chdir("/")
        r = subprocess.run([self.prog], input=body, capture_output=True, env=full,
                           preexec_fn=enter, timeout=timeout)
        head, _, rest = r.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, rest = r.stdout.partition(b"\n\n")
        headers = {}
        for line in head.decode("latin-1").splitlines():
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        status = int((headers.get("status") or "0").split()[0] or 0)
        return status, headers, rest, r.stderr.decode("utf-8", "replace"), r.returncode

    def cleanup(self):
        shutil.rmtree(self.root, ignore_errors=True)


def example_settings(jail, secret):
    """The shipped example with what a user fills in: the DB and the secret."""
    src = os.path.join(REPO, "www-config", "idemhook.env.example")
    out = []
    for line in open(src).read().splitlines():
        if line.startswith("IDEMHOOK_DB="):
            line = "IDEMHOOK_DB=/data/idemhook.db"
        elif line.startswith("IDEMHOOK_STRIPE_SECRET="):
            line = "IDEMHOOK_STRIPE_SECRET=" + secret
        out.append(line)
    with open(jail.path("/etc/idemhook.env"), "w") as f:
        f.write("\n".join(out) + "\n")
    os.chmod(jail.path("/etc/idemhook.env"), 0o600)


def chroot_static(sdir):
    jail = Jail(os.path.join(sdir, "stripe.fcgi"))
    try:
        secret = "whsec_" + os.urandom(16).hex()
        example_settings(jail, secret)
        eid = ts.SPEC.new_id("static")
        body = ts.SPEC.body(eid, ts.SPEC.default_type)
        env = {"IDEMHOOK_CONFIG": "/etc/idemhook.env",
               "HTTP_STRIPE_SIGNATURE": sign_stripe(secret, body)}
        status, _h, out, err, rc = jail.cgi(body, env)
        check(status == 200 and json.loads(out or b"null") == {"status": "accepted"},
              "expected 200 accepted, got %d %r (exit %d, stderr %r)"
              % (status, out[:200], rc, err[-300:]))
        db = jail.path("/data/idemhook.db")
        check(os.path.exists(db), "no database at /data/idemhook.db in the chroot")
        with sqlite3.connect("file:%s?mode=ro" % db, uri=True) as c:
            rows = c.execute("SELECT payload FROM payloads JOIN events ON events.id ="
                             " payloads.event WHERE provider='stripe' "
                             "AND event_id=?", (eid,)).fetchall()
        check_eq(len(rows), 1, "rows for %s" % eid)
        check(bytes(rows[0][0]) == body, "stored payload differs from the body")
        # A redelivery: a second process on the same file.
        env["HTTP_STRIPE_SIGNATURE"] = sign_stripe(secret, body)
        status, _h, out, err, rc = jail.cgi(body, env)
        check(status == 200 and json.loads(out or b"null") == {"status": "duplicate"},
              "redelivery: expected 200 duplicate, got %d %r" % (status, out[:200]))
        # A forged one.
        env["HTTP_STRIPE_SIGNATURE"] = "t=%d,v1=%s" % (time.time(), os.urandom(32).hex())
        status, _h, out, err, rc = jail.cgi(body, env)
        check_eq(status, 401, "forged delivery status")
    finally:
        jail.cleanup()


# An OpenSSL configuration that activates only the null provider: a
# program that reads it has no HMAC at all.
NULL_PROVIDER_CNF = """openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
[provider_sect]
null = null_sect
[null_sect]
activate = 1
"""


def chroot_openssl_conf(sdir):
    """Plain CGI of the static build reads no openssl.cnf from the path
    built into it (the build machine's /usr/lib/ssl), which means nothing
    on the host that runs it; a file OPENSSL_CONF names is read."""
    jail = Jail(os.path.join(sdir, "stripe.fcgi"))
    try:
        secret = "whsec_" + os.urandom(16).hex()
        example_settings(jail, secret)
        for d in ("/usr/lib/ssl", "/opt"):
            os.makedirs(jail.path(d), exist_ok=True)
            with open(jail.path(d + "/openssl.cnf"), "w") as f:
                f.write(NULL_PROVIDER_CNF)
        eid = ts.SPEC.new_id("static-cnf")
        body = ts.SPEC.body(eid, ts.SPEC.default_type)
        env = {"IDEMHOOK_CONFIG": "/etc/idemhook.env",
               "HTTP_STRIPE_SIGNATURE": sign_stripe(secret, body)}
        status, _h, out, err, rc = jail.cgi(body, env)
        check(status == 200 and json.loads(out or b"null") == {"status": "accepted"},
              "with the build's openssl.cnf path holding a null-provider file: "
              "expected 200 accepted, got %d %r (exit %d, stderr %r)"
              % (status, out[:200], rc, err[-300:]))
        eid = ts.SPEC.new_id("static-cnf")
        body = ts.SPEC.body(eid, ts.SPEC.default_type)
        env = {"IDEMHOOK_CONFIG": "/etc/idemhook.env",
               "OPENSSL_CONF": "/opt/openssl.cnf",
               "HTTP_STRIPE_SIGNATURE": sign_stripe(secret, body)}
        status, _h, out, err, rc = jail.cgi(body, env)
        check(status != 200, "OPENSSL_CONF naming a null-provider file: expected "
              "no HMAC and a refusal, got %d %r" % (status, out[:200]))
        with sqlite3.connect("file:%s?mode=ro" % jail.path("/data/idemhook.db"),
                             uri=True) as c:
            n = c.execute("SELECT count(*) FROM events WHERE event_id = ?",
                          (eid,)).fetchone()[0]
        check_eq(n, 0, "rows of the delivery refused for want of an HMAC")
    finally:
        jail.cleanup()


def chroot_dynamic_fails(bindir):
    """The same chroot hides the shared libraries from a dynamic program."""
    jail = Jail(os.path.join(bindir, "stripe.fcgi"))
    try:
        try:
            status, _h, out, err, rc = jail.cgi(b"{}", {})
        except OSError:
            return  # ENOENT: no dynamic loader, no libraries
        check(rc != 0 and status != 200,
              "the dynamic stripe.fcgi ran in the empty chroot (exit %d, status %d)"
              % (rc, status))
    finally:
        jail.cleanup()


def fastcgi_static(srv):
    cases.case_accepted(ts.SPEC, srv)
    cases.case_duplicate(ts.SPEC, srv)
    cases.case_forged(ts.SPEC, srv)


def static_idemhook(sdir, srv, *args, env=None):
    e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IDEMHOOK_DB": srv.db,
         "IDEMHOOK_STRIPE_SECRET": srv.secrets["stripe"]}
    e.update(env or {})
    p = subprocess.run([os.path.join(sdir, "idemhook")] + list(args), env=e,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def with_console(bindir, srv):
    """The static console.fcgi beside the receiver, on its own settings;
    returns its Authorization header."""
    from test_console import USER
    from test_thin import fast_hash
    password = "static console " + os.urandom(4).hex()
    console = os.path.join(srv.tmp, "console.env")
    with open(console, "w") as f:
        f.write("IDEMHOOK_DB=%s\nIDEMHOOK_CONSOLE_USER=%s\n"
                "IDEMHOOK_CONSOLE_PASSWORD_HASH=%s\n"
                % (srv.db, USER, fast_hash(bindir, password)))
    os.chmod(console, 0o600)
    srv.extra_conf = "\n".join(console_conf(console, srv.settings_file()))
    return "Basic " + base64.b64encode(("%s:%s" % (USER, password)).encode()).decode()


def thin_waits(sdir, srv, auth):
    """Issue 39, item 5: the static build has no HTTP client.  A Stripe
    thin event through the static stripe.fcgi is recorded; the static
    idemhook work, even with an API key, leaves it waiting (never dead)
    with one line saying why; show says why; check says what this build
    lacks, and that the API key does nothing here."""
    eid = "evt_static_thin_" + os.urandom(4).hex()
    sub = "sub_static_" + os.urandom(4).hex()
    body = json.dumps({
        "id": eid, "object": "v2.core.event", "type": "v1.customer.subscription.updated",
        "created": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        "livemode": False, "context": None,
        "related_object": {"id": sub, "type": "subscription",
                           "url": "/v1/subscriptions/" + sub}},
        separators=(",", ":")).encode()
    r = srv.post(srv.url("stripe"), body, {"Stripe-Signature": sign_stripe(
        srv.secrets["stripe"], body), "Content-Type": "application/json"})
    check_eq(r.status, 200, "thin notification to the static stripe.fcgi")
    env = {"IDEMHOOK_STRIPE_API_KEY": "sk_test_static_" + os.urandom(4).hex(),
           "IDEMHOOK_STRIPE_API_BASE": "https://api.stripe.invalid",
           "IDEMHOOK_MAX_ATTEMPTS": "1", "IDEMHOOK_RETRY_BASE_MS": "100"}
    for _ in range(2):
        rc, out, err = static_idemhook(sdir, srv, "work", "--once", env=env)
        check_eq(rc, 0, "static work --once (stdout %r, stderr %r)" % (out, err[-600:]))
        time.sleep(0.2)
    check("thin events wait for their fetch: this build has no HTTP client" in err,
          "work's line: %r" % err[-600:])
    rows = srv.rows("stripe", eid)
    check_eq([(x["status"], x["needs_fetch"], x["attempts"]) for x in rows],
             [("received", 1, 0)], "the thin event waits, never claimed")
    rc, out, err = static_idemhook(sdir, srv, "list", "--provider", "stripe")
    check(rc == 0 and any(eid in l and "received (waits for fetch)" in l
                          for l in out.splitlines()), "list: %d %r" % (rc, out[-800:]))
    rc, out, err = static_idemhook(sdir, srv, "show", "stripe", eid)
    check(rc == 0 and "waiting: a Stripe thin event" in out and "no HTTP client" in out,
          "show: %d %r %r" % (rc, out[:600], err[-300:]))
    r = srv.get("/hooks/console/events/stripe/" + eid, {"Authorization": auth})
    check(r.status == 200 and b'<td id="fetch">waiting: a Stripe thin event' in r.body
          and b"no HTTP client" in r.body, "the static console's event page: %d %r"
          % (r.status, r.body[-1200:]))
    rc, out, err = static_idemhook(sdir, srv, "check", "--provider", "stripe", env=env)
    check("note: this build has no HTTP client" in out and
          "catch-up, health and Stripe thin events are unavailable" in out,
          "check names no missing feature: %r" % out[-1500:])
    check("note: this build has no PostgreSQL client" in out, "check on PostgreSQL: %r"
          % out[-1500:])
    check(rc == 1 and "PROBLEM: IDEMHOOK_STRIPE_API_KEY (environment) does nothing" in out,
          "check passes a key that does nothing: %d %r" % (rc, out[-1500:]))
    check(env["IDEMHOOK_STRIPE_API_KEY"] not in out + err, "check printed the key")


def install_files(sdir):
    dest = tempfile.mkdtemp(prefix="ih-e2e-install-")
    try:
        r = subprocess.run(["make", "-C", REPO, "--no-print-directory", "install-files",
                            "INSTALL_FROM=" + sdir, "DESTDIR=" + dest,
                            "PREFIX=/usr/local"],
                           capture_output=True, text=True, timeout=120, env=make_env())
        check(r.returncode == 0, "make install-files failed (%d): %s"
              % (r.returncode, (r.stdout + r.stderr)[-800:]))
        root = os.path.join(dest, "usr", "local")
        want = ["bin/idemhook", "share/idemhook/schema.sql",
                "share/idemhook/schema-postgres.sql",
                "share/idemhook/idemhook.env.example",
                "share/idemhook/www-config/apache/fcgid.htaccess",
                "share/idemhook/www-config/apache/cgi.htaccess",
                "share/idemhook/www-config/apache/vhost.conf",
                "share/idemhook/www-config/apache/idemhook-server.conf",
                "share/idemhook/www-config/lighttpd/idemhook.conf",
                "share/idemhook/www-config/lighttpd/hooks-stripe.conf",
                "share/idemhook/www-config/nginx/idemhook.conf"]
        want += ["libexec/idemhook/%s.fcgi" % p for p in PROVIDERS]
        if os.path.exists(os.path.join(REPO, "handlers", "cli", "idemhook.1")):
            want.append("share/man/man1/idemhook.1")
        missing = [w for w in want if not os.path.isfile(os.path.join(root, w))]
        check(not missing, "not installed: %s" % missing)
        for w in ["bin/idemhook"] + ["libexec/idemhook/%s.fcgi" % p for p in PROVIDERS]:
            check(os.access(os.path.join(root, w), os.X_OK), "%s is not executable" % w)
        db = os.path.join(dest, "var", "idemhook.db")
        r = subprocess.run([os.path.join(root, "bin", "idemhook"), "--db", db, "init"],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0 and os.path.exists(db),
              "installed idemhook init failed (%d): %s" % (r.returncode, r.stderr[-300:]))
    finally:
        shutil.rmtree(dest, ignore_errors=True)


def no_forwarding(sdir):
    """The static build has no HTTP client (no libcurl): a forwarding
    setting is refused by name, never ignored."""
    tmp = tempfile.mkdtemp(prefix="ih-static-fwd-")
    try:
        env = {"PATH": "/usr/bin:/bin", "IDEMHOOK_DB": os.path.join(tmp, "e.db"),
               "IDEMHOOK_STRIPE_SECRET": "whsec_" + os.urandom(8).hex(),
               "IDEMHOOK_STRIPE_FORWARD_URL": "https://app.example/hooks/stripe",
               "IDEMHOOK_STRIPE_FORWARD_SECRET": "whsec_" + os.urandom(8).hex()}
        r = subprocess.run([os.path.join(sdir, "idemhook"), "check", "--provider",
                            "stripe"], env=env, capture_output=True, text=True,
                           timeout=60)
        out = r.stdout + r.stderr
        check(r.returncode != 0 and "IDEMHOOK_STRIPE_FORWARD_URL is set, but this "
              "build of idemhook has no HTTP client" in out,
              "static check with forwarding: exit %d: %s" % (r.returncode, out[-600:]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_cases(tap, bindir, servers):
    holder = {}

    def locate():
        holder["dir"] = static_dir(bindir)

    if not tap.run("static programs present (built by make static if missing)", locate):
        return
    sdir = holder["dir"]
    tap.run("ldd: no shared library in any static program", no_shared_libs, sdir)
    tap.run("control: ldd lists libfcgi, libsqlite3, libyajl, libcrypto for BINDIR/stripe.fcgi",
            control_ldd, bindir)
    tap.run_as_root("control: the dynamic stripe.fcgi cannot run in the library-less chroot",
                    "chroot(2)", chroot_dynamic_fails, bindir)
    tap.run_as_root("stripe.fcgi as CGI in a chroot without any library, settings from "
                    "idemhook.env.example: 200 accepted + row, duplicate, 401",
                    "chroot(2)", chroot_static, sdir)
    tap.run_as_root("stripe.fcgi as CGI in a chroot: reads no openssl.cnf from the "
                    "build's path (a null-provider file there: 200 accepted), but "
                    "the one OPENSSL_CONF names (no HMAC: refused)",
                    "chroot(2)", chroot_openssl_conf, sdir)
    srv = servers.add(Server(sdir, providers=["stripe"], name="static"))
    auth = with_console(bindir, srv)
    if tap.run("lighttpd starts the static stripe.fcgi (FastCGI)", srv.start):
        tap.run("FastCGI: accepted, duplicate, forged -> 401", fastcgi_static, srv)
        tap.run("thin event: recorded, then waits in a build without an HTTP client, "
                "never dead; list, show, the console and check say why", thin_waits,
                sdir, srv, auth)
        srv.stop()
    tap.run("make install-files DESTDIR=...: programs, schema, example, configs, man page",
            install_files, sdir)
    tap.run("no forwarding in the static build: its settings are refused",
            no_forwarding, sdir)


if __name__ == "__main__":
    sys.exit(suite_main("static", run_cases, prefix=True))
