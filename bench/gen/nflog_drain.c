/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nflog_drain: the ceiling for an NFLOG logger.  Binds one group with the
 * same settings as sluice's nflog input (copy the whole packet, 128 KiB
 * kernel batches, 8 MiB receive buffer), receives and discards, and counts
 * the packet messages.  On SIGINT/SIGTERM prints "packets N enobufs E".
 *
 *   nflog_drain -g GROUP [-b RCVBUF] [-n NLBUFSIZ] [-c CPU]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static struct nlmsghdr *cfg_msg(char *buf, uint16_t group)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	struct nfgenmsg *nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_UNSPEC;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(group);
	return nlh;
}

static int config(struct mnl_socket *nl, struct nlmsghdr *nlh)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	int n = (int)mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (n < 0)
		return -1;
	return mnl_cb_run(buf, (size_t)n, 0, 0, NULL, NULL) < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	int group = -1, cpu = -1, rcvbuf = 8 << 20, nlbufsiz = 128 << 10, opt;
	while ((opt = getopt(argc, argv, "g:b:n:c:")) != -1) {
		switch (opt) {
		case 'g': group = atoi(optarg); break;
		case 'b': rcvbuf = atoi(optarg); break;
		case 'n': nlbufsiz = atoi(optarg); break;
		case 'c': cpu = atoi(optarg); break;
		default: group = -1; optind = argc; break;
		}
	}
	if (group < 0 || group > 65535) {
		fprintf(stderr, "usage: %s -g GROUP [-b RCVBUF] [-n NLBUFSIZ] [-c CPU]\n", argv[0]);
		return 2;
	}
	if (cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: recv returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	struct mnl_socket *nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror("nflog_drain: netlink");
		return 1;
	}
	int fd = mnl_socket_get_fd(nl);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));

	char cbuf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = cfg_msg(cbuf, (uint16_t)group);
	struct nfulnl_msg_config_cmd cmd = { .command = NFULNL_CFG_CMD_BIND };
	mnl_attr_put(nlh, NFULA_CFG_CMD, sizeof(cmd), &cmd);
	if (config(nl, nlh) < 0) {
		fprintf(stderr, "nflog_drain: bind group %d: %s\n", group, strerror(errno));
		return 1;
	}
	nlh = cfg_msg(cbuf, (uint16_t)group);
	struct nfulnl_msg_config_mode mode = { .copy_range = htonl(0xffff), .copy_mode = NFULNL_COPY_PACKET };
	mnl_attr_put(nlh, NFULA_CFG_MODE, sizeof(mode), &mode);
	mnl_attr_put_u32(nlh, NFULA_CFG_NLBUFSIZ, htonl((uint32_t)nlbufsiz));
	if (config(nl, nlh) < 0) {
		fprintf(stderr, "nflog_drain: configure group %d: %s\n", group, strerror(errno));
		return 1;
	}
	fprintf(stderr, "nflog_drain: bound group %d\n", group);

	static char buf[256 << 10];
	unsigned long long packets = 0, enobufs = 0;
	const uint16_t pkt_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET;
	while (!stop) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			if (errno == ENOBUFS)
				enobufs++;
			else if (errno != EINTR)
				break;
			continue;
		}
		int len = (int)n;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; mnl_nlmsg_ok(h, len); h = mnl_nlmsg_next(h, &len))
			if (h->nlmsg_type == pkt_type)
				packets++;
	}
	printf("packets %llu enobufs %llu\n", packets, enobufs);
	return 0;
}
