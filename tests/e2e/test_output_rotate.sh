#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Rotation and reopen of the file and pcap outputs: by size (no file over
# the limit, no record lost, split or repeated), by interval (new files on
# the second boundaries, named by when they started), strftime names with
# clash suffixes before the extension, and SIGHUP after logrotate moved a
# pcap away (both files stay valid pcaps, every packet in one of them).
. "$(dirname "$0")/lib.sh"
need_cmd tcpdump python3
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
DATA="$SRCDIR/tests/data"
tcount() { tcpdump --count -r "$1" 2>/dev/null | sed -n 's/^\([0-9]*\) packets\?$/\1/p'; }
# records N FILES...: the lines are exactly "record 0" .. "record N-1", each once
records() {
	local n=$1; shift
	[ "$(cat "$@" | sort -k2n)" = "$(seq 0 $((n - 1)) | sed 's/^/record /')" ]
}

# ---- size: text ----
mkdir "$WORK/size"
cat >"$WORK/size.yaml" <<YAML
stacks:
  s:
    - {plugin: gen, count: 20000}
    - {plugin: file, file: "$WORK/size/out.log", rotate_size: 32KiB, buffer: 8KiB}
YAML
"$SLUICE" -c "$WORK/size.yaml" >"$WORK/log" 2>&1 || { cat "$WORK/log"; fail "size run failed"; }
n=$(ls "$WORK/size" | wc -l)
[ "$n" -ge 6 ] || fail "rotate_size: only $n files"
# the counters: files closed by rotation = files - 1, bytes written = bytes on disk
rot=$(sed -n 's/.*(file):.* files_rotated=\([0-9]*\).*/\1/p' "$WORK/log")
bw=$(sed -n 's/.*(file):.* bytes_written=\([0-9]*\).*/\1/p' "$WORK/log")
[ "$rot" = $((n - 1)) ] || fail "files_rotated=$rot for $n files"
[ "$bw" = "$(cat "$WORK"/size/* | wc -c)" ] || fail "bytes_written=$bw, files hold $(cat "$WORK"/size/* | wc -c)"
for f in "$WORK"/size/*; do
	s=$(stat -c %s "$f")
	[ "$s" -le 32768 ] || fail "$(basename "$f") has $s bytes, more than rotate_size"
	# records are never split between files
	tail -c 1 "$f" | od -c | grep -q '\\n' || fail "$(basename "$f") ends inside a record"
	awk 'NR == 1 {n = $2} $2 != n {exit 1} {n++}' "$f" || fail "$(basename "$f") is not in order"
done
ls "$WORK/size" | grep -v '^out\.log$' | grep -qvE '^out\.log\.[0-9]{8}T[0-9]{6}(\.[0-9]+)?$' &&
	fail "unexpected rotated names: $(ls "$WORK/size")"
records 20000 "$WORK"/size/* || fail "records lost or repeated across size rotation"
echo "ok: size rotation, $n files"

# ---- size: pcap with a strftime name ----
mkdir "$WORK/pcap"
cat >"$WORK/pcap.yaml" <<YAML
stacks:
  s:
    - {plugin: replay, file: "$DATA/eth-mixed.pcap", loop: 50}
    - {plugin: pcap, file: "$WORK/pcap/cap-%Y%m%d-%H%M%S.pcap", linktype: ethernet, rotate_size: 32KiB}
YAML
"$SLUICE" -c "$WORK/pcap.yaml" >"$WORK/log" 2>&1 || { cat "$WORK/log"; fail "pcap size run failed"; }
total=0
for f in "$WORK"/pcap/*; do
	[[ "$(basename "$f")" =~ ^cap-[0-9]{8}-[0-9]{6}(\.[0-9]+)?\.pcap$ ]] || fail "unexpected pcap name $(basename "$f")"
	s=$(stat -c %s "$f")
	[ "$s" -le 32768 ] || fail "$(basename "$f") has $s bytes"
	c=$(tcount "$f")
	[ -n "$c" ] && [ "$c" -gt 0 ] || fail "$(basename "$f") is not a readable pcap"
	total=$((total + c))
done
[ "$total" = 2000 ] || fail "rotated pcaps hold $total packets, expected 2000"
echo "ok: pcap size rotation, $(ls "$WORK/pcap" | wc -l) files"

# ---- interval ----
mkdir "$WORK/iv"
cat >"$WORK/iv.yaml" <<YAML
stacks:
  s:
    - {plugin: gen, count: -1, interval: 20ms, per_tick: 5}
    - {plugin: file, file: "$WORK/iv/out.log", rotate_interval: 1s, flush_interval: 100ms}
  p:
    - {plugin: replay, file: "$DATA/raw-mixed.pcap", loop: 0, pace: original}
    - {plugin: pcap, file: "$WORK/iv/cap.pcap", rotate_interval: 1s}
YAML
started=$(date +%s)
run_sluice_bg "$WORK/iv.log" -c "$WORK/iv.yaml"
wait_for 10 test -e "$WORK/iv/out.log" || fail "no out.log"
opened=$(date +%s)
# Until three text and two pcap files were rotated (a daemon that rotates
# on no boundary fails here), however slow the machine.
rotated() { [ "$(ls "$WORK/iv" | grep -c "^$1\.")" -ge "$2" ]; }
wait_for 20 rotated out.log 3 || fail "rotate_interval 1s: only $(ls "$WORK/iv" | grep -c '^out\.log\.') rotated files ($(ls "$WORK/iv"))"
wait_for 20 rotated cap.pcap 2 || fail "pcap rotate_interval 1s: only $(ls "$WORK/iv" | grep -c '^cap\.pcap\.') rotated files"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/iv.log"; fail "interval run failed"; }
rot=$(ls "$WORK/iv" | grep -c '^out\.log\.')
# The first file is named by the start (between starting the daemon and
# seeing the file, whatever the load), the later ones by their boundaries.
first=$(ls "$WORK/iv" | grep '^out\.log\.' | sort | head -1 | sed 's/^out\.log\.//')
first_s=$(date -d "$(echo "$first" | sed -E 's/(....)(..)(..)T(..)(..)(..)/\1-\2-\3 \4:\5:\6/')" +%s)
[ "$first_s" -ge "$started" ] && [ "$first_s" -le "$opened" ] ||
	fail "first file named $first, the daemon started at $(date -d @"$started" +%Y%m%dT%H%M%S) and its file was there at $(date -d @"$opened" +%Y%m%dT%H%M%S)"
[ "$(ls "$WORK/iv" | grep '^out\.log\.' | sed 's/^out\.log\.//' | sort -u | wc -l)" = "$rot" ] ||
	fail "interval rotation reused a name: $(ls "$WORK/iv")"
n=$(cat "$WORK"/iv/out.log* | wc -l)
records "$n" "$WORK"/iv/out.log* || fail "records lost or repeated across interval rotation"
prot=$(ls "$WORK/iv" | grep -c '^cap\.pcap\.')
[ "$prot" -ge 2 ] || fail "pcap rotate_interval: $prot rotated files"
for f in "$WORK"/iv/cap.pcap*; do
	[ -n "$(tcount "$f")" ] || fail "$(basename "$f") unreadable"
done
echo "ok: interval rotation, $rot text and $prot pcap files"

# ---- SIGHUP: logrotate moved the pcap away ----
mkdir "$WORK/hup"
cat >"$WORK/hup.yaml" <<YAML
stacks:
  p:
    - {plugin: replay, file: "$DATA/nflog-mixed.pcap", loop: 0, pace: original}
    - {plugin: pcap, file: "$WORK/hup/cap.pcap", linktype: nflog, flush_interval: 100ms}
YAML
run_sluice_bg "$WORK/hup.log" -c "$WORK/hup.yaml"
has_packets() { [ "$(tcount "$1")" -gt 0 ] 2>/dev/null; }
wait_for 10 has_packets "$WORK/hup/cap.pcap" || fail "no packets written to the pcap"
mv "$WORK/hup/cap.pcap" "$WORK/hup/cap.pcap.1"
kill -HUP "$SLUICE_PID"
wait_for 10 has_packets "$WORK/hup/cap.pcap" || fail "SIGHUP did not reopen the pcap"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/hup.log"; fail "sluice failed"; }
a=$(tcount "$WORK/hup/cap.pcap.1")
b=$(tcount "$WORK/hup/cap.pcap")
[ -n "$a" ] && [ -n "$b" ] && [ "$a" -gt 0 ] && [ "$b" -gt 0 ] || fail "after SIGHUP: $a and $b packets readable"
out=$(grep "counters: p.pcap (pcap)" "$WORK/hup.log" | tail -1 | sed -E 's/.* out=([0-9]+) .*/\1/')
[ "$out" = $((a + b)) ] || fail "pcap took $out packets, files hold $a + $b"
echo "ok: SIGHUP: $a + $b packets"

pass "rotation by size and interval, strftime names, SIGHUP reopen"
