# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers of the conntrack tests (nfct input, ipfix/flowfile outputs).
# Source after lib.sh.

# ct_netns NS [IPFIX_PORT]: a namespace with conntrack loaded (an nft rule
# matching on ct state), accounting and timestamps on (both per namespace),
# and the IPFIX export itself not tracked, so it never shows as a flow.
ct_netns() {
	local ns="$1" port="${2:-4739}"
	make_netns "$ns"
	ip netns exec "$ns" nft -f - <<NFT || skip "nftables with conntrack unavailable"
table inet sluice_ct {
	chain raw_pre { type filter hook prerouting priority raw; udp dport $port notrack; }
	chain raw_out { type filter hook output priority raw; udp dport $port notrack; }
	chain out { type filter hook output priority 0; ct state new counter; }
}
NFT
	ip netns exec "$ns" sysctl -qw net.netfilter.nf_conntrack_acct=1 \
		net.netfilter.nf_conntrack_timestamp=1 || skip "conntrack sysctls unavailable"
}

# start_nfcapd NS DIR PORT: nfcapd listening on 127.0.0.1:PORT inside NS.
start_nfcapd() {
	local ns="$1" dir="$2" port="$3"
	mkdir -p "$dir"
	ip netns exec "$ns" nfcapd -b 127.0.0.1 -p "$port" -w "$dir" -t 60 >"$dir.log" 2>&1 &
	NFCAPD_PID=$!
	at_exit "kill $NFCAPD_PID"
	wait_for 10 nfcapd_listening "$ns" "$port" || fail "nfcapd did not start: $(cat "$dir.log")"
}
nfcapd_listening() { ip netns exec "$1" ss -Huln "sport = :$2" | grep -q .; }

# stop_nfcapd: SIGTERM makes nfcapd write out its file.
stop_nfcapd() {
	kill -TERM "$NFCAPD_PID"
	wait "$NFCAPD_PID" 2>/dev/null || true
}

# counter INSTANCE NAME LOGFILE: the last value logged for a counter.
counter() {
	grep "counters: $1 (" "$3" | tail -1 | sed -nE "s/.* $2=([0-9]+).*/\\1/p"
}
