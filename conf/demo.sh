#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The main job on a built-in default: install what is missing and build;
# then, as root with network namespaces available, log real traffic:
# two namespaces joined by a veth pair, an nftables `log group 7` rule,
# ICMP/TCP/UDP over IPv4 and IPv6, sluice writing out/demo/ through
# conf/demo-live.yaml.  Otherwise replay the bundled NFLOG capture
# (tests/data/nflog-mixed.pcap) through conf/demo.yaml.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
SETUP_PACKAGES="nftables iproute2 tcpdump python3 iputils-ping"
. "$TOP/tests/setup.sh"
cd "$TOP"
rm -rf out/demo && mkdir -p out/demo
export SLUICE_PLUGIN_PATH="$BUILD/plugins"
SLUICE="$BUILD/core/sluice"

live_demo() {
	local A=sluice-demo-a B=sluice-demo-b pid
	ip netns add $A 2>/dev/null || return 1
	trap 'ip netns del '$A' 2>/dev/null; ip netns del '$B' 2>/dev/null' EXIT
	ip netns add $B || return 1
	ip link add va netns $A type veth peer name vb netns $B || return 1
	ip -n $A addr add 10.199.0.1/24 dev va
	ip -n $B addr add 10.199.0.2/24 dev vb
	ip -n $A addr add fd00:199::1/64 dev va nodad
	ip -n $B addr add fd00:199::2/64 dev vb nodad
	for ns in $A $B; do ip -n $ns link set lo up; done
	ip -n $A link set va up
	ip -n $B link set vb up
	ip netns exec $B nft -f - <<'NFT' || return 1
table inet sluice_demo {
	chain input {
		type filter hook input priority 0; policy accept;
		meta l4proto { icmp, icmpv6, tcp, udp } ct state new log group 7 prefix "sluice-demo "
	}
}
NFT
	echo "== sluice -t -c conf/demo-live.yaml"
	ip netns exec $B "$SLUICE" -t -c conf/demo-live.yaml
	echo "== sluice in namespace $B; traffic from $A"
	ip netns exec $B "$SLUICE" -c conf/demo-live.yaml &
	pid=$!
	sleep 0.5
	ip netns exec $A python3 - <<'PY'
import socket
for fam, dst in ((socket.AF_INET, "10.199.0.2"), (socket.AF_INET6, "fd00:199::2")):
    u = socket.socket(fam, socket.SOCK_DGRAM)
    for port in (53, 123, 514):
        u.sendto(b"hello sluice", (dst, port))
    for port in (22, 80, 443):
        t = socket.socket(fam, socket.SOCK_STREAM)
        t.settimeout(0.5)
        try:
            t.connect((dst, port))
        except OSError:
            pass
        t.close()
PY
	ip netns exec $A ping -c 2 -i 0.2 -q 10.199.0.2 >/dev/null 2>&1 || true
	ip netns exec $A ping -6 -c 2 -i 0.2 -q fd00:199::2 >/dev/null 2>&1 || true
	sleep 0.5
	kill -TERM $pid
	wait $pid
}

if [ "$(id -u)" = 0 ] && command -v nft >/dev/null && live_demo; then
	echo "(live: nftables log group 7 in a private network namespace)"
else
	echo "(no root or no network namespaces: replaying tests/data/nflog-mixed.pcap instead)"
	rm -rf out/demo && mkdir -p out/demo
	echo "== sluice -t -c conf/demo.yaml"
	"$SLUICE" -t -c conf/demo.yaml
	"$SLUICE" -c conf/demo.yaml
fi
echo
for f in out/demo/*; do
	case "$f" in
	*.pcap)
		echo "== $f ($(wc -c <"$f") bytes)"
		if command -v tcpdump >/dev/null; then
			echo "   $(tcpdump -nr "$f" 2>/dev/null | wc -l) packets; the first ones:"
			tcpdump -nr "$f" 2>/dev/null | head -5
		fi ;;
	*)
		echo "== $f ($(wc -l <"$f") lines, $(wc -c <"$f") bytes)"
		head -5 "$f" ;;
	esac
done
cat <<MSG

Look at them with:
  less out/demo/packets.log                          # kernel LOG-format lines
  python3 -m json.tool --json-lines out/demo/packets.json
  tcpdump -nr out/demo/packets.pcap                  # or tshark -r, Wireshark
MSG
