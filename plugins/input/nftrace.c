/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nftrace: nftables trace events (`meta nftrace set 1`), the events
 * `nft monitor trace` prints: one record per rule, return and policy a
 * traced packet meets, saying which table, chain and rule decided what.
 *
 * Reading is nflog's (plugins/common/nlsock.h): one buffer, records point
 * into it, the buffer is reused only after their batch was emitted.  The
 * packet's network and transport headers (the kernel sends at most 40 and
 * 20 bytes, as two attributes) are put back to back in the batch arena as
 * SL_F_PACKET, the link header as SL_F_HWHDR, so decode, json, logline
 * and pcap treat a trace record like a logged packet.  Only the first
 * event of a packet in each base chain carries the headers.
 *
 * Rule texts and chain hooks come from a dump of the ruleset
 * (plugins/common/nft_rules.c, libnftables and libnftnl), made at start and again before
 * the next lookup once the ruleset changed: the socket also joins
 * NFNLGRP_NFTABLES, whose NFT_MSG_NEWGEN ends every committed change, and
 * arrives before any trace event of a packet that met the new rules.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>

#include <sluice/plugin.h>

#include "netns_set.h"
#include "nft_rules.h"
#include "nftrace_attrs.h"
#include "nlsock.h"
#include "plugin_state.h"
#include "traceline_fmt.h"

#define MAX_DGRAMS_PER_WAKEUP 256
/* A trace event is a few hundred bytes; the kernel sends one per datagram. */
#define MAX_DGRAM (64 * 1024)
#define BUFFER_DGRAMS 16
/* Arena room one record may take: network + transport headers. */
#define PACKET_ROOM 128

struct nftrace_cfg {
	uint64_t netlink_buffer;
	bool rule_text;
	const char *netns;
};

/* Ids of the fields nftrace registers. */
struct nftrace {
	SL_STATE_HEAD(struct nftrace_cfg);

	struct sl_nl_reader rd;
	struct sl_netns_one ns;	/* netns: where the socket is made and the ruleset read */
	struct sl_traceline_fields f;	/* the trace fields' ids */
	int f_nfproto;
	struct sl_nft_rules *rules;
	bool rules_stale;	/* the ruleset changed since the last dump */
	bool rules_check;	/* change events may have been lost: compare generations */
	int c_events, c_chain_end, c_rule_unknown, c_ruleset_dumps;
};

static const struct sl_option nftrace_options[] = {
	SL_OPT_SIZE("netlink_buffer", struct nftrace_cfg, netlink_buffer, "8MiB", 64 * 1024,
		    512 * 1024 * 1024, "socket receive buffer (SO_RCVBUFFORCE, else SO_RCVBUF)"),
	SL_OPT_BOOL("rule_text", struct nftrace_cfg, rule_text, "true",
		    "look up each rule's text in a dump of the ruleset (rule_text field)"),
	SL_OPT_STR("netns", struct nftrace_cfg, netns, NULL,
		   "the network namespace to trace instead of sluice's own: a name under /run/netns "
		   "or an absolute path (/proc/PID/ns/net); its ruleset gives the rule texts; "
		   "records carry `netns`"),
	SL_OPT_END
};

static const struct sl_field_decl nftrace_provides[] = {
	SL_FIELD_DECL(SL_F_PACKET), SL_FIELD_DECL(SL_F_HWHDR), SL_FIELD_DECL(SL_F_HWTYPE),
	SL_FIELD_DECL(SL_F_HW_PROTOCOL), SL_FIELD_DECL(SL_F_FAMILY), SL_FIELD_DECL(SL_F_HOOK),
	SL_FIELD_DECL(SL_F_MARK), SL_FIELD_DECL(SL_F_IFINDEX_IN), SL_FIELD_DECL(SL_F_IFINDEX_OUT),
	SL_FIELD_DECL(SL_F_TIMESTAMP),
	{"trace_id", SL_T_U64},
	{"nft_table", SL_T_STRING},
	{"nft_chain", SL_T_STRING},
	{"rule_handle", SL_T_U64},
	{"trace_type", SL_T_STRING},
	{"verdict", SL_T_STRING},
	{"jump_target", SL_T_STRING},
	{"rule_text", SL_T_STRING},
	{"nfproto", SL_T_U64},
	{"netns", SL_T_STRING},	/* netns: the namespace's label */
	SL_FIELD_END
};

static void set_str(struct sl_record *r, int f, const char *s, uint32_t len)
{
	if (f >= 0 && s)
		sl_set_bytes(r, (sl_field)f, s, len);
}

static void set_u64(struct sl_record *r, int f, uint64_t v)
{
	if (f >= 0)
		sl_set_u64(r, (sl_field)f, v);
}

/*
 * SL_F_PACKET: network and transport header back to back in the arena,
 * when the first ends where the second begins (an IPv4 header of ihl*4
 * bytes, an IPv6 header without extension headers); else the network
 * header alone, which decode reads as far as it goes.
 */
static void set_packet(struct sl_batch *b, struct sl_record *r, const struct sl_nftrace *t)
{
	const uint8_t *nh = t->nh.ptr;
	uint32_t nlen = t->nh.len;
	bool joined = false;
	uint8_t *p;

	if (!(t->has & SL_NFTRACE_NH) || !nlen)
		return;
	if (t->has & SL_NFTRACE_TH && t->th.len) {
		if (nh[0] >> 4 == 4)
			joined = (uint32_t)(nh[0] & 15) * 4 == nlen;
		else if (nh[0] >> 4 == 6 && nlen == 40)
			joined = nh[6] == 6 || nh[6] == 17 || nh[6] == 58 || nh[6] == 132 || nh[6] == 136;
	}
	if (!joined || nlen + t->th.len > PACKET_ROOM || !(p = sl_batch_alloc(b, nlen + t->th.len))) {
		sl_set_bytes(r, SL_F_PACKET, nh, nlen);
		return;
	}
	memcpy(p, nh, nlen);
	memcpy(p + nlen, t->th.ptr, t->th.len);
	sl_set_bytes(r, SL_F_PACKET, p, nlen + t->th.len);
}

/* The hook of a base chain, from the ruleset dump. */
static void set_hook(struct nftrace *st, struct sl_record *r, const struct sl_nftrace *t)
{
	int hook;

	if (!st->rules || !(t->has & SL_NFTRACE_TABLE) || !(t->has & SL_NFTRACE_CHAIN))
		return;
	hook = sl_nft_rules_hook(st->rules, t->family, t->table.ptr, t->table.len, t->chain.ptr,
				 t->chain.len);
	if (hook >= 0)
		sl_set_u64(r, SL_F_HOOK, (uint64_t)hook);
}

/* The rule's text, from the ruleset dump; counted when the dump lacks it. */
static void set_rule_text(struct nftrace *st, struct sl_record *r, const struct sl_nftrace *t)
{
	const char *text;
	uint32_t len;

	if (!(t->has & SL_NFTRACE_TABLE) || !(t->has & SL_NFTRACE_CHAIN) || !(t->has & SL_NFTRACE_HANDLE))
		return;
	text = sl_nft_rules_text(st->rules, t->family, t->table.ptr, t->table.len, t->chain.ptr,
				 t->chain.len, t->handle, &len);
	if (text)
		set_str(r, st->f.rule, text, len);
	else
		st->host->counter_add(st->inst, st->c_rule_unknown, 1);
}

/* What both records of an event carry: who traced what, where. */
static void set_common(struct nftrace *st, struct sl_record *r, const struct sl_nftrace *t,
		       const struct sl_time *rx)
{
	const struct sl_traceline_fields *f = &st->f;

	sl_set_u64(r, SL_F_FAMILY, t->family);
	sl_set_time(r, SL_F_TIMESTAMP, rx->sec, rx->nsec);
	sl_netns_one_tag(&st->ns, r);
	set_u64(r, f->id, t->id);
	if (t->has & SL_NFTRACE_TABLE)
		set_str(r, f->table, t->table.ptr, t->table.len);
	if (t->has & SL_NFTRACE_CHAIN)
		set_str(r, f->chain, t->chain.ptr, t->chain.len);
	if (t->has & SL_NFTRACE_IIF)
		sl_set_u64(r, SL_F_IFINDEX_IN, t->iif);
	if (t->has & SL_NFTRACE_OIF)
		sl_set_u64(r, SL_F_IFINDEX_OUT, t->oif);
	if (t->has & SL_NFTRACE_MARK)
		sl_set_u64(r, SL_F_MARK, t->mark);
	if (t->has & SL_NFTRACE_NFPROTO) {
		set_u64(r, st->f_nfproto, t->nfproto);
		if (t->nfproto == NFPROTO_IPV4 || t->nfproto == NFPROTO_IPV6)
			sl_set_u64(r, SL_F_HW_PROTOCOL, t->nfproto == NFPROTO_IPV4 ? 0x0800 : 0x86dd);
	}
	if (st->rules)
		set_hook(st, r, t);
}

/* The packet record (trace_type "packet"): nft's "packet:" line. */
static void fill_packet(struct nftrace *st, struct sl_batch *b, struct sl_record *r,
			const struct sl_nftrace *t, const struct sl_time *rx)
{
	set_common(st, r, t, rx);
	set_str(r, st->f.type, "packet", 6);
	if (t->has & SL_NFTRACE_LL && t->ll.len) {
		sl_set_bytes(r, SL_F_HWHDR, t->ll.ptr, t->ll.len);
		if (t->has & SL_NFTRACE_IIFTYPE)
			sl_set_u64(r, SL_F_HWTYPE, t->iiftype);
	}
	set_packet(b, r, t);
}

/* The event record: rule, return or policy, and its verdict. */
static void fill_event(struct nftrace *st, struct sl_record *r, const struct sl_nftrace *t,
		       const struct sl_time *rx)
{
	const struct sl_traceline_fields *f = &st->f;
	const char *name;
	int32_t verdict;

	set_common(st, r, t, rx);
	if (t->has & SL_NFTRACE_HANDLE)
		set_u64(r, f->handle, t->handle);
	if (st->rules)
		set_rule_text(st, r, t);
	if ((name = sl_nftrace_type_name(t->type)))
		set_str(r, f->type, name, (uint32_t)strlen(name));
	/* a policy event's verdict is the policy */
	verdict = t->has & SL_NFTRACE_POLICY ? (int32_t)t->policy : t->verdict;
	if (t->has & (SL_NFTRACE_POLICY | SL_NFTRACE_VERDICT) &&
	    (name = sl_nftrace_verdict_name(verdict)))
		set_str(r, f->verdict, name, (uint32_t)strlen(name));
	if (t->has & SL_NFTRACE_JUMP)
		set_str(r, f->jump, t->jump.ptr, t->jump.len);
}

/*
 * Room for two records and a packet in the batch x->b, emitting a full
 * one: false when no batch could be had.
 */
static bool room_for_event(struct nftrace *st, struct sl_batch **bp)
{
	struct sl_batch *b = *bp;

	if (b && (b->capacity - b->filled < 2 || sl_batch_room(b) < PACKET_ROOM + 8)) {
		st->host->emit(st->inst, b);
		*bp = NULL;
	}
	if (!*bp && !(*bp = st->host->batch_get(st->inst)))
		return false;
	return (*bp)->capacity - (*bp)->filled >= 2;
}

/* One wake-up's reading: the batch being filled, counts added once at its end. */
struct nftrace_rx {
	struct nftrace *st;
	struct sl_batch *b;
	uint64_t events, chain_end;
};

static void reload_rules(struct nftrace *st)
{
	int err = sl_nft_rules_load(st->rules);

	st->host->counter_add(st->inst, st->c_ruleset_dumps, 1);
	if (err) {
		const char *msg = sl_nft_rules_error(st->rules);

		st->host->log(st->inst, SL_LOG_WARNING,
			      "cannot dump the ruleset: %s%s%s (rule texts stay as they were)",
			      strerror(-err), *msg ? ": " : "", msg);
		st->host->error_add(st->inst, 1);
	}
	st->rules_stale = false;
}

static inline __attribute__((always_inline)) bool
parse_msg(void *arg, const struct nlmsghdr *nlh, const struct sl_time *rx)
{
	struct nftrace_rx *x = arg;
	struct nftrace *st = x->st;
	struct sl_nftrace t;

	if (nlh->nlmsg_type >> 8 != NFNL_SUBSYS_NFTABLES)
		return true;
	if ((nlh->nlmsg_type & 0xff) != NFT_MSG_TRACE) {
		/* the end of a committed ruleset change */
		if ((nlh->nlmsg_type & 0xff) == NFT_MSG_NEWGEN)
			st->rules_stale = true;
		return true;
	}
	x->events++;
	if (st->rules_check && st->cfg->rule_text) {
		st->rules_check = false;
		if (sl_nft_rules_changed(st->rules) != 0)
			st->rules_stale = true;
	}
	if (st->rules_stale && st->cfg->rule_text) {
		/* records of the batch point into the old texts: hand them on first */
		if (x->b) {
			st->host->emit(st->inst, x->b);
			x->b = NULL;
		}
		reload_rules(st);
	}
	if (sl_nftrace_parse(&t, mnl_nlmsg_get_payload(nlh), nlh->nlmsg_len - NLMSG_HDRLEN) < 0) {
		sl_nl_malformed(&st->rd);
		return true;
	}
	/*
	 * The end of a chain's rules comes as a rule event without a rule
	 * (continue), before the policy or return event that says the same;
	 * nft monitor trace prints nothing for it, and neither do we.
	 */
	if (t.type == NFT_TRACETYPE_RULE && !(t.has & SL_NFTRACE_HANDLE)) {
		x->chain_end++;
		if (!(t.has & (SL_NFTRACE_NH | SL_NFTRACE_LL)))
			return true;
	}
	if (!room_for_event(st, &x->b))
		return false;
	if (t.has & (SL_NFTRACE_NH | SL_NFTRACE_LL))
		fill_packet(st, x->b, sl_batch_add(x->b), &t, rx);
	if (t.type != NFT_TRACETYPE_RULE || t.has & SL_NFTRACE_HANDLE)
		fill_event(st, sl_batch_add(x->b), &t, rx);
	return true;
}

static void hand_on(void *arg)
{
	struct nftrace_rx *x = arg;

	if (x->b && x->b->count) {
		x->st->host->emit(x->st->inst, x->b);
		x->b = NULL;
	}
}

/* Lost events may have held a NEWGEN: check the generation before the next lookup. */
static void lost(void *arg)
{
	struct nftrace_rx *x = arg;

	x->st->rules_check = true;
}

static void nftrace_readable(void *state, int fd, uint32_t events)
{
	struct nftrace *st = state;
	struct nftrace_rx x = {.st = st};

	(void)fd;
	(void)events;
	if (sl_nl_receive(&st->rd, MAX_DGRAMS_PER_WAKEUP, parse_msg, hand_on, lost, &x) ==
	    SL_NL_STOPPED) {
		st->host->log(st->inst, SL_LOG_ERR, "out of memory for a batch: events lost");
		st->host->error_add(st->inst, 1);
	}
	if (x.b)
		st->host->emit(st->inst, x.b);
	if (x.events)
		st->host->counter_add(st->inst, st->c_events, x.events);
	if (x.chain_end)
		st->host->counter_add(st->inst, st->c_chain_end, x.chain_end);
}

static int nftrace_configure(const struct sl_host *host, struct sl_instance *inst,
			     const void *config, void **state)
{
	struct nftrace *st = sl_state_new(struct nftrace, host, inst, config);

	if (!st)
		return -1;
	sl_nl_reader_init(&st->rd, host, inst);
	if (sl_netns_one_configure(&st->ns, host, inst, st->cfg->netns) < 0) {
		free(st);
		return -1;
	}
	st->rd.enobufs_hint = " (lost counts the messages)";
	st->c_events = host->counter_new(inst, "events");
	st->rd.c_enobufs = host->counter_new(inst, "enobufs");
	st->rd.c_malformed = host->counter_new(inst, "malformed");
	st->c_chain_end = host->counter_new(inst, "chain_end");
	st->c_rule_unknown = host->counter_new(inst, "rule_unknown");
	st->c_ruleset_dumps = host->counter_new(inst, "ruleset_dumps");
	/* a trace event is one datagram: the kernel's drop count (ruleset notifications too) */
	st->rd.c_lost = host->counter_new(inst, "lost");
	st->f = sl_traceline_fields_lookup(host, inst);
	st->f_nfproto = host->field_id(inst, "nfproto");
	*state = st;
	return 0;
}

static int join(struct nftrace *st, int group, const char *what)
{
	if (mnl_socket_setsockopt(st->rd.nl, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot join %s: %s", what, strerror(errno));
		return -1;
	}
	return 0;
}

static int nftrace_start(void *state)
{
	struct nftrace *st = state;

	st->rd.maxdg = MAX_DGRAM;
	st->rd.bufsize = BUFFER_DGRAMS * MAX_DGRAM;
	if (sl_netns_one_open(&st->ns, st->host, st->inst) < 0 ||
	    sl_nl_open_in(&st->rd, st->cfg->netlink_buffer, st->ns.fd) < 0)
		return -1;
	if (join(st, NFNLGRP_NFTRACE, "NFNLGRP_NFTRACE (needs CAP_NET_ADMIN and nf_tables)") < 0)
		return -1;
	if (st->cfg->rule_text) {
		if (join(st, NFNLGRP_NFTABLES, "NFNLGRP_NFTABLES") < 0)
			return -1;
		if (!(st->rules = sl_nft_rules_new())) {
			st->host->log(st->inst, SL_LOG_ERR, "out of memory");
			return -1;
		}
		sl_nft_rules_set_netns(st->rules, st->ns.fd);	/* open until stop */
		/* joined first, dumped second: a change in between marks it stale */
		reload_rules(st);
	}
	if (sl_nl_watch(&st->rd, nftrace_readable, st) < 0)
		return -1;
	st->host->log(st->inst, SL_LOG_INFO, "listening to nftables trace events (%zu rules known%s%s)",
		      st->rules ? sl_nft_rules_count(st->rules) : (size_t)0,
		      st->ns.path ? ", netns " : "", st->ns.path ? st->ns.path : "");
	return 0;
}

static int nftrace_flush(void *state)
{
	struct nftrace *st = state;

	/* what the socket holds at exit; bounded, as events may keep coming */
	if (st->rd.nl)
		for (unsigned i = 0; i < 16; i++)
			nftrace_readable(st, st->rd.fd, EPOLLIN);
	return 0;
}

static void nftrace_stop(void *state)
{
	struct nftrace *st = state;

	sl_nl_close(&st->rd);
	sl_nft_rules_free(st->rules);
	st->rules = NULL;
	sl_netns_one_close(&st->ns);
}

static void nftrace_destroy(void *state)
{
	struct nftrace *st = state;

	if (st)
		sl_netns_one_free(&st->ns);
	free(state);
}

static const struct sl_plugin nftrace_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_INPUT,
	.name = "nftrace",
	.description = "nftables trace events (meta nftrace set 1): which rule decided, as nft monitor trace",
	.config_size = sizeof(struct nftrace_cfg),
	.options = nftrace_options,
	.provides = nftrace_provides,
	.configure = nftrace_configure,
	.start = nftrace_start,
	.flush = nftrace_flush,
	.stop = nftrace_stop,
	.destroy = nftrace_destroy,
};

SLUICE_PLUGIN(nftrace_plugin)
