#!/bin/sh
# Installs the Debian packages of one list (issue 39: a production host
# gets what building or its own web server needs, never every server,
# a browser and a database server it did not ask for):
#
#   tests/deps.sh build       building only (make deps-build)
#   tests/deps.sh demo        building and one lighttpd, for make demo
#   tests/deps.sh [test]      everything make check needs (make deps)
#   tests/deps.sh --list NAME print list NAME, one line, and nothing else;
#                             NAME is one of the above or a layout's
#                             run-time list: lighttpd, apache, shared-host,
#                             nginx, fcgiwrap, postgres, cron
#
# As root it runs apt-get; otherwise it prints the exact apt-get line and
# fails, so that nothing half-works on a machine that lacks a package.
# Either way it first says which list it checks and what that installs.
set -eu

BUILD_PKGS="build-essential pkg-config libfcgi-dev libsqlite3-dev libssl-dev \
libyajl-dev libpq-dev libcurl4-openssl-dev"
# demo.sh signs with openssl, posts with curl and shows the store with
# sqlite3, through a lighttpd of its own on 127.0.0.1.
DEMO_PKGS="$BUILD_PKGS lighttpd openssl curl sqlite3"
# What each layout of the README needs at run time (each recipe's own
# apt-get line; tests/e2e/test_recipes.py checks that they agree).
LIGHTTPD_PKGS="lighttpd"
APACHE_PKGS="apache2 libapache2-mod-fcgid"
SHARED_HOST_PKGS="apache2 libapache2-mod-fcgid apache2-suexec-custom"
NGINX_PKGS="nginx spawn-fcgi"
FCGIWRAP_PKGS="nginx fcgiwrap"
POSTGRES_PKGS="postgresql"
CRON_PKGS="cron"
# make check: every layout's list (test_recipes runs each recipe's
# apt-get and crontab lines), the sanitizers' runtime, valgrind, strace,
# wrk, chromium for the console's browser tests.
TEST_PKGS="$DEMO_PKGS libcmocka-dev $APACHE_PKGS apache2-suexec-custom \
$NGINX_PKGS fcgiwrap $POSTGRES_PKGS $CRON_PKGS python3 wrk clang \
libclang-rt-14-dev valgrind strace time chromium nodejs bindfs"

list_of() {
	case "$1" in
	build) echo "$BUILD_PKGS" ;;
	demo) echo "$DEMO_PKGS" ;;
	test) echo "$TEST_PKGS" ;;
	lighttpd) echo "$LIGHTTPD_PKGS" ;;
	apache) echo "$APACHE_PKGS" ;;
	shared-host) echo "$SHARED_HOST_PKGS" ;;
	nginx) echo "$NGINX_PKGS" ;;
	fcgiwrap) echo "$FCGIWRAP_PKGS" ;;
	postgres) echo "$POSTGRES_PKGS" ;;
	cron) echo "$CRON_PKGS" ;;
	*) echo "deps: no list $1" >&2; return 2 ;;
	esac
}

if [ "${1:-}" = "--list" ]; then
	list_of "${2:-}"
	exit $?
fi
WHICH=${1:-test}
case "$WHICH" in
build) WHAT="what building needs (no web server, no database server)" ;;
demo) WHAT="what building and the demo's own lighttpd need" ;;
test) WHAT="what make check needs: every web server, PostgreSQL, chromium, valgrind, ..." ;;
*) echo "usage: tests/deps.sh [build|demo|test] | --list NAME" >&2; exit 2 ;;
esac
PKGS=$(list_of "$WHICH")
echo "deps ($WHICH): $WHAT" >&2

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done
# npm_deps DIR PACKAGE WHAT: npm ci in tests/DIR unless PACKAGE is there
# (what its lock file pins); WHAT says what fails without it.
npm_deps() {
	dir=$(dirname "$0")/$1
	[ -d "$dir/node_modules/$2" ] && return 0
	command -v npm >/dev/null 2>&1 || return 0
	echo "deps: npm ci in tests/$1"
	(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) ||
	    echo "deps: npm ci failed: $3" >&2
}

# The forwarding tests' application verifies with the providers' own
# libraries (stripe, @octokit/webhooks-methods, standardwebhooks), pinned in
# tests/forward-app/package-lock.json.
forward_deps() {
	npm_deps forward-app stripe "test_forward will fail at its setup"
}

# Only the tests need node packages: the console's browser tests drive
# chromium with playwright-core (tests/browser/package-lock.json; no
# browser download: Debian's /usr/bin/chromium), and the catch-up tests
# check the GitHub stand-in against @octokit/openapi (tests/openapi/).
# The three run at once: each mostly waits on the registry or the disk.
node_deps() {
	[ "$WHICH" = test ] || return 0
	npm_deps browser playwright-core "the browser tests will be skipped" &
	npm_deps openapi @octokit/openapi "test_catchup's GitHub case will fail" &
	forward_deps &
	wait
}

if [ -z "$missing" ]; then
	echo "deps ($WHICH): all installed:" $PKGS >&2
	node_deps
	exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
	echo "deps ($WHICH): installing:$missing"
	case " $missing " in
	*" lighttpd "* | *" apache2 "* | *" nginx "* | *" postgresql "*)
		echo "deps: Debian starts a web server (port 80) or PostgreSQL as a" \
		    "service when it installs one; the tests and the demo run their own."
		;;
	esac
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
	node_deps
	exit 0
fi
echo "deps ($WHICH): missing packages:$missing" >&2
echo "deps: run: sudo apt-get install -y$missing" >&2
exit 1
