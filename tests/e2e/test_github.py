#!/usr/bin/env python3
"""End-to-end tests of github.fcgi behind lighttpd (shipped config).

Usage: test_github.py BINDIR   (or IH_BIN=BINDIR test_github.py)
Prints 'ok - ...' / 'not ok - ...: reason' lines; exits 1 if any failed.

The store keys a GitHub event on "<X-GitHub-Hook-ID>:<X-GitHub-Delivery>":
one delivery GUID reaches every hook subscribed to the event.
"""

import contextlib
import json
import os
import sys
import time
import urllib.parse
import uuid

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (check, check_eq, check_vector, sign_github,  # noqa: E402
                     sign_github_sha1)
import cases  # noqa: E402
from cases import (UNKNOWN_EFFECT, as_bytes, dumps_pretty, effects,  # noqa: E402
                   expect_accepted, expect_duplicate, expect_error, no_row, one_row)

UA = "GitHub-Hookshot/044aadd"
HOOK_ID = "460998114"
FORM = "application/x-www-form-urlencoded"

# The suite's own folder, where a push action (a deploy) writes a line per
# run: a push body re-sent under new GUIDs must add none.
ACTION_DIR = cases.action_folder("github")
DEPLOY_OUT = os.path.join(ACTION_DIR, "deploy.out")
DEPLOY_ACTION = cases.echo_action("push", DEPLOY_OUT)
# The events of GitHub's own examples that repeat byte for byte (their
# types begin with g, m, o or s): a line per run.
REPEATS_OUT = os.path.join(ACTION_DIR, "repeats.out")
REPEATS_ACTION = cases.echo_action("[gmos]*", REPEATS_OUT)
REPEATS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures",
                       "octokit_repeats.json")


class GithubSpec(cases.Spec):
    name = "github"
    default_type = "push"

    def new_id(self, tag):
        return str(uuid.uuid4())  # X-GitHub-Delivery is a GUID

    def db_event_id(self, event_id, hook_id=HOOK_ID):
        return "%s:%s" % (hook_id, event_id)

    def body(self, event_id, event_type, pad=0, action=None):
        obj = {
            "ref": "refs/heads/main",
            "before": "0" * 40,
            "after": os.urandom(20).hex(),
            "repository": {"id": 1296269, "full_name": "octocat/Hello-World",
                           "private": False},
            "pusher": {"name": "octocat", "email": "octocat@github.com"},
            "head_commit": {"message": "Caf\u00e9 \u2713" + ("x" * pad)},
            "sender": {"login": "octocat", "id": 1},
        }
        if action is not None:
            # Real bodies of distinct events differ (ids, timestamps).
            obj = {"action": action, "issue": {"number": 1347, "title": "Found a bug",
                                               "id": int.from_bytes(os.urandom(6), "big")},
                   "repository": obj["repository"], "sender": obj["sender"]}
        return dumps_pretty(obj)

    def base_headers(self, event_id, event_type, hook_id=HOOK_ID):
        return {"X-GitHub-Event": event_type, "X-GitHub-Delivery": event_id,
                "X-GitHub-Hook-ID": hook_id,
                "X-GitHub-Hook-Installation-Target-Type": "repository",
                "X-GitHub-Hook-Installation-Target-ID": "1296269",
                "User-Agent": UA}

    def headers(self, server, body, event_id, event_type, secret=None,
                hook_id=HOOK_ID):
        h = self.base_headers(event_id, event_type, hook_id)
        h["X-Hub-Signature-256"] = sign_github(secret or server.secrets["github"], body)
        return h

    def unsigned_headers(self, server, body, event_id, event_type):
        return self.base_headers(event_id, event_type)

    def forged_headers(self, server, body, event_id, event_type):
        h = self.base_headers(event_id, event_type)
        h["X-Hub-Signature-256"] = "sha256=" + os.urandom(32).hex()
        return h


SPEC = GithubSpec()
post = SPEC.post


# ---------------------------------------------------------------- cases

def vectors():
    check_vector("github")
    check_vector("github-octokit")


def processed(srv):
    """Accepted, stored byte-identical, then processed to 'done'."""
    row = cases.case_processed(SPEC, srv)
    check(row["subtype"] is None, "push has no action, got subtype %r" % row["subtype"])


def json_action(srv):
    """The body's action is the subtype."""
    eid = SPEC.new_id("act")
    body = SPEC.body(eid, "issues", action="opened")
    expect_accepted(post(srv, body, SPEC.headers(srv, body, eid, "issues")))
    row = one_row(srv, SPEC, eid)
    check_eq(row["event_type"], "issues", "event_type")
    check_eq(row["subtype"], "opened", "subtype")


def form_body(srv, content_type=FORM):
    """application/x-www-form-urlencoded: payload=<urlencoded JSON>, the
    signature over the raw form body."""
    eid = SPEC.new_id("form")
    payload = SPEC.body(eid, "issues", action="labeled").decode("utf-8")
    body = urllib.parse.urlencode({"payload": payload}).encode("ascii")
    check(body.startswith(b"payload=%7B"), "form body built wrongly: %r" % body[:20])
    h = SPEC.headers(srv, body, eid, "issues")
    h["Content-Type"] = content_type
    expect_accepted(post(srv, body, h), "form-encoded delivery (%s)" % content_type)
    row = cases.wait_status(SPEC, srv, SPEC.db_event_id(eid))
    check_eq(as_bytes(row["payload"]), body, "stored payload (the raw form body)")
    check_eq(row["event_type"], "issues", "event_type")
    check_eq(row["subtype"], "labeled", "subtype from the form's payload JSON")
    expect_duplicate(post(srv, body, h), "redelivery of the form body")


def form_signed_over_json(srv):
    """A form whose signature covers the decoded JSON, not the raw form: 401."""
    eid = SPEC.new_id("formjson")
    payload = SPEC.body(eid, "issues", action="opened")
    body = urllib.parse.urlencode({"payload": payload.decode("utf-8")}).encode("ascii")
    h = SPEC.headers(srv, payload, eid, "issues")  # signed over the JSON
    h["Content-Type"] = FORM
    expect_error(post(srv, body, h), 401, "form signed over the decoded JSON")
    no_row(srv, SPEC, eid)


def form_without_payload(srv):
    eid = SPEC.new_id("formnop")
    body = b"other=%7B%7D"
    h = SPEC.headers(srv, body, eid, "push")
    h["Content-Type"] = FORM
    expect_error(post(srv, body, h), 400, "signed form without a payload field")
    no_row(srv, SPEC, eid)


def shared_guid(srv):
    """One GUID, two hooks (X-GitHub-Hook-ID): two events, two rows."""
    guid = SPEC.new_id("shared")
    body = SPEC.body(guid, "push")
    for hook in ("1001", "1002"):
        r = post(srv, body, SPEC.headers(srv, body, guid, "push", hook_id=hook))
        expect_accepted(r, "hook %s" % hook)
    rows = [r for r in srv.rows("github") if r["event_id"].endswith(":" + guid)]
    check_eq(sorted(r["event_id"] for r in rows),
             ["1001:" + guid, "1002:" + guid], "stored event ids")
    for r in rows:
        check_eq(as_bytes(r["payload"]), body, "payload of %s" % r["event_id"])
    # a redelivery to one hook is still that hook's duplicate
    expect_duplicate(post(srv, body, SPEC.headers(srv, body, guid, "push", hook_id="1002")),
                     "redelivery to hook 1002")
    check_eq(srv.rows("github", "1001:" + guid)[0]["duplicates"], 0,
             "duplicates of hook 1001's event")
    check_eq(srv.rows("github", "1002:" + guid)[0]["duplicates"], 1,
             "duplicates of hook 1002's event")


def ping_body(zen="Design for failure.", hook_id=HOOK_ID):
    return dumps_pretty({
        "zen": zen, "hook_id": int(hook_id),
        "hook": {"type": "Repository", "id": int(hook_id), "name": "web",
                 "active": True, "events": ["push", "issues"],
                 "config": {"content_type": "json", "insecure_ssl": "0",
                            "url": "https://example.com/hooks/github"}},
        "repository": {"id": 1296269, "full_name": "octocat/Hello-World"},
        "sender": {"login": "octocat", "id": 1}})


def total_effects(srv):
    with contextlib.closing(srv.connect_ro()) as c:
        return c.execute("SELECT count(*) FROM effects").fetchone()[0]


def replay_probe(srv):
    """The review's probe: a captured, signed ping body replayed with new
    X-GitHub-Delivery values and X-GitHub-Event push or release is refused
    (400: the body says it is a ping), recorded under no id, processed by
    nothing, and logged once each."""
    eid = SPEC.new_id("ping")
    body = ping_body(zen="Keep it logically awesome. " + os.urandom(4).hex())
    captured = SPEC.headers(srv, body, eid, "ping")
    expect_accepted(post(srv, body, captured), "the original ping")
    cases.wait_status(SPEC, srv, SPEC.db_event_id(eid))
    # Earlier events' actions (the push deploy) may still be running.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(
            r["status"] in ("received", "processing") for r in srv.rows("github")):
        time.sleep(0.1)
    before_rows, before_fx = srv.count("github"), total_effects(srv)
    probes = []
    for etype in ("push", "release", "push"):
        new = SPEC.new_id("replay")
        h = dict(captured)
        h["X-GitHub-Delivery"] = new
        h["X-GitHub-Event"] = etype
        r = post(srv, body, h)
        check_eq((r.status, (r.json() or {}).get("error")), (400, "bad_body"),
                 "replay as %s" % etype)
        probes.append(new)
    # A second hook's delivery of the same ping under another type, too.
    h = SPEC.headers(srv, body, eid, "push", hook_id="777")
    r = post(srv, body, h)
    check_eq((r.status, (r.json() or {}).get("error")), (400, "bad_body"),
             "same GUID, another hook, another type")
    time.sleep(0.3)
    check_eq(srv.count("github"), before_rows, "rows after the replays")
    for new in probes:
        no_row(srv, SPEC, new)
    check_eq(total_effects(srv), before_fx, "effects after the replays")
    lines = [l for l in srv.log_lines("github")
             if "outcome=bad_body" in l and "contradicts_the_body" in l]
    check_eq(len(lines), 4, "log lines refusing the replays")
    # The original is untouched: still one ping, done, no duplicates.
    row = one_row(srv, SPEC, eid)
    check_eq((row["event_type"], row["status"], row["duplicates"]),
             ("ping", "done", 0), "the original ping")


def expect_held(srv, r, new, first, what, hook_id=HOOK_ID):
    """r answered 200 (recorded), new's row held with its reason naming
    the first event, nothing run for it (no attempt, no effect)."""
    expect_accepted(r, what)
    row = one_row(srv, SPEC, new) if hook_id == HOOK_ID else \
        srv.rows("github", SPEC.db_event_id(new, hook_id))[0]
    check_eq(row["status"], "held", "%s: status" % what)
    check(row["last_error"] and row["last_error"].startswith("same body as ") and
          first in row["last_error"], "%s: reason %r" % (what, row["last_error"]))
    check_eq((row["attempts"], effects(srv, row)), (0, []), "%s: attempts, effects" % what)
    return row


def replay_non_ping(srv):
    """Any known body under a new delivery and another type is held: recorded,
    answered 200, never run, its reason naming the earlier event."""
    eid = SPEC.new_id("orig")
    body = SPEC.body(eid, "issues", action="opened")
    captured = SPEC.headers(srv, body, eid, "issues")
    expect_accepted(post(srv, body, captured))
    new = SPEC.new_id("as-push")
    h = dict(captured, **{"X-GitHub-Delivery": new, "X-GitHub-Event": "push"})
    r = post(srv, body, h)
    row = expect_held(srv, r, new, SPEC.db_event_id(eid), "issues as push")
    check("X-GitHub-Event" in row["last_error"], "reason: %r" % row["last_error"])
    lines = [l for l in srv.log_lines("github") if "outcome=accepted" in l and new in l]
    check(len(lines) == 1 and SPEC.db_event_id(eid) in lines[0] and "held" in lines[0],
          "one log line naming the earlier event: %r" % lines)
    # The form encoding of GitHub's REST API: the raw form is fingerprinted.
    payload = SPEC.body(eid, "issues", action="closed").decode("utf-8")
    fbody = urllib.parse.urlencode({"payload": payload}).encode("ascii")
    fid = SPEC.new_id("f")
    fh = SPEC.headers(srv, fbody, fid, "issues")
    fh["Content-Type"] = FORM
    expect_accepted(post(srv, fbody, fh), "form original")
    new = SPEC.new_id("f-as-release")
    fh = dict(fh, **{"X-GitHub-Delivery": new, "X-GitHub-Event": "release"})
    r = post(srv, fbody, fh)
    expect_held(srv, r, new, SPEC.db_event_id(fid), "form as release")


def legit_repeats(srv):
    """What GitHub itself repeats keeps working: the same body and GUID to a
    second hook (a new event), a redelivery (duplicate); the same body under
    a new delivery of the same type is recorded held, never lost."""
    guid = SPEC.new_id("legit")
    body = SPEC.body(guid, "push")
    expect_accepted(post(srv, body, SPEC.headers(srv, body, guid, "push", hook_id="2001")))
    expect_accepted(post(srv, body, SPEC.headers(srv, body, guid, "push", hook_id="2002")),
                    "second hook")
    expect_duplicate(post(srv, body, SPEC.headers(srv, body, guid, "push",
                                                  hook_id="2002")), "redelivery")
    # A redelivery claiming another type is still only a duplicate.
    expect_duplicate(post(srv, body, SPEC.headers(srv, body, guid, "release",
                                                  hook_id="2002")), "redelivery as release")
    check_eq(srv.rows("github", "2002:" + guid)[0]["event_type"], "push", "stored type")
    other = SPEC.new_id("legit2")
    r = post(srv, body, SPEC.headers(srv, body, other, "push", hook_id="2001"))
    row = expect_held(srv, r, other, "2001:" + guid, "same body, same type, new delivery",
                      hook_id="2001")
    check("X-GitHub-Delivery" in row["last_error"], "reason: %r" % row["last_error"])


def deploy_runs():
    try:
        with open(DEPLOY_OUT) as f:
            return f.read().split()
    except FileNotFoundError:
        return []


def new_guid_probe(srv):
    """Issue 24, Medium 2: a push body re-sent under fresh X-GitHub-Delivery
    GUIDs re-ran the deploy action three times.  Each is recorded held
    (issue 37: never lost, never run until confirmed), one log line naming
    the first event, no action; a real redelivery (same GUID) is still a
    200 duplicate, and another hook's delivery (same GUID) a new event."""
    guid = SPEC.new_id("deploy")
    body = SPEC.body(guid, "push")
    captured = SPEC.headers(srv, body, guid, "push")
    expect_accepted(post(srv, body, captured), "the original push")
    first = SPEC.db_event_id(guid)
    cases.wait_status(SPEC, srv, first)
    before = srv.count("github")
    probes = []
    for _ in range(3):
        new = SPEC.new_id("again")
        r = post(srv, body, dict(captured, **{"X-GitHub-Delivery": new}))
        expect_held(srv, r, new, first, "the push body under a new GUID")
        probes.append(new)
        # GitHub's redelivery of the held one is its duplicate.
        expect_duplicate(post(srv, body, dict(captured, **{"X-GitHub-Delivery": new})),
                         "a redelivery of a held one")
    expect_duplicate(post(srv, body, captured), "a real redelivery (same GUID)")
    time.sleep(0.5)
    check_eq(srv.count("github"), before + 3, "rows after the re-sends")
    for new in probes:
        check_eq(one_row(srv, SPEC, new)["status"], "held", "status of a re-send")
        lines = [l for l in srv.log_lines("github") if "outcome=accepted" in l and new in l]
        check(len(lines) == 1 and first in lines[0] and "status=200" in lines[0],
              "one log line naming the first event: %r" % lines)
    runs = deploy_runs()
    check_eq(runs.count(first), 1, "deploy runs of the first event")
    check(not any(SPEC.db_event_id(n) in runs for n in probes),
          "the deploy ran for a re-send: %r" % runs)
    other = SPEC.db_event_id(guid, "3003")
    expect_accepted(post(srv, body, SPEC.headers(srv, body, guid, "push", hook_id="3003")),
                    "another hook, same GUID")
    cases.wait_status(SPEC, srv, other)
    check_eq(deploy_runs().count(other), 1, "deploy runs of the other hook's event")


def repeats_run():
    try:
        with open(REPEATS_OUT) as f:
            return f.read().split()
    except FileNotFoundError:
        return []


def octokit_repeats(srv):
    """Issue 37, item 4: the five payloads of @octokit/webhooks-examples
    that repeat byte for byte (no timestamp, no counter), each delivered
    twice under two GUIDs: both recorded and answered 200, the first
    processed (its action ran), the second held with its reason, nothing
    run for it.  Before, the second was answered 409 and stored nowhere."""
    with open(REPEATS) as f:
        examples = json.load(f)["examples"]
    check_eq(len(examples), 5, "examples in the fixture")
    firsts = []
    for etype, example in sorted(examples.items()):
        body = dumps_pretty(example)
        g1, g2 = SPEC.new_id(etype), SPEC.new_id(etype)
        expect_accepted(post(srv, body, SPEC.headers(srv, body, g1, etype)),
                        "%s, the first time" % etype)
        first = SPEC.db_event_id(g1)
        firsts.append(first)
        cases.wait_status(SPEC, srv, first)
        r = post(srv, body, SPEC.headers(srv, body, g2, etype))
        check_eq(r.status, 200, "%s, the second time: %r" % (etype, r.body[:200]))
        row = expect_held(srv, r, g2, first, "%s, the second time" % etype)
        check_eq(row["subtype"], example.get("action"), "%s: its action" % etype)
        check_eq(as_bytes(row["payload"]), body, "%s: the held body" % etype)
    time.sleep(0.5)
    runs = repeats_run()
    held = [r for r in srv.rows("github") if r["status"] == "held" and
            r["event_type"] in examples]
    check_eq(len(held), 5, "held rows")
    check(not any(r["event_id"] in runs for r in held),
          "an action ran for a held event: %r" % runs)
    check_eq([runs.count(f) for f in firsts], [1] * 5, "action runs of the first deliveries")


def type_from_body(srv):
    """The body's own type against the header: a ping body (zen, hook_id) is
    refused under any other event, even when never seen before; a ping
    without zen, or whose hook_id differs from X-GitHub-Hook-ID, too."""
    bad = []
    for what, body, etype, hook in (
            ("fresh ping body as push", ping_body(zen="z " + os.urandom(4).hex()), "push",
             HOOK_ID),
            ("fresh ping body as release", ping_body(zen="r " + os.urandom(4).hex()),
             "release", HOOK_ID),
            ("push body as ping", SPEC.body("x", "push"), "ping", HOOK_ID),
            ("ping of another hook", ping_body(zen="o " + os.urandom(4).hex(),
                                               hook_id="99"), "ping", HOOK_ID)):
        eid = SPEC.new_id("t")
        r = post(srv, body, SPEC.headers(srv, body, eid, etype, hook_id=hook))
        cases.note_refused(bad, r, 400, srv, "github", SPEC.db_event_id(eid, hook), what)
    check(not bad, "; ".join(bad))


def ping(srv):
    """ping, sent when a hook is created: 200, recorded, processed."""
    eid = SPEC.new_id("ping")
    body = ping_body()
    r = post(srv, body, SPEC.headers(srv, body, eid, "ping"))
    expect_accepted(r, "ping")
    row = cases.wait_status(SPEC, srv, SPEC.db_event_id(eid))
    check_eq(row["event_type"], "ping", "event_type")
    check_eq(as_bytes(row["payload"]), body, "stored ping payload")
    kinds = effects(srv, row)
    check(len(kinds) == 1 and kinds[0] != UNKNOWN_EFFECT,
          "ping: expected one effect from its own case of the switch, got %r" % kinds)


def kept_headers(srv):
    eid = SPEC.new_id("hdrs")
    r, _ = SPEC.deliver(srv, eid)
    expect_accepted(r)
    stored = one_row(srv, SPEC, eid)["headers"].lower()
    for line in ("x-github-delivery: %s\n" % eid, "x-github-hook-id: %s\n" % HOOK_ID,
                 "x-github-event: push\n"):
        check(line in stored, "headers column lacks %r: %r" % (line, stored[:400]))


def missing_headers(srv):
    """No Delivery or no Event: 400 (authentic but unidentifiable); the
    legacy sha1 header alone, or an empty signature: 401."""
    bad = []
    for drop, want in (("X-GitHub-Delivery", 400), ("X-GitHub-Event", 400)):
        eid = SPEC.new_id("miss")
        body = SPEC.body(eid, "push")
        h = SPEC.headers(srv, body, eid, "push")
        del h[drop]
        r = post(srv, body, h)
        if r.status != want:
            bad.append("without %s -> %d, expected %d" % (drop, r.status, want))
        elif srv.rows("github", SPEC.db_event_id(eid)):
            bad.append("without %s: row written" % drop)
    for what, val in (("legacy X-Hub-Signature (sha1) only", None),
                      ("empty X-Hub-Signature-256", ""),
                      ("hex without sha256= prefix", "")):
        eid = SPEC.new_id("sig")
        body = SPEC.body(eid, "push")
        h = SPEC.unsigned_headers(srv, body, eid, "push")
        if val is None:
            h["X-Hub-Signature"] = sign_github_sha1(srv.secrets["github"], body)
        elif what.startswith("hex"):
            h["X-Hub-Signature-256"] = sign_github(srv.secrets["github"], body)[7:]
        else:
            h["X-Hub-Signature-256"] = val
        r = post(srv, body, h)
        cases.note_refused(bad, r, 401, srv, "github", SPEC.db_event_id(eid), what)
    check(not bad, "; ".join(bad))


def no_hook_id(srv):
    """Without X-GitHub-Hook-ID the delivery is still accepted, keyed '-:<guid>'."""
    eid = SPEC.new_id("nohook")
    body = SPEC.body(eid, "push")
    h = SPEC.headers(srv, body, eid, "push")
    del h["X-GitHub-Hook-ID"]
    expect_accepted(post(srv, body, h))
    check_eq(len(srv.rows("github", "-:" + eid)), 1, "rows keyed -:<guid>")


def tampered(srv):
    eid = SPEC.new_id("tamper")
    body = SPEC.body(eid, "push")
    h = SPEC.headers(srv, body, eid, "push")
    expect_error(post(srv, body.replace(b"octocat", b"mallory"), h), 401,
                 "body altered after signing")
    no_row(srv, SPEC, eid)


def main():
    return cases.run_provider_suite(SPEC, [
        ("accepted event processed to status 'done'", processed),
        ("JSON body: subtype = action", json_action),
        ("form-encoded body accepted, subtype = action, raw form stored", form_body),
        ("form-encoded body with '; charset=utf-8' accepted",
         form_body, FORM + "; charset=utf-8"),
        ("form signed over the decoded JSON -> 401", form_signed_over_json),
        ("signed form without payload field -> 400", form_without_payload),
        ("two hooks sharing one X-GitHub-Delivery -> both accepted, 2 rows", shared_guid),
        ("ping answered 200, recorded, processed by its case", ping),
        ("probe: captured ping body replayed as push/release under new deliveries -> "
         "400, nothing recorded or processed, logged", replay_probe),
        ("known body under a new delivery and another type (JSON, form) -> 200, held "
         "with its reason, nothing run", replay_non_ping),
        ("legitimate repeats: second hook, redelivery -> accepted/duplicate; "
         "same type, new delivery -> held", legit_repeats),
        ("issue 24 probe: push body under 3 new GUIDs -> held, deploy runs once; "
         "same GUID -> duplicate", new_guid_probe),
        ("issue 37: the five repeating payloads of @octokit/webhooks-examples twice under "
         "two GUIDs -> both 200 and recorded, the second held, nothing run for it",
         octokit_repeats),
        ("ping body under another event, push body as ping, other hook's ping -> 400",
         type_from_body),
        ("delivery and hook headers kept in the headers column", kept_headers),
        ("missing Delivery/Event -> 400; sha1-only/empty/unprefixed -> 401",
         missing_headers),
        ("no X-GitHub-Hook-ID -> accepted as '-:<guid>'", no_hook_id),
        ("body altered after signing -> 401", tampered),
        ("rotation: IDEMHOOK_GITHUB_SECRET and _2 both accepted",
         lambda srv: cases.case_rotation(SPEC, srv, "IDEMHOOK_GITHUB_SECRET",
                                         unknown=lambda: os.urandom(16).hex())),
    ], provider_env={"IDEMHOOK_GITHUB_SECRET_2": os.urandom(16).hex(),
                     "IDEMHOOK_GITHUB_ACTION": DEPLOY_ACTION,
                     "IDEMHOOK_GITHUB_ACTION_2": REPEATS_ACTION},
        vector=("signer reproduces the published vectors", vectors))


if __name__ == "__main__":
    sys.exit(main())
