/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sluice convert nft: reading nft's JSON listing (nft_ruleset.c) and the
 * rewriting (nft_rewrite.c), on listings nft 1.0.6 wrote
 * (tests/data/nft/README).  The text nft_log_text() builds from the JSON
 * must be the text nft itself printed for the same rule (mixed.txt), and
 * the JSON batch, read back, must hold every other expression unchanged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nft_ruleset.h"

static char *slurp(const char *name)
{
	char path[1024];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/tests/data/nft/%s", TEST_SOURCE_DIR, name);
	f = fopen(path, "r");
	if (!f) {
		perror(path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		exit(1);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void load(struct nft_ruleset *rs, const char *name)
{
	char err[512], *text = slurp(name);
	int rc = nft_ruleset_read(rs, name, text, err, sizeof(err));

	CHECK(rc == 0, "%s: %s", name, err);
	free(text);
}

static const struct nft_logstmt *by_handle(const struct nft_ruleset *rs, uint64_t h, int nth)
{
	for (size_t i = 0; i < rs->n; i++)
		if (rs->stmts[i].handle == h && nth-- == 0)
			return &rs->stmts[i];
	return NULL;
}

/* The JSON of a node, for comparing the batch with the listing. */
static void dump(const struct ynode *n, FILE *f)
{
	if (n->kind == YN_SCALAR) {
		fprintf(f, n->plain ? "%s" : "\"%s\"", n->scalar);
		return;
	}
	fputc(n->kind == YN_SEQ ? '[' : '{', f);
	for (size_t i = 0; i < n->n; i++) {
		if (i)
			fputc(n->kind == YN_MAP && i % 2 ? ':' : ',', f);
		dump(n->items[i], f);
	}
	fputc(n->kind == YN_SEQ ? ']' : '}', f);
}

static char *dumps(const struct ynode *n)
{
	char *s = NULL;
	size_t len;
	FILE *f = open_memstream(&s, &len);

	dump(n, f);
	fclose(f);
	return s;
}

static void test_mixed_read(struct nft_ruleset *rs)
{
	const struct nft_logstmt *s;

	CHECK_EQ_U(rs->nrules, 10);
	CHECK_EQ_U(rs->n, 9);
	CHECK_EQ_U(rs->nflog, 1);
	CHECK_EQ_U(nft_unconvertible(rs), 1);
	s = by_handle(rs, 4, 0);
	CHECK(s && s->level == 6 && s->flags == (NFTLOG_TCPSEQ | NFTLOG_TCPOPT) && !s->why);
	CHECK_STREQ(s ? s->prefix : NULL, "ssh-new ");
	CHECK_STREQ(s ? s->family : NULL, "inet");
	CHECK_STREQ(s ? s->chain : NULL, "input");
	s = by_handle(rs, 5, 0);
	CHECK(s && s->level == 4 && s->flags == NFTLOG_IPOPT && s->expr_index == 1);
	s = by_handle(rs, 6, 0);
	CHECK(s && s->why && strstr(s->why, "audit"), "%s", s && s->why ? s->why : "-");
	CHECK(s && s->mark.line == 1 && s->mark.col > 1);
	s = by_handle(rs, 7, 0);
	CHECK(s && s->flags == NFTLOG_ALL && !s->prefix);
	CHECK(by_handle(rs, 8, 1) && by_handle(rs, 8, 1)->level == 5);
	s = by_handle(rs, 13, 0);
	CHECK(s && s->level == 3 && s->flags == (NFTLOG_UID | NFTLOG_MACDECODE));
	s = by_handle(rs, 2, 0);
	CHECK(s && s->level == 2 && strcmp(s->family, "ip6") == 0);
}

/* nft_log_text() of every statement, found in nft's own line for its rule. */
static void test_text_matches_nft(const struct nft_ruleset *rs)
{
	char *listing = slurp("mixed.txt");

	for (size_t i = 0; i < rs->n; i++) {
		const struct nft_logstmt *s = &rs->stmts[i];
		char *line = nft_listing_rule(listing, s->family, s->table, s->chain, s->handle);
		char text[640];

		CHECK(line, "no line for handle %llu", (unsigned long long)s->handle);
		CHECK(nft_log_text(s, text, sizeof(text)) == 0);
		CHECK(line && strstr(line, text), "'%s' not in '%s'", text, line ? line : "");
		free(line);
	}
	CHECK(!nft_listing_rule(listing, "inet", "filter", "web", 4));
	CHECK(!nft_listing_rule(listing, "ip", "filter", "input", 4));
	free(listing);
}

static void test_groups_and_rewrite(struct nft_ruleset *rs)
{
	struct nft_group g[16];
	const struct nft_logstmt *two[2];
	char *listing = slurp("mixed.txt"), *line, *out;
	int n = nft_assign_groups(rs, 5, g, 16);

	/* (info, tcp seq+opt) (warn, ip opt) (warn, all) (warn, -) (notice, -) (err, uid+ether) (crit, -) */
	CHECK_EQ_I(n, 7);
	CHECK_EQ_U(by_handle(rs, 4, 0)->group, 5);
	CHECK_EQ_U(by_handle(rs, 8, 0)->group, 8);
	CHECK_EQ_U(by_handle(rs, 12, 0)->group, 8);
	CHECK_EQ_U(by_handle(rs, 8, 1)->group, 9);
	CHECK_EQ_U(by_handle(rs, 2, 0)->group, 11);
	CHECK(n == 7 && g[3].nstmts == 2 && g[6].group == 11 && g[6].level == 2);
	CHECK_EQ_I(nft_assign_groups(rs, 65531, g, 16), -1);
	CHECK_EQ_I(nft_assign_groups(rs, 5, g, 16), 7);

	two[0] = by_handle(rs, 8, 0);
	two[1] = by_handle(rs, 8, 1);
	line = nft_listing_rule(listing, "inet", "filter", "input", 8);
	out = line ? nft_rewrite_line(line, two, 2) : NULL;
	CHECK_STREQ(out, "log prefix \"twice-a \" group 8 log prefix \"twice-b \" group 9");
	free(out);
	free(line);
	two[0] = by_handle(rs, 7, 0);
	line = nft_listing_rule(listing, "inet", "filter", "input", 7);
	out = line ? nft_rewrite_line(line, two, 1) : NULL;
	CHECK_STREQ(out, "meta l4proto icmp log group 7 counter packets 0 bytes 0 accept "
			 "comment \"icmp seen\"");
	free(out);
	free(line);
	/* A line that does not hold the statement as nft prints it. */
	two[0] = by_handle(rs, 4, 0);
	CHECK(!nft_rewrite_line("tcp dport 22 log prefix \"ssh-new \" level info", two, 1));
	CHECK(!nft_rewrite_line("comment \"log prefix \"ssh-new \" level info flags tcp "
				"sequence,options\"", two, 1));
	free(listing);
}

/* The batch read back: one replace per rule to change, nothing else changed. */
static void test_batch(const struct nft_ruleset *rs)
{
	char *text = NULL, err[512];
	size_t len, nrep = 0;
	FILE *f = open_memstream(&text, &len);
	struct ynode *b;
	const struct ynode *list;

	CHECK(nft_write_batch(rs, f) == 0);
	fclose(f);
	b = yaml_tree_load_string("batch", text, err, sizeof(err));
	CHECK(b, "%s", err);
	list = b ? yaml_tree_map_get(b, "nftables") : NULL;
	CHECK(list && list->kind == YN_SEQ);
	for (size_t i = 0; list && i < list->n; i++) {
		const struct ynode *rep = yaml_tree_map_get(list->items[i], "replace");
		const struct ynode *rule = rep ? yaml_tree_map_get(rep, "rule") : NULL;
		const struct ynode *expr = rule ? yaml_tree_map_get(rule, "expr") : NULL;
		const struct ynode *h = rule ? yaml_tree_map_get(rule, "handle") : NULL;
		const struct nft_logstmt *s0 = h ? by_handle(rs, strtoull(h->scalar, NULL, 10), 0) : NULL;
		const struct ynode *orig;

		CHECK(expr && s0, "entry %zu", i);
		if (!expr || !s0)
			continue;
		nrep++;
		CHECK(!s0->why || s0->handle == 6);
		CHECK(s0->handle != 6, "the audit-only rule must not be replaced");
		orig = yaml_tree_map_get(s0->rule, "expr");
		CHECK_EQ_U(expr->n, orig->n);
		for (size_t k = 0; k < expr->n && k < orig->n; k++) {
			const struct ynode *log = yaml_tree_map_get(expr->items[k], "log");
			char *a = dumps(expr->items[k]), *o = dumps(orig->items[k]);

			if (log) {
				const struct ynode *g = yaml_tree_map_get(log, "group");

				CHECK(g && g->plain && atoi(g->scalar) >= 5);
				CHECK(!yaml_tree_map_get(log, "level") && !yaml_tree_map_get(log, "flags"));
			} else {
				CHECK_STREQ(a, o);
			}
			free(a);
			free(o);
		}
		if (s0->handle == 7) {
			const struct ynode *c = yaml_tree_map_get(rule, "comment");

			CHECK(c && strcmp(c->scalar, "icmp seen") == 0);
		}
	}
	CHECK_EQ_U(nrep, 7);
	yaml_tree_free(b);
	free(text);
}

static void test_escapes(void)
{
	struct nft_ruleset rs;
	char *text = NULL, *listing = slurp("escapes.txt"), *line, err[256];
	size_t len;
	FILE *f;
	struct nft_group g[4];
	const struct nft_logstmt *s;
	struct ynode *b;

	load(&rs, "escapes.json");
	CHECK_EQ_U(rs.n, 1);
	s = rs.n ? &rs.stmts[0] : NULL;
	CHECK_STREQ(s ? s->prefix : NULL, "q\"b\\s/t\tu\xc3\xa9 ");
	CHECK_EQ_I(nft_assign_groups(&rs, 5, g, 4), 1);
	/* nft's text line cannot be read back (its quote, its tab): the rewrite refuses it. */
	line = nft_listing_rule(listing, "ip", "esc", "in", 2);
	CHECK(line && !nft_rewrite_line(line, &s, 1));
	free(line);
	f = open_memstream(&text, &len);
	nft_write_batch(&rs, f);
	fclose(f);
	b = yaml_tree_load_string("batch", text, err, sizeof(err));
	CHECK(b, "%s", err);
	CHECK(b && strstr(text, "\"prefix\": \"q\\\"b\\\\s/t\\u0009u\xc3\xa9 \", \"group\": 5"),
	      "%s", text);
	yaml_tree_free(b);
	free(text);
	free(listing);
	nft_ruleset_free(&rs);
}

/* Groups that a `log group` of the ruleset holds are skipped (mixed.json: group 3, handle 9). */
static void test_taken_groups(struct nft_ruleset *rs)
{
	struct nft_group g[16];
	const struct nft_used_group *u = nft_group_user(rs, 3);
	int n = nft_assign_groups(rs, 1, g, 16);

	CHECK(u && u->handle == 9 && strcmp(u->chain, "input") == 0);
	CHECK(!nft_group_user(rs, 4));
	CHECK_EQ_I(n, 7);
	CHECK(n == 7 && g[1].group == 2 && g[2].group == 4 && g[6].group == 8);
	for (size_t i = 0; i < rs->n; i++)
		CHECK(rs->stmts[i].why || rs->stmts[i].group != 3, "handle %llu got group 3",
		      (unsigned long long)rs->stmts[i].handle);
	CHECK_EQ_I(nft_assign_groups(rs, 65533, g, 16), -1);
	CHECK_EQ_I(nft_assign_groups(rs, 5, g, 16), 7);
}

/* A later listing: the same rules (counters moved on) or one that differs. */
static void test_changed(const struct nft_ruleset *rs)
{
	char *text = slurp("mixed.json"), *p, err[512];
	struct nft_ruleset now;
	const struct nft_logstmt *s;

	CHECK(nft_ruleset_read(&now, "now", text, err, sizeof(err)) == 0, "%s", err);
	CHECK(!nft_ruleset_changed(rs, &now));
	nft_ruleset_free(&now);
	p = strstr(text, "\"counter\": {\"packets\": 0, \"bytes\": 0}");
	CHECK(p);
	if (p)
		memcpy(p, "\"counter\": {\"packets\": 7, \"bytes\": 9}", 37);
	CHECK(nft_ruleset_read(&now, "now", text, err, sizeof(err)) == 0, "%s", err);
	CHECK(!nft_ruleset_changed(rs, &now), "counters' values are not a change");
	nft_ruleset_free(&now);
	p = strstr(text, "twice-b ");
	CHECK(p);
	if (p)
		p[6] = 'x';
	CHECK(nft_ruleset_read(&now, "now", text, err, sizeof(err)) == 0, "%s", err);
	s = nft_ruleset_changed(rs, &now);
	CHECK(s && s->handle == 8, "the rule with twice-x is a change");
	nft_ruleset_free(&now);
	p = strstr(text, "twice-x ");
	if (p)
		p[6] = 'b';
	p = strstr(text, "\"icmp seen\"");
	CHECK(p);
	if (p)
		p[9] = 'x';
	CHECK(nft_ruleset_read(&now, "now", text, err, sizeof(err)) == 0, "%s", err);
	s = nft_ruleset_changed(rs, &now);
	CHECK(s && s->handle == 7, "a changed comment is a change");
	nft_ruleset_free(&now);
	free(text);
}

/* A rule with an anonymous set: inserted at its handle, the old one deleted. */
static void test_anon_set(void)
{
	struct nft_ruleset rs;
	struct nft_group g[4];
	char *text = NULL, err[256];
	size_t len;
	FILE *f;
	struct ynode *b;

	load(&rs, "anonset.json");
	CHECK_EQ_U(rs.n, 1);
	CHECK(rs.n == 1 && nft_rule_needs_insert(&rs.stmts[0]));
	CHECK_EQ_I(nft_assign_groups(&rs, 5, g, 4), 1);
	f = open_memstream(&text, &len);
	nft_write_batch(&rs, f);
	fclose(f);
	b = yaml_tree_load_string("batch", text, err, sizeof(err));
	CHECK(b, "%s", err);
	CHECK(strstr(text, "{\"insert\": {\"rule\": {\"family\": \"inet\", \"table\": \"f\", "
			   "\"chain\": \"input\", \"handle\": 3, \"expr\": [") &&
	      strstr(text, "{\"log\": {\"prefix\": \"x \", \"group\": 5}}") &&
	      strstr(text, "},\n{\"delete\": {\"rule\": {\"family\": \"inet\", \"table\": \"f\", "
			   "\"chain\": \"input\", \"handle\": 3}}}\n]}") &&
	      !strstr(text, "replace"), "%s", text);
	yaml_tree_free(b);
	free(text);
	nft_ruleset_free(&rs);
}

static void test_unconvertible(void)
{
	struct nft_ruleset rs;
	static const struct {
		uint64_t handle;
		int nth;
		const char *why;
	} want[] = {
		{4, 0, "set or map element"}, {5, 0, "anonymous"}, {6, 0, "audit"},
		{2, 0, "arp"}, {7, 0, "unknown log flag"},
	};

	load(&rs, "unconvertible.json");
	CHECK_EQ_U(rs.n, 6);
	CHECK_EQ_U(nft_unconvertible(&rs), 5);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct nft_logstmt *s = by_handle(&rs, want[i].handle, want[i].nth);

		CHECK(s && s->why && strstr(s->why, want[i].why), "handle %llu: %s",
		      (unsigned long long)want[i].handle, s && s->why ? s->why : "(convertible)");
	}
	CHECK(by_handle(&rs, 6, 1) && !by_handle(&rs, 6, 1)->why);
	nft_ruleset_free(&rs);

	load(&rs, "nolog.json");
	CHECK_EQ_U(rs.n, 0);
	CHECK_EQ_U(rs.nflog, 1);
	CHECK_EQ_U(rs.nrules, 3);
	nft_ruleset_free(&rs);
}

static void test_bad_input(void)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{"{\"nftables\": [", "bad.json:2:1: "},
		{"{\"tables\": []}", "bad.json:1:1: expected nft's JSON listing"},
		{"[1, 2]", "expected nft's JSON listing"},
		{"{\"nftables\": [{\"rule\": {\"family\": \"ip\", \"expr\": []}}]}",
		 "bad.json:1:24: a rule without family, table, chain, handle or expr"},
		{"{\"nftables\": [{\"rule\": 3}]}", "a rule that is not an object"},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct nft_ruleset rs;
		char err[512] = "";

		CHECK(nft_ruleset_read(&rs, "bad.json", bad[i].text, err, sizeof(err)) == -1,
		      "%s", bad[i].text);
		CHECK(strstr(err, bad[i].msg), "'%s': got '%s'", bad[i].text, err);
	}
}

/*
 * clash.json: rules that would share (family, hook, group, prefix) get
 * distinct groups, as nflog's `rules: true` keys them: hooks carried to
 * regular chains through jumps and an anonymous vmap, inet meeting ip and
 * not ip6, an unreached chain meeting nothing, two statements of one rule
 * sharing a group; and when no group is left, the rules are named.
 */
static void test_clash(void)
{
	static const struct {
		const char *table;
		uint64_t handle;
		int nth;
		unsigned group;
	} want[] = {
		{"f", 7, 0, 5}, {"f", 8, 0, 6}, {"f", 10, 0, 5}, {"f", 13, 0, 5}, {"f", 15, 0, 5},
		{"f", 15, 1, 5}, {"f", 17, 0, 7}, {"f", 18, 0, 8}, {"f", 19, 0, 9}, {"f", 20, 0, 5},
		{"g", 2, 0, 10}, {"h", 2, 0, 5},
	};
	struct nft_ruleset rs;
	struct nft_group g[8];

	load(&rs, "clash.json");
	CHECK_EQ_U(rs.n, 12);
	CHECK_EQ_I(nft_assign_groups(&rs, 5, g, 8), 6);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct nft_logstmt *s = NULL;
		int nth = want[i].nth;

		for (size_t k = 0; k < rs.n && !s; k++)
			if (rs.stmts[k].handle == want[i].handle &&
			    !strcmp(rs.stmts[k].table, want[i].table) && nth-- == 0)
				s = &rs.stmts[k];
		CHECK(s, "%s #%llu", want[i].table, (unsigned long long)want[i].handle);
		if (s)
			CHECK(s->group == want[i].group, "%s #%llu: group %u, want %u", want[i].table,
			      (unsigned long long)want[i].handle, s->group, want[i].group);
	}
	/* one group left: the second rule of input with prefix "x " has none */
	CHECK_EQ_I(nft_assign_groups(&rs, 65535, g, 8), -1);
	CHECK(rs.stuck && rs.stuck->handle == 8 && rs.stuck_with && rs.stuck_with->handle == 7);
	/* no room for a group: a new (level, flags), clashing with nothing */
	CHECK_EQ_I(nft_assign_groups(&rs, 5, g, 3), -1);
	CHECK(rs.stuck && rs.stuck->handle == 18 && !rs.stuck_with);
	nft_ruleset_free(&rs);
}

int main(void)
{
	struct nft_ruleset rs;
	char flags[96];

	nft_flags_text(NFTLOG_TCPOPT | NFTLOG_UID, flags, sizeof(flags));
	CHECK_STREQ(flags, "tcp options flags skuid");
	nft_flags_text(NFTLOG_TCPSEQ | NFTLOG_IPOPT | NFTLOG_MACDECODE, flags, sizeof(flags));
	CHECK_STREQ(flags, "tcp sequence flags ip options flags ether");
	CHECK_STREQ(nft_severity_name(4), "warning");
	load(&rs, "mixed.json");
	test_mixed_read(&rs);
	test_text_matches_nft(&rs);
	test_groups_and_rewrite(&rs);
	test_batch(&rs);
	test_taken_groups(&rs);
	test_changed(&rs);
	nft_ruleset_free(&rs);
	test_anon_set();
	test_escapes();
	test_unconvertible();
	test_bad_input();
	test_clash();
	return check_summary("test_nft_convert");
}
