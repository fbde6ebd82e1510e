#!/usr/bin/env python3
"""The console's sign-in through a real lighttpd: budgets in the store
answered 429 at once instead of a pause, and no password over plain HTTP.

One lighttpd serves console.fcgi twice on one store: as FastCGI (the
shipped hooks-console.conf, one long-lived process) and as plain CGI
(lighttpd's mod_cgi, a fresh process per request), on 127.0.0.1 and
also on a non-loopback IPv4 address of this machine.  Clients speak
from several loopback addresses (127.0.0.2, ...) to be several clients.

  flood         wrong sign-ins from 4 connections at once: 401 while the
                client's budget lasts, then 429 + Retry-After, each answer
                at once (nothing sleeps); the operator's right password
                during the flood is let in promptly
  client        a wrong password for the real name: CONSOLE_CLIENT_TRIES
                401s, then 429 without checking it; another client is
                unaffected
  processes     the budget kept by CGI processes holds for the FastCGI
                one and the other way round; the rows are in the store
  concurrent    12 CGI processes at once from one address: exactly the
                budget is checked (each charge one atomic statement)
  user          the name's budget spent from many addresses: a client
                that already failed waits (429), a clean one still has its
                password checked, and the right one gets in
  plain HTTP    from the machine's non-loopback address, Basic sign-in is
                refused 403 https_required (no challenge, no check);
                IDEMHOOK_CONSOLE_TLS_PROXY=1 allows it and sends HSTS
  HTTPS         a real Apache with mod_ssl on that address (HTTPS=on, a
                certificate made for the run): Basic sign-in taken, HSTS sent

tests/run.sh runs it on SQLite and, with IH_DB_BACKEND=pg, on PostgreSQL.
Usage: test_console_signin.py BINDIR   (or IH_BIN=BINDIR ...)
"""
import http.client
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (APACHE_MODULES, ApacheServer, HarnessError,  # noqa: E402
                     Server, apache_quote, check, check_eq, conf_array, console_conf,
                     db_connect, is_pg, pg_backend, pg_new_db, suite_main)
from test_console import (USER, ConsoleApache, console_settings,  # noqa: E402
                          operator, write_settings)
from test_console import basic_auth as basic  # noqa: E402

CLIENT_TRIES = 5   # console_throttle.h
USER_TRIES = 20
FAST = 2.0         # seconds: an answer that did not sleep (ASan build, busy host)
FCGI = "/hooks/console/"
CGI = "/cgi/console.cgi/"


def host_address():
    """A non-loopback IPv4 address of this machine, or None."""
    try:
        out = subprocess.run(["ip", "-4", "-o", "addr", "show", "scope", "global"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             timeout=10).stdout.decode()
    except (OSError, subprocess.SubprocessError):
        out = ""
    for line in out.splitlines():
        parts = line.split()
        if "inet" in parts:
            addr = parts[parts.index("inet") + 1].split("/")[0]
            if not addr.startswith("127."):
                return addr
    return None


class Answer:
    def __init__(self, status, headers, body, took):
        self.status, self.headers, self.body, self.took = status, headers, body, took

    def header(self, name):
        return self.headers.get(name.lower())

    def __repr__(self):
        return "<%d %.2fs %r>" % (self.status, self.took, self.body[:120])


def get(port, path, auth=None, source="127.0.0.1", host="127.0.0.1", timeout=30,
        tls=None):
    """GET path from the client address source (over TLS with tls, an
    ssl.SSLContext); the answer and its time."""
    if tls is not None:
        conn = http.client.HTTPSConnection(host, port, timeout=timeout, context=tls,
                                           source_address=(source, 0))
    else:
        conn = http.client.HTTPConnection(host, port, timeout=timeout,
                                          source_address=(source, 0))
    headers = {"Authorization": auth} if auth else {}
    t0 = time.monotonic()
    try:
        conn.request("GET", path, headers=headers)
        r = conn.getresponse()
        body = r.read()
        hdrs = {k.lower(): v for k, v in r.getheaders()}
        return Answer(r.status, hdrs, body, time.monotonic() - t0)
    finally:
        conn.close()


def retry_after(a):
    v = a.header("retry-after")
    check(v is not None and v.isdigit() and 1 <= int(v) <= 900,
          "429 without a Retry-After of whole seconds: %r %r" % (v, a))
    return int(v)


class SigninServer(Server):
    """The harness's lighttpd, listening also on a non-loopback address."""

    def __init__(self, *a, **kw):
        self.also_bind = None
        self.port2 = 0
        Server.__init__(self, *a, **kw)

    def write_conf(self, port):
        if self.also_bind:
            sock = socket.socket()
            sock.bind((self.also_bind, 0))
            self.port2 = sock.getsockname()[1]
            sock.close()
            self.extra_conf += '\n$SERVER["socket"] == "%s:%d" { }\n' % (
                self.also_bind, self.port2)
        return Server.write_conf(self, port)


class ApacheTLS(ConsoleApache):
    """The shipped fcgid.htaccess with console.fcgi next to the receivers,
    and Apache's mod_ssl on a second listener at addr (a self-signed
    certificate for that address, made here): a real HTTPS=on."""

    def __init__(self, bin, addr, **kw):
        self.addr = addr
        self.port2 = 0
        ApacheServer.__init__(self, bin, **kw)

    def write_conf(self, port):
        path = ApacheServer.write_conf(self, port)
        etc = os.path.join(self.tmp, "etc")
        self.cert = os.path.join(etc, "tls.crt")
        key = os.path.join(etc, "tls.key")
        p = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                            "-keyout", key, "-out", self.cert, "-days", "1",
                            "-subj", "/CN=idemhook-test",
                            "-addext", "subjectAltName=IP:%s" % self.addr],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        if p.returncode != 0:
            raise HarnessError("openssl req: %r" % p.stdout[-300:])
        sock = socket.socket()
        sock.bind((self.addr, 0))
        self.port2 = sock.getsockname()[1]
        sock.close()
        with open(path, "a") as f:
            f.write("\n".join([
                "LoadModule ssl_module %s" % apache_quote(
                    os.path.join(APACHE_MODULES, "mod_ssl.so")),
                "Listen %s:%d https" % (self.addr, self.port2),
                "<VirtualHost %s:%d>" % (self.addr, self.port2),
                "  SSLEngine on",
                "  SSLCertificateFile %s" % apache_quote(self.cert),
                "  SSLCertificateKeyFile %s" % apache_quote(key),
                "</VirtualHost>", ""]))
        return path


def over_https(tap, servers, bin, hsh, good, addr):
    """Apache with mod_ssl: from the non-loopback address, Basic sign-in
    over HTTPS is let in with HSTS; the same address over plain HTTP (the
    lighttpd case) is not."""
    import ssl

    def case():
        check(addr is not None, "this machine has no non-loopback IPv4 address")
        apache = ApacheTLS(bin, addr, mode="fcgid", providers=["stripe"],
                           name="apache-tls", db=pg_new_db() if pg_backend() else None,
                           env={"IDEMHOOK_CONSOLE_USER": USER,
                                "IDEMHOOK_CONSOLE_PASSWORD_HASH": hsh})
        servers.add(apache)
        apache.start()
        ctx = ssl.create_default_context(cafile=apache.cert)
        a = get(apache.port2, "/hooks/console/", good, source=addr, host=addr, tls=ctx)
        check_eq(a.status, 200, "HTTPS from %s (%r)" % (addr, a))
        check((a.header("strict-transport-security") or "").startswith("max-age="),
              "no HSTS over HTTPS: %r" % a.headers)
        a = get(apache.port2, "/hooks/console/", basic(USER, "wrong"), source=addr,
                host=addr, tls=ctx)
        check_eq(a.status, 401, "a wrong password over HTTPS is checked")
        a = get(apache.port, "/hooks/console/", good)
        check_eq(a.status, 200, "plain HTTP on loopback")
        check(a.header("strict-transport-security") is None, "HSTS over plain HTTP")
        apache.stop()
    tap.run("console sign-in: over HTTPS (Apache mod_ssl, HTTPS=on) from a non-loopback "
            "address, Basic sign-in is taken and HSTS sent", case)


def run_cases(tap, bin, servers):
    password, hsh = operator(bin)
    good = basic(USER, password)
    srv = SigninServer(bin, providers=["stripe"], name="signin")
    settings = console_settings(srv, hsh)
    cgi_dir = os.path.join(srv.tmp, "www", "cgi")
    os.makedirs(cgi_dir, exist_ok=True)
    shutil.copy2(os.path.join(bin, "console.fcgi"), os.path.join(cgi_dir, "console.cgi"))
    srv.also_bind = host_address()
    cgi_env = {"IDEMHOOK_DB": srv.db, "IDEMHOOK_CONFIG": settings}
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "PATH"):
        if os.environ.get(k):
            cgi_env[k] = os.environ[k]
    srv.extra_conf = "\n".join([
        'server.modules += ("mod_cgi", "mod_setenv")',
        '$HTTP["url"] =^ "/cgi/" {',
        '  cgi.assign = (".cgi" => "")',
        '  setenv.add-environment = %s' % conf_array(cgi_env),
        '}'] + console_conf(settings, srv.settings_file()))
    servers.add(srv)
    srv.start()
    port = srv.port
    backend = "postgresql" if pg_backend() else "sqlite"

    def flood():
        # Four connections keep sending a wrong name from one address
        # while the operator, from the same address, signs in: the
        # first sign-in of the FastCGI process, so its password is
        # checked (scrypt), not remembered.
        answers, stop = [], threading.Event()
        lock = threading.Lock()

        def attacker(i):
            while not stop.is_set():
                a = get(port, FCGI, basic("x", "y%d" % i))
                with lock:
                    answers.append(a)
        threads = [threading.Thread(target=attacker, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        time.sleep(1.0)
        op = get(port, FCGI + "events", good)
        time.sleep(0.5)
        stop.set()
        for t in threads:
            t.join(60)
        statuses = [a.status for a in answers]
        took = sorted(a.took for a in answers)
        tap.diag("flood: %d wrong sign-ins, %d answered 401, %d answered 429, "
                 "median %.3fs, slowest %.3fs; the operator's sign-in took %.3fs"
                 % (len(answers), statuses.count(401), statuses.count(429),
                    took[len(took) // 2], took[-1], op.took))
        check_eq(op.status, 200, "the operator's sign-in during the flood (%r)" % op)
        check(op.took < 3.0, "the operator's sign-in took %.2fs during the flood" % op.took)
        check(set(statuses) <= {401, 429}, "answers %r" % sorted(set(statuses)))
        check(statuses.count(401) <= CLIENT_TRIES,
              "%d wrong sign-ins answered 401 (checked), budget %d"
              % (statuses.count(401), CLIENT_TRIES))
        check(statuses.count(429) >= 10, "only %d answers 429" % statuses.count(429))
        # One FastCGI process answers in turn: a wrong sign-in may wait
        # behind the operator's scrypt, never behind a pause.
        check(took[len(took) // 2] < 0.5, "the median wrong sign-in took %.2fs"
              % took[len(took) // 2])
        check(took[-1] < 4.0, "a wrong sign-in was answered after %.2fs" % took[-1])
        for a in answers:
            if a.status == 429:
                retry_after(a)
                check(a.header("www-authenticate") is None, "a 429 asks for credentials")
                check(b"too_many_attempts" in a.body, "429 body %r" % a.body[:200])
        log = srv.errorlog()
        check("console auth=throttled user=x remote=127.0.0.1 retry_after=" in log,
              "no log line for a throttled sign-in")
    tap.run("console sign-in: a flood of wrong sign-ins is answered 429 + Retry-After at "
            "once, and the operator's right password gets in promptly during it", flood)

    def baseline():
        check_eq(is_pg(srv.db), pg_backend(), "the store is %s" % backend)
        for path in (FCGI, CGI):
            a = get(port, path, good)
            check_eq(a.status, 200, "%s with the right password (%r)" % (path, a))
            check(a.header("strict-transport-security") is None,
                  "HSTS over plain HTTP: %r" % a.headers)
    tap.run("console sign-in: the right password is let in over FastCGI and CGI (%s)"
            % backend, baseline)

    def client_budget():
        wrong = basic(USER, "not-" + password)
        got = [get(port, CGI, wrong, source="127.0.0.2") for _ in range(CLIENT_TRIES + 3)]
        check_eq([a.status for a in got],
                 [401] * CLIENT_TRIES + [429] * 3, "wrong passwords from 127.0.0.2")
        for a in got[CLIENT_TRIES:]:
            retry_after(a)
            check(a.took < FAST, "a 429 took %.2fs" % a.took)
        # Spent for this address under plain CGI, where no process
        # remembers a password: even the right one waits.
        a = get(port, CGI, good, source="127.0.0.2")
        check_eq(a.status, 429, "the right password from the spent address (CGI)")
        a = get(port, CGI, good, source="127.0.0.3")
        check_eq(a.status, 200, "the right password from another address (%r)" % a)
        log = srv.errorlog()
        check("not-" + password not in log and password not in log, "a password in the log")
        check(hsh not in log, "the hash in the log")
    tap.run("console sign-in: wrong passwords from one address: %d checked (401), then 429 "
            "unchecked; another address is let in" % CLIENT_TRIES, client_budget)

    def across_processes():
        wrong = basic(USER, "guess")
        # CGI processes spend 127.0.0.4's budget; the FastCGI process
        # then refuses it too, and the reverse for 127.0.0.5.
        got = [get(port, CGI, wrong, source="127.0.0.4").status
               for _ in range(CLIENT_TRIES)]
        check_eq(got, [401] * CLIENT_TRIES, "CGI, 127.0.0.4")
        a = get(port, FCGI, wrong, source="127.0.0.4")
        check_eq(a.status, 429, "FastCGI after CGI spent 127.0.0.4's budget")
        got = [get(port, FCGI, wrong, source="127.0.0.5").status
               for _ in range(CLIENT_TRIES)]
        check_eq(got, [401] * CLIENT_TRIES, "FastCGI, 127.0.0.5")
        a = get(port, CGI, wrong, source="127.0.0.5")
        check_eq(a.status, 429, "CGI after FastCGI spent 127.0.0.5's budget")
        with db_connect(srv.db) as c:
            n = c.execute("SELECT count(*) FROM console_signin "
                          "WHERE failures >= %d" % CLIENT_TRIES).fetchone()[0]
        check(n >= 3, "%d spent budgets in the store's console_signin" % n)
    tap.run("console sign-in: the budget is kept in the %s store and holds across CGI and "
            "FastCGI processes" % backend, across_processes)

    def concurrent():
        # Twelve CGI processes at once from one address: each charge
        # is one atomic statement, so exactly the budget is checked.
        got, lock = [], threading.Lock()

        def one():
            a = get(port, CGI, basic("ops", "guess"), source="127.0.0.6")
            with lock:
                got.append(a.status)
        threads = [threading.Thread(target=one) for _ in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        check_eq(sorted(got), [401] * CLIENT_TRIES + [429] * (12 - CLIENT_TRIES),
                 "12 sign-ins at once from one address")
    tap.run("console sign-in: 12 sign-ins at once in 12 CGI processes: exactly %d "
            "checked, the rest 429" % CLIENT_TRIES, concurrent)

    def user_budget():
        wrong = basic(USER, "spray")
        # Earlier cases spent 5 + 5 + 5 + 1 of the name's 20.
        for i in range(10, 14):
            for _ in range(CLIENT_TRIES):
                get(port, CGI, wrong, source="127.0.0.%d" % i)
        a = get(port, CGI, wrong, source="127.0.0.20")
        check_eq(a.status, 401, "a clean address's wrong password is still checked")
        a = get(port, CGI, wrong, source="127.0.0.20")
        check_eq(a.status, 429, "the same address's second try, the name's budget spent")
        check(retry_after(a) > 300, "Retry-After %r is not the name's window" %
              a.header("retry-after"))
        a = get(port, CGI, good, source="127.0.0.21")
        check_eq(a.status, 200, "the operator from a clean address (%r)" % a)
        a = get(port, CGI, basic("nobody", "spray"), source="127.0.0.21")
        check_eq(a.status, 401, "another name is not held by this one's budget")
    tap.run("console sign-in: the name's budget spent from many addresses: a failing "
            "address waits, a clean one is checked and the operator gets in", user_budget)

    def plain_http():
        addr = srv.also_bind
        check(addr is not None, "this machine has no non-loopback IPv4 address to "
              "test from (ip -4 addr show scope global)")
        a = get(srv.port2, FCGI, good, source=addr, host=addr)
        check_eq(a.status, 403, "right password over plain HTTP from %s (%r)" % (addr, a))
        check(b"https_required" in a.body, "403 body %r" % a.body[:200])
        check(a.header("www-authenticate") is None, "a challenge over plain HTTP")
        a = get(srv.port2, CGI, None, source=addr, host=addr)
        check_eq(a.status, 403, "no credentials over plain HTTP (CGI)")
        check(a.header("www-authenticate") is None, "a challenge over plain HTTP (CGI)")
        check("console refused=plain_http remote=%s" % addr in srv.errorlog(),
              "no log line for the refusal")
        write_settings(settings, IDEMHOOK_CONSOLE_USER=USER,
                       IDEMHOOK_CONSOLE_PASSWORD_HASH=hsh,
                       IDEMHOOK_CONSOLE_TLS_PROXY="1")
        for path in (FCGI, CGI):
            a = get(srv.port2, path, good, source=addr, host=addr)
            check_eq(a.status, 200, "%s with IDEMHOOK_CONSOLE_TLS_PROXY=1 (%r)" % (path, a))
            check((a.header("strict-transport-security") or "").startswith("max-age="),
                  "no HSTS behind a TLS proxy: %r" % a.headers)
        write_settings(settings, IDEMHOOK_CONSOLE_USER=USER,
                       IDEMHOOK_CONSOLE_PASSWORD_HASH=hsh)
        a = get(port, FCGI, good)
        check_eq(a.status, 200, "loopback over plain HTTP")
    tap.run("console sign-in: Basic credentials refused over plain HTTP from a "
            "non-loopback address; IDEMHOOK_CONSOLE_TLS_PROXY=1 takes them, with HSTS",
            plain_http)
    srv.stop()
    over_https(tap, servers, bin, hsh, good, srv.also_bind)


if __name__ == "__main__":
    sys.exit(suite_main("console sign-in", run_cases))
