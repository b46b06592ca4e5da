#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The reload test (test_netns_reload.sh) with daemon.threads: 2: input g
# (no thread: key) runs on a spread thread, so its replacement by the group
# change is placed on a spread thread of the running daemon, and the spread
# threads stay while stacks come and go (the thread counts are checked).
export RELOAD_DAEMON_KEYS="  threads: 2"
exec bash "$(dirname "$0")/test_netns_reload.sh"
