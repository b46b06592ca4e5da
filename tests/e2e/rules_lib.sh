# SPDX-License-Identifier: GPL-2.0-or-later
# The set-up shared by nflog's `rules: true` tests (test_netns_rules*.sh).
# Source after lib.sh.
#   rules_netns NAME            skips without nftrace, then namespace NS and group G
#   rules_nft_load SUB [OUT]    the inet ruleset of test_netns_rules{,_metrics}
#   rules_sluice_start          sluice on $WORK/c.yaml in NS (SLUICE_PID)
#   rules_send ADDR PORT...     3 UDP datagrams to each port, sent in NS
#   rules_send_all              test_netns_rules_outputs' 24 records: both chains, both families
#   rules_logged N              true once nflog's `in` counter is N (for wait_for)

# rules_netns NAME: skips unless rules: true is built in (SLUICE_WITH_NFTRACE), then NS (a namespace named after NAME) and G=7
rules_netns() {
	# rules: true is built with nftrace (SLUICE_WITH_NFTRACE)
	[ -e "$BUILDDIR/plugins/nftrace.so" ] || skip "built without SLUICE_WITH_NFTRACE (no libnftables)"
	NS=$(unique_name "$1")
	make_netns "$NS"
	G=7
}

# rules_nft_load SUB_COMMENT [OUT_COMMENT]: table inet f in NS (5001-5003 in, 6001-6002 out, chain sub commented SUB_COMMENT, 6001's rule OUT_COMMENT if given)
rules_nft_load() {
	local out=""
	[ -z "${2:-}" ] || out=" comment \"$2\""
	ip netns exec "$NS" nft -f - <<NFT || skip "nftables not available"
table inet f {
	chain sub {
		counter log group $G prefix "sub" accept comment "$1"
	}
	chain input {
		type filter hook input priority 0; policy accept;
		udp dport 5001 counter log group $G prefix "p" accept comment "in 5001"
		udp dport 5002 jump sub
		udp dport 5003 counter log group $G prefix "dup"
		udp dport 5003 counter log group $G prefix "dup" accept
	}
	chain output {
		type filter hook output priority 0; policy accept;
		udp dport 6001 counter log group $G prefix "p"$out
		udp dport 6002 jump sub
	}
}
NFT
}

# rules_sluice_start: sluice on $WORK/c.yaml in NS, logging to $WORK/sluice.log (SLUICE_PID), once nflog bound group G
rules_sluice_start() {
	ip netns exec "$NS" "$SLUICE" -c "$WORK/c.yaml" >"$WORK/sluice.log" 2>&1 &
	SLUICE_PID=$!
	at_exit "kill $SLUICE_PID"
	wait_for 10 grep -qs "bound NFLOG group $G" "$WORK/sluice.log" ||
		{ cat "$WORK/sluice.log"; fail "nflog did not start"; }
}

# rules_send ADDR PORT...: 3 datagrams to each PORT of ADDR, from NS
rules_send() {
	ip netns exec "$NS" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET, socket.SOCK_DGRAM)
for port in sys.argv[2:]:
    for _ in range(3):
        s.sendto(b"rules", (sys.argv[1], int(port)))' "$@"
}

# rules_send_all: 3 packets x (5001, 5002, 6001, 6002) and 3 x 2 statements for 5003 over IPv4, 3 x (5001, 6002) over IPv6: 24 records, 6 of them ambiguous
rules_send_all() {
	rules_send 127.0.0.1 5001 5002 5003 6001 6002
	rules_send ::1 5001 6002
}

# rules_logged N: nflog's counters (SIGUSR1 to SLUICE_PID) say in=N
rules_logged() {
	kill -USR1 "$SLUICE_PID"
	sleep 0.1
	grep -q "(nflog): in=$1 " "$WORK/sluice.log"
}
