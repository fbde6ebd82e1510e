#!/usr/bin/env bash
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
#   console_bulk catchup versions badsig restore_guard smoke) a second time with
#   IH_DB_BACKEND=pg, on PostgreSQL.
# A throwaway PostgreSQL cluster (tests/pg_cluster.sh) runs on a Unix
# socket in a temporary folder for the whole run; IH_PG_URI names it for
# every test.  It is stopped and removed at the end, on failure too.
# The programs run IH_JOBS at a time (default: twice the number of
# processors), the longest known ones first: most suites spend their time
# waiting on fsync, sleeps and child processes, so that one per processor
# left the processors half idle (make check used 46% of two cores).
# Each program's output is printed whole when it ends, with its wall time
# and its processes' CPU time (user and system).
# Suites never share a port, a folder or a database: each picks free
# ports and makes its own temporary folders and databases.
# Counts lines starting with "ok" and "not ok". A program that exits non-zero
# without printing a "not ok" line (a crash, a timeout, a setup error), or
# that prints no result at all, counts as one failure.
# A line "ok ... # SKIP reason" counts as skipped (only ever as a user
# other than root; as root a skip is a failure, see harness.Tap.skip).
# Every failure is listed again, named by its program, above the last line.
# The last line is exactly "N passed, M failed", or "N passed, M failed,
# K skipped" when K > 0; the exit status is 1 if M > 0 or if no test ran.
set -u

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: $0 BINDIR" >&2
	exit 2
fi
BINDIR=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
# A unit test on PostgreSQL waits on the server: test_console's 20,500
# records, one round trip each, took 120 s on a machine at load 35.
UNIT_TIMEOUT=${IH_UNIT_TIMEOUT:-300}
E2E_TIMEOUT=${IH_E2E_TIMEOUT:-300}
JOBS=${IH_JOBS:-$((2 * $(nproc 2>/dev/null || echo 1)))}
case $JOBS in
'' | *[!0-9]* | 0) echo "IH_JOBS must be a whole number above 0" >&2; exit 2 ;;
esac

# The web servers live in /usr/sbin, which a Debian user's PATH leaves
# out: the suites find them there too, whoever runs them.
PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin
export PATH

passed=0
failed=0
skipped=0
work=$(mktemp -d "${TMPDIR:-/tmp}/ih-run.XXXXXX")
pgdir=$(mktemp -d "${TMPDIR:-/tmp}/ih-pg.XXXXXX")
# The end: the cluster stopped and removed (tests/pg_cluster.sh), beside
# the run's own folder, both gone before the run exits.
finish() {
	local t0=$SECONDS rmpid
	kill $(jobs -p) 2>/dev/null
	rm -rf "$work" &
	rmpid=$!
	"$HERE/pg_cluster.sh" stop "$pgdir"
	wait "$rmpid"
	echo "# the end: test cluster stopped, temporary folders removed in $((SECONDS - t0)) s"
}
trap finish EXIT
trap 'exit 130' INT TERM
PG_SUITES=${IH_PG_SUITES-stripe processing load faults cli objects console console_signin durability backup replay console_bulk catchup versions badsig
restore_guard smoke forward forward_ops}

# The slowest programs of a full run (seconds on 2 cores), started first so
# that none of them is left running alone at the end.  A name not listed
# here runs after these, in the usual order.
SLOW="e2e:test_catchup e2e:test_processing e2e(pg):test_processing
e2e(pg):test_objects e2e(pg):test_replay e2e:test_cgi e2e:test_fuzz
e2e(pg):test_forward e2e(pg):test_badsig e2e:test_forward e2e:test_recipes
e2e(pg):test_catchup e2e(pg):test_stripe e2e(pg):test_cli e2e:test_hostile
e2e(pg):test_console_bulk e2e(pg):test_smoke e2e(pg):test_durability
e2e:test_restore_guard e2e:test_fresh_store e2e:test_suexec e2e:test_backup
e2e(pg):test_load e2e(pg):test_faults e2e(pg):test_console_signin
e2e:test_pg_hosts e2e:test_load e2e:test_replay e2e:test_console
e2e:test_sources e2e(pg):test_console e2e:test_console_signin"

names=()
limits=()
cmds=()

# add NAME TIMEOUT ENV=VALUE... -- COMMAND...
add() {
	local name=$1 limit=$2 c=""
	shift 2
	while [ "$1" != "--" ]; do
		c="$c $(printf '%q' "$1")"
		shift
	done
	shift
	for a in "$@"; do
		c="$c $(printf '%q' "$a")"
	done
	names+=("$name")
	limits+=("$limit")
	cmds+=("env$c")
}

# report I: prints job I's output and adds up its results.
report() {
	local i=$1 out="$work/$1.out" rc p f s why cpu
	rc=$(cat "$work/$i.rc" 2>/dev/null || echo 255)
	echo "# --- ${names[$i]}"
	cat "$out"
	cpu=$(awk 'NR == 2 { split($1 "m" $2, t, /[ms]+/)
	    printf "%.0f", t[1] * 60 + t[2] + t[3] * 60 + t[4] }' \
	    "$work/$i.cpu" 2>/dev/null)
	echo "# ${names[$i]}: $(cat "$work/$i.time" 2>/dev/null || echo '?') s" \
	    "(CPU ${cpu:-?} s)"
	s=$(grep -c '^ok.*# SKIP' "$out")
	p=$(($(grep -c '^ok' "$out") - s))
	f=$(grep -c '^not ok' "$out")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			why="timed out after ${limits[$i]}s"
		else
			why="exited with status $rc"
		fi
		echo "not ok - ${names[$i]}: $why without reporting a failure"
		f=1
	elif [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && [ "$s" -eq 0 ]; then
		echo "not ok - ${names[$i]}: reported no test results (exit status $rc)"
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	grep '^ok.*# SKIP' "$out" >>"$work/skips"
	grep '^not ok' "$out" | sed "s|^|${names[$i]}: |" >>"$work/fails"
	if [ "$f" -gt 0 ] && ! grep -q '^not ok' "$out"; then
		echo "${names[$i]}: not ok - ${why:-no test results}" >>"$work/fails"
	fi
}

# start I: runs job I in the background; its output, exit status and time
# go to files named after I.
start() {
	local i=$1
	(
		t0=$(date +%s)
		if command -v timeout >/dev/null 2>&1; then
			eval "timeout -k 10 ${limits[$i]} ${cmds[$i]}" \
			    >"$work/$i.out" 2>&1 </dev/null
		else
			eval "${cmds[$i]}" >"$work/$i.out" 2>&1 </dev/null
		fi
		echo $? >"$work/$i.rc"
		echo $(($(date +%s) - t0)) >"$work/$i.time"
		# The CPU time of its processes (the second line: children's).
		times >"$work/$i.cpu"
	) &
	pids[$!]=$i
}

echo "# --- PostgreSQL"
: >"$work/fails"
if IH_PG_URI=$("$HERE/pg_cluster.sh" start "$pgdir" 2>"$work/pg.out"); then
	export IH_PG_URI
	echo "ok - PostgreSQL test cluster started in $pgdir"
	passed=$((passed + 1))
else
	cat "$work/pg.out"
	echo "not ok - PostgreSQL test cluster did not start (make deps installs it)"
	echo "run.sh: not ok - PostgreSQL test cluster did not start" >>"$work/fails"
	failed=$((failed + 1))
	unset IH_PG_URI
fi
: >"$work/skips"

for t in "$BINDIR"/tests/test_*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	add "unit $(basename "$t")" "$UNIT_TIMEOUT" CMOCKA_MESSAGE_OUTPUT=TAP -- "$t"
done
for t in "$HERE"/e2e/test_*.py; do
	[ -f "$t" ] || continue
	add "e2e $(basename "$t")" "$E2E_TIMEOUT" IH_BIN="$BINDIR" -- \
	    python3 "$t" "$BINDIR"
done
# The same suites against PostgreSQL.
for s in $PG_SUITES; do
	t="$HERE/e2e/test_$s.py"
	[ -f "$t" ] || continue
	add "e2e(pg) test_$s.py" "$E2E_TIMEOUT" IH_BIN="$BINDIR" \
	    IH_DB_BACKEND=pg -- python3 "$t" "$BINDIR"
done

# The order: the slow ones as listed, then the rest as added.
order=()
for k in $SLOW; do
	for i in "${!names[@]}"; do
		[ "${names[$i]}" = "${k%%:*} ${k#*:}.py" ] && order+=("$i")
	done
done
for i in "${!names[@]}"; do
	case " ${order[*]} " in *" $i "*) ;; *) order+=("$i") ;; esac
done

declare -A pids
running=0
for i in "${order[@]}"; do
	while [ "$running" -ge "$JOBS" ]; do
		wait -n -p done_pid
		report "${pids[$done_pid]}"
		unset "pids[$done_pid]"
		running=$((running - 1))
	done
	start "$i"
	running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
	wait -n -p done_pid
	report "${pids[$done_pid]}"
	unset "pids[$done_pid]"
	running=$((running - 1))
done

# Every failure again, named by its program, so that the end of a long
# log (all a CI page may keep) still says what failed.
if [ "$failed" -gt 0 ]; then
	echo "# failed, each named by its program:"
	sed 's/^/#   /' "$work/fails"
fi
# Every skip again, with its reason, just above the closing line.
if [ "$skipped" -gt 0 ]; then
	echo "# skipped, each with its reason:"
	sed 's/^ok[^-]*- /#   /' "$work/skips"
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
if [ "$failed" -gt 0 ] || [ $((passed + failed)) -eq 0 ]; then
	exit 1
fi
exit 0
