#!/usr/bin/env python3
"""A short fuzzing run of every libFuzzer harness in tests/fuzz/, in make check.

Usage: test_fuzz.py BINDIR   (or IH_BIN=BINDIR test_fuzz.py)
       IH_FUZZ_SECONDS=N (default 1) per harness

Builds the harnesses with 'make BUILD=<BINDIR> fuzz-build' (tests/fuzz/fuzz.mk:
clang, -fsanitize=fuzzer,address,undefined, into BINDIR/fuzz), then runs
each for a few seconds from its seed corpus tests/fuzz/corpus/<harness>/, which
also holds the inputs of every crash found so far: libFuzzer replays them
all before fuzzing, so each is a regression test.  New inputs go to a
temporary directory; the repository is not written to.  Prints
"ok - fuzz <harness>: <execs> execs" per harness.
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import REPO, suite_main  # noqa: E402


def run_cases(tap, bindir, servers):
    seconds = int(os.environ.get("IH_FUZZ_SECONDS", "1"))
    names = sorted(os.path.basename(p)[:-2]
                   for p in glob.glob(os.path.join(REPO, "tests", "fuzz", "fuzz_*.c")))
    if not names:
        tap.not_ok("fuzz: harnesses", "no tests/fuzz/fuzz_*.c")
        return
    r = subprocess.run(["make", "-C", REPO, "-j2", "BUILD=" + bindir, "fuzz-build"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=900)
    if r.returncode != 0:
        tap.not_ok("fuzz: make fuzz-build", r.stdout.decode(errors="replace")[-1500:])
        return
    tap.ok("fuzz: make fuzz-build (%d harnesses)" % len(names))
    work = tempfile.mkdtemp(prefix="ih-fuzz-")
    total = 0
    try:
        for name in names:
            exe = os.path.join(bindir, "fuzz", name)
            seeds = os.path.join(REPO, "tests", "fuzz", "corpus", name)
            if not os.path.isdir(seeds) or not os.listdir(seeds):
                tap.not_ok("fuzz %s" % name, "no seed corpus in tests/fuzz/corpus/%s" % name)
                continue
            out_dir = os.path.join(work, name)
            os.makedirs(out_dir)
            cmd = [exe, "-max_total_time=%d" % seconds, "-timeout=10",
                   "-rss_limit_mb=2048", "-print_final_stats=1",
                   "-artifact_prefix=%s/crash-" % work, out_dir, seeds]
            try:
                p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   timeout=seconds + 120, cwd=work)
                log = p.stdout.decode(errors="replace")
                rc = p.returncode
            except subprocess.TimeoutExpired:
                tap.not_ok("fuzz %s" % name, "did not stop after %d s" % (seconds + 120))
                continue
            m = re.search(r"stat::number_of_executed_units:\s*(\d+)", log)
            execs = int(m.group(1)) if m else 0
            crashes = glob.glob(os.path.join(work, "crash-*"))
            if rc != 0 or crashes or not m:
                tail = " | ".join(l for l in log.splitlines()
                                  if "ERROR" in l or "SUMMARY" in l or "runtime error" in l)
                tap.not_ok("fuzz %s" % name, "exit %d, %d crash input(s): %s"
                           % (rc, len(crashes), tail[:600] or log[-600:]))
                for c in crashes:  # keep them for the report
                    tap.diag("crash input %s: %r" % (os.path.basename(c),
                                                      open(c, "rb").read()[:200]))
                    os.unlink(c)
                continue
            total += execs
            tap.ok("fuzz %s: %d execs in %d s, seeds replayed" % (name, execs, seconds))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    tap.diag("fuzz: %d execs in all" % total)


if __name__ == "__main__":
    sys.exit(suite_main("fuzz", run_cases))
