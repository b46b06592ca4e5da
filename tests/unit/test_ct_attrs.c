/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The conntrack message parser of nfct (plugins/common/ct_attrs.c) on real
 * ctnetlink datagrams recorded from known traffic (tests/data/conntrack/,
 * made by tests/data/make-ct-messages.sh): TCP and UDP flows over
 * 127.0.0.1 and ::1, a ping and a ping6, their NEW/UPDATE events, a table
 * dump and the DESTROY events of a flush.  Then messages built with libmnl
 * for what the recording lacks (32-bit counters, zones, unknown attributes,
 * malformed tuples), and every cut of every real message (under the ASan
 * build this proves no cut makes the parser read outside the message).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include <sluice/plugin.h>

#include "ct_attrs.h"
#include "nlsock.h"
#include "check.h"

#ifndef TEST_SOURCE_DIR
#define TEST_SOURCE_DIR "."
#endif

static union {
	struct sl_record r;
	uint8_t mem[sizeof(struct sl_record) + SL_MAX_FIELDS * sizeof(union sl_value)];
} rec_mem;

static struct sl_record *fresh(void)
{
	memset(&rec_mem, 0xa5, sizeof(rec_mem));
	memset(rec_mem.r.present, 0, sizeof(rec_mem.r.present));
	return &rec_mem.r;
}

/* ---- the recording ---- */

#define MAX_MSGS 64

struct msg {
	uint8_t type;		/* IPCTNL_MSG_CT_* */
	uint16_t flags;
	bool dump;
	struct sl_ct_info ci;
};

static struct msg msgs[MAX_MSGS];
static unsigned nmsgs, nmalformed;
/* every real message, for the cuts */
static uint8_t *raw[MAX_MSGS];
static uint32_t raw_len[MAX_MSGS];
static unsigned nraw;

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static void read_recording(void)
{
	char dir[512], path[1024];
	struct dirent **names;
	int n;

	snprintf(dir, sizeof(dir), "%s/tests/data/conntrack", TEST_SOURCE_DIR);
	n = scandir(dir, &names, NULL, by_name);
	CHECK(n > 2);
	for (int i = 0; i < n; i++) {
		static uint8_t buf[65536];
		const struct nlmsghdr *nlh;
		FILE *f;
		int len;

		if (!strstr(names[i]->d_name, ".nl")) {
			free(names[i]);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		f = fopen(path, "rb");
		CHECK(f != NULL);
		len = f ? (int)fread(buf, 1, sizeof(buf), f) : 0;
		if (f)
			fclose(f);
		for (nlh = (const struct nlmsghdr *)buf; sl_nlmsg_ok(nlh, len);
		     nlh = mnl_nlmsg_next(nlh, &len)) {
			struct msg *m;

			if (nlh->nlmsg_type == NLMSG_DONE)
				continue;
			CHECK(NFNL_SUBSYS_ID(nlh->nlmsg_type) == NFNL_SUBSYS_CTNETLINK);
			if (nmsgs == MAX_MSGS || nraw == MAX_MSGS)
				break;
			raw[nraw] = malloc(nlh->nlmsg_len);
			memcpy(raw[nraw], nlh, nlh->nlmsg_len);
			raw_len[nraw++] = nlh->nlmsg_len;
			m = &msgs[nmsgs];
			m->type = (uint8_t)NFNL_MSG_TYPE(nlh->nlmsg_type);
			m->flags = nlh->nlmsg_flags;
			m->dump = strstr(names[i]->d_name, "dump") != NULL;
			if (sl_ct_parse(nlh, &m->ci) < 0)
				nmalformed++;
			else
				nmsgs++;
		}
		CHECK(len == 0);	/* no trailing bytes in a datagram */
		free(names[i]);
	}
	free(names);
}

static bool is_v4(const uint8_t a[16], const char *dotted)
{
	uint8_t want[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	inet_pton(AF_INET, dotted, want + 12);
	return memcmp(a, want, 16) == 0;
}

static bool is_v6(const uint8_t a[16], const char *text)
{
	uint8_t want[16];

	inet_pton(AF_INET6, text, want);
	return memcmp(a, want, 16) == 0;
}

/* The message of this kind for the connection of proto/orig dport (or ICMP type). */
static const struct msg *find(uint8_t type, bool dump, uint8_t family, uint8_t proto,
			      uint16_t odport)
{
	for (unsigned i = 0; i < nmsgs; i++) {
		const struct msg *m = &msgs[i];

		if (m->type == type && m->dump == dump && m->ci.family == family &&
		    m->ci.proto == proto && m->ci.odport == odport)
			return m;
	}
	return NULL;
}

static void check_udp(uint8_t family, uint16_t sport, uint16_t dport, uint64_t obytes,
		      uint64_t rbytes)
{
	const struct msg *d = find(IPCTNL_MSG_CT_DELETE, false, family, IPPROTO_UDP, dport);
	const struct msg *n = find(IPCTNL_MSG_CT_NEW, false, family, IPPROTO_UDP, dport);
	const struct sl_ct_info *ci;

	CHECK(d && n);
	if (!d || !n)
		return;
	CHECK(n->flags & (NLM_F_CREATE | NLM_F_EXCL));	/* the NEW event */
	ci = &d->ci;
	CHECK(family == AF_INET ? is_v4(ci->osrc, "127.0.0.1") && is_v4(ci->odst, "127.0.0.1")
				: is_v6(ci->osrc, "::1") && is_v6(ci->odst, "::1"));
	CHECK((ci->have & (SL_CI_PORTS | SL_CI_RPORTS | SL_CI_REPLY)) ==
	      (SL_CI_PORTS | SL_CI_RPORTS | SL_CI_REPLY));
	CHECK(ci->osport == sport && ci->odport == dport);
	CHECK(ci->rsport == dport && ci->rdport == sport);
	/* three 100-byte datagrams out, three 200-byte ones back (IP + UDP headers) */
	CHECK(ci->have & SL_CI_OCOUNT && ci->opkts == 3 && ci->obytes == obytes);
	CHECK(ci->have & SL_CI_RCOUNT && ci->rpkts == 3 && ci->rbytes == rbytes);
	CHECK((ci->have & (SL_CI_START | SL_CI_STOP)) == (SL_CI_START | SL_CI_STOP) &&
	      ci->stop_ns >= ci->start_ns);
	CHECK(ci->have & SL_CI_ID && ci->id == n->ci.id && ci->id != 0);
	CHECK(ci->have & SL_CI_STATUS);
	CHECK(!(ci->have & SL_CI_TCPSTATE));
	/* the dump saw it too, with its counters so far */
	CHECK(find(IPCTNL_MSG_CT_NEW, true, family, IPPROTO_UDP, dport) != NULL);
}

static void check_tcp(uint8_t family, uint16_t sport, uint16_t dport)
{
	const struct msg *d = find(IPCTNL_MSG_CT_DELETE, false, family, IPPROTO_TCP, dport);
	const struct msg *n = find(IPCTNL_MSG_CT_NEW, false, family, IPPROTO_TCP, dport);
	unsigned updates = 0;

	CHECK(d && n);
	if (!d || !n)
		return;
	CHECK(d->ci.osport == sport && d->ci.rsport == dport && d->ci.rdport == sport);
	/* 1000 bytes out and 3000 back, with headers, over several segments */
	CHECK(d->ci.opkts >= 3 && d->ci.obytes > 1000 && d->ci.rpkts >= 2 && d->ci.rbytes > 3000);
	CHECK(n->ci.have & SL_CI_TCPSTATE);
	for (unsigned i = 0; i < nmsgs; i++)
		if (msgs[i].type == IPCTNL_MSG_CT_NEW && !msgs[i].dump && !(msgs[i].flags & NLM_F_CREATE) &&
		    msgs[i].ci.id == n->ci.id) {
			updates++;
			CHECK(msgs[i].ci.have & SL_CI_TCPSTATE);
		}
	CHECK(updates >= 2);	/* established, fin-wait... */
}

static void check_icmp(uint8_t family, uint8_t proto, uint8_t type, uint8_t reply_type)
{
	const struct msg *d = find(IPCTNL_MSG_CT_DELETE, false, family, proto, type << 8);

	CHECK(d != NULL);
	if (!d)
		return;
	/* ports carry the echo id and type<<8|code */
	CHECK(d->ci.have & SL_CI_PORTS && d->ci.osport == d->ci.rsport);
	CHECK(d->ci.rdport == reply_type << 8);
	CHECK(d->ci.opkts == 1 && d->ci.rpkts == 1);
}

static void test_recording(void)
{
	unsigned dumped = 0, destroys = 0;

	read_recording();
	CHECK(nmalformed == 0);
	for (unsigned i = 0; i < nmsgs; i++) {
		dumped += msgs[i].dump;
		destroys += msgs[i].type == IPCTNL_MSG_CT_DELETE;
	}
	CHECK(dumped == 6 && destroys == 6);
	check_udp(AF_INET, 40002, 5002, 3 * (20 + 8 + 100), 3 * (20 + 8 + 200));
	check_udp(AF_INET6, 40012, 5012, 3 * (40 + 8 + 100), 3 * (40 + 8 + 200));
	check_tcp(AF_INET, 40001, 5001);
	check_tcp(AF_INET6, 40011, 5011);
	check_icmp(AF_INET, IPPROTO_ICMP, 8, 0);
	check_icmp(AF_INET6, IPPROTO_ICMPV6, 128, 129);
}

/* A destroy's record: the fields nfct reports, mapped IPv4, ns times. */
static void test_fill(void)
{
	const struct msg *d = find(IPCTNL_MSG_CT_DELETE, false, AF_INET, IPPROTO_UDP, 5002);
	const struct sl_time now = {1700000000, 5};
	struct sl_record *r = fresh();
	struct sl_ct_info ci;

	CHECK(d != NULL);
	if (!d)
		return;
	ci = d->ci;
	ci.have |= SL_CI_TIMEOUT;
	ci.timeout = 30;
	sl_ct_fill(r, &ci, SL_CT_EVENT_DESTROY, &now, SL_F_WELL_KNOWN_COUNT);
	CHECK(r->v[SL_F_CT_EVENT].u64 == SL_CT_EVENT_DESTROY);
	CHECK(r->v[SL_F_TIMESTAMP].time.sec == 1700000000 && r->v[SL_F_TIMESTAMP].time.nsec == 5);
	CHECK(r->v[SL_F_FAMILY].u64 == AF_INET && r->v[SL_F_IP_PROTO].u64 == IPPROTO_UDP);
	CHECK(sl_has(r, SL_F_ORIG_SRC) && is_v4(r->v[SL_F_ORIG_SRC].addr, "127.0.0.1"));
	CHECK(r->v[SL_F_ORIG_SPORT].u64 == 40002 && r->v[SL_F_ORIG_DPORT].u64 == 5002);
	CHECK(r->v[SL_F_REPLY_SPORT].u64 == 5002 && r->v[SL_F_REPLY_DPORT].u64 == 40002);
	CHECK(r->v[SL_F_ORIG_PACKETS].u64 == 3 && r->v[SL_F_ORIG_BYTES].u64 == 384);
	CHECK(r->v[SL_F_REPLY_PACKETS].u64 == 3 && r->v[SL_F_REPLY_BYTES].u64 == 684);
	CHECK(sl_has(r, SL_F_FLOW_START) && sl_has(r, SL_F_FLOW_END));
	CHECK((uint64_t)r->v[SL_F_FLOW_END].time.sec * 1000000000u + r->v[SL_F_FLOW_END].time.nsec ==
	      ci.stop_ns);
	CHECK(r->v[SL_F_FLOW_END_REASON].u64 == SL_FLOW_END_DESTROY);
	CHECK(r->v[SL_F_CT_ID].u64 == ci.id);
	CHECK(!sl_has(r, SL_F_TCP_STATE) && !sl_has(r, SL_F_CT_ZONE));
	CHECK(sl_has(r, SL_F_WELL_KNOWN_COUNT) && r->v[SL_F_WELL_KNOWN_COUNT].u64 == 30);

	r = fresh();
	sl_ct_fill(r, &ci, SL_CT_EVENT_NEW, &now, -1);
	CHECK(!sl_has(r, SL_F_FLOW_END_REASON) && !sl_has(r, SL_F_WELL_KNOWN_COUNT));
}

/* ---- built messages ---- */

static struct nlmsghdr *start_msg(uint8_t *buf, uint8_t family)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_DELETE;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = family;
	nfg->version = NFNETLINK_V0;
	return nlh;
}

static void put_tuple(struct nlmsghdr *nlh, uint16_t type, const char *src, const char *dst,
		      uint8_t proto, uint16_t sport, uint16_t dport, bool with_zone)
{
	struct nlattr *t = mnl_attr_nest_start(nlh, type), *ip, *pr;
	uint32_t a;

	ip = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);
	inet_pton(AF_INET, src, &a);
	mnl_attr_put_u32(nlh, CTA_IP_V4_SRC, a);
	inet_pton(AF_INET, dst, &a);
	mnl_attr_put_u32(nlh, CTA_IP_V4_DST, a);
	mnl_attr_nest_end(nlh, ip);
	pr = mnl_attr_nest_start(nlh, CTA_TUPLE_PROTO);
	mnl_attr_put_u8(nlh, CTA_PROTO_NUM, proto);
	mnl_attr_put_u16(nlh, CTA_PROTO_SRC_PORT, htons(sport));
	mnl_attr_put_u16(nlh, CTA_PROTO_DST_PORT, htons(dport));
	mnl_attr_nest_end(nlh, pr);
	if (with_zone)
		mnl_attr_put_u16(nlh, CTA_TUPLE_ZONE, htons(7));
	mnl_attr_nest_end(nlh, t);
}

static void test_built(void)
{
	static uint8_t buf[4096];
	struct nlmsghdr *nlh;
	struct nlattr *c;
	struct sl_ct_info ci;

	/* 32-bit counters, a zone in the tuple, mark, and an attribute from the future */
	nlh = start_msg(buf, AF_INET);
	put_tuple(nlh, CTA_TUPLE_ORIG, "10.1.0.1", "10.1.0.2", IPPROTO_UDP, 1000, 53, true);
	c = mnl_attr_nest_start(nlh, CTA_COUNTERS_ORIG);
	mnl_attr_put_u32(nlh, CTA_COUNTERS32_PACKETS, htonl(5));
	mnl_attr_put_u32(nlh, CTA_COUNTERS32_BYTES, htonl(500));
	mnl_attr_nest_end(nlh, c);
	mnl_attr_put_u32(nlh, CTA_MARK, htonl(0xabc));
	mnl_attr_put_u32(nlh, CTA_MAX + 5, 0);
	CHECK(sl_ct_parse(nlh, &ci) == 0);
	CHECK(ci.have & SL_CI_OCOUNT && ci.opkts == 5 && ci.obytes == 500);
	CHECK(ci.have & SL_CI_ZONE && ci.zone == 7);
	CHECK(ci.have & SL_CI_MARK && ci.mark == 0xabc);
	CHECK(!(ci.have & (SL_CI_REPLY | SL_CI_ID | SL_CI_RCOUNT)));
	CHECK(is_v4(ci.osrc, "10.1.0.1") && ci.osport == 1000 && ci.odport == 53);

	/* no original tuple: malformed */
	nlh = start_msg(buf, AF_INET);
	put_tuple(nlh, CTA_TUPLE_REPLY, "10.1.0.2", "10.1.0.1", IPPROTO_UDP, 53, 1000, false);
	CHECK(sl_ct_parse(nlh, &ci) < 0);

	/* a tuple whose address is cut to 2 bytes: malformed */
	nlh = start_msg(buf, AF_INET);
	{
		struct nlattr *t = mnl_attr_nest_start(nlh, CTA_TUPLE_ORIG), *ip, *pr;

		ip = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);
		mnl_attr_put_u16(nlh, CTA_IP_V4_SRC, 1);
		mnl_attr_put_u16(nlh, CTA_IP_V4_DST, 2);
		mnl_attr_nest_end(nlh, ip);
		pr = mnl_attr_nest_start(nlh, CTA_TUPLE_PROTO);
		mnl_attr_put_u8(nlh, CTA_PROTO_NUM, IPPROTO_UDP);
		mnl_attr_nest_end(nlh, pr);
		mnl_attr_nest_end(nlh, t);
	}
	CHECK(sl_ct_parse(nlh, &ci) < 0);

	/*
	 * A length not padded to 4 bytes: libmnl would walk attributes up to
	 * the padded end, past the message (found by cutting a real one).
	 */
	nlh = start_msg(buf, AF_INET);
	put_tuple(nlh, CTA_TUPLE_ORIG, "10.1.0.1", "10.1.0.2", IPPROTO_UDP, 1000, 53, false);
	c = mnl_attr_nest_start(nlh, CTA_COUNTERS_ORIG);
	mnl_attr_put_u64(nlh, CTA_COUNTERS_PACKETS, htobe64(5));
	mnl_attr_put_u64(nlh, CTA_COUNTERS_BYTES, htobe64(500));
	mnl_attr_nest_end(nlh, c);
	CHECK(sl_ct_parse(nlh, &ci) == 0 && ci.have & SL_CI_OCOUNT);
	nlh->nlmsg_len -= 3;
	CHECK(sl_ct_parse(nlh, &ci) < 0);

	/* a length that is negative as an int: libmnl 1.0.4 would take it */
	nlh = start_msg(buf, AF_INET);
	nlh->nlmsg_len = 0xe4000014;
	CHECK(!sl_nlmsg_ok(nlh, 64));
	nlh->nlmsg_len = 64;
	CHECK(sl_nlmsg_ok(nlh, 64) && !sl_nlmsg_ok(nlh, 63));

	/* shorter than the nfgenmsg header */
	nlh = mnl_nlmsg_put_header(buf);
	CHECK(sl_ct_parse(nlh, &ci) < 0);
}

/* Every cut of every real message, each in an exact-size buffer. */
static void test_cuts(void)
{
	unsigned ok = 0, bad = 0;

	for (unsigned i = 0; i < nraw; i++) {
		for (uint32_t k = sizeof(struct nlmsghdr); k <= raw_len[i]; k++) {
			uint8_t *m = malloc(k);
			struct nlmsghdr *nlh = (struct nlmsghdr *)m;
			struct sl_ct_info ci;

			memcpy(m, raw[i], k);
			nlh->nlmsg_len = k;
			if (sl_ct_parse(nlh, &ci) == 0)
				ok++;
			else
				bad++;
			free(m);
		}
		free(raw[i]);
	}
	/* the whole messages parse; cuts inside the original tuple do not */
	CHECK(ok >= nraw && bad > 0);
}

int main(void)
{
	test_recording();
	test_fill();
	test_built();
	test_cuts();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("ct_attrs: %u real messages, all checks passed\n", nmsgs);
	return 0;
}
