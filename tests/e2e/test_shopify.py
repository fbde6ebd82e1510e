#!/usr/bin/env python3
"""End-to-end tests of shopify.fcgi behind lighttpd (shipped config).

Usage: test_shopify.py BINDIR   (or IH_BIN=BINDIR test_shopify.py)
Prints 'ok - ...' / 'not ok - ...: reason' lines; exits 1 if any failed.

The store keys a Shopify event on X-Shopify-Webhook-Id (one per delivery);
X-Shopify-Event-Id, shared by every subscription one merchant action
reaches, is only kept in the headers column.
"""

import base64
import contextlib
import hashlib
import hmac
import os
import sys
import time
import uuid

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import check, check_eq, check_vector, sign_shopify  # noqa: E402
import cases  # noqa: E402
from cases import (UNKNOWN_EFFECT, as_bytes, dumps_pretty, effects,  # noqa: E402
                   expect_accepted, expect_duplicate, expect_error, no_row, one_row)

# The suite's own folder, where the app/uninstalled action writes a line
# per run: the probe that relabels a body as app/uninstalled must add none.
ACTION_DIR = cases.action_folder("shopify")
UNINSTALL_OUT = os.path.join(ACTION_DIR, "uninstalled.out")
UNINSTALL_ACTION = cases.echo_action("app/uninstalled", UNINSTALL_OUT)

SHOP = "idemhook-test.myshopify.com"
API_VERSION = "2025-07"
UA = "Shopify-Captain-Hook"
COMPLIANCE = ("customers/data_request", "customers/redact", "shop/redact")


def compliance_body(topic):
    """The payload shapes of the three mandatory compliance topics."""
    if topic == "shop/redact":
        return {"shop_id": 954889, "shop_domain": SHOP}
    if topic == "customers/redact":
        return {"shop_id": 954889, "shop_domain": SHOP,
                "customer": {"id": 191167, "email": "john@example.com",
                             "phone": "555-625-1199"},
                "orders_to_redact": [299938, 280263, 220458]}
    return {"shop_id": 954889, "shop_domain": SHOP,
            "orders_requested": [299938, 280263, 220458],
            "customer": {"id": 191167, "email": "john@example.com",
                         "phone": "555-625-1199"},
            "data_request": {"id": 9999}}


class ShopifySpec(cases.Spec):
    name = "shopify"
    default_type = "orders/create"

    def new_id(self, tag):
        return str(uuid.uuid4())  # X-Shopify-Webhook-Id

    def body(self, event_id, event_type, pad=0):
        if event_type in COMPLIANCE:
            return dumps_pretty(compliance_body(event_type))
        # Real bodies of distinct orders differ (id, timestamps).
        oid = int(hashlib.sha256(event_id.encode()).hexdigest()[:15], 16)
        obj = {"id": oid, "email": "jon@example.com",
               "name": "#9999", "currency": "USD", "total_price": "403.00",
               "note": "Caf\u00e9 \u2713" + ("x" * pad),
               "line_items": [{"id": 866550311766439020, "title": "IPod Nano - 8GB",
                               "quantity": 1, "price": "199.00"}]}
        return dumps_pretty(obj)

    def base_headers(self, event_id, event_type, event_uuid=None):
        return {"X-Shopify-Topic": event_type,
                "X-Shopify-Webhook-Id": event_id,
                "X-Shopify-Event-Id": event_uuid or str(uuid.uuid4()),
                "X-Shopify-Shop-Domain": SHOP,
                "X-Shopify-API-Version": API_VERSION,
                "X-Shopify-Triggered-At": "2025-09-11T10:00:00.123456789Z",
                "User-Agent": UA}

    def headers(self, server, body, event_id, event_type, secret=None, event_uuid=None):
        h = self.base_headers(event_id, event_type, event_uuid)
        h["X-Shopify-Hmac-Sha256"] = sign_shopify(secret or server.secrets["shopify"], body)
        return h

    def unsigned_headers(self, server, body, event_id, event_type):
        return self.base_headers(event_id, event_type)

    def forged_headers(self, server, body, event_id, event_type):
        h = self.base_headers(event_id, event_type)
        h["X-Shopify-Hmac-Sha256"] = base64.b64encode(os.urandom(32)).decode()
        return h


SPEC = ShopifySpec()
post = SPEC.post


# ---------------------------------------------------------------- cases

def vector():
    check_vector("shopify")


def compliance(srv, topic):
    """A mandatory compliance topic: accepted, processed, and handled by a
    case of the switch (not the fallback for unknown types)."""
    eid = SPEC.new_id("gdpr")
    r, body = SPEC.deliver(srv, eid, topic)
    expect_accepted(r, topic)
    row = cases.wait_status(SPEC, srv, eid)
    check_eq(row["event_type"], topic, "event_type")
    check_eq(as_bytes(row["payload"]), body, "stored payload")
    kinds = effects(srv, row)
    check(len(kinds) == 1 and kinds[0] != UNKNOWN_EFFECT,
          "%s: expected one effect from its own case of the switch, got %r"
          % (topic, kinds))


def unknown_topic(srv):
    """Control for the case above: a topic outside the switch is still
    accepted and processed, with the unknown-type effect."""
    eid = SPEC.new_id("unknown")
    r, _ = SPEC.deliver(srv, eid, "fulfillment_holds/added")
    expect_accepted(r)
    kinds = effects(srv, cases.wait_status(SPEC, srv, eid))
    check_eq(kinds, [UNKNOWN_EFFECT], "effects of an unknown topic")


def kept_headers(srv):
    eid = SPEC.new_id("hdrs")
    ev = str(uuid.uuid4())
    body = SPEC.body(eid, "orders/create")
    h = SPEC.headers(srv, body, eid, "orders/create", event_uuid=ev)
    expect_accepted(post(srv, body, h))
    stored = one_row(srv, SPEC, eid)["headers"]
    lines = {l.split(":", 1)[0].strip().lower(): l.split(":", 1)[1].strip()
             for l in stored.splitlines() if ":" in l}
    for name in ("X-Shopify-Shop-Domain", "X-Shopify-Event-Id", "X-Shopify-Triggered-At",
                 "X-Shopify-API-Version", "X-Shopify-Topic", "X-Shopify-Webhook-Id"):
        check_eq(lines.get(name.lower()), h[name], "%s in the headers column" % name)


def shared_event_id(srv):
    """Two subscriptions, one merchant action: same Event-Id, two Webhook-Ids."""
    ev = str(uuid.uuid4())
    body = SPEC.body("", "orders/create")
    ids = [SPEC.new_id("sub"), SPEC.new_id("sub")]
    for wid in ids:
        r = post(srv, body, SPEC.headers(srv, body, wid, "orders/create", event_uuid=ev))
        expect_accepted(r, "Webhook-Id %s" % wid)
    for wid in ids:
        row = one_row(srv, SPEC, wid)
        check("%s" % ev in row["headers"], "Event-Id not kept for %s" % wid)
    # a retry of one delivery (same Webhook-Id) is that delivery's duplicate
    expect_duplicate(post(srv, body, SPEC.headers(srv, body, ids[0], "orders/create",
                                                  event_uuid=ev)), "retry")


def empty_body(srv):
    """An empty body with a matching HMAC: 401 (as shopify-api-js)."""
    eid = SPEC.new_id("empty")
    r = post(srv, b"", SPEC.headers(srv, b"", eid, "shop/redact"))
    expect_error(r, 401, "empty body")
    no_row(srv, SPEC, eid)


def missing_headers(srv):
    bad = []
    for drop in ("X-Shopify-Webhook-Id", "X-Shopify-Topic"):
        eid = SPEC.new_id("miss")
        body = SPEC.body(eid, "orders/create")
        h = SPEC.headers(srv, body, eid, "orders/create")
        del h[drop]
        r = post(srv, body, h)
        if r.status != 400:
            bad.append("without %s -> %d, expected 400" % (drop, r.status))
        elif srv.rows("shopify", eid):
            bad.append("without %s: row written" % drop)
    eid = SPEC.new_id("hex")
    body = SPEC.body(eid, "orders/create")
    h = SPEC.unsigned_headers(srv, body, eid, "orders/create")
    h["X-Shopify-Hmac-Sha256"] = hmac.new(srv.secrets["shopify"].encode(), body,
                                          hashlib.sha256).hexdigest()
    r = post(srv, body, h)
    if r.status != 401:
        bad.append("hex instead of base64 HMAC -> %d, expected 401" % r.status)
    check(not bad, "; ".join(bad))


def lowercase_headers(srv):
    """HTTP/2 lower-cases header names."""
    eid = SPEC.new_id("lc")
    body = SPEC.body(eid, "orders/create")
    h = {k.lower(): v for k, v in SPEC.headers(srv, body, eid, "orders/create").items()}
    expect_accepted(post(srv, body, h))
    one_row(srv, SPEC, eid)


def tampered(srv):
    eid = SPEC.new_id("tamper")
    body = SPEC.body(eid, "orders/create")
    h = SPEC.headers(srv, body, eid, "orders/create")
    expect_error(post(srv, body.replace(b"403.00", b"1.00"), h), 401,
                 "body altered after signing")
    no_row(srv, SPEC, eid)


def replay_probe(srv):
    """A captured orders/create body replayed under a new Webhook-Id and
    Event-Id as another topic: 200 "replayed" (Shopify would otherwise
    retry it 8 times and delete the subscription), nothing recorded or
    processed, one log line naming the earlier event."""
    eid = SPEC.new_id("orig")
    body = SPEC.body(eid, "orders/create")
    captured = SPEC.headers(srv, body, eid, "orders/create")
    expect_accepted(post(srv, body, captured))
    cases.wait_status(SPEC, srv, eid)
    before = srv.count("shopify")
    probes = []
    for topic in ("orders/paid", "app/uninstalled"):
        new = SPEC.new_id("replay")
        h = dict(captured, **{"X-Shopify-Webhook-Id": new, "X-Shopify-Topic": topic,
                              "X-Shopify-Event-Id": str(uuid.uuid4())})
        r = post(srv, body, h)
        check_eq((r.status, (r.json() or {}).get("status")), (200, "replayed"),
                 "replay as %s" % topic)
        probes.append(new)
    check_eq(srv.count("shopify"), before, "rows after the replays")
    for new in probes:
        no_row(srv, SPEC, new)
        lines = [l for l in srv.log_lines("shopify") if "outcome=replayed" in l and new in l]
        check(len(lines) == 1 and eid in lines[0],
              "one log line naming the earlier event: %r" % lines)
    row = one_row(srv, SPEC, eid)
    check_eq((row["event_type"], row["duplicates"]), ("orders/create", 0), "the original")


def objects_of(srv, oid):
    """Every object row of the id oid, whatever its kind."""
    with contextlib.closing(srv.connect_ro()) as c:
        return [{"kind": r[0], "status": r[1], "deleted": int(r[2]), "source_at": r[3],
                 "event_id": r[4]}
                for r in c.execute(
                    "SELECT kind, status, deleted, source_at, event_id FROM idemhook_objects"
                    " WHERE provider = 'shopify' AND object_id = ?", (str(oid),)).fetchall()]


def history_of(srv, kind, oid):
    with contextlib.closing(srv.connect_ro()) as c:
        return {r[0]: r[1] for r in c.execute(
            "SELECT event_id, verdict FROM idemhook_object_events"
            " WHERE provider = 'shopify' AND kind = ? AND object_id = ?",
            (kind, str(oid))).fetchall()}


def uninstall_runs():
    try:
        with open(UNINSTALL_OUT) as f:
            return f.read().split()
    except FileNotFoundError:
        return []


def captured_order(srv):
    """A real orders/create delivery, processed; returns its body, headers
    and order id: what a captured delivery (show, a backup, a proxy log)
    gives a sender."""
    eid = SPEC.new_id("orig")
    oid = int.from_bytes(os.urandom(6), "big")
    body = dumps_pretty({"id": oid, "email": "jon@example.com", "name": "#1001",
                         "financial_status": "paid", "total_price": "10.00",
                         "updated_at": "2025-09-11T10:00:00-04:00"})
    h = SPEC.headers(srv, body, eid, "orders/create")
    expect_accepted(post(srv, body, h))
    cases.wait_status(SPEC, srv, eid)
    return eid, body, h, oid


def relabel(srv, body, captured, topic):
    """The probe: the captured body and its X-Shopify-Event-Id, under a
    new Webhook-Id and another topic.  Must be 200 "replayed", no row, one
    log line naming the first event."""
    new = SPEC.new_id("relabel")
    h = dict(captured, **{"X-Shopify-Webhook-Id": new, "X-Shopify-Topic": topic})
    r = post(srv, body, h)
    check_eq((r.status, (r.json() or {}).get("status")), (200, "replayed"),
             "the body as %s under its own Event-Id" % topic)
    no_row(srv, SPEC, new)
    lines = [l for l in srv.log_lines("shopify") if "outcome=replayed" in l and new in l]
    check(len(lines) == 1 and captured["X-Shopify-Webhook-Id"] in lines[0],
          "one log line naming the first event: %r" % lines)
    return new


def relabel_delete(srv):
    """Issue 24, High 1, first probe: an order body re-sent as orders/delete
    with the copied X-Shopify-Event-Id left a tombstone on the real order."""
    eid, body, captured, oid = captured_order(srv)
    relabel(srv, body, captured, "orders/delete")
    time.sleep(0.3)
    objs = objects_of(srv, oid)
    check_eq([(o["kind"], o["status"], o["deleted"], o["event_id"]) for o in objs],
             [("orders", "paid", 0, eid)], "the order's object after the probe")


def relabel_kind(srv):
    """Second probe: the order body as products/update made a products
    object; the object's kind is what the body was first recorded as."""
    eid, body, captured, oid = captured_order(srv)
    relabel(srv, body, captured, "products/update")
    relabel(srv, body, captured, "customers/update")
    time.sleep(0.3)
    check_eq(sorted(o["kind"] for o in objects_of(srv, oid)), ["orders"],
             "object kinds of the order's id")


def relabel_app(srv):
    """Third probe: the order body as app/uninstalled ran that topic's
    actions; and never as a compliance topic either (the order body has
    no compliance shape, but a compliance body has no other topic)."""
    eid, body, captured, oid = captured_order(srv)
    before_runs = uninstall_runs()
    new = relabel(srv, body, captured, "app/uninstalled")
    # A control: the action does run for a real app/uninstalled.
    real = SPEC.new_id("uninst")
    ubody = dumps_pretty({"id": 548380009, "name": "Super Toys", "domain": SHOP})
    expect_accepted(post(srv, ubody, SPEC.headers(srv, ubody, real, "app/uninstalled")))
    cases.wait_status(SPEC, srv, real)
    runs = uninstall_runs()
    check(real in runs, "the app/uninstalled action never ran for a real one: %r" % runs)
    check(new not in runs and len(runs) == len(before_runs) + 1,
          "the relabelled body ran app/uninstalled's action: %r" % runs)
    # A compliance body recorded once is never another topic, and the
    # uninstall body is never an order.
    cbody = dumps_pretty({"shop_id": int.from_bytes(os.urandom(6), "big"),
                          "shop_domain": SHOP})
    cid = SPEC.new_id("redact")
    ch = SPEC.headers(srv, cbody, cid, "shop/redact")
    expect_accepted(post(srv, cbody, ch))
    relabel(srv, cbody, ch, "shop/update")
    uh = SPEC.headers(srv, ubody, real, "app/uninstalled")
    relabel(srv, ubody, uh, "orders/updated")


def triggered_at(srv):
    """Issue 24, Medium 2 (Shopify): a refund's source time pinned by the
    unsigned X-Shopify-Triggered-At (2999-01-01) made every later real
    event stale.  The time comes from the signed body (updated_at, else
    created_at), else when the event was received."""
    rid = int.from_bytes(os.urandom(6), "big")
    first, later = SPEC.new_id("refund"), SPEC.new_id("refund")
    b1 = dumps_pretty({"id": rid, "order_id": 450789469, "note": "first",
                       "created_at": "2025-09-11T10:00:00-04:00"})
    h1 = SPEC.headers(srv, b1, first, "refunds/create")
    h1["X-Shopify-Triggered-At"] = "2999-01-01T00:00:00Z"
    expect_accepted(post(srv, b1, h1))
    cases.wait_status(SPEC, srv, first)
    b2 = dumps_pretty({"id": rid, "order_id": 450789469, "note": "later",
                       "created_at": "2025-09-11T10:05:00-04:00"})
    expect_accepted(post(srv, b2, SPEC.headers(srv, b2, later, "refunds/create")))
    cases.wait_status(SPEC, srv, later)
    objs = objects_of(srv, rid)
    check_eq([(o["kind"], o["event_id"]) for o in objs], [("refunds", later)],
             "the refund's row is the later event's")
    check_eq(history_of(srv, "refunds", rid), {first: "applied", later: "applied"},
             "verdicts")
    # A body with no time of its own: when it was received, not 2999.
    oid = int.from_bytes(os.urandom(6), "big")
    nid = SPEC.new_id("notime")
    b3 = dumps_pretty({"id": oid, "order_id": 450789469, "note": "no time"})
    h3 = SPEC.headers(srv, b3, nid, "refunds/create")
    h3["X-Shopify-Triggered-At"] = "2999-01-01T00:00:00Z"
    t0 = int(time.time() * 1000) - 2000
    expect_accepted(post(srv, b3, h3))
    cases.wait_status(SPEC, srv, nid)
    t1 = int(time.time() * 1000) + 2000
    at = objects_of(srv, oid)[0]["source_at"]
    check(t0 <= int(at) <= t1, "source time %r, not within the delivery (%d..%d)"
          % (at, t0, t1))


def compliance_shape(srv):
    """The compliance topics need their documented body: an order body, or
    another compliance topic's body, under customers/redact, shop/redact
    or customers/data_request is refused (400), even never seen before."""
    bad = []
    for topic, body in (
            ("customers/redact", SPEC.body(SPEC.new_id("o"), "orders/create")),
            ("shop/redact", SPEC.body(SPEC.new_id("o"), "orders/create")),
            ("customers/data_request", dumps_pretty(compliance_body("customers/redact"))),
            ("customers/redact", dumps_pretty(compliance_body("customers/data_request"))),
            ("shop/redact", dumps_pretty(compliance_body("customers/redact")))):
        eid = SPEC.new_id("shape")
        r = post(srv, body, SPEC.headers(srv, body, eid, topic))
        cases.note_refused(bad, r, 400, srv, "shopify", eid,
                           topic + " with another body")
    check(not bad, "; ".join(bad))


def legit_repeats(srv):
    """What Shopify repeats keeps working: the same body under a new
    Webhook-Id for the same topic (another subscription), a retry
    (duplicate), and one merchant action's body under several topics
    sharing its X-Shopify-Event-Id (orders/create, orders/paid and
    orders/updated of one order)."""
    ev = str(uuid.uuid4())
    eid = SPEC.new_id("legit")
    body = SPEC.body(eid, "orders/create")
    expect_accepted(post(srv, body, SPEC.headers(srv, body, eid, "orders/create",
                                                 event_uuid=ev)))
    sub = SPEC.new_id("sub")
    expect_accepted(post(srv, body, SPEC.headers(srv, body, sub, "orders/create",
                                                 event_uuid=ev)),
                    "another subscription, same topic")
    expect_duplicate(post(srv, body, SPEC.headers(srv, body, eid, "orders/create",
                                                  event_uuid=ev)), "retry")
    for topic in ("orders/paid", "orders/updated"):
        other = SPEC.new_id("fan")
        expect_accepted(post(srv, body, SPEC.headers(srv, body, other, topic,
                                                     event_uuid=ev)),
                        "same action as %s (same Event-Id)" % topic)
        check_eq(one_row(srv, SPEC, other)["event_type"], topic, "stored topic")


def main():
    return cases.run_provider_suite(SPEC, [
        ("accepted event processed to status 'done'",
         lambda srv: cases.case_processed(SPEC, srv)),
    ] + [
        ("compliance topic %s accepted, processed by its own case" % topic,
         compliance, topic) for topic in COMPLIANCE
    ] + [
        ("topic outside the switch accepted, processed as unknown type", unknown_topic),
        ("Shop-Domain, Event-Id, Triggered-At, API-Version kept in headers", kept_headers),
        ("same Event-Id, two Webhook-Ids -> two rows", shared_event_id),
        ("empty body with a matching HMAC -> 401", empty_body),
        ("missing Webhook-Id/Topic -> 400; hex HMAC -> 401", missing_headers),
        ("lower-case header names (HTTP/2) accepted", lowercase_headers),
        ("body altered after signing -> 401", tampered),
        ("probe: captured body replayed as another topic under new ids -> 200 replayed, "
         "nothing recorded or processed, logged", replay_probe),
        ("issue 24 probe: order body + its Event-Id as orders/delete -> 200 replayed, "
         "no tombstone", relabel_delete),
        ("issue 24 probe: order body + its Event-Id as products/update -> 200 replayed, "
         "no products object", relabel_kind),
        ("issue 24 probe: order body + its Event-Id as app/uninstalled -> 200 replayed, "
         "its action never runs; compliance/app bodies never change topic", relabel_app),
        ("issue 24: X-Shopify-Triggered-At never orders an object (2999 pinned a refund)",
         triggered_at),
        ("compliance topics need their own body shape -> 400", compliance_shape),
        ("legitimate repeats: other subscription, retry, one action's topics -> accepted",
         legit_repeats),
        ("rotation: IDEMHOOK_SHOPIFY_SECRET and _2 both accepted",
         lambda srv: cases.case_rotation(SPEC, srv, "IDEMHOOK_SHOPIFY_SECRET",
                                         unknown=lambda: os.urandom(16).hex())),
    ], provider_env={"IDEMHOOK_SHOPIFY_SECRET_2": os.urandom(16).hex(),
                     "IDEMHOOK_SHOPIFY_ACTION": UNINSTALL_ACTION},
        vector=("signer reproduces the published vector", vector))


if __name__ == "__main__":
    sys.exit(main())
