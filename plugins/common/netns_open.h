/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Netlink sockets inside another network namespace, sluice staying in its
 * own.  A socket belongs to the namespace of the thread that created it,
 * for life, whichever thread reads it later; so a short-lived thread joins
 * the namespace (setns(CLONE_NEWNET), which changes only the calling
 * thread), creates and binds the socket, and ends; the daemon's threads
 * never change namespace.
 *
 * setns() needs CAP_SYS_ADMIN (in the namespace's user namespace and ours):
 * sockets made at start come before daemon.user drops privileges; after
 * the drop (a glob's later members) it fails with EPERM, which the caller
 * logs for that member (docs/SECURITY.md).
 */
#ifndef SLUICE_NETNS_OPEN_H
#define SLUICE_NETNS_OPEN_H

#include <libmnl/libmnl.h>

/*
 * Open the namespace file at path: an fd (O_CLOEXEC), or -1 with errno;
 * ENOTNAM when the file is not a namespace (nsfs) — yet: `ip netns add`
 * creates /run/netns/NAME empty and bind-mounts the namespace on it after.
 * No O_NOFOLLOW: /proc/PID/ns/net is a magic link that only resolves by
 * being followed (O_NOFOLLOW gives ELOOP), and the file is only read;
 * what counts is what was opened, which fstatfs() checks is nsfs, and
 * setns() that it is a network namespace.  O_NONBLOCK: a FIFO planted
 * under the name does not block the daemon.
 */
int sl_netns_open(const char *path);

/*
 * A netlink socket of `bus`, opened with SOCK_CLOEXEC and bound
 * (MNL_SOCKET_AUTOPID) inside the network namespace of nsfd (from
 * sl_netns_open()), by a thread of its own; nsfd -1: in ours, no thread.
 * NULL with errno on failure (EPERM: no CAP_SYS_ADMIN; EINVAL: not a
 * network namespace).
 */
struct mnl_socket *sl_netns_mnl_socket(int nsfd, int bus);

#endif
