#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Regenerate tests/data/conntrack/ (run as root): real ctnetlink datagrams
# of known traffic, read by tests/unit/test_ct_attrs.c and copied as seeds
# into fuzz/corpus/ct/.  In a private namespace with conntrack, accounting
# and timestamps on: tests/e2e/nfct_traffic.py's TCP and UDP flows over
# 127.0.0.1 and ::1 (ports 40001->5001 tcp, 40002->5002 udp, 40011->5011,
# 40012->5012), one ping and one ping6; then a dump and a flush.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
OUT="$TOP/tests/data/conntrack"
NS=slctmsg$$
[ "$(id -u)" = 0 ] || { echo "make-ct-messages.sh: must run as root" >&2; exit 1; }
trap 'ip netns del $NS 2>/dev/null || true' EXIT
ip netns add $NS
ip -n $NS link set lo up
ip netns exec $NS nft -f - <<NFT
table inet sluice_ct { chain out { type filter hook output priority 0; ct state new counter; }; }
NFT
ip netns exec $NS sysctl -qw net.netfilter.nf_conntrack_acct=1 net.netfilter.nf_conntrack_timestamp=1
rm -rf "$OUT"
ip netns exec $NS python3 "$TOP/tests/data/capture-ct.py" "$OUT" bash -c "
	python3 '$TOP/tests/e2e/nfct_traffic.py' flows
	ping -c 1 -q 127.0.0.1 >/dev/null
	ping -6 -c 1 -q ::1 >/dev/null"
mkdir -p "$TOP/fuzz/corpus/ct"
for f in "$OUT"/*.nl; do cp "$f" "$TOP/fuzz/corpus/ct/real-$(basename "$f")"; done
