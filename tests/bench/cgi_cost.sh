#!/bin/sh
# tests/bench/cgi_cost.sh -- what one plain CGI delivery costs, counted
# (issue 27): stripe.fcgi run as a CGI program on a signed ~2 KB Stripe
# event, once untraced (it creates the store), then once under callgrind
# (instructions, the process forked after the answer included, and where
# they go: callgrind_annotate --inclusive=yes OUT/cg.out.PID) and once
# under strace -c (system calls, pwrite64, fsyncs); then, after
# CGI_COST_AFTER (default 60) more deliveries one at a time, once more
# under callgrind: each process opens the store alone and rebuilds the
# log's index from the frames the log holds, so this count shows whether
# the log stays short (it used to grow with every delivery).
#
#   tests/bench/cgi_cost.sh BINDIR OUTDIR      (make bench-cgi)
#
# Needs valgrind, strace, openssl and python3.  Writes only into OUTDIR.
set -eu
B=$(cd "$1" && pwd)
mkdir -p "$2"
O=$(cd "$2" && pwd)
one() {
	eid=evt_cgi_$1_$$
	body=$(python3 -c 'import json, sys
e = sys.argv[1]
print(json.dumps({"id": e, "object": "event", "type": "invoice.paid",
    "created": 1700000000, "data": {"object": {"id": "in_" + e,
    "object": "invoice", "status": "paid",
    "metadata": {"pad": "x" * 1800}}}}, separators=(",", ":")), end="")' \
	    "$eid")
	t=$(date +%s)
	sig=$(printf '%s.%s' "$t" "$body" |
	    openssl dgst -sha256 -hmac whsec_cgi_cost | awk '{print $NF}')
	shift
	printf '%s' "$body" | env -i PATH=/usr/bin:/bin \
	    IDEMHOOK_CONFIG=/dev/null IDEMHOOK_DB="$O/e.db" \
	    IDEMHOOK_STRIPE_SECRET=whsec_cgi_cost REQUEST_METHOD=POST \
	    CONTENT_LENGTH=${#body} CONTENT_TYPE=application/json \
	    HTTP_STRIPE_SIGNATURE="t=$t,v1=$sig" "$@" "$B/stripe.fcgi" \
	    >"$O/answer.$eid" 2>&1
	grep -q '"accepted"' "$O/answer.$eid" || {
		echo "not accepted:" >&2; cat "$O/answer.$eid" >&2; exit 1; }
}
rm -f "$O"/e.db*
one warm
rm -f "$O"/cg.out*
# %p: the process after the answer (a fork that processes) writes its own.
one cg valgrind --tool=callgrind --dump-instr=no \
    --callgrind-out-file="$O/cg.out.%p"
one st strace -f -c -o "$O/strace.txt"
# A forked process's count starts from its parent's at the fork, so the
# largest count is the whole delivery's (each process's is shown too).
n=0
each=
big=
for f in "$O"/cg.out.*; do
	c=$(awk '/^(summary|totals):/ {print $2; exit}' "$f")
	each="$each $c"
	if [ "$c" -gt "$n" ]; then n=$c; big=$f; fi
done
echo "instructions: $n (per process, counted from the start:$each)"
callgrind_annotate --auto=no --inclusive=yes "$big" 2>/dev/null |
    grep -E 'dl_relocate_object|EVP_MAC_fetch|OPENSSL_init_crypto |store_sqlite_open|sq_prepare|sq_exec|verify_hmac|batch_record|dispatch_within|cgi_detach|processing_here' |
    cut -c1-110
awk 'NR <= 2 || /pwrite64|fdatasync|fsync|openat|total/' "$O/strace.txt"
i=0
while [ "$i" -lt "${CGI_COST_AFTER:-60}" ]; do
	one "n$i"
	i=$((i + 1))
done
rm -f "$O"/cg.out*
one late valgrind --tool=callgrind --dump-instr=no \
    --callgrind-out-file="$O/cg.out.%p"
n=0
for f in "$O"/cg.out.*; do
	c=$(awk '/^(summary|totals):/ {print $2; exit}' "$f")
	if [ "$c" -gt "$n" ]; then n=$c; fi
done
echo "after ${CGI_COST_AFTER:-60} more, one at a time: instructions $n;" \
    "-wal $(wc -c <"$O/e.db-wal") bytes"
