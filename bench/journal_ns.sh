#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The mount namespace of bench/outputs.sh's `journal` receiver: run as
#   unshare --mount --propagation private -- bench/journal_ns.sh READY CONF
# it puts a tmpfs over /run (journald's socket and its volatile journal,
# /run/log/journal), over /var/log/journal when there is one, and over
# /etc/systemd holding CONF as its journald.conf (no drop-ins), so a
# journald started in the namespace is private to the benchmark and
# configured by it alone; writes READY and holds the namespace (sleeps)
# until killed.  As tests/e2e/journal_lib.sh does for the journal tests.
set -e
conf=$(cat "$2")
mount -t tmpfs -o mode=755 sluice-bench-jrun /run
mkdir -p /run/systemd/journal /run/log
[ ! -d /var/log/journal ] || mount -t tmpfs -o mode=755 sluice-bench-jvar /var/log/journal
[ -d /etc/systemd ] || { echo "journal_ns.sh: no /etc/systemd" >&2; exit 1; }
mount -t tmpfs -o mode=755 sluice-bench-jetc /etc/systemd
printf '%s\n' "$conf" >/etc/systemd/journald.conf
echo ready >"$1"
exec sleep 1000000
