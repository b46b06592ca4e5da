/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `sluice convert nft`: printk `log` rules to NFLOG.
 *
 * Reads the ruleset as JSON (nft_ruleset.c), gives each distinct (level,
 * flags) of the printk `log` statements its own NFLOG group from --group
 * upward (a logline formatter has one set of flags, a syslog output one
 * severity, so each such pair needs its own stack; the prefix travels with
 * the packet and needs none), and more groups where two rules would share
 * (family, hook, group, prefix) so that nflog's `rules: true` can tell
 * them apart (nft_reach.c), and prints
 *   - the nft batch that replaces every such rule by the same rule with
 *     `log group N prefix "..."`, as text to review (nft_rewrite.c), and
 *   - a sluice YAML: per group nflog -> decode -> logline (the flags) ->
 *     file (all groups append to one file, as printk's lines land in one
 *     kern.log) and -> syslog (facility kern, the level's severity).
 * --apply writes the YAML beside its destination (with the mode, owner
 * and group of the file it replaces), checks it with `sluice -t`, dry-runs
 * the JSON batch (`nft -c`), lists the live ruleset again and applies only
 * if every rule the batch changes is still what was read, in the same
 * ruleset generation (nft_genid.c) as that second listing; one `nft -j -f`
 * (atomic: all rules or none) and only then the YAML's rename.  Any
 * failure before that changes nothing.  --check runs the same dry run.
 * Everything taken from the ruleset is escaped before it is printed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <unistd.h>

#include "convert.h"
#include "ident.h"
#include "infile.h"
#include "nft_genid.h"
#include "nft_ruleset.h"
#include "plugin_loader.h"
#include "subproc.h"

#define ME "sluice convert nft"
#define MAX_GROUPS 4096	/* 8 levels x 32 flag sets, and more where rules would clash */

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
	      "  --group N       first NFLOG group; one group per distinct (level, flags), more where\n"
	      "                  rules would share hook and prefix (default 5)\n"
	      "  --file F        read `nft -j list ruleset` output from F ('-': stdin) instead of\n"
	      "                  running it; --apply then applies only if the live ruleset still\n"
	      "                  holds the rules F shows\n"
	      "  --yaml OUT      write the sluice configuration to OUT (default: stdout)\n"
	      "  --apply         write OUT, check it with sluice -t, dry-run the batch (nft -c),\n"
	      "                  then apply it with one nft -j -f if the live ruleset still holds\n"
	      "                  the rules that were read; on any failure nothing is changed\n"
	      "  --check         only say what cannot be converted and dry-run the batch\n"
	      "                  (nft -c; not with --file); exit 1 if anything fails\n"
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
	if (o->apply && (o->check || !o->yaml)) {
		fprintf(stderr, ME ": --apply needs --yaml OUT (and no --check)\n");
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
		FILE *f = strcmp(file, "-") ? infile_fopen(file, err, sizeof(err)) : stdin;

		*name = strcmp(file, "-") ? file : "<stdin>";
		if (!f) {
			fprintf(stderr, ME ": %s: %s\n", file, err);
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
	rc = subproc_run(argv, &text, &len, 0, err, sizeof(err));
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

/*
 * Text from the ruleset (names, prefixes, nft's own lines), for a comment,
 * a message or a terminal: printable ASCII as it is, a backslash doubled,
 * every other byte as \xNN, so it stays on its line and sends the
 * terminal no escape sequence.
 */
static void esc_text(const char *s, FILE *out)
{
	for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
		if (*p == '\\')
			fputs("\\\\", out);
		else if (*p >= 0x20 && *p < 0x7f)
			fputc(*p, out);
		else
			fprintf(out, "\\x%02x", *p);
	}
}

/* Text that can stand in an nft command as it is: printable ASCII only. */
static bool plain_text(const char *s)
{
	for (; s && *s; s++)
		if (*s < 0x20 || *s >= 0x7f)
			return false;
	return s != NULL;
}

/* "FAMILY TABLE CHAIN handle N", escaped. */
static void rule_where(const char *family, const char *table, const char *chain,
		       uint64_t handle, FILE *out)
{
	esc_text(family, out);
	fputc(' ', out);
	esc_text(table, out);
	fputc(' ', out);
	esc_text(chain, out);
	fprintf(out, " handle %llu", (unsigned long long)handle);
}

static void rule_name(const struct nft_logstmt *s, FILE *out)
{
	rule_where(s->family, s->table, s->chain, s->handle, out);
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
		fprintf(stderr, ME ": ");
		esc_text(name, stderr);
		fprintf(stderr, ":%u:%u: ", s->mark.line, s->mark.col);
		rule_name(s, stderr);
		fputs(": `", stderr);
		esc_text(text, stderr);
		fprintf(stderr, "` cannot be converted: %s\n", s->why);
	}
}

/* Group i's comment line; a further group of the same (level, flags) says why it is one. */
static void describe_group(const struct nft_group *groups, int i, FILE *out)
{
	const struct nft_group *g = &groups[i];
	bool again = false;
	char flags[96];

	for (int k = 0; k < i; k++)
		again |= groups[k].level == g->level && groups[k].flags == g->flags;
	nft_flags_text(g->flags, flags, sizeof(flags));
	fprintf(out, "# group %u: level %s (syslog severity %s), flags %s: %zu statement%s%s\n",
		g->group, nft_level_name(g->level), nft_severity_name(g->level),
		flags[0] ? flags : "none", g->nstmts, g->nstmts == 1 ? "" : "s",
		again ? " (a further group: in an earlier one, rules: true could not tell its "
			"rules from others with the same hook and prefix)" : "");
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

/* The rule's old line as a comment, and the nft command(s) that change it. */
static void print_rule_text(const struct nft_logstmt *s, const char *old, const char *new,
			    FILE *out)
{
	const char *f = s->family, *t = s->table, *c = s->chain;
	unsigned long long h = (unsigned long long)s->handle;

	fprintf(out, ", was:\n#\t%s\n", old);
	if (!nft_rule_needs_insert(s)) {
		fprintf(out, "replace rule %s %s %s handle %llu %s\n", f, t, c, h, new);
		return;
	}
	fputs("# (nft 1.0.6 cannot replace a rule with an anonymous set: inserted anew, the old "
	      "one deleted)\n", out);
	fprintf(out, "insert rule %s %s %s position %llu %s\ndelete rule %s %s %s handle %llu\n", f,
		t, c, h, new, f, t, c, h);
}

static void print_batch_text(const struct nft_ruleset *rs, const struct nft_group *groups,
			     int ngroups, const char *listing, FILE *out)
{
	fprintf(out, "#!/usr/sbin/nft -f\n"
		     "# sluice convert nft: printk log statements -> NFLOG groups %u-%u\n",
		groups[0].group, groups[ngroups - 1].group);
	for (int g = 0; g < ngroups; g++)
		describe_group(groups, g, out);
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
		fputs("\n# ", out);
		rule_name(st[0], out);
		/* nft reads a table or chain name back unquoted only when it is plain */
		if (new && plain_text(old) && plain_text(new) && ident_valid(st[0]->family) &&
		    ident_valid(st[0]->table) && ident_valid(st[0]->chain)) {
			print_rule_text(st[0], old, new, out);
		} else {
			fputs(listing ? " (nft's text of it does not match the JSON, cannot be read "
					"back or holds bytes that are not printable ASCII; the JSON batch "
					"changes only these statements):\n" :
					" (no text listing read; --batch writes the JSON batch):\n",
			      out);
			for (size_t k = 0; k < n; k++) {
				char a[640], b[640];

				if (nft_log_text(st[k], a, sizeof(a)) ||
				    nft_group_text(st[k], b, sizeof(b)))
					continue;
				fputs("#\t", out);
				esc_text(a, out);
				fputs("  ->  ", out);
				esc_text(b, out);
				fputc('\n', out);
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

	if (plugin_loader_init(&l, NULL, 0))
		return false;
	p = plugin_loader_find(&l, "file", err, sizeof(err));
	for (const struct sl_option *o = p ? p->desc->options : NULL; o && o->name; o++)
		has |= strcmp(o->name, "line_header") == 0;
	plugin_loader_free(&l);
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
		describe_group(groups, g, out);
		for (size_t i = 0; i < rs->n; i++) {
			const struct nft_logstmt *s = &rs->stmts[i];

			if (s->why || s->group != groups[g].group)
				continue;
			fputs("#   ", out);
			rule_name(s, out);
			fputs(s->prefix ? ", prefix \"" : ", no prefix\n", out);
			if (s->prefix) {
				esc_text(s->prefix, out);
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
	FILE *f;
	int bad;

	/* As the outputs' files: a FIFO nobody reads fails (ENXIO), never blocks. */
	if (fd < 0 && (fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_CLOEXEC |
				 O_NOCTTY, 0666)) >= 0)
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		fprintf(stderr, ME ": %s: %s\n", path,
			errno == ENXIO ? "a FIFO nobody reads (not waited on)" : strerror(errno));
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

/*
 * A temporary file beside the YAML's place, with the mode, owner and group
 * of the file it will replace (0644 root's for a new one): mkstemp's 0600
 * would lock the daemon's user out of its configuration.
 */
static int yaml_tmp(const char *yaml, char *tmp, size_t len)
{
	int fd, old;
	struct stat st = {.st_mode = 0644, .st_uid = (uid_t)-1, .st_gid = (gid_t)-1};

	if (snprintf(tmp, len, "%s.XXXXXX", yaml) >= (int)len || (fd = mkstemp(tmp)) < 0) {
		fprintf(stderr, ME ": %s: cannot create a file beside it: %s\n", yaml,
			strerror(errno));
		return -1;
	}
	old = open(yaml, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (old >= 0 && (fstat(old, &st) || !S_ISREG(st.st_mode))) {
		fprintf(stderr, ME ": %s: not a regular file\n", yaml);
		goto fail;
	}
	if (old < 0 && errno != ENOENT) {
		fprintf(stderr, ME ": %s: %s\n", yaml, errno == ELOOP ? "a symbolic link (name the "
			"file itself: the rename would replace the link)" : strerror(errno));
		goto fail;
	}
	if (fchown(fd, st.st_uid, st.st_gid) || fchmod(fd, st.st_mode & 07777)) {
		fprintf(stderr, ME ": %s: cannot give it %s's owner and mode: %s\n", tmp, yaml,
			strerror(errno));
		goto fail;
	}
	if (old >= 0)
		close(old);
	return fd;
fail:
	if (old >= 0)
		close(old);
	close(fd);
	unlink(tmp);
	return -1;
}

/* `nft -j [-c] -f BATCH`: 0, or its exit status (128+N: killed by signal N; -1: not run). */
static int nft_batch(const char *batch, bool dry)
{
	char *const argv_dry[] = {"nft", "-c", "-j", "-f", (char *)batch, NULL};
	char *const argv[] = {"nft", "-j", "-f", (char *)batch, NULL};
	char err[256];
	int rc = subproc_run(dry ? argv_dry : argv, NULL, NULL, 0, err, sizeof(err));

	if (rc < 0)
		fprintf(stderr, ME ": %s\n", err);
	else if (rc > 128)
		fprintf(stderr, ME ": nft%s was killed by signal %d (nft 1.0.6 aborts on some "
				"batches)\n", dry ? " -c" : "", rc - 128);
	return rc;
}

/* The batch in a temporary file; its name in tmp. */
static int batch_tmp(const struct nft_ruleset *rs, const struct nft_group *groups, int ngroups,
		     const struct nft_opts *o, char *tmp)
{
	int fd = mkstemp(tmp);

	if (fd < 0) {
		fprintf(stderr, ME ": %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	if (write_file(tmp, fd, rs, groups, ngroups, o, false)) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/*
 * Whether the live ruleset still holds every rule the batch changes as rs
 * read it: a listing made within one generation (read before and after
 * it), *gen that generation.  0 yes, -1 no (said why).
 */
static int live_unchanged(const struct nft_ruleset *rs, uint32_t *gen)
{
	for (int try = 0; try < 3; try++) {
		struct nft_ruleset now;
		const struct nft_logstmt *s;
		const char *name;
		char err[512], *text;
		uint32_t after;
		int rc;

		if (nft_genid_get(gen, err, sizeof(err))) {
			fprintf(stderr, ME ": %s; nothing changed\n", err);
			return -1;
		}
		if (!(text = load_json(NULL, &name)))
			return -1;
		rc = nft_ruleset_read(&now, name, text, err, sizeof(err));
		free(text);
		if (rc) {
			fprintf(stderr, ME ": %s\n", err);
			return -1;
		}
		if (nft_genid_get(&after, err, sizeof(err))) {
			fprintf(stderr, ME ": %s; nothing changed\n", err);
			nft_ruleset_free(&now);
			return -1;
		}
		s = nft_ruleset_changed(rs, &now);
		nft_ruleset_free(&now);
		if (after != *gen)	/* changed while listing: list again */
			continue;
		if (!s)
			return 0;
		fputs(ME ": the live ruleset is not the one read: rule ", stderr);
		rule_name(s, stderr);
		fputs(" is gone or different; nothing changed (run it again on the live ruleset)\n",
		      stderr);
		return -1;
	}
	fputs(ME ": the ruleset kept changing while it was listed; nothing changed\n", stderr);
	return -1;
}

/*
 * --apply: the YAML beside its place, sluice -t, the live ruleset checked
 * against the one read, nft -c, the generation unchanged since that check
 * (else the check again), one nft -j -f, then the rename.  Between
 * the last check and nft's commit a few milliseconds pass in which another
 * writer could commit; the generation after the commit tells.
 */
static int apply(const struct nft_ruleset *rs, const struct nft_group *groups, int ngroups,
		 const struct nft_opts *o)
{
	char ytmp[PATH_MAX], jtmp[] = "/tmp/sluice-convert-nft-XXXXXX", err[256];
	uint32_t gen, done = 0;
	int fd, rc;

	if ((fd = yaml_tmp(o->yaml, ytmp, sizeof(ytmp))) < 0)
		return 1;
	if (write_file(ytmp, fd, rs, groups, ngroups, o, true))
		goto fail_yaml;
	{
		char *const argv[] = {"/proc/self/exe", "-t", "-c", ytmp, NULL};

		rc = subproc_run(argv, NULL, NULL, 1, err, sizeof(err));
	}
	if (rc) {
		fprintf(stderr, ME ": sluice -t rejected the generated configuration%s%s; "
				"nothing changed\n", rc < 0 ? ": " : "", rc < 0 ? err : "");
		goto fail_yaml;
	}
	if (batch_tmp(rs, groups, ngroups, o, jtmp))
		goto fail_yaml;
	/* checked first for a clear message, again if the dry run's time saw a commit */
	if (live_unchanged(rs, &gen))
		goto fail_json;
	if (nft_batch(jtmp, true)) {
		fputs(ME ": nft -c (a dry run) refused the batch; nothing changed\n", stderr);
		goto fail_json;
	}
	if ((nft_genid_get(&done, err, sizeof(err)) || done != gen) && live_unchanged(rs, &gen))
		goto fail_json;
	if (nft_batch(jtmp, false)) {
		fputs(ME ": nft -j -f refused the batch; nothing changed (nft applies a batch whole "
		      "or not at all)\n", stderr);
		goto fail_json;
	}
	unlink(jtmp);
	rc = 0;
	if (nft_genid_get(&done, err, sizeof(err))) {
		fprintf(stderr, ME ": the batch is applied, but %s: check the ruleset with "
				"nft -a list ruleset\n", err);
		rc = 1;
	} else if (done != gen + 1) {
		fprintf(stderr, ME ": the batch is applied, but the ruleset also changed from "
				"elsewhere while it was (generation %u, then %u); check it with "
				"nft -a list ruleset\n", (unsigned)gen, (unsigned)done);
		rc = 1;
	}
	if (rename(ytmp, o->yaml)) {
		fprintf(stderr, ME ": the ruleset is changed, but renaming %s to %s failed: %s\n",
			ytmp, o->yaml, strerror(errno));
		return 1;
	}
	fprintf(stderr, ME ": applied; run sluice -c %s\n", o->yaml);
	return rc;
fail_json:
	unlink(jtmp);
fail_yaml:
	unlink(ytmp);
	return 1;
}

/* Groups from --group up that a `log group` of the ruleset already uses: skipped, said so. */
static void note_taken_groups(const struct nft_ruleset *rs, unsigned first,
			      const struct nft_group *groups, int ngroups)
{
	unsigned last = ngroups > 0 ? groups[ngroups - 1].group : first;

	for (unsigned g = first; g <= last; g++) {
		const struct nft_used_group *u = nft_group_user(rs, g);

		if (!u)
			continue;
		fprintf(stderr, ME ": NFLOG group %u is taken by `log group %u` in ", g, g);
		rule_where(u->family, u->table, u->chain, u->handle, stderr);
		fputs(": not used\n", stderr);
	}
}

/* nft_assign_groups() found no free group: for which rule, and which it would share one with. */
static void no_group(const struct nft_ruleset *rs, unsigned first)
{
	fprintf(stderr, ME ": --group %u: the groups needed would pass 65535 (or %d groups)", first,
		MAX_GROUPS);
	if (!rs->stuck) {
		fputc('\n', stderr);
		return;
	}
	fputs(": no group left for ", stderr);
	rule_name(rs->stuck, stderr);
	if (rs->stuck_with) {
		fputs(", which would share its group, hook and prefix with ", stderr);
		rule_name(rs->stuck_with, stderr);
		fputs(" (give them distinct prefixes, or a lower --group)", stderr);
	}
	fputc('\n', stderr);
}

/* --check on the live ruleset: would nft take the batch --apply hands it? */
static int check_batch(struct nft_ruleset *rs, const struct nft_opts *o)
{
	static struct nft_group groups[MAX_GROUPS];
	char jtmp[] = "/tmp/sluice-convert-nft-XXXXXX";
	int ngroups = nft_assign_groups(rs, o->group, groups, MAX_GROUPS), rc;

	if (ngroups < 0) {
		no_group(rs, o->group);
		return 1;
	}
	note_taken_groups(rs, o->group, groups, ngroups);
	if (!ngroups || o->file)
		return 0;
	if (batch_tmp(rs, groups, ngroups, o, jtmp))
		return 1;
	rc = nft_batch(jtmp, true);
	unlink(jtmp);
	if (rc) {
		fputs(ME ": nft -c (a dry run) refused the batch: --apply would fail\n", stderr);
		return 1;
	}
	printf("nft -c (a dry run) accepts the batch\n");
	return 0;
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
		no_group(rs, o->group);
		return EX_USAGE;
	}
	note_taken_groups(rs, o->group, groups, ngroups);
	if (!o->file) {
		char *const argv[] = {"nft", "-a", "list", "ruleset", NULL};
		char err[256];

		if (subproc_run(argv, &listing, &len, 0, err, sizeof(err))) {
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
		if (check_batch(&rs, &o))
			rc = 1;
	} else {
		rc = convert(&rs, &o);
	}
	nft_ruleset_free(&rs);
	return rc;
}
