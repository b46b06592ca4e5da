#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# SIGTERM under load (test_netns_fault_sigterm.sh): every record the input received is in both files,
# with the pcap and file outputs each on a thread of its own behind its
# queue (thread: true, when_full: block).  The signal reaches the outputs
# through their queues, after what was queued before it, so the same exact
# checks hold: nothing lost, nothing written twice, nothing reordered.
export FAULT_OUTPUT_KEYS=", thread: true, when_full: block"
exec bash "$(dirname "$0")/test_netns_fault_sigterm.sh"
