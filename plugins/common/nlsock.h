/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Netlink socket helpers shared by the netlink inputs (nflog, nfct). */
#ifndef SLUICE_NLSOCK_H
#define SLUICE_NLSOCK_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/netlink.h>

#include <sluice/plugin.h>

/*
 * mnl_nlmsg_ok() for walking a received datagram.  libmnl 1.0.4 compares
 * (int)nlmsg_len <= len, so a length of 2^31 or more passes as negative
 * and the walk jumps far outside the buffer (found by fuzz_ct:
 * fuzz/corpus/ct/crash-negative-len).
 */
static inline bool sl_nlmsg_ok(const struct nlmsghdr *nlh, int len)
{
	return len >= (int)sizeof(*nlh) && nlh->nlmsg_len >= sizeof(*nlh) &&
	       nlh->nlmsg_len <= (unsigned)len;
}

/*
 * Size the socket's receive buffer: SO_RCVBUFFORCE (ignores
 * net.core.rmem_max, needs CAP_NET_ADMIN), else SO_RCVBUF; warns through
 * the host when the kernel granted less than asked.
 */
void sl_nl_set_rcvbuf(const struct sl_host *host, struct sl_instance *inst, int fd,
		      uint64_t want_bytes);

#endif
