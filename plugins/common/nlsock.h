/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Netlink socket helpers shared by the netlink inputs (nflog, nfct, nftrace, nfacct) and decode. */
#ifndef SLUICE_NLSOCK_H
#define SLUICE_NLSOCK_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include <sluice/plugin.h>

#include "clock.h"

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
 * One datagram of the replies to a request (nfct's dump, nfacct's poll),
 * read from a non-blocking socket of their own into buf (size at most
 * INT_MAX): its length; 0 when the socket is empty; -1 with errno when
 * the receive failed, EMSGSIZE for a datagram larger than size (cut: its
 * messages are lost).  An interrupted receive is tried again.
 */
static inline int sl_nl_recv_reply(int fd, void *buf, size_t size)
{
	for (;;) {
		ssize_t got = recv(fd, buf, size, MSG_DONTWAIT | MSG_TRUNC);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return errno == EAGAIN ? 0 : -1;
		if ((size_t)got > size) {
			errno = EMSGSIZE;
			return -1;
		}
		return (int)got;
	}
}

/*
 * Size the socket's receive buffer: SO_RCVBUFFORCE (ignores
 * net.core.rmem_max, needs CAP_NET_ADMIN), else SO_RCVBUF; warns through
 * the host when the kernel granted less than asked.
 */
void sl_nl_set_rcvbuf(const struct sl_host *host, struct sl_instance *inst, int fd,
		      uint64_t want_bytes);

/*
 * The receiving side of a netlink event socket (nflog, nfct): its buffer,
 * the datagrams it lost, the counters both inputs keep.
 */
struct sl_nl_reader {
	const struct sl_host *host;
	struct sl_instance *inst;
	struct mnl_socket *nl;
	int fd;
	bool watching;
	uint8_t *buf;
	size_t bufsize;
	size_t maxdg;		/* room kept free for one datagram */
	int c_enobufs, c_malformed;
	const char *enobufs_hint;	/* ends the "losing events" warning */
	uint64_t enobufs_total;
	int64_t enobufs_warned_ns;	/* monotonic; 0: never */
	bool warned_trunc;
	/*
	 * Datagrams the kernel dropped on this socket (SK_MEMINFO_DROPS:
	 * netlink_overrun() counts each one), read at the first empty read
	 * after an ENOBUFS: the kernel reports ENOBUFS at the first drop of
	 * an overrun and drops everything until the queue is empty, so that
	 * read sees every drop the ENOBUFS announced.
	 */
	int c_lost;		/* adds each new drop to this counter; -1: the input does */
	bool drops_pending;	/* an ENOBUFS since the last read of the count */
	bool drops_fresh;	/* read just after an empty read; the input clears it */
	bool drops_warned;
	uint32_t drops_raw;	/* the kernel's 32-bit count at the last read */
	uint64_t drops;		/* dropped since the socket was opened */
};

/* Why sl_nl_receive() returned. */
enum sl_nl_end {
	SL_NL_EMPTY,	/* the socket would block (or failed: logged) */
	SL_NL_BOUND,	/* `max` datagrams read: more may wait */
	SL_NL_STOPPED,	/* the message callback said stop */
};

/* A zeroed reader; the caller registers c_enobufs and c_malformed (order shows in the counters line). */
void sl_nl_reader_init(struct sl_nl_reader *rd, const struct sl_host *host,
		       struct sl_instance *inst);

/*
 * Allocate rd->bufsize bytes of buffer, open a NETLINK_NETFILTER socket,
 * bind it and size its receive buffer (sl_nl_set_rcvbuf): 0, or -1 logged.
 */
int sl_nl_open(struct sl_nl_reader *rd, uint64_t rcvbuf);

/* sl_nl_open() with the socket made in the network namespace of nsfd (netns_open.h); -1: ours. */
int sl_nl_open_in(struct sl_nl_reader *rd, uint64_t rcvbuf, int nsfd);

/* Watch the socket in the event loop: 0, or -1 logged. */
int sl_nl_watch(struct sl_nl_reader *rd, sl_fd_cb cb, void *arg);

/* Unwatch, close and free what sl_nl_open() and sl_nl_watch() made (any part of it). */
void sl_nl_close(struct sl_nl_reader *rd);
/*
 * The socket part of that, for a netlink socket a plugin opens itself
 * (nfacct's requests, decode's rtnetlink): unwatched when *watching,
 * closed when *nl is set; then *nl NULL, *fd -1, *watching false.
 */
void sl_nl_sock_close(const struct sl_host *host, struct sl_instance *inst,
		      struct mnl_socket **nl, int *fd, bool *watching);

/* One ENOBUFS: counted, and warned about at most every 10 s. */
void sl_nl_enobufs(struct sl_nl_reader *rd);

/*
 * Read the kernel's drop count of the socket into rd->drops (and c_lost):
 * 0, or -1 when the kernel cannot say (before Linux 4.12; warned once).
 * Sets drops_fresh and clears drops_pending.
 */
int sl_nl_drops_read(struct sl_nl_reader *rd);

static inline void sl_nl_malformed(struct sl_nl_reader *rd)
{
	rd->host->counter_add(rd->inst, rd->c_malformed, 1);
	rd->host->error_add(rd->inst, 1);
}

/*
 * Receive datagrams until the socket would block or `max` datagrams were
 * read (epoll is level-triggered: the rest is read on the next turn), and
 * call msg() on each netlink message with one receive time per datagram;
 * msg() returns false to stop.  Datagrams are stored one after the other
 * in rd->buf (8-byte aligned), so messages of earlier datagrams stay valid
 * until reuse() is called, just before the buffer is written over from its
 * start.  After an ENOBUFS (counted by sl_nl_enobufs()) enobufs() is called
 * and reading goes on; the first read that finds the socket empty after it
 * reads the drop count (sl_nl_drops_read()).  reuse and enobufs may be NULL.
 *
 * Static inline so that the callbacks, known at each call site, are
 * inlined: nflog's receive path has no indirect call per message.
 */
static inline enum sl_nl_end
sl_nl_receive(struct sl_nl_reader *rd, unsigned max,
	      bool (*msg)(void *arg, const struct nlmsghdr *nlh, const struct sl_time *rx),
	      void (*reuse)(void *arg), void (*enobufs)(void *arg), void *arg)
{
	size_t off = 0;

	for (unsigned dgrams = 0; dgrams < max; dgrams++) {
		const struct nlmsghdr *nlh;
		struct sl_time rx;
		ssize_t got;
		int n;

		if (rd->bufsize - off < rd->maxdg) {
			if (reuse)
				reuse(arg);
			off = 0;
		}
		got = recv(rd->fd, rd->buf + off, rd->bufsize - off, MSG_DONTWAIT | MSG_TRUNC);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				sl_nl_enobufs(rd);
				if (enobufs)
					enobufs(arg);
				continue;
			}
			if (errno != EAGAIN)
				rd->host->log(rd->inst, SL_LOG_ERR, "recv: %s", strerror(errno));
			else if (rd->drops_pending)
				sl_nl_drops_read(rd);	/* empty: the overrun is over */
			return SL_NL_EMPTY;
		}
		if ((size_t)got > rd->bufsize - off) {
			/* bigger than the room we keep: cannot happen with our sizes */
			if (!rd->warned_trunc)
				rd->host->log(rd->inst, SL_LOG_ERR,
					      "a %zd-byte netlink datagram was cut: its events are lost",
					      got);
			rd->warned_trunc = true;
			sl_nl_malformed(rd);
			continue;
		}
		/* one receive time for all events without a kernel timestamp */
		rx = sl_clock_time(CLOCK_REALTIME);
		n = (int)got;
		for (nlh = (const struct nlmsghdr *)(rd->buf + off); sl_nlmsg_ok(nlh, n);
		     nlh = mnl_nlmsg_next(nlh, &n))
			if (!msg(arg, nlh, &rx))
				return SL_NL_STOPPED;
		if (n != 0)
			sl_nl_malformed(rd);	/* a message header that does not fit */
		off += ((size_t)got + 7) & ~(size_t)7;
	}
	return SL_NL_BOUND;
}

#endif
