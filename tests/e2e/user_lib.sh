# SPDX-License-Identifier: GPL-2.0-or-later
# daemon.user tests: a throwaway system user, removed at exit.  Source after
# lib.sh; sets TUSER (its name) and TGROUP (its group).
need_cmd useradd userdel
TUSER=$(unique_name sluicet)
useradd -r -M -s /usr/sbin/nologin "$TUSER" 2>/dev/null || skip "cannot add a system user"
at_exit "userdel $TUSER"
TGROUP=$(id -gn "$TUSER")
chmod 755 "$WORK"
# as USER CMD...: run CMD as that user (its own group only).
as() { local u=$1; shift; setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups "$@"; }
# counter INSTANCE NAME LOG: that counter of the instance in the last counters line
counter() {
	grep "counters: $1 " "$3" | tail -1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}
