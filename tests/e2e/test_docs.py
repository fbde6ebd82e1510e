#!/usr/bin/env python3
"""The documentation's links and its shape (issue 38).

Usage: test_docs.py [BINDIR]   (BINDIR is not used: nothing is built)

  - every relative link and #anchor of every tracked Markdown file
    resolves: the file (or folder) exists in the checkout, and the
    anchor is a heading of that file by GitHub's slug rules (lower case,
    punctuation but '-' and '_' dropped, spaces to '-', -1, -2, ... for
    a repeated heading) or an <a name>; links into code are read as
    GitHub shows them, not checked for line numbers;
  - the checker itself finds a broken file link, a broken anchor and a
    broken anchor of another file, in a Markdown file of its own;
  - README.md has at most 500 lines, and each folder the README sends a
    reader to has its README.md;
  - no benchmark run is in README.md (make bench-readme writes
    tests/bench/README.md).
"""

import os
import sys
import tempfile
from urllib.parse import unquote

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import REPO, Tap, anchors, check, links, markdown_files  # noqa: E402

FOLDERS = ("www-config", "handlers", "shared", "db", "tests", "tests/bench")


def broken_links(path, root=REPO):
    """["file:line: target: why"] for each link of path that does not
    resolve."""
    out = []
    cache = {}
    here = os.path.dirname(path)
    for n, target in links(path):
        if "://" in target or target.startswith(("mailto:", "//")):
            continue
        where, _, frag = target.partition("#")
        dest = os.path.normpath(os.path.join(here, unquote(where))) if where else path
        if not (dest == root or dest.startswith(root + os.sep)):
            out.append("%s:%d: %s: outside the checkout" % (os.path.relpath(path, root), n,
                                                             target))
            continue
        if not os.path.exists(dest):
            out.append("%s:%d: %s: no such file" % (os.path.relpath(path, root), n, target))
            continue
        if not frag or not dest.endswith(".md"):
            continue
        if dest not in cache:
            cache[dest] = anchors(dest)
        if unquote(frag).lower() not in cache[dest]:
            out.append("%s:%d: %s: no such anchor in %s" % (os.path.relpath(path, root), n,
                                                            target,
                                                            os.path.relpath(dest, root)))
    return out


def every_link_resolves():
    files = markdown_files()
    check(os.path.join(REPO, "README.md") in files, "README.md is not among %r" % files[:5])
    bad = []
    for p in files:
        bad += broken_links(p)
    check(not bad, "%d broken link(s):\n%s" % (len(bad), "\n".join(bad[:40])))


def checker_finds_breaks():
    """A file with one good link of each kind and one broken: exactly
    the broken ones are reported."""
    d = tempfile.mkdtemp(prefix="ih-docs-")
    try:
        os.makedirs(os.path.join(d, "sub"))
        with open(os.path.join(d, "sub", "README.md"), "w") as f:
            f.write("# Sub\n\n## The operator's `check` (and more)\n\n## Twice\n\n## Twice\n")
        with open(os.path.join(d, "README.md"), "w") as f:
            f.write("# Top\n\n## Deploy: now\n\n"
                    "[a](#deploy-now) [b](sub/README.md#the-operators-check-and-more)\n"
                    "[c](sub/README.md#twice-1) [d](sub/) [e](https://example.com/x#y)\n"
                    "`[code](#not-a-link)`\n\n```\n[fenced](#not-a-link-either)\n```\n"
                    "[x](#deploy) [y](sub/README.md#twice-2) [z](nothing.md)\n")
        bad = broken_links(os.path.join(d, "README.md"), root=d)
        got = sorted(b.split(": ")[1] for b in bad)
        check(got == ["#deploy", "nothing.md", "sub/README.md#twice-2"],
              "reported %r" % bad)
    finally:
        for p in ("sub/README.md", "README.md"):
            os.unlink(os.path.join(d, p))
        os.rmdir(os.path.join(d, "sub"))
        os.rmdir(d)


def readme_shape():
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        text = f.read()
    n = text.count("\n")
    check(n <= 500, "README.md has %d lines, more than 500" % n)
    for d in FOLDERS:
        check(os.path.exists(os.path.join(REPO, d, "README.md")), "%s/README.md missing" % d)
    check("performance: begin" not in text, "README.md holds make bench-readme's section")
    with open(os.path.join(REPO, "tests", "bench", "README.md"), encoding="utf-8") as f:
        check("<!-- performance: begin" in f.read(), "tests/bench/README.md lacks the "
              "section make bench-readme rewrites")


def main():
    tap = Tap()
    tap.run("the link checker reports a broken file, anchor and other file's anchor",
            checker_finds_breaks)
    tap.run("every relative link and anchor of every tracked Markdown file resolves",
            every_link_resolves)
    tap.run("README.md at most 500 lines; each folder README; bench figures in tests/bench",
            readme_shape)
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
