"""Processes: the servers' children, their users and environment, the
programs staged where those users reach them, reaping, and cleanup of
every server at exit."""

import atexit
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile

from .common import IS_ROOT, SANITIZER_ENV


def _children_of(pid):
    """Pids whose parent is pid (from /proc)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
            ppid = int(st[st.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == pid:
            out.append(int(d))
    return out


def program_of(pid):
    """The path a process was started with (argv[0]), or "".  Read from
    /proc/PID/cmdline, which stays readable when the program has made
    itself non-dumpable (its exe link then does not, except for root)."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().split(b"\0", 1)[0].decode("utf-8", "replace")
    except OSError:
        return ""


def daemon_env(keep, **fixed):
    """A server's environment: PATH, fixed, and of the caller's the
    sanitizer settings and the names in keep."""
    env = {"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")}
    env.update(fixed)
    for k in SANITIZER_ENV + keep:
        if k in os.environ:
            env[k] = os.environ[k]
    return env


def server_user():
    """The user a web server started by the tests runs the programs as:
    www-data under root, else the user running the tests."""
    import pwd
    return "www-data" if IS_ROOT else pwd.getpwuid(os.geteuid()).pw_name


def server_group():
    """The group of server_user(): www-data under root, else the group of
    the user running the tests, which need not have the user's name
    (nobody's is nogroup)."""
    import grp
    return "www-data" if IS_ROOT else grp.getgrgid(os.getegid()).gr_name


_STAGED = {}


def link_or_copy(src, dst):
    """A hard link to src at dst where the file system allows, else a copy."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def staged_programs(bin):
    """The programs of bin (*.fcgi and idemhook) in a folder of their own
    that every user can enter.  Servers started as root run them as
    www-data, which cannot reach a checkout under a 0700 folder (root's
    home, a mktemp -d folder, a Debian 12 home).  Hard links where the
    file system allows, copies otherwise; one folder per bin and test
    process, removed at exit.  Not root: bin itself."""
    if not IS_ROOT:
        return bin
    if bin in _STAGED:
        return _STAGED[bin]
    base = tempfile.mkdtemp(prefix="ih-bin-")
    os.chmod(base, 0o755)
    atexit.register(shutil.rmtree, base, True)
    for fn in sorted(os.listdir(bin)):
        src = os.path.join(bin, fn)
        if not (fn.endswith(".fcgi") or fn == "idemhook") or not os.path.isfile(src):
            continue
        link_or_copy(src, os.path.join(base, fn))
    _STAGED[bin] = base
    return base


def reach_problem(user, needs):
    """One line naming the first path user cannot use, or None.

    needs: [(path, access)], access a string of "r", "w", "x" as for
    test(1).  As root, the checks run as user (its own groups only); as
    another user they run as that user, who is us."""
    import pwd
    script = ('for a; do m=${a%%:*}; p=${a#*:}; '
              'for c in $(echo "$m" | sed "s/./& /g"); do '
              'test -"$c" "$p" || { echo "$c:$p"; exit 1; }; done; done')
    args = ["%s:%s" % (acc, path) for path, acc in needs]
    kw = {}
    if IS_ROOT:
        pw = pwd.getpwnam(user)
        kw = {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}
    r = subprocess.run(["sh", "-c", script, "sh"] + args, capture_output=True,
                       text=True, timeout=30, **kw)
    if r.returncode == 0:
        return None
    acc, _, path = r.stdout.strip().partition(":")
    what = {"r": "read", "w": "write", "x": "enter or run"}.get(acc, acc)
    # Name the folder that stops it: the first ancestor user cannot enter.
    blocker = None
    d = os.path.dirname(os.path.abspath(path))
    chain = []
    while True:
        chain.append(d)
        if d == "/":
            break
        d = os.path.dirname(d)
    for d in reversed(chain):
        if subprocess.run(["test", "-x", d], timeout=10, **kw).returncode != 0:
            blocker = d
            break
    if blocker:
        st = os.stat(blocker)
        try:
            owner = pwd.getpwuid(st.st_uid).pw_name
        except KeyError:
            owner = str(st.st_uid)
        return ("%s cannot %s %s: the folder %s (mode %04o, owner %s) is closed to it"
                % (user, what, path, blocker, st.st_mode & 0o7777, owner))
    return "%s cannot %s %s" % (user, what, path)


_SUBREAPER = []


def become_subreaper():
    """Make this process the reaper of lighttpd's orphaned FastCGI children
    (Linux PR_SET_CHILD_SUBREAPER), so they can be waited for, not left as
    zombies.  Best effort."""
    if _SUBREAPER:
        return
    _SUBREAPER.append(True)
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except Exception:  # noqa: BLE001
        pass


def wait_or_kill_group(p, pgid, timeout):
    """Waits up to timeout seconds for the process p to end; then
    SIGKILLs its process group pgid and waits 5 seconds more."""
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(timeout=5)


def _reap(pid):
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
        return st[st.rindex(")") + 2] != "Z"
    except (OSError, ValueError, IndexError):
        return False


class Servers:
    """Lazily started servers, all cleaned up at exit (even on errors)."""

    def __init__(self):
        self.all = []

    def add(self, server):
        self.all.append(server)
        return server

    def cleanup(self):
        for s in self.all:
            with contextlib.suppress(Exception):
                s.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cleanup()
        return False


def install_signal_cleanup(servers):
    """Turn SIGTERM/SIGINT/SIGHUP into SystemExit so 'with Servers()' cleans up."""
    def handler(signum, _frame):
        raise SystemExit(128 + signum)
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, handler)


def suite_main(name, cases, prefix=False, needs=()):
    """The main of a test module: TAP output, the binaries' folder (a
    failure "NAME: setup" without it, or without one of the programs
    named in needs), and servers stopped at exit or on a signal.
    cases(tap, bindir, servers) runs the cases; returns the exit status.
    With prefix, every case's name begins "NAME: " too."""
    from .common import HarnessError, bin_dir
    from .tap import Tap
    tap = Tap("%s: " % name if prefix else "")
    setup = "setup" if prefix else "%s: setup" % name
    try:
        bindir = bin_dir()
    except HarnessError as e:
        tap.not_ok(setup, e)
        return tap.finish()
    missing = [p for p in needs if not os.path.exists(os.path.join(bindir, p))]
    if missing:
        tap.not_ok(setup, "no %s in %s" % (", ".join(missing), bindir))
        return tap.finish()
    servers = Servers()
    install_signal_cleanup(servers)
    with servers:
        cases(tap, bindir, servers)
    return tap.finish()
