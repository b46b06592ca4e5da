#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Install what is missing (Debian 12, as root) and build sluice once into
# build/.  Sourced by conf/demo.sh and tests/run-all.sh; SETUP_PACKAGES
# adds packages to the build set.
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD="${SLUICE_BUILD_DIR:-$TOP/build}"

BUILD_PACKAGES="cmake make gcc pkg-config libmnl-dev libnetfilter-log-dev libpcap-dev
	libyaml-dev liblz4-dev libmicrohttpd-dev libgnutls28-dev librelp-dev librdkafka-dev nettle-dev libcurl4-openssl-dev libmaxminddb-dev libnftnl-dev libnftables-dev libnetfilter-acct-dev libpq-dev libsqlite3-dev zlib1g-dev
	libsystemd-dev libnats-dev libbpf-dev bpftool clang"

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
	local fresh_services
	fresh_services=$(new_services)
	no_service_starts DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
		--no-install-recommends "${missing[@]}" \
		>/dev/null
	quiet_services $fresh_services
}

# Test tools that come with a daemon: PACKAGE:SERVICE.  Tests run them as
# tools only (psad -A, fail2ban-regex); the daemons must never run on a
# test machine (fail2ban would ban from its logs; exim4 is psad's MTA).
SETUP_QUIET_SERVICES="psad:psad fail2ban:fail2ban exim4-base:exim4"

# The services of SETUP_QUIET_SERVICES whose package is not installed yet.
new_services() {
	local ps
	for ps in $SETUP_QUIET_SERVICES; do
		dpkg-query -W -f='${Status}' "${ps%%:*}" 2>/dev/null | grep -q "install ok installed" ||
			echo "${ps#*:}"
	done
}

# no_service_starts CMD...: run CMD with invoke-rc.d refusing to start
# services (a policy-rc.d, unless the machine has its own, e.g. Docker's).
no_service_starts() {
	local policy=/usr/sbin/policy-rc.d rc=0
	if [ -e "$policy" ]; then
		env "$@" || rc=$?
		return $rc
	fi
	printf '#!/bin/sh\n# sluice tests/setup.sh: no service starts while packages install\nexit 101\n' >"$policy"
	chmod 755 "$policy"
	env "$@" || rc=$?
	rm -f "$policy"
	return $rc
}

# quiet_services SERVICE...: stopped and not started at boot (newly installed ones only).
quiet_services() {
	local s
	[ -d /run/systemd/system ] || return 0
	for s in "$@"; do
		systemctl disable --now "$s" >/dev/null 2>&1 || true
	done
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
