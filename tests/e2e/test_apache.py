#!/usr/bin/env python3
"""End-to-end tests under a real Apache with mod_fcgid, using the shipped
www-config/apache files unchanged (harness.ApacheServer).

Usage: test_apache.py BINDIR   (or IH_BIN=BINDIR test_apache.py)

  shared hosting   fcgid.htaccess in <docroot>/hooks, settings by SetEnv in
                   the document root's .htaccess: the common suite and the
                   Stripe cases for stripe.fcgi, the common suite for
                   github.fcgi, the files the .htaccess must not serve.
  host defaults    the same without FcgidMaxRequestLen in the server: a
                   body over mod_fcgid's 131072 bytes never reaches the
                   program (what the README's troubleshooting says).
  vhost            vhost.conf included from httpd.conf: settings through
                   FcgidInitialEnv, FcgidMaxRequestLen from vhost.conf.
"""

import os
import signal
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (ApacheServer, check, check_eq, sign_stripe,  # noqa: E402
                     suite_main)
from ihtest.http import parallel  # noqa: E402
from ihtest.procs import program_of  # noqa: E402
import cases  # noqa: E402
from cases import expect_accepted, expect_duplicate, expect_error, no_row, one_row  # noqa: E402
import test_stripe as ts  # noqa: E402
from test_github import GithubSpec  # noqa: E402

STRIPE = ts.SPEC
GITHUB = GithubSpec()


# The Stripe cases of test_stripe.py's main server that need no special
# server settings: (title, case, arguments after the server).
STRIPE_CASES = [
    ("header generated like stripe-python (UTF-8 body) accepted", ts.sdk_style),
    ("retry re-signed with a new timestamp -> duplicate", ts.resigned_retry),
    ("several v1, one junk -> accepted", ts.multi_v1_junk),
    ("v0 only (even with a correct MAC) -> 401", ts.v0_only),
    ("malformed Stripe-Signature variants -> 401", ts.malformed_headers),
    ("body altered after signing -> 401", ts.tampered_body),
    ("stale timestamp t-302 -> 401", ts.timestamp_case, -302, 401),
    ("t-290 inside the default tolerance -> accepted", ts.timestamp_case, -290, 200),
    ("rotation: IDEMHOOK_STRIPE_SECRET and _2 both accepted", ts.rotation),
    ("empty body -> 400", ts.empty_body),
    ("missing id -> 400", ts.missing_id),
    ("JSON followed by trailing bytes -> 400", ts.trailing_garbage),
    ("multi-byte UTF-8 body stored byte-identical", ts.utf8_body),
    ("header name in lower case accepted", ts.lowercase_header),
]


def stripe_cases(tap, srv, prefix):
    """STRIPE_CASES on srv, each titled prefix + "stripe: " + title."""
    for title, fn, *args in STRIPE_CASES:
        tap.run(prefix + "stripe: " + title, fn, srv, *args)


def setenv_server(servers, bindir, mode, name):
    """A server for stripe and github in mode, with a second Stripe
    secret in the provider's environment and a third given only by
    SetEnv (kept in srv.secrets, so that it must not be logged either).
    Returns the server and that third secret."""
    s3 = "whsec_" + os.urandom(16).hex()
    srv = servers.add(ApacheServer(
        bindir, mode=mode, providers=["stripe", "github"], name=name,
        provider_env={"stripe": {"IDEMHOOK_STRIPE_SECRET_2": "whsec_" + os.urandom(16).hex()}},
        setenv={"IDEMHOOK_STRIPE_SECRET_3": s3}))
    srv.secrets["stripe-3"] = s3
    return srv, s3


def setenv_secret(srv, secret):
    """A secret given only by SetEnv (a request parameter) is accepted."""
    eid = STRIPE.new_id("setenv")
    body = STRIPE.body(eid, STRIPE.default_type)
    expect_accepted(ts.post_signed(srv, body, sign_stripe(secret, body)),
                    "signed with IDEMHOOK_STRIPE_SECRET_3 from SetEnv")
    one_row(srv, STRIPE, eid)


# Files the hooks folder's .htaccess must never serve: settings, stores
# and their side files in any case or extension, rotated and compressed
# copies, editor swap files, extensionless stores.
DENIED_FILES = ("idemhook.env", "events.db", "events.db-wal", "events.db-shm",
                "events.db-lock", "events.db-journal", "site.conf", "dump.sql",
                "events.sqlite-wal", "events.sqlite3-wal", "events.sqlite-shm",
                "events.sqlite3-shm", "EVENTS.DB", "events.DB-WAL", "Idemhook.Env",
                "events.db.1", "events.db.gz", ".events.db.swp", "events.db.swp",
                "events.db~", "idemhook", "store", "stripe.fcgi.bak", "stripe.fcgi~")


def denied_files(srv):
    """The .htaccess allows only the programs: settings, database (any
    suffix, any case), backup, swap and extensionless files, and .ht*,
    all answer 403."""
    secret = "should-never-be-served-" + os.urandom(8).hex()
    for fn in DENIED_FILES:
        with open(os.path.join(srv.hooks_dir, fn), "w") as f:
            f.write("IDEMHOOK_STRIPE_SECRET=%s\n" % secret)
        os.chmod(os.path.join(srv.hooks_dir, fn), 0o644)
    bad = []
    try:
        for fn in DENIED_FILES + (".htaccess",):
            r = srv.get("/hooks/" + fn)
            if r.status != 403 or secret.encode() in r.body:
                bad.append("%s -> %d" % (fn, r.status))
    finally:
        for fn in DENIED_FILES:
            os.unlink(os.path.join(srv.hooks_dir, fn))
    check(not bad, "expected 403 for each: " + "; ".join(bad))


def program_urls(srv):
    """/hooks/stripe/ (trailing slash) and /hooks/stripe.fcgi reach the
    program too; /hooks/ lists nothing."""
    for path in ("/hooks/stripe/", "/hooks/stripe.fcgi"):
        eid = STRIPE.new_id("url")
        body = STRIPE.body(eid, STRIPE.default_type)
        r = srv.post(path, body, STRIPE.headers(srv, body, eid, STRIPE.default_type))
        expect_accepted(r, "POST " + path)
    r = srv.get("/hooks/")
    check(r.status in (403, 404), "GET /hooks/: expected 403 or 404, got %d" % r.status)
    check(b"stripe.fcgi" not in r.body, "GET /hooks/ lists the programs")


def big_body(srv, spec, size, want):
    """A GitHub-sized body: accepted (want 200) or refused by mod_fcgid
    before the program (want 500, no row, no program log line)."""
    eid = spec.new_id("big")
    body = spec.body(eid, spec.default_type, pad=size)
    r = srv.post(srv.url(spec.name), body,
                 spec.headers(srv, body, eid, spec.default_type), timeout=60)
    if want == 200:
        expect_accepted(r, "%d-byte body" % len(body))
        check_eq(len(cases.as_bytes(one_row(srv, spec, eid)["payload"])), len(body),
                 "stored payload length")
    else:
        check(r.status == want, "%d-byte body: expected %d from mod_fcgid, got %d %r"
              % (len(body), want, r.status, r.body[:100]))
        no_row(srv, spec, eid)
        check("exceeds MaxRequestLen" in srv.errorlog(),
              "no 'exceeds MaxRequestLen' in Apache's error log")


def vhost_basics(srv):
    """Settings reached the programs through FcgidInitialEnv only (no
    SetEnv anywhere): accepted, duplicate, forged."""
    for spec in (STRIPE, GITHUB):
        eid = spec.new_id("vh")
        r, body = spec.deliver(srv, eid)
        expect_accepted(r, spec.name)
        r = srv.post(srv.url(spec.name), body, spec.headers(srv, body, eid, spec.default_type))
        expect_duplicate(r, spec.name + " redelivery")
        check_eq(one_row(srv, spec, eid)["duplicates"], 1, spec.name + " duplicates")
        cases.case_forged(spec, srv)
    check(os.path.dirname(srv.db).startswith(srv.store_dir),
          "DB path not under the store directory")


def shm_lockers(db):
    """The processes holding a POSIX lock on the store's -shm file, from
    /proc/locks: SQLite keeps a read lock on it in every connection open
    in WAL mode.  What a user other than root reads where the programs'
    /proc/PID/fd are closed to it (harden.c makes them non-dumpable)."""
    try:
        ino = os.stat(db + "-shm").st_ino
    except OSError:
        return set()
    pids = set()
    with open("/proc/locks") as f:
        for line in f:
            w = line.split()
            if "->" in w:
                w.remove("->")
            if len(w) >= 6 and w[1] == "POSIX" and \
                    w[5].rsplit(":", 1)[-1] == str(ino):
                pids.add(int(w[4]))
    return pids


def store_holders(srv, program):
    """(program's processes in the server's group, those of them that
    have the store open)."""
    progs, holders = [], []
    lockers = None
    for pid in srv._group_pids(srv.proc.pid):
        if os.path.basename(program_of(pid)) != program:
            continue
        progs.append(pid)
        try:
            fds = os.listdir("/proc/%d/fd" % pid)
        except OSError:
            if lockers is None:
                lockers = shm_lockers(srv.db)
            if pid in lockers:
                holders.append(pid)
            continue
        for fd in fds:
            try:
                if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == srv.db:
                    holders.append(pid)
                    break
            except OSError:
                continue
    return progs, holders


def hub_round(srv, n):
    """n concurrent Stripe deliveries, each accepted and stored once."""
    ids = [STRIPE.new_id("hub") for _ in range(n)]
    rs = parallel(n, lambda i: STRIPE.deliver(srv, ids[i])[0])
    for eid, r in zip(ids, rs):
        check(not isinstance(r, Exception), "delivery %s: %r" % (eid, r))
        expect_accepted(r, "stripe " + eid)
        one_row(srv, STRIPE, eid)


def vhost_hub(srv):
    """IDEMHOOK_HUB=1 (vhost.conf): once bursts have made mod_fcgid run
    several stripe.fcgi processes, one of them records every delivery
    (the others pass their connections to it), so only it opens the
    store."""
    deadline = time.monotonic() + 90
    while True:
        hub_round(srv, 8)
        progs, holders = store_holders(srv, "stripe.fcgi")
        if len(progs) >= 3:
            break
        check(time.monotonic() < deadline,
              "mod_fcgid ran %d stripe.fcgi processes after 90 s of bursts" % len(progs))
    for _ in range(3):
        hub_round(srv, 16)
    progs, holders = store_holders(srv, "stripe.fcgi")
    check_eq(len(holders), 1, "stripe.fcgi processes (of %d) with the store open"
             % len(progs))


def vhost_hub_dies(srv):
    """The hub SIGKILLed: another process takes its place.  Deliveries it
    held get no 2xx (none is recorded by then, or it is a duplicate when
    sent again); every event, sent again until accepted as a provider
    does, ends up stored once, and one process again has the store open."""
    progs, holders = store_holders(srv, "stripe.fcgi")
    check_eq(len(holders), 1, "processes with the store open before the kill")
    os.kill(holders[0], signal.SIGKILL)
    ids = [STRIPE.new_id("hubkill") for _ in range(16)]
    left = list(ids)
    deadline = time.monotonic() + 60
    while left:
        rs = parallel(len(left), lambda i: STRIPE.deliver(srv, left[i])[0])
        left = [eid for eid, r in zip(left, rs)
                if isinstance(r, Exception) or r.status != 200]
        check(time.monotonic() < deadline, "%d of 16 deliveries still not "
              "accepted 60 s after the hub was killed" % len(left))
    for eid in ids:
        one_row(srv, STRIPE, eid)
    progs, after = store_holders(srv, "stripe.fcgi")
    check_eq(len(after), 1, "processes with the store open after the kill")
    check(after[0] != holders[0], "the killed hub still holds the store")


def vhost_log(srv):
    for spec in (STRIPE, GITHUB):
        cases.case_log_in_errorlog(spec, srv)
    cases.case_sanitizers(srv)


def run_cases(tap, bindir, servers):
    # --- shared hosting: fcgid.htaccess, SetEnv in the docroot .htaccess
    srv, s3 = setenv_server(servers, bindir, "fcgid", "shared")
    if tap.run("apache: mod_fcgid starts with the shipped fcgid.htaccess", srv.start):
        cases.run_common(tap, STRIPE, srv)
        stripe_cases(tap, srv, "apache: ")
        tap.run("apache: stripe: a secret from SetEnv (request parameter) accepted",
                setenv_secret, srv, s3)
        cases.run_common(tap, GITHUB, srv)
        tap.run("apache: github: 3 MB body accepted (host's FcgidMaxRequestLen 32 MiB)",
                big_body, srv, GITHUB, 3 << 20, 200)
        cases.run_final(tap, STRIPE, srv)
        cases.run_final(tap, GITHUB, srv)
        # after the log checks, which count requests per URL
        tap.run("apache: /hooks/stripe/ and /hooks/stripe.fcgi reach the program",
                program_urls, srv)
        tap.run("apache: .htaccess allows only the programs: settings, stores (-wal, -shm, "
                "any case), backups, swap and extensionless files -> 403",
                denied_files, srv)
        srv.stop()

    # --- a host that kept mod_fcgid's FcgidMaxRequestLen default
    dflt = servers.add(ApacheServer(bindir, mode="fcgid", providers=["github"],
                                    name="fcgid-default", max_request_len=None))
    if tap.run("apache: starts with mod_fcgid's default FcgidMaxRequestLen", dflt.start):
        tap.run("apache: github: 100 KB body accepted under the default limit",
                big_body, dflt, GITHUB, 100 * 1024, 200)
        tap.run("apache: github: 200 KB body -> 500 from mod_fcgid (default 131072), no row",
                big_body, dflt, GITHUB, 200 * 1024, 500)
        dflt.stop()

    # --- a server you control: vhost.conf
    vh = servers.add(ApacheServer(bindir, mode="vhost", providers=["stripe", "github"],
                                  name="vhost"))
    if tap.run("apache: starts with the shipped vhost.conf included", vh.start):
        tap.run("apache: vhost: settings by FcgidInitialEnv: accepted, duplicate, forged",
                vhost_basics, vh)
        tap.run("apache: vhost: github 3 MB body accepted (vhost.conf FcgidMaxRequestLen)",
                big_body, vh, GITHUB, 3 << 20, 200)
        tap.run("apache: vhost: DB directory 0700 and file 0600 when created",
                cases.case_db_modes, STRIPE, vh)
        if tap.run("apache: vhost: concurrent deliveries to several processes recorded "
                   "by one (IDEMHOOK_HUB)", vhost_hub, vh):
            tap.run("apache: vhost: the hub killed: another takes its place, every "
                    "event stored once", vhost_hub_dies, vh)
        tap.run("apache: vhost: log lines in the error log, no sanitizer reports",
                vhost_log, vh)
        vh.stop()


if __name__ == "__main__":
    sys.exit(suite_main("apache", run_cases, needs=("stripe.fcgi", "github.fcgi")))
