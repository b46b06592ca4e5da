# SPDX-License-Identifier: GPL-2.0-or-later
# The set-up shared by the live pcapng tests (test_netns_pcapng*.sh).
# Source after lib.sh.
#   pcapng_netns NAME NET TABLE PREFIX [RULE]   namespaces A -> B logging to group G

# pcapng_netns NAME NET TABLE PREFIX [RULE]: netns_pair NAME NET, then in B an inet TABLE that logs ICMP, UDP and TCP from A (IPv4 and IPv6) to group $G with PREFIX, after RULE if given
pcapng_netns() {
	local rule=""
	netns_pair "$1" "$2"
	[ -z "${5:-}" ] || rule=$'\t\t'"$5"$'\n'
	ip netns exec "$B" nft -f - <<NFT || skip "nftables log group not available"
table inet $3 {
	chain in {
		type filter hook input priority 0; policy accept;
${rule}		ip saddr 10.$2.0.1 meta l4proto { icmp, tcp, udp } log group $G prefix "$4"
		ip6 saddr fd$2::1 meta l4proto { tcp, udp } log group $G prefix "$4"
		ip6 saddr fd$2::1 icmpv6 type echo-request log group $G prefix "$4"
	}
}
NFT
}
