#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Output files never follow symbolic links (issue 8.1, docs/SECURITY.md).
# A victim file is the target of symbolic links planted where the file,
# pcap and flowfile outputs write: at the output name (refused at start:
# non-zero exit and a message), at every name rotation could use next
# (skipped: the files go to the next free name), at the name a SIGHUP
# reopens (a counted error, then writing resumes once the link is gone),
# at the final name of a flowfile slot and where its subdirectory goes,
# named like a flowfile orphan, and at the temporary name flowfile used to
# take (nfcapd.current.PID.INSTANCE, opened O_TRUNC: the old code wrote the
# flow file into the victim).  The victim's content and mtime never change.  A directory writable by everyone without the sticky bit is
# refused at start and at reopen/rotation (counted); with the sticky bit
# it works; a FIFO planted at the name fails the start instead of hanging
# it; in a sticky directory a file planted by another user is refused.
. "$(dirname "$0")/lib.sh"
need_cmd tcpdump nfdump python3 sha256sum
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
for p in replay decode flow flowfile pcap; do
	[ -e "${SLUICE_PLUGIN_PATH%%:*}/$p.so" ] || skip "$p not built"
done
DATA="$SRCDIR/tests/data"
export TZ=UTC

V="$WORK/victim"
printf 'precious data\n' >"$V"
touch -d @1000000000 "$V"
VSUM=$(sha256sum <"$V")
victim_ok() {
	[ "$(sha256sum <"$V")" = "$VSUM" ] && [ "$(stat -c %Y "$V")" = 1000000000 ] ||
		fail "$1: the victim file was written ($(stat -c '%s bytes, mtime %Y' "$V"))"
}
tcount() { tcpdump --count -r "$1" 2>/dev/null | sed -n 's/^\([0-9]*\) packets\?$/\1/p'; }
counter() { grep "counters: $2 " "$1" | tail -1 | sed -nE "s/.* $3=([0-9]+).*/\1/p"; }
# live_counter_ge LOG INSTANCE KEY N: SIGUSR1 to the daemon shows KEY >= N
live_counter_ge() {
	kill -USR1 "$SLUICE_PID"
	sleep 0.05
	[ "$(counter "$1" "$2" "$3")" -ge "$4" ] 2>/dev/null
}

# yaml NAME OUTPUT [INPUT]: one stack; the input is 100 gen records by default.
yaml() {
	cat >"$WORK/$1.yaml" <<YAML
stacks:
  s:
    - ${3:-{plugin: gen, count: 100\}}
$2
YAML
}
FLOWIN='{plugin: replay, file: "'$DATA'/raw-mixed.pcap"}
    - decode
    - flow'
# must_refuse NAME PATTERN: the run fails at start with a message matching PATTERN.
must_refuse() {
	local rc=0
	timeout $((20 * TIME_FACTOR)) "$SLUICE" -c "$WORK/$1.yaml" >"$WORK/$1.log" 2>&1 || rc=$?
	[ $rc != 0 ] && [ $rc != 124 ] || { cat "$WORK/$1.log"; fail "$1: exit $rc, a refusal expected"; }
	grep -q "$2" "$WORK/$1.log" || { cat "$WORK/$1.log"; fail "$1: no message '$2'"; }
	grep -q "could not start" "$WORK/$1.log" || fail "$1: the daemon did not stop at start"
}
must_run() {
	timeout $((20 * TIME_FACTOR)) "$SLUICE" -c "$WORK/$1.yaml" >"$WORK/$1.log" 2>&1 || { cat "$WORK/$1.log"; fail "$1 failed"; }
}

# ---- 1. a link at the output name: refused at start ----
D="$WORK/d1"
mkdir "$D"
ln -s "$V" "$D/out.log"
ln -s "$V" "$D/cap.pcap"
yaml f1 "    - {plugin: file, file: \"$D/out.log\"}"
must_refuse f1 "refusing to write $D/out.log: it is a symbolic link"
yaml p1 "    - {plugin: pcap, file: \"$D/cap.pcap\"}" "{plugin: replay, file: \"$DATA/raw-mixed.pcap\"}"
must_refuse p1 "refusing to write $D/cap.pcap: it is a symbolic link"
mkfifo "$D/fifo.log"
yaml q1 "    - {plugin: file, file: \"$D/fifo.log\"}"
must_refuse q1 "cannot open $D/fifo.log: No such device or address"
victim_ok "link at the output name"
echo "ok: links (and a FIFO) at the output name are refused at start"

# ---- 2. links at every name the next rotations could take ----
D="$WORK/d2"
mkdir "$D"
now=$(date +%s)
for s in 0 1 2 3 4; do
	t=$(date -d @$((now + s)) +%Y%m%dT%H%M%S)
	c=$(date -d @$((now + s)) +%Y%m%d-%H%M%S)
	ln -s "$V" "$D/out.log.$t"
	for i in $(seq 1 20); do
		ln -s "$V" "$D/out.log.$t.$i"
		ln -s "$V" "$D/cap-$c.$i.pcap"
	done
done
links=$(find "$D" -type l | wc -l)
yaml f2 "    - {plugin: file, file: \"$D/out.log\", rotate_size: 32KiB, buffer: 8KiB}" "{plugin: gen, count: 20000}"
must_run f2
yaml p2 "    - {plugin: pcap, file: \"$D/cap-%Y%m%d-%H%M%S.pcap\", linktype: ethernet, rotate_size: 32KiB}" \
	"{plugin: replay, file: \"$DATA/eth-mixed.pcap\", loop: 50}"
must_run p2
victim_ok "links at rotation names"
[ "$(find "$D" -type l | wc -l)" = "$links" ] || fail "rotation replaced planted links"
mapfile -t logs < <(find "$D" -type f -name 'out.log*')
[ "$(cat "${logs[@]}" | sort -k2n)" = "$(seq 0 19999 | sed 's/^/record /')" ] ||
	fail "records lost or repeated around the planted links"
total=0
for f in $(find "$D" -type f -name 'cap-*'); do total=$((total + $(tcount "$f"))); done
[ "$total" = 2000 ] || fail "pcaps beside the planted links hold $total packets, want 2000"
echo "ok: $links links at rotation names skipped: ${#logs[@]} text files with every record, pcaps with all $total packets"

# ---- 3. flowfile: final name, subdirectory, orphan-like names ----
D="$WORK/d3"
mkdir "$D" "$WORK/vdir"
slot=$(($(date +%s) / 86400 * 86400))
final="$D/nfcapd.$(date -d @$slot +%Y%m%d%H%M)"
ln -s "$V" "$final"
ln -s "$V" "$D/nfcapd.current.$slot.86400.0123456789abcdef"
ln -s "$V" "$D/nfcapd.current.4242"
yaml ff3 "    - {plugin: flowfile, dir: \"$D\", rotate_interval: 1d}" "$FLOWIN"
# the temporary name sluice used to take, nfcapd.current.PID.INSTANCE (the
# subshell's PID is the daemon's after exec): it was opened O_TRUNC
( ln -s "$V" "$D/nfcapd.current.$BASHPID.s.flowfile"
  exec "$SLUICE" -c "$WORK/ff3.yaml" >"$WORK/ff3.log" 2>&1 ) || { cat "$WORK/ff3.log"; fail "ff3 failed"; }
[ -L "$(echo "$D"/nfcapd.current.*.s.flowfile)" ] || fail "the link at the old temporary name is gone"
[ -L "$final" ] || fail "the link at the final name was replaced"
[ -f "$final.1" ] || fail "no $final.1 beside the link at the final name: $(ls "$D")"
n=$(nfdump -q -o csv -r "$final.1" | grep -c ,) || true
[ "$n" -gt 0 ] || fail "$final.1 holds no flows"
grep -q "exists and cannot be appended to (a symbolic link" "$WORK/ff3.log" || fail "link at the final name not reported"
# subdirs: a link where the year directory goes; the file stays in dir
D="$WORK/d4"
mkdir "$D"
ln -s "$WORK/vdir" "$D/$(date -d @$slot +%Y)"
yaml ff4 "    - {plugin: flowfile, dir: \"$D\", rotate_interval: 1d, subdirs: 1}" "$FLOWIN"
must_run ff4
[ -z "$(ls -A "$WORK/vdir")" ] || fail "flowfile wrote through a linked subdirectory: $(ls -R "$WORK/vdir")"
[ -f "$D/nfcapd.$(date -d @$slot +%Y%m%d%H%M)" ] || fail "the file did not go to dir: $(ls -R "$D")"
victim_ok "flowfile links"
echo "ok: flowfile: link at the final name kept (file is $final.1, $n flows), linked subdirectory not used, orphan-like links ignored"

# ---- 4. world-writable directories ----
for kind in 0777:refuse 1777:run 0775:run; do
	mode=${kind%:*}
	D="$WORK/m$mode"
	mkdir "$D"
	chmod "$mode" "$D"
	yaml fm$mode "    - {plugin: file, file: \"$D/out.log\"}"
	yaml pm$mode "    - {plugin: pcap, file: \"$D/cap.pcap\"}" "{plugin: replay, file: \"$DATA/raw-mixed.pcap\"}"
	yaml ffm$mode "    - {plugin: flowfile, dir: \"$D\"}" "$FLOWIN"
	for t in fm pm ffm; do
		if [ "${kind#*:}" = refuse ]; then
			must_refuse $t$mode "directory $D is writable by everyone (mode $mode) without the sticky bit"
		else
			must_run $t$mode
		fi
	done
	if [ "${kind#*:}" = refuse ]; then
		[ -z "$(ls -A "$D")" ] || fail "files created in a refused directory: $(ls "$D")"
	else
		[ "$(wc -l <"$D/out.log")" = 100 ] && [ "$(tcount "$D/cap.pcap")" = 40 ] &&
			[ -n "$(find "$D" -name 'nfcapd.2*')" ] || fail "mode $mode: outputs incomplete: $(ls "$D")"
	fi
done
echo "ok: mode 0777 refused at start (file, pcap, flowfile); 1777 and 0775 work"

# a file planted by another user in a sticky directory is not appended to
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	D="$WORK/m1777"
	printf 'planted\n' >"$D/planted.log"
	chown nobody "$D/planted.log"
	yaml own "    - {plugin: file, file: \"$D/planted.log\"}"
	must_refuse own "refusing to write $D/planted.log: directory $D is writable by everyone (mode 1777) and the file belongs to uid $(id -u nobody)"
	[ "$(cat "$D/planted.log")" = planted ] || fail "the planted file was written"
	echo "ok: a file of another user in a sticky directory is refused"
fi

# ---- 5. at reopen and rotation: counted errors, then writing resumes ----
D="$WORK/d5"
D7="$WORK/d7"
mkdir "$D" "$WORK/d6" "$D7"
cat >"$WORK/live.yaml" <<YAML
stacks:
  s:
    - {plugin: gen, count: -1, interval: 20ms, per_tick: 1}
    - {plugin: file, file: "$D/out.log", flush_interval: 100ms}
  s7:
    - {plugin: gen, count: -1, interval: 20ms, per_tick: 1, text: other}
    - {plugin: file, file: "$D7/out.log", flush_interval: 100ms}
  f:
    - {plugin: replay, file: "$DATA/raw-mixed.pcap", pace: original, loop: 0}
    - decode
    - {plugin: flow, idle_timeout: 100ms}
    - {plugin: flowfile, dir: "$WORK/d6", rotate_interval: 1s}
YAML
run_sluice_bg "$WORK/live.log" -c "$WORK/live.yaml"
wait_for 10 test -s "$D/out.log" || { cat "$WORK/live.log"; fail "live: nothing written"; }
mv "$D/out.log" "$D/out.log.1"
ln -s "$V" "$D/out.log"
kill -HUP "$SLUICE_PID"
wait_for 5 grep -q "refusing to write $D/out.log: it is a symbolic link" "$WORK/live.log" ||
	{ cat "$WORK/live.log"; fail "reopen onto a link: not reported"; }
# A second refused reopen (the retry) before the link goes.
wait_for 10 live_counter_ge "$WORK/live.log" s.file errors 2 || fail "file: no retry refused"
rm "$D/out.log"
wait_for 5 grep -q "writing to $D/out.log again" "$WORK/live.log" || { cat "$WORK/live.log"; fail "no recovery after the link went"; }
# the same with the directory made world-writable (another output: its own rate limit)
mv "$D7/out.log" "$D7/out.log.1"
chmod 0777 "$D7"
kill -HUP "$SLUICE_PID"
wait_for 5 grep -q "refusing to write $D7/out.log: directory $D7 is writable by everyone" "$WORK/live.log" ||
	{ cat "$WORK/live.log"; fail "reopen into a world-writable directory: not reported"; }
wait_for 10 live_counter_ge "$WORK/live.log" s7.file errors 2 || fail "file: no retry refused in $D7"
chmod 0755 "$D7"
wait_for 5 grep -q "writing to $D7/out.log again" "$WORK/live.log" || { cat "$WORK/live.log"; fail "no recovery after chmod"; }
# flowfile: its directory turns world-writable: the next slots are refused
chmod 0777 "$WORK/d6"
wait_for 5 grep -q "directory $WORK/d6 is writable by everyone" "$WORK/live.log" ||
	{ cat "$WORK/live.log"; fail "flowfile rotation into a world-writable directory: not reported"; }
wait_for 10 live_counter_ge "$WORK/live.log" f.flowfile errors 1 || fail "flowfile: refused slot not counted"
chmod 0755 "$WORK/d6"
touch "$WORK/fixed"
# Writing resumes everywhere: records in both files, a flowfile slot after the fix.
wait_for 10 grep -q record "$D/out.log" || fail "file: nothing written after the link went"
wait_for 10 grep -q other "$D7/out.log" || fail "file: nothing written after the directory was fixed"
new_slot() { [ -n "$(find "$WORK/d6" -name 'nfcapd.2*' -newer "$WORK/fixed" | head -1)" ]; }
wait_for 10 new_slot || fail "flowfile: no file after the directory was fixed"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || fail "live: exit status $?"
victim_ok "reopen"
e=$(counter "$WORK/live.log" s.file errors)
e7=$(counter "$WORK/live.log" s7.file errors)
[ "${e:-0}" -ge 2 ] && [ "${e7:-0}" -ge 2 ] || fail "file: refused reopens counted as ${e:-0} / ${e7:-0} errors"
l=$(grep -c "refusing to write $D/out.log" "$WORK/live.log")
[ "$l" -le 3 ] || fail "file: $l refusal lines: not rate-limited"
fe=$(counter "$WORK/live.log" f.flowfile errors)
lost=$(counter "$WORK/live.log" f.flowfile lost)
dropped=$(counter "$WORK/live.log" f.flowfile dropped)
[ "${fe:-0}" -ge 1 ] || fail "flowfile: refused slots not counted as errors"
[ "${lost:-0}" = "${dropped:-0}" ] || fail "flowfile: lost=$lost but dropped=$dropped"
n=$(find "$WORK/d6" -name 'nfcapd.2*' -newer "$WORK/live.yaml" | wc -l)
[ -z "$(find "$WORK/d6" -name 'nfcapd.current.*')" ] || fail "flowfile left a temporary file"
[ "$(grep -c "record" "$D/out.log")" -gt 0 ] || fail "file: nothing written after the link went"
[ "$(grep -c "other" "$D7/out.log")" -gt 0 ] || fail "file: nothing written after the directory was fixed"
echo "ok: reopen onto a link / into a world-writable directory: $e / $e7 errors counted, $l log lines, writing resumed; flowfile: $fe errors, $lost flows lost = dropped, $n files"

pass "no output follows a symbolic link; unsafe directories refused"
