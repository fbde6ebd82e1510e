#!/usr/bin/env python3
"""End-to-end tests of stripe.fcgi behind lighttpd (shipped config).

Usage: test_stripe.py BINDIR   (or IH_BIN=BINDIR test_stripe.py)
Prints 'ok - ...' / 'not ok - ...: reason' lines; exits 1 if any failed.
"""

import json
import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (Server, check, check_eq, check_vector,  # noqa: E402
                     sign_stripe, stripe_sdk_header, stripe_v1, suite_main)
import cases  # noqa: E402
from cases import (dumps_pretty, expect_accepted, expect_duplicate, expect_error,  # noqa: E402
                   no_row, one_row, as_bytes)

UA = "Stripe/1.0 (+https://stripe.com/docs/webhooks)"


class StripeSpec(cases.Spec):
    name = "stripe"
    default_type = "payment_intent.succeeded"

    def body(self, event_id, event_type, pad=0):
        obj = {
            "id": event_id,
            "object": "event",
            "api_version": "2024-06-20",
            "created": int(time.time()),
            "data": {"object": {
                "id": "pi_" + os.urandom(8).hex(),
                "object": "payment_intent",
                "amount": 2000,
                "currency": "usd",
                "description": "Caf\u00e9 \u00fcber \u2713",
                "metadata": {"pad": "x" * pad} if pad else {},
            }},
            "livemode": False,
            "pending_webhooks": 1,
            "request": {"id": None, "idempotency_key": None},
            "type": event_type,
        }
        return dumps_pretty(obj)

    def headers(self, server, body, event_id, event_type, secret=None, t=None):
        secret = secret or server.secrets["stripe"]
        return {"Stripe-Signature": sign_stripe(secret, body, t), "User-Agent": UA}

    def unsigned_headers(self, server, body, event_id, event_type):
        return {"User-Agent": UA}

    def forged_headers(self, server, body, event_id, event_type):
        return {"Stripe-Signature": "t=%d,v1=%s" % (time.time(), os.urandom(32).hex()),
                "User-Agent": UA}


SPEC = StripeSpec()


def post_signed(srv, body, header):
    return srv.post("/hooks/stripe", body, {"Stripe-Signature": header, "User-Agent": UA})


def sized_body(eid, etype, size):
    """A compact JSON event of exactly size bytes."""
    base = {"id": eid, "object": "event", "type": etype, "data": {"object": {"pad": ""}}}
    n = len(json.dumps(base, separators=(",", ":")))
    check(size >= n, "size too small")
    base["data"]["object"]["pad"] = "p" * (size - n)
    b = json.dumps(base, separators=(",", ":")).encode()
    assert len(b) == size
    return b


# ---------------------------------------------------------------- cases

def vector():
    check_vector("stripe")


def sdk_style(srv):
    eid = SPEC.new_id("sdk")
    payload = '{\n  "id": "%s",\n  "object": "event",\n  "type": "customer.created",\n' \
              '  "data": {"object": {"id": "cus_1", "name": "J\u00fcrgen M\u00fcller \u65e5\u672c"}}\n}' % eid
    hdr = stripe_sdk_header(payload, srv.secrets["stripe"])
    r = post_signed(srv, payload.encode("utf-8"), hdr)
    expect_accepted(r)
    row = one_row(srv, SPEC, eid)
    check_eq(as_bytes(row["payload"]), payload.encode("utf-8"), "stored payload")
    check_eq(row["event_type"], "customer.created", "event_type")


def resigned_retry(srv):
    eid = SPEC.new_id("retry")
    body = SPEC.body(eid, SPEC.default_type)
    s = srv.secrets["stripe"]
    expect_accepted(post_signed(srv, body, sign_stripe(s, body, int(time.time()) - 60)), "first")
    expect_duplicate(post_signed(srv, body, sign_stripe(s, body)), "retry with new t and v1")
    check_eq(one_row(srv, SPEC, eid)["duplicates"], 1, "duplicates")


def multi_v1_junk(srv):
    eid = SPEC.new_id("multi")
    body = SPEC.body(eid, SPEC.default_type)
    t = int(time.time())
    good = stripe_v1(srv.secrets["stripe"], body, t)
    hdr = "t=%d,v1=%s,v1=%s,v0=%s" % (t, os.urandom(32).hex(), good, os.urandom(32).hex())
    expect_accepted(post_signed(srv, body, hdr))
    one_row(srv, SPEC, eid)


def testmode_v0(srv):
    """Test-mode events carry v1 and a fake v0."""
    eid = SPEC.new_id("v1v0")
    body = SPEC.body(eid, SPEC.default_type)
    hdr = sign_stripe(srv.secrets["stripe"], body, v0=os.urandom(32).hex())
    expect_accepted(post_signed(srv, body, hdr))


def v0_only(srv):
    """A v0 carrying the correct MAC must still be ignored (downgrade)."""
    eid = SPEC.new_id("v0")
    body = SPEC.body(eid, SPEC.default_type)
    t = int(time.time())
    hdr = "t=%d,v0=%s" % (t, stripe_v1(srv.secrets["stripe"], body, t))
    expect_error(post_signed(srv, body, hdr), 401, "v0-only header")
    no_row(srv, SPEC, eid)


def malformed_headers(srv):
    eid = SPEC.new_id("malformed")
    body = SPEC.body(eid, SPEC.default_type)
    t = int(time.time())
    good = stripe_v1(srv.secrets["stripe"], body, t)
    variants = {
        "truncated v1 (first 32 hex)": "t=%d,v1=%s" % (t, good[:32]),
        "truncated v1 (first 2 hex)": "t=%d,v1=%s" % (t, good[:2]),
        "empty v1": "t=%d,v1=" % t,
        "v1 with extra hex": "t=%d,v1=%s00" % (t, good),
        "no t": "v1=%s" % good,
        "t not a number": "t=abc,v1=%s" % good,
        "t of another time": "t=%d,v1=%s" % (t - 1, good),
        "empty header": "",
        "garbage": "nonsense ,,,==,t=,v1",
    }
    bad = []
    for what, hdr in variants.items():
        r = post_signed(srv, body, hdr)
        if r.status != 401:
            bad.append("%s -> %d" % (what, r.status))
    check(not bad, "expected 401 for each: " + "; ".join(bad))
    no_row(srv, SPEC, eid)


def tampered_body(srv):
    eid = SPEC.new_id("tamper")
    body = SPEC.body(eid, SPEC.default_type)
    hdr = sign_stripe(srv.secrets["stripe"], body)
    altered = body.replace(b"2000", b"9000")
    expect_error(post_signed(srv, altered, hdr), 401, "body altered after signing")
    no_row(srv, SPEC, eid)


def timestamp_case(srv, offset, want):
    # Offsets stay 2 s past the tolerance: time(2) in the receiver reads a
    # coarse clock that may lag this process's by a tick at a second's edge.
    eid = SPEC.new_id("ts%+d" % offset)
    body = SPEC.body(eid, SPEC.default_type)
    r = post_signed(srv, body, sign_stripe(srv.secrets["stripe"], body, int(time.time()) + offset))
    cases.expect_stored(r, want, srv, SPEC, eid, "t%+d" % offset)


def rotation(srv):
    s1 = srv.secrets["stripe"]
    s2 = srv.provider_env["stripe"]["IDEMHOOK_STRIPE_SECRET_2"]
    for what, secrets in (("new secret", [s1]), ("old secret (_2)", [s2]),
                          ("both, as Stripe sends while rolling", [s2, s1])):
        eid = SPEC.new_id("rot")
        body = SPEC.body(eid, SPEC.default_type)
        expect_accepted(post_signed(srv, body, sign_stripe(None, body, secrets=secrets)), what)
    eid = SPEC.new_id("rot")
    body = SPEC.body(eid, SPEC.default_type)
    expect_error(post_signed(srv, body, sign_stripe("whsec_" + os.urandom(16).hex(), body)),
                 401, "unknown third secret")


def bad_body(srv, body, what, eid=None):
    r = post_signed(srv, body, sign_stripe(srv.secrets["stripe"], body))
    expect_error(r, 400, what)
    if eid:
        no_row(srv, SPEC, eid)


def missing_id(srv):
    body = dumps_pretty({"object": "event", "type": "charge.created",
                         "data": {"object": {"id": "ch_nested_only", "object": "charge"}}})
    bad_body(srv, body, "no top-level id (only data.object.id)", "ch_nested_only")


def missing_type(srv):
    eid = SPEC.new_id("notype")
    body = dumps_pretty({"id": eid, "object": "event",
                         "data": {"object": {"id": "ch_1", "type": "card"}}})
    bad_body(srv, body, "no top-level type (only data.object.type)", eid)


def truncated_json(srv):
    eid = SPEC.new_id("trunc")
    body = ('{"id": "%s", "object": "event", "type": "charge.created"' % eid).encode()
    bad_body(srv, body, "truncated JSON", eid)


def array_json(srv):
    eid = SPEC.new_id("arr")
    bad_body(srv, json.dumps([{"id": eid, "type": "charge.created"}]).encode(),
             "JSON array", eid)


def object_as_key(srv):
    """Malformed JSON that SQLite 3.40's JSON functions take as valid (an
    object used as a key), then crash on at $.data.object.id: 400, no row,
    and the receiver keeps answering."""
    eid = SPEC.new_id("objkey")
    bad_body(srv, b'{"a":1,{"":"x","payment":{"id":"72"}}:"b"}', "object as a key")
    body = ('{"id":"%s","object":"event","type":"charge.created",' % eid).encode() + \
        b'{"":"x","data":{"object":{"id":"ch_1"}}}:"b"}'
    bad_body(srv, body, "object as a key after id and type", eid)
    eid = SPEC.new_id("dupdeep")
    body = ('{"id":"%s","object":"event","type":"charge.created",' % eid).encode() + \
        b'"data":{"object":{"id":"ch_1","id":"ch_2"}}}'
    bad_body(srv, body, "a key repeated in data.object", eid)
    eid = SPEC.new_id("afterbad")
    body = SPEC.body(eid, "charge.created")
    expect_accepted(post_signed(srv, body, sign_stripe(srv.secrets["stripe"], body)))


def empty_body(srv):
    bad_body(srv, b"", "empty body")


def trailing_garbage(srv):
    bad = []
    for what, tail in (("text", b" trailing"), ("NUL byte", b"\x00garbage"),
                       ("second object", b'{"id":"evt_other","type":"x"}')):
        eid = SPEC.new_id("tail")
        body = ('{"id":"%s","object":"event","type":"charge.created"}' % eid).encode() + tail
        r = post_signed(srv, body, sign_stripe(srv.secrets["stripe"], body))
        cases.note_refused(bad, r, 400, srv, "stripe", eid, what)
    check(not bad, "expected 400 for JSON followed by: " + "; ".join(bad))


def stored_as_sent(srv, tag, tail):
    """A charge.created event whose body ends with tail (bytes) is accepted
    and its payload stored byte for byte."""
    eid = SPEC.new_id(tag)
    body = ('{"id":"%s","object":"event","type":"charge.created",' % eid).encode() + tail
    expect_accepted(post_signed(srv, body, sign_stripe(srv.secrets["stripe"], body)))
    check_eq(as_bytes(one_row(srv, SPEC, eid)["payload"]), body, "stored payload")


def utf8_body(srv):
    """Raw multi-byte UTF-8 (3- and 4-byte sequences) is stored byte-identical."""
    stored_as_sent(srv, "utf8", b'"note":"\xe2\x9c\x93 \xf0\x9f\x92\xb3 \xc3\xa9"}')


def escaped_nul(srv):
    """\\u0000 inside a string that is neither id nor type is valid JSON: the
    event must be accepted (a 400 makes Stripe retry it for days)."""
    stored_as_sent(srv, "nul", b'"data":{"object":{"description":"a\\u0000b"}}}')


def lowercase_header(srv):
    eid = SPEC.new_id("lc")
    body = SPEC.body(eid, SPEC.default_type)
    r = srv.post("/hooks/stripe", body, {"stripe-signature": sign_stripe(srv.secrets["stripe"], body)})
    expect_accepted(r)


def top_level_fields(srv):
    """data (with its own id and type) comes before the top-level keys."""
    eid = SPEC.new_id("order")
    body = dumps_pretty({"object": "event",
                         "data": {"object": {"id": "pi_first", "object": "payment_intent",
                                             "type": "card", "note": "\"id\": \"evt_fake\""}},
                         "id": eid, "type": "payment_intent.created"})
    expect_accepted(post_signed(srv, body, sign_stripe(srv.secrets["stripe"], body)))
    row = one_row(srv, SPEC, eid)
    check_eq(row["event_type"], "payment_intent.created", "event_type")
    check(not srv.rows("stripe", "pi_first"), "stored under data.object.id")


def escaped_id(srv):
    """An id with a JSON escape is stored decoded."""
    raw = SPEC.new_id("esc")
    body = ('{"id":"%s\\u005fx","object":"event","type":"charge.created"}' % raw).encode()
    expect_accepted(post_signed(srv, body, sign_stripe(srv.secrets["stripe"], body)))
    one_row(srv, SPEC, raw + "_x")


# limits server: IDEMHOOK_MAX_BODY=1024, IDEMHOOK_TOLERANCE=30 (env)

def max_body(srv, limit):
    eid = SPEC.new_id("big")
    body = sized_body(eid, "charge.created", limit + 1)
    r = post_signed(srv, body, sign_stripe(srv.secrets["stripe"], body))
    expect_error(r, 413, "body of %d bytes with IDEMHOOK_MAX_BODY=%d" % (len(body), limit))
    no_row(srv, SPEC, eid)
    eid = SPEC.new_id("fits")
    body = sized_body(eid, "charge.created", limit)
    r = post_signed(srv, body, sign_stripe(srv.secrets["stripe"], body))
    expect_accepted(r, "body of exactly IDEMHOOK_MAX_BODY=%d bytes" % limit)


def extra_secrets(srv):
    for k in ("IDEMHOOK_STRIPE_SECRET_3", "IDEMHOOK_STRIPE_SECRET_4"):
        eid = SPEC.new_id("s34")
        body = SPEC.body(eid, SPEC.default_type)
        expect_accepted(post_signed(srv, body, sign_stripe(srv.provider_env["stripe"][k], body)),
                        "signed with " + k)


# config-file server

def config_file(srv, file_secret):
    eid = SPEC.new_id("cfg")
    body = SPEC.body(eid, SPEC.default_type)
    expect_accepted(post_signed(srv, body, sign_stripe(file_secret, body)),
                    "signed with IDEMHOOK_STRIPE_SECRET_2 from IDEMHOOK_CONFIG")
    eid = SPEC.new_id("cfg")
    body = SPEC.body(eid, SPEC.default_type)
    expect_error(post_signed(srv, body, sign_stripe(file_secret, body, int(time.time()) - 40)),
                 401, "t-40 with IDEMHOOK_TOLERANCE=20 from the file")
    timestamp_case(srv, -10, 200)
    eid = SPEC.new_id("cfg")
    body = sized_body(eid, "charge.created", 2049)
    expect_error(post_signed(srv, body, sign_stripe(file_secret, body)), 413,
                 "2049 bytes with IDEMHOOK_MAX_BODY=2048 from the file")


def whole_lines(srv):
    """A delivery's lines, held until its answer, together longer than
    libfcgi's 504-byte stderr record (a long id): lighttpd logs each
    record's lines apart, so none may start in one record and end in the
    next (each line of the errorlog from the receiver starts its own)."""
    eid = SPEC.new_id("whole_" + "w" * 100)
    mark = len(srv.errorlog())
    expect_accepted(SPEC.deliver(srv, eid)[0], "a long id")
    deadline = time.monotonic() + 30
    lines = []
    while time.monotonic() < deadline:
        lines = [ln.split("FastCGI-stderr:", 1)[1]
                 for ln in srv.errorlog()[mark:].splitlines()
                 if "FastCGI-stderr:" in ln]
        if any("processing=done" in ln for ln in lines):
            break
        time.sleep(0.1)
    cut = [ln for ln in lines if not ln.startswith("idemhook: provider=")]
    check(not cut, "lines cut in two: %r" % cut[:2])
    mine = [ln for ln in lines if "event=%s " % eid in ln]
    for what in ("outcome=accepted", "verdict=", "effect=", "processing=done"):
        check(any(what in ln for ln in mine), "no whole line with %s: %r"
              % (what, lines))
    check(sum(len(ln) + 1 for ln in mine) > 504, "the lines fit in one record")


def run_cases(tap, bindir, servers):
    tap.run("stripe: signer reproduces the derived vector (whsec_test_secret, t=1492774577)", vector)

    # --- main server: default limits, a second secret for rotation
    main_srv = servers.add(Server(bindir, providers=["stripe"], name="main",
                                  provider_env={"stripe": {
                                      "IDEMHOOK_STRIPE_SECRET_2": "whsec_" + os.urandom(16).hex()}}))
    if tap.run("stripe: lighttpd starts with the shipped config", main_srv.start):
        srv = main_srv
        cases.run_common(tap, SPEC, srv)
        t = tap.run
        t("stripe: header generated like stripe-python (UTF-8 body) accepted", sdk_style, srv)
        t("stripe: retry re-signed with a new timestamp -> duplicate", resigned_retry, srv)
        t("stripe: several v1, one junk -> accepted", multi_v1_junk, srv)
        t("stripe: test-mode header with v1 and v0 -> accepted", testmode_v0, srv)
        t("stripe: v0 only (even with a correct MAC) -> 401", v0_only, srv)
        t("stripe: malformed Stripe-Signature variants -> 401", malformed_headers, srv)
        t("stripe: body altered after signing -> 401", tampered_body, srv)
        t("stripe: stale timestamp t-302 -> 401", timestamp_case, srv, -302, 401)
        # +302: the receiver's clock may have ticked one second further
        t("stripe: future timestamp t+302 -> 401", timestamp_case, srv, 302, 401)
        t("stripe: t-290 inside the default tolerance -> accepted", timestamp_case, srv, -290, 200)
        t("stripe: t+290 inside the default tolerance -> accepted", timestamp_case, srv, 290, 200)
        t("stripe: rotation: IDEMHOOK_STRIPE_SECRET and _2 both accepted", rotation, srv)
        t("stripe: not JSON / empty body -> 400", empty_body, srv)
        t("stripe: missing id -> 400", missing_id, srv)
        t("stripe: missing type -> 400", missing_type, srv)
        t("stripe: truncated JSON -> 400", truncated_json, srv)
        t("stripe: JSON array -> 400", array_json, srv)
        t("stripe: object as a key, a repeated nested key -> 400", object_as_key, srv)
        t("stripe: top-level id/type used, not data.object's", top_level_fields, srv)
        t("stripe: JSON-escaped id stored decoded", escaped_id, srv)
        t("stripe: JSON followed by trailing bytes -> 400", trailing_garbage, srv)
        t("stripe: multi-byte UTF-8 body stored byte-identical", utf8_body, srv)
        t("stripe: \\u0000 in data.object.description (valid JSON) -> accepted", escaped_nul, srv)
        t("stripe: header name in lower case accepted", lowercase_header, srv)
        t("stripe: a delivery's log lines longer than a FastCGI record, each logged whole",
          whole_lines, srv)
        cases.run_final(tap, SPEC, srv)
        main_srv.stop()

    # --- limits server: small body limit and tolerance through env
    lim = servers.add(Server(bindir, providers=["stripe"], name="limits",
                             env={"IDEMHOOK_MAX_BODY": "1024", "IDEMHOOK_TOLERANCE": "30",
                                  "IDEMHOOK_SYNCHRONOUS": "NORMAL"},
                             provider_env={"stripe": {
                                 "IDEMHOOK_STRIPE_SECRET_2": "whsec_" + os.urandom(16).hex(),
                                 "IDEMHOOK_STRIPE_SECRET_3": "whsec_" + os.urandom(16).hex(),
                                 "IDEMHOOK_STRIPE_SECRET_4": "whsec_" + os.urandom(16).hex()}}))
    if tap.run("stripe: lighttpd starts (IDEMHOOK_MAX_BODY=1024, IDEMHOOK_TOLERANCE=30, IDEMHOOK_SYNCHRONOUS=NORMAL)", lim.start):
        t = tap.run
        t("stripe: body > IDEMHOOK_MAX_BODY -> 413; exactly the limit -> accepted", max_body, lim, 1024)
        t("stripe: IDEMHOOK_TOLERANCE=30: t-45 -> 401", timestamp_case, lim, -45, 401)
        t("stripe: IDEMHOOK_TOLERANCE=30: t+45 -> 401", timestamp_case, lim, 45, 401)
        t("stripe: IDEMHOOK_TOLERANCE=30: t-20 -> accepted", timestamp_case, lim, -20, 200)
        t("stripe: IDEMHOOK_STRIPE_SECRET_3 and _4 accepted", extra_secrets, lim)
        t("stripe: limits server: no sanitizer reports", cases.case_sanitizers, lim)
        lim.stop()

    # --- config-file server: settings from IDEMHOOK_CONFIG
    cfg = servers.add(Server(bindir, providers=["stripe"], name="config"))
    file_secret = "whsec_" + os.urandom(16).hex()
    cfg_path = os.path.join(cfg.tmp, "idemhook.env")
    with open(cfg_path, "w") as f:
        f.write("# idemhook settings\nIDEMHOOK_STRIPE_SECRET_2=%s\n"
                "IDEMHOOK_TOLERANCE=20\nIDEMHOOK_MAX_BODY=2048\n" % file_secret)
    os.chmod(cfg_path, 0o600)
    cfg.env["IDEMHOOK_CONFIG"] = cfg_path
    if tap.run("stripe: lighttpd starts with IDEMHOOK_CONFIG", cfg.start):
        cfg.secrets["stripe-file"] = file_secret  # must not be logged either
        tap.run("stripe: IDEMHOOK_CONFIG file: secret, tolerance and max body applied",
                config_file, cfg, file_secret)
        tap.run("stripe: config server: no secret in the errorlog, no sanitizer reports",
                lambda: (check(file_secret not in cfg.errorlog(), "file secret logged"),
                         cases.case_sanitizers(cfg)))
        cfg.stop()

    # --- an empty secret variable leaves the secret to the file
    emp = servers.add(Server(bindir, providers=["stripe"], name="emptyvar"))
    only_file = "whsec_" + os.urandom(16).hex()
    emp_path = os.path.join(emp.tmp, "idemhook.env")
    with open(emp_path, "w") as f:
        f.write("IDEMHOOK_STRIPE_SECRET=%s\n" % only_file)
    os.chmod(emp_path, 0o600)
    emp.env["IDEMHOOK_CONFIG"] = emp_path
    emp.secrets["stripe"] = ""
    if tap.run("stripe: lighttpd starts with var.idemhook_stripe_secret empty",
               emp.start):
        emp.secrets["stripe"] = only_file

        def empty_var_defers():
            eid = SPEC.new_id("emptyvar")
            body = SPEC.body(eid, SPEC.default_type)
            expect_accepted(post_signed(emp, body, sign_stripe(only_file, body)),
                            "secret only in the IDEMHOOK_CONFIG file")
            one_row(emp, SPEC, eid)
        tap.run("stripe: an empty secret variable defers to the IDEMHOOK_CONFIG file",
                empty_var_defers)
        emp.stop()

    # --- store failures
    cases.run_failure_modes(tap, SPEC, bindir, servers)


if __name__ == "__main__":
    sys.exit(suite_main("stripe", run_cases, needs=("stripe.fcgi",)))
