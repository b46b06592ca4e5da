/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ulogd2's stacks as sluice YAML.  ulogd runs a chain of plugin
 * instances per `stack=` line (an input, filters that turn raw fields
 * into printable ones, an output); sluice needs only the input, the
 * filters that change what is kept (MARK) and the output's formatter
 * (logline, json), because decode names and prints everything at once.
 * Inputs of the same name are one instance in ulogd and in sluice, and
 * an output used by several stacks becomes one named instance where they
 * meet.  The keys each ulogd plugin takes are ulogd 2.0.8's: a key it
 * does not know is an error here (ulogd ignored typos silently).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "convert_ulogd.h"
#include "convert_ulogd_int.h"

/* ---- stacks and instances ---- */

static bool name_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_' || ch == '-' || ch == '.';
}

/* A name and, for a split output, its per-protocol names: all free? */
static bool name_taken(struct conv *c, const struct uinst *u, const char *name)
{
	char p[sizeof(u->name) + 8];

	if (strset_get(&c->names, name) || convert_ulogd_has(c, name, NULL, NULL))
		return true;
	for (int k = 0; u->split && k < CU_PG_PROTOS; k++) {
		snprintf(p, sizeof(p), "%s_%s", name, convert_ulogd_pg_protos[k]);
		if (strset_get(&c->names, p) || convert_ulogd_has(c, p, NULL, NULL))
			return true;
	}
	return false;
}

/* The ulogd id as a sluice name: not another instance's, not a plugin's. */
static void sluice_name(struct conv *c, struct uinst *u)
{
	char base[80];
	size_t n = 0;
	bool taken = true;

	/* ulog2 has a port column per protocol: an instance per protocol writes it */
	u->split = strcmp(u->p->name, "PGSQL") == 0 && u->in_role == R_PKT + 1;
	for (const char *p = u->id; *p && n < sizeof(base) - 1; p++)
		base[n++] = name_char(*p) ? *p : '_';
	base[n] = '\0';
	snprintf(u->name, sizeof(u->name), "%s", base);
	for (unsigned k = 1; taken && k < 1000; k++) {
		taken = name_taken(c, u, u->name);
		if (taken)
			snprintf(u->name, sizeof(u->name), "%s_%u", base, k);
	}
	if (strset_add(&c->names, u->name, u, NULL) < 0)
		convert_ulogd_error_at(c, u->line, u->col, "out of memory");
	for (int k = 0; u->split && k < CU_PG_PROTOS; k++)
		if (asprintf(&u->pname[k], "%s_%s", u->name, convert_ulogd_pg_protos[k]) < 0) {
			u->pname[k] = NULL;	/* undefined after a failed asprintf() */
			convert_ulogd_error_at(c, u->line, u->col, "out of memory");
		} else if (strset_add(&c->names, u->pname[k], u, NULL) < 0) {
			convert_ulogd_error_at(c, u->line, u->col, "out of memory");
		}
}

/* ulogd would refuse these: an unknown or repeated key, a missing section. */
static void check_section(struct conv *c, struct uinst *u)
{
	const struct ini_section *s = u->sec;
	struct strset keys = {0};

	if (!s) {
		if (u->p->section)
			convert_ulogd_error_at(c, u->line, u->col, "no [%s] section for %s:%s (ulogd2 does not "
				 "start without it)", u->id, u->id, u->p->name);
		return;
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct ini_entry *e = &s->e[i];
		void *first;

		if (!convert_ulogd_word_in(u->p->keys, e->key)) {
			convert_ulogd_error_at(c, e->line, e->col, "unknown key '%s' in [%s]: %s takes %s%s",
				 e->key, u->id, u->p->name, *u->p->keys ? "" : "no keys",
				 u->p->keys);
			continue;
		}
		switch (strset_add(&keys, e->key, (void *)e, &first)) {
		case 1:
			break;
		case 0:
			convert_ulogd_error_at(c, e->line, e->col, "'%s' set twice in [%s] (first on line %u)",
				    e->key, u->id, ((const struct ini_entry *)first)->line);
			break;
		default:
			convert_ulogd_error_at(c, e->line, e->col, "out of memory");
		}
	}
	strset_free(&keys);
}

static struct uinst *get_inst(struct conv *c, const char *id, size_t len,
			      const struct uplug *p, unsigned line, unsigned col)
{
	struct uinst *u, *first;
	char *key = strndup(id, len);

	if (!key) {
		convert_ulogd_error_at(c, line, col, "out of memory");
		return NULL;
	}
	first = strset_get(&c->ids, key);
	for (u = first; u; u = u->same_id) {
		/* an instance of this id and plugin is shared (inputs, the outputs stacks meet in) */
		if (u->p == p) {
			free(key);
			return u;
		}
		if (u->p->role <= R_ACCT && p->role <= R_ACCT) {
			convert_ulogd_error_at(c, line, col, "input '%s' is %s here but %s on line %u",
				 u->id, p->name, u->p->name, u->line);
			free(key);
			return NULL;
		}
	}
	u = &c->u[c->nu++];
	u->id = key;
	if (first) {
		u->same_id = first->same_id;
		first->same_id = u;
	} else if (strset_add(&c->ids, u->id, u, NULL) < 0) {
		convert_ulogd_error_at(c, line, col, "out of memory");
		return NULL;
	}
	u->p = p;
	u->line = line;
	u->col = col;
	u->sec = ulogd_ini_section(c->ini, u->id);
	if (u->sec && !(u->seen = calloc(u->sec->n ? u->sec->n : 1, sizeof(*u->seen)))) {
		convert_ulogd_error_at(c, line, col, "out of memory");
		return NULL;
	}
	check_section(c, u);
	return u;
}

static bool role_ok(struct conv *c, const struct ustack *s)
{
	const struct ini_entry *e = s->e;

	if (s->n < 2) {
		convert_ulogd_error_at(c, e->line, e->vcol, "a stack needs an input and an output");
		return false;
	}
	for (size_t i = 0; i < s->n; i++) {
		enum urole r = s->el[i]->p->role;
		bool ok = i == 0 ? r <= R_ACCT : i == s->n - 1 ? r == R_OUT : r == R_FILTER;

		if (!ok) {
			convert_ulogd_error_at(c, e->line, e->vcol, "%s:%s: a stack is an input, filters, then an "
				 "output", s->el[i]->id, s->el[i]->p->name);
			return false;
		}
	}
	return true;
}

/* stack=id:PLUGIN,id:PLUGIN,... */
static void parse_stack(struct conv *c, const struct ini_entry *e)
{
	struct ustack *s = &c->s[c->ns++];
	const char *p = e->value;

	s->e = e;
	while (*p) {
		const char *end = strchr(p, ','), *colon;
		unsigned col = e->vcol + (unsigned)(p - e->value);
		const struct uplug *pl;
		struct uinst *u;

		if (!end)
			end = p + strlen(p);
		colon = memchr(p, ':', (size_t)(end - p));
		if (!colon || colon == p || colon + 1 == end) {
			convert_ulogd_error_at(c, e->line, col, "expected ID:PLUGIN, found '%.*s'", (int)(end - p), p);
			return;
		}
		if (s->n == MAX_ELEMS) {
			convert_ulogd_error_at(c, e->line, col, "more than %d plugins in one stack", MAX_ELEMS);
			return;
		}
		pl = convert_ulogd_find_plug(colon + 1, (size_t)(end - colon - 1));
		if (!pl) {
			snprintf(s->name, sizeof(s->name), "%.*s", (int)(end - colon - 1), colon + 1);
			s->unknown = s->name;
		} else if ((u = get_inst(c, p, (size_t)(colon - p), pl, e->line, col))) {
			s->el[s->n++] = u;
		}
		p = *end ? end + 1 : end;
	}
	if (s->unknown || !role_ok(c, s))
		return;
	/* outputs are converted before the stacks are written: sql needs to know */
	if (!s->el[s->n - 1]->in_role)
		s->el[s->n - 1]->in_role = (int)s->el[0]->p->role + 1;
}

static void convert_inst(struct conv *c, struct uinst *u)
{
	if (!u->p->conv) {
		u->state = 1;
		return;
	}
	c->o = open_memstream(&u->body, &u->bodylen);
	if (!c->o) {
		convert_ulogd_error_at(c, u->line, u->col, "out of memory");
		return;
	}
	u->state = u->p->conv(c, u) < 0 || u->missing ? -1 : 1;
	/* a key the conversion did not read is said, never dropped silently */
	for (size_t i = 0; u->state == 1 && u->sec && i < u->sec->n; i++) {
		const struct ini_entry *e = &u->sec->e[i];
		const char *why = convert_ulogd_ignored_why(u, e->key);

		if (!u->seen[i])
			convert_ulogd_note(c, u, e->line, "%s=%s is not carried over%s%s", e->key, e->value,
				why ? ": " : "", why ? why : "");
	}
	fclose(c->o);
	c->o = NULL;
}

/* Two ulogd inputs reading the same group: sluice reads it once, for both. */
static void find_alias(struct conv *c, struct uinst *u)
{
	struct uinst *o = NULL;

	if (u->p->role == R_PKT && strcmp(u->p->name, "NFLOG") == 0) {
		o = c->by_group[u->group];
		if (!o)
			c->by_group[u->group] = u;
	} else if (u->p->role == R_FLOW) {
		/* the first instance reading any of u's events */
		for (unsigned b = 0; b < 3; b++)
			if (u->events & (1u << b) && c->by_event[b] &&
			    (!o || c->by_event[b] < o))
				o = c->by_event[b];
		for (unsigned b = 0; !o && b < 3; b++)
			if (u->events & (1u << b) && !c->by_event[b])
				c->by_event[b] = u;
	}
	if (!o)
		return;
	u->alias = o;
	convert_ulogd_note(c, u, u->line, "reads what [%s] reads (%s %" PRId64 "): its stacks use %s, and "
		"[%s]'s options", o->id, u->p->role == R_PKT ? "group" : "events",
		u->p->role == R_PKT ? u->group : (int64_t)u->events, o->name, o->id);
}

/* Why a stack cannot be written, or NULL. */
static const char *stack_problem(struct conv *c, struct ustack *s, char *buf, size_t size)
{
	const struct uinst *in, *out;

	if (s->unknown) {
		snprintf(buf, size, "%s is not a ulogd2 2.0.8 plugin", s->unknown);
		convert_ulogd_notconv(c, NULL, s->e->line, "stack uses %s", buf);
		return buf;
	}
	for (size_t i = 0; i < s->n; i++)
		if (s->el[i]->state < 0) {
			snprintf(buf, size, "[%s] (%s) is not converted", s->el[i]->id,
				 s->el[i]->p->name);
			return buf;
		}
	in = s->el[0];
	out = s->el[s->n - 1];
	if ((strcmp(out->p->name, "PCAP") == 0 && in->p->role != R_PKT) ||
	    (strcmp(out->p->name, "IPFIX") == 0 && in->p->role != R_FLOW)) {
		snprintf(buf, size, "%s takes %s, not what %s gives", out->p->name,
			 in->p->role == R_PKT ? "flows" : "packets", in->p->name);
		convert_ulogd_notconv(c, NULL, s->e->line, "stack: %s", buf);
		return buf;
	}
	return NULL;
}

/* A stack name not taken yet, from IN_OUT, into buf (kept: stack_names borrows it). */
static void stack_name(struct conv *c, struct ustack *s, char *buf, size_t size,
		       const char *in, const char *out)
{
	struct ustack *first;

	snprintf(buf, size, "%s_%s", in, out);
	first = strset_get(&c->stack_names, buf);
	/* IN_OUT_2, _3...: counted on in IN_OUT's first stack, not searched from 2 */
	while (first && strset_get(&c->stack_names, buf))
		snprintf(buf, size, "%s_%s_%u", in, out, ++first->dups + 1);
	if (strset_add(&c->stack_names, buf, s, NULL) < 0)
		convert_ulogd_error_at(c, s->e->line, s->e->vcol, "out of memory");
}

/* One sluice stack of s, into out_name, behind the where expression `proto` if any. */
static void write_stack_line(struct conv *c, struct ustack *s, FILE *o, const char *name,
			     const char *proto, const char *out_name)
{
	struct uinst *in = s->el[0]->alias ? s->el[0]->alias : s->el[0];
	struct uinst *out = s->el[s->n - 1];

	fprintf(o, "  %s: [%s", name, in->name);
	/* an input read through another's instance keeps its own accept filters */
	if (*s->el[0]->where)
		fprintf(o, ", { plugin: where, expr: %s }", convert_ulogd_yq(c, s->el[0]->where));
	for (size_t i = 1; i + 1 < s->n; i++)
		if (*s->el[i]->where)
			fprintf(o, ", { plugin: where, expr: %s }", convert_ulogd_yq(c, s->el[i]->where));
	if (in->p->role == R_PKT && strcmp(out->p->name, "PCAP") != 0)
		fprintf(o, ", decode");
	if (proto)
		fprintf(o, ", { plugin: where, expr: %s }", convert_ulogd_yq(c, proto));
	if (out->need == N_LINE) {
		fprintf(o, ", logline");
	} else if (out->need == N_JSON) {
		fprintf(o, ", %s", out->json_el);
	}
	fprintf(o, ", %s]\n", out_name);
}

static bool write_stack(struct conv *c, struct ustack *s, FILE *o)
{
	struct uinst *in, *out;
	char why[200], expr[200];
	const char *bad;

	fprintf(o, "  # stack=%s (line %u)\n", s->e->value, s->e->line);
	if ((bad = stack_problem(c, s, why, sizeof(why)))) {
		fprintf(o, "  # not converted: %s\n", bad);
		return false;
	}
	/* without an unknown plugin, role_ok() saw an input and an output */
	in = s->el[0]->alias ? s->el[0]->alias : s->el[0];
	out = s->el[s->n - 1];
	in->used = out->used = true;
	stack_name(c, s, s->name, sizeof(s->name), in->name, out->name);
	if (!out->split || in->p->role != R_PKT) {
		write_stack_line(c, s, o, s->name, NULL, out->name);
		return true;
	}
	/* each packet goes to exactly one: its protocol's instance or the others' */
	fprintf(o, "  # ulog2's columns per protocol: a stack for each, one for the others\n");
	for (int k = 0; k < CU_PG_PROTOS; k++) {
		/* IN_OUT_PROTO (IN_OUT_2_PROTO...): the names of IN_OUT's stacks */
		if (!(s->pname[k] = malloc(sizeof(s->name) + 8))) {
			convert_ulogd_error_at(c, s->e->line, s->e->vcol, "out of memory");
			return false;
		}
		stack_name(c, s, s->pname[k], sizeof(s->name) + 8, s->name, convert_ulogd_pg_protos[k]);
		snprintf(expr, sizeof(expr), "ip_proto == %s", convert_ulogd_pg_protos[k]);
		write_stack_line(c, s, o, s->pname[k], expr, out->pname[k]);
	}
	snprintf(expr, sizeof(expr), "not (ip_proto in {%s, %s, %s, %s})", convert_ulogd_pg_protos[0],
		 convert_ulogd_pg_protos[1], convert_ulogd_pg_protos[2], convert_ulogd_pg_protos[3]);
	write_stack_line(c, s, o, s->name, expr, out->name);
	return true;
}

/* A body of comments and "    key: value" lines, commented out entirely. */
static void write_commented(FILE *o, const char *body)
{
	for (const char *p = body; p && *p;) {
		const char *nl = strchr(p, '\n');
		int len = (int)(nl ? nl - p : (ptrdiff_t)strlen(p));

		if (strncmp(p, "    #", 5) == 0)
			fprintf(o, "%.*s\n", len, p);
		else
			fprintf(o, "    # %.*s\n", len - 4 > 0 ? len - 4 : 0, p + 4);
		p = nl ? nl + 1 : p + len;
	}
}

static void write_instances(struct conv *c, FILE *o)
{
	bool any = false;

	for (struct uinst *u = c->u; u < c->u + c->nu; u++)
		any |= u->used && u->state == 1 && u->p->role != R_FILTER;
	if (any)
		fprintf(o, "instances:\n");
	for (struct uinst *u = c->u; u < c->u + c->nu; u++) {
		unsigned line = u->sec ? u->sec->line : u->line;

		if (u->p->role == R_FILTER && u->bodylen) {
			fprintf(o, "  # [%s] (%s), %s:%u\n%s", u->id, u->p->name, c->file, line,
				u->body);
		} else if (u->p->role != R_FILTER && u->state == 1 && u->used) {
			/* split: an instance per protocol, then the others' (k == CU_PG_PROTOS) */
			for (int k = u->split ? 0 : CU_PG_PROTOS; k <= CU_PG_PROTOS; k++) {
				fprintf(o, "  # from [%s] (%s), %s:%u\n  %s:\n%s", u->id,
					u->p->name, c->file, line,
					k < CU_PG_PROTOS ? u->pname[k] : u->name,
					u->body ? u->body : "");
				if (u->split)
					convert_ulogd_pg_columns(o, k < CU_PG_PROTOS ? k : -1);
			}
		} else if (u->p->role != R_FILTER && !u->alias) {
			fprintf(o, "  # [%s] (%s), %s:%u: %s\n", u->id, u->p->name, c->file, line,
				u->state == 1 ? "converted, but no converted stack uses it" :
				"not converted");
			write_commented(o, u->body);
		}
	}
}

static void write_daemon(struct conv *c, const struct ini_section *g, FILE *o)
{
	static const char *const levels[] = { "debug", "debug", "debug", "info", "info",
		"notice", "warning", "err", "err" };
	const struct ini_entry *e = ulogd_ini_get(g, "loglevel");
	const struct ini_entry *f = ulogd_ini_get(g, "logfile");
	char *end;
	long v;

	if (f)
		fprintf(o, "# logfile=%s: sluice logs to stderr (the journal under systemd)\n",
			f->value);
	if (!e)
		return;
	v = strtol(e->value, &end, 0);
	if (!*e->value || *end || v < 0 || v > 8) {
		convert_ulogd_error_at(c, e->line, e->vcol, "loglevel: expected 1 (debug) to 8 (fatal), found "
			 "'%s'", e->value);
		return;
	}
	fprintf(o, "daemon:\n  log_level: %s   # loglevel=%ld\n", levels[v], v);
}

/* [global]: plugin=, stack=, logfile=, loglevel= (ulogd 2.0.8's keys). */
static size_t read_global(struct conv *c, const struct ini_section *g, size_t *elems)
{
	size_t stacks = 0;

	for (size_t i = 0; i < g->n; i++) {
		const struct ini_entry *e = &g->e[i];
		const char *base, *name;

		if (strcmp(e->key, "stack") == 0) {
			stacks++;
			*elems += 1;
			for (const char *p = e->value; (p = strchr(p, ',')); p++)
				*elems += 1;
		} else if (strcmp(e->key, "plugin") == 0) {
			base = strrchr(e->value, '/');
			base = base ? base + 1 : e->value;
			name = strrchr(base, '_');
			if (!name || !strstr(name, ".so") ||
			    !convert_ulogd_find_plug(name + 1, (size_t)(strstr(name, ".so") - name - 1))) {
				convert_ulogd_note(c, NULL, e->line, "plugin=%s is not one of ulogd2 2.0.8's "
				     "plugins; a stack using it is not converted", e->value);
			}
		} else if (strcmp(e->key, "logfile") && strcmp(e->key, "loglevel")) {
			convert_ulogd_error_at(c, e->line, e->col, "unknown key '%s' in [global] (expected plugin, "
				 "stack, logfile or loglevel)", e->key);
		}
	}
	if (!stacks)
		convert_ulogd_error_at(c, g->line, 1, "[global] has no stack= line: nothing to convert");
	return stacks;
}

static void write_yaml(struct conv *c, const struct ini_section *g, const char *stacks)
{
	FILE *o = c->out;
	bool first = true;
	bool *used = calloc(c->ini->n + 1, sizeof(*used));	/* per section */

	if (!used) {
		convert_ulogd_error_at(c, g->line, 1, "out of memory");
		return;
	}
	fprintf(o, "# sluice configuration converted from %s by `sluice convert ulogd`.\n"
		"# Check it with `sluice -t -c FILE` before switching (docs/MIGRATING.md).\n",
		c->file);
	if (c->res->not_converted)
		fprintf(o, "# %u thing%s could not be converted: see the \"not converted\" "
			"comments.\n", c->res->not_converted, c->res->not_converted == 1 ? "" : "s");
	convert_ulogd_unit_paths(c, o);
	used[g - c->ini->s] = true;
	for (const struct uinst *u = c->u; u < c->u + c->nu; u++)
		if (u->sec)
			used[u->sec - c->ini->s] = true;
	for (size_t i = 0; i < c->ini->n; i++) {
		const struct ini_section *s = &c->ini->s[i];

		if (used[i])
			continue;
		fprintf(o, "%s%s", first ? "# sections no stack uses: " : ", ", s->name);
		first = false;
	}
	free(used);
	if (!first)
		fputc('\n', o);
	write_daemon(c, g, o);
	write_instances(c, o);
	fprintf(o, "stacks:\n%s", stacks);
}

static int convert(struct conv *c)
{
	const struct ini_section *g = ulogd_ini_section(c->ini, "global");
	size_t nstacks, elems = 0;
	unsigned converted = 0;
	char *stacks = NULL;
	size_t slen = 0;
	FILE *so;

	if (!g) {
		convert_ulogd_error_at(c, 1, 1, "no [global] section (with the stack= lines)");
		return -1;
	}
	nstacks = read_global(c, g, &elems);
	c->s = calloc(nstacks ? nstacks : 1, sizeof(*c->s));
	c->u = calloc(elems ? elems : 1, sizeof(*c->u));
	c->by_group = calloc(65536, sizeof(*c->by_group));
	if (!c->s || !c->u || !c->by_group) {
		convert_ulogd_error_at(c, 1, 1, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < g->n && !c->res->errors; i++)
		if (strcmp(g->e[i].key, "stack") == 0)
			parse_stack(c, &g->e[i]);
	for (size_t i = 0; i < c->nu && !c->res->errors; i++)
		sluice_name(c, &c->u[i]);
	for (size_t i = 0; i < c->nu && !c->res->errors; i++) {
		convert_inst(c, &c->u[i]);
		if (c->u[i].state == 1 && c->u[i].p->role <= R_FLOW)
			find_alias(c, &c->u[i]);
	}
	if (c->res->errors || !(so = open_memstream(&stacks, &slen)))
		return -1;
	for (size_t i = 0; i < c->ns; i++) {
		converted += write_stack(c, &c->s[i], so);
	}
	fclose(so);
	c->res->stacks = converted;
	/* `stacks: {}` is a configuration sluice -t refuses: write none */
	if (!converted)
		convert_ulogd_notconv(c, NULL, g->line, "no stack could be converted");
	else if (!c->res->errors)
		write_yaml(c, g, stacks);
	free(stacks);
	return c->res->errors ? -1 : 0;
}

int convert_ulogd(const struct ulogd_ini *ini, const char *file, const struct convert_caps *caps,
		  FILE *out, FILE *diag, struct convert_result *res)
{
	struct conv c = { .ini = ini, .file = file, .caps = caps, .diag = diag, .res = res };

	int ret;

	memset(res, 0, sizeof(*res));
	c.out = out;
	ret = convert(&c);
	for (size_t i = 0; i < c.nu; i++) {
		free((char *)c.u[i].id);
		free(c.u[i].body);
		free(c.u[i].seen);
		for (int k = 0; k < CU_PG_PROTOS; k++)
			free(c.u[i].pname[k]);
	}
	for (size_t i = 0; c.s && i < c.ns; i++)
		for (int k = 0; k < CU_PG_PROTOS; k++)
			free(c.s[i].pname[k]);
	free(c.u);
	free(c.s);
	free(c.by_group);
	strset_free(&c.ids);
	strset_free(&c.names);
	strset_free(&c.stack_names);
	return ret;
}
