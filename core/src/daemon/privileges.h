/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Dropping root: once every socket and file is open, the daemon switches
 * to an unprivileged user, keeping only CAP_NET_ADMIN (conntrack table
 * dumps and netlink configuration need it at run time).
 */
#ifndef SLUICE_PRIVILEGES_H
#define SLUICE_PRIVILEGES_H

#include <sys/types.h>

struct drop_target {
	uid_t uid;
	gid_t gid;
	char name[64];
};

/* Look the user up (at configuration time).  0, or -1 with a message. */
int privileges_lookup(const char *user, struct drop_target *t, char *err, size_t errlen);
/* Become that user, keeping CAP_NET_ADMIN.  0, or -1 with a message. */
int privileges_drop(const struct drop_target *t, char *err, size_t errlen);

#endif
