/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rule index of one ruleset generation (see rule_index.h), read from
 * nft's JSON listing with json_cursor.h (values read in place, nothing
 * built): the core's reader (libyaml, nft_ruleset.c) is not linked into
 * plugins.
 */
#include "rule_index.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter.h>

#include "fmt.h"
#include "json_cursor.h"
#include "names.h"
#include "text_escape.h"

/* ---- what the listing holds ---- */

struct chain {
	int pf;			/* NFPROTO_* of its table */
	char *table, *name;
	uint32_t hooks;		/* bit h: hook h reaches it */
};

/* A jump or goto from chain `from` to `to` (or to every target of map `to` when map). */
struct edge {
	size_t from;
	int pf;
	char *table, *to;
	bool map;
};

/* A named verdict map's jump/goto target. */
struct map_target {
	int pf;
	char *table, *map, *to;
};

struct logst {
	size_t rule, chain;
	uint16_t group;
	char *prefix;
	uint32_t plen;
};

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

/* The build's working state. */
struct build {
	struct sl_rule_index *ix;
	struct chain *chains;
	size_t nchains, capchains;
	struct edge *edges;
	size_t nedges, capedges;
	struct map_target *mt;
	size_t nmt, capmt;
	struct logst *logs;
	size_t nlogs, caplogs;
	bool nomem;
};

/* Room for one more element of *v (n used of *cap, of size sz): false when out of memory. */
static bool grow(void **v, size_t *cap, size_t n, size_t sz)
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
#define GROW(b, arr, n, cap) \
	(grow((void **)&(arr), &(cap), (n), sizeof(*(arr))) || ((b)->nomem = true, false))

static int family_pf(const char *name)
{
	return sl_nft_family_number(name, strlen(name));
}

/* The hook number of a hook name in a table of family pf; -1 if none. */
static int hook_num(int pf, const char *name)
{
	static const char *const inet[] = {"prerouting", "input", "forward", "output",
					   "postrouting", "ingress"};
	static const char *const arp[] = {"input", "output", "forward"};
	static const char *const netdev[] = {"ingress", "egress"};
	const char *const *v = inet;
	int n = 6;

	if (pf == NFPROTO_ARP) {
		v = arp;
		n = 3;
	} else if (pf == NFPROTO_NETDEV) {
		v = netdev;
		n = 2;
	}
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i], name))
			return i;
	return -1;
}

/* src into dst (size bytes) if it fits, else "" (a family or a statement name: short). */
static void copy_small(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		n = 0;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static char *dup_or(struct build *b, const char *s)
{
	char *d = strdup(s);

	if (!d)
		b->nomem = true;
	return d;
}

/* Where an object of the listing sits: family, table, chain and name. */
struct obj {
	char family[16], table[SL_JC_STR_MAX], chain[SL_JC_STR_MAX], name[SL_JC_STR_MAX];
	char comment[SL_JC_STR_MAX];
	bool has_comment;
	int hook;
	uint64_t handle;
};

/* An empty obj: its strings "" (not zeroed whole: 5 KiB a rule of 10,000) */
static struct obj *obj_new(void)
{
	struct obj *o = malloc(sizeof(*o));

	if (o) {
		o->family[0] = o->table[0] = o->chain[0] = o->name[0] = o->comment[0] = '\0';
		o->has_comment = false;
		o->hook = -1;
		o->handle = 0;
	}
	return o;
}

/* obj_new(), or NULL with the build out of memory and the listing failed. */
static struct obj *obj_open(struct sl_json_cursor *j, struct build *b)
{
	struct obj *o = obj_new();

	if (!o) {
		b->nomem = true;
		sl_jc_fail(j, "out of memory");
	}
	return o;
}

/*
 * The member named key read into o if it is "family" or "table": true;
 * else false, nothing read.  key (SL_JC_STR_MAX bytes) is overwritten by a family's name.
 */
static bool read_where(struct sl_json_cursor *j, struct obj *o, char *key)
{
	if (!strcmp(key, "family")) {
		sl_jc_str(j, key);
		copy_small(o->family, sizeof(o->family), key);
	} else if (!strcmp(key, "table")) {
		sl_jc_str(j, o->table);
	} else {
		return false;
	}
	return true;
}

/* {"chain": {...}} */
static void read_chain(struct sl_json_cursor *j, struct build *b)
{
	struct obj *o = obj_open(j, b);
	char key[SL_JC_STR_MAX], hook[SL_JC_STR_MAX] = "";
	struct chain *c;
	int pf;

	if (!o)
		return;
	SL_JC_FOR_MEMBERS(j, key) {
		if (read_where(j, o, key))
			continue;
		if (!strcmp(key, "name"))
			sl_jc_str(j, o->name);
		else if (!strcmp(key, "hook"))
			sl_jc_str(j, hook);
		else
			sl_jc_skip(j);
	}
	pf = family_pf(o->family);
	if (!j->err && pf >= 0 && GROW(b, b->chains, b->nchains, b->capchains)) {
		int h = *hook ? hook_num(pf, hook) : -1;

		c = &b->chains[b->nchains++];
		c->pf = pf;
		c->table = dup_or(b, o->table);
		c->name = dup_or(b, o->name);
		c->hooks = h >= 0 ? 1u << h : 0;
	}
	free(o);
}

/* {"map": {...}}: the jump and goto targets of a verdict map's elements. */
struct scan {
	struct sl_json_cursor *j;
	struct build *b;
	int pf;
	const char *table;
	const char *map;	/* collecting a map's targets */
	size_t chain;		/* else the chain the rule is in */
};

static void add_edge(struct scan *s, const char *to, bool map)
{
	struct build *b = s->b;

	if (s->map) {
		if (map || !GROW(b, b->mt, b->nmt, b->capmt))
			return;
		b->mt[b->nmt++] = (struct map_target){s->pf, dup_or(b, s->table), dup_or(b, s->map),
						      dup_or(b, to)};
		return;
	}
	if (!GROW(b, b->edges, b->nedges, b->capedges))
		return;
	b->edges[b->nedges++] = (struct edge){s->chain, s->pf, dup_or(b, s->table), dup_or(b, to), map};
}

/*
 * The members of a {"jump"|"goto": {...}} at j: its "target" into target
 * (SL_JC_STR_MAX bytes, left as it was without one), an edge to it if not "".
 */
static void read_jump(struct sl_json_cursor *j, struct scan *s, char *target)
{
	char key[SL_JC_STR_MAX];

	SL_JC_FOR_MEMBERS(j, key) {
		if (!strcmp(key, "target"))
			sl_jc_str(j, target);
		else
			sl_jc_skip(j);
	}
	if (*target)
		add_edge(s, target, false);
}

/*
 * Any value, looking for {"jump"|"goto": {"target": X}} and "@map"
 * references at every depth.
 */
static void scan_value(struct scan *s)
{
	struct sl_json_cursor *j = s->j;
	char c = sl_jc_peek(j), key[SL_JC_STR_MAX];

	if (j->depth > SL_JC_MAX_DEPTH) {
		sl_jc_fail(j, "JSON nested too deep");
		return;
	}
	if (c == '"') {
		if (sl_jc_str(j, key) > 1 && key[0] == '@')
			add_edge(s, key + 1, true);
	} else if (c == '[') {
		j->p++;
		j->depth++;
		if (!sl_jc_eat(j, ']')) {
			do
				scan_value(s);
			while (sl_jc_eat(j, ','));
			sl_jc_expect(j, ']');
		}
		j->depth--;
	} else if (c == '{') {
		j->depth++;
		SL_JC_FOR_MEMBERS(j, key) {
			if ((!strcmp(key, "jump") || !strcmp(key, "goto")) && sl_jc_peek(j) == '{') {
				char target[SL_JC_STR_MAX] = "";

				read_jump(j, s, target);
			} else {
				scan_value(s);
			}
		}
		j->depth--;
	} else {
		sl_jc_skip(j);
	}
}

static void read_map(struct sl_json_cursor *j, struct build *b)
{
	struct obj *o = obj_open(j, b);
	char key[SL_JC_STR_MAX];
	bool verdict = false;
	const char *elem = NULL;

	if (!o)
		return;
	/* the elements may come before "map": "verdict"; scan them, keep them if it is one */
	SL_JC_FOR_MEMBERS(j, key) {
		if (read_where(j, o, key))
			continue;
		if (!strcmp(key, "name")) {
			sl_jc_str(j, o->name);
		} else if (!strcmp(key, "map")) {
			if (sl_jc_peek(j) == '"' && sl_jc_str(j, key) >= 0)
				verdict = !strcmp(key, "verdict");
			else
				sl_jc_skip(j);
		} else if (!strcmp(key, "elem")) {
			elem = j->p;
			sl_jc_skip(j);
		} else {
			sl_jc_skip(j);
		}
	}
	if (!j->err && elem && verdict && family_pf(o->family) >= 0) {
		struct sl_json_cursor sub = {.p = elem, .end = j->end};
		struct scan s = {.j = &sub, .b = b, .pf = family_pf(o->family), .table = o->table,
				 .map = o->name};

		scan_value(&s);
	}
	free(o);
}

static size_t find_chain(const struct build *b, int pf, const char *table, const char *name)
{
	for (size_t i = 0; i < b->nchains; i++)
		if (b->chains[i].pf == pf && !strcmp(b->chains[i].name, name) &&
		    !strcmp(b->chains[i].table, table))
			return i;
	return SIZE_MAX;
}

static const char *const verdicts[] = {"accept", "drop", "reject"};

/* The members of one expression statement ({"log": {...}}, {"accept": null}, ...). */
static void read_stmt(struct sl_json_cursor *j, struct scan *s, size_t rule, char *last, char *target)
{
	struct build *b = s->b;
	char key[SL_JC_STR_MAX];

	*last = '\0';
	*target = '\0';
	SL_JC_FOR_MEMBERS(j, key) {
		copy_small(last, 16, key);
		if (!strcmp(key, "log") && sl_jc_peek(j) == '{') {
			char k2[SL_JC_STR_MAX], prefix[SL_JC_STR_MAX] = "";
			uint64_t group = UINT64_MAX;
			long plen = 0;

			j->depth++;
			SL_JC_FOR_MEMBERS(j, k2) {
				/* the kernel's prefix is a C string: up to a \u0000 */
				if (!strcmp(k2, "prefix") && (plen = sl_jc_str(j, prefix)) >= 0)
					plen = (long)strlen(prefix);
				else if (!strcmp(k2, "group") && sl_jc_peek(j) != '"')
					sl_jc_num(j, &group);
				else
					sl_jc_skip(j);
			}
			j->depth--;
			if (group <= 65535 && plen >= 0 && GROW(b, b->logs, b->nlogs, b->caplogs))
				b->logs[b->nlogs++] = (struct logst){rule, s->chain, (uint16_t)group,
								     dup_or(b, prefix), (uint32_t)plen};
		} else if ((!strcmp(key, "jump") || !strcmp(key, "goto")) && sl_jc_peek(j) == '{') {
			read_jump(j, s, target);
		} else {
			scan_value(s);
		}
	}
}

static bool set_str(struct build *b, const char **dst, uint32_t *len, const char *src)
{
	char *d = dup_or(b, src);

	*dst = d;
	*len = d ? (uint32_t)strlen(d) : 0;
	return d != NULL;
}

/* {"rule": {...}}: its jumps, and it if it holds a `log group`. */
static void read_rule(struct sl_json_cursor *j, struct build *b)
{
	struct obj *o = obj_open(j, b);
	struct sl_rule_index *ix = b->ix;
	char key[SL_JC_STR_MAX], last[16] = "", target[SL_JC_STR_MAX] = "";
	const char *expr = NULL;
	size_t logs_before = b->nlogs, rule = ix->nrules;
	struct sl_rule *r;

	if (!o)
		return;
	/* family, table and chain may follow "expr": note where it is, read it after */
	SL_JC_FOR_MEMBERS(j, key) {
		if (read_where(j, o, key))
			continue;
		if (!strcmp(key, "chain")) {
			sl_jc_str(j, o->chain);
		} else if (!strcmp(key, "handle")) {
			sl_jc_num(j, &o->handle);
		} else if (!strcmp(key, "comment")) {
			o->has_comment = sl_jc_str(j, o->comment) >= 0;
		} else if (!strcmp(key, "expr")) {
			expr = j->p;
			sl_jc_skip(j);
		} else {
			sl_jc_skip(j);
		}
	}
	if (j->err || !expr || family_pf(o->family) < 0)
		goto out;
	{
		struct sl_json_cursor sub = {.p = expr, .end = j->end};
		struct scan s = {.j = &sub, .b = b, .pf = family_pf(o->family), .table = o->table,
				 .chain = find_chain(b, family_pf(o->family), o->table, o->chain)};

		if (s.chain == SIZE_MAX)
			goto out;	/* a rule of a chain not listed: nothing reaches it */
		sl_jc_expect(&sub, '[');
		if (!sl_jc_eat(&sub, ']')) {
			do
				read_stmt(&sub, &s, rule, last, target);
			while (sl_jc_eat(&sub, ','));
			sl_jc_expect(&sub, ']');
		}
		if (sub.err) {
			sl_jc_fail(j, sub.err);
			goto out;
		}
	}
	if (b->nlogs == logs_before || !GROW(b, ix->rules, ix->nrules, ix->caprules))
		goto out;
	r = &ix->rules[ix->nrules++];
	memset(r, 0, sizeof(*r));
	r->handle = o->handle;
	set_str(b, &r->family, &r->family_len, o->family);
	set_str(b, &r->table, &r->table_len, o->table);
	set_str(b, &r->chain, &r->chain_len, o->chain);
	if (o->has_comment)
		set_str(b, &r->comment, &r->comment_len, o->comment);
	for (size_t i = 0; i < sizeof(verdicts) / sizeof(verdicts[0]); i++)
		if (!strcmp(last, verdicts[i]))
			set_str(b, &r->verdict, &r->verdict_len, last);
	if ((!strcmp(last, "jump") || !strcmp(last, "goto")) && *target) {
		char v[SL_JC_STR_MAX + 16];

		snprintf(v, sizeof(v), "%s %s", last, target);
		set_str(b, &r->verdict, &r->verdict_len, v);
	}
out:
	free(o);
}

/* The listing: {"nftables": [{"metainfo": ...}, {"table": ...}, {"chain": ...}, ...]}. */
static void read_listing(struct sl_json_cursor *j, struct build *b)
{
	char key[SL_JC_STR_MAX];
	bool seen = false;

	SL_JC_FOR_MEMBERS(j, key) {
		if (strcmp(key, "nftables")) {
			sl_jc_skip(j);
			continue;
		}
		seen = true;
		sl_jc_expect(j, '[');
		if (sl_jc_eat(j, ']'))
			continue;
		do {
			SL_JC_FOR_MEMBERS(j, key) {
				if (!strcmp(key, "chain"))
					read_chain(j, b);
				else if (!strcmp(key, "rule"))
					read_rule(j, b);
				else if (!strcmp(key, "map"))
					read_map(j, b);
				else
					sl_jc_skip(j);
			}
		} while (sl_jc_eat(j, ','));
		sl_jc_expect(j, ']');
	}
	if (!j->err && !seen)
		sl_jc_fail(j, "not an nft JSON listing (no \"nftables\" array)");
	if (!j->err && sl_jc_peek(j))
		sl_jc_fail(j, "text after the JSON listing");
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

		to[e] = ed->map ? SIZE_MAX : find_chain(b, ed->pf, ed->table, ed->to);
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
				c = find_chain(b, t->pf, t->table, t->to);
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
	if (!GROW(b, ix->also, ix->nalso, ix->capalso))
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

struct sl_rule_index *sl_rule_index_from_json(const char *json, size_t len, char *err,
					      size_t errlen)
{
	struct build b = {0};
	struct sl_json_cursor j = {.p = json, .end = json + len};
	struct sl_rule_index *ix;

	if (!(ix = b.ix = calloc(1, sizeof(*b.ix)))) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	read_listing(&j, &b);
	if (!j.err && !b.nomem)
		reach(&b);
	if (!j.err && !b.nomem)
		make_keys(&b);
	/* the keys point to the statements' prefixes: they go with the index */
	if (b.nlogs && (ix->prefixes = malloc(b.nlogs * sizeof(*ix->prefixes)))) {
		for (size_t i = 0; i < b.nlogs; i++)
			ix->prefixes[i] = b.logs[i].prefix;
		ix->nprefixes = b.nlogs;
	} else {
		for (size_t i = 0; i < b.nlogs; i++)
			free(b.logs[i].prefix);
		b.nomem |= b.nlogs != 0;
	}
	free(b.logs);
	build_free(&b);
	if (j.err || b.nomem) {
		snprintf(err, errlen, "%s", b.nomem ? "out of memory" : j.err);
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
