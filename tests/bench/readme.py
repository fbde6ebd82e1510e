#!/usr/bin/env python3
"""Builds tests/bench/README.md's Performance section from make bench's
results.md (the main README keeps only a summary and a link, issue 38).

    python3 tests/bench/readme.py BUILD/bench/results.md tests/bench/README.md \
        [tests/bench/notes.md]

The chart that results.md links (chart.svg, beside it) is copied to
tests/bench/chart.svg by make bench-readme, beside the notebook.

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
`make bench` (not part of `make check`; about 7 minutes) measures, in one
run on the machine at hand, how fast the receivers are against that
machine's own limits, and writes `$(BUILD)/bench/results.md` and
`$(BUILD)/bench/chart.svg`; `make bench-readme` copies its tables here and
the chart to `tests/bench/chart.svg`. It builds without sanitizers at -O2
into `$(BUILD)/bench`, starts the servers with the end-to-end tests' own
launchers (`tests/e2e/harness.py`) and signs the events with the tests'
provider specs, and measures:

- **the storage ceiling**: `tests/bench/store_ceiling.c` calls the
  library's own `store_record()` in a tight loop, one durable transaction
  per event, same schema, WAL mode, synchronous level and ~2 KB payload,
  from one process and from several at once;
- **the stack ceiling**: `tests/bench/null.c`, a FastCGI program that
  reads the body and answers 200, under the same server with the same
  process settings (lighttpd's `max-procs` 1; Apache's shipped
  `vhost.conf`);
- **each receiver** through lighttpd, started from the shipped
  `www-config/lighttpd/*.conf`, driven by wrk with `tests/bench/post.lua`:
  distinct, correctly signed ~2 KB events, 10% of them redeliveries, at 1,
  16 and 64 connections; then stripe under plain CGI (mod_cgi, the same
  binary, and at 16 connections the `make static` build, which the
  shared-hosting recipe installs), with `IDEMHOOK_SYNCHRONOUS=NORMAL`, and with
  `IDEMHOOK_MODE=worker` (nothing processed after the answer), which
  prices processing after the answer (the switch records its effect row);
- **Apache with mod_fcgid**: a real `apache2` with the shipped
  `www-config/apache/vhost.conf`, stripe and the null program at 4 and 16
  connections after a warm-up that starts mod_fcgid's processes as a
  burst would; stripe with `IDEMHOOK_SYNCHRONOUS=SHARED` (one fdatasync
  for the commits of several processes); and stripe with the 4 processes
  shipped before;
- **PostgreSQL**: its own ceilings (from 1, 2 and 16 processes at once,
  the last like `pgbench -c 16`) and stripe against it; and two hosts:
  two lighttpd instances on one database, as `test_pg_hosts` starts them,
  each driven by a wrk of its own at 16 connections with events of its
  own; for each, the server's CPU per accepted event (per event in its
  own loop) beside the receivers' and the machine's busy share of its
  cores, which tells a database, CPU or latency limit apart;
- **growth** (`make bench BENCH_GROWTH=1000000`): stripe at 16
  connections on a SQLite store and on a PostgreSQL database that already
  hold that many done events, filled through the library
  (`store_ceiling -F`: recorded, claimed and completed, each with the
  payment_intent object it sets and that object's history, random
  Stripe-like ids, 512-byte payloads, 2,000 per transaction; about 1.3 GB
  for SQLite), against the same run on an empty store
  (`BENCH_OPTS=--growth-only` runs just these pairs);
- **memory** (`tests/bench/big_rss.py`): a signed 32 MiB event of each
  provider, recorded and processed, and the peak RSS (`VmHWM`, or GNU
  time's for a process that exits) of each FastCGI program behind
  lighttpd, of the same program as plain CGI, and of `idemhook work
  --once` processing it, on SQLite (every provider) and on PostgreSQL
  (stripe), divided by the body (`--no-memory` leaves it out);
- **the reference** (issue 40): `tests/bench/reference.c`, a minimal
  Stripe receiver of idemhook's own design (request threads verify, one
  writer inserts each batch under a unique constraint and commits it with
  one fsync; no headers, attempts, objects or switch), run as
  `stripe.fcgi` under the same shipped configuration with the same
  requests at 16 connections, then stripe at its defaults and in worker
  mode once more beside it; the issue's targets are ratios to it
  (`BENCH_OPTS='--runs reference:16 stripe:16 stripe:16::worker'`: just
  those three).
- **accounts** (issue 29; `BENCH_OPTS=--no-accounts` leaves them out):
  stripe at 16 connections with 1 account and with 100, each through its
  own URL and secret and otherwise the same requests
  (`tests/bench/accounts.py`, which `make bench-accounts` runs longer),
  four 3 s runs in the order 1, 100, 100, 1, and the instructions per
  request of each from callgrind, which no other load blurs.
- **forwarding** (issue 41; `BENCH_OPTS=--no-forward` leaves it out):
  stripe under lighttpd at 16 connections with
  `IDEMHOOK_STRIPE_FORWARD_URL` set to a local application that answers
  200 at once (node's http server, else Python's), each receiver
  forwarding every event after its answer (`tests/bench/forward_rate.py`).
  It reports received/s (the rows first received during wrk's run, over
  its duration) against forwarded/s (those rows, over the time from the
  run's start to the last one's `done_at`), the drain after wrk stopped,
  and the answer's p99. No -O2 run on the reference machine is recorded;
  a sanitizer build on the shared 2-core machine gave 448 received
  and 145 forwarded per second (the last delivered 6.4 s after a 3 s
  run), which shows only that it runs.

Four more targets count work instead of timing it, so that a loaded
machine does not blur them: `make bench-pages` (WAL pages, bytes and
fsyncs per event from strace, with the receiver's and lighttpd's system
calls, by name with `pages.py --calls`, instructions per event from
callgrind:
stripe.fcgi, or `BENCH_PAGES_PROVIDER`'s program with its own events,
behind lighttpd, one event per commit), `make bench-pg-trips`
(the same on a throwaway PostgreSQL cluster: round trips per event, as
the receiver's `sendto` calls, the SAVEPOINTs they carry, and the
server's statements per event, from `pg_stat_statements` when it is
installed; `pages.py --objects K` has the events update K objects
instead of each inserting its own), `make bench-pg-cost` (the PostgreSQL
server's instructions per event: callgrind on the throwaway cluster's
backends, 20 and 120 events one at a time; `BENCH_PG_COST_OPTS='--objects
1'` or `'--statements'`, each statement's calls, plans and times) and
`make bench-cgi` (one plain CGI
delivery, of the dynamic and the `make static` build: its instructions,
where they go, and its system calls; then one more after 60 deliveries
one at a time, with the size of the `-wal` file).

Each run has a fresh store and a fresh server. *accepted/s* counts the
rows first received during the run over its duration; *p50*/*p99* are
wrk's latencies; *CPU µs / accepted* is the FastCGI processes' user and
system time (`/proc/PID/stat`, before and after the run) per accepted
event; *RSS / peak / private* are the largest `VmRSS`, `VmHWM` and private
(`smaps_rollup`) memory of the FastCGI processes after the run. The
ratios divide by the ceilings measured in the same run (the better of the
storage ceiling's two measurements, before and after, at the same
synchronous level; PostgreSQL's 16-process ceiling at 16 connections and
more; the stack ceiling of the same server at the same concurrency).
Signed timestamps are made just before each provider's runs, inside the
default 300 s tolerance. wrk runs on the same two cores, so every figure
includes the load generator's share. Figures move between runs, by tens
of percent when other work shares the machine: compare the ratios, which
are taken within one run.

Targets (issues 17 and 27), each reported with its ratio in the table
below the ceilings: SQLite, stripe through lighttpd at 16 connections,
accepted durable events/s at least 2.5× the storage ceiling and 0.75×
the null stack ceiling; the receivers' CPU per accepted event at most 4×
the null program's per request; p99 at most 10 ms; at most 4 MiB private
memory per FastCGI process; processing after the answer costs at most
10% against `worker` mode. PostgreSQL: at least 0.8× its own 16-writer
ceiling at p99 ≤ 20 ms, and two hosts at least 1.6× one host (or the
ceiling, the lower). Apache mod_fcgid with the shipped vhost: at least
1× the storage ceiling at p99 ≤ 20 ms. Plain CGI: at least 0.5× the null
CGI program. Growth: a store of 1,000,000 events at least 0.8× an empty
one, on both backends. Accounts: 100 accounts within 5% of 1 account in
accepted events/s and in CPU per event (medians of the alternating runs).
Memory: a signed 32 MiB event, recorded and
processed, at most 1.5× the body in peak RSS, every program, both
backends.
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
        sys.exit("usage: readme.py results.md tests/bench/README.md [notes.md]")
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
