#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The configuration reader's limits, at and just past each one: a file of
# 16 MiB is read and one byte more is refused (also through a pipe, which
# has no size to look at); a value of 64 KiB is read (here a stack name,
# which also names the stack's instances) and one byte more is refused
# where it starts; a million nested '[' or '- ' are an error, not a stack
# overflow.  Each is exit 78 with the exact message.  And values longer
# than 4 KiB are compared whole when deciding what stacks share.  (The files are made
# here: tests/config/invalid/ holds the small cases, yaml-too-deep and
# yaml-nesting-64.)
. "$(dirname "$0")/lib.sh"
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
cd "$WORK"

# expect_error FILE MESSAGE [SLUICE ARGS]: exit 78 and exactly MESSAGE, then the summary.
expect_error() {
	local file="$1" want="$2" got rc=0
	got=$("$SLUICE" -t -c "$file" 2>&1 >/dev/null) || rc=$?
	[ "$rc" = 78 ] || fail "$file: exit $rc, expected 78: $(head -c 300 <<<"$got")"
	[ "$got" = "$want
sluice: 1 error in $file; nothing started" ] || fail "$file: errors differ:
$(head -c 600 <<<"$got")
expected:
$want"
}

# pad FILE SIZE: FILE is a small valid configuration padded with a comment to SIZE bytes.
pad() {
	local file="$1" size="$2" head
	head="stacks:
  a: [gen, { plugin: file, file: $WORK/x.log }]
#"
	{
		printf '%s' "$head"
		head -c $((size - ${#head} - 1)) /dev/zero | tr '\0' x
		printf '\n'
	} >"$file"
	[ "$(stat -c %s "$file")" = "$size" ] || fail "pad made $(stat -c %s "$file") bytes"
}

# File size.
limit=$((16 << 20))
pad at.yaml $limit
"$SLUICE" -t -c at.yaml >out 2>err || fail "a file of exactly 16 MiB was refused: $(cat err)"
grep -q "configuration OK (2 instances, 1 stacks)" out || fail "16 MiB file: $(cat out)"
pad over.yaml $((limit + 1))
expect_error over.yaml \
	"over.yaml: error: file too large: expected at most 16 MiB (16777216 bytes), got 16777217 bytes"
# A pipe is counted while it is read.
rc=0
got=$(cat over.yaml | "$SLUICE" -t -c /dev/stdin 2>&1 >/dev/null) || rc=$?
[ "$rc" = 78 ] || fail "16 MiB + 1 through a pipe: exit $rc: $got"
[ "$got" = "/dev/stdin: error: file too large: expected at most 16 MiB (16777216 bytes), got more
sluice: 1 error in /dev/stdin; nothing started" ] || fail "16 MiB + 1 through a pipe: $got"
cat at.yaml | "$SLUICE" -t -c /dev/stdin >/dev/null 2>err ||
	fail "16 MiB through a pipe was refused: $(cat err)"
rm -f at.yaml over.yaml

# Value length: a stack name of 65536 bytes is read, and names its
# instances in full (two upcase: NAME.upcase and NAME.upcase2).  YAML
# allows a key over 1024 characters only as an explicit '? key'.
name=$(head -c 65536 /dev/zero | tr '\0' n)
printf 'stacks:\n  ? %s\n  : [gen, upcase, upcase, { plugin: file, file: %s/x.log }]\n' "$name" "$WORK" >at.yaml
"$SLUICE" -t -c at.yaml >out 2>err || fail "a 64 KiB value was refused: $(head -c 300 err)"
[ "$(sed -n 4p out)" = "   └─ $name.upcase2 (upcase)  [$name]" ] ||
	fail "64 KiB stack name: $(head -c 300 out)"
printf 'stacks:\n  ? %s\n  : [gen, upcase, upcase, { plugin: file, file: %s/x.log }]\n' "${name}n" "$WORK" >over.yaml
expect_error over.yaml \
	"over.yaml:2:5: error: value too long: expected at most 64 KiB (65536 bytes), got 65537 bytes"
# An option value too, far inside the file limit.
{
	printf 'stacks:\n  a: [gen, { plugin: file, file: "'
	head -c 10000000 /dev/zero | tr '\0' p
	printf '" }]\n'
} >over.yaml
expect_error over.yaml \
	"over.yaml:2:34: error: value too long: expected at most 64 KiB (65536 bytes), got 10000000 bytes"

# Long values are compared whole: two BPF filters of 5.6 KiB that differ
# only in their last host are two instances (sharing cut options at 4 KiB,
# and stack b silently ran stack a's filter).
e=$(for ((i = 1; i <= 300; i++)); do printf 'host 10.0.%d.%d or ' $((i / 256)) $((i % 256)); done)
cat >share.yaml <<CONF
instances:
  fw: { plugin: nflog, group: 1 }
stacks:
  a: [fw, { plugin: bpf, expr: "$e host 10.9.9.1" }, { plugin: pcap, file: $WORK/a.pcap }]
  b: [fw, { plugin: bpf, expr: "$e host 10.9.9.2" }, { plugin: pcap, file: $WORK/b.pcap }]
CONF
"$SLUICE" -t -c share.yaml >out 2>err || fail "share.yaml: $(head -c 300 err)"
grep -q "configuration OK (5 instances, 2 stacks)" out || fail "long filters were shared: $(cut -c 1-80 out)"
grep -q '^└─ b.bpf (bpf expr=".* host 10.9.9.2")  \[b\]$' out || fail "b.bpf: $(cut -c 1-80 out)"

# Nesting: an error where the 65th level begins, however deep the file goes.
{
	printf 'stacks: '
	head -c 1000000 /dev/zero | tr '\0' '['
	printf '\n'
} >deep.yaml
expect_error deep.yaml \
	"deep.yaml:1:73: error: nesting too deep: expected at most 64 levels of lists and mappings"
{
	printf 'stacks:\n  a:\n    '
	for ((i = 0; i < 20000; i++)); do printf -- '- - - - - - - - - - - - - - - - - - - - - - - - - '; done
	printf 'x\n'
} >deep.yaml
expect_error deep.yaml \
	"deep.yaml:3:131: error: nesting too deep: expected at most 64 levels of lists and mappings"
pass
