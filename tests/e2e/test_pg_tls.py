#!/usr/bin/env python3
"""`idemhook check` and TLS to a PostgreSQL store on another host (issue
24, item 11): anything below sslmode=verify-full to a host that is not
this machine is a problem; a Unix socket or localhost is fine.

The test runs its own cluster (tests/pg_cluster.sh) with TLS on a TCP port
of 127.0.0.1 and a throwaway certificate for the name db.test; the URIs
name the host db.test with hostaddr=127.0.0.1, which is how libpq reaches
a named host (and verifies its certificate against that name) without
DNS.  Before the fix, sslmode=require (encrypted, the server not
verified) was reported "ok".  Usage: test_pg_tls.py BINDIR
"""

import os
import shutil
import socket
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from harness import Tap, bin_dir, check  # noqa: E402

CLUSTER = os.path.join(harness.REPO, "tests", "pg_cluster.sh")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def make_cert(d):
    key, crt = os.path.join(d, "server.key"), os.path.join(d, "server.crt")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                    "-keyout", key, "-out", crt, "-days", "2", "-subj", "/CN=db.test",
                    "-addext", "subjectAltName=DNS:db.test"],
                   check=True, capture_output=True, timeout=60)
    os.chmod(d, 0o755)
    os.chmod(crt, 0o644)
    os.chmod(key, 0o600)
    if os.geteuid() == 0:
        import pwd
        pg = pwd.getpwnam("postgres")
        os.chown(key, pg.pw_uid, pg.pw_gid)
    return key, crt


def check_output(bindir, db):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IDEMHOOK_DB": db,
           "IDEMHOOK_STRIPE_SECRET": harness.default_secret("stripe"),
           "PGSSLROOTCERT": "/nonexistent"}   # only what the URI says
    for k in harness.SANITIZER_ENV:
        if k in os.environ:
            env[k] = os.environ[k]
    p = subprocess.run([os.path.join(bindir, "idemhook"), "check", "--provider", "stripe"],
                       env=env, capture_output=True, timeout=60)
    out = (p.stdout + p.stderr).decode(errors="replace")
    tls = [ln for ln in out.splitlines() if "TLS" in ln]
    print("# %s -> exit %d: %s" % (db.split("?", 1)[-1], p.returncode, tls))
    return p.returncode, out, tls


def cases(bindir, port, crt):
    remote = "postgresql://ih@db.test:%d/postgres?hostaddr=127.0.0.1" % port
    rc, out, tls = check_output(bindir, remote + "&sslmode=require")
    check(tls and tls[0].startswith("PROBLEM") and "verify-full" in tls[0],
          "sslmode=require to db.test not a problem: %s" % out[-800:])
    check(rc == 1, "idemhook check exited %d with sslmode=require" % rc)
    rc, out, tls = check_output(bindir, remote + "&sslmode=disable")
    check(tls and tls[0].startswith("PROBLEM") and "not encrypted" in tls[0],
          "no TLS to db.test not a problem: %s" % out[-800:])
    rc, out, tls = check_output(bindir, remote + "&sslmode=verify-ca&sslrootcert=" + crt)
    check(tls and tls[0].startswith("PROBLEM"),
          "sslmode=verify-ca to db.test not a problem: %s" % out[-800:])
    rc, out, tls = check_output(bindir, remote + "&sslmode=verify-full&sslrootcert=" + crt)
    check(tls and tls[0].startswith("ok") and "verify-full" in tls[0],
          "sslmode=verify-full to db.test reported: %s" % out[-800:])
    check(rc == 0, "idemhook check exited %d with verify-full: %s" % (rc, out[-800:]))
    local = "postgresql://ih@127.0.0.1:%d/postgres?sslmode=disable" % port
    rc, out, tls = check_output(bindir, local)
    check(tls and tls[0].startswith("ok"), "127.0.0.1 without TLS reported: %s" % out[-800:])
    rc, out, tls = check_output(bindir, "postgresql://ih@localhost:%d/postgres?sslmode="
                                "disable" % port)
    check(tls and tls[0].startswith("ok"), "localhost without TLS reported: %s" % out[-800:])


def main():
    tap = Tap("pg tls: ")
    bindir = bin_dir()
    d = tempfile.mkdtemp(prefix="ih-pgtls-")
    certs = tempfile.mkdtemp(prefix="ih-pgtls-cert-")
    port = free_port()
    try:
        key, crt = make_cert(certs)
        env = dict(os.environ, IH_PG_PORT=str(port),
                   IH_PG_OPTS="-c listen_addresses=127.0.0.1 -c ssl=on "
                   "-c ssl_cert_file=%s -c ssl_key_file=%s" % (crt, key))
        p = subprocess.run([CLUSTER, "start", d], env=env, capture_output=True, timeout=120)
        if not tap.run("a TLS cluster on 127.0.0.1", lambda: check(
                p.returncode == 0, p.stderr.decode(errors="replace")[-800:])):
            return tap.finish()
        tap.run("idemhook check: below sslmode=verify-full to another host is a problem; "
                "verify-full, 127.0.0.1 and localhost are fine", cases, bindir, port, crt)
    finally:
        subprocess.run([CLUSTER, "stop", d], capture_output=True, timeout=120)
        shutil.rmtree(certs, ignore_errors=True)
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
