#!/usr/bin/env python3
"""Tests of the shipped lighttpd configuration (www-config/lighttpd).

Usage: test_lighttpd_conf.py BINDIR   (or IH_BIN=BINDIR ...)
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (CONF_DIR, IS_ROOT, PROVIDERS, Server, check,  # noqa: E402
                     sign_stripe, suite_main)


def present(bindir):
    return [p for p in PROVIDERS
            if os.path.exists(os.path.join(bindir, p + ".fcgi"))
            and os.path.exists(os.path.join(CONF_DIR, "hooks-%s.conf" % p))]


def every_hook_file_has_binary_name(bindir):
    """Each hooks-<p>.conf mounts <prefix>/<p> on <bin>/<p>.fcgi."""
    for fn in sorted(os.listdir(CONF_DIR)):
        m = re.match(r"hooks-(\w+)\.conf$", fn)
        if not m:
            continue
        p = m.group(1)
        text = open(os.path.join(CONF_DIR, fn)).read()
        for want in ('var.idemhook_prefix + "/%s"' % p, 'var.idemhook_bin + "/%s.fcgi"' % p,
                     'var.idemhook_run + "/%s.sock"' % p, '"check-local"', '"max-procs"',
                     "var.idemhook_%s_env" % p, '"bin-copy-environment"'):
            check(want in text, "%s lacks %s" % (fn, want))


def example_config(bindir):
    """lighttpd.conf.example passes lighttpd -tt once its paths point here."""
    tmp = tempfile.mkdtemp(prefix="ih-e2e-conf-")
    try:
        for fn in os.listdir(CONF_DIR):
            shutil.copy(os.path.join(CONF_DIR, fn), tmp)
        text = open(os.path.join(tmp, "lighttpd.conf.example")).read()
        text = re.sub(r'var\.idemhook_bin := "[^"]*"', 'var.idemhook_bin := "%s"' % bindir, text)
        conf = os.path.join(tmp, "lighttpd.conf")
        with open(conf, "w") as f:
            f.write(text)
        r = subprocess.run(["lighttpd", "-tt", "-f", conf], capture_output=True, text=True,
                           timeout=30, cwd="/")
        out = (r.stdout + r.stderr).strip()
        check(r.returncode == 0, "lighttpd -tt failed (%d): %s" % (r.returncode, out[-500:]))
        check("WARNING" not in out and "ERROR" not in out.upper().replace("ERRORLOG", ""),
              "lighttpd -tt complained: %s" % out[-500:])
        r = subprocess.run(["lighttpd", "-p", "-f", conf], capture_output=True, text=True,
                           timeout=30, cwd="/")
        check('"/hooks/stripe"' in r.stdout and "stripe.fcgi" in r.stdout,
              "parsed config lacks the /hooks/stripe mapping")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def every_endpoint(srv, providers):
    bad = []
    for p in providers:
        r = srv.get("/hooks/" + p)
        if r.status != 405 or (r.header("Allow") or "").replace(" ", "").upper() != "POST":
            bad.append("GET /hooks/%s -> %d Allow=%r" % (p, r.status, r.header("Allow")))
        r = srv.post("/hooks/" + p, b'{"id":"evt_x","type":"x"}', {})
        if 200 <= r.status < 300 or r.status >= 500:
            bad.append("unauthenticated POST /hooks/%s -> %d %r" % (p, r.status, r.body[:80]))
    check(not bad, "; ".join(bad))
    check(srv.count() == 0, "rows written by unauthenticated requests")


def sockets_and_procs(srv, providers):
    """max-procs 2: two sockets and two processes per provider."""
    run = os.path.join(srv.tmp, "run")
    socks = sorted(os.listdir(run))
    for p in providers:
        mine = [s for s in socks if s.startswith(p + ".sock")]
        check(len(mine) == 2, "expected 2 sockets for %s in %s, found %r" % (p, run, mine))


def env_not_leaked(bindir):
    """A secret in lighttpd's own environment does not reach the receiver
    (bin-copy-environment limits what is copied)."""
    leaked = "whsec_" + os.urandom(16).hex()
    with Server(bindir, providers=["stripe"], name="leak",
                lighttpd_env={"IDEMHOOK_STRIPE_SECRET_2": leaked,
                              "IDEMHOOK_TOLERANCE": "abc"}) as srv:
        body = b'{"id":"evt_leak_%s","object":"event","type":"x.y"}' % os.urandom(4).hex().encode()
        r = srv.post("/hooks/stripe", body, {"Stripe-Signature": sign_stripe(leaked, body)})
        check(r.status == 401, "signed with a secret only in lighttpd's environment: "
              "expected 401, got %d %r" % (r.status, r.body[:100]))
        r = srv.post("/hooks/stripe", body,
                     {"Stripe-Signature": sign_stripe(srv.secrets["stripe"], body)})
        check(r.status == 200, "configured secret: expected 200, got %d %r (lighttpd's "
              "environment leaked into the receiver?)" % (r.status, r.body[:100]))


def secret_only_in_settings_file(bindir):
    """A hooks file included with no secret variable starts (the default
    is ""), takes the secret from the IDEMHOOK_CONFIG file, and the
    idemhook command reading that file sees the same secret."""
    secret = "whsec_" + os.urandom(12).hex()
    tmp = tempfile.mkdtemp(prefix="ih-e2e-onefile-")
    try:
        env_file = os.path.join(tmp, "idemhook.env")
        with open(env_file, "w") as f:
            f.write("IDEMHOOK_STRIPE_SECRET=%s\n" % secret)
        os.chmod(env_file, 0o600)
        srv = Server(bindir, providers=[], name="onefile", env={"IDEMHOOK_CONFIG": env_file},
                     extra_conf='include "%s"' % os.path.join(CONF_DIR, "hooks-stripe.conf"))
        if IS_ROOT:
            os.chmod(tmp, 0o755)
        with srv:
            srv.start()
            body = b'{"id":"evt_onefile_%s","object":"event","type":"x.y"}' % os.urandom(4).hex().encode()
            r = srv.post("/hooks/stripe", body, {"Stripe-Signature": sign_stripe(secret, body)})
            check(r.status == 200, "secret in the settings file only: expected 200, got %d %r"
                  % (r.status, r.body[:120]))
        r = subprocess.run([os.path.join(bindir, "idemhook"), "--config", env_file, "check",
                            "--provider", "stripe"], capture_output=True, text=True, timeout=30)
        check("ok: stripe: 1 secret(s) set" in r.stdout,
              "idemhook check does not see the secret: %s" % r.stdout[-400:])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_cases(tap, bindir, servers):
    provs = present(bindir)
    tap.run("lighttpd-conf: each hooks-<provider>.conf follows the pattern",
            every_hook_file_has_binary_name, bindir)
    tap.run("lighttpd-conf: lighttpd.conf.example passes lighttpd -tt", example_config, bindir)
    tap.run("lighttpd-conf: secret only in the settings file: served, and seen by check",
            secret_only_in_settings_file, bindir)
    if not provs:
        tap.not_ok("lighttpd-conf: providers", "no <provider>.fcgi in %s" % bindir)
        return
    tap.diag("providers with a binary and a hooks file: " + " ".join(provs))
    srv = servers.add(Server(bindir, providers=provs, name="all"))
    if tap.run("lighttpd-conf: lighttpd starts with every provider (%s)" % ",".join(provs),
               srv.start):
        time.sleep(0.2)
        tap.run("lighttpd-conf: every endpoint: GET -> 405 Allow: POST, "
                "unauthenticated POST -> 4xx, nothing stored", every_endpoint, srv, provs)
        tap.run("lighttpd-conf: max-procs 2 -> two sockets per provider",
                sockets_and_procs, srv, provs)
        srv.stop()
    tap.run("lighttpd-conf: lighttpd's own environment does not reach the receivers",
            env_not_leaked, bindir)


if __name__ == "__main__":
    sys.exit(suite_main("lighttpd-conf", run_cases))
