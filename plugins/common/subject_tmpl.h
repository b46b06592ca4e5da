/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A NATS subject made from a template with record fields, such as
 * "fw.{nflog_group}.{ip_proto}": literal text, and {name} where the value
 * of field `name` goes.
 *
 * The literal text is checked once, at parse: printable ASCII without
 * space, '*', '>', '{' or '}' (publishing to a wildcard is not allowed),
 * no empty token (no leading, trailing or doubled '.').
 *
 * A field's value never adds a token or a wildcard, whatever a packet or
 * a rule put in it: it is printed as text (decimal integers, addresses as
 * the json filter prints them, MACs aa:bb:.., times as whole seconds since
 * the epoch, bytes as lowercase hex, strings as they are) and then every
 * byte but A-Z a-z 0-9 '-' '_' ':' is written %XX (uppercase hex), so
 * "10.0.0.1" becomes "10%2E0%2E0%2E1" and a prefix "a b.*" becomes
 * "a%20b%2E%2A"; a value that is empty, or absent from the record, is
 * "-", and a value that is "-" itself is "%2D".  The escaping is
 * reversible (percent-decoding) and a rendered subject is always a valid
 * one.
 *
 * Header and a small .c; no allocation after parse.
 */
#ifndef SLUICE_SUBJECT_TMPL_H
#define SLUICE_SUBJECT_TMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/record.h>

#define SL_SUBJECT_MAX_PARTS 32		/* literal runs and fields together */
#define SL_SUBJECT_MAX_LEN 1024		/* a rendered subject, NUL included */

struct sl_subject_part {
	uint16_t off, len;	/* literal text: text[off..off+len) */
	int field;		/* -1: a literal; else the field's id */
	enum sl_type type;
};

struct sl_subject_tmpl {
	char text[SL_SUBJECT_MAX_LEN];	/* the template's literal bytes */
	unsigned n;
	struct sl_subject_part p[SL_SUBJECT_MAX_PARTS];
	bool fixed;			/* no field: the subject is text */
};

/*
 * A field name to its id and type; -1 when there is none (the resolver
 * reported it, or err says so).
 */
typedef int (*sl_subject_resolve_fn)(void *ctx, const char *name, enum sl_type *type);

/*
 * Parse template s.  0, or -1 with a message in err (of errlen bytes)
 * naming what is wrong; resolve() failing leaves err empty.
 */
int sl_subject_parse(struct sl_subject_tmpl *t, const char *s, sl_subject_resolve_fn resolve,
		     void *ctx, char *err, size_t errlen);

/*
 * The subject of record r, NUL-terminated, into buf of cap bytes: its
 * length, or 0 when it does not fit.
 */
size_t sl_subject_render(const struct sl_subject_tmpl *t, const struct sl_record *r, char *buf,
			 size_t cap);

/* Whether a byte of a value is kept as it is (else %XX). */
static inline bool sl_subject_keeps(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == ':';
}

#endif /* SLUICE_SUBJECT_TMPL_H */
