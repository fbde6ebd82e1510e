#!/usr/bin/env python3
"""End-to-end tests of asaas.fcgi behind lighttpd (shipped config).

Usage: test_asaas.py BINDIR   (or IH_BIN=BINDIR test_asaas.py)
Prints 'ok - ...' / 'not ok - ...: reason' lines; exits 1 if any failed.

Asaas sends a static token (asaas-access-token), no HMAC.  The event id is
the body's "id" (it contains '&'), the type its "event", the order key
payment.id.  Asaas counts only a literal 200 as success, so an
authenticated body we cannot use is kept as 'quarantined' and answered 200.
"""

import hashlib
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import ASAAS_TOKEN_HEADER, check, check_eq  # noqa: E402
import cases  # noqa: E402
from cases import (as_bytes, dumps_pretty, expect_accepted, expect_duplicate,  # noqa: E402
                   expect_error, expect_json_status, one_row)


def new_token():
    """32-255 characters, no spaces (Asaas token rules)."""
    return "tok" + os.urandom(24).hex()


class AsaasSpec(cases.Spec):
    name = "asaas"
    default_type = "PAYMENT_RECEIVED"

    def new_id(self, tag):
        # the shape Asaas documents: evt_<hex>&<digits>
        return "evt_%s&%d" % (os.urandom(16).hex(), int.from_bytes(os.urandom(4), "big"))

    def body(self, event_id, event_type, pad=0, payment_id=None):
        obj = {
            "id": event_id,
            "event": event_type,
            "dateCreated": "2024-06-12 16:45:03",
            "payment": {
                "object": "payment",
                "id": payment_id or "pay_" + os.urandom(6).hex(),
                "dateCreated": "2024-06-12",
                "customer": "cus_000005401844",
                "value": 100.0,
                "netValue": 94.51,
                "billingType": "PIX",
                "status": "RECEIVED",
                "description": "Pedido 056 \u2013 caf\u00e9" + ("x" * pad),
                "externalReference": "056984",
            },
        }
        return dumps_pretty(obj)

    def headers(self, server, body, event_id, event_type, secret=None):
        return {ASAAS_TOKEN_HEADER: secret or server.secrets["asaas"],
                "User-Agent": "Java/1.8.0_292"}

    def unsigned_headers(self, server, body, event_id, event_type):
        return {"User-Agent": "Java/1.8.0_292"}

    def forged_headers(self, server, body, event_id, event_type):
        return {ASAAS_TOKEN_HEADER: new_token(), "User-Agent": "Java/1.8.0_292"}


SPEC = AsaasSpec()
post = SPEC.post


def signed(srv):
    return SPEC.headers(srv, b"", "", "")


def expect_exact_200(r, status, what):
    """Asaas: a literal 200, never 201/202/204, with {"status": status}."""
    check(r.status == 200, "%s: Asaas needs exactly 200, got %d body=%r"
          % (what, r.status, r.body[:200]))
    expect_json_status(r, status, what)


# ---------------------------------------------------------------- cases

def processed(srv):
    eid = SPEC.new_id("done")
    pay = "pay_" + os.urandom(6).hex()
    body = SPEC.body(eid, "PAYMENT_CONFIRMED", payment_id=pay)
    expect_exact_200(post(srv, body, signed(srv)), "accepted", "new event")
    row = cases.wait_status(SPEC, srv, eid)
    check_eq(as_bytes(row["payload"]), body, "stored payload")
    check_eq(row["event_type"], "PAYMENT_CONFIRMED", "event_type")
    check_eq(row["order_key"], pay, "order_key (payment.id)")


def ampersand_id(srv):
    """The documented id shape, with '&', stored intact."""
    eid = "evt_05b708f961d739ea7eba7e4db318f621&%d" % int.from_bytes(os.urandom(4), "big")
    body = SPEC.body(eid, "PAYMENT_CREATED")
    expect_accepted(post(srv, body, signed(srv)))
    row = one_row(srv, SPEC, eid)
    check_eq(row["event_id"], eid, "stored event_id")
    check(not srv.rows("asaas", eid.split("&")[0]), "id cut at '&'")
    expect_duplicate(post(srv, body, signed(srv)), "redelivery")


def no_payment(srv):
    """An event without a payment object: accepted, no order key."""
    eid = SPEC.new_id("nopay")
    body = dumps_pretty({"id": eid, "event": "ACCOUNT_STATUS_GENERAL_APPROVAL_APPROVED",
                         "dateCreated": "2024-06-12 16:45:03",
                         "accountStatus": {"id": "acc_1", "general": "APPROVED"}})
    expect_accepted(post(srv, body, signed(srv)))
    row = cases.wait_status(SPEC, srv, eid)
    check(row["order_key"] is None, "order_key without payment: %r" % row["order_key"])


def quarantine_case(srv, body, what):
    n = srv.count("asaas")
    r = post(srv, body, signed(srv))
    expect_exact_200(r, "quarantined", what)
    name = "unusable:" + hashlib.sha256(body).hexdigest()
    rows = srv.rows("asaas", name)
    check(len(rows) == 1, "%s: expected one row %s, found %d (asaas rows %d -> %d)"
          % (what, name, len(rows), n, srv.count("asaas")))
    row = rows[0]
    check_eq(row["status"], "quarantined", "row status")
    check_eq(as_bytes(row["payload"]), body, "stored payload")
    r = post(srv, body, signed(srv))
    expect_exact_200(r, "duplicate", "%s, delivered again" % what)
    check_eq(srv.rows("asaas", name)[0]["duplicates"], 1, "duplicates")
    return name


def quarantine_not_json(srv):
    name = quarantine_case(srv, b"id=evt_1&event=PAYMENT_RECEIVED " + os.urandom(4).hex().encode(),
                           "authenticated non-JSON body")
    # it is never processed: after another event is processed, still quarantined
    processed(srv)
    check_eq(srv.rows("asaas", name)[0]["status"], "quarantined", "status later")


def quarantine_no_id(srv):
    body = dumps_pretty({"event": "PAYMENT_RECEIVED", "nonce": os.urandom(6).hex(),
                         "payment": {"id": "pay_1"}})
    quarantine_case(srv, body, "JSON body without id")


def quarantine_empty(srv):
    quarantine_case(srv, b"", "empty body")


def unauthenticated_garbage(srv):
    """Quarantine is only for authenticated bodies: no or a wrong token -> 401."""
    body = b"not json " + os.urandom(4).hex().encode()
    name = "unusable:" + hashlib.sha256(body).hexdigest()
    expect_error(post(srv, body, {}), 401, "non-JSON body without token")
    expect_error(post(srv, body, {ASAAS_TOKEN_HEADER: new_token()}), 401,
                 "non-JSON body with a wrong token")
    check(not srv.rows("asaas", name), "a row was written")


def token_variants(srv):
    """Empty, truncated, extended, case-changed tokens: 401."""
    tok = srv.secrets["asaas"]
    bad = []
    for what, v in (("empty", ""), ("truncated", tok[:-1]), ("extended", tok + "x"),
                    ("upper-cased", tok.upper()), ("prefix only", tok[:8])):
        eid = SPEC.new_id("tok")
        body = SPEC.body(eid, "PAYMENT_RECEIVED")
        r = post(srv, body, {ASAAS_TOKEN_HEADER: v})
        if r.status != 401:
            bad.append("%s token -> %d" % (what, r.status))
        elif srv.rows("asaas", eid):
            bad.append("%s token: row written" % what)
    check(not bad, "expected 401 for each: " + "; ".join(bad))


def main():
    return cases.run_provider_suite(SPEC, [
        ("accepted event processed to 'done', order_key = payment.id", processed),
        ("id with '&' stored intact; redelivery -> duplicate", ampersand_id),
        ("event without payment accepted, no order key", no_payment),
        ("authenticated non-JSON body -> exactly 200 quarantined; again -> duplicate",
         quarantine_not_json),
        ("authenticated JSON without id -> 200 quarantined", quarantine_no_id),
        ("authenticated empty body -> 200 quarantined", quarantine_empty),
        ("non-JSON body without or with a wrong token -> 401", unauthenticated_garbage),
        ("empty/truncated/extended/case-changed token -> 401", token_variants),
        ("rotation: IDEMHOOK_ASAAS_TOKEN and _2 both accepted",
         lambda srv: cases.case_rotation(SPEC, srv, "IDEMHOOK_ASAAS_TOKEN",
                                         label="token from ")),
    ], provider_env={"IDEMHOOK_ASAAS_TOKEN_2": new_token()},
        # cases.run_common without its 'non-JSON -> 400' case: Asaas
        # quarantines such a body (see quarantine_not_json).
        common_kw={"not_json": False, "auth_titles": (
            "wrong token -> 401, nothing written",
            "missing asaas-access-token -> 401",
            "token differing in its last characters -> 401")})


if __name__ == "__main__":
    sys.exit(main())
