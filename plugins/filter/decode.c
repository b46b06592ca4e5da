/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * decode: split SL_F_PACKET into link, network and transport fields, and
 * name the interfaces of SL_F_IFINDEX_* / SL_F_PHYSINDEX_*.
 *
 * The parsing lives in plugins/common/pkt_decode.c (unit tested).  Interface
 * names come from a cache filled by an RTM_GETLINK dump at start() and kept
 * fresh by RTMGRP_LINK events on the event loop, so naming a record costs a
 * hash lookup, never a syscall.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <sluice/plugin.h>

#include "nlsock.h"
#include "pkt_decode.h"
#include "plugin_state.h"
#ifdef SLUICE_COMMUNITY_ID
#include "community_id.h"
#endif

struct decode_cfg {
	bool checksums;
	bool ifnames;
	bool community_id;
	int64_t community_id_seed;
};

/* One interface: index 0 marks a free slot (no interface has index 0). */
struct ifent {
	uint32_t index;
	uint32_t gen;
	uint32_t len;
	char name[IFNAMSIZ];
};

/* Open addressing, linear probing, backward-shift deletion. */
struct ifcache {
	struct ifent *tab;
	uint32_t mask;
	uint32_t used;
};

#define NL_BUF_SIZE (64 * 1024)

struct decode_state {
	SL_STATE_HEAD(struct decode_cfg);
	struct sl_pkt_decode_opts opts;

	struct mnl_socket *nl;
	int fd;
	bool watched;
	uint32_t seq;
	bool dumping;		/* an RTM_GETLINK dump is running */
	bool dump_again;	/* events were lost during it: dump once more */
	bool drained_in_vain;	/* a drain on a cache miss found nothing new */
	uint32_t gen;		/* generation of the running dump */
	struct ifcache ifc;
	uint8_t *buf;
	int cid_field;		/* id of "community_id", -1 when not asked for */
	uint16_t cid_seed;

	int c_truncated, c_cid_no_room, c_malformed, c_bad_csum, c_fragment, c_ifname_miss;
};

static uint32_t if_hash(uint32_t index, uint32_t mask)
{
	return (index * 2654435761u) & mask;
}

static struct ifent *ifc_find(const struct ifcache *c, uint32_t index)
{
	uint32_t i;

	if (!c->tab || !index)
		return NULL;
	for (i = if_hash(index, c->mask);; i = (i + 1) & c->mask) {
		if (c->tab[i].index == index)
			return &c->tab[i];
		if (!c->tab[i].index)
			return NULL;
	}
}

static int ifc_grow(struct ifcache *c)
{
	uint32_t ncap = c->tab ? (c->mask + 1) * 2 : 64, i;
	struct ifent *nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return -1;
	if (c->tab) {
		for (i = 0; i <= c->mask; i++) {
			uint32_t j;

			if (!c->tab[i].index)
				continue;
			for (j = if_hash(c->tab[i].index, ncap - 1); nt[j].index; j = (j + 1) & (ncap - 1))
				;
			nt[j] = c->tab[i];
		}
		free(c->tab);
	}
	c->tab = nt;
	c->mask = ncap - 1;
	return 0;
}

static int ifc_set(struct ifcache *c, uint32_t index, const char *name, uint32_t gen)
{
	struct ifent *e = ifc_find(c, index);
	uint32_t i;

	if (!e) {
		if ((!c->tab || (c->used + 1) * 2 > c->mask + 1) && ifc_grow(c) < 0)
			return -1;
		for (i = if_hash(index, c->mask); c->tab[i].index; i = (i + 1) & c->mask)
			;
		e = &c->tab[i];
		e->index = index;
		c->used++;
	}
	e->len = (uint32_t)strnlen(name, IFNAMSIZ - 1);
	memcpy(e->name, name, e->len);
	e->name[e->len] = '\0';
	e->gen = gen;
	return 0;
}

static void ifc_del_slot(struct ifcache *c, uint32_t i)
{
	uint32_t j = i;

	c->tab[i].index = 0;
	c->used--;
	/* Pull back later members of the probe run so lookups still find them. */
	for (;;) {
		uint32_t home;

		j = (j + 1) & c->mask;
		if (!c->tab[j].index)
			return;
		home = if_hash(c->tab[j].index, c->mask);
		/* Move j into the hole i unless its home lies cyclically in (i, j]. */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		c->tab[i] = c->tab[j];
		c->tab[j].index = 0;
		i = j;
	}
}

static void ifc_del(struct ifcache *c, uint32_t index)
{
	struct ifent *e = ifc_find(c, index);

	if (e)
		ifc_del_slot(c, (uint32_t)(e - c->tab));
}

/* After a full dump: forget interfaces it did not mention. */
static void ifc_sweep(struct ifcache *c, uint32_t gen)
{
	uint32_t i = 0;

	if (!c->tab)
		return;
	while (i <= c->mask) {
		if (c->tab[i].index && c->tab[i].gen != gen)
			ifc_del_slot(c, i);	/* slot i may now hold another entry: look again */
		else
			i++;
	}
}

/* ---- rtnetlink ---- */

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct decode_state *st = data;
	const struct ifinfomsg *ifi;
	const struct nlattr *attr;
	const char *name = NULL;

	if (nlh->nlmsg_type != RTM_NEWLINK && nlh->nlmsg_type != RTM_DELLINK)
		return MNL_CB_OK;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi))
		return MNL_CB_OK;
	ifi = mnl_nlmsg_get_payload(nlh);
	if (ifi->ifi_index <= 0)
		return MNL_CB_OK;
	if (nlh->nlmsg_type == RTM_DELLINK) {
		ifc_del(&st->ifc, (uint32_t)ifi->ifi_index);
		return MNL_CB_OK;
	}
	mnl_attr_for_each(attr, nlh, sizeof(*ifi)) {
		if (mnl_attr_get_type(attr) == IFLA_IFNAME && mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
			name = mnl_attr_get_str(attr);
	}
	if (name && ifc_set(&st->ifc, (uint32_t)ifi->ifi_index, name, st->gen) < 0)
		st->host->log(st->inst, SL_LOG_ERR, "interface cache: out of memory");
	return MNL_CB_OK;
}

static int request_dump(struct decode_state *st)
{
	char req[NLMSG_ALIGN(sizeof(struct nlmsghdr)) + NLMSG_ALIGN(sizeof(struct ifinfomsg))]
		__attribute__((aligned(4)));
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;

	if (st->dumping) {
		st->dump_again = true;
		return 0;
	}
	memset(req, 0, sizeof(req));
	nlh = mnl_nlmsg_put_header(req);
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = ++st->seq;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	if (mnl_socket_sendto(st->nl, nlh, nlh->nlmsg_len) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "RTM_GETLINK dump: %s", strerror(errno));
		return -1;
	}
	st->dumping = true;
	st->gen++;
	return 0;
}

/*
 * Read one datagram from the rtnetlink socket and apply it.  Returns 1 if
 * something was read, 0 when nothing was waiting, -1 on error.
 */
static int nl_read_one(struct decode_state *st, int flags)
{
	ssize_t n;
	int ret;

	n = recv(st->fd, st->buf, NL_BUF_SIZE, flags | MSG_TRUNC);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		if (errno == EINTR)
			return 1;
		if (errno == ENOBUFS) {
			/* Link events were lost: the cache may be stale, read it all again. */
			st->host->log(st->inst, SL_LOG_NOTICE, "link events lost (ENOBUFS): dumping interfaces again");
			request_dump(st);
			return 1;
		}
		st->host->log(st->inst, SL_LOG_ERR, "rtnetlink recv: %s", strerror(errno));
		return -1;
	}
	if (n > NL_BUF_SIZE) {
		st->host->log(st->inst, SL_LOG_WARNING, "rtnetlink message of %zd bytes truncated", n);
		request_dump(st);
		return 1;
	}
	ret = mnl_cb_run(st->buf, (size_t)n, 0, 0, link_cb, st);
	if (ret == MNL_CB_STOP || ret < 0) {
		/* NLMSG_DONE (or an error) of our dump. */
		if (ret < 0)
			st->host->log(st->inst, SL_LOG_WARNING, "RTM_GETLINK dump: %s", strerror(errno));
		if (st->dumping) {
			st->dumping = false;
			if (ret == MNL_CB_STOP)
				ifc_sweep(&st->ifc, st->gen);
			if (st->dump_again) {
				st->dump_again = false;
				request_dump(st);
			}
		}
	}
	return 1;
}

static void nl_ready(void *state, int fd, uint32_t events)
{
	struct decode_state *st = state;
	int i;

	/* Bounded, so a storm of link events cannot starve the loop. */
	for (i = 0; i < 64; i++)
		if (nl_read_one(st, MSG_DONTWAIT) <= 0)
			break;
	st->drained_in_vain = false;
}

/* ---- per batch ---- */

#ifdef SLUICE_COMMUNITY_ID
/*
 * The Community ID of a decoded record, into the batch arena (30 bytes, no
 * malloc).  Records without both addresses, or whose protocol has ports
 * that the packet does not show (a later fragment), get none.  Returns
 * false only when the arena is full.
 */
static bool set_community_id(struct decode_state *st, struct sl_batch *b, struct sl_record *r)
{
	struct sl_cid_tuple t;
	char id[SL_COMMUNITY_ID_LEN], *mem;
	uint8_t proto;

	if (!sl_has(r, SL_F_SRC_ADDR) || !sl_has(r, SL_F_DST_ADDR) || !sl_has(r, SL_F_IP_PROTO))
		return true;
	proto = (uint8_t)r->v[SL_F_IP_PROTO].u64;
	t.saddr = r->v[SL_F_SRC_ADDR].addr;
	t.daddr = r->v[SL_F_DST_ADDR].addr;
	t.proto = proto;
	t.has_ports = false;
	t.sport = t.dport = 0;
	if (proto == 1 || proto == 58) {
		if (sl_has(r, SL_F_ICMP_TYPE) && sl_has(r, SL_F_ICMP_CODE)) {
			t.has_ports = true;
			t.sport = (uint16_t)r->v[SL_F_ICMP_TYPE].u64;
			t.dport = (uint16_t)r->v[SL_F_ICMP_CODE].u64;
		}
	} else if (sl_has(r, SL_F_SPORT) && sl_has(r, SL_F_DPORT)) {
		t.has_ports = true;
		t.sport = (uint16_t)r->v[SL_F_SPORT].u64;
		t.dport = (uint16_t)r->v[SL_F_DPORT].u64;
	}
	if (!sl_community_id(&t, st->cid_seed, id))
		return true;
	mem = sl_batch_alloc(b, sizeof(id));
	if (!mem)
		return false;
	memcpy(mem, id, sizeof(id));
	sl_set_bytes(r, (sl_field)st->cid_field, mem, sizeof(id));
	return true;
}
#endif

static bool name_one(struct decode_state *st, struct sl_record *r, sl_field idx, sl_field name)
{
	const struct ifent *e;

	if (!sl_has(r, idx) || r->v[idx].u64 == 0)
		return true;
	e = ifc_find(&st->ifc, (uint32_t)r->v[idx].u64);
	if (!e) {
		sl_unset(r, name);
		return false;
	}
	/* Points into the cache: it only changes between batches, on the loop. */
	sl_set_bytes(r, name, e->name, e->len);
	return true;
}

static unsigned name_batch(struct decode_state *st, struct sl_batch *b)
{
	unsigned i, miss = 0;

	for (i = 0; i < b->count; i++) {
		struct sl_record *r = b->rec[i];

		miss += !name_one(st, r, SL_F_IFINDEX_IN, SL_F_IFNAME_IN);
		miss += !name_one(st, r, SL_F_IFINDEX_OUT, SL_F_IFNAME_OUT);
		miss += !name_one(st, r, SL_F_PHYSINDEX_IN, SL_F_PHYSNAME_IN);
		miss += !name_one(st, r, SL_F_PHYSINDEX_OUT, SL_F_PHYSNAME_OUT);
	}
	return miss;
}

static int decode_process(void *state, struct sl_batch *b)
{
	struct decode_state *st = state;
	uint64_t trunc = 0, malformed = 0, bad = 0, frag = 0, cid_no_room = 0;
	unsigned i, miss;

	for (i = 0; i < b->count; i++) {
		uint32_t f = sl_pkt_decode(b->rec[i], &st->opts);

		if (f) {
			trunc += !!(f & SL_DECODE_TRUNCATED);
			malformed += !!(f & SL_DECODE_MALFORMED);
			bad += !!(f & (SL_DECODE_BAD_IP_CSUM | SL_DECODE_BAD_L4_CSUM));
			frag += !!(f & SL_DECODE_FRAGMENT);
		}
#ifdef SLUICE_COMMUNITY_ID
		if (st->cid_field >= 0)
			cid_no_room += !set_community_id(st, b, b->rec[i]);
#endif
	}
	if (cid_no_room)
		st->host->counter_add(st->inst, st->c_cid_no_room, cid_no_room);
	if (st->nl) {
		miss = name_batch(st, b);
		/*
		 * The link event for a new interface may still wait in the socket
		 * when its first packets arrive: read it now, at most once until
		 * the next event, then name the batch again.
		 */
		if (miss && !st->drained_in_vain) {
			int got = 0, i2;

			for (i2 = 0; i2 < 64; i2++) {
				int ret = nl_read_one(st, MSG_DONTWAIT);

				if (ret <= 0)
					break;
				got = 1;
			}
			if (got)
				miss = name_batch(st, b);
			st->drained_in_vain = !got || miss;
		}
		if (miss)
			st->host->counter_add(st->inst, st->c_ifname_miss, miss);
	}
	if (trunc)
		st->host->counter_add(st->inst, st->c_truncated, trunc);
	if (malformed)
		st->host->counter_add(st->inst, st->c_malformed, malformed);
	if (bad)
		st->host->counter_add(st->inst, st->c_bad_csum, bad);
	if (frag)
		st->host->counter_add(st->inst, st->c_fragment, frag);
	return 0;
}

/* ---- lifecycle ---- */

static int decode_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			    void **state)
{
	const struct decode_cfg *cfg = config;
	struct decode_state *st = sl_state_new(struct decode_state, host, inst, config);

	if (!st)
		return -1;
	st->opts.checksums = cfg->checksums;
	st->fd = -1;
	st->cid_field = -1;
	if (cfg->community_id) {
#ifdef SLUICE_COMMUNITY_ID
		st->cid_field = host->field_id(inst, "community_id");
		st->cid_seed = (uint16_t)cfg->community_id_seed;
#else
		host->config_error(inst, "community_id",
				   "this build has no Community ID (built with SLUICE_WITH_COMMUNITY_ID=OFF)");
		free(st);
		return -1;
#endif
	}
	st->c_truncated = host->counter_new(inst, "truncated");
	st->c_malformed = host->counter_new(inst, "malformed");
	st->c_bad_csum = host->counter_new(inst, "bad_checksum");
	st->c_fragment = host->counter_new(inst, "fragments");
	st->c_ifname_miss = host->counter_new(inst, "ifname_unknown");
	st->c_cid_no_room = host->counter_new(inst, "community_id_no_room");
	*state = st;
	return 0;
}

static void decode_stop(void *state);

static int decode_start(void *state)
{
	struct decode_state *st = state;
	struct timeval tv = { .tv_sec = 5 };
	int rcvbuf = 1 << 20;

	if (!st->cfg->ifnames)
		return 0;
	st->buf = malloc(NL_BUF_SIZE);
	st->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!st->buf || !st->nl) {
		st->host->log(st->inst, SL_LOG_ERR, "rtnetlink socket: %s", strerror(errno));
		goto fail;
	}
	st->fd = mnl_socket_get_fd(st->nl);
	/* A burst of link changes (containers starting) must not overflow. */
	setsockopt(st->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	/* Subscribe before the dump, so no change falls between the two. */
	if (mnl_socket_bind(st->nl, RTMGRP_LINK, MNL_SOCKET_AUTOPID) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "rtnetlink bind: %s", strerror(errno));
		goto fail;
	}
	/* The start-up dump is read synchronously, with a timeout against a wedged kernel. */
	setsockopt(st->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (request_dump(st) < 0)
		goto fail;
	while (st->dumping) {
		if (nl_read_one(st, 0) <= 0) {
			st->host->log(st->inst, SL_LOG_ERR, "no answer to the interface dump");
			goto fail;
		}
	}
	if (st->host->watch_fd(st->inst, st->fd, EPOLLIN, nl_ready, st) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot watch the rtnetlink socket");
		goto fail;
	}
	st->watched = true;
	st->host->log(st->inst, SL_LOG_DEBUG, "%u interfaces known", st->ifc.used);
	return 0;
fail:
	decode_stop(st);
	return -1;
}

static void decode_stop(void *state)
{
	struct decode_state *st = state;

	sl_nl_sock_close(st->host, st->inst, &st->nl, &st->fd, &st->watched);
	st->dumping = false;
	st->dump_again = false;
	free(st->buf);
	st->buf = NULL;
}

static void decode_destroy(void *state)
{
	struct decode_state *st = state;

	free(st->ifc.tab);
	free(st);
}

static const struct sl_option decode_options[] = {
	SL_OPT_BOOL("checksums", struct decode_cfg, checksums, "false",
		    "verify IPv4 header and TCP/UDP/ICMP checksums of complete packets"),
	SL_OPT_BOOL("ifnames", struct decode_cfg, ifnames, "true",
		    "name interfaces of ifindex_*/physindex_* (rtnetlink cache)"),
	SL_OPT_BOOL("community_id", struct decode_cfg, community_id, "false",
		    "set community_id, the Community ID v1 flow hash (one SHA-1 per packet)"),
	SL_OPT_INT("community_id_seed", struct decode_cfg, community_id_seed, "0", 0, 65535,
		   "seed of the Community ID hash (the same on every sensor that is compared)"),
	SL_OPT_END
};

static const struct sl_field_decl decode_needs[] = {
	SL_FIELD_DECL(SL_F_PACKET),
	SL_FIELD_END
};

static const struct sl_field_decl decode_provides[] = {
	SL_FIELD_DECL(SL_F_IFNAME_IN),
	SL_FIELD_DECL(SL_F_IFNAME_OUT),
	SL_FIELD_DECL(SL_F_PHYSNAME_IN),
	SL_FIELD_DECL(SL_F_PHYSNAME_OUT),
	SL_FIELD_DECL(SL_F_MAC_SRC),
	SL_FIELD_DECL(SL_F_MAC_DST),
	SL_FIELD_DECL(SL_F_ETH_TYPE),
	SL_FIELD_DECL(SL_F_VLAN_ID),
	SL_FIELD_DECL(SL_F_IP_VERSION),
	SL_FIELD_DECL(SL_F_SRC_ADDR),
	SL_FIELD_DECL(SL_F_DST_ADDR),
	SL_FIELD_DECL(SL_F_IP_LEN),
	SL_FIELD_DECL(SL_F_IP_HDRLEN),
	SL_FIELD_DECL(SL_F_IP_TOS),
	SL_FIELD_DECL(SL_F_IP_TTL),
	SL_FIELD_DECL(SL_F_IP_ID),
	SL_FIELD_DECL(SL_F_IP_FRAG),
	SL_FIELD_DECL(SL_F_IP6_FLOWLABEL),
	SL_FIELD_DECL(SL_F_IP_PROTO),
	SL_FIELD_DECL(SL_F_IP_OPTIONS),
	SL_FIELD_DECL(SL_F_SPORT),
	SL_FIELD_DECL(SL_F_DPORT),
	SL_FIELD_DECL(SL_F_TCP_SEQ),
	SL_FIELD_DECL(SL_F_TCP_ACK),
	SL_FIELD_DECL(SL_F_TCP_WINDOW),
	SL_FIELD_DECL(SL_F_TCP_FLAGS),
	SL_FIELD_DECL(SL_F_TCP_URGP),
	SL_FIELD_DECL(SL_F_TCP_OPTIONS),
	SL_FIELD_DECL(SL_F_UDP_LEN),
	SL_FIELD_DECL(SL_F_ICMP_TYPE),
	SL_FIELD_DECL(SL_F_ICMP_CODE),
	SL_FIELD_DECL(SL_F_ICMP_ID),
	SL_FIELD_DECL(SL_F_ICMP_SEQ),
	SL_FIELD_DECL(SL_F_ICMP_MTU),
	SL_FIELD_DECL(SL_F_ICMP_GATEWAY),
	SL_FIELD_DECL(SL_F_ICMP_PARAM),
	SL_FIELD_DECL(SL_F_IPSEC_SPI),
	SL_FIELD_DECL(SL_F_ARP_OP),
	SL_FIELD_DECL(SL_F_ARP_SHA),
	SL_FIELD_DECL(SL_F_ARP_SPA),
	SL_FIELD_DECL(SL_F_ARP_THA),
	SL_FIELD_DECL(SL_F_ARP_TPA),
	SL_FIELD_DECL(SL_F_PAYLOAD),
	SL_FIELD_DECL(SL_F_DECODE_FLAGS),
	{"community_id", SL_T_STRING},	/* registered: "1:" + base64 of the SHA-1 */
	SL_FIELD_END
};

static const struct sl_plugin decode_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_FILTER,
	.name = "decode",
	.description = "decode link, IP and transport headers of the packet; name interfaces",
	.config_size = sizeof(struct decode_cfg),
	.options = decode_options,
	.needs = decode_needs,
	.provides = decode_provides,
	.configure = decode_configure,
	.start = decode_start,
	.process = decode_process,
	.stop = decode_stop,
	.destroy = decode_destroy,
};

SLUICE_PLUGIN(decode_plugin)
