/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One record as one ArcSight CEF:0 line or one IBM QRadar LEEF:2.0 line,
 * without I/O (the cef filter puts it in the record's `text`).
 *
 *   CEF:0|Vendor|Product|Version|SignatureID|Name|Severity|k=v k=v ...
 *   LEEF:2.0|Vendor|Product|Version|EventID|x09|k=v<TAB>k=v ...
 *
 * Escaping (the CEF Implementation Standard):
 *   header fields      '\' -> "\\", '|' -> "\|"
 *   extension values   '\' -> "\\", '=' -> "\=", LF -> "\n", CR -> "\r"
 *   LEEF values        '\' -> "\\", the delimiter (when printable) -> "\" + it,
 *                      LF -> "\n", CR -> "\r" ('=' needs none: a LEEF reader
 *                      splits a pair at its first '=')
 * The line is one line of valid UTF-8 whatever the record holds: every
 * other C0 control byte (TAB included: LEEF's delimiter), DEL, the C1
 * controls U+0080..U+009F and every byte that is not part of a valid UTF-8
 * sequence (utf8.h's rule, byte by byte) is replaced by U+FFFD, in header
 * fields LF and CR too (the header has no escape for them).  Keys are
 * constants of the table in cef_fmt.c (letters and digits).
 *
 * Which record field goes to which key is the table in cef_fmt.c and
 * docs/PLUGINS.md ("cef"); a key is written only when the record has its
 * field.  Packets (after decode) give their addresses and ports,
 * connections and flows (nfct, flow: no packet) their original direction.
 *
 * The rule an nflog record was attributed to (rule_fields.h): act= (LEEF
 * action=) is its verdict (accept, drop, reject, jump X) when the record
 * has no verdict field of its own, and cs2=, with cs2Label=rule (LEEF
 * rule=), is the rule as
 *   TABLE/CHAIN#HANDLE "COMMENT"
 * (#HANDLE without a handle, the comment only when it has one; inside the
 * quotes '"' and '' get a '' before them), then escaped as any value.
 * cs3 stays the conntrack event's (nfct records).
 */
#ifndef SLUICE_CEF_FMT_H
#define SLUICE_CEF_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/record.h>

#include "fmt.h"
#include "rule_fields.h"

enum sl_cef_format { SL_CEF_CEF, SL_CEF_LEEF };

/* What escaping sl_cef_escape() applies. */
enum sl_cef_esc { SL_CEF_ESC_HEADER, SL_CEF_ESC_VALUE, SL_CEF_ESC_LEEF };

/*
 * The configuration: strings are the user's, any bytes (escaped here).
 * signature and name are templates: each "{prefix}" in them stands for the
 * record's prefix; a field that comes out empty is written as "-".
 */
struct sl_cef_conf {
	enum sl_cef_format format;
	const char *vendor, *product, *version;
	const char *signature, *name;
	unsigned severity;	/* 0..10 */
	const char *action;	/* act= on every record, or NULL */
	/*
	 * LEEF: the attribute delimiter (0: TAB), TAB or a printable that no
	 * unescaped value holds: not a letter, digit, space, \ = | : . , - _
	 * (addresses, MACs, numbers and names are written as they are).
	 */
	char delimiter;
};

/* A template split at its "{prefix}"es: constant pieces, pre-escaped. */
struct sl_cef_tmpl {
	char *text;		/* the escaped pieces, back to back */
	size_t *len;		/* piece i's length; a prefix goes between pieces */
	unsigned pieces;
};

struct sl_cef {
	enum sl_cef_format format;
	char delimiter;
	char *head;		/* "CEF:0|vendor|product|version|", escaped */
	size_t head_len;
	struct sl_cef_tmpl signature, name;
	char severity[4];	/* as text */
	unsigned sev;
	char *action;		/* escaped value, or NULL */
	size_t action_len;
	/*
	 * A string field holding the rule's verdict (nftrace's `verdict`), -1
	 * for none: act= from it where a record has it, else `action`.  Set by
	 * the caller after sl_cef_init().
	 */
	int verdict_field;
	/* nflog's rule_* fields, all -1 after sl_cef_init(): set by the caller */
	struct sl_rule_fields rule;
};

/* Fill f from c (copies and escapes what it keeps).  0, or -1 (ENOMEM). */
int sl_cef_init(struct sl_cef *f, const struct sl_cef_conf *c);
void sl_cef_free(struct sl_cef *f);

/* Append record r's line (no newline); the caller checks b->overflow. */
void sl_cef_format(const struct sl_cef *f, struct sl_fmt_buf *b, const struct sl_record *r);

/*
 * Append s[0..n) escaped as `how` (delim: LEEF's delimiter).  Worst case
 * 3 output bytes per input byte (U+FFFD).
 */
void sl_cef_escape(struct sl_fmt_buf *b, const void *s, size_t n, enum sl_cef_esc how, char delim);

#endif /* SLUICE_CEF_FMT_H */
