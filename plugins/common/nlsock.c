/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>

#include <linux/sock_diag.h>

#include "netns_open.h"
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

/* Rate limit of the "losing events" warning. */
#define ENOBUFS_WARN_NS (10 * 1000000000LL)

void sl_nl_reader_init(struct sl_nl_reader *rd, const struct sl_host *host,
		       struct sl_instance *inst)
{
	memset(rd, 0, sizeof(*rd));
	rd->host = host;
	rd->inst = inst;
	rd->fd = -1;
	rd->enobufs_hint = "";
	rd->c_enobufs = rd->c_malformed = rd->c_lost = -1;
}

void sl_nl_enobufs(struct sl_nl_reader *rd)
{
	int64_t now;

	rd->enobufs_total++;
	rd->drops_pending = true;
	rd->host->counter_add(rd->inst, rd->c_enobufs, 1);
	now = sl_clock_ns(CLOCK_MONOTONIC);
	if (rd->enobufs_warned_ns && now - rd->enobufs_warned_ns < ENOBUFS_WARN_NS)
		return;
	rd->enobufs_warned_ns = now;
	rd->host->log(rd->inst, SL_LOG_WARNING,
		      "losing events: socket receive buffer overrun (ENOBUFS), %llu time%s so far; "
		      "raise netlink_buffer%s",
		      (unsigned long long)rd->enobufs_total, rd->enobufs_total == 1 ? "" : "s",
		      rd->enobufs_hint);
}

int sl_nl_drops_read(struct sl_nl_reader *rd)
{
	uint32_t mem[SK_MEMINFO_VARS], delta;
	socklen_t len = sizeof(mem);
	int r;

	rd->drops_pending = false;
	memset(mem, 0, sizeof(mem));
	r = getsockopt(rd->fd, SOL_SOCKET, SO_MEMINFO, mem, &len);
	if (r < 0 || len <= SK_MEMINFO_DROPS * sizeof(mem[0])) {
		if (!rd->drops_warned)
			rd->host->log(rd->inst, SL_LOG_WARNING,
				      "the kernel does not tell how many events an overrun lost "
				      "(SO_MEMINFO: %s)", r < 0 ? strerror(errno) : "answer too short");
		rd->drops_warned = true;
		return -1;
	}
	/* the kernel's count is 32 bits and may wrap */
	delta = mem[SK_MEMINFO_DROPS] - rd->drops_raw;
	rd->drops_raw = mem[SK_MEMINFO_DROPS];
	rd->drops += delta;
	rd->drops_fresh = true;
	if (delta && rd->c_lost >= 0)
		rd->host->counter_add(rd->inst, rd->c_lost, delta);
	return 0;
}

int sl_nl_open(struct sl_nl_reader *rd, uint64_t rcvbuf)
{
	return sl_nl_open_in(rd, rcvbuf, -1);
}

int sl_nl_open_in(struct sl_nl_reader *rd, uint64_t rcvbuf, int nsfd)
{
	rd->buf = malloc(rd->bufsize);
	if (!rd->buf) {
		rd->host->log(rd->inst, SL_LOG_ERR, "cannot allocate %zu bytes", rd->bufsize);
		return -1;
	}
	rd->nl = sl_netns_mnl_socket(nsfd, NETLINK_NETFILTER);
	if (!rd->nl) {
		int err = errno;

		rd->host->log(rd->inst, SL_LOG_ERR, "netlink socket%s: %s%s",
			      nsfd < 0 ? "" : " in the namespace", strerror(err),
			      nsfd >= 0 && err == EPERM
				      ? " (joining a namespace needs CAP_SYS_ADMIN; daemon.user keeps "
					"CAP_NET_ADMIN only: docs/SECURITY.md)"
				      : "");
		return -1;
	}
	rd->fd = mnl_socket_get_fd(rd->nl);
	sl_nl_set_rcvbuf(rd->host, rd->inst, rd->fd, rcvbuf);
	return 0;
}

int sl_nl_watch(struct sl_nl_reader *rd, sl_fd_cb cb, void *arg)
{
	if (rd->host->watch_fd(rd->inst, rd->fd, EPOLLIN, cb, arg) < 0) {
		rd->host->log(rd->inst, SL_LOG_ERR, "cannot watch the netlink socket: %s",
			      strerror(errno));
		return -1;
	}
	rd->watching = true;
	return 0;
}

void sl_nl_sock_close(const struct sl_host *host, struct sl_instance *inst,
		      struct mnl_socket **nl, int *fd, bool *watching)
{
	if (*watching)
		host->unwatch_fd(inst, *fd);
	*watching = false;
	if (*nl)
		mnl_socket_close(*nl);
	*nl = NULL;
	*fd = -1;
}

void sl_nl_close(struct sl_nl_reader *rd)
{
	sl_nl_sock_close(rd->host, rd->inst, &rd->nl, &rd->fd, &rd->watching);
	free(rd->buf);
	rd->buf = NULL;
}
