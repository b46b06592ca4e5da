#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `sluice convert ulogd`: Debian's ulogd.conf with every stack uncommented
# and the real-world style files of tests/data/ulogd/ convert into YAML
# that `sluice -t` accepts; PyYAML reads it back and convert_ulogd_check.py
# compares instances (plugin, group, events, files, facilities) and stacks
# with what each ulogd.conf says; the expected warnings name their line;
# --check exits 1 exactly when something was not converted; malformed
# files are errors at FILE:LINE:COL with exit 2 and nothing on stdout.
. "$(dirname "$0")/lib.sh"
need_cmd python3
python3 -c 'import yaml' 2>/dev/null || skip "needs python3-yaml"
D="$SRCDIR/tests/data/ulogd"
CHECK="$(dirname "$0")/convert_ulogd_check.py"

# What this build's plugins offer decides what the converter may write.
FEATS=none
"$SLUICE" --describe file | grep -q '^  line_header ' && FEATS+=,line_header
"$SLUICE" --describe sql >/dev/null 2>&1 && FEATS+=,sql
"$SLUICE" --describe nfacct >/dev/null 2>&1 && FEATS+=,nfacct
echo "features: $FEATS"
has() { [[ ",$FEATS," == *",$1,"* ]]; }

# The bundled copy is Debian's file (two comment lines added on top).
if [ -r /etc/ulogd.conf ] && dpkg -s ulogd2 >/dev/null 2>&1; then
	tail -n +3 "$D/debian-ulogd.conf" | cmp -s - /etc/ulogd.conf ||
		fail "tests/data/ulogd/debian-ulogd.conf differs from this machine's /etc/ulogd.conf"
	echo "debian-ulogd.conf is /etc/ulogd.conf of ulogd2 $(dpkg-query -W -f '${Version}' ulogd2)"
fi
sed 's/^#stack=/stack=/' "$D/debian-ulogd.conf" >"$WORK/debian.conf"
[ "$(grep -c '^stack=' "$WORK/debian.conf")" = 24 ] || fail "expected 24 stacks in Debian's file"

# convert CASE FILE CHECK_STATUS WARNING_PATTERN...
convert() {
	local c="$1" f="$2" want="$3" st=0 p
	shift 3
	"$SLUICE" convert ulogd "$f" >"$WORK/$c.yaml" 2>"$WORK/$c.err" ||
		{ cat "$WORK/$c.err"; fail "$c: convert failed"; }
	"$SLUICE" -t -c "$WORK/$c.yaml" >"$WORK/$c.t" 2>&1 ||
		{ cat "$WORK/$c.yaml" "$WORK/$c.t"; fail "$c: sluice -t refused the converted file"; }
	python3 "$CHECK" "$c" "$WORK/$c.yaml" "$FEATS" || { cat "$WORK/$c.yaml"; fail "$c: structure"; }
	for p in "$@"; do
		grep -q -- "$p" "$WORK/$c.err" || { cat "$WORK/$c.err"; fail "$c: no warning '$p'"; }
	done
	grep -v -e ': warning: ' -e '^    ' "$WORK/$c.err" | grep . && fail "$c: stderr has more than warnings"
	"$SLUICE" convert ulogd --check "$f" >"$WORK/$c.out" 2>/dev/null || st=$?
	[ "$st" = "$want" ] || fail "$c: --check exited $st, expected $want"
	[ -s "$WORK/$c.out" ] && fail "$c: --check wrote YAML"
	echo "$c: $(head -1 "$WORK/$c.t"), $(grep -c ': warning: ' "$WORK/$c.err") warnings, --check $st"
}

F="$WORK/debian.conf"
convert debian "$F" 1 \
	"$F:64: warning: \[ulog1\] (ULOG): not converted" \
	"$F:79: warning: \[xml1\] (XML): not converted" \
	"$F:88: warning: \[graphite1\] (GRAPHITE): not converted" \
	"$F:94: warning: \[mysql1\] (MYSQL): not converted" \
	"$F:106: warning: \[nuauth1\] (UNIXSOCK): not converted" \
	"$F:124: warning: \[nacct1\] (NACCT): not converted" \
	"$F:175: warning: \[log3\] (NFLOG): not converted: numeric_label=1" \
	"$F:70: warning: \[gp1\] (GPRINT): GPRINT's key=value"
has sql || grep -q "$F:97: warning: \[pgsql1\] (PGSQL): not converted" "$WORK/debian.err" ||
	fail "debian: no warning for PGSQL without an sql output"
has nfacct || grep -q "$F:85: warning: \[acct1\] (NFACCT): not converted" "$WORK/debian.err" ||
	fail "debian: no warning for NFACCT without an nfacct input"
grep -q '^# sections no stack uses: ct2, op1, pgsql4, dbi1, sys2$' "$WORK/debian.yaml" ||
	fail "debian: the unused sections are not listed"

convert groups-syslog "$D/groups-syslog.conf" 0
F="$D/flows-json-unix.conf"
convert flows-json-unix "$F" 0 "$F:23: warning: \[siem\] (JSON): ulogd wrote bare JSON lines"
F="$D/unknown-plugin.conf"
convert unknown-plugin "$F" 1 \
	"$F:5: warning: plugin=/usr/local/lib/ulogd/ulogd_output_REDIS.so is not one of" \
	"$F:7: warning: not converted: stack uses REDIS"
F="$D/mark-filter.conf"
if has line_header; then
	convert mark-filter "$F" 0
else
	convert mark-filter "$F" 1 "$F:5: warning: \[emu5\] (LOGEMU): not converted: LOGEMU's \"MMM dd"
fi
F="$D/nfct-ipfix.conf"
convert nfct-ipfix "$F" 1 "$F:12: warning: \[ct2\] (NFCT): not converted: pollinterval=10"

# Two ulogd inputs on one NFLOG group (or with overlapping conntrack events)
# are one sluice instance, which sluice requires; each keeps its own
# accept filters.
printf '%s\n' '[global]' stack=a:NFLOG,p:PCAP stack=b:NFLOG,q:PCAP stack=c:NFCT,i:IPFIX \
	stack=d:NFCT,j:IPFIX '[a]' group=3 '[b]' group=3 '[p]' file=/x '[q]' file=/y '[c]' '[d]' \
	accept_src_filter=10.0.0.0/8 '[i]' host=192.0.2.1 '[j]' host=192.0.2.2 >"$WORK/alias.conf"
"$SLUICE" convert ulogd "$WORK/alias.conf" >"$WORK/alias.yaml" 2>"$WORK/alias.err" || fail "alias: convert failed"
"$SLUICE" -t -c "$WORK/alias.yaml" >/dev/null || fail "alias: sluice -t refused it"
for p in '^  a_q: \[a, q\]$' '^  c_j: \[c, { plugin: where, expr: "orig_src in {10.0.0.0/8}" }, j\]$'; do
	grep -q "$p" "$WORK/alias.yaml" || { cat "$WORK/alias.yaml"; fail "alias: no line $p"; }
done
grep -q "alias.conf:3: warning: \[b\] (NFLOG): reads what \[a\] reads (group 3): its stacks use a" \
	"$WORK/alias.err" || { cat "$WORK/alias.err"; fail "alias: no warning for [b]"; }
grep -q '^  b:' "$WORK/alias.yaml" && fail "alias: [b] became an instance of its own"
echo "alias: [b] reads through a, [d] through c with its own filter"

# ulogd's filter lists pass over empty items (strtok): "tcp,,udp," is tcp
# and udp, not a YAML list with holes or a where set that does not parse
# (found by fuzz_ulogd); a list of nothing but commas is an error.
printf '%s\n' '[global]' stack=c:NFCT,i:IPFIX '[c]' accept_proto_filter=tcp,,udp, \
	'accept_src_filter=,10.0.0.0/8,,192.0.2.0/24' '[i]' host=192.0.2.1 >"$WORK/empty.conf"
"$SLUICE" convert ulogd "$WORK/empty.conf" >"$WORK/empty.yaml" 2>"$WORK/empty.err" ||
	fail "empty items: convert failed: $(cat "$WORK/empty.err")"
"$SLUICE" -t -c "$WORK/empty.yaml" >/dev/null || fail "empty items: sluice -t refused it"
for p in '^    protocols: \[tcp,udp\]$' 'expr: "orig_src in {10.0.0.0/8,192.0.2.0/24}"'; do
	grep -q "$p" "$WORK/empty.yaml" || { cat "$WORK/empty.yaml"; fail "empty items: no line $p"; }
done
printf '%s\n' '[global]' stack=c:NFCT,i:IPFIX '[c]' accept_proto_filter=,, '[i]' host=192.0.2.1 \
	>"$WORK/none.conf"
"$SLUICE" convert ulogd "$WORK/none.conf" >/dev/null 2>"$WORK/none.err" &&
	fail "a protocol list of commas was converted"
grep -q "none.conf:4:21: error: \[c\] accept_proto_filter: no protocol names" "$WORK/none.err" ||
	fail "no error for a protocol list of commas: $(cat "$WORK/none.err")"
echo "empty items: tcp,,udp, is [tcp,udp]; ,, is an error"

# Nothing convertible (MySQL only): exit 1, no YAML (`stacks: {}` is one
# sluice -t refuses), and stderr says so; --check exits 1 too.
printf '%s\n' '[global]' stack=l:NFLOG,b:BASE,my:MYSQL '[l]' group=1 '[my]' db=ulog \
	table=ulog user=u pass=p host=db >"$WORK/mysql.conf"
st=0; "$SLUICE" convert ulogd "$WORK/mysql.conf" >"$WORK/mysql.yaml" 2>"$WORK/mysql.err" || st=$?
[ "$st" = 1 ] || { cat "$WORK/mysql.yaml" "$WORK/mysql.err"; fail "MySQL only: exit $st, expected 1"; }
[ -s "$WORK/mysql.yaml" ] && { cat "$WORK/mysql.yaml"; fail "MySQL only: YAML written"; }
grep -q "^sluice convert: nothing in $WORK/mysql.conf was convertible" "$WORK/mysql.err" ||
	{ cat "$WORK/mysql.err"; fail "MySQL only: no 'nothing was convertible'"; }
grep -q "mysql.conf:2: warning: \[my\] (MYSQL): not converted: sluice's sql output speaks" \
	"$WORK/mysql.err" || { cat "$WORK/mysql.err"; fail "MySQL only: no reason"; }
st=0; "$SLUICE" convert ulogd --check "$WORK/mysql.conf" >/dev/null 2>&1 || st=$?
[ "$st" = 1 ] || fail "MySQL only: --check exited $st, expected 1"
echo "MySQL only: exit 1, no YAML: $(tail -1 "$WORK/mysql.err")"

# A key ulogd takes but no sluice option does is a warning at its line
# (and a comment in the YAML), never dropped silently.
printf '%s\n' '[global]' stack=l:NFLOG,j:JSON stack=l:NFLOG,s:SQLITE3 '[l]' group=1 '[j]' \
	file=/var/log/u.json host=192.0.2.1 '[s]' db=/var/log/u.db table=ulog_pkt buffer=200 \
	>"$WORK/ignored.conf"
"$SLUICE" convert ulogd "$WORK/ignored.conf" >"$WORK/ignored.yaml" 2>"$WORK/ignored.err" ||
	{ cat "$WORK/ignored.err"; fail "ignored keys: convert failed"; }
"$SLUICE" -t -c "$WORK/ignored.yaml" >/dev/null || fail "ignored keys: sluice -t refused it"
grep -q "ignored.conf:8: warning: \[j\] (JSON): host=192.0.2.1 is not carried over" "$WORK/ignored.err" ||
	{ cat "$WORK/ignored.err"; fail "ignored keys: no warning for JSON's host"; }
grep -q '^    # note: host=192.0.2.1 is not carried over' "$WORK/ignored.yaml" ||
	{ cat "$WORK/ignored.yaml"; fail "ignored keys: no comment for JSON's host"; }
if has sql; then
	grep -q "ignored.conf:12: warning: \[s\] (SQLITE3): buffer=200 is not carried over: sluice writes a batch" \
		"$WORK/ignored.err" || { cat "$WORK/ignored.err"; fail "ignored keys: no warning for buffer=200"; }
fi
echo "ignored keys: $(grep -c 'not carried over' "$WORK/ignored.err") warnings"

# Malformed files: an error at the place, exit 2, no YAML.
# bad CASE STDIN-NAME-OR-FILE EXPECTED-PREFIX [TEXT for stdin]
bad() {
	local f="$1" want="$2" st=0
	if [ $# -gt 2 ]; then
		printf '%s' "$3" | "$SLUICE" convert ulogd - >"$WORK/bad.out" 2>"$WORK/bad.err" || st=$?
	else
		"$SLUICE" convert ulogd "$f" >"$WORK/bad.out" 2>"$WORK/bad.err" || st=$?
	fi
	[ "$st" = 2 ] || { cat "$WORK/bad.err"; fail "$f: exit $st, expected 2"; }
	[ -s "$WORK/bad.out" ] && fail "$f: YAML written for a malformed file"
	grep -qF -- "$want" "$WORK/bad.err" || { cat "$WORK/bad.err"; fail "$f: expected '$want'"; }
	echo "malformed: $(head -1 "$WORK/bad.err")"
}
bad "$D/bad-bracket.conf" "$D/bad-bracket.conf:5:6: error: expected ']' to end the section name"
bad "$D/bad-section.conf" "$D/bad-section.conf:3:29: error: no [emu1] section for emu1:LOGEMU"
bad "$D/bad-key.conf" "$D/bad-key.conf:6:1: error: unknown key 'grup' in [log1]: NFLOG takes"
bad - "<stdin>:2:18: error: expected ID:PLUGIN, found 'base1'" $'[global]\nstack=log1:NFLOG,base1,e:LOGEMU\n'
bad - "<stdin>:4:7: error: [l] group: expected an integer from 0 to 65535, found '70000'" \
	$'[global]\nstack=l:NFLOG,p:PCAP\n[l]\ngroup=70000\n[p]\nfile=x\n'
bad - "<stdin>:4:6: error: string not terminated by" $'[global]\nstack=l:NFLOG,p:PCAP\n[p]\nfile="x\n'
bad - "<stdin>:3:7: error: input 'a' is NFCT here but NFLOG on line 2" \
	$'[global]\nstack=a:NFLOG,p:PCAP\nstack=a:NFCT,q:PCAP\n[a]\ngroup=1\n[p]\nfile=x\n[q]\nfile=y\n'

# The command line: kinds listed, unknown kind and missing file are usage errors.
st=0; "$SLUICE" convert >/dev/null 2>"$WORK/list.err" || st=$?
[ "$st" = 64 ] && grep -q '^  ulogd ' "$WORK/list.err" || fail "sluice convert: exit $st, no list of kinds"
st=0; "$SLUICE" convert nosuch x 2>/dev/null || st=$?
[ "$st" = 64 ] || fail "unknown kind: exit $st"
st=0; "$SLUICE" convert ulogd 2>/dev/null || st=$?
[ "$st" = 64 ] || fail "no file: exit $st"
pass "Debian's 24 stacks and 5 real-world files converted and read back, nothing convertible is exit 1, ignored keys warned, 7 malformed inputs refused"
