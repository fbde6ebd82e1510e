#!/usr/bin/env python3
"""Tests of the build's layout: each provider file is compiled once.

Usage: test_layout.py BINDIR   (or IH_BIN=BINDIR test_layout.py)

  - no handlers/<provider>.c defines main(); handlers/receiver.c does, and
    the Makefile builds it once per provider (-DIH_PROVIDER);
  - make -n all tests compiles each handlers/<provider>.c exactly once, and
    links that one object into its program, the idemhook command and the
    unit tests; make -n fuzz-build compiles it once for the fuzzers;
  - the provider objects in BINDIR define no main symbol, and each
    program's receiver object does;
  - the library's modules (name.c with name.h in shared/; shared/store/
    as one, the store's contract in several headers) include each other in
    no circle (shared/README.md, The layers).
"""

import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import PROVIDERS, REPO, check, check_eq, suite_main  # noqa: E402


def make_n(*targets):
    """The commands make would run for targets in a fresh build folder."""
    with tempfile.TemporaryDirectory(prefix="ih-layout-") as build:
        p = subprocess.run(["make", "-n", "V=1", "BUILD=" + build] + list(targets),
                           cwd=REPO, capture_output=True, text=True, timeout=120)
        check_eq(p.returncode, 0, "make -n %s: %s" % (" ".join(targets), p.stderr[-800:]))
        return p.stdout.replace("\\\n", " ").replace(build, "BUILD")


def compiles_of(out, src):
    return [l for l in out.splitlines()
            if re.search(r"\s-c\s+-o\s+\S+\s+%s$" % re.escape(src), l)]


def case_no_main_in_providers():
    for p in PROVIDERS:
        with open(os.path.join(REPO, "handlers", p + ".c")) as f:
            text = f.read()
        check(not re.search(r"^main\s*\(", text, re.M), "handlers/%s.c defines main()" % p)
        check("IH_NO_MAIN" not in text, "handlers/%s.c still tests IH_NO_MAIN" % p)
    with open(os.path.join(REPO, "handlers", "receiver.c")) as f:
        check(re.search(r"^main\(void\)", f.read(), re.M), "receiver.c has no main()")


def case_compiled_once():
    out = make_n("all", "tests")
    links = [l for l in out.splitlines() if " -o BUILD/" in l and " -c " not in l]
    for p in PROVIDERS:
        c = compiles_of(out, "handlers/%s.c" % p)
        check_eq(len(c), 1, "compilations of handlers/%s.c" % p)
        r = [l for l in compiles_of(out, "handlers/receiver.c")
             if "-DIH_PROVIDER=%s_provider" % p in l]
        check_eq(len(r), 1, "receiver.c compilations for %s" % p)
        obj = "BUILD/obj/handlers/%s.o" % p
        users = {re.search(r" -o (\S+)", l).group(1) for l in links if obj in l.split()}
        for want in ("BUILD/%s.fcgi" % p, "BUILD/idemhook", "BUILD/tests/test_%s" % p):
            check(want in users, "%s not linked into %s: %s" % (obj, want, sorted(users)))


def case_fuzz_compiled_once():
    out = make_n("fuzz-build")
    for p in PROVIDERS:
        check_eq(len(compiles_of(out, "handlers/%s.c" % p)), 1,
                 "fuzz compilations of handlers/%s.c" % p)


def defines_main(obj):
    p = subprocess.run(["nm", "--defined-only", obj], capture_output=True, text=True,
                       timeout=60)
    check_eq(p.returncode, 0, "nm %s: %s" % (obj, p.stderr))
    return any(l.split()[-2:] == ["T", "main"] for l in p.stdout.splitlines())


def case_objects(bindir):
    for p in PROVIDERS:
        obj = os.path.join(bindir, "obj", "handlers", p + ".o")
        check(os.path.exists(obj), "no %s" % obj)
        check(not defines_main(obj), "%s defines main" % obj)
        check(defines_main(os.path.join(bindir, "obj", "handlers", "receiver-%s.o" % p)),
              "receiver-%s.o defines no main" % p)


def module_includes():
    """Each module of the library -> the modules it includes."""
    files, module_of = [], {}
    for folder in ("shared", os.path.join("shared", "store")):
        for name in sorted(os.listdir(os.path.join(REPO, folder))):
            base, ext = os.path.splitext(name)
            if ext in (".c", ".h"):
                mod = "store/" if folder.endswith("store") else base
                files.append((mod, os.path.join(REPO, folder, name)))
                if ext == ".h":
                    module_of[base] = mod
    graph = {}
    for mod, path in files:
        with open(path) as f:
            incs = re.findall(r'^#include "([^"/]+)\.h"', f.read(), re.M)
        graph.setdefault(mod, set()).update(
            module_of[i] for i in incs if module_of.get(i, mod) != mod)
    return graph


def case_no_include_circle():
    graph = module_includes()
    reach = {}
    for m in graph:
        seen, todo = set(), [m]
        while todo:
            for n in graph[todo.pop()]:
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        reach[m] = seen
    circles = {frozenset([m] + [n for n in reach[m] if m in reach[n]])
               for m in graph if m in reach[m]}
    check_eq(sorted(sorted(c) for c in circles), [],
             "modules that include each other in a circle")


def run_cases(tap, bindir, servers):
    tap.run("no provider file has main(); receiver.c has", case_no_main_in_providers)
    tap.run("make all tests: each provider compiled once, one object for its "
            "program, the command and its unit test", case_compiled_once)
    tap.run("make fuzz-build: each provider compiled once", case_fuzz_compiled_once)
    tap.run("built provider objects have no main; receiver objects do", case_objects, bindir)
    tap.run("the library's modules include each other in no circle",
            case_no_include_circle)


if __name__ == "__main__":
    sys.exit(suite_main("layout", run_cases, prefix=True))
