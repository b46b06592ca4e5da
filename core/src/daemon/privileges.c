/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "privileges.h"

int privileges_lookup(const char *user, struct drop_target *t, char *err, size_t errlen)
{
	struct passwd *pw;

	errno = 0;
	pw = getpwnam(user);
	if (!pw) {
		snprintf(err, errlen, "daemon.user: no user '%s'%s%s", user, errno ? ": " : "",
			 errno ? strerror(errno) : "");
		return -1;
	}
	t->uid = pw->pw_uid;
	t->gid = pw->pw_gid;
	snprintf(t->name, sizeof(t->name), "%s", user);
	return 0;
}

/* Permitted and effective: CAP_NET_ADMIN only (capset(2), no libcap needed). */
static int keep_net_admin(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	data[CAP_TO_INDEX(CAP_NET_ADMIN)].permitted = CAP_TO_MASK(CAP_NET_ADMIN);
	data[CAP_TO_INDEX(CAP_NET_ADMIN)].effective = CAP_TO_MASK(CAP_NET_ADMIN);
	return (int)syscall(SYS_capset, &hdr, data);
}

int privileges_drop(const struct drop_target *t, char *err, size_t errlen)
{
	/* Keep the permitted set across setuid, then trim it to one capability. */
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 || setgroups(1, &t->gid) < 0 ||
	    setresgid(t->gid, t->gid, t->gid) < 0 || setresuid(t->uid, t->uid, t->uid) < 0) {
		snprintf(err, errlen, "cannot switch to user '%s': %s", t->name, strerror(errno));
		return -1;
	}
	if (keep_net_admin() < 0) {
		snprintf(err, errlen, "cannot keep CAP_NET_ADMIN as '%s': %s", t->name,
			 strerror(errno));
		return -1;
	}
	prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
	/* Never regain root: check that setuid(0) now fails. */
	if (setuid(0) == 0) {
		snprintf(err, errlen, "privileges were not dropped: setuid(0) still works");
		return -1;
	}
	return 0;
}
