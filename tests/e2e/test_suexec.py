#!/usr/bin/env python3
"""Shared hosting under suEXEC, for real, following the README.

As root (tap.run_as_root), for mod_fcgid and for mod_cgi: Debian's Apache
with mod_userdir and apache2-suexec-custom, a real account made with
useradd, the README's AllowOverride line exactly, and the README's
shared-hosting recipe run as that account (the shipped .htaccess in
~/public_html/hooks, the settings in ~/idemhook/idemhook.env, no SetEnv
anywhere).  Deliveries are accepted, a redelivery is a duplicate, a
forged one 401; the store belongs to the account (suEXEC ran the
programs as it); the request and processing lines are in the account's
~/idemhook/idemhook.log; `idemhook check` as the account is clean; the
README's smoke block, from the build machine, exits 0 (accepted,
duplicate, 401).  Then
the store moved under ~/public_html: 500 under_document_root, one log
line saying why, and check reports it.

As any user: a program run as CGI refuses a settings file or a store
under DOCUMENT_ROOT; the shipped .htaccess files work under the README's
AllowOverride line in the harness's Apache (ApacheServer).

Usage: test_suexec.py BINDIR   (or IH_BIN=BINDIR ...)
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import SANITIZER_ENV, ApacheServer, check, sign_stripe, suite_main  # noqa: E402
from suexec import SuexecSite  # noqa: E402
from test_recipes import (cron_commands, deliveries, fill_secrets, post, recipe,  # noqa: E402
                          shell_commands, wait_http)


def smoke_from_build_machine(site, dynamic):
    """The README's shared-smoke block, word for word, on a "build
    machine" of our own: a folder whose build/idemhook is the dynamic
    command under test (the static one uploaded has no libcurl), so make
    is not run; scp's host is the account's home as this machine sees it,
    and the URL the site's, as test_recipes' run_smoke substitutes it.
    The smoke test must exit 0 with accepted, duplicate and 401."""
    ns = site.ns
    up = tempfile.mkdtemp(prefix="ih-smoke-", dir=ns.tmp)
    os.makedirs(os.path.join(up, "build"))
    os.symlink(os.path.join(os.path.abspath(dynamic), "idemhook"),
               os.path.join(up, "build", "idemhook"))
    env = {"PATH": "/usr/bin:/bin"}
    env.update({k: os.environ[k] for k in SANITIZER_ENV if k in os.environ})
    ran = 0
    for _, text in recipe("shared-smoke"):
        for cmd in shell_commands(text):
            if cmd == "make":
                continue
            cmd = cmd.replace("you@your-host:", ns.path(site.home) + "/")
            cmd = cmd.replace("https://example.com/", site.base + "/")
            r = subprocess.run(["sh", "-c", cmd], cwd=up, env=env, capture_output=True,
                               text=True, timeout=120)
            check(r.returncode == 0, "%r: exit %d: %s" % (cmd, r.returncode,
                                                        (r.stdout + r.stderr)[-600:]))
            if " smoke " in cmd:
                ran += 1
                check("accepted" in r.stdout and "duplicate" in r.stdout and "401" in r.stdout,
                      "%r: %s" % (cmd, r.stdout[-600:]))
    check(ran == 1, "the shared-smoke block runs idemhook smoke %d times" % ran)
    check(not os.path.exists(os.path.join(up, "smoke.env")), "smoke.env left behind")


def shared_hosting(bindir, mode):
    # fcgid: the static build the README uploads, when make static made it
    # (make check does); cgi: the programs under test, with sanitizers.
    dynamic = bindir
    static = os.path.join(bindir, "static")
    if mode == "fcgid" and os.path.exists(os.path.join(static, "stripe.fcgi")):
        bindir = static
    print("# suexec %s: programs from %s" % (mode, bindir), flush=True)
    site = SuexecSite(bindir, mode)
    ns = site.ns
    ok = False
    try:
        site.host_setup()
        site.recipe_as_user("shared")
        env_file = site.home + "/idemhook/idemhook.env"
        secrets = {"stripe": "whsec_" + os.urandom(12).hex(), "github": os.urandom(12).hex()}
        fill_secrets(ns, {"IDEMHOOK_STRIPE_SECRET": secrets["stripe"],
                          "IDEMHOOK_GITHUB_SECRET": secrets["github"]}, env_file)
        site.recipe_as_user("shared-after")
        # Nothing reaches the programs through the environment.
        for ht in ("/public_html/.htaccess", "/public_html/hooks/.htaccess"):
            p = ns.path(site.home + ht)
            if os.path.exists(p):
                check(not re.search(r"(?m)^\s*SetEnv", open(p).read()),
                      "%s has a SetEnv line" % ht)
        site.start()
        wait_http(site.base + "/hooks/")
        ids = deliveries(site.base, secrets, "suexec-" + mode)
        db = ns.path(site.home + "/idemhook/idemhook.db")
        check(os.stat(db).st_uid == site.uid(),
              "the store does not belong to the account: suEXEC did not run the programs")
        time.sleep(0.5)
        logfile = site.home + "/idemhook/idemhook.log"
        log = ns.read(logfile)
        for p, eid in ids:
            check(re.search(r"provider=%s event=\S*%s .*outcome=accepted" % (p, eid), log)
                  and re.search(r"provider=%s event=\S*%s .*processing=done" % (p, eid), log),
                  "request or processing line missing for %s in %s: %s" % (p, logfile, log[-500:]))
        st = os.stat(ns.path(logfile))
        check(st.st_uid == site.uid() and st.st_mode & 0o077 == 0,
              "%s: owner %d mode %04o" % (logfile, st.st_uid, st.st_mode & 0o7777))
        r = site.run_as_user("~/idemhook-build/idemhook check --provider stripe --provider "
                             "github --docroot ~/public_html", check_rc=False)
        check(r.returncode == 0 and "settings: read as user ihsite" in r.stdout,
              "check as the account: %s" % (r.stdout + r.stderr)[-600:])
        # The README's cron lines, in the account's crontab: cron's
        # environment (no HOME either), the account's own program.
        for _, text in recipe("cron"):
            for cmd in cron_commands(text):
                cmd = cmd.replace("/usr/local/bin/idemhook", site.home + "/idemhook-build/idemhook")
                r = ns.run("/usr/sbin/runuser -u %s -- env -i PATH=/usr/bin:/bin SHELL=/bin/sh "
                           "sh -c %s" % (site.user, shlex.quote(cmd)), check_rc=False, cwd="/")
                check(r.returncode == 0, "cron line %r as the account: %s"
                      % (cmd, (r.stdout + r.stderr)[-400:]))
        smoke_from_build_machine(site, dynamic)

        if mode == "cgi":
            # The store under the document root: refused, and said why.
            # (Plain CGI reads the settings at every request.)
            text = ns.read(env_file).replace("/idemhook/idemhook.db",
                                             "/public_html/data/idemhook.db")
            with open(ns.path(env_file), "w") as f:
                f.write(text)
            body = json.dumps({"id": "evt_docroot", "object": "event", "type": "x"}).encode()
            status, out = post(site.base + "/hooks/stripe", body,
                               {"Stripe-Signature": sign_stripe(secrets["stripe"], body)})
            check(status == 500 and b"under_document_root" in out,
                  "store under public_html: expected 500 under_document_root, got %d %r"
                  % (status, out[:200]))
            check(not os.path.exists(ns.path(site.home + "/public_html/data/idemhook.db")),
                  "a store was created under public_html")
            lines = [ln for ln in ns.read(logfile).splitlines()
                     if "outcome=under_document_root" in ln]
            check(len(lines) == 1 and "public_html" in lines[0],
                  "expected one log line saying why: %r" % lines)
            r = site.run_as_user("~/idemhook-build/idemhook check --provider stripe "
                                 "--docroot ~/public_html", check_rc=False)
            check(r.returncode == 1 and "inside the document root" in r.stdout,
                  "check does not report the store under the document root: %s"
                  % r.stdout[-500:])
        ok = True
    finally:
        if not ok:
            for p in ("/var/log/apache2/error.log", "/var/log/apache2/suexec.log"):
                try:
                    sys.stdout.write("".join("# %s: %s\n" % (p, ln) for ln in
                                             ns.read(p).splitlines()[-15:]))
                except OSError:
                    pass
            sys.stdout.write("".join("# " + ln + "\n" for ln in
                                     "\n".join(ns.log[-5:]).splitlines()[-40:]))
        site.close()


def cgi_refuses_under_docroot(bindir):
    """The program as plain CGI: a settings file, or a store, under
    DOCUMENT_ROOT (or CONTEXT_DOCUMENT_ROOT) answers 500 and says why;
    the same outside it is served."""
    tmp = tempfile.mkdtemp(prefix="ih-e2e-docroot-")
    try:
        docroot = os.path.join(tmp, "www")
        os.makedirs(docroot)
        secret = "whsec_" + os.urandom(8).hex()

        def run(settings, where, **extra):
            with open(settings, "w") as f:
                f.write("IDEMHOOK_STRIPE_SECRET=%s\nIDEMHOOK_DB=%s\n" % (secret, where))
            os.chmod(settings, 0o600)
            body = b'{"id":"evt_dr_%s","object":"event","type":"x"}' % os.urandom(4).hex().encode()
            env = {"PATH": "/usr/bin:/bin", "GATEWAY_INTERFACE": "CGI/1.1",
                   "REQUEST_METHOD": "POST", "CONTENT_LENGTH": str(len(body)),
                   "CONTENT_TYPE": "application/json", "SCRIPT_NAME": "/hooks/stripe",
                   "HTTP_STRIPE_SIGNATURE": sign_stripe(secret, body),
                   "IDEMHOOK_CONFIG": settings}
            env.update(extra)
            for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
                if k in os.environ:
                    env[k] = os.environ[k]
            r = subprocess.run([os.path.join(bindir, "stripe.fcgi")], input=body, env=env,
                               capture_output=True, timeout=30)
            return r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")

        inside = os.path.join(docroot, "idemhook.env")
        outside = os.path.join(tmp, "idemhook.env")
        out, err = run(inside, os.path.join(tmp, "store", "x.db"), DOCUMENT_ROOT=docroot)
        check("500" in out.split("\n")[0] and "under_document_root" in out,
              "settings file under DOCUMENT_ROOT: %r" % out[:200])
        check("settings_file_under_document_root:_" + inside in err,
              "no log line saying why: %r" % err[-300:])
        out, err = run(outside, os.path.join(docroot, "data", "x.db"),
                       CONTEXT_DOCUMENT_ROOT=docroot, DOCUMENT_ROOT="/var/www/html")
        check("under_document_root" in out and "store_under_document_root" in err,
              "store under CONTEXT_DOCUMENT_ROOT: %r %r" % (out[:200], err[-300:]))
        check(not os.path.exists(os.path.join(docroot, "data")),
              "the store's folder was created under the document root")
        out, err = run(outside, os.path.join(tmp, "store", "x.db"), DOCUMENT_ROOT=docroot)
        check("accepted" in out, "outside the document root: %r %r" % (out[:200], err[-300:]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check_says_what_it_read(bindir):
    """idemhook check names the settings file and how it was chosen, the
    IDEMHOOK_* variables it saw (names, never values) and the user; it
    reports a settings file under the document root."""
    import pwd
    tmp = tempfile.mkdtemp(prefix="ih-e2e-checkread-")
    try:
        docroot = os.path.join(tmp, "www")
        os.makedirs(docroot)
        secret = "whsec_" + os.urandom(8).hex()
        settings = os.path.join(docroot, "idemhook.env")
        with open(settings, "w") as f:
            f.write("IDEMHOOK_DB=%s\n" % os.path.join(tmp, "store", "x.db"))
        os.chmod(settings, 0o600)
        env = {"PATH": "/usr/bin:/bin", "IDEMHOOK_CONFIG": settings,
               "IDEMHOOK_STRIPE_SECRET": secret, "IDEMHOOK_TOLERANCE": "300"}
        r = subprocess.run([os.path.join(bindir, "idemhook"), "check", "--provider", "stripe",
                            "--docroot", docroot], env=env, capture_output=True, text=True,
                           timeout=30)
        me = pwd.getpwuid(os.geteuid()).pw_name
        for want in ("settings: read as user %s (uid %d)" % (me, os.geteuid()),
                     "settings: file %s (IDEMHOOK_CONFIG)" % settings,
                     "IDEMHOOK_STRIPE_SECRET", "IDEMHOOK_TOLERANCE",
                     "PROBLEM: the settings file %s is inside the document root" % settings):
            check(want in r.stdout, "check output lacks %r: %s" % (want, r.stdout[-800:]))
        check(secret not in r.stdout + r.stderr, "check printed the secret")
        check(r.returncode == 1, "check exit %d with a problem" % r.returncode)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def readme_allow_override(bindir, mode):
    """The shipped .htaccess under exactly the README's AllowOverride
    line: served (accepted, duplicate), settings files denied (403).
    The line the README used to give ("FileInfo Options") fails (500)."""
    (_, line), = recipe("allowoverride")
    args = line.strip().split(None, 1)[1]
    for allow, works in ((args, True), ("FileInfo Options", False)):
        srv = ApacheServer(bindir, mode=mode, providers=["stripe"], allow_override=allow,
                           name="allow-" + mode)
        with srv:
            srv.start()
            body = b'{"id":"evt_ao_%s","object":"event","type":"x"}' % os.urandom(4).hex().encode()
            hdr = {"Stripe-Signature": sign_stripe(srv.secrets["stripe"], body)}
            r = srv.post("/hooks/stripe", body, hdr)
            if not works:
                check(r.status == 500, "AllowOverride %s: expected Apache's 500, got %d"
                      % (allow, r.status))
                continue
            check(r.status == 200 and b"accepted" in r.body,
                  "AllowOverride %s: %d %r" % (allow, r.status, r.body[:150]))
            r = srv.post("/hooks/stripe", body, hdr)
            check(r.status == 200 and b"duplicate" in r.body, "redelivery: %r" % r)
            with open(os.path.join(srv.hooks_dir, "idemhook.env"), "w") as f:
                f.write("IDEMHOOK_X=1\n")
            os.chmod(os.path.join(srv.hooks_dir, "idemhook.env"), 0o644)
            r = srv.get("/hooks/idemhook.env")
            check(r.status == 403, "hooks/idemhook.env: expected 403, got %d" % r.status)


def run_cases(tap, bindir, servers):
    tap.run("CGI: settings file or store under the document root -> 500 "
            "under_document_root, one line saying why", cgi_refuses_under_docroot, bindir)
    tap.run("check says which file and variables it read, as whom; settings file under "
            "the document root reported", check_says_what_it_read, bindir)
    for mode in ("fcgid", "cgi"):
        tap.run("%s.htaccess under the README's AllowOverride line: served, settings "
                "denied; the old line fails" % mode, readme_allow_override, bindir, mode)
    why = "useradd, and a mount namespace for Debian's Apache with suEXEC"
    if not os.path.exists("/usr/lib/apache2/suexec-custom"):
        tap.not_ok("apache2-suexec-custom", "not installed: run make deps")
        return
    tap.run_as_root("mod_fcgid + suEXEC + userdir, README recipe as the account, no SetEnv: "
                    "accepted, duplicate, 401, store owned by the account, log, check, cron, "
                    "smoke",
                    why, shared_hosting, bindir, "fcgid")
    tap.run_as_root("mod_cgi + suEXEC + userdir, README recipe as the account, no SetEnv: "
                    "accepted, duplicate, 401, log, check, cron, smoke; store under public_html "
                    "-> 500",
                    why, shared_hosting, bindir, "cgi")


if __name__ == "__main__":
    sys.exit(suite_main("suexec", run_cases, prefix=True))
