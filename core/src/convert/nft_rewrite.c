/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `sluice convert nft`'s output for nft.  What is applied is a JSON batch:
 * each rule nft listed, written back object for object with only its
 * printk `log` statements changed, so nothing depends on nft's text
 * listing reading back as it was printed (not every expression does).
 * What a human reviews is text: the rule's line of `nft -a list ruleset`
 * with the same statements rewritten — found as nft prints them from the
 * JSON's values, so a line that disagrees with the JSON is noticed.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nft_ruleset.h"

static void json_string(const char *s, FILE *out)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

/* A node as JSON: plain scalars (numbers, true, false, null) as written. */
static void json_node(const struct ynode *n, FILE *out)
{
	switch (n->kind) {
	case YN_SCALAR:
		if (n->plain)
			fputs(n->scalar, out);
		else
			json_string(n->scalar, out);
		break;
	case YN_SEQ:
		fputc('[', out);
		for (size_t i = 0; i < n->n; i++) {
			if (i)
				fputs(", ", out);
			json_node(n->items[i], out);
		}
		fputc(']', out);
		break;
	case YN_MAP:
		fputc('{', out);
		for (size_t i = 0; i + 1 < n->n; i += 2) {
			if (i)
				fputs(", ", out);
			json_string(n->items[i]->scalar, out);
			fputs(": ", out);
			json_node(n->items[i + 1], out);
		}
		fputc('}', out);
		break;
	}
}

static const struct nft_logstmt *stmt_at(const struct nft_ruleset *rs, size_t first,
					 size_t index)
{
	for (size_t i = first; i < rs->n && rs->stmts[i].rule == rs->stmts[first].rule; i++)
		if (rs->stmts[i].expr_index == index && !rs->stmts[i].why)
			return &rs->stmts[i];
	return NULL;
}

/* An anonymous set or map: a "set" whose value is its elements, not "@name". */
static bool has_anon_set(const struct ynode *n, unsigned depth)
{
	if (!n || n->kind == YN_SCALAR || depth > YTREE_MAX_DEPTH)
		return false;
	for (size_t i = 0; i < n->n; i++) {
		if (n->kind == YN_MAP && i % 2 == 0) {
			if (strcmp(n->items[i]->scalar, "set") == 0 &&
			    n->items[i + 1]->kind != YN_SCALAR)
				return true;
			continue;
		}
		if (has_anon_set(n->items[i], depth + 1))
			return true;
	}
	return false;
}

int nft_rule_needs_insert(const struct nft_logstmt *s)
{
	return has_anon_set(yaml_tree_map_get(s->rule, "expr"), 0);
}

/*
 * The rule whose statements start at rs->stmts[first], with them replaced:
 * "replace" by its handle, or "insert" before it (its handle is the
 * position) and "delete" it.
 */
static void json_rule(const struct nft_ruleset *rs, size_t first, FILE *out)
{
	const struct ynode *rule = rs->stmts[first].rule;
	bool insert = nft_rule_needs_insert(&rs->stmts[first]);

	fputs(insert ? "{\"insert\": {\"rule\": {" : "{\"replace\": {\"rule\": {", out);
	for (size_t k = 0; k + 1 < rule->n; k += 2) {
		const struct ynode *v = rule->items[k + 1];

		if (k)
			fputs(", ", out);
		json_string(rule->items[k]->scalar, out);
		fputs(": ", out);
		if (strcmp(rule->items[k]->scalar, "expr") != 0) {
			json_node(v, out);
			continue;
		}
		fputc('[', out);
		for (size_t i = 0; i < v->n; i++) {
			const struct nft_logstmt *s = stmt_at(rs, first, i);

			if (i)
				fputs(", ", out);
			if (!s) {
				json_node(v->items[i], out);
				continue;
			}
			fputs("{\"log\": {", out);
			if (s->prefix) {
				fputs("\"prefix\": ", out);
				json_string(s->prefix, out);
				fputs(", ", out);
			}
			fprintf(out, "\"group\": %u}}", s->group);
		}
		fputc(']', out);
	}
	fputs("}}}", out);
	if (!insert)
		return;
	fputs(",\n{\"delete\": {\"rule\": {", out);
	for (size_t k = 0, any = 0; k + 1 < rule->n; k += 2) {
		const char *key = rule->items[k]->scalar;

		if (strcmp(key, "family") && strcmp(key, "table") && strcmp(key, "chain") &&
		    strcmp(key, "handle"))
			continue;
		fputs(any++ ? ", " : "", out);
		json_string(key, out);
		fputs(": ", out);
		json_node(rule->items[k + 1], out);
	}
	fputs("}}}", out);
}

int nft_write_batch(const struct nft_ruleset *rs, FILE *out)
{
	bool any = false;

	fputs("{\"nftables\": [", out);
	for (size_t i = 0; i < rs->n;) {
		size_t next = i;
		bool convert = false;

		/* Statements of one rule are adjacent: read_rule() adds them in a row. */
		while (next < rs->n && rs->stmts[next].rule == rs->stmts[i].rule)
			convert |= !rs->stmts[next++].why;
		if (convert) {
			fputs(any ? ",\n" : "\n", out);
			json_rule(rs, i, out);
			any = true;
		}
		i = next;
	}
	fputs("\n]}\n", out);
	return ferror(out) ? -1 : 0;
}

int nft_log_text(const struct nft_logstmt *s, char *buf, size_t len)
{
	char flags[96];
	int n;

	nft_flags_text(s->flags, flags, sizeof(flags));
	/* nft leaves out the default level, warn */
	n = snprintf(buf, len, "log%s%s%s%s%s%s%s", s->prefix ? " prefix \"" : "",
		     s->prefix ? s->prefix : "", s->prefix ? "\"" : "",
		     s->level_text || s->level != NFTLOG_LEVEL_DEFAULT ? " level " : "",
		     s->level_text ? s->level_text :
		     s->level != NFTLOG_LEVEL_DEFAULT ? nft_level_name(s->level) : "",
		     flags[0] ? " flags " : "", flags);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int nft_group_text(const struct nft_logstmt *s, char *buf, size_t len)
{
	int n = snprintf(buf, len, "log%s%s%s group %u", s->prefix ? " prefix \"" : "",
			 s->prefix ? s->prefix : "", s->prefix ? "\"" : "", s->group);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* The first place at or after `from` where `word` stands as whole tokens outside quotes. */
static const char *find_tokens(const char *line, size_t from, const char *word)
{
	size_t wl = strlen(word);
	bool quoted = false;

	for (size_t i = 0; line[i]; i++) {
		if (line[i] == '"')
			quoted = !quoted;
		if (quoted || i < from || (i && line[i - 1] != ' '))
			continue;
		if (strncmp(line + i, word, wl) == 0 && (line[i + wl] == ' ' || !line[i + wl]))
			return line + i;
	}
	return NULL;
}

char *nft_rewrite_line(const char *line, const struct nft_logstmt *const *stmts, size_t n)
{
	size_t len = strlen(line), cap = len + 1 + n * 64, used = 0, from = 0;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		char old[640], new[640];
		const char *at;
		size_t keep;

		/* nft prints a prefix between quotes as it is: a quote or a tab would not read back */
		for (const char *p = stmts[i]->prefix; p && *p; p++)
			if (*p == '"' || (unsigned char)*p < 0x20)
				goto fail;
		if (nft_log_text(stmts[i], old, sizeof(old)) ||
		    nft_group_text(stmts[i], new, sizeof(new)) ||
		    !(at = find_tokens(line, from, old)))
			goto fail;
		keep = (size_t)(at - line) - from;
		memcpy(out + used, line + from, keep);
		used += keep;
		memcpy(out + used, new, strlen(new));
		used += strlen(new);
		from = (size_t)(at - line) + strlen(old);
	}
	memcpy(out + used, line + from, len - from + 1);
	return out;
fail:
	free(out);
	return NULL;
}

/* `line` (up to its end or '\n') begins with `a` followed by `b` and then `c`. */
static bool line_is(const char *line, const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b);

	return strncmp(line, a, la) == 0 && strncmp(line + la, b, lb) == 0 &&
	       strncmp(line + la + lb, c, strlen(c)) == 0;
}

char *nft_listing_rule(const char *listing, const char *family, const char *table,
		       const char *chain, uint64_t handle)
{
	bool in_table = false, in_chain = false;
	char tail[40];

	snprintf(tail, sizeof(tail), " # handle %llu", (unsigned long long)handle);
	for (const char *line = listing; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line), tl = strlen(tail);

		if (strncmp(line, "table ", 6) == 0) {
			in_table = line_is(line + 6, family, " ", table) &&
				   strncmp(line + 6 + strlen(family) + 1 + strlen(table), " {", 2) == 0;
			in_chain = false;
		} else if (strncmp(line, "\tchain ", 7) == 0) {
			in_chain = in_table && line_is(line + 7, chain, " {", "");
		} else if (strncmp(line, "\t}", 2) == 0) {
			in_chain = false;
		} else if (in_chain && len > tl + 2 && strncmp(line, "\t\t", 2) == 0 &&
			   strncmp(line + len - tl, tail, tl) == 0) {
			size_t n = len - tl - 2;
			char *rule = malloc(n + 1);

			if (rule) {
				memcpy(rule, line + 2, n);
				rule[n] = '\0';
			}
			return rule;
		}
		line = end ? end + 1 : NULL;
	}
	return NULL;
}
