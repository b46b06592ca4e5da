#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Install what is missing, build, and run every test (ctest, in parallel
# where tests allow it; network-namespace tests take a lock and run one at
# a time).  As root every test runs; otherwise root-only tests SKIP.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
# Test tools: real readers and peers the tests check sluice against.
SETUP_PACKAGES="tcpdump tshark wireshark-common nftables iproute2 rsyslog conntrack python3 iputils-ping nfdump
	kmod procps clang libclang-rt-14-dev valgrind logrotate"
. "$TOP/tests/setup.sh"
cd "$BUILD"
ctest -j"$(nproc)" --output-on-failure --timeout 600 "$@"
