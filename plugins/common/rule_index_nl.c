/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rule index read from nf_tables' netlink messages (see rule_index_nl.h). */
#include "rule_index_nl.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>

#include "nl_tlv.h"
#include "names.h"
#include "rule_index_int.h"

/* userdata's comment (libnftnl's NFTNL_UDATA_RULE_COMMENT) */
#define UDATA_RULE_COMMENT 0

struct vmap {
	uint8_t family;
	char *table, *name;
};

struct sl_rule_nl {
	struct build b;
	struct vmap *maps;
	size_t nmaps, capmaps;
	const char *err;	/* the first message that did not parse */
};

/* The attributes of one level, by type (v NULL: absent). */
struct attr {
	const uint8_t *v;
	size_t n;
};

struct table {
	struct attr *a;
	unsigned max;
};

static int put_attr(void *ctx, unsigned type, const uint8_t *v, size_t n)
{
	struct table *t = ctx;

	if (type <= t->max)
		t->a[type] = (struct attr){v, n};
	return 0;
}

/* a[0..max] from the attributes of p[0..len): 0, or -1 when they do not parse. */
static int attrs(const uint8_t *p, size_t len, struct attr *a, unsigned max)
{
	struct table t = {a, max};

	memset(a, 0, (max + 1) * sizeof(*a));
	return sl_tlv_walk(p, len, &t, put_attr);
}

#define ATTRS(at, a) attrs((at).v, (at).n, (a), sizeof(a) / sizeof((a)[0]) - 1)

/* A string attribute (NUL-terminated within it); NULL if absent or not one. */
static const char *str(struct attr a)
{
	return a.v && a.n && memchr(a.v, '\0', a.n) ? (const char *)a.v : NULL;
}

static bool be32(struct attr a, uint32_t *v)
{
	if (!a.v || a.n < 4)
		return false;
	*v = sl_rd_be32(a.v);
	return true;
}

/* A verdict (NFTA_DATA_VERDICT's contents): its code, and its chain for a jump or goto. */
static int verdict(struct attr data, int32_t *code, const char **chain)
{
	struct attr d[NFTA_DATA_MAX + 1], v[NFTA_VERDICT_MAX + 1];
	uint32_t c;

	*chain = NULL;
	if (ATTRS(data, d) < 0 || !d[NFTA_DATA_VERDICT].v || ATTRS(d[NFTA_DATA_VERDICT], v) < 0 ||
	    !be32(v[NFTA_VERDICT_CODE], &c))
		return -1;
	*code = (int32_t)c;
	if (*code == NFT_JUMP || *code == NFT_GOTO)
		*chain = str(v[NFTA_VERDICT_CHAIN]);
	return 0;
}

static int read_chain(struct sl_rule_nl *rn, int pf, struct attr *a)
{
	struct attr h[NFTA_HOOK_MAX + 1];
	const char *table = str(a[NFTA_CHAIN_TABLE]), *name = str(a[NFTA_CHAIN_NAME]);
	uint32_t hook = UINT32_MAX;

	if (!table || !name)
		return -1;
	if (a[NFTA_CHAIN_HOOK].v && (ATTRS(a[NFTA_CHAIN_HOOK], h) < 0 ||
				     !be32(h[NFTA_HOOK_HOOKNUM], &hook)))
		return -1;
	sl_ri_add_chain(&rn->b, pf, table, name, hook < 32 ? (int)hook : -1);
	return 0;
}

static int read_set(struct sl_rule_nl *rn, uint8_t family, struct attr *a)
{
	const char *table = str(a[NFTA_SET_TABLE]), *name = str(a[NFTA_SET_NAME]);
	uint32_t flags = 0, type = 0;
	struct vmap *m;

	if (!table || !name)
		return -1;
	if (!be32(a[NFTA_SET_FLAGS], &flags) || !(flags & NFT_SET_MAP) ||
	    !be32(a[NFTA_SET_DATA_TYPE], &type) || type != NFT_DATA_VERDICT)
		return 0;	/* not a verdict map */
	if (!SL_RI_GROW(&rn->b, rn->maps, rn->nmaps, rn->capmaps))
		return 0;
	m = &rn->maps[rn->nmaps++];
	m->family = family;
	m->table = sl_ri_dup(&rn->b, table);
	m->name = sl_ri_dup(&rn->b, name);
	return 0;
}

/* A set's elements: the jump and goto targets of a verdict map's. */
static int read_elems(struct sl_rule_nl *rn, int pf, struct attr *a)
{
	const char *table = str(a[NFTA_SET_ELEM_LIST_TABLE]), *set = str(a[NFTA_SET_ELEM_LIST_SET]);
	const uint8_t *p = a[NFTA_SET_ELEM_LIST_ELEMENTS].v;
	size_t len = a[NFTA_SET_ELEM_LIST_ELEMENTS].n;

	if (!table || !set)
		return -1;
	while (p && len >= SL_TLV_HDRLEN) {
		size_t alen = sl_rd_h16(p);
		struct attr e[NFTA_SET_ELEM_MAX + 1];
		const char *to;
		int32_t code;

		if (alen < SL_TLV_HDRLEN || alen > len ||
		    attrs(p + SL_TLV_HDRLEN, alen - SL_TLV_HDRLEN, e, NFTA_SET_ELEM_MAX) < 0)
			return -1;
		if (e[NFTA_SET_ELEM_DATA].v) {
			if (verdict(e[NFTA_SET_ELEM_DATA], &code, &to) < 0)
				return -1;
			if (to)
				sl_ri_add_map_target(&rn->b, pf, table, set, to);
		}
		if (!sl_tlv_next(&p, &len, alen))
			break;
	}
	return 0;
}

/* What a rule's expressions say: its verdict so far (the last expression's). */
struct rule_scan {
	struct sl_rule_nl *rn;
	int pf;
	const char *table;
	size_t chain;
	char verdict[NFT_CHAIN_MAXNAMELEN + 8];	/* "" none */
};

static int read_log(struct rule_scan *s, struct attr data)
{
	struct attr l[NFTA_LOG_MAX + 1];
	const char *prefix;

	if (ATTRS(data, l) < 0)
		return -1;
	if (!l[NFTA_LOG_GROUP].v)
		return 0;	/* to the kernel's log, not to a group */
	if (l[NFTA_LOG_GROUP].n < 2)
		return -1;
	/* the kernel's prefix is a C string */
	prefix = l[NFTA_LOG_PREFIX].v ? (const char *)l[NFTA_LOG_PREFIX].v : "";
	sl_ri_add_log(&s->rn->b, s->chain, (uint16_t)sl_rd_be16(l[NFTA_LOG_GROUP].v), prefix,
		      (uint32_t)strnlen(prefix, l[NFTA_LOG_PREFIX].n));
	return 0;
}

static int read_immediate(struct rule_scan *s, struct attr data)
{
	struct attr im[NFTA_IMMEDIATE_MAX + 1];
	uint32_t dreg;
	int32_t code;
	const char *to;

	if (ATTRS(data, im) < 0)
		return -1;
	if (!be32(im[NFTA_IMMEDIATE_DREG], &dreg) || dreg != NFT_REG_VERDICT)
		return 0;	/* a value for a register */
	if (verdict(im[NFTA_IMMEDIATE_DATA], &code, &to) < 0)
		return -1;
	if (code == NF_ACCEPT || code == NF_DROP)
		snprintf(s->verdict, sizeof(s->verdict), "%s", code == NF_ACCEPT ? "accept" : "drop");
	if (to) {
		sl_ri_add_edge(&s->rn->b, s->chain, s->pf, s->table, to, false);
		snprintf(s->verdict, sizeof(s->verdict), "%s %s",
			 code == NFT_JUMP ? "jump" : "goto", to);
	}
	return 0;
}

/* A lookup whose result is the verdict: a verdict map's jumps and gotos. */
static int read_lookup(struct rule_scan *s, struct attr data)
{
	struct attr lk[NFTA_LOOKUP_MAX + 1];
	uint32_t dreg;
	const char *set;

	if (ATTRS(data, lk) < 0)
		return -1;
	set = str(lk[NFTA_LOOKUP_SET]);
	if (set && be32(lk[NFTA_LOOKUP_DREG], &dreg) && dreg == NFT_REG_VERDICT)
		sl_ri_add_edge(&s->rn->b, s->chain, s->pf, s->table, set, true);
	return 0;
}

/* One expression (NFTA_LIST_ELEM's contents). */
static int read_expr(struct rule_scan *s, const uint8_t *p, size_t len)
{
	struct attr e[NFTA_EXPR_MAX + 1];
	const char *name;

	if (attrs(p, len, e, NFTA_EXPR_MAX) < 0 || !(name = str(e[NFTA_EXPR_NAME])))
		return -1;
	s->verdict[0] = '\0';	/* the verdict is the last expression */
	if (!strcmp(name, "log"))
		return read_log(s, e[NFTA_EXPR_DATA]);
	if (!strcmp(name, "immediate"))
		return read_immediate(s, e[NFTA_EXPR_DATA]);
	if (!strcmp(name, "lookup"))
		return read_lookup(s, e[NFTA_EXPR_DATA]);
	if (!strcmp(name, "reject"))
		snprintf(s->verdict, sizeof(s->verdict), "reject");
	return 0;
}

/* userdata's comment; NULL if none. */
static const char *comment_of(struct attr u)
{
	const uint8_t *p = u.v;
	size_t left = u.n;

	while (p && left >= 2 && (size_t)p[1] + 2 <= left) {
		if (p[0] == UDATA_RULE_COMMENT && p[1] && !p[2 + p[1] - 1])
			return (const char *)p + 2;
		left -= (size_t)p[1] + 2;
		p += (size_t)p[1] + 2;
	}
	return NULL;
}

static int read_rule(struct sl_rule_nl *rn, int pf, struct attr *a)
{
	struct rule_scan s = {.rn = rn, .pf = pf, .table = str(a[NFTA_RULE_TABLE])};
	const char *chain = str(a[NFTA_RULE_CHAIN]), *family = sl_nft_family_name(pf);
	const uint8_t *p = a[NFTA_RULE_EXPRESSIONS].v;
	size_t len = a[NFTA_RULE_EXPRESSIONS].n;

	if (!s.table || !chain || !a[NFTA_RULE_HANDLE].v || a[NFTA_RULE_HANDLE].n < 8)
		return -1;
	s.chain = sl_ri_find_chain(&rn->b, pf, s.table, chain);
	if (s.chain == SIZE_MAX || !family)
		return 0;	/* a rule of a chain not listed: nothing reaches it */
	while (p && len >= SL_TLV_HDRLEN) {
		size_t alen = sl_rd_h16(p);

		if (alen < SL_TLV_HDRLEN || alen > len ||
		    read_expr(&s, p + SL_TLV_HDRLEN, alen - SL_TLV_HDRLEN) < 0) {
			sl_ri_drop_logs(&rn->b);
			return -1;
		}
		if (!sl_tlv_next(&p, &len, alen))
			break;
	}
	sl_ri_add_rule(&rn->b, family, s.table, chain, sl_rd_be64(a[NFTA_RULE_HANDLE].v),
		       comment_of(a[NFTA_RULE_USERDATA]), *s.verdict ? s.verdict : NULL);
	return 0;
}

struct sl_rule_nl *sl_rule_nl_new(void)
{
	struct sl_rule_nl *rn = calloc(1, sizeof(*rn));

	if (rn && sl_ri_begin(&rn->b) < 0) {
		free(rn);
		return NULL;
	}
	return rn;
}

int sl_rule_nl_msg(struct sl_rule_nl *rn, const void *msg, size_t len)
{
	const struct nlmsghdr *nlh = msg;
	const struct nfgenmsg *g;
	struct attr a[32];	/* more than any NFTA_*_MAX read here */
	const uint8_t *p;
	size_t n;
	int ret = 0;

	if (len < NLMSG_HDRLEN + sizeof(*g) || nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*g) ||
	    nlh->nlmsg_len > len || NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_NFTABLES)
		return 0;
	g = (const struct nfgenmsg *)((const uint8_t *)msg + NLMSG_HDRLEN);
	p = (const uint8_t *)msg + NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(*g));
	n = nlh->nlmsg_len - NLMSG_HDRLEN - NLMSG_ALIGN(sizeof(*g));
	switch (NFNL_MSG_TYPE(nlh->nlmsg_type)) {
	case NFT_MSG_NEWCHAIN:
	case NFT_MSG_NEWSET:
	case NFT_MSG_NEWSETELEM:
	case NFT_MSG_NEWRULE:
		if (attrs(p, n, a, 31) < 0) {
			ret = -1;
			break;
		}
		if (NFNL_MSG_TYPE(nlh->nlmsg_type) == NFT_MSG_NEWCHAIN)
			ret = read_chain(rn, g->nfgen_family, a);
		else if (NFNL_MSG_TYPE(nlh->nlmsg_type) == NFT_MSG_NEWSET)
			ret = read_set(rn, g->nfgen_family, a);
		else if (NFNL_MSG_TYPE(nlh->nlmsg_type) == NFT_MSG_NEWSETELEM)
			ret = read_elems(rn, g->nfgen_family, a);
		else
			ret = read_rule(rn, g->nfgen_family, a);
		break;
	default:
		break;
	}
	if (ret < 0 && !rn->err)
		rn->err = "a netlink message of the ruleset that does not parse";
	return ret;
}

int sl_rule_nl_map(const struct sl_rule_nl *rn, size_t i, uint8_t *family, const char **table,
		   const char **name)
{
	if (i >= rn->nmaps || !rn->maps[i].table || !rn->maps[i].name)
		return -1;
	*family = rn->maps[i].family;
	*table = rn->maps[i].table;
	*name = rn->maps[i].name;
	return 0;
}

int sl_rule_nl_chain(const struct sl_rule_nl *rn, size_t i, uint8_t *family, const char **table,
		     const char **name)
{
	if (i >= rn->b.nchains)
		return -1;
	*family = (uint8_t)rn->b.chains[i].pf;
	*table = rn->b.chains[i].table;
	*name = rn->b.chains[i].name;
	return 0;
}

static void maps_free(struct sl_rule_nl *rn)
{
	for (size_t i = 0; i < rn->nmaps; i++) {
		free(rn->maps[i].table);
		free(rn->maps[i].name);
	}
	free(rn->maps);
}

struct sl_rule_index *sl_rule_nl_done(struct sl_rule_nl *rn, char *err, size_t errlen)
{
	struct sl_rule_index *ix = sl_ri_finish(&rn->b, rn->err, err, errlen);

	maps_free(rn);
	free(rn);
	return ix;
}

void sl_rule_nl_free(struct sl_rule_nl *rn)
{
	char err[8];

	if (!rn)
		return;
	rn->err = "abandoned";
	sl_rule_index_free(sl_ri_finish(&rn->b, rn->err, err, sizeof(err)));
	maps_free(rn);
	free(rn);
}
