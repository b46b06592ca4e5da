#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A full disk, a logrotate and space coming back, with live traffic.
# nftables in namespace B counts UDP packets from A and logs them to an
# NFLOG group; sluice writes them to a pcap (NFLOG link type) and, through
# decode and logline, to a text file, both on a 1 MiB tmpfs that a filler
# file shares.  Phases:
#   1. send until both outputs report ENOSPC (records torn by short writes);
#   2. mv both files aside (same tmpfs) + SIGHUP while still full, and send
#      more: the new files cannot even take their header, records pile up
#      in the buffers and then are dropped;
#   3. delete the filler, wait until both write again, send more, SIGTERM.
# Checked: every pcap is read without error by capinfos, tcpdump -r and
# tshark -r, every text file holds only whole lines of the expected shape;
# no packet is in a file twice, and for each output: packets in its files
# + the core's dropped == the nflog input's in == the nft counter, and the
# core's dropped == the plugin's dropped_records (> 0: phase 2 lost some).
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 tcpdump tshark capinfos

G=43
netns_pair sld 95

ip netns exec "$B" nft -f - <<NFT || skip "nftables log group not available"
table inet sluice_disk {
	counter sent { }
	chain in {
		type filter hook input priority 0; policy accept;
		ip saddr 10.95.0.1 udp dport 9999 counter name sent log group $G prefix "disk "
	}
}
NFT
nft_count() { ip netns exec "$B" nft list counter inet sluice_disk sent | sed -nE 's/.*packets ([0-9]+).*/\1/p'; }

FS="$WORK/fs"
mkdir "$FS"
mount -t tmpfs -o size=1m sluicedisk "$FS" || skip "cannot mount a tmpfs"
at_exit "umount $FS"
head -c 400k /dev/zero >"$FS/filler"

cat >"$WORK/disk.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $G, qtimeout: 20ms}
stacks:
  cap: [fw, {plugin: pcap, file: "$FS/cap.pcap", linktype: nflog, snaplen: 512, buffer: 64KiB,
             flush_interval: 100ms}]
  txt: [fw, decode, logline, {plugin: file, file: "$FS/text.log", buffer: 16KiB, flush_interval: 100ms}]
YAML
ip netns exec "$B" "$SLUICE" -c "$WORK/disk.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "bound NFLOG group $G" "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "nflog did not start"; }

# send FIRST COUNT: UDP packets numbered FIRST.. with ~200-byte payloads
send() {
	ip netns exec "$A" python3 - "$1" "$2" <<'PY'
import socket, sys, time
first, n = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.95.0.1", 40001))
for i in range(first, first + n):
    s.sendto(b"disk-%07d-" % i + b"p" * (150 + i % 97), ("10.95.0.2", 9999))
    if i % 50 == 49:
        time.sleep(0.01)	# ~5000 pps: the NFLOG socket never overruns
PY
}
# counter INSTANCE NAME: its last value logged (SIGUSR1 or exit)
counter() { grep "counters: $1 " "$WORK/sluice.log" | tail -1 | sed -nE "s/.* $2=([0-9]+).*/\1/p"; }
nflog_has() {
	kill -USR1 "$SLUICE_PID"
	sleep 0.2
	[ "$(counter fw in)" = "$1" ]
}
errs_for() { grep -q "cannot write\( header\)\? to $FS/$1: No space left on device" "$WORK/sluice.log"; }
writing_again() { grep -q "writing to $FS/$1 again" "$WORK/sluice.log"; }

# ---- 1. fill the tmpfs ----
sent=0
while ! { errs_for cap.pcap && errs_for text.log; }; do
	[ $sent -lt 20000 ] || { cat "$WORK/sluice.log"; fail "the tmpfs did not fill after $sent packets"; }
	send $sent 250
	sent=$((sent + 250))
	sleep 0.3
done
p1=$sent
echo "phase 1: $p1 packets until both outputs got ENOSPC"

# ---- 2. logrotate while full, more traffic ----
mv "$FS/cap.pcap" "$FS/cap.pcap.1"
mv "$FS/text.log" "$FS/text.log.1"
kill -HUP "$SLUICE_PID"
sleep 0.3
send $sent 400
sent=$((sent + 400))
sleep 0.5
kill -0 "$SLUICE_PID" || fail "sluice died on a full file system"

# ---- 3. space comes back ----
rm "$FS/filler"
wait_for 10 writing_again cap.pcap || { cat "$WORK/sluice.log"; fail "pcap output did not recover"; }
wait_for 10 writing_again text.log || { cat "$WORK/sluice.log"; fail "file output did not recover"; }
send $sent 300
sent=$((sent + 300))
wait_for 10 nflog_has "$(nft_count)" || true
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
counted=$(nft_count)
[ "$counted" = $sent ] || fail "nft counted $counted packets, $sent sent"
[ "$(counter fw in)" = "$counted" ] || fail "nflog read $(counter fw in) of $counted (enobufs=$(counter fw enobufs))"
ls -l "$FS" >"$WORK/files.txt"

# ---- readers ----
# the rotated file first: the order the packets were written in
pcaps="$FS/cap.pcap.1 $FS/cap.pcap"
texts="$FS/text.log.1 $FS/text.log"
[ "$(ls "$FS" | tr '\n' ' ')" = "cap.pcap cap.pcap.1 text.log text.log.1 " ] || fail "files: $(cat "$WORK/files.txt")"
in_pcaps=0
for f in $pcaps; do
	capinfos -c "$f" >"$WORK/capinfos.txt" 2>&1 || { cat "$WORK/capinfos.txt"; fail "capinfos: $f is damaged"; }
	n=$(tcpdump --count -r "$f" 2>"$WORK/tcpdump.err" | sed -nE 's/^([0-9]+) packets?$/\1/p')
	grep -v "^reading from file" "$WORK/tcpdump.err" && fail "tcpdump -r $f: errors"
	tshark -r "$f" -T fields -e udp.payload >"$WORK/tshark.out" 2>"$WORK/tshark.err" ||
		{ cat "$WORK/tshark.err"; fail "tshark -r $f failed"; }
	grep -v "^Running as user" "$WORK/tshark.err" && fail "tshark -r $f: errors"
	[ "$(wc -l <"$WORK/tshark.out")" = "$n" ] || fail "tshark reads $(wc -l <"$WORK/tshark.out") packets of $f, tcpdump $n"
	grep -q "Number of packets: *$n\$" "$WORK/capinfos.txt" || fail "capinfos: $(cat "$WORK/capinfos.txt"), tcpdump: $n"
	cat "$WORK/tshark.out" >>"$WORK/payloads.txt"
	echo "  $f: $n packets"
	in_pcaps=$((in_pcaps + n))
done
# Each packet at most once, in the order sent, and its payload whole.
python3 - "$WORK/payloads.txt" <<'PY' || fail "a packet is in the pcaps twice, out of order or damaged"
import sys
nums = []
for line in open(sys.argv[1]):
    b = bytes.fromhex(line.strip())
    i = int(b[5:12])
    assert b == b"disk-%07d-" % i + b"p" * (150 + i % 97), b[:20]
    nums.append(i)
assert nums == sorted(set(nums)), "duplicates or disorder"
PY
in_texts=0
for f in $texts; do
	# whole lines only: the expected shape from the first byte, a newline at the end
	if [ -s "$f" ]; then
		[ "$(tail -c 1 "$f" | od -An -c | tr -d ' ')" = '\n' ] || fail "$f ends inside a line"
	fi
	bad=$(grep -cvE '^disk IN=vb OUT= MAC=02:00:00:95:00:02:02:00:00:95:00:01:08:00 SRC=10\.95\.0\.1 DST=10\.95\.0\.2 LEN=[0-9]+ .* PROTO=UDP SPT=40001 DPT=9999 LEN=[0-9]+ ?$' "$f" || true)
	[ "$bad" = 0 ] || { grep -vE '^disk IN=vb .* DPT=9999 LEN=[0-9]+ ?$' "$f" | head -3; fail "$f: $bad lines of another shape"; }
	n=$(wc -l <"$f")
	echo "  $f: $n lines"
	in_texts=$((in_texts + n))
done

# ---- counters ----
for o in "cap.pcap $in_pcaps" "txt.file $in_texts"; do
	set -- $o
	i=$(counter "$1" in)
	d=$(counter "$1" dropped)
	r=$(counter "$1" dropped_records)
	echo "  $1: in=$i dropped=$d dropped_records=$r errors=$(counter "$1" errors) in files=$2"
	[ "$i" = "$counted" ] || fail "$1: in=$i, nft counted $counted"
	[ "$d" = "$r" ] || fail "$1: core dropped=$d, dropped_records=$r"
	[ "$d" -gt 0 ] || fail "$1: nothing dropped: the test did not overflow the buffer while full"
	[ $(($2 + d)) = "$counted" ] || fail "$1: $2 in files + $d dropped != $counted counted by nft"
done
pass "nft counted $counted; pcaps $in_pcaps + dropped $(counter cap.pcap dropped), text $in_texts + dropped $(counter txt.file dropped); all files whole"
