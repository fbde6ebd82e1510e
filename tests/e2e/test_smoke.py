#!/usr/bin/env python3
"""End-to-end test of idemhook smoke (issue 39, item 4): a signed test
event posted to an endpoint through a real web server, each answer
checked against the one expected.

Usage: test_smoke.py BINDIR   (or IH_BIN=BINDIR test_smoke.py)
SQLite, or PostgreSQL with IH_DB_BACKEND=pg (then Stripe only).

One lighttpd serves every provider with the secrets of one settings
file, which also holds an action for every event type, held API
versions for Stripe and Shopify, and every processing mode (Asaas in
worker mode, Standard Webhooks inline, the others after the response):
  - for each of the five providers, idemhook smoke PROVIDER URL prints
    200 accepted, 200 duplicate and 401 with what was expected, and
    exits 0; the test event is recorded once (one duplicate), done, with
    the effect smoke_test: no action ran, no object was set; a real
    event of the same endpoint still runs its action;
  - a hand-made test event whose body would set an object sets none; a
    real body under the test type (an unsigned header) is no test event:
    its action runs;
  - an account: --account acme signs with IDEMHOOK_STRIPE_SECRET@acme
    and passes at /hooks/stripe/acme; the default secret there fails;
  - a wrong URL (404, nothing listening), a wrong secret in the settings
    file, each exit 1 with the reason on stdout and stderr;
  - a secret that is not in the settings file (only in the web server's
    environment) exits 2 naming the setting; plain http to another host
    exits 2 before any connection;
  - no secret is ever printed; the command runs without a terminal;
  - smoke --list shows the test events only, smoke --purge deletes them
    and nothing else;
  - a test event does not count as the provider's last delivery: the
    silence alarm still fires for a provider silent for two hours; nor
    does its copy signed with the wrong secret derived from the
    endpoint's count for the bad-signature alarm (on a store of its own),
    which a forged delivery carrying the smoke test's header still
    raises.
Then Apache (.htaccess under mod_fcgid and under CGI, vhost.conf) and
nginx, each with its settings file: idemhook smoke stripe passes (SQLite
only).
"""

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (SANITIZER_ENV, ApacheServer, NginxServer,  # noqa: E402
                     Server, check, check_eq,
                     free_port, is_pg, pg_backend, psql, secret_env, sign_github,
                     sign_stripe, suite_main)

ACME = "whsec_" + os.urandom(16).hex()
STRIPE_VERSION = "2025-03-31.basil"
SHOPIFY_VERSION = "2025-07"


def write_file(path, text, mode=0o600):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def settings(srv, secrets=None, skip=()):
    """The settings file's text: the store, each provider's secret (but
    those in skip), acme's, the action and the held versions."""
    secrets = dict(srv.secrets, **(secrets or {}))
    lines = ["IDEMHOOK_DB=%s" % srv.db,
             "IDEMHOOK_STRIPE_SECRET@acme=%s" % ACME,
             "IDEMHOOK_ACTION=* /bin/sh %s" % srv.action,
             "IDEMHOOK_STRIPE_API_VERSIONS=%s" % STRIPE_VERSION,
             "IDEMHOOK_SHOPIFY_API_VERSIONS=%s" % SHOPIFY_VERSION,
             # Every mode: Asaas's events wait for idemhook work,
             # Standard Webhooks' are processed before the answer.
             "IDEMHOOK_ASAAS_MODE=worker", "IDEMHOOK_STANDARD_MODE=inline"]
    lines += ["%s=%s" % (secret_env(p), secrets[p])
              for p in srv.providers if p not in skip]
    return "\n".join(lines) + "\n"


def idemhook(srv, *args, config=None, env=None):
    """Runs the command as cron would: no terminal, a bare environment,
    the settings file named with --config.  Returns (code, out, err)."""
    e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    e.update({k: os.environ[k] for k in SANITIZER_ENV if k in os.environ})
    e.update(env or {})
    argv = [os.path.join(srv.bin, "idemhook"), "--config", config or srv.cfg]
    p = subprocess.run(argv + list(args), env=e, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=120, start_new_session=True)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    check("Sanitizer" not in err and "runtime error" not in err,
          "sanitizer: %s" % err[-800:])
    for s in list(srv.secrets.values()) + [ACME]:
        check(s not in out + err, "a secret in the output of %r" % (args,))
    return p.returncode, out, err


def wait_for(what, fn, timeout=60.0):
    """Waits for fn() to be true, on a generous deadline."""
    deadline = time.monotonic() + timeout
    while not fn():
        check(time.monotonic() < deadline, "timed out waiting for %s" % what)
        time.sleep(0.1)


def done(srv, provider, eid):
    rows = srv.rows(provider, eid)
    return bool(rows) and all(r["status"] == "done" for r in rows)


def url(srv, path):
    return "http://127.0.0.1:%d%s" % (srv.port, path)


def smoke_id(out):
    """The test event's id from the command's first line."""
    first = out.splitlines()[0]
    check(": test event idemhook_smoke_" in first, "first line: %r" % first)
    return first.split("test event ", 1)[1].split()[0]


def ran(srv):
    """The action's lines: "provider event_id" each."""
    try:
        with open(srv.ran) as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def query(srv, sql, args=()):
    c = srv.connect_ro()
    try:
        return [tuple(r) for r in c.execute(sql, args).fetchall()]
    finally:
        c.close()


def event_id_of(provider, sid):
    return "-:" + sid if provider == "github" else sid


def case_provider(srv, provider):
    """accepted, duplicate, 401; exit 0; recorded once, done, no action,
    no object, the effect smoke_test."""
    code, out, err = idemhook(srv, "smoke", provider, url(srv, "/hooks/" + provider))
    check_eq(code, 0, "exit: %s %s" % (out, err))
    lines = out.splitlines()
    check_eq(len(lines), 5, "lines: %r" % lines)
    check(lines[1].startswith("200 accepted ") and "expected 200 accepted" in lines[1]
          and lines[1].endswith("the first delivery"), "first: %r" % lines[1])
    check(lines[2].startswith("200 duplicate ") and "expected 200 duplicate" in lines[2],
          "second: %r" % lines[2])
    check(lines[3].startswith("401 ") and "expected 401 " in lines[3]
          and lines[3].endswith("a copy signed with a wrong secret"), "third: %r" % lines[3])
    check_eq(lines[4], "ok: every answer as expected", "verdict")
    check_eq(err, "", "stderr")
    eid = event_id_of(provider, smoke_id(out))
    if provider == "asaas":
        check_eq([r["status"] for r in srv.rows(provider, eid)], ["received"],
                 "worker mode: recorded only")
        code, out, err = idemhook(srv, "work", "--once", "--provider", provider)
        check_eq(code, 0, "work: %s %s" % (out, err))
    if provider == "standard":
        check(done(srv, provider, eid), "inline mode: done before the answer")
    wait_for("the test event done", lambda: done(srv, provider, eid))
    rows = srv.rows(provider, eid)
    check_eq([(r["event_type"], r["status"], r["duplicates"], r["attempts"])
              for r in rows], [("idemhook.smoke", "done", 1, 1)], "the row")
    if provider in ("stripe", "shopify"):
        check_eq(rows[0]["api_version"],
                 STRIPE_VERSION if provider == "stripe" else SHOPIFY_VERSION,
                 "the version expected, so not held")
    check_eq(query(srv, "SELECT f.kind FROM effects f JOIN events e ON e.id = f.event"
                   " WHERE e.provider = ? AND e.event_id = ?", (provider, eid)),
             [("smoke_test",)], "the effect")
    check_eq(query(srv, "SELECT count(*) FROM object_events WHERE event_id = ?", (eid,)),
             [(0,)], "no object history")
    check(not [l for l in ran(srv) if eid in l], "an action ran: %r" % ran(srv))


def stripe_event(eid, type_="invoice.paid", extra=None):
    d = {"id": eid, "object": "event", "type": type_, "created": 1700000000,
         "api_version": STRIPE_VERSION,
         "data": {"object": {"id": "in_" + eid, "object": "invoice", "status": "paid"}}}
    d.update(extra or {})
    return json.dumps(d, separators=(",", ":")).encode()


def case_controls(srv):
    """The action runs for a real event; a test event whose body would
    set an object sets none; a real body under the test type (GitHub's
    unsigned header) is processed as any other."""
    b = stripe_event("evt_real")
    r = srv.post("/hooks/stripe", b, {"Stripe-Signature": sign_stripe(srv.secrets["stripe"], b)})
    check_eq(r.status, 200, "real event")
    sid = "idemhook_smoke_handmade"
    b = stripe_event(sid, "idemhook.smoke", {"idemhook_smoke": sid})
    r = srv.post("/hooks/stripe", b, {"Stripe-Signature": sign_stripe(srv.secrets["stripe"], b)})
    check_eq(r.status, 200, "a test event with an object")
    gh = "github" in srv.providers
    if gh:
        b = json.dumps({"action": "opened", "issue": {"id": 7}}).encode()
        r = srv.post("/hooks/github", b, {
            "X-GitHub-Event": "idemhook.smoke", "X-GitHub-Delivery": "idemhook_smoke_forged",
            "X-Hub-Signature-256": sign_github(srv.secrets["github"], b)})
        check_eq(r.status, 200, "a real body under the test type")
    wait_for("the events done", lambda: done(srv, "stripe", "evt_real")
             and done(srv, "stripe", sid)
             and (not gh or done(srv, "github", "-:idemhook_smoke_forged")))
    got = ran(srv)
    check(any(l == "stripe evt_real" for l in got), "no action for the real event: %r" % got)
    check(not gh or any(l == "github -:idemhook_smoke_forged" for l in got),
          "no action for a real body under the test type: %r" % got)
    check(not any(sid in l for l in got), "an action for the test event: %r" % got)
    objs = query(srv, "SELECT object_id FROM objects WHERE provider = 'stripe'")
    check(("in_evt_real",) in objs, "the real event's object: %r" % objs)
    check(("in_" + sid,) not in objs, "the test event set an object: %r" % objs)


def case_account(srv):
    """--account acme: its own secret, its own URL, its own namespace."""
    code, out, err = idemhook(srv, "smoke", "stripe", url(srv, "/hooks/stripe/acme"),
                              "--account", "acme")
    check_eq(code, 0, "exit: %s %s" % (out, err))
    check(out.startswith("stripe account acme: test event"), "header: %r" % out)
    sid = smoke_id(out)
    wait_for("acme's test event done", lambda: done(srv, "stripe", sid))
    rows = srv.rows("stripe", sid)
    check_eq([r["account"] for r in rows], ["acme"], "acme's row")
    # The default secret at acme's URL: refused, and said so.
    code, out, err = idemhook(srv, "smoke", "stripe", url(srv, "/hooks/stripe/acme"))
    check_eq(code, 1, "default secret at acme's URL: %s" % out)
    check("401 bad_signature" in out and "UNEXPECTED" in out, "its lines: %r" % out)
    check("FAILED: the endpoint refused the delivery signed with IDEMHOOK_STRIPE_SECRET"
          in out and "IDEMHOOK_STRIPE_SECRET" in err, "its reason: %r %r" % (out, err))


def case_failures(srv):
    """A wrong URL, nothing listening, a wrong secret: exit 1 with a
    reason; a secret only in the server's environment, plain http to
    another host: exit 2, nothing sent."""
    def alt(p):
        return p if p in srv.providers else "stripe"
    code, out, err = idemhook(srv, "smoke", "stripe", url(srv, "/hooks/nothing"))
    check_eq(code, 1, "a wrong URL: %s" % out)
    check("404" in out and "FAILED: 404" in out and "no receiver at this URL" in err,
          "404 reason: %r %r" % (out, err))
    code, out, err = idemhook(srv, "smoke", alt("github"),
                              "http://127.0.0.1:%d/hooks/x" % free_port())
    check_eq(code, 1, "nothing listening: %s" % out)
    check("no answer" in out and "FAILED: no answer to the first delivery" in out,
          "no answer: %r" % out)
    wrong = os.path.join(srv.tmp, "wrong.env")
    p = alt("asaas")
    write_file(wrong, settings(srv, {p: "ih" + os.urandom(20).hex()}))
    code, out, err = idemhook(srv, "smoke", p, url(srv, "/hooks/" + p), config=wrong)
    check_eq(code, 1, "a wrong secret: %s" % out)
    check("401" in out and "refused the delivery signed with %s from the settings file %s"
          % (secret_env(p), wrong) in out, "wrong secret reason: %r" % out)
    missing = os.path.join(srv.tmp, "missing.env")
    p = alt("shopify")
    write_file(missing, settings(srv, skip=(p,)))
    before = len(srv.log_lines(p))
    code, out, err = idemhook(srv, "smoke", p, url(srv, "/hooks/" + p), config=missing)
    check_eq(code, 2, "no secret in the settings file: %s %s" % (out, err))
    check("no %s in the settings file %s" % (secret_env(p), missing) in err,
          "names the setting and the file: %r" % err)
    code, out, err = idemhook(srv, "smoke", "stripe", "http://example.invalid/hooks/stripe")
    check_eq(code, 2, "plain http to another host: %s" % err)
    check("plain http to this machine" in err, "its reason: %r" % err)
    code, out, err = idemhook(srv, "smoke", "nosuch", url(srv, "/hooks/stripe"))
    check_eq(code, 2, "an unknown provider")
    check_eq(len(srv.log_lines(alt("shopify"))), before, "nothing sent without a secret")


def case_list_purge(srv, providers):
    """--list shows the test events only; --purge deletes them only."""
    code, out, err = idemhook(srv, "smoke", "--list", "--json")
    check_eq(code, 0, "list: %s" % err)
    evs = json.loads(out)
    check(evs and all(e["type"] == "idemhook.smoke" for e in evs), "list: %r" % evs)
    check_eq(sorted(set(e["provider"] for e in evs)), sorted(providers), "providers listed")
    code, out, err = idemhook(srv, "smoke", "--list", "--provider", "stripe")
    check(code == 0 and "idemhook.smoke" in out and "evt_real" not in out, "table: %r" % out)
    for e in evs:
        wait_for("%s done" % e["event_id"], lambda: done(srv, e["provider"], e["event_id"]))
    total = srv.count()
    code, out, err = idemhook(srv, "smoke", "--purge", "--dry-run")
    check_eq(code, 0, "dry run: %s" % err)
    check_eq(srv.count(), total, "a dry run deletes nothing")
    code, out, err = idemhook(srv, "smoke", "--purge")
    check_eq(code, 0, "purge: %s" % err)
    deleted = sum(int(l.split("deleted ")[1].split()[0]) for l in out.splitlines()
                  if "deleted" in l)
    check_eq(deleted, len(evs), "deleted: %r" % out)
    check_eq(srv.count(), total - len(evs), "only the test events went")
    code, out, err = idemhook(srv, "smoke", "--list", "--json")
    check_eq(json.loads(out), [], "none left")
    check_eq(len(srv.rows("stripe", "evt_real")), 1, "the real event stays")


def case_silence(srv):
    """A test event is no delivery of the provider's: the silence alarm
    still sees the last real one, two hours ago."""
    sql = ("UPDATE events SET received_at = received_at - 7200000 WHERE"
           " provider = 'stripe' AND event_type <> 'idemhook.smoke'")
    if is_pg(srv.db):
        psql(srv.db, sql)
    else:
        with contextlib.closing(sqlite3.connect(srv.db)) as c:
            c.execute(sql)
            c.commit()
    code, out, err = idemhook(srv, "smoke", "stripe", url(srv, "/hooks/stripe"))
    check_eq(code, 0, "smoke: %s %s" % (out, err))
    alerts = os.path.join(srv.tmp, "alerts.txt")
    alert = os.path.join(srv.tmp, "alert.sh")
    write_file(alert, 'echo "$IDEMHOOK_ALERT_REASON $IDEMHOOK_PROVIDER" >> %s\n' % alerts,
               0o700)
    code, out, err = idemhook(srv, "work", "--once", "--provider", "stripe", env={
        "IDEMHOOK_ALERT_ACTION": "/bin/sh " + alert, "IDEMHOOK_SILENCE_ALERT": "3600"})
    check_eq(code, 0, "work: %s %s" % (out, err))
    with open(alerts) if os.path.exists(alerts) else contextlib.nullcontext(None) as f:
        got = f.read().splitlines() if f else []
    check("silent stripe" in got, "no silence alert: %r %r" % (got, err[-500:]))


def case_layout(srv):
    """The same through another web server, its settings file named."""
    code, out, err = idemhook(srv, "smoke", "stripe", url(srv, "/hooks/stripe"),
                              config=srv.env_file)
    check_eq(code, 0, "exit: %s %s" % (out, err))
    check("200 accepted" in out and "200 duplicate" in out and "\n401 " in out,
          "answers: %r" % out)
    sid = smoke_id(out)
    wait_for("the test event done", lambda: done(srv, "stripe", sid))


def case_badsig(srv):
    """The test's refused copies are not counted for the bad-signature
    alarm, nor its accepted ones as the provider's: on a provider that
    accepted nothing for two hours, no alarm; one forged delivery of
    another sender raises it."""
    alerts = os.path.join(srv.tmp, "badsig.txt")
    alert = os.path.join(srv.tmp, "badsig.sh")
    write_file(alert, 'echo "$IDEMHOOK_ALERT_REASON $IDEMHOOK_PROVIDER" >> %s\n' % alerts,
               0o700)
    env = {"IDEMHOOK_ALERT_ACTION": "/bin/sh " + alert, "IDEMHOOK_BADSIG_ALERT": "1"}

    def alerted():
        code, out, err = idemhook(srv, "work", "--once", "--provider", "stripe", env=env)
        check_eq(code, 0, "work: %s %s" % (out, err))
        with open(alerts) if os.path.exists(alerts) else contextlib.nullcontext(None) as f:
            return "bad_signatures stripe" in (f.read().splitlines() if f else [])
    code, out, err = idemhook(srv, "smoke", "stripe", url(srv, "/hooks/stripe"))
    check_eq(code, 0, "smoke: %s %s" % (out, err))
    check(not alerted(), "the smoke test raised the bad-signature alarm")
    # The forger sends the smoke test's unsigned header too: it must not
    # take the refusal out of the count (smoke.h, smoke_wrong_secret()).
    b = stripe_event("evt_forged")
    r = srv.post("/hooks/stripe", b, {"Stripe-Signature": sign_stripe(ACME, b),
                                      "X-Idemhook-Smoke": "1"})
    check_eq(r.status, 401, "a forged delivery")
    # On PostgreSQL the receiver's writer adds its refusals to the store
    # within 20 s (shared/sigfail_pend.h): wait for the alarm that long.
    end = time.monotonic() + 120
    while not alerted() and time.monotonic() < end:
        time.sleep(1)
    check(alerted(), "no alarm for a forged delivery")


def configure(srv):
    """srv's action, its settings file, and the file named at start-up."""
    srv.action = os.path.join(srv.tmp, "action.sh")
    srv.ran = os.path.join(srv.tmp, "ran.txt")
    write_file(srv.action, 'echo "$IDEMHOOK_PROVIDER $IDEMHOOK_EVENT_ID" >> %s\n'
               % srv.ran, 0o700)
    srv.cfg = os.path.join(srv.tmp, "idemhook.env")
    write_file(srv.cfg, settings(srv))
    srv.env["IDEMHOOK_CONFIG"] = srv.cfg
    return srv


def cases(tap, bindir, servers):
    providers = ["stripe"] if pg_backend() else None
    srv = configure(servers.add(Server(bindir, providers=providers)))
    if not tap.run("lighttpd starts, every endpoint and its settings file", srv.start):
        return
    for p in srv.providers:
        tap.run("%s: 200 accepted, 200 duplicate, 401; exit 0; no action, no object" % p,
                case_provider, srv, p)
    tap.run("the action runs for real events only; a test event sets no object",
            case_controls, srv)
    tap.run("an account: its own secret and URL", case_account, srv)
    tap.run("a wrong URL or secret exits 1; a missing secret exits 2 naming it",
            case_failures, srv)
    tap.run("smoke --list and --purge: the test events only", case_list_purge, srv,
            srv.providers)
    tap.run("a test event does not silence the alarm on a silent provider",
            case_silence, srv)
    tap.run("no sanitizer reports", lambda: check(
        not srv.sanitizer_reports(), "sanitizer: %r" % srv.sanitizer_reports()[:2]))
    srv.stop()
    # A store of its own: the cases above refused real wrong-secret
    # copies (an account's URL with the default secret, a wrong settings
    # file), which count for the alarm as any refusal does.
    bs = configure(servers.add(Server(bindir, providers=["stripe"])))
    if tap.run("a second lighttpd starts, for the bad-signature alarm", bs.start):
        tap.run("nor does it raise the bad-signature alarm, which a forged delivery with "
                "the smoke test's header does", case_badsig, bs)
        bs.stop()
    if pg_backend():
        return
    for name, make in (("apache .htaccess (mod_fcgid)",
                        lambda: ApacheServer(bindir, mode="fcgid", providers=["stripe"])),
                       ("apache .htaccess (CGI)",
                        lambda: ApacheServer(bindir, mode="cgi", providers=["stripe"])),
                       ("apache vhost.conf",
                        lambda: ApacheServer(bindir, mode="vhost", providers=["stripe"])),
                       ("nginx", lambda: NginxServer(bindir, providers=["stripe"]))):
        s = servers.add(make())
        if tap.run("%s starts" % name, s.start):
            tap.run("%s: idemhook smoke stripe passes" % name, case_layout, s)
        s.stop()


if __name__ == "__main__":
    sys.exit(suite_main("smoke", cases))
