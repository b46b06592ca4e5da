#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# cef on live NFLOG events: in namespace B, nftables logs packets from A
# (TCP SYN, UDP, ICMPv6 echo) under hostile prefixes: pipes, backslashes,
# equals signs, a newline followed by a forged CEF header, CR, TAB, ESC,
# DEL, a C1 control, valid UTF-8 and invalid bytes (nft takes a prefix's
# raw bytes).  One nflog input feeds three stacks through one decode:
# cef (CEF:0), cef with format: leef (LEEF:2.0, TAB-delimited) and json,
# each into a file.  cef_check.py reads the CEF and LEEF lines with its own
# parser, written from the standard: exactly one line per record (as many
# as json objects), the CEF header in 8 parts on unescaped pipes, every
# extension value back to the record's value as json prints it, prefixes
# as docs/PLUGINS.md's replacement rule says.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3

G=31
netns_pair slcef 97
# raw bytes: nft takes a quoted string's bytes as they are (no '"' in it)
P1="plain "
P2='pipe|back\slash=eq\=x '
P3="$(printf 'nl\nCEF:0|forged|x|1|2|3|4|act=allow\r ')"
P4="$(printf 'ctl\tTAB\001\033[31m\177 ')"
P5="$(printf 'caf\303\251 \377\302\233\342\202 end=')"

ip netns exec "$B" nft -f - <<NFT || skip "nftables logging not available"
table inet sluice_cef {
	chain in {
		type filter hook input priority 0; policy accept;
		iifname "vb" tcp dport 8081 log group $G prefix "$P1"
		iifname "vb" icmpv6 type echo-request log group $G prefix "$P1"
		iifname "vb" udp dport 9002 log group $G prefix "$P2"
		iifname "vb" udp dport 9003 log group $G prefix "$P3"
		iifname "vb" udp dport 9004 log group $G prefix "$P4"
		iifname "vb" udp dport 9005 log group $G prefix "$P5"
	}
}
NFT

cat >"$WORK/c.yaml" <<YAML
instances:
  in: {plugin: nflog, group: $G, qtimeout: 20ms}
stacks:
  cef: [in, decode, cef, {plugin: file, file: "$WORK/out.cef", flush_interval: 50ms}]
  leef: [in, decode, {plugin: cef, format: leef}, {plugin: file, file: "$WORK/out.leef", flush_interval: 50ms}]
  json: [in, decode, json, {plugin: file, file: "$WORK/out.json", flush_interval: 50ms}]
YAML
"$SLUICE" -t -c "$WORK/c.yaml" >"$WORK/t.log" 2>&1 || { cat "$WORK/t.log"; fail "sluice -t refused the configuration"; }
ip netns exec "$B" "$SLUICE" -c "$WORK/c.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID 2>/dev/null"
wait_for 10 grep -qs "bound NFLOG group $G" "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "nflog did not start"; }

ip netns exec "$A" python3 - <<'PY'
import socket, struct
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for port in (9002, 9003, 9004, 9005):
    u.sendto(b"sluice-cef", ("10.97.0.2", port))
s6 = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
s6.sendto(struct.pack("!BBHHH", 128, 0, 0, 0x5199, 1) + b"sluice-cef6", ("fd97::2", 0))
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.settimeout(2)
try:
    t.connect(("10.97.0.2", 8081))
except OSError:
    pass
PY

# six packets at least (a SYN may be sent again): every prefix has a line in each file
lines() { [ -f "$1" ] && wc -l <"$1" || echo 0; }
all_in() { [ "$(lines "$WORK/out.cef")" -ge 6 ] && [ "$(lines "$WORK/out.leef")" -ge 6 ] && [ "$(lines "$WORK/out.json")" -ge 6 ]; }
wait_for 10 all_in || { cat "$WORK/sluice.log"; fail "fewer than 6 records in a file"; }
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with $?"; }
grep -q 'cef.file (file): in=\([0-9]*\) out=\1 dropped=0 errors=0' "$WORK/sluice.log" ||
	{ cat "$WORK/sluice.log"; fail "the CEF file did not take every record"; }

hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
python3 "$SRCDIR/tests/e2e/cef_check.py" "$WORK/out.cef" "$WORK/out.leef" "$WORK/out.json" \
	"$(hex "$P1")" "$(hex "$P2")" "$(hex "$P3")" "$(hex "$P4")" "$(hex "$P5")" ||
	{ head -c 4000 "$WORK/out.cef"; fail "CEF/LEEF lines do not read back"; }
pass "cef: $(lines "$WORK/out.cef") records, one CEF and one LEEF line each, read back to json's values"
