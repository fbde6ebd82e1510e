#!/usr/bin/env python3
"""Builds README.md's Performance section from make bench's results.md.

    python3 tests/bench/readme.py BUILD/bench/results.md README.md

The section replaces the line "<!-- performance -->", or what lies between
"<!-- performance: begin -->" and "<!-- performance: end -->" from an
earlier run.  Only the tables before results.md's CPU breakdown are taken;
the prose around them is below.
"""

import re
import sys

BEGIN = "<!-- performance: begin (make bench-readme) -->"
END = "<!-- performance: end -->"

INTRO = """\
`make bench` (not part of `make check`; about 3 minutes) measures, in one
run on the machine at hand, how fast the receivers are against that
machine's own limits, and writes `$(BUILD)/bench/results.md`; `make
bench-readme` copies its tables here. It builds without sanitizers at -O2
into `$(BUILD)/bench` and measures:

- **the storage ceiling**: `tests/bench/store_ceiling.c` calls the library's own
  `store_record()` in a tight loop, one durable transaction per event, same
  schema, WAL mode, synchronous level and ~2 KB payload;
- **the stack ceiling**: `tests/bench/null.c`, a FastCGI program that reads the
  body and answers 200, under the same lighttpd with the same `max-procs`
  (2);
- **each receiver** through lighttpd, started from the shipped
  `www-config/lighttpd/*.conf`, driven by wrk with `tests/bench/post.lua`:
  distinct, correctly signed ~2 KB events, 10% of them redeliveries, at 1,
  16 and 64 connections; then stripe under plain CGI (mod_cgi, the same
  binary), with `IDEMHOOK_SYNCHRONOUS=NORMAL`, and with
  `IDEMHOOK_MODE=worker` (nothing processed after the answer), which
  prices processing after the answer (the switch records its effect row).

Each run has a fresh store and a fresh lighttpd. *accepted/s* counts the
rows in the store over the run's duration; *p50*/*p99* are wrk's latencies;
*RSS / peak / private* are the largest `VmRSS`, `VmHWM` and private
(`smaps_rollup`) memory of the FastCGI processes after the run. The ratios
divide by the ceilings measured in the same run (the better of the storage
ceiling's two measurements, before and after, at the same synchronous
level; the stack ceiling at the same concurrency). Signed timestamps are
made just before each provider's runs, inside the default 300 s tolerance.
wrk runs on the same two cores, so every figure includes the load
generator's share. Figures move between runs, by tens of percent when
other work shares the machine, as it did during the run below: compare
the ratios, which are taken within one run.

Targets: accepted durable events/s through lighttpd at least 80% of the
storage ceiling; p99 at most 10 ms at 16 connections; at most 4 MiB RSS
per FastCGI process; processing after the answer costs at most 10% of
throughput.
"""


def tables(results):
    """results.md up to its CPU breakdown."""
    cut = results.find("\nCPU per request")
    return (results if cut < 0 else results[:cut]).strip() + "\n"


def section(results, notes):
    body = INTRO + "\n" + tables(results)
    if notes:
        body += "\n" + notes.strip() + "\n"
    return BEGIN + "\n" + body + END


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: readme.py results.md README.md [notes.md]")
    with open(sys.argv[1], encoding="utf-8") as f:
        results = f.read()
    notes = ""
    if len(sys.argv) == 4:
        with open(sys.argv[3], encoding="utf-8") as f:
            notes = f.read()
    with open(sys.argv[2], encoding="utf-8") as f:
        readme = f.read()
    new = section(results, notes)
    if BEGIN in readme and END in readme:
        readme = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END),
                        lambda m: new, readme, count=1, flags=re.S)
    elif "<!-- performance -->" in readme:
        readme = readme.replace("<!-- performance -->", new, 1)
    else:
        sys.exit("readme.py: no <!-- performance --> line in %s"
                 % sys.argv[2])
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(readme)


if __name__ == "__main__":
    main()
