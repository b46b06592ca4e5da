#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every ```yaml block of README.md and docs/*.md is a configuration
# `sluice -t` accepts, unless the line before it (blank lines aside) is
# `<!-- fragment -->`: a deliberate excerpt (one mapping, an error case).
# The test says how many it checked and skipped; one block that fails is
# a failure naming its file and line.  -t checks that output directories
# exist: the blocks' /var/log/sluice and /var/spool/sluice are moved into
# folders made here (the columns of an error on such a line shift).
. "$(dirname "$0")/lib.sh"
need_cmd python3
chmod 755 "$WORK"
mkdir -p "$WORK/var/log/sluice" "$WORK/var/spool/sluice"
chmod 777 "$WORK/var/log/sluice" "$WORK/var/spool/sluice"

python3 - "$SRCDIR" "$WORK" <<'PY' >"$WORK/blocks.txt" || fail "cannot extract the blocks"
import glob, os, sys
src, work = sys.argv[1], sys.argv[2]
files = [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs", "*.md")))
n = 0
for path in files:
    lines = open(path).read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```yaml":
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            fragment = k >= 0 and lines[k].strip() == "<!-- fragment -->"
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            n += 1
            out = os.path.join(work, f"block{n}.yaml")
            with open(out, "w") as f:
                text = "\n".join(lines[i + 1:j]) + "\n"
                for d in ("/var/log/sluice", "/var/spool/sluice"):
                    text = text.replace(d, work + d)
                f.write(text)
            rel = os.path.relpath(path, src)
            print(f"{'skip' if fragment else 'check'} {out} {rel}:{i + 2}")
            i = j
        i += 1
PY

checked=0 skipped=0 failed=0
while read -r what file where; do
	if [ "$what" = skip ]; then
		skipped=$((skipped + 1))
		continue
	fi
	checked=$((checked + 1))
	if ! "$SLUICE" -t -c "$file" >"$WORK/out" 2>&1; then
		failed=$((failed + 1))
		echo "FAIL: the yaml block at $where is rejected by sluice -t:" >&2
		# file:LINE of the block -> the document's own line.
		awk -v f="$file" -v doc="${where%:*}" -v at="${where##*:}" '
			index($0, f ":") == 1 { split(substr($0, length(f) + 2), a, ":")
				sub("^" f ":" a[1], doc ":" (a[1] + at - 1)) } { print }' \
			"$WORK/out" >&2
	fi
done <"$WORK/blocks.txt"
[ "$checked" -gt 0 ] || fail "no yaml block found"
[ "$failed" = 0 ] || fail "$failed of $checked yaml blocks fail sluice -t ($skipped fragments skipped)"
pass "$checked yaml blocks pass sluice -t; $skipped marked <!-- fragment --> skipped"
