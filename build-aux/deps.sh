#!/bin/sh
# SPDX-License-Identifier: ISC
# Install cbexec's build and test dependencies when they are missing.
# Debian package names; apt-get as root, sudo apt-get otherwise.  Does
# nothing when pkg-config, the libraries, libev's header and prove are found.
# bats (the tests of contrib/circuit_breaker.sh) is optional: installed
# when it can be without asking for a password, else its tests are skipped.
set -u

have_all() {
	command -v pkg-config >/dev/null 2>&1 &&
	pkg-config --exists libcjson libcrypto 2>/dev/null &&
	printf '#include <ev.h>\n' | ${CC:-cc} -E -x c - >/dev/null 2>&1 &&
	command -v prove >/dev/null 2>&1
}

# bats when root or password-less sudo can install it; never fatal.
optional_bats() {
	command -v bats >/dev/null 2>&1 && return 0
	if [ "$(id -u)" -eq 0 ]; then
		osudo=
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		osudo="sudo -n"
	else
		echo "deps: bats not installed (and not root): the BATS tests" \
		     "of contrib/circuit_breaker.sh will be skipped" >&2
		return 0
	fi
	echo "deps: installing bats (optional)" >&2
	{ DEBIAN_FRONTEND=noninteractive $osudo apt-get install -y -qq bats ||
	  { $osudo apt-get update -qq &&
	    DEBIAN_FRONTEND=noninteractive $osudo apt-get install -y -qq bats; }
	} >/dev/null 2>&1 ||
	    echo "deps: could not install bats: its tests will be skipped" >&2
	return 0
}

if have_all; then
	optional_bats
	exit 0
fi

pkgs="libev-dev libcjson-dev libssl-dev pkg-config perl"
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
have_all || { echo "deps: still missing after install: $pkgs" >&2; exit 1; }
optional_bats
