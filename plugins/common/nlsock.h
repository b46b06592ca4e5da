/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Netlink socket helpers shared by the netlink inputs (nflog, nfct). */
#ifndef SLUICE_NLSOCK_H
#define SLUICE_NLSOCK_H

#include <stdint.h>

#include <sluice/plugin.h>

/*
 * Size the socket's receive buffer: SO_RCVBUFFORCE (ignores
 * net.core.rmem_max, needs CAP_NET_ADMIN), else SO_RCVBUF; warns through
 * the host when the kernel granted less than asked.
 */
void sl_nl_set_rcvbuf(const struct sl_host *host, struct sl_instance *inst, int fd,
		      uint64_t want_bytes);

#endif
