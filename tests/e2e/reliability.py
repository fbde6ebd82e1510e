"""Helpers shared by the reliability tests (test_faults, test_load,
test_hostile, test_secrets): one valid delivery builder per provider, row
and effect counts, the action that appends event ids to a file, and the
operator's command.  Python 3 standard library only; not a test itself.
"""

import contextlib
import json
import os
import sqlite3
import subprocess
import time
import uuid

import harness
from harness import (ASAAS_TOKEN_HEADER, PROVIDERS, check, sign_github,
                     sign_shopify, sign_standard, sign_stripe)

# Event types each provider's switch knows.
TYPES = {
    "stripe": "payment_intent.succeeded",
    "github": "push",
    "shopify": "orders/create",
    "asaas": "PAYMENT_RECEIVED",
    "standard": "invoice.paid",
}
GITHUB_HOOK_ID = "7001"


class Delivery:
    """One provider delivery: path, body, headers, and the event id the
    store keys it on."""

    def __init__(self, provider, eid, db_id, body, headers):
        self.provider = provider
        self.eid = eid
        self.db_id = db_id
        self.body = body
        self.headers = headers
        self.path = "/hooks/" + provider

    def post(self, srv, timeout=None):
        kw = {} if timeout is None else {"timeout": timeout}
        return srv.post(self.path, self.body, self.headers, **kw)


def new_eid(provider, tag="e"):
    if provider == "github":
        return str(uuid.uuid4())
    # No '.' (Standard Webhooks forbids it in webhook-id).
    return "evt_%s_%s" % (tag, os.urandom(6).hex())


def body_for(provider, eid, etype=None, extra=None):
    """A compact JSON body for the event, as bytes."""
    etype = etype or TYPES[provider]
    if provider == "stripe":
        obj = {"id": eid, "object": "event", "type": etype,
               "data": {"object": {"id": "pi_1", "amount": 2000}}}
    elif provider == "asaas":
        obj = {"id": eid, "event": etype, "dateCreated": "2024-06-12 16:45:03",
               "payment": {"id": "pay_" + eid[-8:], "value": 10.5}}
    elif provider == "standard":
        obj = {"type": etype, "timestamp": "2024-06-12T16:45:03Z",
               "data": {"id": eid}}
    elif provider == "github":
        # Real bodies of distinct events differ (commit ids), and one body
        # under two GUIDs is refused as a replay.
        obj = {"ref": "refs/heads/main", "after": eid, "repository": {"id": 1},
               "sender": {"login": "octocat"}}
    else:
        obj = {"id": 820982911946154508, "email": "jon@example.com",
               "total_price": "10.00"}
    if extra:
        obj.update(extra)
    return json.dumps(obj, separators=(",", ":")).encode()


def sign(srv, provider, eid, body, etype=None, secret=None):
    """The headers of a valid delivery of body for event eid."""
    etype = etype or TYPES[provider]
    s = secret if secret is not None else srv.secrets[provider]
    if provider == "stripe":
        return {"Stripe-Signature": sign_stripe(s, body)}
    if provider == "github":
        return {"X-GitHub-Event": etype, "X-GitHub-Delivery": eid,
                "X-GitHub-Hook-ID": GITHUB_HOOK_ID,
                "X-Hub-Signature-256": sign_github(s, body)}
    if provider == "shopify":
        return {"X-Shopify-Hmac-Sha256": sign_shopify(s, body),
                "X-Shopify-Topic": etype, "X-Shopify-Webhook-Id": eid,
                "X-Shopify-Shop-Domain": "shop.myshopify.com",
                "X-Shopify-API-Version": "2024-07"}
    if provider == "asaas":
        return {ASAAS_TOKEN_HEADER: s}
    if provider == "standard":
        ts = int(time.time())
        return {"webhook-id": eid, "webhook-timestamp": str(ts),
                "webhook-signature": sign_standard(s, eid, ts, body)}
    raise ValueError(provider)


def db_id(provider, eid):
    return "%s:%s" % (GITHUB_HOOK_ID, eid) if provider == "github" else eid


def delivery(srv, provider, eid=None, etype=None, body=None, tag="e"):
    """A freshly signed delivery (a provider's retry re-signs, too)."""
    eid = eid or new_eid(provider, tag)
    if body is None:
        body = body_for(provider, eid, etype)
    return Delivery(provider, eid, db_id(provider, eid), body,
                    sign(srv, provider, eid, body, etype))


# ------------------------------------------------------------ store

def query(db, sql, args=()):
    """Rows of a read-only query on the store (a missing store: [])."""
    if not harness.db_exists(db):
        return []
    c = harness.db_connect(db, timeout=10, ro=True)
    with contextlib.closing(c):
        try:
            return c.execute(sql, args).fetchall()
        except harness.PgError as e:
            if "does not exist" in str(e):
                return []       # no receiver has created the schema yet
            raise


def count_rows(db):
    try:
        return query(db, "SELECT count(*) FROM events")[0][0]
    except (sqlite3.Error, harness.PgError, IndexError):
        return 0


def rows_of(db, provider, event_id):
    return query(db, "SELECT id, status, duplicates FROM events "
                 "WHERE provider=? AND event_id=?", (provider, event_id))


# ------------------------------------------------------------ actions

def action_env(log_path, providers=PROVIDERS):
    """IDEMHOOK_<P>_ACTION settings: append '<provider> <event id>' to
    log_path, one line per run, with O_APPEND (atomic for short lines)."""
    cmd = ('* printf "%%s %%s\\n" "$IDEMHOOK_PROVIDER" "$IDEMHOOK_EVENT_ID" '
           '>> %s' % log_path)
    return {"IDEMHOOK_%s_ACTION" % p.upper(): cmd for p in providers}


def action_runs(log_path):
    """{(provider, event id): number of runs} from the action's file."""
    runs = {}
    try:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.rstrip("\n")
                if line:
                    k = tuple(line.split(" ", 1))
                    runs[k] = runs.get(k, 0) + 1
    except FileNotFoundError:
        pass
    return runs


# ------------------------------------------------------------ idemhook

def work_once(bindir, srv, extra_env=None, timeout=300):
    """Runs 'idemhook work --once' on srv's store with srv's settings."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "IDEMHOOK_DB": srv.db}
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
        if k in os.environ:
            env[k] = os.environ[k]
    for p in srv.providers:
        env[srv_secret_env(p)] = srv.secrets[p]
    env.update(srv.env)
    env.pop("IDEMHOOK_FAULT", None)
    env.update(extra_env or {})
    r = subprocess.run([os.path.join(bindir, "idemhook"), "work", "--once"],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    out = r.stdout.decode(errors="replace") + r.stderr.decode(errors="replace")
    check(r.returncode == 0, "idemhook work --once exited %d: %s"
          % (r.returncode, out[-600:]))
    return out


def srv_secret_env(provider):
    return ("IDEMHOOK_ASAAS_TOKEN" if provider == "asaas"
            else "IDEMHOOK_%s_SECRET" % provider.upper())


def wait_for(pred, timeout=20.0, step=0.1):
    """Polls pred() until true or timeout; returns its last value."""
    deadline = time.monotonic() + timeout
    v = pred()
    while not v and time.monotonic() < deadline:
        time.sleep(step)
        v = pred()
    return v
