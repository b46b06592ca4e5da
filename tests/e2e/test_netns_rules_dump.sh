#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nflog's `rules: true` reads the ruleset from the kernel's netlink dump
# (plugins/common/rule_dump.c, rule_index_nl.c) instead of libnftables'
# JSON listing (rule_index_json.c): for a ruleset of every shape the index
# knows — base chains of inet, ip, ip6, arp, bridge and netdev tables, a
# regular chain jumped to from two base chains and gone to from another,
# a named and an anonymous verdict map, a plain set, verdicts (accept,
# drop, reject, jump, goto, return, continue), a value loaded into a
# register, a comment beyond ASCII, a printk log statement, two rules
# sharing a key — bench/rules_read builds the index both ways from the
# same generation and must find the same rules and the same shared keys
# (-c), with the count of `log group` rules the ruleset has; again after
# the ruleset changed, and for an empty ruleset.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft
READER=$BUILDDIR/bench/rules_read
[ -x "$READER" ] || skip "no $READER (built without SLUICE_WITH_NFTRACE)"
NS=$(unique_name slrdump)
make_netns "$NS"
G=7

ip netns exec "$NS" nft list ruleset >/dev/null || skip "nftables not available"
ip netns exec "$NS" nft -f - <<NFT || fail "the ruleset did not load"
table inet f {
	set blocked { type ipv4_addr; elements = { 192.0.2.1 } }
	map ports { type inet_service : verdict; elements = { 80 : jump viamap, 81 : accept } }
	chain sub {
		counter log group $G prefix "sub" accept comment "sub's rule: é"
	}
	chain viamap {
		log group $G prefix "vm" drop
	}
	chain anon {
		log group $G prefix "anon"
	}
	chain deep {
		log group $G prefix "deep" goto sub
	}
	chain lonely {
		log group $G prefix "lonely"
	}
	chain input {
		type filter hook input priority 0; policy accept;
		udp dport 5001 counter log group $G prefix "p" accept comment "in 5001"
		udp dport 5002 jump sub
		udp dport 5003 counter log group $G prefix "dup"
		udp dport 5003 counter log group $G prefix "dup" accept
		ip saddr @blocked log group $G prefix "blocked" reject
		tcp dport vmap @ports
		meta l4proto vmap { tcp : jump anon, udp : jump deep }
		meta mark set 1 log group $G prefix "mark"
		log group $G prefix "cont" continue
		log prefix "printk "
	}
	chain output {
		type filter hook output priority 0; policy accept;
		udp dport 6001 counter log group $G prefix "p" return
		udp dport 6002 jump sub
	}
}
table ip t4 {
	chain fw {
		type filter hook forward priority 0;
		log group 8 prefix "fwd4" drop
	}
}
table ip6 t6 {
	chain pre {
		type filter hook prerouting priority 0;
		log group 8 prefix "pre6"
	}
}
table arp a {
	chain arpin {
		type filter hook input priority 0;
		log group 9 prefix "arp"
	}
}
table bridge br {
	chain fw {
		type filter hook forward priority 0;
		log group 9 prefix "br" accept
	}
}
table netdev nd {
	chain ing {
		type filter hook ingress device lo priority 0;
		log group 9 prefix "nd"
	}
}
NFT
# rules with a log group statement: inet 12 (sub, viamap, anon, deep, lonely; input's p, dup,
# dup, blocked, mark, cont; output's p), ip, ip6, arp, bridge and netdev 1 each
read_both() { # read_both WANT: rules_read -c, and the count of log-group rules
	local out
	out=$(ip netns exec "$NS" "$READER" -n 1 -c 2>"$WORK/err") ||
		{ cat "$WORK/err"; fail "the netlink and the JSON readers disagree (above), or a read failed"; }
	echo "$out"
	case " $out " in
	*" log_rules=$1 "*) ;;
	*) fail "want log_rules=$1: $out" ;;
	esac
}
read_both 17
# a change: a rule added to the regular chain, one rule deleted
ip netns exec "$NS" nft add rule inet f lonely log group $G prefix "late" accept
ip netns exec "$NS" nft delete table netdev nd
read_both 17
ip netns exec "$NS" nft flush ruleset
read_both 0
pass "the kernel's dump and libnftables' JSON listing give the same rule index"
