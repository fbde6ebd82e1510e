"""Signers for the five providers, checked against their published test
vectors, and a random secret of each provider's shape."""

import base64
import hashlib
import hmac
import os
import time


def hmac_sha256(key, msg):
    if isinstance(key, str):
        key = key.encode("utf-8")
    if isinstance(msg, str):
        msg = msg.encode("utf-8")
    return hmac.new(key, msg, hashlib.sha256).digest()


def stripe_v1(secret, body, t):
    """Hex HMAC-SHA256(secret, "<t>.<body>"); the whsec_ secret is the key as-is."""
    if isinstance(body, str):
        body = body.encode("utf-8")
    return hmac_sha256(secret, str(int(t)).encode() + b"." + body).hex()


def sign_stripe(secret, body, t=None, extra_v1=(), v0=None, secrets=None):
    """Stripe-Signature header value.

    secrets: list of secrets, one v1 per secret (what Stripe sends while an
    old secret is still active).  extra_v1: further raw v1 values (junk).
    v0: a raw v0 value appended (test-mode events carry one)."""
    t = int(time.time()) if t is None else int(t)
    keys = list(secrets) if secrets else [secret]
    parts = ["t=%d" % t]
    parts += ["v1=" + stripe_v1(k, body, t) for k in keys]
    parts += ["v1=" + v for v in extra_v1]
    if v0 is not None:
        parts.append("v0=" + v0)
    return ",".join(parts)


def stripe_sdk_header(payload, secret, timestamp=None, scheme="v1"):
    """Header built the way stripe-python's tests do (generate_header with
    WebhookSignature._compute_signature): payload and secret as str, UTF-8."""
    timestamp = int(time.time()) if timestamp is None else timestamp
    payload_to_sign = "%d.%s" % (timestamp, payload)
    mac = hmac.new(secret.encode("utf-8"), msg=payload_to_sign.encode("utf-8"),
                   digestmod=hashlib.sha256)
    return "t=%d,%s=%s" % (timestamp, scheme, mac.hexdigest())


def sign_github(secret, body):
    """X-Hub-Signature-256 value: 'sha256=' + hex HMAC of the raw body."""
    return "sha256=" + hmac_sha256(secret, body).hex()


def sign_github_sha1(secret, body):
    """Legacy X-Hub-Signature value."""
    if isinstance(secret, str):
        secret = secret.encode("utf-8")
    if isinstance(body, str):
        body = body.encode("utf-8")
    return "sha1=" + hmac.new(secret, body, hashlib.sha1).hexdigest()


def sign_shopify(secret, body):
    """X-Shopify-Hmac-Sha256 value: base64 HMAC of the raw body."""
    return base64.b64encode(hmac_sha256(secret, body)).decode("ascii")


ASAAS_TOKEN_HEADER = "asaas-access-token"  # static token, no HMAC


def standard_key(secret):
    """Standard Webhooks key: strip 'whsec_' and base64-decode the rest."""
    if secret.startswith("whsec_"):
        secret = secret[len("whsec_"):]
    return base64.b64decode(secret)


def sign_standard(secret, msg_id, ts, body, extra=()):
    """webhook-signature value: 'v1,<b64 HMAC(key, id.ts.body)>' (space-separated list)."""
    if isinstance(body, str):
        body = body.encode("utf-8")
    signed = ("%s.%d." % (msg_id, int(ts))).encode() + body
    sig = "v1," + base64.b64encode(hmac_sha256(standard_key(secret), signed)).decode()
    return " ".join([sig] + list(extra))


def standard_secret(raw=None):
    """A fresh Standard Webhooks secret: whsec_ + base64(24 random bytes)."""
    raw = os.urandom(24) if raw is None else raw
    return "whsec_" + base64.b64encode(raw).decode()


# Published / derived vectors (see the provider fact sheet).
VECTORS = {
    "stripe": lambda: stripe_v1("whsec_test_secret",
                                b'{"id":"evt_test_webhook","object":"event"}',
                                1492774577)
    == "88a022085c6bdb887b02cb26ff76dd681234d9675c0f22844059f55552a8883a",
    "github": lambda: sign_github("It's a Secret to Everybody", b"Hello, World!")
    == "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
    "github-octokit": lambda: sign_github("mysecret", b'{\n  "foo": "bar"\n}\n')
    == "sha256=e3eccac34c43c7dc1cbb905488b1b81347fcc700a7b025697a9d07862256023f",
    "shopify": lambda: sign_shopify("test_secret_key", b'{"foo": "bar"}')
    == "B23tXN681gZ0qIWNRrgtzBE9XSDo5yaUu6wfmhu3a7g=",
    "standard": lambda: sign_standard("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                                      "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330,
                                      b'{"test": 2432232314}')
    == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
}


def check_vector(name):
    if not VECTORS[name]():
        raise AssertionError("signer does not reproduce the %s test vector" % name)


def default_secret(provider):
    if provider == "standard":
        return standard_secret()
    if provider == "stripe":
        return "whsec_" + os.urandom(16).hex()
    if provider == "asaas":
        # 32-255 chars, no spaces (Asaas token rules)
        return "ih" + os.urandom(20).hex()
    return os.urandom(16).hex()


def stripe_body(eid):
    """A minimal Stripe invoice.paid event with id eid, as bytes."""
    return ('{"id":"%s","object":"event","type":"invoice.paid",'
            '"data":{"object":{"id":"in_1"}}}' % eid).encode()
