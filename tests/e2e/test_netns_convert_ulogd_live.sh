#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A converted ulogd.conf runs as is: two ulogd stacks on one NFLOG group
# (LOGEMU for every packet, and LOGEMU behind a MARK filter) go through
# `sluice convert ulogd`, and the YAML is started unchanged in a private
# namespace where nftables logs ICMP echo requests to the group, marking
# those to 127.0.0.2.  The nft rule's counter is the oracle: the first file
# has one kernel-format line per packet it counted, the second exactly the
# marked ones.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft ping

G=23
NS=$(unique_name slcvu)
make_netns "$NS"
cat >"$WORK/ulogd.conf" <<EOF
[global]
stack=log1:NFLOG,base1:BASE,ifi1:IFINDEX,ip2str1:IP2STR,print1:PRINTPKT,emu1:LOGEMU
stack=log1:NFLOG,base1:BASE,mark1:MARK,ifi1:IFINDEX,ip2str1:IP2STR,print1:PRINTPKT,emu2:LOGEMU

[log1]
group=$G
netlink_qtimeout=2

[mark1]
mark=1

[emu1]
file="$WORK/syslogemu.log"
sync=1

[emu2]
file="$WORK/marked.log"
EOF
"$SLUICE" convert ulogd "$WORK/ulogd.conf" >"$WORK/sluice.yaml" 2>"$WORK/convert.err" ||
	{ cat "$WORK/convert.err"; fail "convert failed"; }
cat "$WORK/sluice.yaml"
"$SLUICE" -t -c "$WORK/sluice.yaml" >/dev/null || fail "sluice -t refused the converted file"

ip netns exec "$NS" nft -f - <<NFT || skip "nftables log group not available"
table inet slcvu {
	chain out {
		type filter hook output priority 0; policy accept;
		ip daddr 127.0.0.2 icmp type echo-request meta mark set 1
		ip daddr 127.0.0.0/8 icmp type echo-request counter log group $G prefix "ulogd-conv "
	}
}
NFT
ip netns exec "$NS" "$SLUICE" -c "$WORK/sluice.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "bound NFLOG group $G" "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "nflog did not start"; }

ip netns exec "$NS" ping -q -c 5 -i 0.2 127.0.0.1 >/dev/null || fail "ping 127.0.0.1"
ip netns exec "$NS" ping -q -c 3 -i 0.2 127.0.0.2 >/dev/null || fail "ping 127.0.0.2"
COUNTED=$(ip netns exec "$NS" nft list chain inet slcvu out | sed -n 's/.*counter packets \([0-9]*\) .*/\1/p')
[ "$COUNTED" = 8 ] || fail "nft counted $COUNTED echo requests, expected 8"
# lines FILE N: kernel-format lines of echo requests from 127.0.0.1 to 127.0.0.N
lines() { grep -c "ulogd-conv IN= OUT=lo SRC=127.0.0.1 DST=127.0.0.$2 .* PROTO=ICMP TYPE=8 CODE=0 " "$1" || true; }
all_written() { [ "$(($(lines "$WORK/syslogemu.log" 1) + $(lines "$WORK/syslogemu.log" 2)))" -ge 8 ]; }
wait_for 10 all_written || true
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }

ALL1=$(lines "$WORK/syslogemu.log" 1) ALL2=$(lines "$WORK/syslogemu.log" 2)
M1=$(lines "$WORK/marked.log" 1) M2=$(lines "$WORK/marked.log" 2)
head -3 "$WORK/syslogemu.log"
[ "$ALL1" = 5 ] && [ "$ALL2" = 3 ] && [ "$(wc -l <"$WORK/syslogemu.log")" = "$COUNTED" ] ||
	fail "syslogemu.log: $ALL1 + $ALL2 lines of $(wc -l <"$WORK/syslogemu.log"), nft counted $COUNTED"
[ "$M1" = 0 ] && [ "$M2" = 3 ] && [ "$(wc -l <"$WORK/marked.log")" = 3 ] ||
	fail "marked.log: $M1 unmarked and $M2 marked lines, expected 0 and 3"
[ "$(grep -c 'MARK=0x1 ' "$WORK/marked.log")" = 3 ] || fail "marked.log lines lack MARK=0x1"
# LOGEMU's layout: "Dec  1 05:53:27 host PREFIX...", no tag (line_header: syslog, header_tag "")
H=$(hostname); H=${H%%.*}
[ "$(grep -cE "^[A-Z][a-z]{2} [ 1-3][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2} $H ulogd-conv IN=" "$WORK/syslogemu.log")" = "$COUNTED" ] ||
	fail "syslogemu.log lines do not start as LOGEMU's: $(head -1 "$WORK/syslogemu.log")"
pass "nft counted $COUNTED, the converted stacks wrote $((ALL1 + ALL2)) lines and $M2 marked ones"
