#!/bin/sh
# A throwaway PostgreSQL cluster for the tests, on a Unix socket only.
#
#   tests/pg_cluster.sh start DIR   creates DIR/data, starts the server with
#                                   its socket in DIR, prints the libpq URI
#                                   of its "postgres" database
#   tests/pg_cluster.sh stop DIR    stops it at once and removes DIR
#   tests/pg_cluster.sh pause DIR   stops the server, keeping its data
#   tests/pg_cluster.sh resume DIR  starts it again on the same socket
#
# initdb refuses to run as root: as root the cluster belongs to the
# postgres user (runuser), otherwise to the user running the tests.  The
# superuser role is "ih", trusted on the socket, which only reaches
# through DIR (mode 0755 for the programs' user, the data itself 0700).
# IH_PG_OPTS adds server options (make bench turns nothing off; the
# tests keep fsync on too: every durable answer is a real flush).
# IH_PG_PORT (default 5432) names the socket, and the TCP port when
# IH_PG_OPTS sets listen_addresses.
set -eu

usage() {
	echo "usage: $0 start|stop|pause|resume DIR" >&2
	exit 2
}
[ $# -eq 2 ] || usage
cmd=$1
dir=$2
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
	echo "$0: PostgreSQL server not installed (make deps)" >&2
	exit 1
fi

as_owner() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

server_start() {
	as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
	    -t 60 -o "-k $dir -c listen_addresses='' -p ${IH_PG_PORT:-5432} \
	    -c max_connections=300 -c shared_buffers=32MB ${IH_PG_OPTS:-}" \
	    start >/dev/null || {
		cat "$dir/server.log" >&2
		exit 1
	}
}

case $cmd in
start)
	mkdir -p "$dir"
	chmod 0755 "$dir"
	[ "$(id -u)" -ne 0 ] || chown postgres "$dir"
	as_owner "$bindir/initdb" -D "$dir/data" -A trust -U ih -E UTF8 \
	    --no-sync >"$dir/initdb.log" 2>&1 || {
		cat "$dir/initdb.log" >&2
		exit 1
	}
	server_start
	echo "postgresql:///postgres?host=$dir&port=${IH_PG_PORT:-5432}&user=ih"
	;;
pause)
	as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
	;;
resume)
	server_start
	;;
stop)
	# Immediate: no shutdown checkpoint writes what is deleted next.
	if [ -f "$dir/data/postmaster.pid" ]; then
		as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop \
		    >/dev/null 2>&1 || true
	fi
	# A server pg_ctl could not stop would write on beside rm.
	if [ -f "$dir/data/postmaster.pid" ]; then
		pid=$(head -n 1 "$dir/data/postmaster.pid")
		case $pid in
		'' | *[!0-9]*) ;;
		*)
			# Only this cluster's own postmaster, not a reused pid.
			if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null |
			    grep -qF -- "$dir/data"; then
				kill -KILL "$pid" 2>/dev/null || true
			fi
			;;
		esac
	fi
	# A full run leaves hundreds of databases (7 MB each, never
	# dropped): their folders go several at a time, which halves the
	# wait on a busy disk.
	find "$dir/data/base" "$dir/data/pg_wal" -mindepth 1 -maxdepth 1 \
	    -print0 2>/dev/null | xargs -0 -r -n 8 -P 4 rm -rf
	rm -rf "$dir"
	;;
*)
	usage
	;;
esac
