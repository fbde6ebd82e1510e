#!/usr/bin/env python3
"""Load end to end: deliveries across all five providers through lighttpd,
20% of them duplicates (half of those sent concurrently with their
original), over 32 connections.

Usage: test_load.py BINDIR   (or IH_BIN=BINDIR test_load.py)
       IH_LOAD_EVENTS=10000 test_load.py BINDIR   (make soak; default 1000)
       IH_LOAD_SYNC=NORMAL, IH_LOAD_NO_ACTIONS=1, IH_LOAD_SEED=N: variants

Afterwards, with 'idemhook work --once' having drained what was left:
every answer is 200, each distinct event got exactly one "accepted", the
store holds one row per distinct event (none lost, none doubled), every
event is done, and the action (appending the event id to a file) ran once
per distinct event.  The figures are printed as '#' lines.
"""

import os
import queue
import random
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import PROVIDERS, Server, check, suite_main  # noqa: E402
import reliability as R  # noqa: E402

CONNECTIONS = 32
DUP_SHARE = 0.20


def plan(n, rng):
    """The deliveries to send: (provider, eid, body) in sending order, and
    the distinct events.  A concurrent duplicate sits next to its original,
    so two connections carry the two copies at the same moment."""
    dups = int(round(n * DUP_SHARE))
    distinct = n - dups
    events = []
    for i in range(distinct):
        p = PROVIDERS[i % len(PROVIDERS)]
        eid = R.new_eid(p, "load%d" % i)
        events.append((p, eid, R.body_for(p, eid)))
    order = [[e] for e in events]
    concurrent = dups // 2
    for k in rng.sample(range(distinct), concurrent):
        order[k].append(events[k])  # right after its original
    flat = [d for group in order for d in group]
    for _ in range(dups - concurrent):  # later redeliveries, anywhere after
        e = rng.choice(events)
        i = flat.index(e)
        flat.insert(rng.randint(i + 1, len(flat)), e)
    return flat, events, concurrent


def run_load(bindir, servers, tap, n):
    rng = random.Random(int(os.environ.get("IH_LOAD_SEED", "7")))
    tmp = servers_tmp()
    actions = os.path.join(tmp, "actions.log")
    env = R.action_env(actions) if not os.environ.get("IH_LOAD_NO_ACTIONS") else {}
    env["IDEMHOOK_BUSY_TIMEOUT_MS"] = "30000"
    if os.environ.get("IH_LOAD_SYNC"):
        env["IDEMHOOK_SYNCHRONOUS"] = os.environ["IH_LOAD_SYNC"]
    srv = servers.add(Server(bindir, name="load", env=env))
    srv.start()
    check(sorted(srv.providers) == sorted(PROVIDERS),
          "every provider must be served, got %r" % srv.providers)
    sends, events, concurrent = plan(n, rng)
    q = queue.Queue()
    for i, d in enumerate(sends):
        q.put((i, d))
    answers = [None] * len(sends)
    latency = [0.0] * len(sends)

    def worker():
        while True:
            try:
                i, (p, eid, body) = q.get_nowait()
            except queue.Empty:
                return
            d = R.delivery(srv, p, eid=eid, body=body)
            t0 = time.monotonic()
            try:
                r = d.post(srv, timeout=120)
                answers[i] = (r.status, (r.json() or {}).get("status"))
            except Exception as e:  # noqa: BLE001 - counted as a failure
                answers[i] = ("exception", repr(e)[:200])
            latency[i] = time.monotonic() - t0

    t0 = time.monotonic()
    threads = [threading.Thread(target=worker, daemon=True) for _ in range(CONNECTIONS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    took = time.monotonic() - t0
    check(all(a is not None for a in answers), "some deliveries never finished")
    # Let the receivers finish what they process after answering, then
    # drain whatever is left (events whose processing was never started).
    # A receiver may claim an event just as the command looks, so repeat
    # until nothing is being processed and nothing is left undone.
    undone = "SELECT 1 FROM events WHERE status NOT IN ('done', 'dead') LIMIT 1"
    busy = "SELECT 1 FROM events WHERE status = 'processing' LIMIT 1"
    for _ in range(5):
        R.wait_for(lambda: not R.query(srv.db, busy), timeout=60, step=0.2)
        R.work_once(bindir, srv)
        time.sleep(0.5)
        if not R.query(srv.db, undone):
            break

    # Figures.
    by = {}
    for a in answers:
        by[a] = by.get(a, 0) + 1
    five = sum(v for (s, _), v in by.items() if isinstance(s, int) and s >= 500)
    other = {a: v for a, v in by.items() if a not in ((200, "accepted"), (200, "duplicate"))}
    accepted = {}
    for i, a in enumerate(answers):
        if a == (200, "accepted"):
            k = (sends[i][0], R.db_id(sends[i][0], sends[i][1]))
            accepted[k] = accepted.get(k, 0) + 1
    keys = [(p, R.db_id(p, eid)) for p, eid, _ in events]
    rows = R.query(srv.db, "SELECT provider, event_id, status, duplicates FROM events")
    for p, eid, status, attempts, err in R.query(
            srv.db, "SELECT provider, event_id, status, attempts, last_error FROM events "
            "WHERE status != 'done' LIMIT 5"):
        tap.diag("load: not done: %s %s status=%s attempts=%s last_error=%r"
                 % (p, eid, status, attempts, err))
    stored = {}
    for p, eid, status, dup in rows:
        stored[(p, eid)] = stored.get((p, eid), []) + [(status, dup)]
    lost = [k for k in keys if k not in stored]
    doubled = [k for k, v in stored.items() if len(v) > 1]
    not_done = [k for k, v in stored.items() if v[0][0] != "done"]
    runs = R.action_runs(actions)
    never_run = [k for k in keys if runs.get(k, 0) == 0]
    ran_twice = {k: v for k, v in runs.items() if v > 1}
    acc_wrong = [k for k in keys if accepted.get(k, 0) != 1]
    dup_sum = sum(v[0][1] for v in stored.values())
    lat = sorted(latency)
    pct = lambda q_: lat[min(len(lat) - 1, int(q_ * len(lat)))] * 1000  # noqa: E731
    tap.diag("load: %d deliveries (%d distinct events, %d duplicates of which %d "
             "concurrent) over %d connections to %d providers in %.1f s = %.0f req/s; "
             "latency p50 %.0f ms, p99 %.0f ms, max %.0f ms"
             % (len(sends), len(events), len(sends) - len(events), concurrent,
                CONNECTIONS, len(PROVIDERS), took, len(sends) / took, pct(0.5),
                pct(0.99), lat[-1] * 1000))
    tap.diag("load: answers %r; rows %d; duplicates counted %d; actions run %d; "
             "5xx %d; events lost %d; rows doubled %d; not done %d"
             % ({"%s %s" % a: v for a, v in by.items()}, len(rows), dup_sum,
                sum(runs.values()), five, len(lost), len(doubled), len(not_done)))
    return dict(five=five, other=other, lost=lost, doubled=doubled, not_done=not_done,
                never_run=never_run, ran_twice=ran_twice, acc_wrong=acc_wrong,
                rows=len(rows), distinct=len(events), dup_sum=dup_sum,
                dups=len(sends) - len(events), runs=sum(runs.values()), srv=srv)


_TMP = []


def servers_tmp():
    if not _TMP:
        import tempfile
        _TMP.append(tempfile.mkdtemp(prefix="ih-load-"))
    return _TMP[0]


def run_cases(tap, bindir, servers):
    n = int(os.environ.get("IH_LOAD_EVENTS", "1000"))
    res = {}
    try:
        if not tap.run("load: %d deliveries, 20%% duplicates, %d connections, all five "
                       "providers, then idemhook work --once" % (n, CONNECTIONS),
                       lambda: res.update(run_load(bindir, servers, tap, n))):
            return
        t = tap.run
        t("load: no 5xx answer", lambda: check(
            res["five"] == 0, "%d answers were 5xx" % res["five"]))
        t("load: every answer 200 accepted or duplicate", lambda: check(
            not res["other"], "other answers: %r" % res["other"]))
        t("load: each distinct event answered 'accepted' exactly once", lambda: check(
            not res["acc_wrong"], "%d events accepted 0 or 2+ times, e.g. %r"
            % (len(res["acc_wrong"]), res["acc_wrong"][:3])))
        t("load: rows == distinct events (events lost = 0, none doubled)", lambda: check(
            res["rows"] == res["distinct"] and not res["lost"] and not res["doubled"],
            "rows %d, distinct %d, lost %d (e.g. %r), doubled %d"
            % (res["rows"], res["distinct"], len(res["lost"]), res["lost"][:3],
               len(res["doubled"]))))
        t("load: duplicates counted == duplicate deliveries", lambda: check(
            res["dup_sum"] == res["dups"], "sum(duplicates) %d, duplicate deliveries %d"
            % (res["dup_sum"], res["dups"])))
        t("load: every event done after idemhook work --once", lambda: check(
            not res["not_done"], "%d not done, e.g. %r"
            % (len(res["not_done"]), res["not_done"][:3])))
        t("load: actions run == distinct events, each once", lambda: check(
            res["runs"] == res["distinct"] and not res["never_run"]
            and not res["ran_twice"], "runs %d, distinct %d, never run %d, twice %d"
            % (res["runs"], res["distinct"], len(res["never_run"]),
               len(res["ran_twice"]))))
        t("load: no sanitizer reports", lambda: check(
            not res["srv"].sanitizer_reports(), "%r" % res["srv"].sanitizer_reports()))
    finally:
        if _TMP:
            import shutil
            shutil.rmtree(_TMP[0], ignore_errors=True)


if __name__ == "__main__":
    sys.exit(suite_main("load", run_cases))
