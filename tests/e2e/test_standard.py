#!/usr/bin/env python3
"""End-to-end tests of standard.fcgi (Standard Webhooks) behind lighttpd.

Usage: test_standard.py BINDIR   (or IH_BIN=BINDIR test_standard.py)
Prints 'ok - ...' / 'not ok - ...: reason' lines; exits 1 if any failed.

webhook-id / webhook-timestamp / webhook-signature ("v1,<b64>" entries,
space-separated); HMAC-SHA256 over "<id>.<ts>.<body>" keyed with the
base64-decoded whsec_ secret; the timestamp checked both ways (300 s).
"""

import base64
import hashlib
import hmac
import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (check, check_eq, check_vector, sign_standard,  # noqa: E402
                     standard_key, standard_secret)
import cases  # noqa: E402
from cases import (dumps_pretty, expect_accepted, expect_duplicate,  # noqa: E402
                   expect_error, no_row, one_row)

# The published vector (standard-webhooks' JavaScript library tests).
VEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
VEC_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
VEC_TS = 1614265330
VEC_BODY = b'{"test": 2432232314}'
VEC_SIG = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


class StandardSpec(cases.Spec):
    name = "standard"
    default_type = "invoice.paid"

    def new_id(self, tag):
        return "msg_%s%s" % (tag, os.urandom(10).hex())  # never a '.'

    def body(self, event_id, event_type, pad=0):
        obj = {"type": event_type, "timestamp": "2025-09-11T10:00:00.000Z",
               "data": {"id": "inv_" + os.urandom(6).hex(), "amount": 1999,
                        "note": "Caf\u00e9 \u2713" + ("x" * pad)}}
        return dumps_pretty(obj)

    def headers(self, server, body, event_id, event_type, secret=None, t=None, sig=None):
        t = int(time.time()) if t is None else int(t)
        if sig is None:
            sig = sign_standard(secret or server.secrets["standard"], event_id, t, body)
        return {"webhook-id": event_id, "webhook-timestamp": str(t),
                "webhook-signature": sig, "User-Agent": "Svix-Webhooks/1.0"}

    def unsigned_headers(self, server, body, event_id, event_type):
        h = self.headers(server, body, event_id, event_type)
        del h["webhook-signature"]
        return h

    def forged_headers(self, server, body, event_id, event_type):
        return self.headers(server, body, event_id, event_type,
                            sig="v1," + base64.b64encode(os.urandom(32)).decode())


SPEC = StandardSpec()
post = SPEC.post


def mac_b64(secret, msg_id, t, body):
    m = hmac.new(standard_key(secret), ("%s.%d." % (msg_id, t)).encode() + body,
                 hashlib.sha256).digest()
    return base64.b64encode(m).decode()


# ---------------------------------------------------------------- cases

def vector():
    check_vector("standard")


def published_vector(srv):
    """IDEMHOOK_STANDARD_SECRET_3 is the published vector's secret.  The
    vector itself (2021) is refused only for its age: stale_timestamp, not
    bad_signature, so its MAC was verified; signed now, it is accepted."""
    h = {"webhook-id": VEC_ID, "webhook-timestamp": str(VEC_TS),
         "webhook-signature": VEC_SIG}
    r = post(srv, VEC_BODY, h)
    expect_error(r, 401, "the published vector, timestamp of 2021")
    err = (r.json() or {}).get("error", "")
    check("stale" in err, "published vector refused as %r, not for its timestamp: its "
          "MAC with the whsec_ secret did not verify" % err)
    eid = SPEC.new_id("vec")
    r, body = SPEC.deliver(srv, eid, secret=VEC_SECRET)
    expect_accepted(r, "signed now with the published vector's secret")
    one_row(srv, SPEC, eid)


def unprefixed_secret(srv):
    """IDEMHOOK_STANDARD_SECRET_4 is configured without 'whsec_'."""
    raw = srv.provider_env["standard"]["IDEMHOOK_STANDARD_SECRET_4"]
    eid = SPEC.new_id("nopfx")
    r, _ = SPEC.deliver(srv, eid, secret="whsec_" + raw)
    expect_accepted(r, "secret configured as bare base64")


def timestamp_case(srv, offset, want):
    eid = SPEC.new_id("ts")
    body = SPEC.body(eid, SPEC.default_type)
    r = post(srv, body, SPEC.headers(srv, body, eid, SPEC.default_type,
                                     t=int(time.time()) + offset))
    cases.expect_stored(r, want, srv, SPEC, eid, "t%+d" % offset)


def v1a_only(srv):
    """v1a (ed25519) entries are skipped, never accepted, even carrying the
    right HMAC value."""
    bad = []
    for what, mk in (("v1a with a random value",
                      lambda i, t, b: "v1a," + base64.b64encode(os.urandom(64)).decode()),
                     ("v1a carrying the correct HMAC",
                      lambda i, t, b: "v1a," + mac_b64(srv.secrets["standard"], i, t, b)),
                     ("v2 carrying the correct HMAC",
                      lambda i, t, b: "v2," + mac_b64(srv.secrets["standard"], i, t, b))):
        eid = SPEC.new_id("v1a")
        body = SPEC.body(eid, SPEC.default_type)
        t = int(time.time())
        r = post(srv, body, SPEC.headers(srv, body, eid, SPEC.default_type, t=t,
                                         sig=mk(eid, t, body)))
        cases.note_refused(bad, r, 401, srv, "standard", eid, what)
    check(not bad, "expected 401 for each: " + "; ".join(bad))


def several_signatures(srv):
    """Space-separated entries, only one valid (not the first): accepted."""
    eid = SPEC.new_id("multi")
    body = SPEC.body(eid, SPEC.default_type)
    t = int(time.time())
    junk = lambda n: base64.b64encode(os.urandom(n)).decode()  # noqa: E731
    sig = " ".join(["v1," + junk(32), "v1a," + junk(64), "v1,notbase64!!",
                    "v1," + mac_b64(srv.secrets["standard"], eid, t, body),
                    "v1," + junk(32)])
    expect_accepted(post(srv, body, SPEC.headers(srv, body, eid, SPEC.default_type,
                                                 t=t, sig=sig)))
    one_row(srv, SPEC, eid)


def rotation_both_signatures(srv):
    """While rotating, the sender signs once per secret: one header with the
    new (unknown here) and the old secret's entries is accepted."""
    eid = SPEC.new_id("rotboth")
    body = SPEC.body(eid, SPEC.default_type)
    t = int(time.time())
    sig = "v1,%s v1,%s" % (mac_b64(standard_secret(), eid, t, body),
                           mac_b64(srv.secrets["standard"], eid, t, body))
    expect_accepted(post(srv, body, SPEC.headers(srv, body, eid, SPEC.default_type,
                                                 t=t, sig=sig)))


def retry_resigned(srv):
    """A retry carries the same webhook-id with a new timestamp: duplicate."""
    eid = SPEC.new_id("retry")
    body = SPEC.body(eid, SPEC.default_type)
    now = int(time.time())
    expect_accepted(post(srv, body, SPEC.headers(srv, body, eid, SPEC.default_type,
                                                 t=now - 60)), "first attempt")
    expect_duplicate(post(srv, body, SPEC.headers(srv, body, eid, SPEC.default_type,
                                                  t=now)), "retry")
    check_eq(one_row(srv, SPEC, eid)["duplicates"], 1, "duplicates")


def wrong_id_in_signature(srv):
    """The signature covers the id and the timestamp: changing either -> 401."""
    bad = []
    eid = SPEC.new_id("bind")
    body = SPEC.body(eid, SPEC.default_type)
    t = int(time.time())
    h = SPEC.headers(srv, body, eid, SPEC.default_type, t=t)
    for what, k, v in (("another webhook-id", "webhook-id", SPEC.new_id("other")),
                       ("another webhook-timestamp", "webhook-timestamp", str(t - 1))):
        h2 = dict(h)
        h2[k] = v
        r = post(srv, body, h2)
        if r.status != 401:
            bad.append("%s -> %d" % (what, r.status))
    r = post(srv, body.replace(b"1999", b"1"), h)
    if r.status != 401:
        bad.append("body altered -> %d" % r.status)
    check(not bad, "expected 401 for each: " + "; ".join(bad))
    no_row(srv, SPEC, eid)


def missing_headers(srv):
    """Without webhook-timestamp or webhook-id nothing can be verified: not
    accepted, nothing written.  Also a non-numeric timestamp."""
    bad = []
    for what, drop, repl in (("no webhook-timestamp", "webhook-timestamp", None),
                             ("no webhook-id", "webhook-id", None),
                             ("timestamp not a number", "webhook-timestamp", "soon"),
                             ("empty webhook-signature", "webhook-signature", "")):
        eid = SPEC.new_id("miss")
        body = SPEC.body(eid, SPEC.default_type)
        h = SPEC.headers(srv, body, eid, SPEC.default_type)
        if repl is None:
            del h[drop]
        else:
            h[drop] = repl
        r = post(srv, body, h)
        cases.note_refused(bad, r, 401, srv, "standard", eid, what)
    check(not bad, "; ".join(bad))


def missing_type(srv):
    eid = SPEC.new_id("notype")
    body = dumps_pretty({"timestamp": "2025-09-11T10:00:00Z", "data": {"type": "x"}})
    r = post(srv, body, SPEC.headers(srv, body, eid, "x"))
    expect_error(r, 400, "signed body without a top-level type")
    no_row(srv, SPEC, eid)


def main():
    return cases.run_provider_suite(SPEC, [
        ("accepted event processed to status 'done'",
         lambda srv: cases.case_processed(SPEC, srv)),
        ("published vector secret (whsec_MfKQ...): vector stale, signed now accepted",
         published_vector),
        ("secret configured without whsec_ accepted", unprefixed_secret),
        ("stale timestamp t-302 -> 401", timestamp_case, -302, 401),
        # +302: the receiver's clock may have ticked one second further
        ("future timestamp t+302 -> 401", timestamp_case, 302, 401),
        ("t-3600 and t+3600 -> 401", lambda srv: (
            timestamp_case(srv, -3600, 401), timestamp_case(srv, 3600, 401))),
        ("t-290 and t+290 inside the tolerance -> accepted", lambda srv: (
            timestamp_case(srv, -290, 200), timestamp_case(srv, 290, 200))),
        ("v1a-only (even with the right HMAC) and v2 -> 401", v1a_only),
        ("several space-separated signatures, one valid -> accepted", several_signatures),
        ("retry with a new timestamp -> duplicate", retry_resigned),
        ("id, timestamp and body are all signed", wrong_id_in_signature),
        ("missing/malformed webhook-id, -timestamp, -signature -> 401", missing_headers),
        ("body without type -> 400", missing_type),
        ("rotation: IDEMHOOK_STANDARD_SECRET and _2 both accepted",
         lambda srv: cases.case_rotation(SPEC, srv, "IDEMHOOK_STANDARD_SECRET",
                                         unknown=standard_secret,
                                         unknown_what="signed with an unknown secret")),
        ("rotation: one header signed with new and old secret accepted",
         rotation_both_signatures),
    ], provider_env={"IDEMHOOK_STANDARD_SECRET_2": standard_secret(),
                     "IDEMHOOK_STANDARD_SECRET_3": VEC_SECRET,
                     "IDEMHOOK_STANDARD_SECRET_4": base64.b64encode(os.urandom(32)).decode()},
        vector=("signer reproduces the published vector", vector))


if __name__ == "__main__":
    sys.exit(main())
