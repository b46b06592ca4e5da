/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <limits.h>
#include <sys/socket.h>

#include "nlsock.h"

void sl_nl_set_rcvbuf(const struct sl_host *host, struct sl_instance *inst, int fd,
		      uint64_t want_bytes)
{
	int want = want_bytes > INT_MAX ? INT_MAX : (int)want_bytes, got = 0;
	socklen_t len = sizeof(got);

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof(want)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof(want));
	/* the kernel reports twice what it accounts for data */
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &len) == 0 && got / 2 < want)
		host->log(inst, SL_LOG_WARNING,
			  "netlink_buffer: got %d bytes of %d (no CAP_NET_ADMIN? raise "
			  "net.core.rmem_max)", got / 2, want);
}
