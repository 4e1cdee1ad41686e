#!/bin/sh
# SPDX-License-Identifier: ISC
# cbexec's build and test dependencies.
#
#   deps.sh          install what is missing (make deps, check, demo, ...)
#   deps.sh --check  only say what is missing and exit 1 (before a plain
#                    make compiles anything)
#
# Debian package names; apt-get as root, sudo apt-get otherwise.  Does
# nothing when pkg-config, the libraries, libev's header and prove are
# found.  Eight test tools are optional, installed when that needs no
# password, else the tests that use them are skipped and this says so:
# bats (the tests of contrib/circuit_breaker.sh), promtool (Debian's
# prometheus package: the metrics lint), redis-server (the tests of the
# shared store, --store), openssl (the throw-away CA of the rediss:// and
# etcds:// tests), etcd and etcdctl (etcd-server, etcd-client: the etcd
# store's tests), crontab (Debian's cron package: the documented crontab
# entries installed as written) and chronic (moreutils: the
# crontab.example step run as cron would).
set -u
CC=${CC:-cc}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

# missing: "what (Debian package)" for each build dependency not found.
missing() {
	command -v "${PKG_CONFIG%% *}" >/dev/null 2>&1 ||
		echo "pkg-config (pkg-config)"
	$PKG_CONFIG --exists libcjson 2>/dev/null || echo "cJSON (libcjson-dev)"
	$PKG_CONFIG --exists libcrypto libssl 2>/dev/null ||
		echo "OpenSSL's libcrypto and libssl (libssl-dev)"
	$PKG_CONFIG --exists hiredis 2>/dev/null ||
		echo "hiredis (libhiredis-dev)"
	$PKG_CONFIG --exists libcurl 2>/dev/null ||
		echo "libcurl (libcurl4-openssl-dev)"
	printf '#include <ev.h>\n' | $CC -E -x c - >/dev/null 2>&1 ||
		echo "libev (libev-dev)"
}

if [ "${1:-}" = --check ]; then
	m=$(missing)
	[ -z "$m" ] && exit 0
	list=$(printf '%s\n' "$m" | sed 's/ (.*//' | paste -sd, - | sed 's/,/, /g')
	pkgs=$(printf '%s\n' "$m" | sed 's/.*(\(.*\))/\1/' | paste -sd' ' -)
	echo "cbexec: missing build dependencies: $list" >&2
	echo "cbexec: install them (Debian: apt-get install $pkgs)," \
	     "or run 'make deps', 'make check' or 'make demo', which do" >&2
	exit 1
fi

# optional TOOL PACKAGE WHAT: install PACKAGE for TOOL when root or
# password-less sudo can; never fatal, says when WHAT will be skipped.
optional() {
	command -v "$1" >/dev/null 2>&1 && return 0
	if [ "$(id -u)" -eq 0 ]; then
		osudo=
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		osudo="sudo -n"
	else
		echo "deps: $1 not installed (Debian package $2; not root):" \
		     "$3 will be skipped" >&2
		return 0
	fi
	echo "deps: installing $2 (optional, for $1)" >&2
	{ DEBIAN_FRONTEND=noninteractive $osudo apt-get install -y -qq \
	    --no-install-recommends "$2" ||
	  { $osudo apt-get update -qq &&
	    DEBIAN_FRONTEND=noninteractive $osudo apt-get install -y -qq \
	    --no-install-recommends "$2"; }
	} >/dev/null 2>&1 ||
	    echo "deps: could not install $2: $3 will be skipped" >&2
	return 0
}

if [ -n "$(missing)" ] || ! command -v prove >/dev/null 2>&1; then
	pkgs="libev-dev libcjson-dev libssl-dev libhiredis-dev"
	pkgs="$pkgs libcurl4-openssl-dev pkg-config perl"
	if [ "$(id -u)" -eq 0 ]; then
		sudo=
	elif command -v sudo >/dev/null 2>&1; then
		sudo=sudo
	else
		echo "deps: missing build dependencies and not root, no sudo;" \
		     "install: $pkgs" >&2
		exit 1
	fi
	echo "deps: installing $pkgs" >&2
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq >&2 || exit 1
	$sudo apt-get install -y -qq $pkgs >&2 || exit 1
	if [ -n "$(missing)" ] || ! command -v prove >/dev/null 2>&1; then
		echo "deps: still missing after install: $pkgs" >&2
		exit 1
	fi
fi
optional bats bats "the BATS tests of contrib/circuit_breaker.sh"
optional promtool prometheus "the promtool checks of the metrics and alerts"
optional redis-server redis-server "the tests of the shared store (t/09*)"
optional openssl openssl "the rediss:// (TLS) tests of the shared store (t/0996-store-tls.t)"
optional etcd etcd-server "the tests of the etcd store (t/096[5-8]*, t/0999*)"
optional etcdctl etcd-client "the tests of the etcd store (t/096[5-8]*, t/0999*)"
optional crontab cron "the crontab check of the documented entries (t/0915-recipes.t)"
optional chronic moreutils "the run of the crontab.example step (t/0915-recipes.t)"
exit 0
