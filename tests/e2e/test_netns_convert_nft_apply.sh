#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# sluice convert nft --apply and --check against a live ruleset in a
# namespace (issue 18 §3); no packets are sent:
#   1. the YAML --apply replaces keeps the old file's mode, owner and group
#      (0640 nobody:adm here); a new one is 0644 whatever the umask;
#   2. a rule with an anonymous interval set (`tcp dport { 22, 80-90 }`),
#      which nft 1.0.6 aborts on in `replace rule`: --check dry-runs the
#      batch (nft -c) and --apply converts it (insert at its place, then
#      delete), rule order kept;
#   3. --apply --file OLD.json, a listing taken before the ruleset was
#      reloaded with the same rules in another order (the ssh rule's handle
#      is now `tcp dport 3306 drop`'s): it fails naming the rule, and the
#      ruleset and the YAML stay as they were; with a listing that is still
#      current it applies;
#   4. a prefix holding a newline, `insert rule ... 4444 accept` and ESC
#      bytes, and a comment with ESC: the printed text batch, run with
#      nft -f, adds no rule; no raw ESC on stdout or stderr;
#   5. a ruleset whose `log group 40` would collide with --group 40: the
#      conversion takes 41 and says which rule holds 40.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 stat
N=$(unique_name scnap)
make_netns "$N"
nftn() { ip netns exec "$N" nft "$@"; }
# The file output goes to the test's folder: --apply's `sluice -t` checks
# that its directory exists.
conv() { ip netns exec "$N" "$SLUICE" convert nft --log-file "$WORK/fw.log" "$@"; }
load() { nftn flush ruleset && nftn -f - || fail "cannot load a ruleset"; }

# --- 1. mode, owner and group of the replaced YAML ---
load <<'NFT'
table inet f {
	chain input {
		type filter hook input priority filter; policy accept;
		tcp dport 22 log prefix "ssh " accept
	}
}
NFT
: >"$WORK/keep.yaml"
chown nobody:adm "$WORK/keep.yaml"
chmod 0640 "$WORK/keep.yaml"
conv --apply --yaml "$WORK/keep.yaml" >/dev/null 2>"$WORK/keep.err" ||
	{ cat "$WORK/keep.err"; fail "--apply on the owned file failed"; }
got=$(stat -c '%a %U %G' "$WORK/keep.yaml")
[ "$got" = "640 nobody adm" ] || fail "the replaced YAML is $got, want 640 nobody adm"
grep -q 'plugin: nflog' "$WORK/keep.yaml" || fail "the YAML was not written"
load <<'NFT'
table inet f {
	chain input {
		type filter hook input priority filter; policy accept;
		tcp dport 22 log prefix "ssh " accept
	}
}
NFT
(umask 077 && conv --apply --yaml "$WORK/new.yaml" >/dev/null 2>"$WORK/new.err") ||
	{ cat "$WORK/new.err"; fail "--apply to a new file failed"; }
got=$(stat -c '%a %U %G' "$WORK/new.yaml")
[ "$got" = "644 root root" ] || fail "a new YAML is $got, want 644 root root"

# --- 2. an anonymous interval set ---
load <<'NFT'
table inet f {
	chain input {
		type filter hook input priority filter; policy accept;
		ct state established accept
		tcp dport { 22, 80-90 } log prefix "anon " accept
		tcp dport 3306 drop
	}
}
NFT
rc=0
conv --check >"$WORK/anon-check.out" 2>"$WORK/anon-check.err" || rc=$?
[ $rc = 0 ] || { cat "$WORK/anon-check.err"; fail "--check on the anonymous set: exit $rc"; }
grep -q '^nft -c (a dry run) accepts the batch$' "$WORK/anon-check.out" ||
	{ cat "$WORK/anon-check.out"; fail "--check did not dry-run the batch"; }
# the text batch reads back too
conv --yaml "$WORK/anon-preview.yaml" >"$WORK/anon-preview.out" || fail "convert failed"
nftn -c -f "$WORK/anon-preview.out" || fail "nft -c -f refused the text batch"
conv --apply --yaml "$WORK/anon.yaml" >"$WORK/anon.out" 2>"$WORK/anon.err" ||
	{ cat "$WORK/anon.err"; fail "--apply of a rule with an anonymous interval set failed"; }
grep -q '^insert rule inet f input position [0-9]* tcp dport { 22, 80-90 } log prefix "anon " group 5 accept$' \
	"$WORK/anon.out" || { cat "$WORK/anon.out"; fail "the text batch lacks the insert"; }
nftn list chain inet f input | grep -v '^\s*$' | sed 's/^\s*//' >"$WORK/anon.list"
diff -u - "$WORK/anon.list" <<'EOF' || fail "the chain is not the old one with log group 5, in order"
table inet f {
chain input {
type filter hook input priority filter; policy accept;
ct state established accept
tcp dport { 22, 80-90 } log prefix "anon " group 5 accept
tcp dport 3306 drop
}
}
EOF

# --- 3. a listing taken before a reload ---
cat >"$WORK/first.nft" <<'NFT'
table inet f {
	chain input {
		type filter hook input priority filter; policy accept;
		tcp dport 22 log prefix "ssh " accept
		tcp dport 3306 drop
	}
}
NFT
load <"$WORK/first.nft"
nftn -j list ruleset >"$WORK/old.json"
load <<'NFT'
table inet f {
	chain input {
		type filter hook input priority filter; policy accept;
		tcp dport 3306 drop
		tcp dport 22 log prefix "ssh " accept
	}
}
NFT
nftn -a list ruleset >"$WORK/reloaded.txt"
grep -q 'tcp dport 3306 drop # handle 2$' "$WORK/reloaded.txt" ||
	{ cat "$WORK/reloaded.txt"; fail "the reload did not reuse the ssh rule's handle"; }
echo "# the old configuration" >"$WORK/race.yaml"
rc=0
conv --apply --file "$WORK/old.json" --yaml "$WORK/race.yaml" >"$WORK/race.out" 2>"$WORK/race.err" ||
	rc=$?
[ $rc = 1 ] || { cat "$WORK/race.err"; fail "--apply on a stale listing: exit $rc, want 1"; }
grep -q 'the live ruleset is not the one read: rule inet f input handle 2 is gone or different; nothing changed' \
	"$WORK/race.err" || { cat "$WORK/race.err"; fail "no message naming the changed rule"; }
nftn -a list ruleset >"$WORK/race-after.txt"
cmp -s "$WORK/race-after.txt" "$WORK/reloaded.txt" ||
	fail "the ruleset changed although the listing was stale"
[ "$(cat "$WORK/race.yaml")" = "# the old configuration" ] || fail "the YAML was replaced"
ls "$WORK" | grep -q '^race\.yaml\.' && fail "a temporary YAML was left behind"
# a listing that is still current applies
load <"$WORK/first.nft"
nftn -j list ruleset >"$WORK/current.json"
conv --apply --file "$WORK/current.json" --yaml "$WORK/race.yaml" >/dev/null 2>"$WORK/cur.err" ||
	{ cat "$WORK/cur.err"; fail "--apply --file with a current listing failed"; }
nftn list ruleset >"$WORK/cur.txt"
grep -q 'tcp dport 22 log prefix "ssh " group 5 accept' "$WORK/cur.txt" ||
	fail "--apply --file did not convert the ssh rule"
grep -q 'tcp dport 3306 drop' "$WORK/cur.txt" || fail "the 3306 rule is gone"

# --- 4. escaping what came from the ruleset ---
nftn flush ruleset
nftn -j -f - <<'JSON' || fail "cannot load the escape rules"
{"nftables": [{"add": {"table": {"family": "inet", "name": "f"}}},
{"add": {"chain": {"family": "inet", "table": "f", "name": "input", "type": "filter", "hook": "input", "prio": 0, "policy": "accept"}}},
{"add": {"rule": {"family": "inet", "table": "f", "chain": "input", "expr": [{"log": {"prefix": "a\ninsert rule inet f input tcp dport 4444 accept\n# \u001b[31m"}}]}}},
{"add": {"rule": {"family": "inet", "table": "f", "chain": "input", "expr": [{"match": {"op": "==", "left": {"payload": {"protocol": "tcp", "field": "dport"}}, "right": 22}}, {"log": {"prefix": "ok "}}, {"accept": null}], "comment": "c\u001b[2J"}}}
]}
JSON
nftn -a list ruleset >"$WORK/before-esc.txt"
conv --yaml "$WORK/esc.yaml" >"$WORK/esc.out" 2>"$WORK/esc.err" ||
	{ cat "$WORK/esc.err"; fail "convert failed"; }
conv >"$WORK/esc-all.out" 2>"$WORK/esc-all.err" || fail "convert to stdout failed"
conv --check >"$WORK/esc-check.out" 2>"$WORK/esc-check.err" || true
if grep -q $'\e' "$WORK"/esc*; then
	fail "a raw ESC byte was printed"
fi
grep -q '^insert rule' "$WORK/esc.out" && { cat "$WORK/esc.out"; fail "a prefix's line became a command"; }
grep -q 'a\\x0ainsert rule inet f input tcp dport 4444 accept\\x0a# \\x1b\[31m' "$WORK/esc.out" ||
	{ cat "$WORK/esc.out"; fail "the prefix is not shown escaped"; }
nftn -f "$WORK/esc.out" || fail "nft -f refused the printed batch"
nftn -a list ruleset >"$WORK/after-esc.txt"
cmp -s "$WORK/after-esc.txt" "$WORK/before-esc.txt" ||
	{ cat "$WORK/after-esc.txt"; fail "running the printed batch changed the ruleset"; }

# --- 5. a group the ruleset already uses ---
load <<'NFT'
table inet f {
	chain input {
		type filter hook input priority filter; policy accept;
		tcp dport 22 log prefix "ssh " accept
		tcp dport 23 log prefix "telnet " group 40 drop
	}
}
NFT
conv --check --group 40 >"$WORK/grp-check.out" 2>"$WORK/grp-check.err" ||
	{ cat "$WORK/grp-check.err"; fail "--check with a taken group failed"; }
grep -q 'NFLOG group 40 is taken by `log group 40` in inet f input handle 3: not used' \
	"$WORK/grp-check.err" || { cat "$WORK/grp-check.err"; fail "--check did not name the rule of group 40"; }
conv --apply --group 40 --yaml "$WORK/grp.yaml" >"$WORK/grp.out" 2>"$WORK/grp.err" ||
	{ cat "$WORK/grp.err"; fail "--apply with a taken group failed"; }
nftn list ruleset >"$WORK/grp.txt"
grep -q 'tcp dport 22 log prefix "ssh " group 41 accept' "$WORK/grp.txt" ||
	{ cat "$WORK/grp.txt"; fail "the ssh rule did not get group 41"; }
grep -q 'group: 41' "$WORK/grp.yaml" && ! grep -q 'group: 40' "$WORK/grp.yaml" ||
	fail "the YAML does not listen on group 41 alone"
pass "mode and owner kept, anonymous set converted, stale listing refused, escapes, taken group skipped"
