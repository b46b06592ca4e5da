/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading nft's JSON listing: every "rule" object, and in its "expr" every
 * `log` statement without a group.  nft writes the JSON with jansson:
 * strings in double quotes with JSON's escapes (\" \\ \/ \b \f \n \r \t
 * \uXXXX), numbers, true/false/null plain, on one line — all of which
 * libyaml's flow syntax reads the same, so the tree's `plain` flag tells a
 * string from a number.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nft_ruleset.h"
#include "nft_reach.h"

static const char *const level_names[] = {
	"emerg", "alert", "crit", "err", "warn", "notice", "info", "debug",
};
static const char *const severity_names[] = {
	"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
};

static const struct {
	const char *name;
	unsigned bits;
} flag_names[] = {
	{"tcp sequence", NFTLOG_TCPSEQ},
	{"tcp options", NFTLOG_TCPOPT},
	{"ip options", NFTLOG_IPOPT},
	{"skuid", NFTLOG_UID},
	{"ether", NFTLOG_MACDECODE},
	{"all", NFTLOG_ALL},
};

const char *nft_level_name(unsigned level)
{
	return level < 8 ? level_names[level] : "?";
}

const char *nft_severity_name(unsigned level)
{
	return level < 8 ? severity_names[level] : "?";
}

/* As nft's log_stmt_print(): "all", else tcp's two together, then the rest. */
void nft_flags_text(unsigned flags, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	if ((flags & NFTLOG_ALL) == NFTLOG_ALL) {
		snprintf(buf, len, "all");
		return;
	}
	if (flags & (NFTLOG_TCPSEQ | NFTLOG_TCPOPT))
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "tcp%s%s%s",
				      flags & NFTLOG_TCPSEQ ? " sequence" : "",
				      (flags & NFTLOG_TCPSEQ) && (flags & NFTLOG_TCPOPT) ? "," : "",
				      flags & NFTLOG_TCPOPT ? (flags & NFTLOG_TCPSEQ ? "options" :
							       " options") : "");
	if (flags & NFTLOG_IPOPT)
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%sip options",
				      n ? " flags " : "");
	if (flags & NFTLOG_UID)
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%sskuid", n ? " flags " : "");
	if (flags & NFTLOG_MACDECODE)
		snprintf(buf + n, n < len ? len - n : 0, "%sether", n ? " flags " : "");
}

static bool is_string(const struct ynode *n)
{
	return n && n->kind == YN_SCALAR && !n->plain;
}

static const char *str_member(const struct ynode *map, const char *key)
{
	const struct ynode *v = yaml_tree_map_get(map, key);

	return is_string(v) ? v->scalar : NULL;
}

static int parse_flag(const struct ynode *v, unsigned *flags)
{
	if (!is_string(v))
		return -1;
	for (size_t i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++)
		if (strcmp(v->scalar, flag_names[i].name) == 0) {
			*flags |= flag_names[i].bits;
			return 0;
		}
	return -1;
}

/*
 * One `log` object: its prefix, level and flags, or why it cannot become
 * `log group N`.  Returns 1 for a log that already has a group.
 */
static int parse_log(const struct ynode *log, struct nft_logstmt *s)
{
	s->level = NFTLOG_LEVEL_DEFAULT;
	if (yaml_tree_is_null(log))
		return 0;
	if (log->kind != YN_MAP) {
		s->why = "the log statement is not an object";
		return 0;
	}
	if (yaml_tree_map_get(log, "group"))
		return 1;
	for (size_t i = 0; i + 1 < log->n; i += 2) {
		const char *key = log->items[i]->scalar;
		const struct ynode *v = log->items[i + 1];

		if (strcmp(key, "prefix") == 0 && is_string(v)) {
			s->prefix = v->scalar;
		} else if (strcmp(key, "level") == 0 && is_string(v)) {
			unsigned l;

			for (l = 0; l < 8; l++)
				if (strcmp(v->scalar, level_names[l]) == 0 ||
				    (l == 4 && strcmp(v->scalar, "warning") == 0))
					break;
			if (l < 8) {
				s->level = l;
				continue;
			}
			s->level_text = v->scalar;
			if (strcmp(v->scalar, "audit") == 0)
				s->why = "level audit sends the packet to the audit subsystem, not to "
					 "printk; NFLOG has no equivalent";
			else
				s->why = "unknown log level";
		} else if (strcmp(key, "flags") == 0) {
			bool bad = false;

			if (v->kind == YN_SEQ)
				for (size_t f = 0; f < v->n; f++)
					bad |= parse_flag(v->items[f], &s->flags) != 0;
			else
				bad = parse_flag(v, &s->flags) != 0;
			if (bad)
				s->why = "unknown log flag";
		} else {
			s->why = "a log option that NFLOG cannot carry";
		}
	}
	return 0;
}

/* Whether a "log" object hides anywhere inside a statement (a set element, a map's value). */
static const struct ynode *nested_log(const struct ynode *n, unsigned depth)
{
	if (!n || n->kind == YN_SCALAR || depth > YTREE_MAX_DEPTH)
		return NULL;
	for (size_t i = 0; i < n->n; i++) {
		const struct ynode *c = n->items[i];

		if (n->kind == YN_MAP && i % 2 == 0) {
			if (strcmp(c->scalar, "log") == 0)
				return c;
			continue;
		}
		if ((c = nested_log(c, depth + 1)))
			return c;
	}
	return NULL;
}

static int add_stmt(struct nft_ruleset *rs, const struct nft_logstmt *s)
{
	size_t n = rs->n;

	if ((n & (n - 1)) == 0) {
		struct nft_logstmt *st = realloc(rs->stmts, (n ? n * 2 : 1) * sizeof(*st));

		if (!st)
			return -1;
		rs->stmts = st;
	}
	rs->stmts[rs->n++] = *s;
	return 0;
}

/* Why no rule of this chain or family can be rewritten, or NULL. */
static const char *rule_why(const char *family, const char *chain)
{
	if (strcmp(family, "arp") == 0)
		return "the arp family's printk line (ARP HTYPE=...) is not one logline prints";
	if (strncmp(chain, "__chain", 7) == 0)
		return "an anonymous (binding) chain cannot be changed after it is created; "
		       "make it a named chain";
	return NULL;
}

static int add_used(struct nft_ruleset *rs, const struct nft_logstmt *s, const struct ynode *log)
{
	const struct ynode *g = yaml_tree_map_get(log, "group");
	size_t n = rs->nused;

	if (!g || g->kind != YN_SCALAR || !g->plain)
		return 0;
	if ((n & (n - 1)) == 0) {
		struct nft_used_group *u = realloc(rs->used, (n ? n * 2 : 1) * sizeof(*u));

		if (!u)
			return -1;
		rs->used = u;
	}
	rs->used[rs->nused++] = (struct nft_used_group){(unsigned)strtoul(g->scalar, NULL, 10),
		s->family, s->table, s->chain, s->handle};
	return 0;
}

static int read_rule(struct nft_ruleset *rs, const struct ynode *rule, char *err, size_t errlen,
		     const char *name)
{
	const struct ynode *expr = yaml_tree_map_get(rule, "expr");
	const struct ynode *handle = yaml_tree_map_get(rule, "handle");
	struct nft_logstmt base = {0};

	base.family = str_member(rule, "family");
	base.table = str_member(rule, "table");
	base.chain = str_member(rule, "chain");
	if (!base.family || !base.table || !base.chain || !handle || handle->kind != YN_SCALAR ||
	    !handle->plain || !expr || expr->kind != YN_SEQ) {
		snprintf(err, errlen, "%s:%u:%u: a rule without family, table, chain, handle or expr",
			 name, rule->mark.line, rule->mark.col);
		return -1;
	}
	base.handle = strtoull(handle->scalar, NULL, 10);
	base.rule = rule;
	rs->nrules++;
	for (size_t i = 0; i < expr->n; i++) {
		const struct ynode *st = expr->items[i], *inner;
		struct nft_logstmt s = base;

		if (st->kind != YN_MAP || st->n != 2)
			continue;
		if (strcmp(st->items[0]->scalar, "log") != 0) {
			if (!(inner = nested_log(st->items[1], 0)))
				continue;
			s.mark = inner->mark;
			s.expr_index = i;
			s.level = NFTLOG_LEVEL_DEFAULT;
			s.why = "a log statement inside an expression (a set or map element) "
				"cannot be replaced by itself";
			if (add_stmt(rs, &s))
				return -1;
			continue;
		}
		s.mark = st->items[0]->mark;
		s.expr_index = i;
		if (parse_log(st->items[1], &s) == 1) {
			rs->nflog++;
			if (add_used(rs, &s, st->items[1]))
				return -1;
			continue;
		}
		if (!s.why)
			s.why = rule_why(s.family, s.chain);
		if (add_stmt(rs, &s))
			return -1;
	}
	return 0;
}

int nft_ruleset_read(struct nft_ruleset *rs, const char *name, const char *text, char *err,
		     size_t errlen)
{
	const struct ynode *list;

	memset(rs, 0, sizeof(*rs));
	rs->root = yaml_tree_load_string(name, text, err, errlen);
	if (!rs->root)
		return -1;
	list = yaml_tree_map_get(rs->root, "nftables");
	if (!list || list->kind != YN_SEQ) {
		snprintf(err, errlen, "%s:%u:%u: expected nft's JSON listing ({\"nftables\": [...]})",
			 name, rs->root->mark.line, rs->root->mark.col);
		nft_ruleset_free(rs);
		return -1;
	}
	for (size_t i = 0; i < list->n; i++) {
		const struct ynode *rule = yaml_tree_map_get(list->items[i], "rule");

		if (list->items[i]->kind != YN_MAP || !rule)
			continue;
		if (rule->kind != YN_MAP || read_rule(rs, rule, err, errlen, name)) {
			if (rule->kind != YN_MAP)
				snprintf(err, errlen, "%s:%u:%u: a rule that is not an object", name,
					 rule->mark.line, rule->mark.col);
			nft_ruleset_free(rs);
			return -1;
		}
	}
	if (nft_reach_compute(rs) < 0) {
		snprintf(err, errlen, "%s: out of memory", name);
		nft_ruleset_free(rs);
		return -1;
	}
	return 0;
}

void nft_ruleset_free(struct nft_ruleset *rs)
{
	yaml_tree_free(rs->root);
	free(rs->stmts);
	free(rs->used);
	memset(rs, 0, sizeof(*rs));
}

size_t nft_unconvertible(const struct nft_ruleset *rs)
{
	size_t n = 0;

	for (size_t i = 0; i < rs->n; i++)
		n += rs->stmts[i].why != NULL;
	return n;
}

const struct nft_used_group *nft_group_user(const struct nft_ruleset *rs, unsigned group)
{
	for (size_t i = 0; i < rs->nused; i++)
		if (rs->used[i].group == group)
			return &rs->used[i];
	return NULL;
}

/* A statement before i in group `group` that s would clash with, or NULL. */
static const struct nft_logstmt *clash_in(const struct nft_ruleset *rs, size_t i, unsigned group)
{
	for (size_t j = 0; j < i; j++)
		if (!rs->stmts[j].why && rs->stmts[j].group == group &&
		    nft_reach_clash(&rs->stmts[i], &rs->stmts[j]))
			return &rs->stmts[j];
	return NULL;
}

int nft_assign_groups(struct nft_ruleset *rs, unsigned first, struct nft_group *groups,
		      size_t max)
{
	size_t ng = 0;
	unsigned next = first;

	rs->stuck = rs->stuck_with = NULL;
	for (size_t i = 0; i < rs->n; i++) {
		struct nft_logstmt *s = &rs->stmts[i];
		const struct nft_logstmt *with = NULL, *w;
		size_t g;

		if (s->why)
			continue;
		for (g = 0; g < ng; g++) {
			if (groups[g].level != s->level || groups[g].flags != s->flags)
				continue;
			if (!(w = clash_in(rs, i, groups[g].group)))
				break;
			with = w;
		}
		if (g == ng) {
			while (next <= 65535 && nft_group_user(rs, next))
				next++;
			if (ng == max || next > 65535) {
				rs->stuck = s;
				rs->stuck_with = with;
				return -1;
			}
			groups[ng] = (struct nft_group){next++, s->level, s->flags, 0};
			ng++;
		}
		groups[g].nstmts++;
		s->group = groups[g].group;
	}
	return (int)ng;
}

/* Equal trees; inside a "counter" object the numbers may differ (traffic moves them). */
static bool same_node(const struct ynode *a, const struct ynode *b, bool counter)
{
	if (a->kind != b->kind || a->n != b->n)
		return false;
	if (a->kind == YN_SCALAR)
		return counter || (a->plain == b->plain && strcmp(a->scalar, b->scalar) == 0);
	for (size_t i = 0; i < a->n; i++) {
		bool key = a->kind == YN_MAP && i % 2 == 0;

		if (key ? strcmp(a->items[i]->scalar, b->items[i]->scalar) != 0 :
			  !same_node(a->items[i], b->items[i], counter ||
				     (a->kind == YN_MAP &&
				      strcmp(a->items[i - 1]->scalar, "counter") == 0)))
			return false;
	}
	return true;
}

const struct nft_logstmt *nft_ruleset_changed(const struct nft_ruleset *old,
					      const struct nft_ruleset *now)
{
	for (size_t i = 0; i < old->n; i++) {
		const struct nft_logstmt *s = &old->stmts[i], *t = NULL;

		if (s->why)
			continue;
		for (size_t j = 0; j < now->n && !t; j++)
			if (now->stmts[j].handle == s->handle &&
			    strcmp(now->stmts[j].family, s->family) == 0 &&
			    strcmp(now->stmts[j].table, s->table) == 0 &&
			    strcmp(now->stmts[j].chain, s->chain) == 0)
				t = &now->stmts[j];
		if (!t || !same_node(s->rule, t->rule, false))	/* expr, comment, ... */
			return s;
	}
	return NULL;
}
