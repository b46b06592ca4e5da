/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rule index of one ruleset generation (see rule_index.h): built from
 * what a reader adds (rule_index_int.h), looked up, named.
 */
#include "rule_index_int.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter.h>

#include "fmt.h"
#include "text_escape.h"

struct key {
	uint32_t hash;
	uint16_t group;
	uint8_t pf, hook;
	const char *prefix;
	uint32_t plen;
	int32_t rule;		/* -1: slot empty */
	int32_t more;		/* other rules with this key: index into ix->also, -1 none */
};

struct also {
	int32_t rule, next;
};

struct sl_rule_index {
	struct sl_rule *rules;
	size_t nrules, caprules;
	struct key *keys;
	size_t nslots;		/* a power of two */
	struct also *also;
	size_t nalso, capalso;
	size_t nshared;
	char **prefixes;	/* the statements' prefixes, which the keys point to */
	size_t nprefixes;
};

bool sl_ri_grow(void **v, size_t *cap, size_t n, size_t sz)
{
	void *nv;
	size_t ncap;

	if (n < *cap)
		return true;
	ncap = *cap ? 2 * *cap : 16;
	if (!(nv = realloc(*v, ncap * sz)))
		return false;
	*v = nv;
	*cap = ncap;
	return true;
}

char *sl_ri_dup(struct build *b, const char *s)
{
	char *d = strdup(s);

	if (!d)
		b->nomem = true;
	return d;
}

int sl_ri_begin(struct build *b)
{
	memset(b, 0, sizeof(*b));
	b->ix = calloc(1, sizeof(*b->ix));
	return b->ix ? 0 : -1;
}

void sl_ri_add_chain(struct build *b, int pf, const char *table, const char *name, int hook)
{
	struct chain *c;

	if (!SL_RI_GROW(b, b->chains, b->nchains, b->capchains))
		return;
	c = &b->chains[b->nchains++];
	c->pf = pf;
	c->table = sl_ri_dup(b, table);
	c->name = sl_ri_dup(b, name);
	c->hooks = hook >= 0 && hook < 32 ? 1u << hook : 0;
	if (!c->table || !c->name) {
		free(c->table);
		free(c->name);
		b->nchains--;
	}
}

static bool chain_is(const struct chain *c, int pf, const char *table, const char *name)
{
	return c->pf == pf && !strcmp(c->name, name) && !strcmp(c->table, table);
}

size_t sl_ri_find_chain(struct build *b, int pf, const char *table, const char *name)
{
	/* a listing's rules come chain by chain: the last answer first */
	if (b->last_chain && chain_is(&b->chains[b->last_chain - 1], pf, table, name))
		return b->last_chain - 1;
	for (size_t i = 0; i < b->nchains; i++)
		if (chain_is(&b->chains[i], pf, table, name)) {
			b->last_chain = i + 1;
			return i;
		}
	return SIZE_MAX;
}

void sl_ri_add_edge(struct build *b, size_t from, int pf, const char *table, const char *to,
		    bool map)
{
	struct edge *e;

	if (!SL_RI_GROW(b, b->edges, b->nedges, b->capedges))
		return;
	e = &b->edges[b->nedges++];
	*e = (struct edge){from, pf, sl_ri_dup(b, table), sl_ri_dup(b, to), map};
}

void sl_ri_add_map_target(struct build *b, int pf, const char *table, const char *map,
			  const char *to)
{
	if (!SL_RI_GROW(b, b->mt, b->nmt, b->capmt))
		return;
	b->mt[b->nmt++] = (struct map_target){pf, sl_ri_dup(b, table), sl_ri_dup(b, map),
					      sl_ri_dup(b, to)};
}

void sl_ri_add_log(struct build *b, size_t chain, uint16_t group, const char *prefix,
		   uint32_t plen)
{
	char *p;

	if (!SL_RI_GROW(b, b->logs, b->nlogs, b->caplogs))
		return;
	if (!(p = malloc(plen + 1))) {
		b->nomem = true;
		return;
	}
	memcpy(p, prefix, plen);
	p[plen] = '\0';
	b->logs[b->nlogs++] = (struct logst){b->ix->nrules, chain, group, p, plen};
}

void sl_ri_drop_logs(struct build *b)
{
	while (b->nlogs > b->logs_done)
		free(b->logs[--b->nlogs].prefix);
}

static void set_str(struct build *b, const char **dst, uint32_t *len, const char *src)
{
	char *d = sl_ri_dup(b, src);

	*dst = d;
	*len = d ? (uint32_t)strlen(d) : 0;
}

void sl_ri_add_rule(struct build *b, const char *family, const char *table, const char *chain,
		    uint64_t handle, const char *comment, const char *verdict)
{
	struct sl_rule_index *ix = b->ix;
	struct sl_rule *r;

	if (b->nlogs == b->logs_done)
		return;
	if (!SL_RI_GROW(b, ix->rules, ix->nrules, ix->caprules)) {
		sl_ri_drop_logs(b);
		return;
	}
	b->logs_done = b->nlogs;
	r = &ix->rules[ix->nrules++];
	memset(r, 0, sizeof(*r));
	r->handle = handle;
	set_str(b, &r->family, &r->family_len, family);
	set_str(b, &r->table, &r->table_len, table);
	set_str(b, &r->chain, &r->chain_len, chain);
	if (comment)
		set_str(b, &r->comment, &r->comment_len, comment);
	if (verdict)
		set_str(b, &r->verdict, &r->verdict_len, verdict);
}

/* Every base chain's hooks carried along the jumps until nothing changes. */
static void reach(struct build *b)
{
	size_t *to = calloc(b->nedges + 1, sizeof(*to));
	bool changed = true;

	if (!to) {
		b->nomem = true;
		return;
	}
	for (size_t e = 0; e < b->nedges; e++) {
		struct edge *ed = &b->edges[e];

		to[e] = ed->map ? SIZE_MAX : sl_ri_find_chain(b, ed->pf, ed->table, ed->to);
	}
	for (size_t round = 0; changed && round <= b->nchains; round++) {
		changed = false;
		for (size_t e = 0; e < b->nedges; e++) {
			const struct edge *ed = &b->edges[e];
			uint32_t h = b->chains[ed->from].hooks;

			if (!h)
				continue;
			if (!ed->map) {
				if (to[e] != SIZE_MAX && (b->chains[to[e]].hooks | h) != b->chains[to[e]].hooks) {
					b->chains[to[e]].hooks |= h;
					changed = true;
				}
				continue;
			}
			for (size_t m = 0; m < b->nmt; m++) {
				const struct map_target *t = &b->mt[m];
				size_t c;

				if (t->pf != ed->pf || strcmp(t->map, ed->to) || strcmp(t->table, ed->table))
					continue;
				c = sl_ri_find_chain(b, t->pf, t->table, t->to);
				if (c != SIZE_MAX && (b->chains[c].hooks | h) != b->chains[c].hooks) {
					b->chains[c].hooks |= h;
					changed = true;
				}
			}
		}
	}
	free(to);
}

static uint32_t key_hash(uint8_t pf, uint8_t hook, uint16_t group, const char *p, uint32_t n)
{
	uint32_t h = 2166136261u ^ ((uint32_t)pf << 24 | (uint32_t)hook << 16 | group);

	h *= 16777619u;
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)p[i]) * 16777619u;
	return h;
}

static struct key *slot(const struct sl_rule_index *ix, uint32_t hash, uint8_t pf, uint8_t hook,
			uint16_t group, const char *p, uint32_t n)
{
	size_t mask = ix->nslots - 1;

	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		struct key *k = &ix->keys[i];

		if (k->rule < 0 || (k->hash == hash && k->pf == pf && k->hook == hook &&
				    k->group == group && k->plen == n && !memcmp(k->prefix, p, n)))
			return k;
	}
}

static void add_key(struct build *b, uint8_t pf, uint8_t hook, const struct logst *l)
{
	struct sl_rule_index *ix = b->ix;
	uint32_t h = key_hash(pf, hook, l->group, l->prefix, l->plen);
	struct key *k = slot(ix, h, pf, hook, l->group, l->prefix, l->plen);

	if (k->rule < 0) {
		*k = (struct key){h, l->group, pf, hook, l->prefix, l->plen, (int32_t)l->rule, -1};
		return;
	}
	if (k->rule == (int32_t)l->rule)
		return;
	for (int32_t a = k->more; a >= 0; a = ix->also[a].next)
		if (ix->also[a].rule == (int32_t)l->rule)
			return;
	if (!SL_RI_GROW(b, ix->also, ix->nalso, ix->capalso))
		return;
	if (k->more < 0)
		ix->nshared++;
	ix->also[ix->nalso] = (struct also){(int32_t)l->rule, k->more};
	k->more = (int32_t)ix->nalso++;
}

/* The packet families a table of family pf logs. */
static int pfs_of(int pf, uint8_t out[2])
{
	if (pf == NFPROTO_INET) {
		out[0] = NFPROTO_IPV4;
		out[1] = NFPROTO_IPV6;
		return 2;
	}
	out[0] = (uint8_t)pf;
	return 1;
}

static void make_keys(struct build *b)
{
	struct sl_rule_index *ix = b->ix;
	size_t want = 0;

	for (size_t i = 0; i < b->nlogs; i++)
		want += 2 * (size_t)__builtin_popcount(b->chains[b->logs[i].chain].hooks);
	for (ix->nslots = 16; ix->nslots < 2 * want; ix->nslots *= 2)
		;
	if (!(ix->keys = malloc(ix->nslots * sizeof(*ix->keys)))) {
		b->nomem = true;
		return;
	}
	for (size_t i = 0; i < ix->nslots; i++)
		ix->keys[i].rule = -1;
	for (size_t i = 0; i < b->nlogs && !b->nomem; i++) {
		const struct logst *l = &b->logs[i];
		uint32_t hooks = b->chains[l->chain].hooks;
		uint8_t pfs[2];
		int npf = pfs_of(b->chains[l->chain].pf, pfs);

		if (l->rule >= ix->nrules || !l->prefix)
			continue;
		for (int h = 0; h < 32; h++)
			if (hooks & 1u << h)
				for (int f = 0; f < npf; f++)
					add_key(b, pfs[f], (uint8_t)h, l);
	}
}

static void build_free(struct build *b)
{
	for (size_t i = 0; i < b->nchains; i++) {
		free(b->chains[i].table);
		free(b->chains[i].name);
	}
	for (size_t i = 0; i < b->nedges; i++) {
		free(b->edges[i].table);
		free(b->edges[i].to);
	}
	for (size_t i = 0; i < b->nmt; i++) {
		free(b->mt[i].table);
		free(b->mt[i].map);
		free(b->mt[i].to);
	}
	free(b->chains);
	free(b->edges);
	free(b->mt);
}

void sl_rule_index_free(struct sl_rule_index *ix)
{
	if (!ix)
		return;
	for (size_t i = 0; i < ix->nrules; i++) {
		free((char *)ix->rules[i].family);
		free((char *)ix->rules[i].table);
		free((char *)ix->rules[i].chain);
		free((char *)ix->rules[i].comment);
		free((char *)ix->rules[i].verdict);
	}
	for (size_t i = 0; i < ix->nprefixes; i++)
		free(ix->prefixes[i]);
	free(ix->prefixes);
	free(ix->rules);
	free(ix->keys);
	free(ix->also);
	free(ix);
}


struct sl_rule_index *sl_ri_finish(struct build *b, const char *reader_err, char *err,
				   size_t errlen)
{
	struct sl_rule_index *ix = b->ix;

	sl_ri_drop_logs(b);	/* of no rule */
	if (!reader_err && !b->nomem)
		reach(b);
	if (!reader_err && !b->nomem)
		make_keys(b);
	/* the keys point to the statements' prefixes: they go with the index */
	if (b->nlogs && (ix->prefixes = malloc(b->nlogs * sizeof(*ix->prefixes)))) {
		for (size_t i = 0; i < b->nlogs; i++)
			ix->prefixes[i] = b->logs[i].prefix;
		ix->nprefixes = b->nlogs;
	} else {
		for (size_t i = 0; i < b->nlogs; i++)
			free(b->logs[i].prefix);
		b->nomem |= b->nlogs != 0;
	}
	free(b->logs);
	build_free(b);
	if (reader_err || b->nomem) {
		snprintf(err, errlen, "%s", b->nomem ? "out of memory" : reader_err);
		sl_rule_index_free(ix);
		return NULL;
	}
	return ix;
}

size_t sl_rule_index_count(const struct sl_rule_index *ix)
{
	return ix->nrules;
}

struct sl_rule *sl_rule_index_rule(struct sl_rule_index *ix, size_t i)
{
	return &ix->rules[i];
}

enum sl_rule_match sl_rule_index_find(const struct sl_rule_index *ix, uint8_t pf, uint8_t hook,
				      uint16_t group, const char *prefix, uint32_t plen,
				      const struct sl_rule **rule)
{
	const struct key *k;

	if (!ix->keys)
		return SL_RULE_NONE;
	k = slot(ix, key_hash(pf, hook, group, prefix, plen), pf, hook, group, prefix, plen);
	if (k->rule < 0)
		return SL_RULE_NONE;
	if (k->more >= 0)
		return SL_RULE_SHARED;
	*rule = &ix->rules[k->rule];
	return SL_RULE_ONE;
}

static const char *pf_name(uint8_t pf)
{
	switch (pf) {
	case NFPROTO_IPV4: return "ipv4";
	case NFPROTO_IPV6: return "ipv6";
	case NFPROTO_ARP: return "arp";
	case NFPROTO_BRIDGE: return "bridge";
	case NFPROTO_NETDEV: return "netdev";
	default: return "?";
	}
}

static const char *hook_name(uint8_t pf, uint8_t hook)
{
	static const char *const inet[] = {"prerouting", "input", "forward", "output",
					   "postrouting", "ingress"};
	static const char *const arp[] = {"input", "output", "forward"};
	static const char *const netdev[] = {"ingress", "egress"};

	if (pf == NFPROTO_ARP)
		return hook < 3 ? arp[hook] : "?";
	if (pf == NFPROTO_NETDEV)
		return hook < 2 ? netdev[hook] : "?";
	return hook < 6 ? inet[hook] : "?";
}

static void put_rule(struct sl_fmt_buf *fb, const struct sl_rule *r)
{
	sl_fmt_str(fb, r->family);
	sl_fmt_chr(fb, ' ');
	sl_fmt_escaped(fb, r->table, r->table_len, SL_ESC_BACKSLASH);
	sl_fmt_chr(fb, ' ');
	sl_fmt_escaped(fb, r->chain, r->chain_len, SL_ESC_BACKSLASH);
	sl_fmt_str(fb, " #");
	sl_fmt_u64(fb, r->handle);
}

size_t sl_rule_index_shared(const struct sl_rule_index *ix, int group,
			    void (*cb)(void *arg, const char *line), void *arg)
{
	size_t n = 0;
	char line[2048];

	for (size_t i = 0; i < ix->nslots; i++) {
		const struct key *k = &ix->keys[i];
		struct sl_fmt_buf fb;

		if (k->rule < 0 || k->more < 0 || (group >= 0 && k->group != group))
			continue;
		n++;
		sl_fmt_init(&fb, line, sizeof(line) - 4);
		sl_fmt_str(&fb, "group ");
		sl_fmt_u64(&fb, k->group);
		sl_fmt_str(&fb, " prefix \"");
		sl_fmt_escaped(&fb, k->prefix, k->plen, SL_ESC_BACKSLASH);
		sl_fmt_str(&fb, "\" (");
		sl_fmt_str(&fb, pf_name(k->pf));
		sl_fmt_chr(&fb, ' ');
		sl_fmt_str(&fb, hook_name(k->pf, k->hook));
		sl_fmt_str(&fb, "): ");
		put_rule(&fb, &ix->rules[k->rule]);
		for (int32_t a = k->more; a >= 0; a = ix->also[a].next) {
			sl_fmt_str(&fb, ", ");
			put_rule(&fb, &ix->rules[ix->also[a].rule]);
		}
		line[fb.len < sizeof(line) - 4 ? fb.len : sizeof(line) - 5] = '\0';
		cb(arg, line);
	}
	return n;
}

size_t sl_rule_index_keys(const struct sl_rule_index *ix,
			  void (*cb)(void *arg, uint8_t pf, uint8_t hook, uint16_t group,
				     const char *prefix, uint32_t plen, const struct sl_rule *rule),
			  void *arg)
{
	size_t n = 0;

	for (size_t i = 0; i < ix->nslots; i++) {
		const struct key *k = &ix->keys[i];

		if (k->rule < 0)
			continue;
		n++;
		cb(arg, k->pf, k->hook, k->group, k->prefix, k->plen,
		   k->more < 0 ? &ix->rules[k->rule] : NULL);
	}
	return n;
}

static bool str_eq(const char *a, uint32_t alen, const char *b, uint32_t blen)
{
	return alen == blen && (!alen || !memcmp(a, b, alen)) && !a == !b;
}

bool sl_rule_same(const struct sl_rule *a, const struct sl_rule *b)
{
	return a->handle == b->handle && str_eq(a->family, a->family_len, b->family, b->family_len) &&
	       str_eq(a->table, a->table_len, b->table, b->table_len) &&
	       str_eq(a->chain, a->chain_len, b->chain, b->chain_len) &&
	       str_eq(a->comment, a->comment_len, b->comment, b->comment_len) &&
	       str_eq(a->verdict, a->verdict_len, b->verdict, b->verdict_len);
}
