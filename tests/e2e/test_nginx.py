#!/usr/bin/env python3
"""Tests of the shipped nginx configuration (www-config/nginx).

Usage: test_nginx.py BINDIR   (or IH_BIN=BINDIR test_nginx.py)

  - nginx -t accepts idemhook.conf and fcgiwrap.conf included unchanged in
    a server { } that sets their variables;
  - nginx + spawn-fcgi (harness.NginxServer): the common suite for
    stripe.fcgi and github.fcgi; settings from the file named by
    fastcgi_param IDEMHOOK_CONFIG.
"""

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (NGINX_CONF_DIR, NginxServer, _alive, check,  # noqa: E402
                     check_eq, staged_programs, suite_main)
import cases  # noqa: E402
import test_stripe as ts  # noqa: E402
from test_apache import GITHUB, STRIPE  # noqa: E402


def nginx_t(include, sets):
    tmp = tempfile.mkdtemp(prefix="ih-e2e-nginx-t-")
    try:
        shutil.copyfile("/etc/nginx/fastcgi_params", os.path.join(tmp, "fastcgi_params"))
        conf = os.path.join(tmp, "nginx.conf")
        with open(conf, "w") as f:
            f.write("pid %s/nginx.pid;\nerror_log %s/error.log;\n"
                    "events { }\nhttp {\n  access_log off;\n"
                    "  client_body_temp_path %s;\n  fastcgi_temp_path %s;\n"
                    "  proxy_temp_path %s;\n  uwsgi_temp_path %s;\n  scgi_temp_path %s;\n"
                    "  server {\n    listen 127.0.0.1:8080;\n%s    include %s;\n  }\n}\n"
                    % ((tmp,) * 7 + ("".join("    set $%s %s;\n" % kv for kv in sets),
                                     os.path.join(NGINX_CONF_DIR, include))))
        r = subprocess.run(["nginx", "-t", "-c", conf, "-p", tmp], capture_output=True,
                           text=True, timeout=30)
        out = (r.stdout + r.stderr).strip()
        check(r.returncode == 0 and "test is successful" in out,
              "nginx -t failed (%d): %s" % (r.returncode, out[-600:]))
        check("[warn]" not in out and "[emerg]" not in out, "nginx -t warns: %s" % out[-600:])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def spawn_script(bindir):
    """spawn-fcgi.sh start/stop: sockets and pid files appear, processes
    (as www-data) answer nothing but exist, and stop ends them."""
    import pwd
    tmp = tempfile.mkdtemp(prefix="ih-e2e-spawn-")
    script = os.path.join(NGINX_CONF_DIR, "spawn-fcgi.sh")
    env = dict(os.environ, IDEMHOOK_LIBEXEC=bindir, IDEMHOOK_RUN=os.path.join(tmp, "run"),
               IDEMHOOK_PROCS="2", IDEMHOOK_CONFIG=os.path.join(tmp, "none.env"))
    pids = []
    try:
        r = subprocess.run(["sh", script, "start", "stripe"], capture_output=True, text=True,
                           timeout=30, env=env)
        check(r.returncode == 0, "start failed (%d): %s" % (r.returncode, r.stderr[-400:]))
        run = os.path.join(tmp, "run")
        check(os.path.exists(os.path.join(run, "stripe.sock")), "no stripe.sock")
        with open(os.path.join(run, "stripe.pid")) as f:
            pids = [int(x) for x in f.read().split()]
        check(len(pids) == 2, "expected 2 pids, got %r" % pids)
        uid = pwd.getpwnam("www-data").pw_uid
        for pid in pids:
            check(os.stat("/proc/%d" % pid).st_uid == uid, "process %d not www-data" % pid)
        # Root owns the run folder and the pid file: www-data cannot plant one.
        st = os.stat(run)
        check(st.st_uid == 0 and st.st_mode & 0o7777 == 0o750,
              "run folder: uid %d mode %o" % (st.st_uid, st.st_mode & 0o7777))
        check_eq(os.stat(os.path.join(run, "stripe.pid")).st_uid, 0, "pid file owner")
        # Junk and another process's pid beside the real ones: only the
        # programs are stopped.  (0, 1 and -1 are tried only in a PID
        # namespace, by spawn_stop_hostile: here a regressed script would
        # signal this test's process group or the whole machine.)
        canary = subprocess.Popen(["sleep", "300"])
        pids.append(canary.pid)
        with open(os.path.join(run, "stripe.pid"), "a") as f:
            f.write("\n%d\nabc\n\n" % canary.pid)
        r = subprocess.run(["sh", script, "stop", "stripe"], capture_output=True, text=True,
                           timeout=30, env=env)
        check(r.returncode == 1 and "not killed" in r.stderr,
              "stop with a foreign pid: exit %d, %r" % (r.returncode, r.stderr[-400:]))
        time.sleep(0.3)
        left = [pid for pid in pids[:2] if _alive(pid)]
        check(not left, "still running after stop: %r" % left)
        check(canary.poll() is None, "stop killed a process that is not the program")
        canary.kill()
        canary.wait()
    finally:
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(pid, os.WNOHANG)
        shutil.rmtree(tmp, ignore_errors=True)


# Run inside a PID namespace of its own and a session of its own
# (setsid), so that even a regressed script that obeys "-9 -1" or "0" can
# only kill this namespace's processes.
HOSTILE_STOP = r"""
run=$1 script=$2 libexec=$3
sleep 300 & canary=$!
mkdir -p "$run"
try() {
    printf '%s\n' "$1" >"$run/stripe.pid"
    [ -z "${2:-}" ] || chown "$2" "$run/stripe.pid"
    IDEMHOOK_RUN=$run IDEMHOOK_LIBEXEC=$libexec sh "$script" stop stripe 2>>"$run/err"
    echo "case $1 ${2:-root}: exit $?"
    kill -0 "$canary" 2>/dev/null && echo "alive after $1" || echo "KILLED by $1"
}
try "-9 -1"
try "-1"
try "$canary"
try "0"
try "1"
try " $canary"
try "$canary" www-data
kill "$canary"
cat "$run/err"
"""


def spawn_stop_hostile(bindir):
    """spawn-fcgi.sh stop, as root, with pid files holding "-9 -1", -1,
    another process's pid, 0, 1, or written by www-data: kills nothing."""
    tmp = tempfile.mkdtemp(prefix="ih-e2e-spawn-stop-")
    try:
        os.chmod(tmp, 0o755)
        r = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "--kill-child",
                            "setsid", "sh", "-c", HOSTILE_STOP,
                            "sh", os.path.join(tmp, "run"), os.path.join(NGINX_CONF_DIR,
                                                                         "spawn-fcgi.sh"), bindir],
                           capture_output=True, text=True, timeout=60)
        out = r.stdout
        check("KILLED" not in out and out.count("alive after") == 7,
              "a hostile pid file killed a process: %s %s" % (out[-1200:], r.stderr[-400:]))
        check(out.count(": exit 1") == 7, "stop did not report the refused pid files: %s" % out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def config_param_setting(srv, limit):
    """IDEMHOOK_MAX_BODY from the file that fastcgi_param IDEMHOOK_CONFIG
    (a request parameter) names."""
    ts.max_body(srv, limit)


def run_cases(tap, bindir, servers):
    tap.run("nginx -t: idemhook.conf (spawn-fcgi sockets) included unchanged", nginx_t,
            "idemhook.conf", [("idemhook_run", "/run/idemhook"),
                              ("idemhook_config", "/etc/idemhook/idemhook.env")])
    tap.run("nginx -t: fcgiwrap.conf (plain CGI) included unchanged", nginx_t,
            "fcgiwrap.conf", [("idemhook_libexec", "/usr/local/libexec/idemhook"),
                              ("idemhook_config", "/etc/idemhook/idemhook.env")])
    missing = [p for p in ("stripe", "github")
               if not os.path.exists(os.path.join(bindir, p + ".fcgi"))]
    if missing:
        tap.not_ok("setup", "no %s in %s" % (missing, bindir))
        return
    srv = servers.add(NginxServer(bindir, providers=["stripe", "github"]))
    if tap.run("nginx and spawn-fcgi start with the shipped idemhook.conf", srv.start):
        cases.run_common(tap, STRIPE, srv)
        cases.run_common(tap, GITHUB, srv)
        tap.run("stripe: request log lines reach nginx's error_log",
                cases.case_log_in_errorlog, STRIPE, srv)
        tap.run("no sanitizer reports", cases.case_sanitizers, srv)
        srv.stop()
    lim = servers.add(NginxServer(bindir, providers=["stripe"], name="nginx-limits",
                                  env={"IDEMHOOK_MAX_BODY": "1024"}))
    if tap.run("starts with IDEMHOOK_MAX_BODY=1024 in the IDEMHOOK_CONFIG file", lim.start):
        tap.run("stripe: IDEMHOOK_MAX_BODY from fastcgi_param IDEMHOOK_CONFIG's file: "
                "413 over, accepted at the limit", config_param_setting, lim, 1024)
        lim.stop()
    staged = staged_programs(bindir)
    tap.run_as_root("spawn-fcgi.sh start/stop: 2 processes as www-data, socket, root-owned "
                    "pid file; stop leaves a foreign pid alone",
                    "spawn-fcgi.sh is run as root and starts the programs as www-data",
                    spawn_script, staged)
    tap.run_as_root("spawn-fcgi.sh stop: pid files with -9 -1, -1, 0, 1, another process's "
                    "pid, or owned by www-data kill nothing",
                    "a PID namespace, chown to www-data", spawn_stop_hostile, staged)


if __name__ == "__main__":
    sys.exit(suite_main("nginx", run_cases, prefix=True))
