#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The main job on a built-in default: install what is missing, build, then
# replay the bundled NFLOG capture (tests/data/nflog-mixed.pcap, what
# `tcpdump -i nflog:N -w` writes) through conf/demo.yaml into out/demo/.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/tests/setup.sh"
cd "$TOP"
rm -rf out/demo && mkdir -p out/demo
export SLUICE_PLUGIN_PATH="$BUILD/plugins"
echo "== sluice -t -c conf/demo.yaml"
"$BUILD/core/sluice" -t -c conf/demo.yaml
echo "== sluice -c conf/demo.yaml"
"$BUILD/core/sluice" -c conf/demo.yaml
echo
for f in out/demo/*; do
	echo "== $f ($(wc -c <"$f") bytes)"
	case "$f" in
	*.pcap) if command -v tcpdump >/dev/null; then tcpdump -nr "$f" 2>/dev/null | head -5; fi ;;
	*) head -5 "$f" ;;
	esac
done
cat <<MSG

Look at them with:
  less out/demo/packets.log                 # kernel LOG-format lines
  python3 -m json.tool --json-lines out/demo/packets.json
  tcpdump -nr out/demo/packets.pcap         # or tshark -r / Wireshark
MSG
