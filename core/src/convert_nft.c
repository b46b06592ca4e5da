/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `sluice convert nft`: printk `log` rules to NFLOG.
 *
 * Reads the ruleset as JSON (nft_ruleset.c), gives each distinct (level,
 * flags) of the printk `log` statements its own NFLOG group from --group
 * upward (a logline formatter has one set of flags, a syslog output one
 * severity, so each such pair needs its own stack; the prefix travels with
 * the packet and needs none), and prints
 *   - the nft batch that replaces every such rule by the same rule with
 *     `log group N prefix "..."`, as text to review (nft_rewrite.c), and
 *   - a sluice YAML: per group nflog -> decode -> logline (the flags) ->
 *     file (all groups append to one file, as printk's lines land in one
 *     kern.log) and -> syslog (facility kern, the level's severity).
 * --apply writes the YAML beside its destination, checks it with
 * `sluice -t`, applies the JSON batch with one `nft -j -f` (atomic: all
 * rules or none) and only then renames the YAML into place; any failure
 * before that changes nothing.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "convert.h"
#include "nft_ruleset.h"
#include "plugin_loader.h"
#include "subproc.h"

#define ME "sluice convert nft"
#define MAX_GROUPS 256		/* 8 levels x 32 flag sets */

struct nft_opts {
	unsigned group;
	const char *file, *yaml, *batch, *log_file, *syslog;
	bool apply, check;
};

static void usage(FILE *out)
{
	fputs("usage: sluice convert nft [--group N] [--file RULESET.json|-] [--yaml OUT]\n"
	      "                          [--apply | --check] [--batch OUT.json]\n"
	      "                          [--log-file PATH] [--syslog ADDRESS|none]\n"
	      "  --group N       first NFLOG group; one group per distinct (level, flags) (default 5)\n"
	      "  --file F        read `nft -j list ruleset` output from F ('-': stdin) instead of\n"
	      "                  running it (a preview: --apply needs the live ruleset)\n"
	      "  --yaml OUT      write the sluice configuration to OUT (default: stdout)\n"
	      "  --apply         write OUT, check it with sluice -t, then apply the batch with\n"
	      "                  one nft -j -f; on any failure nothing is changed\n"
	      "  --check         only say what cannot be converted; exit 1 if anything\n"
	      "  --batch OUT     also write the JSON batch (for nft -j -f)\n"
	      "  --log-file PATH the file output (default /var/log/sluice/firewall.log)\n"
	      "  --syslog ADDR   the syslog output's unix socket (default /dev/log); none: no syslog\n",
	      out);
}

static int parse_opts(int argc, char **argv, struct nft_opts *o)
{
	static const struct option longopts[] = {
		{"group", required_argument, NULL, 'g'}, {"file", required_argument, NULL, 'f'},
		{"yaml", required_argument, NULL, 'y'},	 {"batch", required_argument, NULL, 'b'},
		{"log-file", required_argument, NULL, 'l'}, {"syslog", required_argument, NULL, 's'},
		{"apply", no_argument, NULL, 'a'},	 {"check", no_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},	 {NULL, 0, NULL, 0},
	};
	int c;

	*o = (struct nft_opts){.group = 5, .log_file = "/var/log/sluice/firewall.log",
			       .syslog = "/dev/log"};
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		char *end;
		unsigned long v;

		switch (c) {
		case 'g':
			errno = 0;
			v = strtoul(optarg, &end, 0);
			if (errno || *end || !*optarg || v > 65535) {
				fprintf(stderr, ME ": --group: expected 0-65535, got '%s'\n", optarg);
				return EX_USAGE;
			}
			o->group = (unsigned)v;
			break;
		case 'f': o->file = optarg; break;
		case 'y': o->yaml = optarg; break;
		case 'b': o->batch = optarg; break;
		case 'l': o->log_file = optarg; break;
		case 's': o->syslog = strcmp(optarg, "none") ? optarg : NULL; break;
		case 'a': o->apply = true; break;
		case 'c': o->check = true; break;
		case 'h': usage(stdout); return -1;
		default: usage(stderr); return EX_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, ME ": unexpected argument '%s'\n", argv[optind]);
		return EX_USAGE;
	}
	if (o->apply && (o->check || o->file || !o->yaml)) {
		fprintf(stderr, ME ": --apply needs --yaml OUT and the live ruleset (no --file, "
				"no --check)\n");
		return EX_USAGE;
	}
	return 0;
}

static char *read_stream(FILE *f)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);

	while (buf) {
		size_t r = fread(buf + n, 1, cap - 1 - n, f);

		n += r;
		if (n + 1 < cap)
			break;
		if (cap > YTREE_MAX_FILE) {
			free(buf);
			return NULL;
		}
		char *b = realloc(buf, cap * 2);

		if (!b)
			free(buf);
		buf = b;
		cap *= 2;
	}
	if (buf)
		buf[n] = '\0';
	return buf;
}

/* The ruleset's JSON: from the file, or from `nft -j list ruleset`. */
static char *load_json(const char *file, const char **name)
{
	char *const argv[] = {"nft", "-j", "list", "ruleset", NULL};
	char err[256], *text = NULL;
	size_t len;
	int rc;

	if (file) {
		FILE *f = strcmp(file, "-") ? fopen(file, "r") : stdin;

		*name = strcmp(file, "-") ? file : "<stdin>";
		if (!f) {
			fprintf(stderr, ME ": %s: %s\n", file, strerror(errno));
			*name = NULL;	/* cannot be opened: EX_NOINPUT, as convert ulogd */
			return NULL;
		}
		text = read_stream(f);
		if (f != stdin)
			fclose(f);
		if (!text)
			fprintf(stderr, ME ": %s: cannot read it (larger than %s?)\n", *name,
				YTREE_MAX_FILE_TEXT);
		return text;
	}
	*name = "nft -j list ruleset";
	rc = spawn_run(argv, &text, &len, 0, err, sizeof(err));
	if (rc) {
		if (rc < 0)
			fprintf(stderr, ME ": %s\n", err);
		else
			fprintf(stderr, ME ": nft -j list ruleset failed (exit status %d)\n", rc);
		free(rc < 0 ? NULL : text);
		return NULL;
	}
	return text;
}

/* A prefix in a comment: printable ASCII only, so a line stays one line. */
static void comment_text(const char *s, FILE *out)
{
	for (; s && *s; s++)
		fputc(*s >= 0x20 && *s < 0x7f ? *s : '?', out);
}

static void report(const struct nft_ruleset *rs, const char *name)
{
	for (size_t i = 0; i < rs->n; i++) {
		const struct nft_logstmt *s = &rs->stmts[i];
		char text[640];

		if (!s->why)
			continue;
		if (nft_log_text(s, text, sizeof(text)))
			snprintf(text, sizeof(text), "log");
		fprintf(stderr, ME ": %s:%u:%u: %s %s %s handle %llu: `%s` cannot be converted: %s\n",
			name, s->mark.line, s->mark.col, s->family, s->table, s->chain,
			(unsigned long long)s->handle, text, s->why);
	}
}

static void describe_group(const struct nft_group *g, FILE *out)
{
	char flags[96];

	nft_flags_text(g->flags, flags, sizeof(flags));
	fprintf(out, "# group %u: level %s (syslog severity %s), flags %s: %zu statement%s\n",
		g->group, nft_level_name(g->level), nft_severity_name(g->level),
		flags[0] ? flags : "none", g->nstmts, g->nstmts == 1 ? "" : "s");
}

/* The statements of the rule that starts at stmts[i], convertible ones only. */
static size_t rule_stmts(const struct nft_ruleset *rs, size_t i,
			 const struct nft_logstmt **out, size_t max, size_t *next)
{
	size_t n = 0, j;

	for (j = i; j < rs->n && rs->stmts[j].rule == rs->stmts[i].rule; j++)
		if (!rs->stmts[j].why) {
			if (n < max)
				out[n] = &rs->stmts[j];
			n++;
		}
	*next = j;
	return n;
}

static void print_batch_text(const struct nft_ruleset *rs, const struct nft_group *groups,
			     int ngroups, const char *listing, FILE *out)
{
	fprintf(out, "#!/usr/sbin/nft -f\n"
		     "# sluice convert nft: printk log statements -> NFLOG groups %u-%u\n",
		groups[0].group, groups[ngroups - 1].group);
	for (int g = 0; g < ngroups; g++)
		describe_group(&groups[g], out);
	fputs("# --apply applies the same change as one JSON batch (nft -j -f): all rules or none\n",
	      out);
	for (size_t i = 0, next; i < rs->n; i = next) {
		const struct nft_logstmt *st[64];
		bool listing_ok = true;
		size_t n = rule_stmts(rs, i, st, 64, &next);
		char *old = NULL, *new = NULL;

		if (!n)
			continue;
		if (n > 64)	/* more than a line can be checked for: show the JSON's */
			n = 64, listing_ok = false;
		if (listing && listing_ok)
			old = nft_listing_rule(listing, st[0]->family, st[0]->table, st[0]->chain,
					       st[0]->handle);
		if (old)
			new = nft_rewrite_line(old, st, n);
		fprintf(out, "\n# %s %s %s handle %llu", st[0]->family, st[0]->table, st[0]->chain,
			(unsigned long long)st[0]->handle);
		if (new) {
			fprintf(out, ", was:\n#\t%s\nreplace rule %s %s %s handle %llu %s\n", old,
				st[0]->family, st[0]->table, st[0]->chain,
				(unsigned long long)st[0]->handle, new);
		} else {
			fputs(listing ? " (nft's text of it does not match the JSON or cannot be read "
					"back; the JSON batch changes only these statements):\n" :
					" (no text listing read; --batch writes the JSON batch):\n",
			      out);
			for (size_t k = 0; k < n; k++) {
				char a[640], b[640];

				if (nft_log_text(st[k], a, sizeof(a)) ||
				    nft_group_text(st[k], b, sizeof(b)))
					continue;
				fprintf(out, "#\t%s  ->  %s\n", a, b);
			}
		}
		free(old);
		free(new);
	}
}

static void yaml_quoted(const char *s, FILE *out)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(out, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

/* Whether this build's file output has line_header (issue 13 §3). */
static bool file_has_line_header(void)
{
	struct plugin_loader l;
	const struct loaded_plugin *p;
	char err[512];
	bool has = false;

	if (loader_init(&l, NULL, 0))
		return false;
	p = loader_find(&l, "file", err, sizeof(err));
	for (const struct sl_option *o = p ? p->desc->options : NULL; o && o->name; o++)
		has |= strcmp(o->name, "line_header") == 0;
	loader_free(&l);
	return has;
}

static void yaml_stack_head(const struct nft_group *g, FILE *out)
{
	/* qtimeout: printk wrote at once; the kernel's NFLOG default holds a batch up to 1 s */
	fprintf(out, "    - { plugin: nflog, group: %u, qtimeout: 50ms }\n    - decode\n"
		"    - { plugin: logline",
		g->group);
	if (g->flags & NFTLOG_TCPSEQ)
		fputs(", tcp_sequence: true", out);
	if (g->flags & NFTLOG_TCPOPT)
		fputs(", tcp_options: true", out);
	if (g->flags & NFTLOG_IPOPT)
		fputs(", ip_options: true", out);
	if (g->flags & NFTLOG_UID)
		fputs(", uid: true", out);
	if (g->flags & NFTLOG_MACDECODE)
		fputs(", ether: true", out);
	fputs(" }\n", out);
}

static void write_yaml(const struct nft_ruleset *rs, const struct nft_group *groups,
		       int ngroups, const struct nft_opts *o, FILE *out)
{
	bool header = file_has_line_header();

	fputs("# SPDX-License-Identifier: GPL-2.0-or-later\n"
	      "# Written by `sluice convert nft`: the printk `log` rules, now `log group N`,\n"
	      "# logged as the kernel printed them (logline), to a file and to syslog.\n", out);
	for (int g = 0; g < ngroups; g++) {
		describe_group(&groups[g], out);
		for (size_t i = 0; i < rs->n; i++) {
			const struct nft_logstmt *s = &rs->stmts[i];

			if (s->why || s->group != groups[g].group)
				continue;
			fprintf(out, "#   %s %s %s handle %llu, %s", s->family, s->table, s->chain,
				(unsigned long long)s->handle, s->prefix ? "prefix \"" : "no prefix\n");
			if (s->prefix) {
				comment_text(s->prefix, out);
				fputs("\"\n", out);
			}
		}
	}
	if (header)
		fputs("# The file's lines start as kern.log's (line_header: syslog).\n", out);
	else
		fputs("# This build's file output has no line_header: its lines hold the kernel's\n"
		      "# text alone (prefix, IN=, ...), without kern.log's date, host and tag.\n",
		      out);
	fputs("# Every group's file output appends to the same file: whole lines, in the\n"
	      "# order each output flushes them (flush_interval), not strictly by time.\n"
	      "stacks:\n", out);
	for (int g = 0; g < ngroups; g++) {
		fprintf(out, "  nft-%u-file:\n", groups[g].group);
		yaml_stack_head(&groups[g], out);
		fputs("    - plugin: file\n      file: ", out);
		yaml_quoted(o->log_file, out);
		fputs(header ? "\n      line_header: syslog\n" : "\n", out);
		if (!o->syslog)
			continue;
		fprintf(out, "  nft-%u-syslog:\n", groups[g].group);
		yaml_stack_head(&groups[g], out);
		fputs("    - plugin: syslog\n      transport: unix\n      address: ", out);
		yaml_quoted(o->syslog, out);
		fprintf(out, "\n      facility: kern\n      severity: %s\n",
			nft_severity_name(groups[g].level));
	}
}

static int write_file(const char *path, int fd, const struct nft_ruleset *rs,
		      const struct nft_group *groups, int ngroups, const struct nft_opts *o,
		      bool yaml)
{
	FILE *f = fd >= 0 ? fdopen(fd, "w") : fopen(path, "w");
	int bad;

	if (!f) {
		fprintf(stderr, ME ": %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (yaml)
		write_yaml(rs, groups, ngroups, o, f);
	else
		nft_write_batch(rs, f);
	bad = ferror(f);
	bad |= fclose(f) != 0;
	if (bad)
		fprintf(stderr, ME ": writing %s: %s\n", path, strerror(errno));
	return bad ? -1 : 0;
}

/* --apply: YAML beside its place, sluice -t, one nft -j -f, then rename. */
static int apply(const struct nft_ruleset *rs, const struct nft_group *groups, int ngroups,
		 const struct nft_opts *o)
{
	char ytmp[PATH_MAX], jtmp[] = "/tmp/sluice-convert-nft-XXXXXX", err[256];
	int fd, rc;

	if (snprintf(ytmp, sizeof(ytmp), "%s.XXXXXX", o->yaml) >= (int)sizeof(ytmp) ||
	    (fd = mkstemp(ytmp)) < 0) {
		fprintf(stderr, ME ": %s: cannot create a file beside it: %s\n", o->yaml,
			strerror(errno));
		return 1;
	}
	if (write_file(ytmp, fd, rs, groups, ngroups, o, true))
		goto fail_yaml;
	{
		char *const argv[] = {"/proc/self/exe", "-t", "-c", ytmp, NULL};

		rc = spawn_run(argv, NULL, NULL, 1, err, sizeof(err));
	}
	if (rc) {
		fprintf(stderr, ME ": sluice -t rejected the generated configuration%s%s; "
				"nothing changed\n", rc < 0 ? ": " : "", rc < 0 ? err : "");
		goto fail_yaml;
	}
	if ((fd = mkstemp(jtmp)) < 0) {
		fprintf(stderr, ME ": %s: %s\n", jtmp, strerror(errno));
		goto fail_yaml;
	}
	if (write_file(jtmp, fd, rs, groups, ngroups, o, false))
		goto fail_json;
	{
		char *const argv[] = {"nft", "-j", "-f", jtmp, NULL};

		rc = spawn_run(argv, NULL, NULL, 0, err, sizeof(err));
	}
	if (rc) {
		fprintf(stderr, ME ": %s%snft -j -f refused the batch; nothing changed (nft "
				"applies a batch whole or not at all)\n", rc < 0 ? err : "",
			rc < 0 ? ": " : "");
		goto fail_json;
	}
	unlink(jtmp);
	if (rename(ytmp, o->yaml)) {
		fprintf(stderr, ME ": the ruleset is changed, but renaming %s to %s failed: %s\n",
			ytmp, o->yaml, strerror(errno));
		return 1;
	}
	fprintf(stderr, ME ": applied; run sluice -c %s\n", o->yaml);
	return 0;
fail_json:
	unlink(jtmp);
fail_yaml:
	unlink(ytmp);
	return 1;
}

static int convert(struct nft_ruleset *rs, const struct nft_opts *o)
{
	static struct nft_group groups[MAX_GROUPS];
	char *listing = NULL;
	size_t todo = rs->n - nft_unconvertible(rs), len;
	int ngroups;

	if (!todo) {
		printf("no printk log statements to convert in %zu rules (%zu already log to a group): "
		       "nothing to do\n", rs->nrules, rs->nflog);
		return 0;
	}
	ngroups = nft_assign_groups(rs, o->group, groups, MAX_GROUPS);
	if (ngroups < 0) {
		fprintf(stderr, ME ": --group %u: the groups needed would pass 65535\n", o->group);
		return EX_USAGE;
	}
	if (!o->file) {
		char *const argv[] = {"nft", "-a", "list", "ruleset", NULL};
		char err[256];

		if (spawn_run(argv, &listing, &len, 0, err, sizeof(err))) {
			fprintf(stderr, ME ": nft -a list ruleset: no text to show (%s)\n", err);
			listing = NULL;
		}
	}
	print_batch_text(rs, groups, ngroups, listing, stdout);
	free(listing);
	fflush(stdout);
	if (o->batch && write_file(o->batch, -1, rs, groups, ngroups, o, false))
		return 1;
	if (o->apply)
		return apply(rs, groups, ngroups, o);
	if (o->yaml)
		return write_file(o->yaml, -1, rs, groups, ngroups, o, true) ? 1 : 0;
	fputs("\n# ---- sluice configuration (--yaml FILE writes it to a file) ----\n", stdout);
	write_yaml(rs, groups, ngroups, o, stdout);
	return 0;
}

int convert_nft_main(int argc, char **argv)
{
	struct nft_opts o;
	struct nft_ruleset rs;
	const char *name = NULL;
	char err[1024], *text;
	int rc = parse_opts(argc, argv, &o);
	size_t bad;

	if (rc)
		return rc < 0 ? 0 : rc;
	/* exit status as convert ulogd's: 2 for input that is not valid, 66 unopenable */
	if (!(text = load_json(o.file, &name)))
		return o.file && !name ? EX_NOINPUT : 1;
	rc = nft_ruleset_read(&rs, name, text, err, sizeof(err));
	free(text);
	if (rc) {
		fprintf(stderr, ME ": %s\n", err);
		return 2;
	}
	report(&rs, name);
	bad = nft_unconvertible(&rs);
	if (o.check) {
		printf("%zu printk log statement%s in %zu rules: %zu convertible, %zu not\n", rs.n,
		       rs.n == 1 ? "" : "s", rs.nrules, rs.n - bad, bad);
		rc = bad ? 1 : 0;
	} else {
		rc = convert(&rs, &o);
	}
	nft_ruleset_free(&rs);
	return rc;
}
