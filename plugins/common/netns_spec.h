/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The `netns:` option of the netlink inputs (nflog; nfct, nftrace and
 * nfacct to follow): which network namespaces an instance reads, without
 * I/O.  A value is one of
 *   - a name: a namespace `ip netns add` made, /run/netns/NAME;
 *   - an absolute path: /proc/PID/ns/net, /var/run/docker/netns/ID, ...;
 *   - a glob (`*`, `?` or `[` in its last component only), absolute or a
 *     name pattern under /run/netns: every matching file is a member, and
 *     the directory is watched (netns_open.h).
 * Records carry the member's label (sl_netns_label()).
 */
#ifndef SLUICE_NETNS_SPEC_H
#define SLUICE_NETNS_SPEC_H

#include <stddef.h>

/* Where `ip netns add` puts its namespaces (iproute2's NETNS_RUN_DIR). */
#define SL_NETNS_RUN_DIR "/run/netns"

enum sl_netns_kind {
	SL_NETNS_NAME,	/* /run/netns/NAME */
	SL_NETNS_PATH,	/* an absolute path */
	SL_NETNS_GLOB,	/* a pattern in its last component */
};

/*
 * Check a `netns:` value: its kind, or -1 with *why set to a message
 * (static text).  Refused: empty, longer than PATH_MAX, control bytes, a
 * relative path with a '/', a name of "." or "..", a pattern outside the
 * last component, a last component of "." or "..".
 */
int sl_netns_spec_check(const char *spec, const char **why);

/*
 * The absolute path (or pattern) of a checked value into buf: 0, or -1
 * (ENAMETOOLONG) when it does not fit.
 */
int sl_netns_spec_path(const char *spec, char *buf, size_t size);

/*
 * The label records carry for a member's path: its last component, or the
 * PID of /proc/PID/ns/net (every such path ends in "net").  *label points
 * into path; the label's length is returned (it may not end at a NUL).
 */
size_t sl_netns_label(const char *path, const char **label);

#endif
