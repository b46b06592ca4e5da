/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nft_genid.h"

/* The NEWGEN answer's NFTA_GEN_ID: 0, or -1 (an error's errno in *error). */
static int parse_gen(const char *buf, size_t len, uint32_t seq, uint32_t *gen, int *error)
{
	/* NLMSG_OK/NLMSG_NEXT compare the u32 length with an int: walked by hand */
	for (const struct nlmsghdr *nh = (const void *)buf;
	     len >= sizeof(*nh) && nh->nlmsg_len >= sizeof(*nh) && nh->nlmsg_len <= len;
	     len -= NLMSG_ALIGN(nh->nlmsg_len) < len ? NLMSG_ALIGN(nh->nlmsg_len) : len,
	     nh = (const void *)((const char *)nh + NLMSG_ALIGN(nh->nlmsg_len))) {
		const struct nlattr *a;
		size_t alen, hdr = NLMSG_LENGTH(NLMSG_ALIGN(sizeof(struct nfgenmsg)));

		if (nh->nlmsg_seq != seq)
			continue;
		if (nh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(nh);

			/* the ACK comes after NEWGEN: without one, none comes */
			*error = nh->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error ? -e->error :
										    ENODATA;
			continue;
		}
		if (nh->nlmsg_type != ((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWGEN) ||
		    nh->nlmsg_len < hdr)
			continue;
		a = (const void *)((const char *)nh + hdr);
		alen = nh->nlmsg_len - hdr;
		while (alen >= sizeof(*a) && a->nla_len >= sizeof(*a) && a->nla_len <= alen) {
			if ((a->nla_type & NLA_TYPE_MASK) == NFTA_GEN_ID &&
			    a->nla_len >= NLA_HDRLEN + sizeof(uint32_t)) {
				uint32_t v;

				memcpy(&v, (const char *)a + NLA_HDRLEN, sizeof(v));
				*gen = ntohl(v);
				return 0;
			}
			if ((size_t)NLA_ALIGN(a->nla_len) >= alen)
				break;
			alen -= (size_t)NLA_ALIGN(a->nla_len);
			a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len));
		}
	}
	return -1;
}

int nft_genid_get(uint32_t *gen, char *err, size_t errlen)
{
	struct {
		struct nlmsghdr nh;
		struct nfgenmsg nf;
	} req = {
		.nh = {.nlmsg_len = sizeof(req),
		       .nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETGEN,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK, .nlmsg_seq = 1},
		.nf = {.nfgen_family = AF_UNSPEC, .version = NFNETLINK_V0},
	};
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	char buf[8192];
	int fd, error = 0, rc = -1;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (fd < 0) {
		snprintf(err, errlen, "netfilter netlink socket: %s", strerror(errno));
		return -1;
	}
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
		snprintf(err, errlen, "asking the ruleset generation: %s", strerror(errno));
		goto out;
	}
	/* the NEWGEN message, then the ACK: until one of them tells */
	while (rc && !error) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "reading the ruleset generation: %s",
				 n < 0 ? strerror(errno) : "no answer");
			goto out;
		}
		rc = parse_gen(buf, (size_t)n, req.nh.nlmsg_seq, gen, &error);
	}
	if (rc)
		snprintf(err, errlen, "reading the ruleset generation: %s", strerror(error));
out:
	close(fd);
	return rc;
}
