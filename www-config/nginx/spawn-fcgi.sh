#!/bin/sh
# Starts one idemhook FastCGI program per provider with spawn-fcgi, for
# nginx (idemhook.conf), where there is no systemd (see idemhook@.service).
#
#   spawn-fcgi.sh start [provider ...]    default: every installed program
#   spawn-fcgi.sh stop  [provider ...]
#
# Run it as root: the programs run as $IDEMHOOK_USER (default www-data).
#
# The run folder and the pid files in it belong to root (the programs'
# group may only enter it, to reach the sockets), so the programs' user
# can neither write nor replace a pid file. Even so, stop trusts a pid
# file only to name candidates: it reads a root-owned regular file, takes
# lines of digits only, and signals a process only if its executable is
# the provider's program. A line such as "-9 -1" kills nothing.
#
# The programs start with a clean environment, never root's: PATH, HOME
# of the programs' user (libpq reads its ~/.pgpass, actions run there),
# LANG, TZ if set, IDEMHOOK_CONFIG and IDEMHOOK_THREADS if set. Every
# other setting, the store included, belongs in the IDEMHOOK_CONFIG file.
set -eu

LIBEXEC=${IDEMHOOK_LIBEXEC:-/usr/local/libexec/idemhook}
RUN=${IDEMHOOK_RUN:-/run/idemhook}
USER_=${IDEMHOOK_USER:-www-data}
PROCS=${IDEMHOOK_PROCS:-1}            # processes per provider
CONFIG=${IDEMHOOK_CONFIG:-/etc/idemhook/idemhook.env}
HOME_=$(getent passwd "$USER_" | cut -d: -f6)
[ -n "$HOME_" ] || HOME_=/nonexistent

cmd=${1:-start}
[ $# -gt 0 ] && shift
providers=${*:-$(cd "$LIBEXEC" && ls -- *.fcgi 2>/dev/null | sed 's/\.fcgi$//')}

# Writes a warning; control characters from a pid file are shown as '?'.
warn() {
	printf '%s: %s\n' "$0" "$*" | tr -c '[:print:]\n' '?' >&2
}

# Kills the processes listed in pid file $1 that run program $2.
# Returns 1 when the file or one of its lines was refused.
stop_pids() {
	pidfile=$1
	want=$(readlink -f -- "$2" 2>/dev/null) || want=$2
	refused=0
	[ -e "$pidfile" ] || [ -L "$pidfile" ] || return 0
	if [ -L "$pidfile" ] || [ ! -f "$pidfile" ] ||
	    [ "$(stat -c %u -- "$pidfile")" != 0 ]; then
		warn "$pidfile is not a regular file owned by root; ignored"
		return 1
	fi
	while IFS= read -r line || [ -n "$line" ]; do
		case $line in
		'' | *[!0-9]* | 0*)
			warn "$pidfile: \"$line\" is not a process id; ignored"
			refused=1
			continue
			;;
		esac
		# Gone already: nothing to do.
		[ -e "/proc/$line" ] || continue
		exe=$(readlink -- "/proc/$line/exe" 2>/dev/null) || exe=
		# An upgrade replaces the file under a running program.
		if [ "$exe" != "$want" ] && [ "$exe" != "$want (deleted)" ]; then
			warn "$pidfile: process $line is not $want; not killed"
			refused=1
			continue
		fi
		kill "$line" 2>/dev/null || true
	done <"$pidfile"
	return $refused
}

mkdir -p "$RUN"
chown "root:$USER_" "$RUN"
chmod 0750 "$RUN"
status=0
for p in $providers; do
	sock=$RUN/$p.sock
	pid=$RUN/$p.pid
	case $cmd in
	start)
		rm -f "$sock"
		# spawn-fcgi writes the pid file as root, before it drops
		# privileges; -F writes one pid per line, one per process.
		env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME_" \
		    LANG="${LANG:-C.UTF-8}" ${TZ:+TZ="$TZ"} \
		    IDEMHOOK_CONFIG="$CONFIG" \
		    ${IDEMHOOK_THREADS:+IDEMHOOK_THREADS="$IDEMHOOK_THREADS"} \
		    spawn-fcgi -s "$sock" -M 0660 -u "$USER_" -g "$USER_" \
		    -U "$USER_" -G "$USER_" -F "$PROCS" -P "$pid" \
		    -- "$LIBEXEC/$p.fcgi"
		;;
	stop)
		stop_pids "$pid" "$LIBEXEC/$p.fcgi" || status=1
		rm -f "$pid" "$sock"
		;;
	*)
		echo "usage: $0 start|stop [provider ...]" >&2
		exit 2
		;;
	esac
done
exit $status
