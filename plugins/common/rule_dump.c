/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rule index of the ruleset in force, over netlink (see rule_dump.h). */
#include "rule_dump.h"
#include "netns_open.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include "clock.h"
#include "rule_index_nl.h"

/* The kernel fills a dump's datagrams up to the reader's buffer (32 KiB at most). */
#define BUF_SIZE (128 * 1024)
#define TRIES 5

struct sl_rule_dump {
	struct mnl_socket *nl;	/* requests only: joins no group */
	int nsfd;		/* the namespace dumped (not owned); -1: ours */
	uint32_t seq;
	char *buf;
	struct sl_rule_dump_stats st;
};

struct sl_rule_dump *sl_rule_dump_new(void)
{
	struct sl_rule_dump *d = calloc(1, sizeof(*d));

	if (d && !(d->buf = malloc(BUF_SIZE))) {
		free(d);
		return NULL;
	}
	if (d) {
		d->seq = (uint32_t)time(NULL);
		d->nsfd = -1;
	}
	return d;
}

static void close_socket(struct sl_rule_dump *d)
{
	if (d->nl)
		mnl_socket_close(d->nl);
	d->nl = NULL;
}

void sl_rule_dump_free(struct sl_rule_dump *d)
{
	if (!d)
		return;
	close_socket(d);
	free(d->buf);
	free(d);
}

static int open_socket(struct sl_rule_dump *d)
{
	if (d->nl)
		return 0;
	/* made and bound in the namespace dumped (netns_open.h); ours without a thread */
	if (!(d->nl = sl_netns_mnl_socket(d->nsfd, NETLINK_NETFILTER)))
		return -errno;
	return 0;
}

void sl_rule_dump_set_netns(struct sl_rule_dump *d, int nsfd)
{
	close_socket(d);
	d->nsfd = nsfd;
}

/* A request's reading: the messages go to cb(arg). */
struct reading {
	mnl_cb_t cb;
	void *arg;
	bool intr;		/* the kernel says the ruleset changed during the dump */
};

static int one_msg(const struct nlmsghdr *nlh, void *data)
{
	struct reading *r = data;

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		r->intr = true;
	return r->cb(nlh, r->arg);
}

/*
 * A request of nf_tables (type; family; a dump when dump; when set, a
 * table and the name of a set or chain in the attributes 1 and 2, which
 * are NFTA_SET_ELEM_LIST_TABLE/_SET and NFTA_RULE_TABLE/_CHAIN alike), its
 * answers to cb: 0, -EINTR when the dump was interrupted, or -errno (the
 * socket is then closed: answers may be left).
 */
static int request(struct sl_rule_dump *d, uint16_t type, uint8_t family, bool dump,
		   const char *table, const char *set, mnl_cb_t cb, void *arg)
{
	struct reading r = {cb, arg, false};
	struct nlmsghdr *nlh;
	struct nfgenmsg *g;
	uint32_t seq = ++d->seq, portid;
	int64_t t0 = sl_clock_ns(CLOCK_MONOTONIC), t1;
	ssize_t n;
	int ret = 0, err;

	if ((err = open_socket(d)) < 0)
		return err;
	portid = mnl_socket_get_portid(d->nl);
	nlh = mnl_nlmsg_put_header(d->buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | type;
	nlh->nlmsg_flags = NLM_F_REQUEST | (dump ? NLM_F_DUMP : 0);
	nlh->nlmsg_seq = seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = family;
	g->version = NFNETLINK_V0;
	g->res_id = 0;
	if (set) {
		_Static_assert((int)NFTA_SET_ELEM_LIST_TABLE == (int)NFTA_RULE_TABLE &&
			       (int)NFTA_SET_ELEM_LIST_SET == (int)NFTA_RULE_CHAIN, "attributes 1 and 2");
		mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, table);
		mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, set);
	}
	if (mnl_socket_sendto(d->nl, nlh, nlh->nlmsg_len) < 0)
		ret = -errno;
	while (!ret && (n = mnl_socket_recvfrom(d->nl, d->buf, BUF_SIZE)) != 0) {
		if (n < 0) {
			ret = -errno;
			break;
		}
		t1 = sl_clock_ns(CLOCK_MONOTONIC);
		d->st.kernel_ns += (uint64_t)(t1 - t0);
		d->st.bytes += (size_t)n;
		err = mnl_cb_run(d->buf, (size_t)n, seq, portid, one_msg, &r);
		t0 = sl_clock_ns(CLOCK_MONOTONIC);
		d->st.parse_ns += (uint64_t)(t0 - t1);
		if (err < 0)
			ret = errno == EINTR || r.intr ? -EINTR : -(errno ? errno : EPROTO);
		else if (err == MNL_CB_STOP || !dump)
			break;
	}
	if (ret)
		close_socket(d);	/* what is left of the answer goes with it */
	else
		d->st.kernel_ns += (uint64_t)(sl_clock_ns(CLOCK_MONOTONIC) - t0);
	return ret ? ret : r.intr ? -EINTR : 0;
}

static int gen_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
		if (mnl_attr_get_type(a) == NFTA_GEN_ID && mnl_attr_validate(a, MNL_TYPE_U32) == 0)
			*(uint32_t *)data = ntohl(mnl_attr_get_u32(a));
	return MNL_CB_OK;
}

int sl_rule_dump_gen(struct sl_rule_dump *d, uint32_t *gen)
{
	*gen = 0;
	return request(d, NFT_MSG_GETGEN, NFPROTO_UNSPEC, false, NULL, NULL, gen_cb, gen);
}

static int nl_cb(const struct nlmsghdr *nlh, void *data)
{
	sl_rule_nl_msg(data, nlh, nlh->nlmsg_len);	/* a failure fails the index */
	return MNL_CB_OK;
}

/*
 * One dump of everything into rn: 0, -EINTR (again), -errno.  The rules
 * chain by chain: the kernel resumes a dump by skipping what it already
 * sent, from the first rule of the ruleset, or of the chain asked for, so
 * one dump of 10,000 rules in 170 datagrams walks 850,000 rules (half of
 * its time); chain by chain, a request per chain.
 */
static int dump_all(struct sl_rule_dump *d, struct sl_rule_nl *rn)
{
	static const uint16_t first[] = {NFT_MSG_GETCHAIN, NFT_MSG_GETSET};
	const char *table, *name;
	uint8_t family;
	int err;

	/* chains before rules: a rule names its chain */
	for (size_t i = 0; i < sizeof(first) / sizeof(first[0]); i++)
		if ((err = request(d, first[i], NFPROTO_UNSPEC, true, NULL, NULL, nl_cb, rn)) < 0)
			return err;
	for (size_t i = 0; sl_rule_nl_map(rn, i, &family, &table, &name) == 0; i++) {
		err = request(d, NFT_MSG_GETSETELEM, family, true, table, name, nl_cb, rn);
		if (err == -ENOENT)
			return -EINTR;	/* the map went meanwhile */
		if (err < 0)
			return err;
	}
	for (size_t i = 0; sl_rule_nl_chain(rn, i, &family, &table, &name) == 0; i++) {
		err = request(d, NFT_MSG_GETRULE, family, true, table, name, nl_cb, rn);
		if (err == -ENOENT)
			return -EINTR;	/* the chain went meanwhile */
		if (err < 0)
			return err;
	}
	return 0;
}

int sl_rule_dump_index(struct sl_rule_dump *d, struct sl_rule_index **ix, uint32_t *gen,
		       char *err, size_t errlen)
{
	int ret = -EINTR;

	*ix = NULL;
	memset(&d->st, 0, sizeof(d->st));
	if (errlen)
		*err = '\0';
	for (int i = 0; i < TRIES && ret == -EINTR; i++) {
		struct sl_rule_nl *rn = sl_rule_nl_new();
		uint32_t after;
		int64_t t0;

		if (!rn)
			return -ENOMEM;
		d->st.tries++;
		if ((ret = sl_rule_dump_gen(d, gen)) == 0 && (ret = dump_all(d, rn)) == 0 &&
		    (ret = sl_rule_dump_gen(d, &after)) == 0 && after != *gen)
			ret = -EINTR;
		if (ret < 0) {
			sl_rule_nl_free(rn);
			continue;
		}
		t0 = sl_clock_ns(CLOCK_MONOTONIC);
		*ix = sl_rule_nl_done(rn, err, errlen);
		d->st.parse_ns += (uint64_t)(sl_clock_ns(CLOCK_MONOTONIC) - t0);
		if (!*ix)
			ret = -EPROTO;
	}
	return ret;
}

const struct sl_rule_dump_stats *sl_rule_dump_stats(const struct sl_rule_dump *d)
{
	return &d->st;
}
