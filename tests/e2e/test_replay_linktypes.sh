#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# replay reads every link type of the test captures (pcap and pcapng) and
# hands on every packet: replay -> decode -> pcap (raw IP) must write the
# same IP packets as the RAW capture of the same traffic, in the same order.
# Also: loop passes, and a malformed NFLOG event is counted and skipped.
. "$(dirname "$0")/lib.sh"
need_cmd python3

DATA="$SRCDIR/tests/data"

# pcapcmp REF OUT: "<ref packets> <out packets> <equal packets>"
cat >"$WORK/pcapcmp.py" <<'PY'
import struct, sys
def read(fn):
    d = open(fn, "rb").read()
    e = "<" if d[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    off, out = 24, []
    while off + 16 <= len(d):
        incl = struct.unpack(e + "I", d[off + 8:off + 12])[0]
        out.append(d[off + 16:off + 16 + incl])
        off += 16 + incl
    return out
a, b = read(sys.argv[1]), read(sys.argv[2])
print(len(a), len(b), sum(x == y for x, y in zip(a, b)))
PY

# run_replay FILE EXTRA-REPLAY-OPTIONS: replay FILE into $WORK/out.pcap
run_replay() {
	cat >"$WORK/c.yaml" <<YAML
stacks:
  s1:
    - {plugin: replay, file: "$1"$2}
    - decode
    - {plugin: pcap, file: "$WORK/out.pcap", linktype: raw}
YAML
	rm -f "$WORK/out.pcap"
	timeout $((20 * TIME_FACTOR)) "$SLUICE" -c "$WORK/c.yaml" >"$WORK/log" 2>&1 || { cat "$WORK/log"; fail "sluice failed on $1"; }
}

ref_n=$(awk '$1 == "raw-mixed.pcap" {print $2}' "$DATA/counts.txt")
[ -n "$ref_n" ] || fail "raw-mixed.pcap missing from counts.txt"
while read -r f n; do
	run_replay "$DATA/$f" ""
	read -r a b same < <(python3 "$WORK/pcapcmp.py" "$DATA/raw-mixed.pcap" "$WORK/out.pcap")
	[ "$b" = "$n" ] || { cat "$WORK/log"; fail "$f: $b records out, expected $n"; }
	[ "$same" = "$ref_n" ] || fail "$f: only $same of $ref_n packets equal the RAW capture's"
	grep -q "(replay):.* malformed=0" "$WORK/log" || { cat "$WORK/log"; fail "$f: malformed packets counted"; }
	echo "ok: $f: $n records"
done <"$DATA/counts.txt"

# An NFLOG capture written on a host of the other byte order (file header,
# record headers and TLV headers swapped): libpcap swaps them back.
python3 - "$DATA/nflog-mixed.pcap" "$WORK/be.pcap" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
e = "<" if d[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
o = ">" if e == "<" else "<"
out = bytearray(struct.pack(o + "IHHiIII", *struct.unpack(e + "IHHiIII", d[:24])))
off = 24
while off + 16 <= len(d):
    sec, frac, incl, orig = struct.unpack(e + "IIII", d[off:off + 16])
    rec = bytearray(d[off + 16:off + 16 + incl])
    off += 16 + incl
    p = 4
    while p + 4 <= len(rec):
        l, t = struct.unpack(e + "HH", rec[p:p + 4])
        rec[p:p + 4] = struct.pack(o + "HH", l, t)
        p += (l + 3) & ~3
    out += struct.pack(o + "IIII", sec, frac, incl, orig) + rec
open(sys.argv[2], "wb").write(out)
PY
run_replay "$WORK/be.pcap" ""
read -r a b same < <(python3 "$WORK/pcapcmp.py" "$DATA/raw-mixed.pcap" "$WORK/out.pcap")
[ "$same" = "$ref_n" ] || fail "other-endian NFLOG capture: $same of $ref_n packets equal"

# loop: 3 passes over the file
run_replay "$DATA/nflog-mixed.pcap" ", loop: 3"
read -r a b same < <(python3 "$WORK/pcapcmp.py" "$DATA/raw-mixed.pcap" "$WORK/out.pcap")
[ "$b" = $((3 * ref_n)) ] || fail "loop 3: $b records, expected $((3 * ref_n))"

# A malformed event: the 2nd record of the NFLOG capture gets a TLV longer
# than the record (not its payload: the prefix), the 3rd a 2-byte TLV.
python3 - "$DATA/nflog-mixed.pcap" "$WORK/bad.pcap" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
e = "<" if d[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
off, i = 24, 0
while off + 16 <= len(d):
    incl = struct.unpack(e + "I", d[off + 8:off + 12])[0]
    rec = off + 16
    if i in (1, 2):
        # first TLV after the 4-byte nflog header is NFULA_PACKET_HDR; the
        # second (NFULA_PREFIX) gets a bad length.  TLV headers: host order.
        t1 = rec + 4
        l1 = struct.unpack("=H", d[t1:t1 + 2])[0]
        t2 = t1 + ((l1 + 3) & ~3)
        struct.pack_into("=H", d, t2, 60000 if i == 1 else 2)
    off += 16 + incl
    i += 1
open(sys.argv[2], "wb").write(d)
PY
run_replay "$WORK/bad.pcap" ""
read -r a b same < <(python3 "$WORK/pcapcmp.py" "$DATA/raw-mixed.pcap" "$WORK/out.pcap")
[ "$b" = $((ref_n - 2)) ] || { cat "$WORK/log"; fail "malformed: $b records, expected $((ref_n - 2))"; }
grep -q "(replay):.* malformed=2" "$WORK/log" || { cat "$WORK/log"; fail "malformed events not counted"; }

pass "all link types"
