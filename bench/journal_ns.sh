#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The mount namespace of bench/outputs.sh's `journal` receiver: run as
#   unshare --mount [--net] --propagation private -- bench/journal_ns.sh READY CONF
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
# systemd's PID 1 raises net.unix.max_dgram_qlen to 512 on every host it
# boots (the kernel's default is 10 datagrams, which paces a journal
# client to ~10 entries per wakeup); a machine without systemd as PID 1
# (a container) keeps 10.  JNS_DGRAM_QLEN sets it in this namespace's
# network namespace (the caller unshares one: the value is per netns).
[ -z "${JNS_DGRAM_QLEN:-}" ] || sysctl -qw net.unix.max_dgram_qlen="$JNS_DGRAM_QLEN"
echo ready >"$1"
exec sleep 1000000
