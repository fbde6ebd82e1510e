#!/usr/bin/env python3
"""A stand-in for Shopify's Admin GraphQL API: webhook subscriptions.

  GET  /admin/api/{version}/orders.json      REST (legacy, still served):
                                             status, updated_at_min, limit,
                                             paged by page_info in the Link
                                             header; orders in the shape of
                                             fixtures/shopify_order.json
  POST /admin/api/{version}/graphql.json
    query webhookSubscriptions(first, after)  -> edges { node { id topic uri
                                                 ... } } pageInfo { hasNextPage
                                                 endCursor }
    mutation webhookSubscriptionCreate(topic, webhookSubscription: {uri,
                                       format}) -> webhookSubscription { id }
                                                   userErrors { field message }

Authentication is the X-Shopify-Access-Token header; a wrong token gets
401 {"errors": "[API] Invalid API key or access token ..."}.  Pages hold
at most PAGE subscriptions whatever "first" asks, so that a client must
follow endCursor.  The node's fields are those of the WebhookSubscription
object (id as a gid, topic as the WebhookSubscriptionTopic enum, uri,
format, createdAt, updatedAt), from fixtures/shopify_subscription.json.
The query text is not parsed as GraphQL: the operation is recognised by
its field name, and its arguments come from the variables.
"""

import base64
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from standins.base import Standin  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PAGE = 2


def iso_s(t):
    """Unix seconds of an ISO 8601 time with Z or an offset."""
    import datetime
    return datetime.datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp()


def fixture(name):
    with open(os.path.join(HERE, "fixtures", name)) as f:
        return json.load(f)


class ShopifyStandin(Standin):
    def __init__(self, token, version="2025-07"):
        super().__init__()
        self.token = token
        self.path = "/admin/api/%s/graphql.json" % version
        self.subs = []
        self.orders = []
        self.next_id = 1000

    def subscribe(self, topic, uri):
        self.next_id += 1
        s = fixture("shopify_subscription.json")
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        s.update({"id": "gid://shopify/WebhookSubscription/%d" % self.next_id,
                  "legacyResourceId": str(self.next_id), "topic": topic, "uri": uri,
                  "createdAt": now, "updatedAt": now})
        self.subs.append(s)
        return s

    def order(self, oid, status, updated_at):
        o = fixture("shopify_order.json")
        o.update({"id": oid, "admin_graphql_api_id": "gid://shopify/Order/%d" % oid,
                  "name": "#%d" % (oid % 10000), "financial_status": status,
                  "updated_at": updated_at})
        self.orders.append(o)
        return o

    def remove(self, topic):
        self.subs = [s for s in self.subs if s["topic"] != topic]

    def route(self, req):
        if req["headers"].get("x-shopify-access-token") != self.token:
            return (401, {}, {"errors": "[API] Invalid API key or access token "
                                        "(unrecognized login or wrong password)"})
        if req["path"] == self.path.replace("graphql.json", "orders.json") \
                and req["method"] == "GET":
            return self.list_orders(req)
        if req["path"] != self.path or req["method"] != "POST":
            return (404, {}, {"errors": "Not Found"})
        try:
            doc = json.loads(req["body"])
            q, v = doc["query"], doc.get("variables") or {}
        except (ValueError, KeyError, TypeError):
            return (400, {}, {"errors": {"query": "Required parameter missing or invalid"}})
        if "webhookSubscriptionCreate" in q:
            return self.create(v)
        if "webhookSubscriptions" in q:
            return self.list(v)
        return (200, {}, {"errors": [{"message": "Field doesn't exist on type "
                                                 "'QueryRoot'"}]})

    def list_orders(self, req):
        q = {k: v[-1] for k, v in req["query"].items()}
        if "page_info" in q:
            start = int(base64.b64decode(q["page_info"]).decode())
            q.update(self.page_query)
        else:
            start = 0
            self.page_query = {k: v for k, v in q.items() if k != "limit"}
        since = q.get("updated_at_min")
        items = [o for o in self.orders if since is None or
                 iso_s(o["updated_at"]) >= iso_s(since)]
        limit = min(int(q.get("limit", 50)), 250, PAGE)
        page = items[start:start + limit]
        h = {}
        if start + limit < len(items):
            nxt = base64.b64encode(str(start + limit).encode()).decode()
            h["Link"] = '<%s%s?limit=%d&page_info=%s>; rel="next"' % (
                self.base, self.path.replace("graphql.json", "orders.json"), limit, nxt)
        return (200, h, {"orders": page})

    def list(self, v):
        start = 0
        if v.get("after"):
            start = int(base64.b64decode(v["after"]).decode().split(":")[1]) + 1
        page = self.subs[start:start + PAGE]
        edges = [{"cursor": base64.b64encode(("c:%d" % (start + i)).encode()).decode(),
                  "node": {k: s[k] for k in ("id", "topic", "uri")}}
                 for i, s in enumerate(page)]
        more = start + PAGE < len(self.subs)
        return (200, {}, {"data": {"webhookSubscriptions": {
            "edges": edges, "pageInfo": {"hasNextPage": more,
                                         "endCursor": edges[-1]["cursor"] if edges else None}}},
            "extensions": {"cost": {"requestedQueryCost": 12, "actualQueryCost": 4}}})

    def create(self, v):
        topic, uri = v.get("topic"), v.get("uri")
        if not topic or not topic.replace("_", "").isupper():
            return (200, {}, {"data": {"webhookSubscriptionCreate": {
                "webhookSubscription": None,
                "userErrors": [{"field": ["topic"], "message": "Topic is invalid"}]}}})
        if any(s["topic"] == topic and s["uri"] == uri for s in self.subs):
            return (200, {}, {"data": {"webhookSubscriptionCreate": {
                "webhookSubscription": None,
                "userErrors": [{"field": ["webhookSubscription", "uri"],
                                "message": "Address for this topic has already been taken"}]}}})
        s = self.subscribe(topic, uri)
        return (200, {}, {"data": {"webhookSubscriptionCreate": {
            "webhookSubscription": {"id": s["id"]}, "userErrors": []}}})
