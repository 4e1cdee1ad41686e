#!/bin/sh
# SPDX-License-Identifier: ISC
# Install cbexec's build and test dependencies when they are missing.
# Debian package names; apt-get as root, sudo apt-get otherwise.  Does
# nothing when pkg-config, the libraries, libev's header and prove are found.
set -u

have_all() {
	command -v pkg-config >/dev/null 2>&1 &&
	pkg-config --exists libcjson libcrypto 2>/dev/null &&
	printf '#include <ev.h>\n' | ${CC:-cc} -E -x c - >/dev/null 2>&1 &&
	command -v prove >/dev/null 2>&1
}

have_all && exit 0

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
