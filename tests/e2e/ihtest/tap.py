"""TAP-style reporting ("ok - name" / "not ok - name: reason") and the
assertions the cases use."""

import os
import threading
import time
import traceback

from .common import IS_ROOT


class Tap:
    """Prints 'ok - name' / 'not ok - name: reason'; exit code via finish()."""

    def __init__(self, prefix=""):
        self.prefix = prefix
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.lock = threading.Lock()
        # IH_CASE_TIMES=1: a "# N.N s" line after each result, the wall
        # time since the previous one (setup included), to find slow cases.
        self.times = os.environ.get("IH_CASE_TIMES") == "1"
        self.last = time.monotonic()

    def _name(self, name):
        return self.prefix + name

    def _time(self):
        """Called with the lock held, after a result line."""
        if self.times:
            now = time.monotonic()
            print("# %.1f s" % (now - self.last), flush=True)
            self.last = now

    def ok(self, name):
        with self.lock:
            self.passed += 1
            print("ok - %s" % self._name(name), flush=True)
            self._time()

    def not_ok(self, name, reason):
        reason = " ".join(str(reason).split())  # one line
        with self.lock:
            self.failed += 1
            print("not ok - %s: %s" % (self._name(name), reason), flush=True)
            self._time()

    def diag(self, msg):
        for line in str(msg).splitlines():
            print("# " + line, flush=True)

    def run(self, name, fn, *args, **kw):
        """Run fn; AssertionError or any exception makes the case fail."""
        try:
            fn(*args, **kw)
        except AssertionError as e:
            self.not_ok(name, e or "assertion failed")
            return False
        except Exception as e:  # noqa: BLE001 - report, keep going
            self.not_ok(name, "%s: %s" % (type(e).__name__, e))
            self.diag(traceback.format_exc())
            return False
        self.ok(name)
        return True

    def skip(self, name, why):
        """A case that cannot run here, with its reason.  tests/run.sh
        counts it as skipped.  Root is the reference machine: as root
        nothing may be skipped, so a skip there is a failure."""
        if IS_ROOT:
            self.not_ok(name, "would be skipped as root, which runs everything: " + why)
            return
        with self.lock:
            self.skipped += 1
            print("ok - %s # SKIP %s" % (self._name(name), why), flush=True)
            self._time()

    def run_as_root(self, name, why, fn, *args, **kw):
        """tap.run as root; otherwise a skip saying why the case needs
        root ("needs root: <why>")."""
        if not IS_ROOT:
            self.skip(name, "needs root: " + why)
            return False
        return self.run(name, fn, *args, **kw)

    def finish(self):
        total = self.passed + self.failed + self.skipped
        print("1..%d" % total, flush=True)
        return 1 if self.failed or not total else 0


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def check_eq(got, want, what):
    if got != want:
        raise AssertionError("%s: expected %r, got %r" % (what, want, got))
