/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside `sluice convert ulogd`: the state convert_ulogd.c (stacks, the
 * YAML), convert_ulogd_diag.c (diagnostics), convert_ulogd_plugins.c (what
 * each ulogd plugin becomes) and convert_ulogd_unit.c share.  It needs
 * nothing of convert_ulogd.h, the interface above them.
 */
#ifndef SLUICE_CONVERT_ULOGD_INT_H
#define SLUICE_CONVERT_ULOGD_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "strset.h"
#include "ulogd_ini.h"

enum urole { R_PKT, R_FLOW, R_ACCT, R_FILTER, R_OUT };
/* What an output needs in front of it besides the input. */
enum uneed { N_NONE, N_LINE, N_JSON };

#define CU_PG_PROTOS 4	/* tcp, udp, icmp, icmpv6 */

struct conv;
struct convert_caps;
struct convert_result;
struct uinst;
typedef int (*conv_fn)(struct conv *c, struct uinst *u);

struct uplug {
	const char *name;
	enum urole role;
	bool section;		/* ulogd refuses to start without the instance's [section] */
	const char *keys;	/* ulogd 2.0.8's keys, space-separated */
	conv_fn conv;		/* NULL: a filter sluice needs no counterpart of */
};

struct uinst {
	const char *id;
	const struct uplug *p;
	const struct ini_section *sec;
	bool *seen;			/* per entry of sec: read by the conversion */
	unsigned line, col;		/* its first use in a stack */
	char name[96];
	int state;			/* 0 not converted yet, 1 converted, -1 not convertible */
	bool used;			/* by a converted stack */
	char *body;			/* YAML of the instance (options and comments) */
	size_t bodylen;
	enum uneed need;
	char json_el[600];		/* the json element an N_JSON output takes */
	char where[2048];		/* inputs: NFCT's accept filters; MARK: its test */
	int64_t group;			/* NFLOG: its group (two instances cannot share one) */
	unsigned events;		/* NFCT: event bits */
	struct uinst *alias;		/* an input that reads what an earlier one reads */
	struct uinst *same_id;		/* the next instance of this id (another plugin) */
	bool missing;			/* a sluice plugin it needs is not on the search path */
	const char *wfile;		/* outputs: the file it writes (the ini's string), or NULL */
	int in_role;			/* outputs: the input kind of the first stack ending here */
	bool split;			/* PGSQL into ulog2: an sql instance per protocol */
	char *pname[CU_PG_PROTOS];	/* split: those instances' names (name: the others') */
};

#define MAX_ELEMS 32

struct ustack {
	const struct ini_entry *e;
	struct uinst *el[MAX_ELEMS];
	size_t n;
	const char *unknown;		/* a plugin ulogd does not have: not converted */
	char name[200];
	char *pname[CU_PG_PROTOS];	/* split outputs: the stack of each protocol */
	unsigned dups;			/* stacks named after this one's name, _2 on */
};

struct conv {
	const struct ulogd_ini *ini;
	const char *file;
	const struct convert_caps *caps;
	FILE *diag;
	FILE *o;			/* the body of the instance being converted, or NULL */
	FILE *out;			/* the YAML, written at the end */
	struct convert_result *res;
	struct uinst *u;
	size_t nu, capu;
	struct ustack *s;
	size_t ns;
	/* indexes, so that converting is linear in the file's size */
	struct strset ids;		/* ulogd id -> its first instance (then same_id) */
	struct strset names;		/* sluice instance names taken */
	struct strset stack_names;	/* sluice stack names taken */
	struct uinst **by_group;	/* NFLOG group -> the instance reading it */
	struct uinst *by_event[3];	/* conntrack event bit -> the first NFCT reading it */
	char q[ULOGD_INI_MAX_LINE * 2 + 3];
};

/* convert_ulogd_diag.c: diagnostics, and the YAML body of the instance being converted */
void convert_ulogd_error_at(struct conv *c, unsigned line, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Something the user relied on that sluice will not do: comment, warning, --check fails. */
void convert_ulogd_notconv(struct conv *c, struct uinst *u, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Converted, but it behaves differently: comment and warning. */
void convert_ulogd_note(struct conv *c, struct uinst *u, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void convert_ulogd_comment(struct conv *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A YAML double-quoted scalar, in a buffer of c's (valid until the next call). */
const char *convert_ulogd_yq(struct conv *c, const char *s);

/* convert_ulogd_plugins.c */
/* The entry of the instance's section for key (NULL if none), marked as read. */
const struct ini_entry *convert_ulogd_ent(struct uinst *u, const char *key);
/* Why a key no sluice option takes is left out, or NULL. */
const char *convert_ulogd_ignored_why(const struct uinst *u, const char *key);
bool convert_ulogd_has(struct conv *c, const char *plugin, const char *option, const char *choice);
const struct uplug *convert_ulogd_find_plug(const char *name, size_t len);
bool convert_ulogd_word_in(const char *list, const char *w);
/* The protocols a split output has an instance each for; the others get one more. */
extern const char *const convert_ulogd_pg_protos[CU_PG_PROTOS];
/* The columns map (and a comment) of a split output's instance for proto, -1: the others. */
void convert_ulogd_pg_columns(FILE *o, int proto);

/*
 * convert_ulogd_unit.c: the files the used outputs write outside what the
 * shipped sluice.service lets the daemon write: a warning for each, and
 * the commands and drop-in that give it those directories, as comments
 * into o and on c->diag.
 */
void convert_ulogd_unit_paths(struct conv *c, FILE *o);

#endif
