#!/bin/sh
# Installs the Debian packages that building, testing and the demo need.
# As root it runs apt-get; otherwise it prints the exact apt-get line and
# fails, so that nothing half-works on a machine that lacks a package.
set -eu

PKGS="build-essential pkg-config libfcgi-dev libsqlite3-dev sqlite3 \
libssl-dev openssl libyajl-dev libcmocka-dev lighttpd apache2 \
libapache2-mod-fcgid curl python3 wrk clang nginx spawn-fcgi \
libclang-rt-14-dev valgrind strace time apache2-suexec-custom \
chromium nodejs libpq-dev postgresql bindfs libcurl4-openssl-dev"

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

# The console's browser tests drive chromium with playwright-core, pinned
# in tests/browser/package-lock.json and installed there (no browser
# download: the tests use Debian's /usr/bin/chromium).
browser_deps() {
	npm_deps browser playwright-core "the browser tests will be skipped"
}

# The catch-up tests check the GitHub stand-in against GitHub's OpenAPI
# description, @octokit/openapi, pinned in tests/openapi/package-lock.json.
openapi_deps() {
	npm_deps openapi @octokit/openapi "test_catchup's GitHub case will fail"
}

# The forwarding tests' application verifies with the providers' own
# libraries (stripe, @octokit/webhooks-methods, standardwebhooks), pinned in
# tests/forward-app/package-lock.json.
forward_deps() {
	npm_deps forward-app stripe "test_forward will fail at its setup"
}

if [ -z "$missing" ]; then
	browser_deps
	openapi_deps
	forward_deps
	exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
	echo "deps: installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
	# Debian starts apache2 and lighttpd as services on install; the
	# project runs its own instances on loopback ports instead.
	browser_deps
	openapi_deps
	forward_deps
	exit 0
fi
echo "deps: missing packages:$missing" >&2
echo "deps: run: sudo apt-get install -y$missing" >&2
exit 1
