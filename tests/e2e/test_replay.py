#!/usr/bin/env python3
"""End-to-end test of a bulk replay over many large events (issue 24,
item 7): `idemhook replay` makes them due again in bounded batches, each
its own short transaction, so that a receiver recording meanwhile, with a
busy timeout of 1.5 s, is never refused; every event is then processed
exactly once more. SQLite, or PostgreSQL with IH_DB_BACKEND=pg.

And GitHub's held repeats (issue 37, item 4): a body already recorded that
comes again under a new X-GitHub-Delivery is recorded held with its reason,
answered 200, and runs nothing until GitHub's deliveries API (a stand-in)
lists its GUID with its event and action (idemhook work, idemhook catch-up)
or the operator releases it (idemhook replay, the console's Replay, a POST
with the CSRF token); a captured body replayed under a GUID the API does
not list stays held, and idemhook work alerts.

Usage: test_replay.py BINDIR   (or IH_BIN=BINDIR test_replay.py)
"""

import json
import os
import re
import subprocess
import urllib.parse
import uuid
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (SANITIZER_ENV, Server, check, check_eq,  # noqa: E402
                     console_conf, parallel, sign_github, suite_main)
import cases  # noqa: E402
import test_stripe as ts  # noqa: E402
from standins.github import GitHubStandin  # noqa: E402
from test_console import USER, basic_auth, console_settings, operator  # noqa: E402

EVENTS = 32             # events replayed
PAD = 1000 * 1000       # bytes of padding in each: 32 MB in all
BUSY_MS = 1500          # the receiver's busy timeout during the replay


def idemhook(srv, bindir, *args, timeout=300):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IDEMHOOK_DB": srv.db}
    env.update({k: os.environ[k] for k in SANITIZER_ENV if k in os.environ})
    env.update(srv.env)
    p = subprocess.run([os.path.join(bindir, "idemhook")] + list(args), env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    check(p.returncode == 0, "idemhook %s exited %d: %s" % (" ".join(args), p.returncode,
                                                          err[-600:]))
    return out


def runs(srv):
    try:
        with open(os.path.join(srv.tmp, "runs")) as f:
            lines = f.read().split()
    except FileNotFoundError:
        return {}
    n = {}
    for eid in lines:
        n[eid] = n.get(eid, 0) + 1
    return n


def post(srv, eid, etype, pad=0):
    body = ts.SPEC.body(eid, etype, pad=pad)
    return ts.SPEC.post(srv, body, ts.SPEC.headers(srv, body, eid, etype))


def case_bulk_replay(srv, bindir, tap):
    ids = [ts.SPEC.new_id("bulk%02d" % i) for i in range(EVENTS)]
    res = parallel(4, lambda k: [post(srv, e, "test.bulk", PAD) for e in ids[k::4]],
                   timeout=600)
    for r in res:
        check(not isinstance(r, Exception), "delivery raised %r" % (r,))
        for x in r:
            cases.expect_accepted(x, "a large delivery")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if all(srv.rows("stripe", e)[0]["status"] == "done" for e in ids):
            break
        idemhook(srv, bindir, "work", "--once")
    check(all(srv.rows("stripe", e)[0]["status"] == "done" for e in ids),
          "not every event is done before the replay")
    check_eq(set(runs(srv).get(e, 0) for e in ids), {1}, "action runs before the replay")

    # Deliveries during the replay, one after the other, each timed.
    seen, stop = [], threading.Event()

    def deliver():
        while not stop.is_set():
            t0 = time.monotonic()
            r = post(srv, ts.SPEC.new_id("during"), "charge.created")
            seen.append((r.status, time.monotonic() - t0, r.body[:200]))
    th = threading.Thread(target=deliver)
    th.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    out = idemhook(srv, bindir, "replay", "--status", "done", "--type", "test.bulk")
    took = time.monotonic() - t0
    time.sleep(0.3)
    stop.set()
    th.join(60)
    line = [x for x in out.splitlines() if "requeued" in x]
    tap.diag("replay of %d events of %d kB: %.2f s; %s; %d deliveries meanwhile, slowest "
             "%.3f s" % (EVENTS, PAD // 1000, took, line[-1] if line else out[-200:],
                         len(seen), max([s[1] for s in seen] or [0])))
    bad = [s for s in seen if s[0] != 200]
    check(seen and not bad, "deliveries during the replay refused: %r" % bad[:3])
    check(line and line[-1].startswith("%d event(s) requeued in " % EVENTS),
          "replay output: %r" % out[-300:])
    batches = int(line[-1].split(" in ")[1].split()[0])
    check(batches >= EVENTS * PAD // (2 * 1024 * 1024),
          "%d transactions for %d MB" % (batches, EVENTS * PAD // 1000000))

    # Each replayed event is processed exactly once more (the receiver's
    # drain may already have taken some of them).
    for e in ids:
        row = srv.rows("stripe", e)[0]
        check(row["status"] in ("received", "processing", "done"),
              "%s is %s after the replay" % (e, row["status"]))
        if row["status"] == "received":
            check_eq(row["attempts"], 0, "attempts of a replayed event")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        idemhook(srv, bindir, "work", "--once")
        if all(srv.rows("stripe", e)[0]["status"] == "done" for e in ids):
            break
    n = runs(srv)
    check_eq(sorted(set(n.get(e, 0) for e in ids)), [2], "action runs per event after "
             "the replay (once before, once replayed)")
    out = idemhook(srv, bindir, "replay", "--status", "done", "--type", "test.bulk",
                   "--dry-run")
    check("%d event(s) would be requeued" % EVENTS in out, "dry run after: %r" % out[-200:])


GH_TOKEN = "github_pat_11Replay" + "Hx3" * 10
GH_SCOPE = "orgs/octo-org"
GH_HOOK = "41000001"
REPEATS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures",
                       "octokit_repeats.json")
CONSOLE = "/hooks/console"


def ih(srv, bindir, *args, env=None):
    """idemhook with the store's settings: (exit code, stdout, stderr)."""
    e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IDEMHOOK_DB": srv.db}
    e.update({k: os.environ[k] for k in SANITIZER_ENV if k in os.environ})
    e.update(srv.env)
    e.update(env or {})
    p = subprocess.run([os.path.join(bindir, "idemhook")] + list(args), env=e,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    check("Sanitizer" not in err and "runtime error" not in err, "sanitizer: %s" % err[-800:])
    return p.returncode, out, err


def gh_deliver(srv):
    def deliver(hook_id, guid, event, body, redelivery):
        h = {"X-GitHub-Event": event, "X-GitHub-Delivery": guid, "X-GitHub-Hook-ID": hook_id,
             "X-GitHub-Hook-Installation-Target-Type": "organization",
             "X-GitHub-Hook-Installation-Target-ID": "1000001",
             "User-Agent": "GitHub-Hookshot/b8c71d8", "Content-Type": "application/json",
             "X-Hub-Signature-256": sign_github(srv.secrets["github"], body)}
        return srv.post(srv.url("github"), body, h)
    return deliver


def gh_status(srv, guid):
    rows = srv.rows("github", "%s:%s" % (GH_HOOK, guid))
    return rows[0]["status"] if rows else None


def gh_settle(srv, bindir, guids, want="done"):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if all(gh_status(srv, g) == want for g in guids):
            return
        ih(srv, bindir, "work", "--once")
        time.sleep(0.1)
    check(False, "not %s: %r" % (want, [(g, gh_status(srv, g)) for g in guids]))


def case_github_held(srv, bindir, auth):
    with open(REPEATS) as f:
        example = json.load(f)["examples"]["membership"]
    body = cases.dumps_pretty(example)
    deliver = gh_deliver(srv)
    api = GitHubStandin(GH_TOKEN, lambda *a: deliver(*a).status).start()
    try:
        api.add_hook(GH_SCOPE, GH_HOOK, srv.url("github"))
        env = {"IDEMHOOK_GITHUB_API_KEY": GH_TOKEN, "IDEMHOOK_GITHUB_API_BASE": api.base,
               "IDEMHOOK_GITHUB_HOOKS": "%s/%s" % (GH_SCOPE, GH_HOOK)}
        held_cases(srv, bindir, auth, api, env, body, deliver)
    finally:
        api.stop()


def send(api, deliver, guid, body, event="membership", listed=True):
    """One delivery of body under guid; GitHub lists it when listed."""
    r = deliver(GH_HOOK, guid, event, body, False)
    if listed:
        api.attempt(GH_SCOPE, GH_HOOK, guid, event, body, r.status, time.time())
    return r


def held_cases(srv, bindir, auth, api, env, body, deliver):
    g = {k: "%08x-0000-4000-8000-%012x" % (int.from_bytes(os.urandom(4), "big"), i)
         for i, k in enumerate(("first", "again", "captured", "other", "later"))}
    eid = {k: "%s:%s" % (GH_HOOK, v) for k, v in g.items()}
    cases.expect_accepted(send(api, deliver, g["first"], body), "the first removal")
    gh_settle(srv, bindir, [g["first"]])
    # The same removal again (GitHub lists it), a captured body replayed
    # under a GUID GitHub never used, and under one it used for another
    # event (issues): each 200, recorded held, nothing run.
    cases.expect_accepted(send(api, deliver, g["again"], body), "the second removal")
    cases.expect_accepted(send(api, deliver, g["captured"], body, listed=False),
                          "a captured body under a fake GUID")
    other = cases.dumps_pretty({"action": "opened", "issue": {"id": 7, "number": 1}})
    api.attempt(GH_SCOPE, GH_HOOK, g["other"], "issues", other, 200, time.time())
    cases.expect_accepted(send(api, deliver, g["other"], body, listed=False),
                          "a captured body under another event's GUID")
    for k in ("again", "captured", "other"):
        row = srv.rows("github", eid[k])[0]
        check_eq((row["status"], row["attempts"]), ("held", 0), k)
        check(row["last_error"].startswith("same body as membership event %s" % eid["first"]),
              "%s: reason %r" % (k, row["last_error"]))
    rc, out, err = ih(srv, bindir, "list", "--provider", "github", "--status", "held")
    check(rc == 0 and all(g[k] in out for k in ("again", "captured", "other")) and
          out.count("    held: same body as membership event") == 3, "list: %r" % out)
    rc, out, err = ih(srv, bindir, "list", "--provider", "github", "--status", "held", "--json")
    check_eq(sorted(x["event_id"] for x in json.loads(out)),
             sorted(eid[k] for k in ("again", "captured", "other")), "list --json")
    rc, out, err = ih(srv, bindir, "show", "github", eid["captured"])
    check(rc == 0 and re.search(r"^held:?\s+same body as membership event", out, re.M),
          "show: %r" % out[:600])
    rc, out, err = ih(srv, bindir, "stats", "--provider", "github", "--json")
    check_eq(json.loads(out)["providers"][0]["held"], 3, "stats --json held")

    # idemhook work asks GitHub's deliveries API: the listed one is
    # released and processed once; the others stay held, and it alerts.
    alert = os.path.join(srv.tmp, "alert.txt")
    act = dict(env, IDEMHOOK_ALERT_ACTION='{ echo "$IDEMHOOK_ALERT_REASON '
               '$IDEMHOOK_PROVIDER"; cat; } >> %s' % alert)
    rc, out, err = ih(srv, bindir, "work", "--once", env=act)
    check_eq(rc, 0, "work: %s" % err[-400:])
    gh_settle(srv, bindir, [g["again"]])
    check_eq([gh_status(srv, g[k]) for k in ("captured", "other")], ["held", "held"],
             "not listed by GitHub (or as another event): still held")
    with open(alert) as f:
        text = f.read()
    check(text.startswith("held github\n") and "holds 2 events (2 of them a body "
          "already recorded" in text, "alert: %r" % text)
    # idemhook catch-up releases a repeat GitHub lists, too.
    cases.expect_accepted(send(api, deliver, g["later"], body), "a third removal")
    check_eq(gh_status(srv, g["later"]), "held", "the third removal before catch-up")
    rc, out, err = ih(srv, bindir, "catch-up", "--provider", "github", "--since", "1h",
                      "--json", env=env)
    r = json.loads(out)[0]
    check_eq((rc, r["released"], r["asked"]), (3, 1, 0), "catch-up: %r %s" % (r, err[-300:]))
    gh_settle(srv, bindir, [g["later"]])
    rc, out, err = ih(srv, bindir, "catch-up", "--provider", "github", "--since", "1h",
                      "--json", env=env)
    check_eq((rc, json.loads(out)[0]["released"]), (0, 0), "catch-up again: %s" % out)
    check_eq([gh_status(srv, g[k]) for k in ("captured", "other")], ["held", "held"],
             "after catch-up")

    # The operator's word: idemhook replay, and the console's Replay.
    rc, out, err = ih(srv, bindir, "replay", "github", eid["captured"])
    check_eq(rc, 0, "replay: %s" % err[-300:])
    gh_settle(srv, bindir, [g["captured"]])
    page = CONSOLE + "/events/github/" + urllib.parse.quote(eid["other"], safe="")
    r = srv.get(page, {"Authorization": auth})
    check_eq(r.status, 200, "event page")
    check(b'id="held"' in r.body and b"same body as membership event" in r.body,
          "the page shows no reason: %r" % r.body[-1200:])
    m = re.search(rb'name="csrf" value="([^"]+)"', r.body)
    check(m is not None, "no Replay form on the held event's page")
    form = {"provider": "github", "account": "default", "event_id": eid["other"],
            "csrf": m.group(1).decode()}
    r = srv.post(CONSOLE + "/replay", urllib.parse.urlencode(form).encode(), {
        "Authorization": auth, "Origin": "http://127.0.0.1:%d" % srv.port,
        "Content-Type": "application/x-www-form-urlencoded"})
    check(r.status in (200, 303), "console replay: %d %r" % (r.status, r.body[:300]))
    gh_settle(srv, bindir, [g["other"]])
    n = runs(srv)
    check_eq([n.get(eid[k], 0) for k in g], [1] * 5, "action runs per event")


def case_held_cap(srv, bindir):
    """A captured body replayed under ever new GUIDs fills no store: past 32
    held with one body, the next is answered 503 (never 2xx: it is stored
    nowhere); once one is released, the same delivery is held again."""
    with open(REPEATS) as f:
        body = cases.dumps_pretty(json.load(f)["examples"]["org_block"])
    deliver = gh_deliver(srv)
    guids = [str(uuid.uuid4()) for _ in range(34)]
    cases.expect_accepted(deliver(GH_HOOK, guids[0], "org_block", body, False), "first")
    gh_settle(srv, bindir, guids[:1])
    for g in guids[1:33]:
        cases.expect_accepted(deliver(GH_HOOK, g, "org_block", body, False), "a repeat")
    check_eq([gh_status(srv, g) for g in guids[1:33]], ["held"] * 32, "held")
    r = deliver(GH_HOOK, guids[33], "org_block", body, False)
    check_eq((r.status, (r.json() or {}).get("error")), (503, "held_full"),
             "the 33rd: %r" % r.body[:300])
    check_eq(gh_status(srv, guids[33]), None, "the 33rd is stored nowhere")
    rc, out, err = ih(srv, bindir, "replay", "github", "%s:%s" % (GH_HOOK, guids[1]))
    check_eq(rc, 0, "replay: %s" % err[-300:])
    cases.expect_accepted(deliver(GH_HOOK, guids[33], "org_block", body, False),
                          "the 33rd again, once one is released")
    check_eq(gh_status(srv, guids[33]), "held", "the 33rd, now")


def run_cases(tap, bindir, servers):
    srv = Server(bindir, providers=["stripe"], name="replay", max_procs=1)
    srv.env.update({
        "IDEMHOOK_BUSY_TIMEOUT_MS": str(BUSY_MS),
        "IDEMHOOK_STRIPE_ACTION":
            "test.bulk /bin/sh -c 'echo $IDEMHOOK_EVENT_ID >> %s/runs'" % srv.tmp,
    })
    servers.add(srv)
    if tap.run("lighttpd starts (busy timeout %d ms, an action per event)" % BUSY_MS,
               srv.start):
        tap.run("bulk replay of %d events of %d kB: several short transactions, "
                "deliveries meanwhile all 200, each event processed exactly once more"
                % (EVENTS, PAD // 1000), case_bulk_replay, srv, bindir, tap)
        tap.run("no sanitizer reports", cases.case_sanitizers, srv)
        srv.stop()

    password, hsh = operator(bindir)
    gh = Server(bindir, providers=["github"], name="held")
    gh.env.update({"IDEMHOOK_GITHUB_ACTION":
                   "* /bin/sh -c 'cat >/dev/null; echo $IDEMHOOK_EVENT_ID >> %s/runs'" % gh.tmp})
    settings = console_settings(gh, hsh)
    gh.extra_conf = "\n".join(console_conf(settings, gh.settings_file()))
    servers.add(gh)
    if tap.run("lighttpd starts (github, an action per event, the console)", gh.start):
        tap.run("github: a body again under a new GUID is held, 200, runs nothing; "
                "released once the deliveries API lists it (work, catch-up), or by the "
                "operator (replay, the console); a captured body under a fake GUID stays "
                "held and alerts", case_github_held, gh, bindir,
                basic_auth(USER, password))
        tap.run("github: past 32 held with one body, a repeat is refused 503 and stored "
                "nowhere; held again once one is released", case_held_cap, gh, bindir)
        tap.run("no sanitizer reports (github)", cases.case_sanitizers, gh)
        gh.stop()


if __name__ == "__main__":
    sys.exit(suite_main("replay", run_cases, prefix=True))
