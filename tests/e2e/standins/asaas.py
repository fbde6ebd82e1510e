#!/usr/bin/env python3
"""A stand-in for Asaas's webhook API (v3): the calls idemhook catch-up
and health make.

  GET /v3/webhooks           {"object":"list","hasMore","totalCount","limit",
                             "offset","data":[webhook]}, offset/limit paging
  GET /v3/webhooks/{id}      one webhook
  PUT /v3/webhooks/{id}      update; {"interrupted": false} resumes a paused
                             queue, and the events it held are then sent, in
                             order, to the webhook's receiver

Authentication is the "access_token" header; a wrong key gets 401 with
Asaas's {"errors":[{"code","description"}]}.  The webhook object's fields
are those of docs.asaas.com's create-new-webhook-via-api page and the
paused-queue pages (interrupted, penalizedRequestsCount, sendType), from
fixtures/asaas_webhook.json.
"""

import copy
import json
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from standins.base import Standin  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def fixture(name):
    with open(os.path.join(HERE, "fixtures", name)) as f:
        return json.load(f)


class AsaasStandin(Standin):
    """deliver(body) -> HTTP status sends one held event to the receiver."""

    def __init__(self, key, deliver):
        super().__init__()
        self.key = key
        self.deliver = deliver
        self.webhooks = [fixture("asaas_webhook.json")]
        self.held = []          # bodies waiting while interrupted
        self.sent = []
        self.threads = []

    def interrupt(self, bodies):
        self.webhooks[0]["interrupted"] = True
        self.webhooks[0]["penalizedRequestsCount"] = 1
        self.held.extend(bodies)

    def error(self, status, code, desc):
        return (status, {}, {"errors": [{"code": code, "description": desc}]})

    def route(self, req):
        if req["headers"].get("access_token") != self.key:
            return self.error(401, "invalid_access_token",
                              "A chave de API fornecida é inválida")
        path = req["path"]
        if path == "/v3/webhooks" and req["method"] == "GET":
            q = {k: v[-1] for k, v in req["query"].items()}
            off, lim = int(q.get("offset", 0)), min(int(q.get("limit", 10)), 100)
            data = self.webhooks[off:off + lim]
            return (200, {}, {"object": "list", "hasMore": off + lim < len(self.webhooks),
                              "totalCount": len(self.webhooks), "limit": lim,
                              "offset": off, "data": data})
        for w in self.webhooks:
            if path == "/v3/webhooks/" + w["id"]:
                if req["method"] == "GET":
                    return (200, {}, w)
                if req["method"] == "PUT":
                    return self.update(w, json.loads(req["body"] or b"{}"))
        return self.error(404, "not_found", "Recurso não encontrado")

    def update(self, w, change):
        resume = w["interrupted"] and change.get("interrupted") is False
        for k in ("name", "url", "email", "enabled", "interrupted", "sendType", "events"):
            if k in change:
                w[k] = change[k]
        if resume:
            w["penalizedRequestsCount"] = 0
            t = threading.Thread(target=self.send_held, daemon=True)
            self.threads.append(t)
            t.start()
        return (200, {}, copy.deepcopy(w))

    def send_held(self):
        while self.held:
            body = self.held.pop(0)
            self.sent.append((body, self.deliver(body)))

    def wait_sent(self, timeout=30):
        for t in list(self.threads):
            t.join(timeout)
