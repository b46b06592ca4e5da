/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Families and hooks that reach each printk log statement (nft_reach.h). */
#include "nft_reach.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct chain {
	const char *family, *table, *name;
	uint32_t hooks;
};

/* A jump or goto from chain `from` to chain `to`, or to every target of map `to` when `map`. */
struct edge {
	size_t from;
	const char *to;
	bool map;
};

/* A named verdict map's jump or goto target. */
struct mapjump {
	const char *family, *table, *map, *to;
};

struct reach {
	struct chain *chains;
	size_t nchains;
	struct edge *edges;
	size_t nedges;
	struct mapjump *mj;
	size_t nmj;
	bool oom;
};

#define PUSH(arr, n, val, r)                                                            \
	do {                                                                             \
		if (((n) & ((n) - 1)) == 0) {                                            \
			void *p_ = realloc((arr), ((n) ? (n) * 2 : 1) * sizeof(*(arr)));  \
			if (!p_) {                                                       \
				(r)->oom = true;                                         \
				break;                                                   \
			}                                                                \
			(arr) = p_;                                                      \
		}                                                                        \
		(arr)[(n)++] = (val);                                                    \
	} while (0)

static const char *str_of(const struct ynode *map, const char *key)
{
	const struct ynode *v = yaml_tree_map_get(map, key);

	return v && v->kind == YN_SCALAR && !v->plain ? v->scalar : NULL;
}

/* A hook name as a bit: the same name is the same bit in every family. */
static uint32_t hook_bit(const char *name)
{
	static const char *const names[] = {"prerouting", "input",   "forward", "output",
					    "postrouting", "ingress", "egress"};

	for (unsigned i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return 1u << i;
	return 0;
}

/* The packet families of a table's statements: bits for ipv4, ipv6, arp, bridge, netdev. */
static uint8_t family_bits(const char *f)
{
	if (!strcmp(f, "ip"))
		return 1;
	if (!strcmp(f, "ip6"))
		return 2;
	if (!strcmp(f, "inet"))
		return 3;
	if (!strcmp(f, "arp"))
		return 4;
	if (!strcmp(f, "bridge"))
		return 8;
	return 16;	/* netdev */
}

static size_t find_chain(const struct reach *r, const char *family, const char *table,
			 const char *name)
{
	for (size_t i = 0; i < r->nchains; i++)
		if (!strcmp(r->chains[i].name, name) && !strcmp(r->chains[i].table, table) &&
		    !strcmp(r->chains[i].family, family))
			return i;
	return SIZE_MAX;
}

/*
 * Every {"jump"|"goto": {"target": X}} in n (to: chains) and every "@name"
 * string (a named map's reference) as edges from chain `from`.
 */
static void scan(struct reach *r, const struct ynode *n, size_t from, const struct mapjump *mj,
		 unsigned depth)
{
	if (!n || depth > YTREE_MAX_DEPTH)
		return;
	if (n->kind == YN_SCALAR) {
		if (!n->plain && n->scalar[0] == '@' && from != SIZE_MAX)
			PUSH(r->edges, r->nedges, ((struct edge){from, n->scalar + 1, true}), r);
		return;
	}
	for (size_t i = 0; i < n->n; i++) {
		const struct ynode *c = n->items[i];

		if (n->kind == YN_MAP && i % 2 == 0) {
			const char *t;

			if ((strcmp(c->scalar, "jump") && strcmp(c->scalar, "goto")) ||
			    !(t = str_of(n->items[i + 1], "target")))
				continue;
			if (from != SIZE_MAX)
				PUSH(r->edges, r->nedges, ((struct edge){from, t, false}), r);
			else if (mj)
				PUSH(r->mj, r->nmj, ((struct mapjump){mj->family, mj->table, mj->map, t}),
				     r);
			continue;
		}
		scan(r, c, from, mj, depth + 1);
	}
}

static void read_listing(struct reach *r, const struct ynode *list)
{
	/* chains first: rules may come before the chains they jump to */
	for (size_t i = 0; i < list->n; i++) {
		const struct ynode *c = yaml_tree_map_get(list->items[i], "chain");
		const char *f, *t, *name;

		if (!c || !(f = str_of(c, "family")) || !(t = str_of(c, "table")) ||
		    !(name = str_of(c, "name")))
			continue;
		PUSH(r->chains, r->nchains,
		     ((struct chain){f, t, name, hook_bit(str_of(c, "hook"))}), r);
	}
	for (size_t i = 0; i < list->n; i++) {
		const struct ynode *o = list->items[i], *rule = yaml_tree_map_get(o, "rule"),
				   *map = yaml_tree_map_get(o, "map");
		const char *f, *t, *c;

		if (rule && (f = str_of(rule, "family")) && (t = str_of(rule, "table")) &&
		    (c = str_of(rule, "chain")))
			scan(r, yaml_tree_map_get(rule, "expr"), find_chain(r, f, t, c), NULL, 0);
		if (map && (f = str_of(map, "family")) && (t = str_of(map, "table")) &&
		    (c = str_of(map, "name"))) {
			struct mapjump mj = {f, t, c, NULL};

			scan(r, yaml_tree_map_get(map, "elem"), SIZE_MAX, &mj, 0);
		}
	}
}

/* Every base chain's hooks carried along the jumps until nothing changes. */
static void propagate(struct reach *r)
{
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t e = 0; e < r->nedges; e++) {
			const struct edge *ed = &r->edges[e];
			const struct chain *from = &r->chains[ed->from];

			for (size_t m = 0; m < (ed->map ? r->nmj : 1); m++) {
				const char *to = ed->to;
				size_t c;

				if (ed->map) {
					if (strcmp(r->mj[m].map, ed->to) || strcmp(r->mj[m].table, from->table) ||
					    strcmp(r->mj[m].family, from->family))
						continue;
					to = r->mj[m].to;
				}
				c = find_chain(r, from->family, from->table, to);
				if (c != SIZE_MAX && (r->chains[c].hooks | from->hooks) != r->chains[c].hooks) {
					r->chains[c].hooks |= from->hooks;
					changed = true;
				}
			}
		}
	}
}

int nft_reach_compute(struct nft_ruleset *rs)
{
	const struct ynode *list = yaml_tree_map_get(rs->root, "nftables");
	struct reach r = {0};

	if (!list || list->kind != YN_SEQ)
		return 0;
	read_listing(&r, list);
	if (!r.oom)
		propagate(&r);
	for (size_t i = 0; !r.oom && i < rs->n; i++) {
		struct nft_logstmt *s = &rs->stmts[i];
		size_t c = find_chain(&r, s->family, s->table, s->chain);

		s->pfs = family_bits(s->family);
		s->hooks = c == SIZE_MAX ? 0 : r.chains[c].hooks;
	}
	free(r.chains);
	free(r.edges);
	free(r.mj);
	return r.oom ? -1 : 0;
}

bool nft_reach_clash(const struct nft_logstmt *a, const struct nft_logstmt *b)
{
	if (a->rule == b->rule || !(a->pfs & b->pfs) || !(a->hooks & b->hooks))
		return false;
	/* no prefix and an empty one: the same empty NFULA_PREFIX */
	return strcmp(a->prefix ? a->prefix : "", b->prefix ? b->prefix : "") == 0;
}
