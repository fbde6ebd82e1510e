#!/bin/sh
# tests/bench/big_rss.sh -- peak RSS of a signed 32 MiB Stripe event
# (issue 27), without a web server: stripe.fcgi records it as a plain CGI
# program in worker mode, then `idemhook work --once` processes it; each
# prints its peak RSS (GNU time's %M, absolute: the programs' own ~8 MiB
# included).  Usage: tests/bench/big_rss.sh BINDIR OUTDIR
set -eu
B=$(cd "$1" && pwd)
mkdir -p "$2"
O=$(cd "$2" && pwd)
rm -f "$O"/e.db*
python3 -c 'import json, sys
e = {"id": "evt_big32", "object": "event", "type": "invoice.paid",
    "created": 1700000000, "data": {"object": {"id": "in_big32",
    "object": "invoice", "status": "paid",
    "metadata": {"pad": "x" * (32 * 1024 * 1024)}}}}
open(sys.argv[1], "w").write(json.dumps(e, separators=(",", ":")))' \
    "$O/body"
t=$(date +%s)
sig=$( (printf '%s.' "$t"; cat "$O/body") |
    openssl dgst -sha256 -hmac whsec_big_rss | awk '{print $NF}')
env -i PATH=/usr/bin:/bin IDEMHOOK_CONFIG=/dev/null IDEMHOOK_DB="$O/e.db" \
    IDEMHOOK_STRIPE_SECRET=whsec_big_rss IDEMHOOK_MODE=worker \
    IDEMHOOK_STRIPE_MAX_BODY=40000000 REQUEST_METHOD=POST \
    CONTENT_LENGTH="$(wc -c < "$O/body")" CONTENT_TYPE=application/json \
    HTTP_STRIPE_SIGNATURE="t=$t,v1=$sig" \
    /usr/bin/time -f "record (CGI): peak RSS %M KiB" "$B/stripe.fcgi" \
    < "$O/body" 2>&1 | grep -E 'RSS|"status"'
env -i PATH=/usr/bin:/bin IDEMHOOK_CONFIG=/dev/null IDEMHOOK_DB="$O/e.db" \
    /usr/bin/time -f "idemhook work --once: peak RSS %M KiB" \
    "$B/idemhook" work --once 2>&1 | grep -E 'RSS|processed'
echo "body: $(($(wc -c < "$O/body") / 1024)) KiB"
