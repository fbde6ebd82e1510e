#!/bin/sh
# Starts one idemhook FastCGI program per provider with spawn-fcgi, for
# nginx (idemhook.conf), where there is no systemd (see idemhook@.service).
#
#   spawn-fcgi.sh start [provider ...]    default: every installed program
#   spawn-fcgi.sh stop  [provider ...]
#
# Run it as root: the programs run as $IDEMHOOK_USER (default www-data).
set -eu

LIBEXEC=${IDEMHOOK_LIBEXEC:-/usr/local/libexec/idemhook}
RUN=${IDEMHOOK_RUN:-/run/idemhook}
USER_=${IDEMHOOK_USER:-www-data}
PROCS=${IDEMHOOK_PROCS:-2}            # processes per provider
export IDEMHOOK_CONFIG="${IDEMHOOK_CONFIG:-/etc/idemhook/idemhook.env}"

cmd=${1:-start}
[ $# -gt 0 ] && shift
providers=${*:-$(cd "$LIBEXEC" && ls -- *.fcgi 2>/dev/null | sed 's/\.fcgi$//')}

mkdir -p "$RUN"
chown "$USER_:$USER_" "$RUN"
chmod 0750 "$RUN"
for p in $providers; do
	sock=$RUN/$p.sock
	pid=$RUN/$p.pid
	case $cmd in
	start)
		rm -f "$sock"
		spawn-fcgi -s "$sock" -M 0660 -u "$USER_" -g "$USER_" \
		    -U "$USER_" -G "$USER_" -F "$PROCS" -P "$pid" \
		    -- "$LIBEXEC/$p.fcgi"
		;;
	stop)
		# -F writes one pid per line, one per process.
		[ -f "$pid" ] && xargs kill <"$pid" 2>/dev/null || true
		rm -f "$pid" "$sock"
		;;
	*)
		echo "usage: $0 start|stop [provider ...]" >&2
		exit 2
		;;
	esac
done
