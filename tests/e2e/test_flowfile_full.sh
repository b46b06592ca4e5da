#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# flowfile on a full disk (issue 8.7): 30000 one-packet UDP flows (96-byte
# records, uncompressed: 10922 per 1 MiB block, then 8156) into a tmpfs.
#   - 1800 KiB: block 1 fits, block 2 does not (the write is cut short by
#     ENOSPC and the file cut back to block 1), block 3 fits again: the file
#     holds blocks 1 and 3, the 10922 flows of block 2 are lost;
#   - 2 MiB: blocks 1 and 2 fit exactly, block 3 does not, nor does the
#     appendix: block 2 gives it its room; the file holds block 1 only.
# Each finished file is read by nfdump without a complaint (-r, -I, -v);
# the lost flows are counted in `lost` and in the core's `dropped`;
# flows in the file + lost = sent.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd nfdump python3
for p in replay decode flow flowfile; do
	[ -e "$SLUICE_PLUGIN_PATH/$p.so" ] || skip "$p not built"
done
export TZ=UTC
N=30000
PER_BLOCK=$((1048576 / 96))

python3 - "$WORK/flows.pcap" $N <<'PY'
import struct, sys
n = int(sys.argv[2])
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 101))
    for i in range(n):
        udp = struct.pack("!HHHH", 1024, 53, 12, 0) + struct.pack("!I", i)
        h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                        bytes([10, 1, i >> 8, i & 255]), bytes([10, 2, 0, 1]))
        us = 1700000000 * 10**6 + 2 * 10**6 * i // n
        f.write(struct.pack("<IIII", us // 10**6, us % 10**6, len(h) + len(udp), len(h) + len(udp)) + h + udp)
PY
counter() { grep "counters: $2 " "$1" | tail -1 | sed -nE "s/.* $3=([0-9]+).*/\1/p"; }

# full SIZE BLOCKS FLOWS: run into a tmpfs of SIZE; the file must hold BLOCKS blocks, FLOWS flows.
full() {
	local fs="$WORK/fs$1" log="$WORK/full$1.log" lost dropped out n i files
	mkdir "$fs"
	mount -t tmpfs -o "size=$1" sluicefull "$fs" || skip "cannot mount a tmpfs"
	at_exit "umount $fs"
	cat >"$WORK/full$1.yaml" <<YAML
stacks:
  f:
    - {plugin: replay, file: "$WORK/flows.pcap"}
    - decode
    - {plugin: flow, idle_timeout: 100ms}
    - {plugin: flowfile, dir: "$fs", rotate_interval: 1d, compression: none, flush_interval: 0}
YAML
	timeout $((30 * TIME_FACTOR)) "$SLUICE" -c "$WORK/full$1.yaml" >"$log" 2>&1 || { cat "$log"; fail "$1: sluice failed"; }
	lost=$(counter "$log" f.flowfile lost)
	dropped=$(counter "$log" f.flowfile dropped)
	out=$(counter "$log" f.flowfile out)
	grep -q "No space left on device" "$log" || { cat "$log"; fail "$1: the full disk is not reported"; }
	[ -z "$(find "$fs" -name 'nfcapd.current.*')" ] || fail "$1: a temporary file is left"
	mapfile -t files < <(find "$fs" -name 'nfcapd.*')
	[ ${#files[@]} = 1 ] || { cat "$log"; fail "$1: files: ${files[*]}"; }
	n=$(nfdump -q -o csv -r "${files[0]}" 2>"$WORK/err" | grep -c ,) || true
	[ -s "$WORK/err" ] && fail "$1: nfdump -r: $(cat "$WORK/err")"
	nfdump -v "${files[0]}" >"$WORK/v" 2>&1 || fail "$1: nfdump -v: $(cat "$WORK/v")"
	grep -q "^Data blks *: *$2$" "$WORK/v" || fail "$1: nfdump -v, $2 blocks expected: $(cat "$WORK/v")"
	i=$(nfdump -I -r "${files[0]}" | sed -n 's/^Flows: //p')
	[ "$i" = "$n" ] || fail "$1: nfdump -I says $i flows, the file holds $n"
	[ "$n" = "$3" ] || { cat "$log"; fail "$1: the file holds $n flows, want $3"; }
	[ "$lost" = $((N - $3)) ] || { cat "$log"; fail "$1: lost=$lost, want $((N - $3))"; }
	[ "$dropped" = "$lost" ] || fail "$1: core dropped=$dropped, plugin lost=$lost"
	[ "$((out + dropped))" = $N ] || fail "$1: out $out + dropped $dropped != $N"
	echo "ok: $1 tmpfs: the file holds $n flows in $2 whole blocks, $lost lost = dropped"
}
full 1800k 2 $((PER_BLOCK + N % PER_BLOCK))
full 2m 1 $PER_BLOCK
pass "disk full: finished files hold whole blocks only, every lost flow counted"
