/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench/rules.sh's reader: reads the ruleset of this network namespace
 * into a rule index the way nflog's `rules: true` does (rule_dump.h: the
 * kernel's netlink dump), and the way it did before (libnftables' JSON
 * listing, rule_index_from_json), READS times each, and prints the median
 * times as key=value words: the whole re-read, and its split into the
 * kernel's part (the dump / libnftables' listing) and sluice's (parsing,
 * building the index), and the netlink read's CPU time (this thread's,
 * the kernel's work for it included).
 *
 *   rules_read [-n READS] [-c | -N]
 *
 * -N reads by netlink only (for profiling it: perf record rules_read -N).
 * -c also checks that both readers built the same index (the same rules,
 * the same shared keys) and exits 1 if not: tests/e2e/test_netns_rules_dump.sh.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "nft_rules.h"
#include "rule_dump.h"
#include "rule_index.h"

#define READS_MAX 101

struct json_read {
	struct sl_rule_index *ix;
	int64_t parse_ns;
	char err[256];
};

static int json_cb(void *arg, const char *json, size_t len, uint32_t gen)
{
	struct json_read *r = arg;
	int64_t t0 = sl_clock_ns(CLOCK_MONOTONIC);

	(void)gen;
	r->ix = sl_rule_index_from_json(json, len, r->err, sizeof(r->err));
	r->parse_ns = sl_clock_ns(CLOCK_MONOTONIC) - t0;
	return r->ix ? 0 : -EPROTO;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static double median_ms(int64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_i64);
	return (n % 2 ? (double)v[n / 2] : (double)(v[n / 2 - 1] + v[n / 2]) / 2) / 1e6;
}

/* The shared keys' lines, in one string sorted. */
struct lines {
	char **v;
	size_t n, cap;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A shared key's line with its rules sorted: the readers may list rules in other orders. */
static void add_line(void *arg, const char *line)
{
	struct lines *l = arg;
	const char *rules = strstr(line, "): ");
	char *copy, *parts[256], *out, *save = NULL;
	size_t n = 0, at;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		if (!(l->v = realloc(l->v, l->cap * sizeof(*l->v))))
			abort();
	}
	if (!rules || !(copy = strdup(rules + 3)) || !(out = malloc(strlen(line) + 8)))
		abort();
	for (char *t = strtok_r(copy, ",", &save); t && n < 256; t = strtok_r(NULL, ",", &save))
		parts[n++] = t + (*t == ' ');
	qsort(parts, n, sizeof(*parts), cmp_str);
	at = (size_t)(rules + 3 - line);
	memcpy(out, line, at);
	out[at] = '\0';
	for (size_t i = 0; i < n; i++) {
		strcat(out, parts[i]);
		if (i + 1 < n)
			strcat(out, ", ");
	}
	free(copy);
	l->v[l->n++] = out;
}

static void lines_free(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/* Each key of one index looked up in the other. */
struct key_check {
	const struct sl_rule_index *other;
	const char *what;
	int bad;
};

static void check_key(void *arg, uint8_t pf, uint8_t hook, uint16_t group, const char *prefix,
		      uint32_t plen, const struct sl_rule *rule)
{
	struct key_check *k = arg;
	const struct sl_rule *o = NULL;
	enum sl_rule_match m = sl_rule_index_find(k->other, pf, hook, group, prefix, plen, &o);

	if (k->bad)
		return;
	if (rule ? m == SL_RULE_ONE && sl_rule_same(rule, o) : m == SL_RULE_SHARED)
		return;
	fprintf(stderr, "rules_read: key (pf %u, hook %u, group %u, prefix \"%.*s\") of the %s index: "
		"%s there, %s in the other\n", pf, hook, group, (int)plen, prefix, k->what,
		rule ? "one rule" : "shared", m == SL_RULE_NONE ? "none" : m == SL_RULE_SHARED ? "shared" :
		"another rule");
	k->bad = 1;
}

/* Every rule of a in b, the same keys and shared keys: 0, or 1 with why on stderr. */
static int same_index(struct sl_rule_index *a, struct sl_rule_index *b)
{
	struct lines la = {0}, lb = {0};
	int bad = 0;

	if (sl_rule_index_count(a) != sl_rule_index_count(b)) {
		fprintf(stderr, "rules_read: %zu rules by netlink, %zu by JSON\n",
			sl_rule_index_count(a), sl_rule_index_count(b));
		return 1;
	}
	for (size_t i = 0; i < sl_rule_index_count(a) && !bad; i++) {
		const struct sl_rule *r = sl_rule_index_rule(a, i);
		size_t j = 0;

		while (j < sl_rule_index_count(b) && !sl_rule_same(r, sl_rule_index_rule(b, j)))
			j++;
		if (j == sl_rule_index_count(b)) {
			fprintf(stderr, "rules_read: %s %s %s #%llu (comment %s, verdict %s) "
				"not read from JSON the same\n", r->family, r->table, r->chain,
				(unsigned long long)r->handle, r->comment ? r->comment : "-",
				r->verdict ? r->verdict : "-");
			bad = 1;
		}
	}
	{
		struct key_check ka = {b, "netlink", 0}, kb = {a, "JSON", 0};
		size_t na = sl_rule_index_keys(a, check_key, &ka), nb = sl_rule_index_keys(b, check_key, &kb);

		if (!bad && (ka.bad || kb.bad || na != nb)) {
			fprintf(stderr, "rules_read: %zu keys by netlink, %zu by JSON\n", na, nb);
			bad = 1;
		}
	}
	sl_rule_index_shared(a, -1, add_line, &la);
	sl_rule_index_shared(b, -1, add_line, &lb);
	if (la.n) qsort(la.v, la.n, sizeof(*la.v), cmp_str);
	if (lb.n) qsort(lb.v, lb.n, sizeof(*lb.v), cmp_str);
	for (size_t i = 0; !bad && (i < la.n || i < lb.n); i++)
		if (i >= la.n || i >= lb.n || strcmp(la.v[i], lb.v[i])) {
			fprintf(stderr, "rules_read: shared keys differ: netlink \"%s\", JSON \"%s\"\n",
				i < la.n ? la.v[i] : "(none)", i < lb.n ? lb.v[i] : "(none)");
			bad = 1;
		}
	lines_free(&la);
	lines_free(&lb);
	return bad;
}

static void usage(void)
{
	fprintf(stderr, "usage: rules_read [-n READS (1-%d)] [-c | -N]\n", READS_MAX);
	exit(2);
}

int main(int argc, char **argv)
{
	int64_t nl_total[READS_MAX], nl_kernel[READS_MAX], nl_parse[READS_MAX], nl_cpu[READS_MAX];
	int64_t js_total[READS_MAX], js_list[READS_MAX], js_parse[READS_MAX];
	struct sl_rule_dump *d = sl_rule_dump_new();
	struct sl_nft_rules *rs = sl_nft_rules_new();
	struct sl_rule_index *last_nl = NULL, *last_js = NULL;
	int reads = 5, check = 0, json = 1, opt, bad = 0;
	size_t rules = 0, bytes = 0;
	unsigned tries = 0;

	while ((opt = getopt(argc, argv, "n:cN")) != -1) {
		if (opt == 'n')
			reads = atoi(optarg);
		else if (opt == 'c')
			check = 1;
		else if (opt == 'N')
			json = 0;
		else
			usage();
	}
	if (reads < 1 || reads > READS_MAX || optind != argc || (check && !json))
		usage();
	if (!d || !rs)
		return 1;
	for (int i = 0; i < reads; i++) {
		struct json_read jr = {0};
		struct sl_rule_index *ix;
		char err[256];
		uint32_t gen;
		int64_t c0 = sl_clock_ns(CLOCK_THREAD_CPUTIME_ID), t0 = sl_clock_ns(CLOCK_MONOTONIC);
		int e = sl_rule_dump_index(d, &ix, &gen, err, sizeof(err));

		nl_total[i] = sl_clock_ns(CLOCK_MONOTONIC) - t0;
		/* the thread's CPU, the kernel's work for its requests included: the figure a loaded machine leaves */
		nl_cpu[i] = sl_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		if (e) {
			fprintf(stderr, "rules_read: netlink: %s%s%s\n", strerror(-e), *err ? ": " : "", err);
			return 1;
		}
		nl_kernel[i] = (int64_t)sl_rule_dump_stats(d)->kernel_ns;
		nl_parse[i] = (int64_t)sl_rule_dump_stats(d)->parse_ns;
		tries += sl_rule_dump_stats(d)->tries;
		bytes = sl_rule_dump_stats(d)->bytes;
		rules = sl_rule_index_count(ix);
		sl_rule_index_free(last_nl);
		last_nl = ix;
		if (!json) {
			js_total[i] = js_list[i] = js_parse[i] = 0;
			continue;
		}
		t0 = sl_clock_ns(CLOCK_MONOTONIC);
		e = sl_nft_rules_json(rs, json_cb, &jr);
		js_total[i] = sl_clock_ns(CLOCK_MONOTONIC) - t0;
		if (e) {
			fprintf(stderr, "rules_read: JSON: %s %s %s\n", strerror(-e), jr.err,
				sl_nft_rules_error(rs));
			return 1;
		}
		js_parse[i] = jr.parse_ns;
		js_list[i] = js_total[i] - jr.parse_ns;
		sl_rule_index_free(last_js);
		last_js = jr.ix;
	}
	if (check)
		bad = same_index(last_nl, last_js);
	printf("log_rules=%zu reads=%d netlink_bytes=%zu netlink_tries=%u "
	       "netlink_ms=%.2f netlink_cpu_ms=%.2f netlink_kernel_ms=%.2f netlink_parse_ms=%.2f "
	       "json_ms=%.2f json_list_ms=%.2f json_parse_ms=%.2f\n",
	       rules, reads, bytes, tries, median_ms(nl_total, reads), median_ms(nl_cpu, reads), median_ms(nl_kernel, reads),
	       median_ms(nl_parse, reads), median_ms(js_total, reads), median_ms(js_list, reads),
	       median_ms(js_parse, reads));
	sl_rule_index_free(last_nl);
	sl_rule_index_free(last_js);
	sl_rule_dump_free(d);
	sl_nft_rules_free(rs);
	return bad;
}
