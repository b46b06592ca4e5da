#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# pcap output, every link type, checked with tcpdump, tshark and a parser:
# each test capture replayed to raw, ethernet and nflog pcaps must give the
# same count, the same IP packets byte for byte, the same addresses, ports
# and payloads as decoded by tshark (no malformed packet), the record's
# nanosecond timestamps, a rebuilt Ethernet header (the captured one with
# its VLAN tag, or zero MACs and the right ethertype), NFLOG records equal
# to the kernel's (tcpdump -i nflog) byte for byte but the resource id, and
# a snaplen that cuts frames but never the NFLOG TLV chain.
. "$(dirname "$0")/lib.sh"
need_cmd tcpdump tshark python3

DATA="$SRCDIR/tests/data"
export TZ=UTC
# packets tcpdump reads (one line each only when it can decode them)
tcount() { tcpdump --count -r "$1" 2>/dev/null | sed -n 's/^\([0-9]*\) packets\?$/\1/p'; }

cat >"$WORK/pc.py" <<'PY'
import struct, sys
def read(fn):
    d = open(fn, "rb").read()
    magic = d[:4]
    e = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    nano = magic in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
    snap, lt = struct.unpack(e + "II", d[16:24])
    off, recs = 24, []
    while off + 16 <= len(d):
        s, f, incl, orig = struct.unpack(e + "IIII", d[off:off + 16])
        recs.append((s, f if nano else f * 1000, incl, orig, d[off + 16:off + 16 + incl]))
        off += 16 + incl
    if off != len(d):
        sys.exit("%s: %d trailing bytes" % (fn, len(d) - off))
    return nano, snap, lt, recs
def tlvs(rec):
    p, out = 4, []
    while p + 4 <= len(rec):
        l, t = struct.unpack("=HH", rec[p:p + 4])
        if l < 4 or p + l > len(rec):
            sys.exit("bad TLV at %d" % p)
        out.append((t, rec[p + 4:p + l]))
        p += (l + 3) & ~3
    if p != len(rec):
        sys.exit("TLV chain does not end at the record's end")
    return out
def l3(lt, rec):
    if lt == 101:
        return rec
    if lt == 1:
        return rec[18:] if rec[12:14] in (b"\x81\x00", b"\x88\xa8") else rec[14:]
    if lt == 239:
        return dict(tlvs(rec)).get(9, b"")
    sys.exit("link type %d" % lt)
cmd = sys.argv[1]
if cmd == "l3":        # REF OUT: every L3 packet of OUT equals REF's
    _, _, lta, a = read(sys.argv[2])
    _, _, ltb, b = read(sys.argv[3])
    pa = [l3(lta, r[4]) for r in a]
    pb = [l3(ltb, r[4]) for r in b]
    print(len(pa), len(pb), sum(x == y for x, y in zip(pa, pb)))
elif cmd == "hdr":     # OUT: nano? snaplen linktype
    nano, snap, lt, _ = read(sys.argv[2])
    print(int(nano), snap, lt)
elif cmd == "times":   # OUT: one sec.nsec per record
    for r in read(sys.argv[2])[3]:
        print("%d.%09d" % (r[0], r[1]))
elif cmd == "nflogeq": # REF OUT: NFLOG records equal but the resource id;
    # NFULA_TIMESTAMP is always written (the kernel leaves it out when the
    # skb has no time: output hooks), so it counts only where REF has one.
    a, b = read(sys.argv[2])[3], read(sys.argv[3])[3]
    same = 0
    for x, y in zip(a, b):
        tx, ty = tlvs(x[4]), tlvs(y[4])
        if 3 not in dict(tx):
            ty = [t for t in ty if t[0] != 3]
        same += x[4][:2] == y[4][:2] and tx == ty
    print(len(a), len(b), same)
elif cmd == "snap":    # OUT SNAPLEN: caplen <= snaplen, len >= caplen, TLVs ok
    nano, snap, lt, recs = read(sys.argv[2])
    lim, cut = int(sys.argv[3]), 0
    for s, f, incl, orig, rec in recs:
        if incl > lim or orig < incl:
            sys.exit("caplen %d len %d, snaplen %d" % (incl, orig, lim))
        if lt == 239 and sys.argv[4] == "tlv":
            tlvs(rec)
        cut += orig > incl
    print(len(recs), cut)
PY

# run STACK-NAME SOURCE OUT [PCAP-OPTIONS]: replay SOURCE into pcap OUT
run() {
	cat >"$WORK/c.yaml" <<YAML
stacks:
  s:
    - {plugin: replay, file: "$1"}
    - {plugin: pcap, file: "$2"$3}
YAML
	rm -f "$2"
	timeout $((20 * TIME_FACTOR)) "$SLUICE" -c "$WORK/c.yaml" >"$WORK/log" 2>&1 || { cat "$WORK/log"; fail "sluice failed: $1 -> $2"; }
	grep -q "(pcap):.* errors=0 dropped_records=0 dropped_bytes=0 bytes_written=[0-9]* files_rotated=0 skipped=0" "$WORK/log" ||
		{ cat "$WORK/log"; fail "pcap output counted errors or drops for $1"; }
	bw=$(sed -n 's/.*(pcap):.* bytes_written=\([0-9]*\).*/\1/p' "$WORK/log")
	[ "$bw" = "$(stat -c %s "$2")" ] || fail "bytes_written=$bw, $2 holds $(stat -c %s "$2") bytes"
}

# What tshark decodes of each packet, link layer aside, then whether it
# found it malformed and its expert infos' severities (one tshark run: it
# takes a second to start).
decoded() {
	tshark -r "$1" -T fields -E separator='|' -e ip.src -e ip.dst -e ipv6.src -e ipv6.dst \
		-e ip.proto -e ipv6.nxt -e tcp.srcport -e tcp.dstport -e udp.srcport -e udp.dstport \
		-e icmp.type -e icmpv6.type -e data.data -e _ws.malformed -e _ws.expert.severity 2>/dev/null
}

REF="$DATA/raw-mixed.pcap"
ref_n=$(awk '$1 == "raw-mixed.pcap" {print $2}' "$DATA/counts.txt")
decoded "$REF" | cut -d'|' -f1-13 >"$WORK/ref.txt"
[ "$(wc -l <"$WORK/ref.txt")" = "$ref_n" ] || fail "tshark does not read the reference capture"
grep -q . "$WORK/ref.txt" || fail "tshark decoded nothing"

declare -A LT=([raw]=101 [ethernet]=1 [nflog]=239)
while read -r f n; do
	for lt in raw ethernet nflog; do
		out="$WORK/$f-$lt.pcap"
		run "$DATA/$f" "$out" ", linktype: $lt"
		read -r nano snap ltv < <(python3 "$WORK/pc.py" hdr "$out")
		[ "$nano $snap $ltv" = "1 262144 ${LT[$lt]}" ] ||
			fail "$f/$lt: header nano=$nano snaplen=$snap linktype=$ltv"
		c=$(tcount "$out")
		[ "$c" = "$n" ] || fail "$f/$lt: tcpdump reads $c packets, expected $n"
		read -r a b same < <(python3 "$WORK/pc.py" l3 "$REF" "$out") || fail "$f/$lt: unreadable"
		[ "$b" = "$n" ] && [ "$same" = "$ref_n" ] ||
			fail "$f/$lt: $same of $ref_n IP packets equal the reference ($b records)"
		decoded "$out" >"$WORK/dec-all.txt"
		cut -d'|' -f1-13 "$WORK/dec-all.txt" >"$WORK/dec.txt"
		cmp -s "$WORK/ref.txt" "$WORK/dec.txt" ||
			{ diff "$WORK/ref.txt" "$WORK/dec.txt" | head; fail "$f/$lt: tshark decodes other addresses/ports/payloads"; }
		# severity "error" is 0x00800000 (8388608); a malformed packet sets column 14
		m=$(cut -d'|' -f14- "$WORK/dec-all.txt" | grep -c -e '^[^|]' -e '8388608' || true)
		[ "$m" = 0 ] || fail "$f/$lt: tshark finds $m malformed packets"
		python3 "$WORK/pc.py" times "$out" >"$WORK/times-$lt.txt"
	done
	# One timestamp per event, whatever the link type.
	cmp -s "$WORK/times-raw.txt" "$WORK/times-ethernet.txt" && cmp -s "$WORK/times-raw.txt" "$WORK/times-nflog.txt" ||
		fail "$f: link types got different timestamps"
	echo "ok: $f: $n packets as raw, ethernet and nflog"
done < <(grep -v "\.pcapng " "$DATA/counts.txt")	# pcapng: the same packets, replay's test

# Timestamps are the record's, to the nanosecond (a raw capture's own).
python3 "$WORK/pc.py" times "$REF" >"$WORK/times-ref.txt"
cmp -s "$WORK/times-ref.txt" "$WORK/times-raw.txt" || fail "timestamps differ from the capture's"
tshark -r "$WORK/raw-mixed.pcap-raw.pcap" -T fields -e frame.time_epoch 2>/dev/null | head -1 |
	grep -q '^[0-9]*\.[0-9]\{9\}$' || fail "tshark does not see nanosecond timestamps"

# NFLOG: the kernel's records (as tcpdump -i nflog saved them) come out
# TLV for TLV: prefix, hook, interfaces, hardware header, timestamp, payload.
read -r a b same < <(python3 "$WORK/pc.py" nflogeq "$DATA/nflog-mixed.pcap" "$WORK/nflog-mixed.pcap-nflog.pcap")
[ "$same" = "$a" ] && [ "$a" = "$b" ] || fail "nflog: only $same of $a records equal the kernel's"
fields="-e nflog.family -e nflog.hook -e nflog.prefix -e nflog.ifindex_indev -e nflog.protocol"
tshark -r "$DATA/nflog-mixed.pcap" -T fields $fields >"$WORK/nf-ref.txt" 2>/dev/null
tshark -r "$WORK/nflog-mixed.pcap-nflog.pcap" -T fields $fields >"$WORK/nf-out.txt" 2>/dev/null
cmp -s "$WORK/nf-ref.txt" "$WORK/nf-out.txt" || { diff "$WORK/nf-ref.txt" "$WORK/nf-out.txt" | head; fail "tshark reads other NFLOG metadata"; }
grep -q "sluice-test" "$WORK/nf-out.txt" || fail "no prefix in the NFLOG output"
tcpdump -nr "$WORK/nflog-mixed.pcap-nflog.pcap" 2>/dev/null | head -1 | grep -q "IP 10.99.0.1 > 10.99.0.2" ||
	fail "tcpdump does not decode the NFLOG output"

# Ethernet: the captured header, VLAN tag included ...
tshark -r "$DATA/eth-vlan.pcap" -T fields -e eth.src -e eth.dst -e vlan.id -e eth.type >"$WORK/e-ref.txt" 2>/dev/null
tshark -r "$WORK/eth-vlan.pcap-ethernet.pcap" -T fields -e eth.src -e eth.dst -e vlan.id -e eth.type >"$WORK/e-out.txt" 2>/dev/null
cmp -s "$WORK/e-ref.txt" "$WORK/e-out.txt" || fail "the VLAN-tagged Ethernet header was not kept"
grep -q "	10	" "$WORK/e-out.txt" || fail "no VLAN id 10"
# ... or zero MACs and the ethertype of the IP version.
tshark -r "$WORK/raw-mixed.pcap-ethernet.pcap" -T fields -e eth.src -e eth.dst -e eth.type -e frame.protocols 2>/dev/null |
	sed -E 's/(eth:ethertype:ipv?6?):.*/\1/' | sort -u >"$WORK/synth.txt"
[ "$(cat "$WORK/synth.txt")" = "$(printf '00:00:00:00:00:00\t00:00:00:00:00:00\t0x0800\teth:ethertype:ip\n00:00:00:00:00:00\t00:00:00:00:00:00\t0x86dd\teth:ethertype:ipv6')" ] ||
	{ cat "$WORK/synth.txt"; fail "synthesized Ethernet headers are wrong"; }

# snaplen: frames are cut, lengths kept; NFLOG cuts the payload, not TLVs.
# (The metadata of these records takes 116 bytes: below that even it is cut.)
for lt in raw ethernet nflog nflog-160; do
	snap=100 tlv=tlv
	[ "$lt" = nflog-160 ] && snap=160
	[ "$lt" = nflog ] && tlv=cut
	run "$DATA/nflog-mixed.pcap" "$WORK/snap-$lt.pcap" ", linktype: ${lt%-160}, snaplen: $snap"
	read -r cnt cut < <(python3 "$WORK/pc.py" snap "$WORK/snap-$lt.pcap" $snap $tlv) || fail "snaplen $lt: bad records"
	[ "$cnt" = 40 ] && [ "$cut" -gt 0 ] || fail "snaplen $lt: $cnt records, $cut cut"
	[ "$(tcount "$WORK/snap-$lt.pcap")" = 40 ] || fail "snaplen $lt: tcpdump cannot read it"
	m=$(tshark -r "$WORK/snap-$lt.pcap" -Y "_ws.malformed" 2>/dev/null | wc -l)
	[ "$m" = 0 ] || fail "snaplen $lt: $m malformed"
done

# stdout: "-" writes one pcap stream.
cat >"$WORK/c.yaml" <<YAML
stacks:
  s:
    - {plugin: replay, file: "$REF"}
    - {plugin: pcap, file: "-"}
YAML
"$SLUICE" -c "$WORK/c.yaml" >"$WORK/stdout.pcap" 2>"$WORK/log" || fail "pcap to stdout failed"
[ "$(tcount "$WORK/stdout.pcap")" = "$ref_n" ] || fail "pcap to stdout unreadable"

# Appending to an existing file with the same header continues it; one with
# another header (here: another link type) is moved aside, not corrupted.
run "$REF" "$WORK/app.pcap" ", linktype: raw"
cat >"$WORK/c.yaml" <<YAML
stacks:
  s:
    - {plugin: replay, file: "$REF"}
    - {plugin: pcap, file: "$WORK/app.pcap"}
YAML
"$SLUICE" -c "$WORK/c.yaml" >"$WORK/log" 2>&1 || fail "append run failed"
[ "$(tcount "$WORK/app.pcap")" = $((2 * ref_n)) ] || fail "append did not continue the file"
sed -i 's/file: "[^"]*app.pcap"}/file: "'"${WORK//\//\\/}"'\/app.pcap", linktype: nflog}/' "$WORK/c.yaml"
"$SLUICE" -c "$WORK/c.yaml" >"$WORK/log" 2>&1 || fail "append run 2 failed"
grep -q "has another header: moved to" "$WORK/log" || { cat "$WORK/log"; fail "other header not reported"; }
aside=$(ls "$WORK"/app.pcap.2* | head -1)
[ "$(tcount "$aside")" = $((2 * ref_n)) ] || fail "the moved file was changed"
[ "$(python3 "$WORK/pc.py" hdr "$WORK/app.pcap")" = "1 262144 239" ] || fail "new file has the wrong header"

pass "raw, ethernet and nflog pcaps read back by tcpdump and tshark"
