/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rule index read from nft's JSON listing (`nft -j -a list ruleset`,
 * see rule_index.h), with json_cursor.h (values read in place, nothing
 * built): the core's reader (libyaml, nft_ruleset.c) is not linked into
 * plugins.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter.h>

#include "json_cursor.h"
#include "names.h"
#include "rule_index_int.h"

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
	pf = sl_nft_family_number(o->family, strlen(o->family));
	if (!j->err && pf >= 0)
		sl_ri_add_chain(b, pf, o->table, o->name, *hook ? hook_num(pf, hook) : -1);
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
	if (s->map) {
		if (!map)
			sl_ri_add_map_target(s->b, s->pf, s->table, s->map, to);
		return;
	}
	sl_ri_add_edge(s->b, s->chain, s->pf, s->table, to, map);
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
	int pf;

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
	pf = sl_nft_family_number(o->family, strlen(o->family));
	if (!j->err && elem && verdict && pf >= 0) {
		struct sl_json_cursor sub = {.p = elem, .end = j->end};
		struct scan s = {.j = &sub, .b = b, .pf = pf, .table = o->table,
				 .map = o->name};

		scan_value(&s);
	}
	free(o);
}

static const char *const verdicts[] = {"accept", "drop", "reject"};

/* The members of one expression statement ({"log": {...}}, {"accept": null}, ...). */
static void read_stmt(struct sl_json_cursor *j, struct scan *s, char *last, char *target)
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
			if (group <= 65535 && plen >= 0)
				sl_ri_add_log(b, s->chain, (uint16_t)group, prefix, (uint32_t)plen);
		} else if ((!strcmp(key, "jump") || !strcmp(key, "goto")) && sl_jc_peek(j) == '{') {
			read_jump(j, s, target);
		} else {
			scan_value(s);
		}
	}
}

/* {"rule": {...}}: its jumps, and it if it holds a `log group`. */
static void read_rule(struct sl_json_cursor *j, struct build *b)
{
	struct obj *o = obj_open(j, b);
	char key[SL_JC_STR_MAX], last[16] = "", target[SL_JC_STR_MAX] = "";
	const char *expr = NULL;
	int pf;

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
	pf = sl_nft_family_number(o->family, strlen(o->family));
	if (j->err || !expr || pf < 0)
		goto out;
	{
		struct sl_json_cursor sub = {.p = expr, .end = j->end};
		struct scan s = {.j = &sub, .b = b, .pf = pf, .table = o->table,
				 .chain = sl_ri_find_chain(b, pf, o->table, o->chain)};

		if (s.chain == SIZE_MAX)
			goto out;	/* a rule of a chain not listed: nothing reaches it */
		sl_jc_expect(&sub, '[');
		if (!sl_jc_eat(&sub, ']')) {
			do
				read_stmt(&sub, &s, last, target);
			while (sl_jc_eat(&sub, ','));
			sl_jc_expect(&sub, ']');
		}
		if (sub.err) {
			sl_jc_fail(j, sub.err);
			goto out;
		}
	}
	{
		const char *verdict = NULL;
		char v[SL_JC_STR_MAX + 16];

		for (size_t i = 0; i < sizeof(verdicts) / sizeof(verdicts[0]); i++)
			if (!strcmp(last, verdicts[i]))
				verdict = last;
		if ((!strcmp(last, "jump") || !strcmp(last, "goto")) && *target) {
			snprintf(v, sizeof(v), "%s %s", last, target);
			verdict = v;
		}
		sl_ri_add_rule(b, o->family, o->table, o->chain, o->handle,
			       o->has_comment ? o->comment : NULL, verdict);
	}
out:
	sl_ri_drop_logs(b);	/* a rule not added: its statements go too */
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

struct sl_rule_index *sl_rule_index_from_json(const char *json, size_t len, char *err,
					      size_t errlen)
{
	struct build b = {0};
	struct sl_json_cursor j = {.p = json, .end = json + len};

	if (sl_ri_begin(&b) < 0) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	read_listing(&j, &b);
	return sl_ri_finish(&b, j.err, err, errlen);
}
