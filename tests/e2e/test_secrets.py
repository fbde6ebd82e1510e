#!/usr/bin/env python3
"""Secrets: never logged, files owner-only, MACs compared in constant time.

Usage: test_secrets.py BINDIR   (or IH_BIN=BINDIR test_secrets.py)

1. Valid, forged, unsigned, stale and misconfigured requests to every
   provider (rotation secrets, a config file with a malformed secret line,
   a Standard Webhooks secret that is not base64, an over-long secret, a
   bad setting) and 'idemhook work --once' on the same settings.  Every
   secret and every signature or token value sent is then looked for in
   lighttpd's errorlog, lighttpd's and the receivers' stderr, and the
   command's output, as is each secret's hex and base64 forms.
2. Under umask 000 the receivers and 'idemhook init' still create the
   store directory 0700 and the store, -wal, -shm and -lock 0600.
3. Actions' environment, under lighttpd (FastCGI) and under Apache
   mod_cgid (plain CGI): every provider's action dumps its environment;
   the dump holds only PATH, HOME, LANG, LC_*, TZ, the IDEMHOOK_* event
   variables and the names in IDEMHOOK_ACTION_PASSENV (and what the shell
   adds: PWD), never a secret, a signature, an HTTP_* header or a CGI
   variable, also for a retry drained by another request that carries a
   header of its own.
4. Source check: in the providers' handlers and shared/verify.c, every
   memcmp/strcmp/strncmp/bcmp has a fixed public operand (a literal or a
   macro); MACs and tokens go through verify_equal(), which is
   CRYPTO_memcmp().
"""

import base64
import os
import re
import stat
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (ApacheServer, HarnessError, PROVIDERS, REPO,  # noqa: E402
                     Server, check, default_secret, sign_stripe, standard_secret,
                     suite_main)
import reliability as R  # noqa: E402

AUTH_HEADERS = ("stripe-signature", "x-hub-signature-256", "x-shopify-hmac-sha256",
                "asaas-access-token", "webhook-signature")


class Collector:
    def __init__(self):
        self.secrets = set()
        self.sigs = set()
        self.texts = []   # (where, text)

    def secret(self, s):
        if s:
            self.secrets.add(s)
        return s

    def sent(self, headers):
        for k, v in headers.items():
            if k.lower() in AUTH_HEADERS and v:
                self.sigs.add(v)
                for part in re.split(r"[ ,]", v):
                    part = part.split("=", 1)[-1]
                    if part.startswith("v1,"):
                        part = part[3:]
                    if len(part) >= 16:
                        self.sigs.add(part)

    def post(self, srv, d):
        self.sent(d.headers)
        return d.post(srv)

    def server_output(self, srv):
        self.texts.append(("%s errorlog" % srv.name, srv.errorlog()))
        self.texts.append(("%s stderr" % srv.name, srv.stderr_text()))

    def forms(self, s):
        """s and the forms a careless log line could show it in."""
        out = {s}
        b = s.encode()
        out.add(b.hex())
        out.add(base64.b64encode(b).decode().rstrip("="))
        if s.startswith("whsec_"):
            out.add(s[6:])
        return {f for f in out if len(f) >= 8}


def traffic(srv, col, tap):
    for p in srv.providers:
        col.secret(srv.secrets[p])
        for k, v in srv.provider_env.get(p, {}).items():
            col.secret(v)
        for _ in range(2):
            d = R.delivery(srv, p, tag="ok")
            r = col.post(srv, d)
            check(r.status == 200, "%s valid delivery: %d" % (p, r.status))
            col.post(srv, d)  # duplicate
        # Forged: another secret.
        other = standard_secret() if p == "standard" else default_secret(p)
        eid = R.new_eid(p, "forged")
        body = R.body_for(p, eid)
        h = R.sign(srv, p, eid, body, secret=other)
        col.sent(h)
        r = srv.post("/hooks/" + p, body, h)
        check(r.status == 401, "%s forged: %d" % (p, r.status))
        # The secret itself sent as the signature or token of another provider.
        q = PROVIDERS[(PROVIDERS.index(p) + 1) % len(PROVIDERS)]
        if q in srv.providers:
            eid = R.new_eid(q, "leak")
            body = R.body_for(q, eid)
            h = R.sign(srv, q, eid, body)
            for k in list(h):
                if k.lower() in AUTH_HEADERS:
                    h[k] = srv.secrets[p]
            col.sent(h)
            r = srv.post("/hooks/" + q, body, h)
            check(r.status == 401, "%s with %s's secret as signature: %d" % (q, p, r.status))
    # Stale Stripe timestamp, signed correctly.
    if "stripe" in srv.providers:
        eid = R.new_eid("stripe", "stale")
        body = R.body_for("stripe", eid)
        h = {"Stripe-Signature": sign_stripe(srv.secrets["stripe"], body,
                                             int(time.time()) - 3600)}
        col.sent(h)
        r = srv.post("/hooks/stripe", body, h)
        check(r.status == 401, "stale stripe: %d" % r.status)


def no_leaks(col):
    bad = []
    for where, text in col.texts:
        for s in col.secrets:
            for f in col.forms(s):
                if f in text:
                    bad.append("secret %s...(%d bytes) in %s" % (s[:4], len(s), where))
        for s in col.sigs:
            if s in text:
                bad.append("signature value %s... in %s" % (s[:6], where))
    check(not bad, "; ".join(sorted(set(bad))[:8]))
    check(col.texts and any(t for _, t in col.texts), "no output collected")


def run_logs(bindir, servers, col, tap):
    # 1. Every provider, a rotation secret each.
    penv = {}
    for p in PROVIDERS:
        penv[p] = {R.srv_secret_env(p) + "_2": (standard_secret() if p == "standard"
                                                 else default_secret(p))}
    srv = servers.add(Server(bindir, name="secrets-main", provider_env=penv))
    srv.start()
    traffic(srv, col, tap)
    R.work_once(bindir, srv)
    col.server_output(srv)
    srv.cleanup()

    # 2. Misconfigurations.
    tmp = srv.tmp
    bad_cfg = os.path.join(os.path.dirname(tmp), "ih-secrets-%d.env" % os.getpid())
    fsecret = col.secret("whsec_" + os.urandom(16).hex())
    fsecret2 = col.secret("whsec_" + os.urandom(16).hex())
    with open(bad_cfg, "w") as f:
        f.write("# a secret pasted without '='\nIDEMHOOK_STRIPE_SECRET %s\n"
                "IDEMHOOK_STRIPE_SECRET_2=%s\x01\n" % (fsecret, fsecret2))
    os.chmod(bad_cfg, 0o600)
    try:
        cases = [
            ("bad-setting", {"env": {"IDEMHOOK_TOLERANCE": "abc"}}),
            ("bad-config-file", {"env": {"IDEMHOOK_CONFIG": bad_cfg}}),
            ("standard-not-base64", {"providers": ["standard"],
                                     "secrets": {"standard": "whsec_%%not*base64!" +
                                                 os.urandom(8).hex()}}),
            ("overlong-secret", {"providers": ["stripe", "github"],
                                 "secrets": {"stripe": "whsec_" + "s" * 5000,
                                             "github": os.urandom(40).hex() * 60}}),
        ]
        for name, kw in cases:
            s = servers.add(Server(bindir, name=name, **kw))
            for p, v in s.secrets.items():
                col.secret(v)
            try:
                s.start()
            except HarnessError:
                col.server_output(s)
                continue
            for p in s.providers:
                try:
                    d = R.delivery(s, p, tag="mis")
                except ValueError:  # a secret our signer cannot use either
                    eid = R.new_eid(p, "mis")
                    body = R.body_for(p, eid)
                    d = R.Delivery(p, eid, eid, body, R.sign(s, p, eid, body,
                                                             secret=standard_secret()))
                r = col.post(s, d)
                check(not (200 <= r.status < 300) or name == "overlong-secret",
                      "%s: %s accepted while misconfigured" % (name, p))
            # The command on the same settings.
            out = ""
            try:
                out = R.work_once(bindir, s)
            except AssertionError as e:
                out = str(e)
            col.texts.append(("%s idemhook work" % name, out))
            col.server_output(s)
            s.cleanup()
        env = {"PATH": os.environ.get("PATH", ""), "IDEMHOOK_CONFIG": bad_cfg,
               "IDEMHOOK_DB": os.path.join(tmp + "-cli", "x.db")}
        r = subprocess.run([os.path.join(bindir, "idemhook"), "init"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        col.texts.append(("idemhook init with a bad config file",
                          r.stdout.decode(errors="replace")))
    finally:
        os.unlink(bad_cfg)
    no_leaks(col)
    tap.diag("secrets: %d secrets (and their hex/base64 forms) and %d signature values "
             "looked for in %d outputs" % (len(col.secrets), len(col.sigs), len(col.texts)))


# ------------------------------------------------------------ modes

def modes_of(db):
    d = os.path.dirname(db)
    out = {"dir": stat.S_IMODE(os.stat(d).st_mode)}
    for suf in ("", "-wal", "-shm", "-lock"):
        if os.path.exists(db + suf):
            out["db" + suf] = stat.S_IMODE(os.stat(db + suf).st_mode)
    return out


def check_modes(m, what):
    check(m.get("dir") == 0o700, "%s: directory mode %04o, expected 0700" % (what, m.get("dir")))
    for k in ("db", "db-wal", "db-shm", "db-lock"):
        check(k in m, "%s: no %s file while the store is open" % (what, k))
        check(m[k] == 0o600, "%s: %s mode %04o, expected 0600" % (what, k, m[k]))


def run_modes(bindir, servers, tap):
    old = os.umask(0)
    try:
        srv = servers.add(Server(bindir, providers=["stripe", "asaas"], name="umask0"))
        srv.db = os.path.join(srv.tmp, "deep", "er", "events.db")
        srv.start()
        for p in srv.providers:
            r = R.delivery(srv, p).post(srv)
            check(r.status == 200, "%s delivery: %d" % (p, r.status))
        m = modes_of(srv.db)  # receivers still running: -wal and -shm exist
        check_modes(m, "receivers under umask 000")
        parent = stat.S_IMODE(os.stat(os.path.dirname(os.path.dirname(srv.db))).st_mode)
        check(parent == 0o700, "created parent directory mode %04o, expected 0700" % parent)
        srv.cleanup()
        db = os.path.join(srv.tmp + "-cli", "store", "events.db")
        try:
            env = {"PATH": os.environ.get("PATH", ""), "IDEMHOOK_DB": db}
            r = subprocess.run([os.path.join(bindir, "idemhook"), "init"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
            check(r.returncode == 0, "idemhook init: %s" % r.stdout.decode(errors="replace"))
            m = modes_of(db)
            check(m.get("dir") == 0o700 and m.get("db") == 0o600,
                  "idemhook init under umask 000: %r" % {k: "%04o" % v for k, v in m.items()})
            for k in ("db-wal", "db-shm", "db-lock"):
                if k in m:
                    check(m[k] == 0o600, "idemhook init: %s mode %04o" % (k, m[k]))
        finally:
            import shutil
            shutil.rmtree(srv.tmp + "-cli", ignore_errors=True)
    finally:
        os.umask(old)


# ------------------------------------------------------------ actions' environment

# What an action may see: the event's variables, the locale, time zone,
# PATH and HOME, the pass-through names, and what /bin/sh itself sets.
EVENT_VARS = {"IDEMHOOK_PROVIDER", "IDEMHOOK_ACCOUNT", "IDEMHOOK_EVENT_ID",
              "IDEMHOOK_EVENT_TYPE",
              "IDEMHOOK_ATTEMPT", "IDEMHOOK_IDEMPOTENCY_KEY"}
BASE_VARS = {"PATH", "HOME", "LANG", "TZ", "PWD", "OLDPWD", "SHLVL", "_"}
PASS_NAME = "IH_ACTION_PASS"
HIDDEN_NAME = "IH_ACTION_HIDDEN"
PROBE_HEADER = "X-Probe-Header"

# Dumps its environment (NUL-separated), and fails the first attempt of a
# test.retry event, so that a later request drains its retry.  The dump
# appears under its name only once written whole (a rename), so that the
# test never reads a file the shell has created but env not yet filled.
DUMP_CMD = ('* f="%(dir)s/env.$IDEMHOOK_PROVIDER.$IDEMHOOK_EVENT_ID.'
            '$IDEMHOOK_ATTEMPT"; env -0 > "$f.part" && mv "$f.part" "$f"; '
            '[ "$IDEMHOOK_EVENT_TYPE" != test.retry ] || '
            '[ "$IDEMHOOK_ATTEMPT" -ge 2 ]')


def action_settings(dump_dir):
    return {"IDEMHOOK_ACTION": DUMP_CMD % {"dir": dump_dir},
            "IDEMHOOK_ACTION_PASSENV": "%s, LC_ALL" % PASS_NAME,
            "IDEMHOOK_RETRY_BASE_MS": "100"}


def read_dumps(dump_dir):
    """{file name: {name: value}} of the actions' environment dumps."""
    out = {}
    for fn in os.listdir(dump_dir):
        if not fn.startswith("env.") or fn.endswith(".part"):
            continue
        with open(os.path.join(dump_dir, fn), "rb") as f:
            data = f.read()
        env = {}
        for item in data.split(b"\0"):
            k, sep, v = item.partition(b"=")
            if sep:
                env[k.decode(errors="replace")] = v.decode(errors="replace")
        out[fn] = env
    return out


def wait_dumps(dump_dir, names, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        have = set(os.listdir(dump_dir))
        missing = [n for n in names if n not in have]
        if not missing or time.monotonic() > deadline:
            return missing
        time.sleep(0.1)


def check_action_env(srv, col, dump_dir, pass_value, hidden_value, what):
    """Delivers to every provider, then a test.retry Stripe event whose
    first attempt fails; another delivery carrying PROBE_HEADER drains the
    retry.  Checks every dump."""
    want = []
    for p in srv.providers:
        d = R.delivery(srv, p, tag="env")
        r = col.post(srv, d)
        check(r.status == 200, "%s: %s delivery: %d" % (what, p, r.status))
        want.append("env.%s.%s.1" % (p, d.db_id))
    retry = R.delivery(srv, "stripe", etype="test.retry", tag="retry")
    r = col.post(srv, retry)
    check(r.status == 200, "%s: test.retry delivery: %d" % (what, r.status))
    missing = wait_dumps(dump_dir, want + ["env.stripe.%s.1" % retry.db_id])
    check(not missing, "%s: no action ran for %r" % (what, missing))
    time.sleep(0.5)  # the retry's backoff (RETRY_BASE_MS=100) has passed
    probe = R.delivery(srv, "stripe", tag="probe")
    probe.headers[PROBE_HEADER] = "probe-" + os.urandom(8).hex()
    # httpoxy: under CGI a client's Proxy header becomes HTTP_PROXY.
    probe.headers["Proxy"] = "http://127.0.0.1:9/" + os.urandom(4).hex()
    r = col.post(srv, probe)
    check(r.status == 200, "%s: probe delivery: %d" % (what, r.status))
    want += ["env.stripe.%s.1" % probe.db_id, "env.stripe.%s.2" % retry.db_id]
    missing = wait_dumps(dump_dir, want)
    check(not missing, "%s: no action ran for %r (the retry is drained by the "
          "probe's request)" % (what, missing))
    dumps = read_dumps(dump_dir)
    bad = []
    for fn, env in sorted(dumps.items()):
        col.texts.append(("%s action environment %s" % (what, fn),
                          "\n".join("%s=%s" % kv for kv in env.items())))
        extra = sorted(k for k in env if k not in EVENT_VARS | BASE_VARS | {PASS_NAME}
                       and not k.startswith("LC_"))
        if extra:
            bad.append("%s: %s" % (fn, ", ".join(extra)))
        if set(env) & EVENT_VARS != EVENT_VARS:
            bad.append("%s: event variables missing: %s"
                       % (fn, sorted(EVENT_VARS - set(env))))
        if env.get(PASS_NAME) != pass_value:
            bad.append("%s: %s not passed through (%r)" % (fn, PASS_NAME,
                                                            env.get(PASS_NAME)))
        if any(hidden_value in v for v in env.values()):
            bad.append("%s: the value of %s, not listed, was passed" % (fn, HIDDEN_NAME))
        if any(probe.headers[PROBE_HEADER] in v or probe.headers["Proxy"] in v
               for v in env.values()):
            bad.append("%s: another request's header value" % fn)
        if not env.get("PATH"):
            bad.append("%s: no PATH" % fn)
    check(not bad, "%s: variables an action must not get: %s" % (what, "; ".join(bad[:6])))


def env_seen(srv, col, dump_dir, pass_value, hidden, label):
    """Starts srv (its secrets looked for), checks what its actions saw,
    collects its output and removes it."""
    for p in srv.providers:
        col.secret(srv.secrets[p])
    srv.start()
    check_action_env(srv, col, dump_dir, pass_value, hidden, label)
    col.server_output(srv)
    srv.cleanup()


def run_action_env(bindir, servers, col, tap):
    pass_value = "pass-" + os.urandom(6).hex()
    hidden = "hidden-" + os.urandom(6).hex()
    # lighttpd: the receivers' environment holds every secret.
    srv = servers.add(Server(bindir, name="secrets-actions"))
    dump_dir = os.path.join(srv.tmp, "dumps")
    os.makedirs(dump_dir)
    srv.env.update(action_settings(dump_dir))
    srv.env.update({PASS_NAME: pass_value, HIDDEN_NAME: hidden})
    env_seen(srv, col, dump_dir, pass_value, hidden, "lighttpd")
    # Plain CGI: the environment also holds the request's headers and the
    # CGI variables, and a secret given by SetEnv.
    s3 = col.secret("whsec_" + os.urandom(16).hex())
    cgi = servers.add(ApacheServer(bindir, mode="cgi", providers=["stripe", "github"],
                                   name="secrets-actions-cgi",
                                   setenv={"IDEMHOOK_STRIPE_SECRET_3": s3,
                                           PASS_NAME: pass_value, HIDDEN_NAME: hidden}))
    dump_dir = cgi.store_dir
    cgi.env.update(action_settings(dump_dir))
    env_seen(cgi, col, dump_dir, pass_value, hidden, "cgi")
    no_leaks(col)


def passenv_refused(bindir):
    """A pass-through list naming a secret, a header or a CGI variable is
    a configuration error."""
    for bad in ("IDEMHOOK_STRIPE_SECRET", "HTTP_PROXY", "HTTP_AUTHORIZATION",
                "REQUEST_METHOD", "CONTENT_LENGTH", "bad-name"):
        env = {"PATH": os.environ.get("PATH", ""), "IDEMHOOK_DB": "/nonexistent/x.db",
               "IDEMHOOK_STRIPE_SECRET": "whsec_x", "IDEMHOOK_ACTION_PASSENV": "LANG " + bad}
        r = subprocess.run([os.path.join(bindir, "idemhook"), "check", "--provider", "stripe"],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=60)
        out = r.stdout.decode(errors="replace")
        check(r.returncode != 0 and "IDEMHOOK_ACTION_PASSENV" in out,
              "IDEMHOOK_ACTION_PASSENV naming %s accepted: %s" % (bad, out))


# ------------------------------------------------------------ source

CMP = re.compile(r"\b(memcmp|strcmp|strncmp|bcmp|strcasecmp|strncasecmp)\s*\(([^;]*)")
PUBLIC = re.compile(r'"|\b[A-Z][A-Z0-9_]{2,}\b')


def constant_time_source():
    files = [os.path.join(REPO, "handlers", p + ".c") for p in PROVIDERS]
    files.append(os.path.join(REPO, "shared", "verify.c"))
    bad = []
    for fn in files:
        with open(fn) as f:
            text = f.read()
        # Join continuation lines so a call's operands are on one line.
        flat = re.sub(r"\n\s+", " ", text)
        for m in CMP.finditer(flat):
            args = m.group(2)
            if not PUBLIC.search(args):
                bad.append("%s: %s(%s" % (os.path.relpath(fn, REPO), m.group(1), args[:60]))
    check(not bad, "comparisons without a fixed public operand (use verify_equal): %r" % bad)
    with open(os.path.join(REPO, "shared", "verify.c")) as f:
        v = re.sub(r"\n\s+", " ", f.read())
    body = re.search(r"\nverify_equal\([^)]*\)\s*\{(.*?)\n\}", v, re.S)
    check(body and "CRYPTO_memcmp" in body.group(1),
          "verify_equal() does not use CRYPTO_memcmp")
    body = re.search(r"\nverify_body_mac\([^)]*\)\s*\{(.*?)\n\}", v, re.S)
    check(body and "verify_any(" in body.group(1),
          "verify_body_mac() does not compare through verify_any()")
    for p in PROVIDERS:
        with open(os.path.join(REPO, "handlers", p + ".c")) as f:
            t = f.read()
        check(re.search(r"\bverify_(equal|hmac\w*|any\w*|macs?\w*|body_mac)\s*\(", t),
              "handlers/%s.c compares its MAC or token with no verify_* call" % p)


def run_cases(tap, bindir, servers):
    col = Collector()
    tap.run("secrets: no secret or signature in any log, stderr or command output "
            "(valid, forged, stale, misconfigured)", run_logs, bindir, servers, col, tap)
    tap.run("secrets: under umask 000, store dir 0700 and store, -wal, -shm, -lock 0600 "
            "(receivers and idemhook init)", run_modes, bindir, servers, tap)
    tap.run("secrets: actions get only PATH, HOME, LANG, LC_*, TZ, IDEMHOOK_* event "
            "variables and IDEMHOOK_ACTION_PASSENV names; no secret, HTTP_* or CGI "
            "variable (lighttpd and plain CGI, also a drained retry)",
            run_action_env, bindir, servers, Collector(), tap)
    tap.run("secrets: IDEMHOOK_ACTION_PASSENV naming a secret, a header or a CGI "
            "variable refused", passenv_refused, bindir)
    tap.run("secrets: MACs and tokens compared only through verify_equal "
            "(CRYPTO_memcmp)", constant_time_source)


if __name__ == "__main__":
    sys.exit(suite_main("secrets", run_cases))
