#!/usr/bin/env python3
"""The settings file's syntax, and what idemhook check says of actions
(issue 39, item 1).

Usage: test_settings_file.py BINDIR   (or IH_BIN=BINDIR test_settings_file.py)

1. The README's Actions line, IDEMHOOK_STRIPE_ACTION='payment_intent.succeeded
   /usr/local/bin/fulfil-order' (its program in the test's folder), written
   as is in the IDEMHOOK_CONFIG file: a signed event through lighttpd runs
   the action (the quotes wrap the value; they used to stay in the pattern,
   which then matched nothing).  A double-quoted value too.  An unmatched
   quote refuses the file: the receiver answers 500 and idemhook exits 2,
   naming the line and setting, never the value.
2. idemhook check reports an action pattern that can match no event type of
   its provider (a stray quote; an upper-case Stripe type, a literal Stripe
   type without '.', a GitHub event with an action suffix, a lower-case
   Asaas type), and an action whose program is not an executable file (not
   executable; missing; a name on no PATH folder); it says "no problems
   found" only when there are none, with a glob and a shell command.
"""

import os
import pwd
import stat
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (SANITIZER_ENV, SANITIZER_MARKERS, Server, check,  # noqa: E402
                     check_eq, sign_stripe, suite_main)
from cases import expect_accepted, expect_status, wait_status  # noqa: E402
import test_stripe as ts  # noqa: E402

STRIPE = ts.SPEC


def write_private(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o600)


def program(path, body):
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body)
    os.chmod(path, 0o755)
    return path


def deliver(srv):
    eid = STRIPE.new_id("quoted")
    body = STRIPE.body(eid, "payment_intent.succeeded")
    return ts.post_signed(srv, body, sign_stripe(srv.secrets["stripe"], body)), eid


def wait_file(path, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path) and os.path.getsize(path) > 0:
            with open(path) as f:
                return f.read()
        time.sleep(0.05)
    return ""


class Cli:
    def __init__(self, bindir, srv, conf):
        self.bin = os.path.join(bindir, "idemhook")
        self.srv = srv
        self.conf = conf

    def run(self, *args, env=None):
        e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
             "IDEMHOOK_DB": self.srv.db, "IDEMHOOK_CONFIG": self.conf}
        for k in SANITIZER_ENV:
            if k in os.environ:
                e[k] = os.environ[k]
        e.update(env or {})
        p = subprocess.run([self.bin] + list(args), env=e, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=120)
        out = p.stdout.decode("utf-8", "replace")
        err = p.stderr.decode("utf-8", "replace")
        for m in SANITIZER_MARKERS:
            check(m not in err, "sanitizer report: %s" % err[-1500:])
        return p.returncode, out, err


# ---------------------------------------------------------------- 1

def case_quoted_action(srv, conf, tmp):
    mark = os.path.join(tmp, "fulfilled")
    fulfil = program(os.path.join(tmp, "fulfil-order"),
                     'echo "$IDEMHOOK_EVENT_ID" >> %s\n' % mark)
    # The README's line, word for word but for the program's folder.
    write_private(conf, "IDEMHOOK_STRIPE_SECRET=%s\n"
                  "IDEMHOOK_STRIPE_ACTION='payment_intent.succeeded %s'\n"
                  % (srv.secrets["stripe"], fulfil))
    r, eid = deliver(srv)
    expect_accepted(r, "event for the quoted action")
    row = wait_status(STRIPE, srv, eid, "done")
    got = wait_file(mark)
    check(eid in got, "the quoted action did not run for %s (status %s; ran for %r)"
          % (eid, row["status"], got))
    # Double quotes read the same.
    os.unlink(mark)
    write_private(conf, 'IDEMHOOK_STRIPE_SECRET="%s"\n'
                  'IDEMHOOK_STRIPE_ACTION="payment_intent.succeeded %s"\n'
                  % (srv.secrets["stripe"], fulfil))
    r, eid = deliver(srv)
    expect_accepted(r, "event for the double-quoted action and secret")
    wait_status(STRIPE, srv, eid, "done")
    check(eid in wait_file(mark), "the double-quoted action did not run")


def case_unmatched_quote(srv, conf, cli):
    write_private(conf, "IDEMHOOK_STRIPE_SECRET=%s\n"
                  "IDEMHOOK_STRIPE_ACTION='payment_intent.succeeded /bin/true\n"
                  % srv.secrets["stripe"])
    r, eid = deliver(srv)
    expect_status(r, 500, "a settings file with an unmatched quote")
    rc, out, err = cli.run("list")
    check_eq(rc, 2, "idemhook list with an unmatched quote in the file: exit")
    check("line 2 (IDEMHOOK_STRIPE_ACTION)" in err and "same quote" in err,
          "the refusal names neither the line nor the rule: %r" % err)
    check(srv.secrets["stripe"] not in err + out, "the refusal shows the secret")


# ---------------------------------------------------------------- issue 39 item 8

HELP_COMMANDS = ("init", "work", "check", "list", "show", "verify", "replay", "purge",
                 "stats", "copy", "backup", "restore", "objects", "object", "catch-up",
                 "health")


def case_help_as_root(bindir):
    """As root, with the settings file in root's fixed place owned by the
    programs' user (as a README install leaves /etc/idemhook/idemhook.env
    for www-data, here in a private mount namespace over root's home):
    every command's --help answers; the command itself is refused."""
    home = pwd.getpwuid(0).pw_dir
    ih = os.path.join(bindir, "idemhook")
    script = ('mount -t tmpfs -o mode=0700 tmpfs "$1" || exit 99; '
              'mkdir "$1/idemhook" && echo IDEMHOOK_TOLERANCE=300 > "$1/idemhook/idemhook.env" '
              '&& chown -R 33:33 "$1/idemhook" && chmod 600 "$1/idemhook/idemhook.env" '
              '|| exit 98; shift; '
              'for c in "$@"; do "$IH" "$c" --help > "$T/$c.out" 2>&1; echo $? > "$T/$c.rc"; done; '
              '"$IH" list > "$T/list-plain.out" 2>&1; echo $? > "$T/list-plain.rc"')
    tmp = tempfile.mkdtemp(prefix="ih-help-root-")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IH": ih, "T": tmp}
    for k in SANITIZER_ENV:
        if k in os.environ:
            env[k] = os.environ[k]
    p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                        script, "sh", home] + list(HELP_COMMANDS), env=env,
                       capture_output=True, timeout=300)
    check(p.returncode not in (98, 99), "could not set up root's settings file: %r"
          % p.stderr.decode(errors="replace"))

    def read(name):
        with open(os.path.join(tmp, name)) as f:
            return f.read()
    check_eq(read("list-plain.rc").strip(), "2", "list as root without --help: exit")
    check("not used" in read("list-plain.out"),
          "no refusal without --help: %r" % read("list-plain.out"))
    bad = []
    for c in HELP_COMMANDS:
        rc, out = read(c + ".rc").strip(), read(c + ".out")
        if rc != "0" or ("usage: idemhook " + c) not in out:
            bad.append("%s --help: exit %s: %r" % (c, rc, out[:200]))
    check(not bad, "; ".join(bad))


# ---------------------------------------------------------------- 2

def case_check_actions(srv, conf, cli, tmp):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(srv.db + suffix):
            os.chmod(srv.db + suffix, 0o600)
    good = program(os.path.join(tmp, "good-action"), "exit 0\n")
    plain = os.path.join(tmp, "not-executable")
    with open(plain, "w") as f:
        f.write("#!/bin/sh\nexit 0\n")
    os.chmod(plain, stat.S_IRUSR | stat.S_IWUSR)
    secrets = ("IDEMHOOK_STRIPE_SECRET=%s\nIDEMHOOK_GITHUB_SECRET=gh_secret_x\n"
               "IDEMHOOK_ASAAS_TOKEN=%s\n" % (srv.secrets["stripe"], "t" * 40))
    only = ("--provider", "stripe", "--provider", "github", "--provider", "asaas")
    write_private(conf, secrets +
                  "IDEMHOOK_STRIPE_ACTION='payment_intent.succeeded %s'\n"
                  "IDEMHOOK_STRIPE_ACTION_2=invoice.* /bin/sh -c 'echo \"$X\"'\n"
                  "IDEMHOOK_STRIPE_ACTION_3=* sh %s\n"
                  "IDEMHOOK_GITHUB_ACTION=pull_request %s\n"
                  "IDEMHOOK_ASAAS_ACTION=PAYMENT_* %s\n" % (good, good, good, good))
    rc, out, err = cli.run("check", *only)
    check(rc == 0 and "no problems found" in out and "PROBLEM" not in out,
          "check of good actions: exit %d: %s %s" % (rc, out[-1500:], err[-500:]))
    bad = {
        "IDEMHOOK_STRIPE_ACTION=payment_intent.succeeded' %s\n" % good:
            ["action pattern payment_intent.succeeded' can match no stripe", "quote"],
        "IDEMHOOK_STRIPE_ACTION=Payment_Intent.Succeeded %s\n" % good:
            ["action pattern Payment_Intent.Succeeded can match no stripe"],
        "IDEMHOOK_STRIPE_ACTION=payment_intent %s\n" % good:
            ["action pattern payment_intent can match no stripe"],
        "IDEMHOOK_GITHUB_ACTION=pull_request.opened %s\n" % good:
            ["github: action pattern pull_request.opened can match no github"],
        "IDEMHOOK_ASAAS_ACTION=payment_received %s\n" % good:
            ["asaas: action pattern payment_received can match no asaas"],
        "IDEMHOOK_STRIPE_ACTION_2=invoice.paid %s --flag\n" % plain:
            ["stripe: action invoice.paid: the command's program %s is not an executable file" % plain],
        "IDEMHOOK_STRIPE_ACTION=* %s/missing\n" % tmp:
            ["the command's program %s/missing is not an executable file" % tmp],
        "IDEMHOOK_STRIPE_ACTION=* no-such-program-ih39\n":
            ["no-such-program-ih39 is found in no folder of PATH"],
    }
    for line, wants in bad.items():
        write_private(conf, secrets + line)
        rc, out, err = cli.run("check", *only)
        check(rc == 1 and "no problems found" not in out,
              "check passed %r: exit %d: %s" % (line, rc, out[-800:]))
        for w in wants:
            check(w in out, "check of %r does not say %r: %s" % (line, w, out[-1500:]))


def run_cases(tap, bindir, servers):
    tmp = tempfile.mkdtemp(prefix="ih-settings-file-")
    conf = os.path.join(tmp, "idemhook.env")
    write_private(conf, "")
    srv = servers.add(Server(bindir, providers=["stripe"], name="settings-file",
                             secrets={"stripe": "whsec_" + os.urandom(16).hex()},
                             env={"IDEMHOOK_CONFIG": conf}))
    # The secret comes from the file, which the cases rewrite.
    srv.secrets["stripe-startup"] = srv.secrets["stripe"]
    cli = Cli(bindir, srv, conf)
    t = tap.run
    write_private(conf, "IDEMHOOK_STRIPE_SECRET=%s\n" % srv.secrets["stripe"])
    if not t("lighttpd starts with the settings file", srv.start):
        return
    t("the README's quoted action line runs the action (single and double quotes)",
      case_quoted_action, srv, conf, tmp)
    t("an unmatched quote refuses the file: 500 at the receiver, exit 2 from "
      "idemhook, line and setting named", case_unmatched_quote, srv, conf, cli)
    t("check: a pattern no event type matches and a program that is not an "
      "executable file are problems; no problems only when none",
      case_check_actions, srv, conf, cli, tmp)
    tap.run_as_root("as root, every command's --help answers although the settings "
                    "file in root's fixed place is refused", "needs root (a mount "
                    "namespace over root's home)", case_help_as_root, bindir)
    t("no sanitizer reports from the receivers",
      lambda: check(not srv.sanitizer_reports(), srv.errorlog()[-2000:]))


if __name__ == "__main__":
    sys.exit(suite_main("settings_file", run_cases, prefix=True,
                        needs=("idemhook", "stripe.fcgi")))
