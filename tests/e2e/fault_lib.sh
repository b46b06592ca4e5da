# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the live fault tests (test_netns_fault_*.sh), sourced after
# lib.sh.  Namespace FA sends numbered UDP (bench/gen/seqgen.c: packet S
# has source port 1024 + S % 64000, destination port 20000 + S / 64000 and
# "sluice-seq S" in its payload) over a veth pair to FB, where one nft rule
# counts every packet in the named counter `logged`, logs it to an NFLOG
# group and drops it.  That counter is the oracle: what the kernel logged.
SEQGEN="$BUILDDIR/bench/seqgen"
CHECK="$(dirname "$0")/fault_check.py"
[ -x "$SEQGEN" ] || skip "needs $SEQGEN (built with the tree)"

# fault_net N GROUP: namespaces FA/FB, veth 10.N.0.1 -> 10.N.0.2, the rule.
fault_net() {
	FN=$1 FG=$2
	FA=$(unique_name slfa)
	FB=$(unique_name slfb)
	make_netns "$FA"
	make_netns "$FB"
	veth_pair "$FA" "$FB" "$FN"
	ip netns exec "$FB" nft -f - <<NFT || skip "nftables log group not available"
table ip sluice_fault {
	counter logged { }
	chain in {
		type filter hook input priority 0; policy accept;
		ip saddr 10.$FN.0.1 udp dport 20000-20999 counter name "logged" log group $FG prefix "fault " drop
	}
}
NFT
}

# nft_logged: packets the rule logged so far
nft_logged() {
	ip netns exec "$FB" nft list counter ip sluice_fault logged | sed -n 's/.*packets \([0-9]*\).*/\1/p'
}

# send ARGS...: seqgen in FA to FB (-n COUNT -r PPS -t SECS -f FIRST); in
# the foreground, its summary line on stdout.
send() { ip netns exec "$FA" "$SEQGEN" -d "10.$FN.0.2" "$@"; }
# send_bg OUT ARGS...: the same in the background (GEN_PID); summary in OUT.
send_bg() {
	local out=$1; shift
	ip netns exec "$FA" "$SEQGEN" -d "10.$FN.0.2" "$@" >"$out" &
	GEN_PID=$!
	at_exit "kill $GEN_PID"
}
# sent_of OUT: packets seqgen says it sent
sent_of() { sed -n 's/^sent \([0-9]*\) .*/\1/p' "$1"; }

# start_sluice LOG CONF: the daemon in FB (SLUICE_PID), once nflog is bound.
start_sluice() {
	ip netns exec "$FB" "$SLUICE" -c "$2" >"$1" 2>&1 &
	SLUICE_PID=$!
	at_exit "kill $SLUICE_PID"
	wait_for 10 grep -qs "bound NFLOG group $FG" "$1" || { cat "$1"; fail "nflog did not start"; }
}

# counter LOG INSTANCE KEY: KEY (in, out, dropped, errors or a plugin
# counter) from the last counters line of INSTANCE.
counter() {
	grep "counters: $2 (" "$1" | tail -1 | tr ' ' '\n' | sed -n "s/^$3=\([0-9]*\)$/\1/p"
}

# live_over LOG INSTANCE KEY N: SIGUSR1 shows KEY of INSTANCE above N
live_over() {
	kill -USR1 "$SLUICE_PID"
	sleep 0.05
	[ "$(counter "$1" "$2" "$3")" -gt "$4" ] 2>/dev/null
}

# input_caught_up LOG N: SIGUSR1 shows the nflog instance `fw` with in=N.
input_caught_up() {
	kill -USR1 "$SLUICE_PID"
	sleep 0.05
	[ "$(counter "$1" fw in)" = "$2" ]
}
