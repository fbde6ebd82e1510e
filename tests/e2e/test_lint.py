#!/usr/bin/env python3
"""Tests of the style checker that make lint runs (tests/lint/checksrc.py).

Usage: test_lint.py [BINDIR]   (BINDIR is not used: nothing is built)

  - each fixture in tests/lint/fixtures/ marks every line that breaks a
    rule with "VIOLATION <rule>": checksrc reports exactly those lines
    with those rules (so each rule is caught, and prose, strings, ==, <=
    and for loops are not), and exits 1;
  - a header that keeps every rule passes, with exit 0;
  - --pending excuses exactly the listed count, prints each excused
    violation, and fails on one more or on a stale entry;
  - a C file of 700 lines passes and one of 701 fails (long-file, at
    line 701), written afresh by the test at each run rather than kept
    as a 701-line fixture in the tree;
  - make lint's files (shared/, shared/store/, handlers/, handlers/cli/)
    pass with tests/lint/pending.
"""

import glob
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import REPO, Tap, check, check_eq  # noqa: E402

CHECKSRC = os.path.join(REPO, "tests", "lint", "checksrc.py")
FIXTURES = os.path.join(REPO, "tests", "lint", "fixtures")
REPORT = re.compile(r"^(.+?):(\d+): .* \[([\w-]+)\]( \(pending\))?$")


def checksrc(*args):
    p = subprocess.run([sys.executable, CHECKSRC] + list(args),
                       capture_output=True, text=True, cwd=REPO)
    found = []
    for line in p.stdout.splitlines():
        m = REPORT.match(line)
        if m:
            found.append((os.path.basename(m.group(1)), int(m.group(2)),
                          m.group(3), bool(m.group(4))))
    return p.returncode, found, p.stdout


def marked(path):
    """The (file, line, rule) that path's VIOLATION markers expect."""
    want = []
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            m = re.search(r"VIOLATION ([\w-]+)", line)
            if m:
                want.append((os.path.basename(path), no, m.group(1)))
    return want


def test_fixture(path):
    want = marked(path)
    check(want, "%s marks no violation" % path)
    rc, found, out = checksrc(path)
    check_eq(sorted((f, n, r) for f, n, r, _ in found), sorted(want),
             "violations reported in " + os.path.basename(path))
    check_eq(rc, 1, "exit status on " + os.path.basename(path))


def test_every_rule_has_a_fixture():
    # long-file's fixture is written by test_long_file().
    rules = {"long-file"}
    for path in glob.glob(os.path.join(FIXTURES, "bad_*")):
        rules |= {r for _, _, r in marked(path)}
    check_eq(sorted(rules), ["assign-cond", "banned", "contract",
                             "long-file", "long-line"],
             "rules the fixtures exercise")


def c_file(folder, name, nlines):
    """A C file of nlines lines in folder that breaks no other rule."""
    path = os.path.join(folder, name)
    body = ["/* %s -- a fixture of %d lines. */" % (name, nlines)]
    body += ["static int v%d;" % i for i in range(1, nlines)]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(body) + "\n")
    return path


def test_long_file():
    with tempfile.TemporaryDirectory() as d:
        ok = c_file(d, "fits.c", 700)
        rc, found, out = checksrc(ok)
        check_eq(found, [], "violations in a file of 700 lines")
        check_eq(rc, 0, "exit status on a file of 700 lines")
        long = c_file(d, "long.c", 701)
        rc, found, out = checksrc(long)
        check_eq(found, [("long.c", 701, "long-file", False)],
                 "a file of 701 lines: " + out)
        check_eq(rc, 1, "exit status on a file of 701 lines")
        pend = os.path.join(d, "pending")
        with open(pend, "w", encoding="utf-8") as f:
            f.write("%s long-file 1 -- split later\n"
                    "%s long-file 1 -- stale: it fits\n" % (long, ok))
        rc, found, out = checksrc("--pending", pend, long)
        check_eq((rc, found), (0, [("long.c", 701, "long-file", True)]),
                 "a long file listed as pending: " + out)
        rc, found, out = checksrc("--pending", pend, ok)
        check_eq(rc, 1, "exit status when a listed file fits: " + out)


def test_good_header():
    rc, found, out = checksrc(os.path.join(FIXTURES, "good.h"))
    check_eq(found, [], "violations in good.h")
    check_eq(rc, 0, "exit status on good.h")


def test_pending():
    bad = os.path.join(FIXTURES, "bad_style.c")
    rel = os.path.relpath(bad, REPO)
    with tempfile.NamedTemporaryFile("w", suffix=".pending") as f:
        f.write("# a comment\n%s banned 2 -- the fixture's two\n"
                "%s assign-cond 3 -- and its three\n"
                "%s long-line 1 -- and its one\n" % (rel, rel, rel))
        f.flush()
        rc, found, out = checksrc("--pending", f.name, rel)
        check_eq(rc, 0, "exit status with every violation pending")
        check_eq(len(found), 6, "pending violations still printed")
        check(all(p for _, _, _, p in found), "each marked (pending): "
              + out)
    with tempfile.NamedTemporaryFile("w", suffix=".pending") as f:
        f.write("%s banned 1 -- one fewer than found\n" % rel)
        f.flush()
        rc, found, out = checksrc("--pending", f.name, rel)
        check_eq(rc, 1, "exit status with one banned call too many")
        check_eq(sum(1 for _, _, r, p in found if r == "banned" and not p),
                 1, "banned calls beyond the count")
    good = os.path.relpath(os.path.join(FIXTURES, "good.h"), REPO)
    with tempfile.NamedTemporaryFile("w", suffix=".pending") as f:
        f.write("%s long-line 1 -- stale: good.h has none\n" % good)
        f.flush()
        rc, found, out = checksrc("--pending", f.name, good)
        check_eq(rc, 1, "exit status with a stale pending entry")
        check("lower the count" in out, "stale entry named: " + out)


def test_tree_passes():
    srcs = []
    for d in ("shared", "shared/store", "handlers", "handlers/cli",
              "handlers/console"):
        srcs += sorted(glob.glob(os.path.join(d, "*.[ch]"), root_dir=REPO))
    check(len(srcs) > 50, "make lint's files found: %d" % len(srcs))
    rc, found, out = checksrc("--pending", "tests/lint/pending", *srcs)
    check_eq(rc, 0, "checksrc over the tree:\n" + out)


def main():
    tap = Tap("lint: ")
    for path in sorted(glob.glob(os.path.join(FIXTURES, "bad_*"))):
        tap.run("%s: each marked violation, nothing else"
                % os.path.basename(path), test_fixture, path)
    tap.run("every rule has a fixture", test_every_rule_has_a_fixture)
    tap.run("a file of 700 lines passes, 701 fails (long-file)",
            test_long_file)
    tap.run("a header that keeps the rules passes", test_good_header)
    tap.run("--pending excuses the count, no more, no stale entry",
            test_pending)
    tap.run("make lint's files pass (tests/lint/pending)", test_tree_passes)
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
