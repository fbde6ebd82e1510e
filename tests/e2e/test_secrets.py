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
3. Source check: in the providers' handlers and shared/verify.c, every
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

from harness import (PROVIDERS, REPO, HarnessError, Server, Servers, Tap,  # noqa: E402
                     bin_dir, check, default_secret, install_signal_cleanup,
                     sign_stripe, standard_secret)
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


def main():
    tap = Tap()
    try:
        bindir = bin_dir()
    except HarnessError as e:
        tap.not_ok("secrets: setup", e)
        return tap.finish()
    servers = Servers()
    install_signal_cleanup(servers)
    col = Collector()
    with servers:
        tap.run("secrets: no secret or signature in any log, stderr or command output "
                "(valid, forged, stale, misconfigured)", run_logs, bindir, servers, col, tap)
        tap.run("secrets: under umask 000, store dir 0700 and store, -wal, -shm, -lock 0600 "
                "(receivers and idemhook init)", run_modes, bindir, servers, tap)
        tap.run("secrets: MACs and tokens compared only through verify_equal "
                "(CRYPTO_memcmp)", constant_time_source)
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
