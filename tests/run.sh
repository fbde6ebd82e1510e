#!/bin/sh
# Runs every test of idemhook against one directory of binaries.
#
#   tests/run.sh BINDIR
#
# - every executable BINDIR/tests/test_* (cmocka unit tests), with
#   CMOCKA_MESSAGE_OUTPUT=TAP;
# - every tests/e2e/test_*.py (end-to-end through lighttpd), with
#   IH_BIN=BINDIR;
# - the suites in IH_PG_SUITES (default: stripe processing load faults
#   cli objects console console_signin durability backup replay
#   console_bulk catchup versions badsig) a second time with
#   IH_DB_BACKEND=pg, on PostgreSQL.
# A throwaway PostgreSQL cluster (tests/pg_cluster.sh) runs on a Unix
# socket in a temporary folder for the whole run; IH_PG_URI names it for
# every test.  It is stopped and removed at the end, on failure too.
# Counts lines starting with "ok" and "not ok". A program that exits non-zero
# without printing a "not ok" line (a crash, a timeout, a setup error), or
# that prints no result at all, counts as one failure.
# A line "ok ... # SKIP reason" counts as skipped (only ever as a user
# other than root; as root a skip is a failure, see harness.Tap.skip).
# The last line is exactly "N passed, M failed", or "N passed, M failed,
# K skipped" when K > 0; the exit status is 1 if M > 0 or if no test ran.
set -u

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: $0 BINDIR" >&2
	exit 2
fi
BINDIR=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
UNIT_TIMEOUT=${IH_UNIT_TIMEOUT:-120}
E2E_TIMEOUT=${IH_E2E_TIMEOUT:-300}

passed=0
failed=0
skipped=0
out=$(mktemp "${TMPDIR:-/tmp}/ih-run.XXXXXX")
skips=$(mktemp "${TMPDIR:-/tmp}/ih-skips.XXXXXX")
pgdir=$(mktemp -d "${TMPDIR:-/tmp}/ih-pg.XXXXXX")
trap 'rm -f "$out" "$skips"; "$HERE/pg_cluster.sh" stop "$pgdir"' EXIT
trap 'exit 130' INT TERM
PG_SUITES=${IH_PG_SUITES-stripe processing load faults cli objects console console_signin durability backup replay console_bulk catchup versions badsig}

# run NAME TIMEOUT COMMAND...
run() {
	name=$1
	limit=$2
	shift 2
	echo "# --- $name"
	t0=$(date +%s)
	if command -v timeout >/dev/null 2>&1; then
		timeout -k 10 "$limit" "$@" >"$out" 2>&1
	else
		"$@" >"$out" 2>&1
	fi
	rc=$?
	cat "$out"
	echo "# $name: $(($(date +%s) - t0)) s"
	s=$(grep -c '^ok.*# SKIP' "$out")
	p=$(($(grep -c '^ok' "$out") - s))
	f=$(grep -c '^not ok' "$out")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			why="timed out after ${limit}s"
		else
			why="exited with status $rc"
		fi
		echo "not ok - $name: $why without reporting a failure"
		f=1
	elif [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && [ "$s" -eq 0 ]; then
		echo "not ok - $name: reported no test results (exit status $rc)"
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	grep '^ok.*# SKIP' "$out" >>"$skips"
}

echo "# --- PostgreSQL"
if IH_PG_URI=$("$HERE/pg_cluster.sh" start "$pgdir" 2>"$out"); then
	export IH_PG_URI
	echo "ok - PostgreSQL test cluster started in $pgdir"
	passed=$((passed + 1))
else
	cat "$out"
	echo "not ok - PostgreSQL test cluster did not start (make deps installs it)"
	failed=$((failed + 1))
	unset IH_PG_URI
fi

for t in "$BINDIR"/tests/test_*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	CMOCKA_MESSAGE_OUTPUT=TAP run "unit $(basename "$t")" "$UNIT_TIMEOUT" "$t"
done

for t in "$HERE"/e2e/test_*.py; do
	[ -f "$t" ] || continue
	IH_BIN=$BINDIR run "e2e $(basename "$t")" "$E2E_TIMEOUT" python3 "$t" "$BINDIR"
done

# The same suites against PostgreSQL.
for s in $PG_SUITES; do
	t="$HERE/e2e/test_$s.py"
	[ -f "$t" ] || continue
	IH_BIN=$BINDIR IH_DB_BACKEND=pg run "e2e(pg) test_$s.py" "$E2E_TIMEOUT" \
	    python3 "$t" "$BINDIR"
done

# Every skip again, with its reason, just above the closing line.
if [ "$skipped" -gt 0 ]; then
	echo "# skipped, each with its reason:"
	sed 's/^ok[^-]*- /#   /' "$skips"
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
if [ "$failed" -gt 0 ] || [ $((passed + failed)) -eq 0 ]; then
	exit 1
fi
exit 0
