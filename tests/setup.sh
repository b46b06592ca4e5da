#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Install what is missing (Debian 12, as root) and build sluice once into
# build/.  Sourced by conf/demo.sh and tests/run-all.sh; SETUP_PACKAGES
# adds packages to the build set.
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD="${SLUICE_BUILD_DIR:-$TOP/build}"

BUILD_PACKAGES="cmake make gcc pkg-config libmnl-dev libnetfilter-log-dev libpcap-dev
	libyaml-dev liblz4-dev libmicrohttpd-dev libgnutls28-dev librelp-dev librdkafka-dev nettle-dev libcurl4-openssl-dev libmaxminddb-dev libnftnl-dev libnftables-dev libpq-dev libsqlite3-dev"

install_missing() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing+=("$p")
	done
	[ ${#missing[@]} = 0 ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "setup: missing packages: ${missing[*]} (run as root to install them)" >&2
		return 1
	fi
	echo "setup: installing ${missing[*]}"
	# Only refresh the package lists when something has to be installed.
	apt-get -o DPkg::Lock::Timeout=300 update -qq
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
		--no-install-recommends "${missing[@]}" \
		>/dev/null
}

# build_tree DIR [CMAKE_ARGS...]: configure and build sluice into DIR.
build_tree() {
	local dir="$1"; shift
	cmake -S "$TOP" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
	cmake --build "$dir" -j"$(nproc)" >/dev/null
}

build_sluice() { build_tree "$BUILD"; }

# shellcheck disable=SC2086
install_missing $BUILD_PACKAGES ${SETUP_PACKAGES:-}
build_sluice
