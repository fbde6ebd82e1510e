#!/usr/bin/env bash
# make demo: start lighttpd on 127.0.0.1 with every endpoint, send a few
# correctly signed deliveries (and a duplicate, a forgery, and one
# subscription's events out of order), and show what the receivers
# answered, logged and stored, and the objects table.
#
#   DEMO_PORT=8080   port to listen on (the next free one is taken if busy)
#   DEMO_KEEP=1      leave lighttpd running afterwards
#   DEMO_DIR=DIR     the demo's folder (default BUILD/demo): its store,
#                    settings, sockets and logs, emptied at each run
set -euo pipefail

BUILD=$(cd "${1:-build}" && pwd)
TOP=$(cd "$(dirname "$0")/.." && pwd)
RUN=${DEMO_DIR:-$BUILD/demo}
PORT=${DEMO_PORT:-8080}

# The demo's own store and settings file, in its own folder: never the
# production location (/var/lib/idemhook), which a deployment makes later
# as the programs' user.
DB="$RUN/idemhook.db"
CONF="$RUN/idemhook.env"

rm -rf "$RUN"
mkdir -p "$RUN/run" "$RUN/www"
printf 'IDEMHOOK_DB=%s\n' "$DB" > "$CONF"
chmod 600 "$CONF"
while (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; do
	PORT=$((PORT + 1))
done

# Fresh demo secrets: one per provider, as each dashboard would show.
STRIPE_SECRET="whsec_demo_$(openssl rand -hex 12)"
GITHUB_SECRET="demo github secret $(openssl rand -hex 6)"
SHOPIFY_SECRET="shpss_demo_$(openssl rand -hex 12)"
ASAAS_TOKEN="demo_asaas_token_$(openssl rand -hex 16)"
STANDARD_KEY=$(openssl rand 24 | base64)
STANDARD_SECRET="whsec_$STANDARD_KEY"

cat > "$RUN/lighttpd.conf" <<CONF
server.document-root = "$RUN/www"
server.bind          = "127.0.0.1"
server.port          = $PORT
server.errorlog      = "$RUN/error.log"
server.pid-file      = "$RUN/lighttpd.pid"
include "$TOP/www-config/lighttpd/idemhook.conf"
var.idemhook_bin             := "$BUILD"
var.idemhook_run             := "$RUN/run"
var.idemhook_config          := "$CONF"
var.idemhook_stripe_secret   := "$STRIPE_SECRET"
var.idemhook_github_secret   := "$GITHUB_SECRET"
var.idemhook_shopify_secret  := "$SHOPIFY_SECRET"
var.idemhook_asaas_token     := "$ASAAS_TOKEN"
var.idemhook_standard_secret := "$STANDARD_SECRET"
include "$TOP/www-config/lighttpd/hooks-stripe.conf"
include "$TOP/www-config/lighttpd/hooks-github.conf"
include "$TOP/www-config/lighttpd/hooks-shopify.conf"
include "$TOP/www-config/lighttpd/hooks-asaas.conf"
include "$TOP/www-config/lighttpd/hooks-standard.conf"
CONF
chmod 600 "$RUN/lighttpd.conf"

# The receivers' processing lines go to lighttpd's own stderr (the journal
# under systemd); keep them in a file here.
lighttpd -D -f "$RUN/lighttpd.conf" 2>"$RUN/stderr.log" &
LPID=$!
stop() {
	if [ -z "${DEMO_KEEP:-}" ]; then
		kill "$LPID" 2>/dev/null || true
		wait "$LPID" 2>/dev/null || true
	fi
}
trap stop EXIT
for _ in $(seq 50); do
	(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
	sleep 0.1
done

URL="http://127.0.0.1:$PORT/hooks"
STAMP=$(date +%s)
hmac_hex() { openssl dgst -sha256 -hmac "$1" | sed 's/^.*= //'; }
hmac_b64() { openssl dgst -sha256 -hmac "$1" -binary | base64; }

# post NAME URL BODY [HEADER...]: send one delivery, print the answer.
post() {
	local name=$1 url=$2 body=$3
	shift 3
	local args=() h
	for h in "$@"; do args+=(-H "$h"); done
	printf '%-44s -> ' "$name"
	curl -s -o "$RUN/answer" -w '%{http_code} ' -X POST \
	    -H 'Content-Type: application/json' "${args[@]}" \
	    --data-binary "$body" "$url" || true
	cat "$RUN/answer"; echo
}

echo
echo "== lighttpd on $URL/{stripe,github,shopify,asaas,standard}"
echo "== the demo's own store $DB and settings $CONF (removed at the next run;"
echo "== a real installation uses /var/lib/idemhook, made by the README's recipe)"
echo

body="{\"id\":\"evt_demo_$STAMP\",\"object\":\"event\",\"type\":\"payment_intent.succeeded\",\"data\":{\"object\":{\"id\":\"pi_demo\",\"amount\":2000}}}"
t=$(date +%s)
sig=$(printf '%s' "$t.$body" | hmac_hex "$STRIPE_SECRET")
post "stripe: signed delivery" "$URL/stripe" "$body" "Stripe-Signature: t=$t,v1=$sig"
t2=$((t + 1))
sig2=$(printf '%s' "$t2.$body" | hmac_hex "$STRIPE_SECRET")
post "stripe: the same event again (a retry)" "$URL/stripe" "$body" "Stripe-Signature: t=$t2,v1=$sig2"
post "stripe: forged signature" "$URL/stripe" \
    "${body/2000/200000}" "Stripe-Signature: t=$t,v1=$sig"
post "stripe: stale timestamp (1 hour old)" "$URL/stripe" "$body" \
    "Stripe-Signature: t=$((t - 3600)),v1=$(printf '%s' "$((t - 3600)).$body" | hmac_hex "$STRIPE_SECRET")"

body=$(printf '{\n  "action": "opened",\n  "issue": {"number": %s}\n}\n' "$STAMP")
sig=$(printf '%s' "$body" | hmac_hex "$GITHUB_SECRET")
post "github: issues/opened" "$URL/github" "$body" \
    "X-GitHub-Event: issues" "X-GitHub-Delivery: demo-$STAMP" \
    "X-GitHub-Hook-ID: 42" "X-Hub-Signature-256: sha256=$sig"
post "github: same GUID, another hook" "$URL/github" "$body" \
    "X-GitHub-Event: issues" "X-GitHub-Delivery: demo-$STAMP" \
    "X-GitHub-Hook-ID: 43" "X-Hub-Signature-256: sha256=$sig"

body="{\"id\":$STAMP,\"email\":\"demo@example.com\"}"
sig=$(printf '%s' "$body" | hmac_b64 "$SHOPIFY_SECRET")
post "shopify: orders/create" "$URL/shopify" "$body" \
    "X-Shopify-Topic: orders/create" "X-Shopify-Webhook-Id: wh-demo-$STAMP" \
    "X-Shopify-Shop-Domain: demo.myshopify.com" \
    "X-Shopify-API-Version: 2025-01" "X-Shopify-Hmac-Sha256: $sig"

body="{\"id\":\"evt_demo_$STAMP&1\",\"event\":\"PAYMENT_RECEIVED\",\"dateCreated\":\"2026-11-22 10:00:00\",\"payment\":{\"id\":\"pay_demo_$STAMP\",\"value\":100.0}}"
post "asaas: PAYMENT_RECEIVED" "$URL/asaas" "$body" "asaas-access-token: $ASAAS_TOKEN"
post "asaas: wrong token" "$URL/asaas" "$body" "asaas-access-token: not-the-token"

body="{\"type\":\"invoice.created\",\"timestamp\":\"2026-11-22T10:00:00Z\",\"data\":{\"n\":$STAMP}}"
msg="msg_demo_$STAMP"
keyhex=$(printf '%s' "$STANDARD_KEY" | base64 -d | od -An -tx1 | tr -d ' \n')
sig=$(printf '%s' "$msg.$t.$body" | openssl dgst -sha256 -mac HMAC \
    -macopt "hexkey:$keyhex" -binary | base64)
post "standard: invoice.created" "$URL/standard" "$body" \
    "webhook-id: $msg" "webhook-timestamp: $t" "webhook-signature: v1,$sig"

# One subscription's life, delivered out of order (as Stripe may): the
# deletion first, then an update, the creation and a later update.  The
# objects table ends as in-order delivery would leave it.
sub="sub_demo_$STAMP"
stripe_sub() {	# stripe_sub N TYPE STATUS CREATED
	local b t s
	b="{\"id\":\"evt_demo_${STAMP}_$1\",\"object\":\"event\",\"type\":\"$2\",\"created\":$4,\"data\":{\"object\":{\"id\":\"$sub\",\"object\":\"subscription\",\"status\":\"$3\"}}}"
	t=$(date +%s)
	s=$(printf '%s' "$t.$b" | hmac_hex "$STRIPE_SECRET")
	post "stripe: $2 ($3), out of order" "$URL/stripe" "$b" \
	    "Stripe-Signature: t=$t,v1=$s"
}
stripe_sub 4 customer.subscription.deleted canceled $((STAMP - 10))
stripe_sub 2 customer.subscription.updated past_due $((STAMP - 30))
stripe_sub 1 customer.subscription.created incomplete $((STAMP - 40))
stripe_sub 3 customer.subscription.updated active $((STAMP - 20))

# Processing happens after each answer; give it a moment.
sleep 1
echo
echo "== what the store holds now (newest first)"
sqlite3 -header -column "$DB" "SELECT provider, event_id, event_type AS type,
    status, duplicates AS dups, attempts FROM events
    WHERE received_at >= ($STAMP - 5) * 1000 ORDER BY id DESC"
echo
echo "== effects written by the switches, exactly once per event"
sqlite3 -header -column "$DB" "SELECT e.provider, e.event_id, f.kind
    FROM effects f JOIN events e ON e.id = f.event
    WHERE e.received_at >= ($STAMP - 5) * 1000 ORDER BY e.id DESC"
echo
echo "== the objects table: the current state, whatever the delivery order"
"$BUILD/idemhook" --config "$CONF" objects --since 10m
echo
echo "== one object's history: the late events were stale, the row kept"
"$BUILD/idemhook" --config "$CONF" object stripe subscription "$sub" |
    sed -n '/^history/,$p'
echo
echo "== the error log: one line per request (no secret, no signature)"
grep -o 'idemhook: .*' "$RUN/error.log" | grep 'outcome=' || true
echo
echo "== processing after each answer: actions, then the switch (its object too)"
# lighttpd files the programs' lines, processing ones included, in its
# error log.
grep -ho 'idemhook: .*' "$RUN/error.log" "$RUN/stderr.log" |
    grep -E 'effect=|verdict=|processing=' || true
echo
if [ -n "${DEMO_KEEP:-}" ]; then
	echo "lighttpd keeps running on port $PORT (pid $LPID); stop it with: kill $LPID"
else
	echo "done; lighttpd stopped. DEMO_KEEP=1 make demo leaves it running."
fi
