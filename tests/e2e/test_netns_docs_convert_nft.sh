#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# docs/MIGRATING.md, "From printk log rules", run as written: its ruleset
# (the convert-nft-ruleset block) loaded with nft into a namespace lists
# as the page shows; `sluice convert nft --check`, `--yaml` (the nft batch
# it prints and the configuration it writes) and `--apply` print what the
# page shows, and the ruleset afterwards is the page's.  Paths under /etc
# are moved into the test's folder.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd nft python3
BLOCK="python3 $(dirname "$0")/doc_blocks.py"
MIG="$SRCDIR/docs/MIGRATING.md"
NS=$(unique_name dnft)
make_netns "$NS"
cd "$WORK"
for b in ruleset check batch yaml apply after; do
	$BLOCK "$MIG" "convert-nft-$b" >"doc-$b" || fail "MIGRATING.md: no convert-nft-$b block"
done
in_ns() { ip netns exec "$NS" "$@"; }
# in_ns_logs CMD...: in_ns with a scratch /var/log/sluice (a tmpfs over
# /var/log in a mount namespace of its own), since the page's --apply runs
# `sluice -t`, which checks that the file output's directory exists.
in_ns_logs() {
	unshare -m --propagation private sh -c \
		'mount -t tmpfs sluice-test /var/log && mkdir /var/log/sluice && exec "$@"' \
		sh ip netns exec "$NS" "$@"
}

in_ns nft -f doc-ruleset || fail "nft refuses MIGRATING.md's ruleset"
in_ns nft list ruleset >listed
diff -u doc-ruleset listed >&2 || fail "MIGRATING.md's ruleset is not what nft list ruleset prints (diff above)"

# doc_run BLOCK: the block's first line is '# sluice convert nft ...'; run it
# with /etc/sluice/ moved here and compare standard output with the rest.
doc_run() {
	local cmd
	cmd=$(head -1 "doc-$1")
	[[ "$cmd" == "# sluice convert nft"* ]] || fail "MIGRATING.md's convert-nft-$1 block starts '$cmd'"
	read -r -a args <<<"${cmd#\# sluice }"
	args=("${args[@]//\/etc\/sluice\//$WORK/}")
	in_ns_logs "$SLUICE" "${args[@]}" >"out-$1" 2>"err-$1" || fail "'${cmd#\# }' failed: $(cat "err-$1")"
}
doc_run check
tail -n +2 doc-check | diff -u - out-check >&2 || fail "MIGRATING.md's --check output differs (diff above)"
doc_run batch
tail -n +2 doc-batch | diff -u - out-batch >&2 || fail "MIGRATING.md's nft batch differs from what --yaml prints (diff above)"
diff -u doc-yaml sluice.yaml >&2 || fail "MIGRATING.md's configuration differs from what --yaml writes (diff above)"
in_ns nft list ruleset | diff -q - listed >/dev/null || fail "--yaml without --apply changed the ruleset"

# The apply block: its own commands, '(the nft batch, as above)' for stdout.
grep -q '^# sluice convert nft --apply' doc-apply || fail "MIGRATING.md's apply block runs no --apply"
grep '^# sluice convert nft --apply' doc-apply | sed 's/^# //' >apply-cmd
sed -n '/^# sluice convert nft --apply/,/^# /p' doc-apply | sed '1d;$d' >apply-out
read -r -a args <<<"$(sed 's/^sluice //' apply-cmd)"
args=("${args[@]//\/etc\/sluice\//$WORK/}")
rm -f sluice.yaml
in_ns_logs "$SLUICE" "${args[@]}" >out-apply 2>err-apply || fail "--apply failed: $(cat err-apply)"
[ "$(head -1 apply-out)" = "(the nft batch, as above)" ] || fail "apply block: '$(head -1 apply-out)'"
diff -u out-batch out-apply >&2 || fail "--apply printed another batch than --yaml (diff above)"
tail -n +2 apply-out | sed "s|/etc/sluice/|$WORK/|g" | diff -u - err-apply >&2 ||
	fail "MIGRATING.md's --apply message differs (diff above)"
diff -u doc-yaml sluice.yaml >&2 || fail "--apply wrote another configuration (diff above)"
in_ns nft list ruleset >after
diff -u doc-after after >&2 || fail "MIGRATING.md's ruleset after --apply is not nft's (diff above)"
pass "MIGRATING.md's ruleset, --check, --yaml (batch and configuration), --apply and the ruleset after it"
