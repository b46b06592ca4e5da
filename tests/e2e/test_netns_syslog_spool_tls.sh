#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The syslog output's disk spool with transport tls, live, against rsyslogd
# with the GnuTLS driver (spool_rsyslog_lib.sh has the set-up):
#   outage  rsyslogd is not listening for 10 s under 3,000 packets/s, then
#           comes up: every packet the kernel logged arrives, in order,
#           none twice, nothing dropped, the spool empty at the end.
#   kill9   sluice is killed with SIGKILL while messages are spooled; the
#           spool as left (read by spool_read.py) is delivered by a restart
#           with the same config, in order, none twice.
#   full    spool_max_size 64 KiB and the receiver away: received +
#           spool_dropped + dropped_messages + possibly_lost == logged.
. "$(dirname "$0")/lib.sh"
TRANSPORT=tls
. "$(dirname "$0")/spool_rsyslog_lib.sh"
phase_outage
phase_kill9
phase_full
pass "tls: outage ($OUTAGE); kill -9 ($KILL9); full spool ($FULL)"
