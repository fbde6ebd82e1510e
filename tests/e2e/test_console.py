#!/usr/bin/env python3
"""The operator's console (console.fcgi) in a real browser.

A real lighttpd serves the shipped hooks-console.conf next to the Stripe
and GitHub receivers; the store is filled through those endpoints (some
events go dead through a failing action).  tests/browser/console.test.js
then drives Debian's chromium with playwright-core through the pages, in
phases, while this script changes the console's settings file between
them and checks the store and the log:

  main        overview (charts, counts, headers, screenshot), list paging
              and filters, the hostile payload, Replay clicked (then the
              event is due again in the store), CSRF refusals, bulk
              replay (dry run, then confirmed), 401s, framing refused
  readonly    IDEMHOOK_CONSOLE_READONLY=1: no form anywhere, POST refused
  (python)    no settings: 500 not_configured; AUTH=server without
              REMOTE_USER: 401; repeated wrong passwords answered 429 at
              once, logged without the password
  server-auth a real Apache (mod_fcgid, the shipped fcgid.htaccess) with
              AuthType Basic and an .htpasswd, IDEMHOOK_CONSOLE_AUTH=server

tests/run.sh runs the suite twice: on SQLite, then with IH_DB_BACKEND=pg
on a PostgreSQL database of the throwaway cluster (IH_PG_URI), the Apache
phase included; "console: ... answers on the store's backend" checks the
backend and the pages' filters over plain HTTP before the browser starts.

Without chromium or tests/browser/node_modules (make deps installs both)
the cases are skipped with the reason (a failure as root).
IH_CONSOLE_SCREENSHOT=path also writes the overview's screenshot there
(tests/browser/console.png in the README).
"""
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (  # noqa: E402
    ApacheServer, REPO, HarnessError, Server, Servers, Tap, bin_dir,
    check, check_eq, console_conf, install_signal_cleanup, is_pg,
    pg_backend, pg_new_db, sign_github, sign_stripe)
import cases  # noqa: E402

BROWSER_DIR = os.path.join(REPO, "tests", "browser")
CHROMIUM = "/usr/bin/chromium"
USER = "admin"
NODE_TIMEOUT = 90


def missing_prereq():
    if not os.access(CHROMIUM, os.X_OK):
        return "no %s (apt-get install chromium; make deps does)" % CHROMIUM
    if shutil.which("node") is None:
        return "no node (apt-get install nodejs; make deps does)"
    if not os.path.isdir(os.path.join(BROWSER_DIR, "node_modules", "playwright-core")):
        return "no tests/browser/node_modules (cd tests/browser && npm ci; make deps does)"
    return None


def stripe_body(eid, etype, extra=None):
    obj = {"id": eid, "object": "event", "api_version": "2024-06-20",
           "created": int(time.time()), "type": etype,
           "data": {"object": dict({"id": "pi_" + os.urandom(6).hex(),
                                    "object": "payment_intent", "amount": 2000},
                                   **(extra or {}))},
           "livemode": False}
    return cases.dumps_pretty(obj)


def post_stripe(srv, eid, etype="payment_intent.succeeded", extra=None):
    body = stripe_body(eid, etype, extra)
    r = srv.post("/hooks/stripe", body,
                 {"Stripe-Signature": sign_stripe(srv.secrets["stripe"], body)})
    check(r.status == 200, "stripe %s: %d %r" % (eid, r.status, r.body[:200]))
    return r


def post_github(srv, delivery, event="push"):
    body = json.dumps({"ref": "refs/heads/main", "hook_id": 4242, "n": delivery,
                       "repository": {"full_name": "o/r"}}).encode()
    r = srv.post("/hooks/github", body, {
        "X-Hub-Signature-256": sign_github(srv.secrets["github"], body),
        "X-GitHub-Event": event, "X-GitHub-Delivery": delivery,
        "X-GitHub-Hook-ID": "4242"})
    check(r.status == 200, "github %s: %d %r" % (delivery, r.status, r.body[:200]))


def wait_status(srv, provider, eid, want, timeout=20):
    deadline = time.monotonic() + timeout
    rows = []
    while time.monotonic() < deadline:
        rows = srv.rows(provider, eid)
        if rows and rows[0]["status"] == want:
            return rows[0]
        time.sleep(0.1)
    raise AssertionError("%s %s: status %s, want %s" % (
        provider, eid, rows[0]["status"] if rows else "absent", want))


def write_settings(path, **kv):
    with open(path, "w") as f:
        f.write("# console settings (tests/e2e/test_console.py)\n")
        for k, v in kv.items():
            f.write("%s=%s\n" % (k, v))
    os.chmod(path, 0o600)
    # The settings file is read again when its stamp changes; make sure
    # the change is seen even within the same clock tick.
    time.sleep(0.05)


def run_node(tap, phase, data):
    """Runs one phase of console.test.js, passing its TAP lines through.
    Returns the '# data' objects it printed."""
    data = dict(data, phase=phase)
    p = subprocess.run(["node", os.path.join(BROWSER_DIR, "console.test.js")],
                       input=json.dumps(data).encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=NODE_TIMEOUT,
                       cwd=BROWSER_DIR)
    out = []
    lines = p.stdout.decode("utf-8", "replace").splitlines()
    for line in lines:
        if line.startswith("ok - "):
            tap.ok(line[5:])
        elif line.startswith("not ok - "):
            rest = line[9:]
            name, _, why = rest.partition(": ")
            tap.not_ok(name, why or rest)
        elif line.startswith("# data "):
            out.append(json.loads(line[7:]))
        elif line.strip():
            tap.diag(line)
    if p.returncode != 0 and not any(l.startswith("not ok") for l in lines):
        tap.not_ok("browser %s" % phase, "node exited with %d" % p.returncode)
    return out


def console_hash(bin, password):
    p = subprocess.run([os.path.join(bin, "idemhook"), "console-password"],
                       input=(password + "\n").encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    check(p.returncode == 0, "console-password: %r" % p.stderr)
    line = p.stdout.decode().strip()
    check(line.startswith("IDEMHOOK_CONSOLE_PASSWORD_HASH=$scrypt$"), "hash line %r" % line)
    check(password not in line, "the password is in the hash line")
    return line.split("=", 1)[1]


def operator(bin):
    """A new password for USER, and its hash from idemhook console-password."""
    password = "correct horse " + os.urandom(4).hex()
    return password, console_hash(bin, password)


def console_settings(srv, hsh):
    """Writes the console's settings file in srv's folder (USER, with the
    password hash hsh) and returns its path."""
    settings = os.path.join(srv.tmp, "console.env")
    write_settings(settings, IDEMHOOK_CONSOLE_USER=USER,
                   IDEMHOOK_CONSOLE_PASSWORD_HASH=hsh)
    return settings


def fill(srv):
    """The store, through the real endpoints.  Returns the ids the browser
    phases look for."""
    ids = ["evt_ok_%02d" % i for i in range(58)]
    for eid in ids:
        post_stripe(srv, eid)
    r = post_stripe(srv, "evt_ok_00")
    check_eq(r.json().get("status"), "duplicate", "second delivery")
    for d in ("gh-1", "gh-2"):
        post_github(srv, d)
    post_github(srv, "gh-dead", event="issues")
    for eid in ("evt_fail_1", "evt_fail_2"):
        post_stripe(srv, eid, "payment_intent.payment_failed")
    hostile = "evt_hostile_1"
    post_stripe(srv, hostile, extra={
        "description": "</pre><script>document.title='PWNED';window.__pwned=1</script>"
                       "<img src=x onerror=\"window.__pwned=2\">"})
    odd = "evt_odd/a b&c"
    post_stripe(srv, odd)
    for p, eid in (("stripe", "evt_fail_1"), ("stripe", "evt_fail_2"), ("github", "4242:gh-dead")):
        wait_status(srv, p, eid, "dead")
    return {"total": 58 + 3 + 2 + 2, "github": 3, "dead": 3, "deadStripe": 2,
            "newest": odd, "hostile": hostile, "oddId": odd,
            "replayId": "evt_fail_1", "keepId": "evt_fail_2", "deadId": "4242:gh-dead"}


class ConsoleApache(ApacheServer):
    """Apache with console.fcgi next to the receivers under the shipped
    fcgid.htaccess: the base of this suite's and test_console_signin's."""

    def _prepare_tree(self):
        ApacheServer._prepare_tree(self)
        dst = os.path.join(self.hooks_dir, "console.fcgi")
        if not os.path.exists(dst):
            shutil.copy2(os.path.join(self.bin, "console.fcgi"), dst)


class ApacheConsole(ConsoleApache):
    """The shipped fcgid.htaccess with console.fcgi next to the receivers
    and Apache's own Basic authentication on it (the block the .htaccess
    shows commented out), against an .htpasswd outside the document root."""

    AUTH_MODULES = ("auth_basic", "authn_core", "authn_file", "authz_user")

    def __init__(self, bin, htpasswd, **kw):
        self.htpasswd = htpasswd
        ApacheServer.__init__(self, bin, **kw)

    def _prepare_tree(self):
        ConsoleApache._prepare_tree(self)
        with open(os.path.join(self.hooks_dir, ".htaccess"), "a") as f:
            f.write('\n<Files "console.fcgi">\n  AuthType Basic\n'
                    '  AuthName "idemhook console"\n  AuthUserFile "%s"\n'
                    '  Require valid-user\n</Files>\n' % self.htpasswd)

    def write_conf(self, port):
        path = ApacheServer.write_conf(self, port)
        with open(path) as f:
            text = f.read()
        extra = "".join('LoadModule %s_module "/usr/lib/apache2/modules/mod_%s.so"\n'
                        % (m, m) for m in self.AUTH_MODULES)
        text = text.replace("Listen ", extra + "Listen ", 1)
        with open(path, "w") as f:
            f.write(text)
        return path


def basic_auth(user, password):
    """An Authorization header for HTTP Basic."""
    import base64
    return "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()


def shown(body):
    """The number of events the list page says it shows."""
    import re
    m = re.search(rb'<span id="shown">(\d+)</span>', body)
    check(m is not None, "no event count on the page: %r" % body[:300])
    return int(m.group(1))


def backend_checks(tap, srv, password, data):
    """The console on the store's own backend, over plain HTTP: the
    overview and the list's filters (the type pattern, the search text,
    paging) answer the same on SQLite and PostgreSQL.  Returns whether
    the overview answered, so that the browser phases do not wait on a
    console that cannot read its store."""
    base = "/hooks/console"
    auth = {"Authorization": basic_auth(USER, password)}
    backend = "postgresql" if pg_backend() else "sqlite"

    def overview():
        check_eq(is_pg(srv.db), pg_backend(), "the store is %s" % backend)
        r = srv.get(base + "/", auth)
        check_eq(r.status, 200, "overview on %s (%r)" % (backend, r.body[:300]))
        check(b"not_supported" not in r.body, "not_supported on %s" % backend)
        check(b"store size: " in r.body and b"store size: 0.0 KiB" not in r.body,
              "no store size on the overview")
        check(b"<svg" in r.body, "no chart on the overview")
    ok = tap.run("console: the overview answers 200 on a %s store" % backend, overview)

    def filters():
        for query, want in (
                ("", 50),
                ("?provider=github", 3),
                ("?type=*.succeeded&q=evt_ok_1", 10),
                ("?type=payment_intent.payment_%5Ba-f%5Dailed", 2),
                ("?type=payment_intent.payment_%5B%5Ea-f%5Dailed", 0),
                ("?type=Payment_intent.*", 0),
                ("?q=gh-", 3),
                ("?q=GH-", 0),
                ("?status=dead", 3),
                ("?status=dead&provider=stripe&type=payment_intent.*", 2),
                ("?since=2000-01-01&until=2000-01-02", 0)):
            r = srv.get(base + "/events" + query, auth)
            check_eq(r.status, 200, "events%s on %s" % (query, backend))
            check_eq(shown(r.body), want, "events%s on %s" % (query, backend))
        r = srv.get(base + "/events", auth)
        import re
        m = re.search(rb'id="older" href="[^"]*before=(\d+)"', r.body)
        check(m is not None, "no link to older events")
        r = srv.get(base + "/events?before=" + m.group(1).decode(), auth)
        check_eq(shown(r.body), data["total"] - 50, "the second page")
        r = srv.get(base + "/events/stripe/" + data["replayId"], auth)
        check_eq(r.status, 200, "one event")
        check(b"Replay" in r.body, "no Replay button for a dead event")
    tap.run("console: the list's filters and paging answer the same on a %s store"
            % backend, filters)
    return ok


def python_checks(tap, srv, settings, hsh, password):
    base = "/hooks/console"

    def no_settings():
        write_settings(settings)
        r = srv.get(base + "/")
        check_eq(r.status, 500, "status without settings")
        check(b"not_configured" in r.body, "body %r" % r.body[:300])
        check(b"evt_" not in r.body, "data shown without settings")
        check("nosniff" == r.header("x-content-type-options"), "headers on the 500")
        check("frame-ancestors 'none'" in (r.header("content-security-policy") or ""), "CSP on the 500")
        log = srv.errorlog()
        check("console not_configured: set IDEMHOOK_CONSOLE_USER and "
              "IDEMHOOK_CONSOLE_PASSWORD_HASH" in log, "no log line saying what to set")
    tap.run("console: no settings -> 500 not_configured and a log line saying what to set",
            no_settings)

    def server_without_remote_user():
        write_settings(settings, IDEMHOOK_CONSOLE_AUTH="server",
                       IDEMHOOK_CONSOLE_KEY="k" * 40)
        r = srv.get(base + "/events", {"Authorization": "Basic YWRtaW46eA=="})
        check_eq(r.status, 401, "AUTH=server without REMOTE_USER")
        check(b"no_remote_user" in r.body, "body %r" % r.body[:300])
        write_settings(settings, IDEMHOOK_CONSOLE_AUTH="server")
        r = srv.get(base + "/")
        check_eq(r.status, 500, "AUTH=server without IDEMHOOK_CONSOLE_KEY")
    tap.run("console: AUTH=server refuses a request without REMOTE_USER", server_without_remote_user)

    def throttled_and_logged():
        import base64
        write_settings(settings, IDEMHOOK_CONSOLE_USER=USER,
                       IDEMHOOK_CONSOLE_PASSWORD_HASH=hsh)
        wrong = "not-" + password
        auth = "Basic " + base64.b64encode(("%s:%s" % (USER, wrong)).encode()).decode()
        # The browser's phase spent one of this address's tries already.
        statuses = []
        for _ in range(8):
            t0 = time.monotonic()
            r = srv.get(base + "/", {"Authorization": auth})
            took = time.monotonic() - t0
            statuses.append(r.status)
            check(took < 2.0, "a wrong password was answered after %.2fs" % took)
            if r.status == 401:
                check((r.header("www-authenticate") or "").startswith("Basic "),
                      "WWW-Authenticate")
            else:
                check_eq(r.status, 429, "wrong password")
                check((r.header("retry-after") or "").isdigit(), "429 without Retry-After")
        check(statuses[0] == 401 and statuses[-1] == 429 and
              statuses == sorted(statuses), "statuses %r: 401s, then 429s" % statuses)
        log = srv.errorlog()
        check("console auth=failed user=admin" in log, "failure not logged")
        check("console auth=throttled user=admin" in log, "throttling not logged")
        check(wrong not in log and password not in log, "a password in the log")
        check(hsh not in log, "the password hash in the log")
        # This process verified the right password lately: it costs no
        # budget and is let in (test_console_signin.py checks the rest).
        good = "Basic " + base64.b64encode(("%s:%s" % (USER, password)).encode()).decode()
        r = srv.get(base + "/", {"Authorization": good})
        check_eq(r.status, 200, "right password")
    tap.run("console: repeated wrong passwords are answered 429 + Retry-After at once and "
            "logged without the password", throttled_and_logged)

    def check_reports():
        def run_check(**kv):
            write_settings(settings, **kv)
            env = dict(os.environ, IDEMHOOK_CONFIG=settings)
            p = subprocess.run([os.path.join(srv.bin, "idemhook"), "--db", srv.db, "check"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=60)
            return p.stdout.decode("utf-8", "replace")
        out = run_check(IDEMHOOK_CONSOLE_USER=USER, IDEMHOOK_CONSOLE_PASSWORD_HASH=hsh)
        check("ok: console: HTTP Basic sign-in for user admin, password hash set" in out, out)
        check(hsh not in out and "$scrypt$" not in out, "check printed the hash")
        out = run_check(IDEMHOOK_CONSOLE_USER=USER, IDEMHOOK_CONSOLE_PASSWORD_HASH="hunter2")
        check("PROBLEM: console: IDEMHOOK_CONSOLE_PASSWORD_HASH is not a hash" in out, out)
        check("hunter2" not in out, "check printed the setting's value")
        out = run_check(IDEMHOOK_CONSOLE_AUTH="server")
        check("PROBLEM: console: IDEMHOOK_CONSOLE_AUTH=server needs IDEMHOOK_CONSOLE_KEY" in out, out)
        out = run_check()
        check("note: console: not configured" in out, out)
        write_settings(settings, IDEMHOOK_CONSOLE_USER=USER, IDEMHOOK_CONSOLE_PASSWORD_HASH=hsh)
    tap.run("idemhook check reports the console's settings, never the hash", check_reports)

    def request_log():
        lines = [l for l in srv.errorlog().splitlines() if "idemhook: console user=" in l]
        check(any("user=admin method=GET path=/ outcome=overview status=200" in l
                  for l in lines), "no log line per request: %r" % lines[-3:])
    tap.run("console: one log line per request", request_log)


_TMP = []


def servers_tmp():
    """A folder for this run's files, removed at exit."""
    if not _TMP:
        import atexit
        import tempfile
        _TMP.append(tempfile.mkdtemp(prefix="ih-console-"))
        atexit.register(shutil.rmtree, _TMP[0], True)
    return _TMP[0]


def main():
    tap = Tap()
    bin = bin_dir()
    why = missing_prereq()
    if why is None and not os.path.exists(os.path.join(bin, "console.fcgi")):
        why = "no console.fcgi in %s" % bin
    if why is not None:
        tap.skip("console: browser tests", why)
        return tap.finish()
    password, hsh = operator(bin)
    servers = Servers()
    install_signal_cleanup(servers)
    with servers:
        alerts = os.path.join(servers_tmp(), "alerts")
        os.makedirs(alerts)
        alert_cmd = ('cat > %s/"$IDEMHOOK_ALERT_REASON-$IDEMHOOK_PROVIDER-$IDEMHOOK_EVENT_ID"'
                     % alerts)
        srv = Server(bin, providers=["stripe", "github"], name="console",
                     env={"IDEMHOOK_MAX_ATTEMPTS": "1", "IDEMHOOK_RETRY_BASE_MS": "100",
                          "IDEMHOOK_ALERT_ACTION": alert_cmd},
                     provider_env={
                         "stripe": {"IDEMHOOK_STRIPE_ACTION":
                                    "payment_intent.payment_failed /bin/false"},
                         "github": {"IDEMHOOK_GITHUB_ACTION": "issues /bin/false"}})
        settings = console_settings(srv, hsh)
        srv.extra_conf = "\n".join(console_conf(settings, srv.settings_file()))
        servers.add(srv)
        srv.start()
        data = fill(srv)
        data.update(base="http://127.0.0.1:%d/hooks/console" % srv.port, user=USER,
                    password=password,
                    screenshot=os.environ.get("IH_CONSOLE_SCREENSHOT") or
                    os.path.join(srv.tmp, "console.png"))
        if not backend_checks(tap, srv, password, data):
            tap.not_ok("browser main", "not run: the console cannot show the store")
            return tap.finish()
        got = run_node(tap, "main", data)

        def replayed_in_store():
            seen = {k: v for d in got for k, v in d.items()}
            check(seen.get("replayed") == data["replayId"], "the browser did not replay: %r" % got)
            now = time.time() * 1000
            for eid in (data["replayId"], data["keepId"]):
                row = srv.rows("stripe", eid)[0]
                check_eq(row["status"], "received", "%s status in the store" % eid)
                check(row["next_attempt_at"] <= now + 1000, "%s not due now" % eid)
                check(row["lease_owner"] is None, "%s still leased" % eid)
            check_eq(srv.rows("github", "4242:gh-dead")[0]["status"], "dead",
                     "an event nobody replayed")
        tap.run("console: after clicking Replay (and bulk replay) the events are due again "
                "in the store", replayed_in_store)
        tap.run("console: the overview's screenshot was taken",
                lambda: check(os.path.getsize(data["screenshot"]) > 10000, "no screenshot"))

        write_settings(settings, IDEMHOOK_CONSOLE_USER=USER,
                       IDEMHOOK_CONSOLE_PASSWORD_HASH=hsh, IDEMHOOK_CONSOLE_READONLY="1")
        run_node(tap, "readonly", data)
        tap.run("console: readonly refusal changed nothing", lambda: check_eq(
            srv.rows("github", "4242:gh-dead")[0]["status"], "dead", "status"))

        python_checks(tap, srv, settings, hsh, password)

        def dead_alerts():
            names = sorted(os.listdir(alerts))
            for want in ("dead-stripe-evt_fail_1", "dead-stripe-evt_fail_2",
                         "dead-github-4242:gh-dead"):
                check(want in names, "no alert %s: %r" % (want, names))
            with open(os.path.join(alerts, "dead-stripe-evt_fail_1"), "rb") as f:
                check(b'"evt_fail_1"' in f.read(), "the event is not on the alert's stdin")
        tap.run("alerts: IDEMHOOK_ALERT_ACTION runs with the event on stdin when one goes dead",
                dead_alerts)

        def silence_alerts():
            env = dict(os.environ, IDEMHOOK_DB=srv.db, IDEMHOOK_ALERT_ACTION=alert_cmd,
                       IDEMHOOK_SILENCE_ALERT="3600")
            env.pop("IDEMHOOK_CONFIG", None)
            run = lambda: subprocess.run([os.path.join(bin, "idemhook"), "work", "--once"],
                                         env=env, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, timeout=60)
            p = run()
            check(p.returncode == 0, "work: %r" % p.stdout[-500:])
            check(not any(n.startswith("silent-") for n in os.listdir(alerts)),
                  "a silence alert before IDEMHOOK_SILENCE_ALERT passed")
            time.sleep(1.1)
            env["IDEMHOOK_SILENCE_ALERT"] = "1"
            p = run()
            check(p.returncode == 0, "work: %r" % p.stdout[-500:])
            names = os.listdir(alerts)
            for want in ("silent-stripe--", "silent-github--"):
                check(want in names, "no alert %s: %r" % (want, names))
            with open(os.path.join(alerts, "silent-stripe--"), "rb") as f:
                check(b"stripe has received nothing" in f.read(), "silence text")
            check(b"alert=silent outcome=sent" in p.stdout, "not logged: %r" % p.stdout[-500:])
        tap.run("alerts: idemhook work runs the alert when a provider is silent longer than "
                "IDEMHOOK_SILENCE_ALERT", silence_alerts)
        srv.stop()

        # Apache with its own authentication (IDEMHOOK_CONSOLE_AUTH=server).
        htpasswd = os.path.join(srv.tmp, "console.htpasswd")
        try:
            # Apache's servers keep SQLite unless given a store.
            apache = ApacheConsole(bin, htpasswd, mode="fcgid", providers=["stripe"],
                                   name="apache-console",
                                   db=pg_new_db() if pg_backend() else None,
                                   env={"IDEMHOOK_CONSOLE_AUTH": "server",
                                        "IDEMHOOK_CONSOLE_KEY": os.urandom(24).hex()})
            htpasswd = os.path.join(apache.tmp, "etc", "console.htpasswd")
            apache.htpasswd = htpasswd
            os.makedirs(os.path.dirname(htpasswd), exist_ok=True)
            subprocess.run(["htpasswd", "-cbB", htpasswd, USER, password], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            os.chmod(htpasswd, 0o644)
            servers.add(apache)
            apache.start()
            post_stripe(apache, "evt_apache_1")
            run_node(tap, "server-auth", dict(
                base="http://127.0.0.1:%d/hooks/console" % apache.port,
                user=USER, password=password))
        except HarnessError as e:
            tap.not_ok("console: Apache with AUTH=server", e)
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
