#!/usr/bin/env python3
"""Issue 37, items 8 and 9, through the built programs:

  app key       idemhook check audits IDEMHOOK_GITHUB_APP_KEY_FILE like
                the other secret files (mode, owner, symbolic link)
  encrypted     an encrypted App key makes idemhook fail with a clear
                error, without asking for a pass phrase on the terminal
                (the command runs with a pseudo-terminal as its
                controlling terminal, where OpenSSL would ask)
  cgi log       idemhook check --docroot on a plain CGI layout (an
                .htaccess with cgi-script) reports IDEMHOOK_LOG unset
                (the detached processing child logs nowhere); set, ok
  proxy         IDEMHOOK_CONSOLE_TRUSTED_PROXY: one client's wrong
                passwords behind the proxy spend that client's budget
                only (X-Forwarded-For's last hop, taken only from the
                proxy's address); a malformed value is refused by the
                console (500) and by check

console.fcgi runs as a plain CGI program, as a web server runs it.
Usage: test_unauth.py BINDIR   (or IH_BIN=BINDIR test_unauth.py)
"""

import os
import pty
import select
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import check, check_eq, suite_main  # noqa: E402
from test_console import USER, operator  # noqa: E402
from test_console import basic_auth as basic  # noqa: E402

CLIENT_TRIES = 5   # console_throttle.h


def base_env(tmp, **kw):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "IDEMHOOK_DB": os.path.join(tmp, "data", "events.db")}
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
        if k in os.environ:
            env[k] = os.environ[k]
    env.update(kw)
    return env


def idemhook(bindir, env, *args):
    p = subprocess.run([os.path.join(bindir, "idemhook")] + list(args), env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       stdin=subprocess.DEVNULL, timeout=120)
    err = p.stderr.decode("utf-8", "replace")
    check("Sanitizer" not in err, "sanitizer: %s" % err[-800:])
    return p.returncode, p.stdout.decode("utf-8", "replace"), err


def rsa_pem(path, password=None):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    k = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    enc = (serialization.BestAvailableEncryption(password) if password
           else serialization.NoEncryption())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(k.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.TraditionalOpenSSL, enc))


def lines(out, start):
    return [ln for ln in out.splitlines() if start in ln]


def case_app_key(bindir, tmp):
    key = os.path.join(tmp, "app.pem")
    rsa_pem(key)
    env = base_env(tmp, IDEMHOOK_GITHUB_APP_KEY_FILE=key)
    idemhook(bindir, env, "init")
    os.chmod(key, 0o644)
    _, out, _ = idemhook(bindir, env, "check")
    check(any(ln.startswith("PROBLEM: IDEMHOOK_GITHUB_APP_KEY_FILE %s has mode 0644" % key)
              for ln in out.splitlines()), "0644 key: %r" % lines(out, "APP_KEY"))
    os.chmod(key, 0o600)
    _, out, _ = idemhook(bindir, env, "check")
    check(any(ln.startswith("ok: IDEMHOOK_GITHUB_APP_KEY_FILE %s is owner-only (0600)" % key)
              for ln in out.splitlines()), "0600 key: %r" % lines(out, "APP_KEY"))
    link = os.path.join(tmp, "app-link.pem")
    os.symlink(key, link)
    _, out, _ = idemhook(bindir, base_env(tmp, IDEMHOOK_GITHUB_APP_KEY_FILE=link), "check")
    check(any(ln.startswith("PROBLEM: IDEMHOOK_GITHUB_APP_KEY_FILE %s is a symbolic link"
                            % link) for ln in out.splitlines()),
          "symlinked key: %r" % lines(out, "APP_KEY"))
    if os.geteuid() == 0:
        os.chown(key, 65534, 65534)
        _, out, _ = idemhook(bindir, env, "check")
        check(any(ln.startswith("PROBLEM: IDEMHOOK_GITHUB_APP_KEY_FILE %s belongs to" % key)
                  for ln in out.splitlines()), "key of another user: %r"
              % lines(out, "APP_KEY"))


def case_encrypted(bindir, tmp):
    key = os.path.join(tmp, "enc.pem")
    rsa_pem(key, b"a pass phrase")
    env = base_env(tmp, IDEMHOOK_GITHUB_APP_KEY_FILE=key, IDEMHOOK_GITHUB_APP_ID="1234567",
                   IDEMHOOK_GITHUB_HOOKS="app/87654321",
                   IDEMHOOK_GITHUB_API_BASE="http://127.0.0.1:9")
    master, slave = pty.openpty()

    def controlling():
        os.setsid()
        import fcntl
        import termios
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    p = subprocess.Popen([os.path.join(bindir, "idemhook"), "health", "--provider", "github"],
                         env=env, stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=controlling, close_fds=True)
    os.close(slave)
    tty, deadline = b"", time.monotonic() + 30
    while p.poll() is None and time.monotonic() < deadline:
        r, _, _ = select.select([master], [], [], 0.2)
        if r:
            try:
                tty += os.read(master, 4096)
            except OSError:
                break
    try:
        # Waiting on the terminal, it never ends by itself.
        p.wait(timeout=max(1.0, deadline - time.monotonic()))
        asked = False
    except subprocess.TimeoutExpired:
        asked = True
        p.kill()
    out, err = p.communicate(timeout=30)
    os.close(master)
    err = err.decode("utf-8", "replace")
    check(not asked and b"pass phrase" not in tty.lower(),
          "a pass phrase was asked on the terminal: %r" % tty[-200:])
    check("is encrypted" in err and "a pass phrase" not in err,
          "the error: %r" % err[-400:])
    check_eq(p.returncode, 2, "exit status (a configuration problem)")


def case_cgi_log(bindir, tmp):
    root = os.path.join(tmp, "public_html")
    os.makedirs(os.path.join(root, "hooks"))
    shutil.copy2(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                              "www-config", "apache", "cgi.htaccess"),
                 os.path.join(root, "hooks", ".htaccess"))
    env = base_env(tmp)
    _, out, _ = idemhook(bindir, env, "check", "--docroot", root)
    check(any(ln.startswith("PROBLEM: plain CGI (%s/hooks/.htaccess) with IDEMHOOK_LOG unset"
                            % root) for ln in out.splitlines()),
          "no IDEMHOOK_LOG: %r" % lines(out, "IDEMHOOK_LOG"))
    env["IDEMHOOK_LOG"] = os.path.join(tmp, "idemhook.log")
    _, out, _ = idemhook(bindir, env, "check", "--docroot", root)
    check("ok: IDEMHOOK_LOG is set" in out and "plain CGI (" not in out,
          "IDEMHOOK_LOG set: %r" % lines(out, "IDEMHOOK_LOG"))
    env["IDEMHOOK_MODE"] = "worker"
    del env["IDEMHOOK_LOG"]
    _, out, _ = idemhook(bindir, env, "check", "--docroot", root)
    check("plain CGI (" not in out, "worker mode runs no detached child: %r"
          % lines(out, "IDEMHOOK_LOG"))


def console(bindir, tmp, hsh, remote, xff, auth, proxy):
    env = base_env(tmp, GATEWAY_INTERFACE="CGI/1.1", REQUEST_METHOD="GET",
                   SCRIPT_NAME="/console", PATH_INFO="/", QUERY_STRING="",
                   SERVER_NAME="console.example.com", SERVER_PORT="443",
                   HTTPS="on", REMOTE_ADDR=remote, HTTP_AUTHORIZATION=auth,
                   IDEMHOOK_CONSOLE_USER=USER, IDEMHOOK_CONSOLE_PASSWORD_HASH=hsh)
    if xff is not None:
        env["HTTP_X_FORWARDED_FOR"] = xff
    if proxy is not None:
        env["IDEMHOOK_CONSOLE_TRUSTED_PROXY"] = proxy
    p = subprocess.run([os.path.join(bindir, "console.fcgi")], env=env,
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    out = p.stdout.decode("utf-8", "replace")
    head = out.split("\n", 1)[0]
    check("Sanitizer" not in p.stderr.decode("utf-8", "replace"), "sanitizer")
    status = int(head.split()[1]) if head.startswith("Status:") else 200
    return status, p.stderr.decode("utf-8", "replace")


def case_proxy(bindir, tmp):
    password, hsh = operator(bindir)
    good, wrong = basic(USER, password), basic(USER, "not-" + password)
    idemhook(bindir, base_env(tmp), "init")
    proxy = "192.0.2.10"
    got = [console(bindir, tmp, hsh, proxy, "203.0.113.7, 198.51.100.1", wrong, proxy)[0]
           for _ in range(CLIENT_TRIES + 1)]
    check_eq(got, [401] * CLIENT_TRIES + [429], "wrong passwords from 198.51.100.1")
    st, _ = console(bindir, tmp, hsh, proxy, "198.51.100.2", good, proxy)
    check_eq(st, 200, "another client behind the same proxy, the right password")
    st, _ = console(bindir, tmp, hsh, proxy, "198.51.100.1", good, proxy)
    check_eq(st, 429, "the client that spent its budget, behind the proxy")
    # From another peer, X-Forwarded-For is the client's own to write.
    st, _ = console(bindir, tmp, hsh, "192.0.2.99", "198.51.100.3", wrong, proxy)
    got = [console(bindir, tmp, hsh, "192.0.2.99", "198.51.100.%d" % (4 + i), wrong,
                   proxy)[0] for i in range(CLIENT_TRIES)]
    check_eq(got[-1], 429, "a client not behind the proxy cannot pick its address: %r" % got)
    st, log = console(bindir, tmp, hsh, proxy, "198.51.100.9", good, "192.0.2.0/24")
    check_eq(st, 500, "a network, not one address")
    check("IDEMHOOK_CONSOLE_TRUSTED_PROXY must be" in log, "console log: %r" % log[-300:])
    _, out, _ = idemhook(bindir, base_env(tmp, IDEMHOOK_CONSOLE_TRUSTED_PROXY="proxy.lan"),
                         "check")
    check(any(ln.startswith("PROBLEM: IDEMHOOK_CONSOLE_TRUSTED_PROXY must be")
              for ln in out.splitlines()), "check: %r" % lines(out, "TRUSTED_PROXY"))
    _, out, _ = idemhook(bindir, base_env(tmp, IDEMHOOK_CONSOLE_TRUSTED_PROXY=proxy), "check")
    check("ok: IDEMHOOK_CONSOLE_TRUSTED_PROXY %s" % proxy in out,
          "check: %r" % lines(out, "TRUSTED_PROXY"))


def cases(tap, bindir, servers):
    for name, fn in (("check audits IDEMHOOK_GITHUB_APP_KEY_FILE: mode, owner, symbolic link",
                      case_app_key),
                     ("an encrypted App key: a clear error, no pass phrase asked on the "
                      "terminal", case_encrypted),
                     ("check: a plain CGI layout without IDEMHOOK_LOG is a problem",
                      case_cgi_log),
                     ("console behind IDEMHOOK_CONSOLE_TRUSTED_PROXY: budgets per client;"
                      " a malformed value refused", case_proxy)):
        tmp = tempfile.mkdtemp(prefix="ih-unauth-")
        try:
            tap.run(name, fn, bindir, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(suite_main("unauth", cases))
