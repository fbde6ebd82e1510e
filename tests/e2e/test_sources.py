#!/usr/bin/env python3
"""Where the settings come from, and that the programs and the command
use one store (issue 25, items 1 and 2).

1. A program configured by its start-up environment never reads the
   settings file's fixed places (~/idemhook/idemhook.env,
   /etc/idemhook/idemhook.env): with the README's /etc/idemhook/idemhook.env
   (owned by www-data) present, a program run as another user still
   answers 200, and a root-owned file's actions never run under an
   instance configured elsewhere.  With no setting at all (suEXEC) the
   file is found and the log names it.
2. `idemhook console-password` needs no settings; `idemhook list` as root
   facing www-data's file says how to run it instead.
3. IDEMHOOK_DB in the start-up environment and, differently, in the
   settings file: refused with 500 bad_config, nothing written to either.
4. The shipped lighttpd hooks files pass only IDEMHOOK_CONFIG: switching
   IDEMHOOK_DB in the file moves the receivers (without a restart) to the
   store the idemhook command reads.
5. Global options after the command's name: `idemhook copy --db OLD ...`.

The fixed places are the host's own paths, so 1 and 2 run in a private
mount and PID namespace (test_recipes.Namespace) whose /etc and /root are
overlays: nothing of the host is read or written.

Usage: test_sources.py BINDIR   (or IH_BIN=BINDIR ...)
"""

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (HarnessError, Server, Tap, bin_dir, check,  # noqa: E402
                     recv_all, sign_stripe, staged_programs)
from test_recipes import Namespace  # noqa: E402

WHY = "a mount namespace with overlays on /etc and /root, runuser"


def body_for(tag):
    eid = "evt_src_%s_%s" % (tag, os.urandom(4).hex())
    return eid, json.dumps({"id": eid, "object": "event", "type": "x.y"}).encode()


def cgi(ns, bindir, user, env, body, secret):
    """One CGI delivery to stripe.fcgi inside ns, as user, with exactly
    env (plus the CGI variables)."""
    full = {"GATEWAY_INTERFACE": "CGI/1.1", "REQUEST_METHOD": "POST",
            "CONTENT_LENGTH": str(len(body)), "SCRIPT_NAME": "/hooks/stripe",
            "PATH": "/usr/bin:/bin",
            "HTTP_STRIPE_SIGNATURE": sign_stripe(secret, body)}
    full.update(env)
    cmd = ["nsenter", "-t", str(ns.init), "-m", "-p", "--", "/usr/sbin/runuser", "-u", user,
           "--", "env", "-i"] + ["%s=%s" % kv for kv in full.items()] + \
        [os.path.join(os.path.abspath(bindir), "stripe.fcgi")]
    return subprocess.run(cmd, input=body, capture_output=True, timeout=60)


def command(ns, bindir, user, args, env=None, stdin=b""):
    cmd = ["nsenter", "-t", str(ns.init), "-m", "-p", "--", "/usr/sbin/runuser", "-u", user,
           "--", "env", "-i", "PATH=/usr/bin:/bin"] + \
        ["%s=%s" % kv for kv in (env or {}).items()] + \
        [os.path.join(os.path.abspath(bindir), "idemhook")] + list(args)
    return subprocess.run(cmd, input=stdin, capture_output=True, timeout=60)


def write_fixed(ns, text, owner):
    """The README's /etc/idemhook/idemhook.env, in the namespace only."""
    ns.write("/etc/idemhook/idemhook.env", text)
    pw = pwd.getpwnam(owner)
    os.chown(ns.path("/etc/idemhook/idemhook.env"), pw.pw_uid, pw.pw_gid)
    os.chmod(ns.path("/etc/idemhook/idemhook.env"), 0o600)


def fixed_places_only_unconfigured(bindir):
    ns = Namespace("sources")
    tmp = tempfile.mkdtemp(prefix="ih-e2e-sources-")
    os.chmod(tmp, 0o777)
    try:
        secret = "whsec_" + os.urandom(8).hex()
        marker = os.path.join(tmp, "production-action-ran")
        # As the README installs it: www-data's, mode 0600.
        write_fixed(ns, "IDEMHOOK_DB=/var/lib/idemhook/idemhook.db\n"
                    "IDEMHOOK_STRIPE_SECRET=whsec_production\n", "www-data")
        db = os.path.join(tmp, "nobody.db")
        eid, body = body_for("env")
        r = cgi(ns, bindir, "nobody", {"IDEMHOOK_DB": db, "IDEMHOOK_STRIPE_SECRET": secret},
                body, secret)
        check(b"accepted" in r.stdout, "configured by its environment, run as nobody beside "
              "www-data's /etc/idemhook/idemhook.env: %r %r" % (r.stdout[:200], r.stderr[-300:]))
        # A root-owned file with actions: an instance configured by its
        # environment (a staging one) must not run production's actions.
        write_fixed(ns, "IDEMHOOK_STRIPE_ACTION=* touch %s\n"
                    "IDEMHOOK_STRIPE_SECRET=whsec_production\n" % marker, "root")
        eid, body = body_for("act")
        r = cgi(ns, bindir, "root", {"IDEMHOOK_DB": os.path.join(tmp, "root.db"),
                                     "IDEMHOOK_STRIPE_SECRET": secret}, body, secret)
        check(b"accepted" in r.stdout, "root instance: %r %r" % (r.stdout[:200], r.stderr[-300:]))
        check(not os.path.exists(marker), "an action of the unnamed /etc/idemhook file ran")
        check("/etc/idemhook/idemhook.env is not read" in r.stderr.decode(errors="replace"),
              "the log does not say the fixed place's file was left unread: %r" % r.stderr[-400:])
        # suEXEC: nothing at start-up, so the fixed place is read, and said.
        write_fixed(ns, "IDEMHOOK_DB=%s\nIDEMHOOK_STRIPE_SECRET=%s\n"
                    % (os.path.join(tmp, "suexec.db"), secret), "root")
        eid, body = body_for("suexec")
        r = cgi(ns, bindir, "root", {}, body, secret)
        err = r.stderr.decode(errors="replace")
        check(b"accepted" in r.stdout, "no settings at start-up: %r %r" % (r.stdout[:200], err))
        check("settings_file=/etc/idemhook/idemhook.env (found in its fixed place" in err,
              "the log does not name the file found: %r" % err[-400:])
        # The command: console-password needs no settings; list as root
        # facing www-data's file says what to run.
        write_fixed(ns, "IDEMHOOK_STRIPE_SECRET=whsec_production\n", "www-data")
        r = command(ns, bindir, "root", ["console-password"], stdin=b"pw\n")
        check(r.returncode == 0 and b"IDEMHOOK_CONSOLE_PASSWORD_HASH=" in r.stdout,
              "console-password as root beside www-data's file: exit %d %r"
              % (r.returncode, r.stderr[-300:]))
        r = command(ns, bindir, "root", ["list"])
        err = r.stderr.decode(errors="replace")
        check(r.returncode == 2 and "runuser -u www-data --" in err and " list" in err,
              "list as root: exit %d, no next step: %r" % (r.returncode, err[-400:]))
    finally:
        ns.close()
        shutil.rmtree(tmp, ignore_errors=True)


def store_named_twice(bindir):
    """Environment and file name different stores: refused, no store
    made, one line naming both."""
    tmp = tempfile.mkdtemp(prefix="ih-e2e-twice-")
    try:
        secret = "whsec_" + os.urandom(8).hex()
        a, b = os.path.join(tmp, "a", "events.db"), os.path.join(tmp, "b", "events.db")
        conf = os.path.join(tmp, "idemhook.env")
        with open(conf, "w") as f:
            f.write("IDEMHOOK_DB=%s\nIDEMHOOK_STRIPE_SECRET=%s\n" % (b, secret))
        os.chmod(conf, 0o600)
        eid, body = body_for("twice")
        env = {"GATEWAY_INTERFACE": "CGI/1.1", "REQUEST_METHOD": "POST",
               "CONTENT_LENGTH": str(len(body)), "SCRIPT_NAME": "/hooks/stripe",
               "PATH": "/usr/bin:/bin", "HTTP_STRIPE_SIGNATURE": sign_stripe(secret, body),
               "IDEMHOOK_DB": a, "IDEMHOOK_CONFIG": conf}
        r = subprocess.run([os.path.join(bindir, "stripe.fcgi")], input=body, env=env,
                           capture_output=True, timeout=60)
        out, err = r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
        check("500" in out.split("\n", 1)[0] and "bad_config" in out,
              "store named twice: expected 500 bad_config, got %r" % out[:200])
        check("IDEMHOOK_DB_is_%s_in_the_start-up_environment_but_%s" % (a, b) in err,
              "no line naming both stores: %r" % err[-400:])
        check(not os.path.exists(a) and not os.path.exists(b), "a store was created")
        r = subprocess.run([os.path.join(bindir, "idemhook"), "list"], capture_output=True,
                           text=True, timeout=60,
                           env={"PATH": "/usr/bin:/bin", "IDEMHOOK_DB": a,
                                "IDEMHOOK_CONFIG": conf})
        check(r.returncode in (1, 2) and "IDEMHOOK_DB is" in r.stderr,
              "the command with the same split: exit %d %r" % (r.returncode, r.stderr[-300:]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def switch_store_in_file(bindir):
    """The README's PostgreSQL step, on SQLite: IDEMHOOK_DB changed in
    the settings file moves the shipped lighttpd receivers at the next
    request, to the store the command reads from the same file."""
    tmp = tempfile.mkdtemp(prefix="ih-e2e-switch-")
    os.chmod(tmp, 0o755)
    try:
        secret = "whsec_" + os.urandom(8).hex()
        old, new = os.path.join(tmp, "old", "events.db"), os.path.join(tmp, "new", "events.db")
        conf = os.path.join(tmp, "idemhook.env")

        def write(db):
            with open(conf + ".tmp", "w") as f:
                f.write("IDEMHOOK_DB=%s\nIDEMHOOK_STRIPE_SECRET=%s\n" % (db, secret))
            os.chmod(conf + ".tmp", 0o600)
            os.rename(conf + ".tmp", conf)

        write(old)
        srv = Server(bindir, providers=["stripe"], secrets={"stripe": ""},
                     env={"IDEMHOOK_CONFIG": conf}, name="switch")
        with srv:
            srv.start()
            e1, body = body_for("old")
            r = srv.post("/hooks/stripe", body, {"Stripe-Signature": sign_stripe(secret, body)})
            check(r.status == 200, "first delivery: %d %r" % (r.status, r.body[:200]))
            write(new)
            e2, body = body_for("new")
            r = srv.post("/hooks/stripe", body, {"Stripe-Signature": sign_stripe(secret, body)})
            check(r.status == 200, "after the switch: %d %r" % (r.status, r.body[:200]))
            log = open(srv.errorlog_path).read()
        r = subprocess.run([os.path.join(bindir, "idemhook"), "--config", conf, "list",
                            "--json"], capture_output=True, text=True, timeout=60,
                           env={"PATH": "/usr/bin:/bin"})
        check(r.returncode == 0, "list: %d %r" % (r.returncode, r.stderr[-300:]))
        check(e2 in r.stdout, "the event after the switch is not in the store the command "
              "reads (the receivers kept the old store): %r" % r.stdout[-300:])
        check("store=%s" % new in log, "the receivers did not log the store they moved to: %r"
              % log[-600:])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def globals_after_command(bindir):
    """`idemhook copy --db OLD --to URI` parses (and --db twice is a
    usage error), as `idemhook --db OLD copy --to URI` does."""
    tmp = tempfile.mkdtemp(prefix="ih-e2e-globals-")
    try:
        db = os.path.join(tmp, "events.db")
        # A decoy in the environment: a command that ignored the --db
        # after its name would use it, never the host's default store.
        env = {"PATH": "/usr/bin:/bin", "IDEMHOOK_CONFIG": "/dev/null",
               "IDEMHOOK_DB": os.path.join(tmp, "decoy.db")}
        exe = os.path.join(bindir, "idemhook")
        r = subprocess.run([exe, "init", "--db", db], capture_output=True, text=True,
                           env=env, timeout=60)
        check(r.returncode == 0 and os.path.exists(db),
              "init --db after the command: %d %r" % (r.returncode, r.stderr[-300:]))
        r = subprocess.run([exe, "list", "--db=%s" % db, "--json"], capture_output=True,
                           text=True, env=env, timeout=60)
        check(r.returncode == 0, "list --db= after the command: %d %r"
              % (r.returncode, r.stderr[-300:]))
        r = subprocess.run([exe, "--db", db, "list", "--db", db], capture_output=True,
                           text=True, env=env, timeout=60)
        check(r.returncode == 2 and "--db given twice" in r.stderr,
              "--db twice: %d %r" % (r.returncode, r.stderr[-300:]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def fcgi_request(port, params, body, timeout=20):
    """One FastCGI request over TCP, as anyone who reaches the port can
    send it; returns the program's stdout."""
    import socket
    import struct

    def rec(t, content):
        return struct.pack(">BBHHBx", 1, t, 1, len(content), 0) + content

    def nv(k, v):
        k, v = k.encode(), v.encode()
        ln = lambda n: bytes([n]) if n < 128 else struct.pack(">I", n | 0x80000000)
        return ln(len(k)) + ln(len(v)) + k + v

    pairs = b"".join(nv(k, v) for k, v in params.items())
    msg = (rec(1, struct.pack(">HB5x", 1, 0)) + rec(4, pairs) + rec(4, b"")
           + rec(5, body) + rec(5, b""))
    out = b""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as c:
        c.sendall(msg)
        buf = recv_all(c)
        while len(buf) >= 8:
            _, t, _, clen, plen = struct.unpack(">BBHHB", buf[:7])
            if t == 6:
                out += buf[8:8 + clen]
            if t == 3:
                break
            buf = buf[8 + clen + plen:]
    return out


def tcp_socket(bindir):
    """A program with no settings at start-up on a TCP socket takes no
    secret from a request parameter (anyone who reaches the port could
    sign their own events), says so at start, and `idemhook check`, as
    root, reports it."""
    from harness import free_port
    ns = Namespace("tcp")
    tmp = tempfile.mkdtemp(prefix="ih-e2e-tcp-")
    os.chmod(tmp, 0o777)
    try:
        port = free_port()
        errlog = os.path.join(tmp, "stderr.log")
        # No setting at all at start-up, as mod_fcgid under .htaccess; the
        # fixed place (in the namespace) names only the store.
        write_fixed(ns, "IDEMHOOK_DB=%s\n" % os.path.join(tmp, "events.db"), "nobody")
        # -n: spawn-fcgi keeps the program's stderr (its start-up line).
        ns.run("env -i PATH=/usr/bin:/bin spawn-fcgi -n -a 127.0.0.1 -p %d -u nobody "
               "-g nogroup -- %s </dev/null >/dev/null 2>%s &"
               % (port, os.path.join(os.path.abspath(bindir), "stripe.fcgi"), errlog), cwd="/")
        forged = "whsec_" + os.urandom(8).hex()
        eid, body = body_for("tcp")
        params = {"GATEWAY_INTERFACE": "CGI/1.1", "REQUEST_METHOD": "POST",
                  "CONTENT_LENGTH": str(len(body)), "SCRIPT_NAME": "/hooks/stripe",
                  "REMOTE_ADDR": "127.0.0.1", "IDEMHOOK_STRIPE_SECRET": forged,
                  "HTTP_STRIPE_SIGNATURE": sign_stripe(forged, body)}
        out = b""
        for _ in range(50):
            try:
                out = fcgi_request(port, params, body)
                break
            except OSError:
                import time
                time.sleep(0.1)
        check(b"accepted" not in out and (b"500" in out.split(b"\r\n", 1)[0]),
              "a secret sent as a request parameter over TCP signed an event: %r" % out[:300])
        r = ns.run("%s --config /etc/idemhook/idemhook.env check --provider stripe"
                   % os.path.join(os.path.abspath(bindir), "idemhook"), check_rc=False, cwd="/")
        check("listens on TCP port %d" % port in r.stdout,
              "check does not report the TCP socket: %s" % r.stdout[-600:])
        with open(errlog) as f:
            err = f.read()
        check("warning: listening on TCP port %d" % port in err,
              "no warning at start: %r" % err[-300:])
    finally:
        ns.close()
        shutil.rmtree(tmp, ignore_errors=True)


def check_advice(bindir):
    """idemhook check as a newcomer meets it: as root beside www-data's
    settings file, no advice to chown what already belongs to the
    programs' user, and synchronous by its README name; on shared
    hosting, a store under public_html is to move to the home, and no
    `idemhook init` is advised (it would make the store there)."""
    ns = Namespace("check")
    tmp = tempfile.mkdtemp(prefix="ih-e2e-check-")
    os.chmod(tmp, 0o777)
    try:
        exe = os.path.join(os.path.abspath(bindir), "idemhook")
        write_fixed(ns, "IDEMHOOK_STRIPE_SECRET=whsec_x\n", "www-data")
        ns.run("install -d -o www-data -g www-data -m 0700 /var/lib/idemhook && "
               "runuser -u www-data -- %s init" % exe, cwd="/")
        r = ns.run("%s --config /etc/idemhook/idemhook.env check --provider stripe" % exe,
                   check_rc=False, cwd="/")
        check(r.returncode == 0 and "chown" not in r.stdout,
              "check as root beside www-data's files: exit %d: %s"
              % (r.returncode, r.stdout[-800:]))
        check("store synchronous: FULL" in r.stdout, "synchronous not by name: %s"
              % r.stdout[-500:])
        pub = os.path.join(tmp, "home", "public_html")
        os.makedirs(pub)
        os.chmod(os.path.join(tmp, "home"), 0o777)
        os.chmod(pub, 0o777)
        db = os.path.join(pub, "hooks", "idemhook.db")
        r = command(ns, bindir, "nobody", ["--db", db, "check", "--provider", "stripe",
                                           "--docroot", pub])
        out = r.stdout.decode(errors="replace")
        check("~/idemhook/idemhook.db" in out and "/var/lib/idemhook" not in out
              and "idemhook init" not in out and not os.path.exists(db),
              "shared-hosting advice for a store under public_html: %s" % out[-800:])
    finally:
        ns.close()
        shutil.rmtree(tmp, ignore_errors=True)


def check_sees_programs_store(bindir):
    """A program started with IDEMHOOK_DB (and no such line in its
    settings file) records into a store the command does not read:
    `idemhook check`, as root, names the program and both stores."""
    ns = Namespace("split")
    tmp = tempfile.mkdtemp(prefix="ih-e2e-split-")
    os.chmod(tmp, 0o777)
    try:
        theirs = os.path.join(tmp, "programs.db")
        mine = os.path.join(tmp, "command.db")
        write_fixed(ns, "IDEMHOOK_STRIPE_SECRET=whsec_x\n", "nobody")
        sock = os.path.join(tmp, "stripe.sock")
        ns.run("env -i PATH=/usr/bin:/bin IDEMHOOK_DB=%s "
               "IDEMHOOK_CONFIG=/etc/idemhook/idemhook.env spawn-fcgi -n -s %s -u nobody "
               "-g nogroup -- %s </dev/null >/dev/null 2>&1 &"
               % (theirs, sock, os.path.join(os.path.abspath(bindir), "stripe.fcgi")), cwd="/")
        import time
        deadline = time.time() + 10
        while not os.path.exists(sock) and time.time() < deadline:
            time.sleep(0.1)
        r = ns.run("%s --config /etc/idemhook/idemhook.env --db %s check --provider stripe"
                   % (os.path.join(os.path.abspath(bindir), "idemhook"), mine),
                   check_rc=False, cwd="/")
        check("was started with IDEMHOOK_DB=%s, but this command uses %s" % (theirs, mine)
              in r.stdout, "check does not see the programs' other store: %s"
              % r.stdout[-800:])
    finally:
        ns.close()
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    tap = Tap("sources: ")
    try:
        # Programs run as nobody and www-data: out of a 0700 checkout.
        bindir = staged_programs(bin_dir())
    except HarnessError as e:
        tap.not_ok("setup", e)
        return tap.finish()
    tap.run_as_root("fixed places read only with no start-up settings; said in the log; "
                    "console-password needs none; list as root says what to run", WHY,
                    fixed_places_only_unconfigured, bindir)
    tap.run("IDEMHOOK_DB in the environment and the file, differently: 500 bad_config, "
            "nothing stored, the command refuses too", store_named_twice, bindir)
    tap.run("shipped lighttpd files: IDEMHOOK_DB switched in the file moves the receivers "
            "to the command's store, and the move is logged", switch_store_in_file, bindir)
    tap.run("global options after the command's name", globals_after_command, bindir)
    tap.run_as_root("check: as root beside the programs' user's files, synchronous by "
                    "name, shared-hosting advice under public_html", WHY, check_advice, bindir)
    tap.run_as_root("check as root: a running program started with another IDEMHOOK_DB is "
                    "reported with both stores", WHY, check_sees_programs_store, bindir)
    tap.run_as_root("FastCGI on TCP with no start-up settings: no secret from a request "
                    "parameter, a warning at start, check reports it", WHY, tcp_socket, bindir)
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
