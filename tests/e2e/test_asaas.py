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
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (ASAAS_TOKEN_HEADER, HarnessError, Server, Servers, Tap,  # noqa: E402
                     bin_dir, check, check_eq, install_signal_cleanup)
import cases  # noqa: E402
from cases import (as_bytes, dumps_pretty, expect_accepted, expect_duplicate,  # noqa: E402
                   expect_error, expect_json_status, one_row)

DONE_TIMEOUT = 15.0


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


def post(srv, body, headers):
    return srv.post("/hooks/asaas", body, headers)


def signed(srv):
    return SPEC.headers(srv, b"", "", "")


def wait_status(srv, event_id, want="done", timeout=DONE_TIMEOUT):
    deadline = time.monotonic() + timeout
    rows = []
    while time.monotonic() < deadline:
        rows = srv.rows("asaas", event_id)
        if len(rows) == 1 and rows[0]["status"] == want:
            return rows[0]
        time.sleep(0.1)
    check(False, "row %s: expected status %r within %.0fs, got %r"
          % (event_id, want, timeout, [r["status"] for r in rows]))


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
    row = wait_status(srv, eid)
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
    row = wait_status(srv, eid)
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


def rotation(srv):
    t1 = srv.secrets["asaas"]
    t2 = srv.provider_env["asaas"]["IDEMHOOK_ASAAS_TOKEN_2"]
    for what, t in (("IDEMHOOK_ASAAS_TOKEN", t1), ("IDEMHOOK_ASAAS_TOKEN_2", t2)):
        eid = SPEC.new_id("rot")
        r, _ = SPEC.deliver(srv, eid, secret=t)
        expect_accepted(r, "token from " + what)
        one_row(srv, SPEC, eid)


def run_common(tap, srv):
    """cases.run_common without its 'non-JSON -> 400' case: Asaas
    quarantines such a body (see quarantine_not_json)."""
    p = "asaas: "
    t = tap.run
    t(p + "accepted: 200, one row, payload byte-identical", cases.case_accepted, SPEC, srv)
    t(p + "DB directory 0700 and file 0600 when created", cases.case_db_modes, SPEC, srv)
    t(p + "DB is WAL with UNIQUE(provider,event_id)", cases.case_wal, SPEC, srv)
    t(p + "duplicate: identical redelivery -> duplicate, one row, duplicates=1",
      cases.case_duplicate, SPEC, srv)
    t(p + "300 KB body accepted byte-identical", cases.case_large_body, SPEC, srv)
    t(p + "wrong token -> 401, nothing written", cases.case_forged, SPEC, srv)
    t(p + "missing asaas-access-token -> 401", cases.case_missing_auth, SPEC, srv)
    t(p + "token differing in its last characters -> 401", cases.case_wrong_secret, SPEC, srv)
    t(p + "GET/PUT -> 405 with Allow: POST", cases.case_method, SPEC, srv)
    t(p + "50 concurrent deliveries of one event -> 1 accepted, 49 duplicate",
      cases.case_concurrent, SPEC, srv)
    t(p + "50 concurrent distinct events -> 50 accepted, 50 rows",
      cases.case_concurrent_distinct, SPEC, srv)
    t(p + "chunked request body accepted byte-identical", cases.case_chunked, SPEC, srv)
    t(p + "URL with a query string accepted", cases.case_query_string, SPEC, srv)


def main():
    tap = Tap()
    try:
        bindir = bin_dir()
    except HarnessError as e:
        tap.not_ok("asaas: setup", e)
        return tap.finish()
    if not os.path.exists(os.path.join(bindir, "asaas.fcgi")):
        tap.not_ok("asaas: setup", "no asaas.fcgi in %s" % bindir)
        return tap.finish()

    servers = Servers()
    install_signal_cleanup(servers)
    with servers:
        srv = servers.add(Server(bindir, providers=["asaas"], name="main",
                                 provider_env={"asaas": {
                                     "IDEMHOOK_ASAAS_TOKEN_2": new_token()}}))
        if tap.run("asaas: lighttpd starts with the shipped config", srv.start):
            run_common(tap, srv)
            t = tap.run
            t("asaas: accepted event processed to 'done', order_key = payment.id",
              processed, srv)
            t("asaas: id with '&' stored intact; redelivery -> duplicate", ampersand_id, srv)
            t("asaas: event without payment accepted, no order key", no_payment, srv)
            t("asaas: authenticated non-JSON body -> exactly 200 quarantined; again -> "
              "duplicate", quarantine_not_json, srv)
            t("asaas: authenticated JSON without id -> 200 quarantined", quarantine_no_id, srv)
            t("asaas: authenticated empty body -> 200 quarantined", quarantine_empty, srv)
            t("asaas: non-JSON body without or with a wrong token -> 401",
              unauthenticated_garbage, srv)
            t("asaas: empty/truncated/extended/case-changed token -> 401", token_variants, srv)
            t("asaas: rotation: IDEMHOOK_ASAAS_TOKEN and _2 both accepted", rotation, srv)
            cases.run_final(tap, SPEC, srv)
            srv.stop()
        cases.run_failure_modes(tap, SPEC, bindir, servers)
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
