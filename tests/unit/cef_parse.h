/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A strict reader of CEF:0 and LEEF:2.0 lines, written from the CEF
 * Implementation Standard's rules (not from cef_fmt.c), with which
 * test_cef_fmt and fuzz_cef read back what the formatter wrote:
 *
 * - CEF header: "CEF:0|" then 6 fields, each ended by an unescaped '|' (8
 *   parts with the version and the extension); in a field "\|" is '|' and "\\" is '\', any other
 *   backslash is an error.
 * - CEF extension: pairs "key=value" separated by spaces; a key is letters
 *   and digits before an unescaped '=', at the start or after a space; a
 *   value runs to the space before the next key; in a value "\=" "\\"
 *   "\n" "\r" are '=' '\' LF CR, any other backslash is an error.
 * - LEEF:2.0: Vendor|Product|Version|EventID|Delimiter| (a character, or
 *   x or 0x and hex digits), then pairs split on the unescaped delimiter,
 *   each at its first '='; "\\", "\n", "\r" and '\' + delimiter unescape.
 *
 * Values are decoded into a caller's buffer; everything is bounded.
 * cefp_expect() is what cef_fmt.h's replacement rule makes of raw bytes,
 * as the reader gives them back.
 */
#ifndef SLUICE_TEST_CEF_PARSE_H
#define SLUICE_TEST_CEF_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CEFP_MAX_PAIRS 64

struct cefp_str {
	const char *p;	/* decoded, in the caller's buffer */
	size_t n;
};

struct cefp_line {
	bool leef;
	struct cefp_str head[6];	/* CEF: vendor..severity; LEEF: vendor..delimiter (5) */
	char delim;			/* LEEF */
	unsigned npairs;
	struct cefp_str key[CEFP_MAX_PAIRS], val[CEFP_MAX_PAIRS];
};

/* Output space for decoded text. */
struct cefp_out {
	char *p;
	size_t len, cap;
};

static inline char *cefp_put(struct cefp_out *o, char c)
{
	if (o->len >= o->cap)
		return NULL;
	o->p[o->len] = c;
	return &o->p[o->len++];
}

static inline bool cefp_key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Header field from *s to the next unescaped '|'; false on a bad escape or no '|'. */
static inline bool cefp_head_field(const char **s, const char *end, struct cefp_out *o, struct cefp_str *f)
{
	const char *p = *s;

	f->p = o->p + o->len;
	f->n = 0;
	while (p < end && *p != '|') {
		char c = *p++;

		if (c == '\\') {
			if (p == end || (*p != '|' && *p != '\\'))
				return false;
			c = *p++;
		}
		if (!cefp_put(o, c))
			return false;
		f->n++;
	}
	if (p == end)
		return false;
	*s = p + 1;
	return true;
}

/* Decode a CEF value s[0..n). */
static inline bool cefp_value(const char *s, size_t n, struct cefp_out *o, struct cefp_str *v, char delim,
			      bool leef)
{
	v->p = o->p + o->len;
	v->n = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '\\') {
			if (++i == n)
				return false;
			c = s[i];
			if (c == 'n')
				c = '\n';
			else if (c == 'r')
				c = '\r';
			else if (c != '\\' && !(leef ? c == delim : c == '='))
				return false;
		} else if (!leef && c == '=') {
			return false;	/* an unescaped '=' inside a value */
		}
		if (!cefp_put(o, c))
			return false;
		v->n++;
	}
	return true;
}

/* The CEF extension s[0..n). */
static inline bool cefp_cef_ext(const char *s, size_t n, struct cefp_out *o, struct cefp_line *l)
{
	size_t eq[CEFP_MAX_PAIRS], kstart[CEFP_MAX_PAIRS], k = 0;

	/* every unescaped '=' ends a key */
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\') {
			i++;
			continue;
		}
		if (s[i] != '=')
			continue;
		size_t a = i;

		while (a > 0 && cefp_key_char(s[a - 1]))
			a--;
		if (a == i || (a > 0 && s[a - 1] != ' ') || k == CEFP_MAX_PAIRS)
			return false;
		if (k == 0 && a != 0)
			return false;	/* text before the first key */
		kstart[k] = a;
		eq[k++] = i;
	}
	if (n && !k)
		return false;
	l->npairs = (unsigned)k;
	for (size_t j = 0; j < k; j++) {
		size_t vend = j + 1 < k ? kstart[j + 1] - 1 : n;

		l->key[j].p = s + kstart[j];
		l->key[j].n = eq[j] - kstart[j];
		if (!cefp_value(s + eq[j] + 1, vend - eq[j] - 1, o, &l->val[j], 0, false))
			return false;
	}
	return true;
}

/* The LEEF attributes s[0..n), split on the unescaped delimiter. */
static inline bool cefp_leef_ext(const char *s, size_t n, struct cefp_out *o, struct cefp_line *l)
{
	size_t i = 0;

	l->npairs = 0;
	while (i < n) {
		size_t a = i, e;

		while (i < n && s[i] != l->delim) {
			if (s[i] == '\\')
				i++;
			i++;
		}
		if (i > n)
			return false;
		for (e = a; e < i && s[e] != '='; e++)
			if (!cefp_key_char(s[e]))
				return false;
		if (e == a || e == i || l->npairs == CEFP_MAX_PAIRS)
			return false;
		l->key[l->npairs].p = s + a;
		l->key[l->npairs].n = e - a;
		if (!cefp_value(s + e + 1, i - e - 1, o, &l->val[l->npairs], l->delim, true))
			return false;
		l->npairs++;
		if (i < n)
			i++;	/* the delimiter */
	}
	return true;
}

static inline int cefp_hex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Parse line s[0..n) (no newline).  False when it breaks a rule above. */
static inline bool cefp_parse(const char *s, size_t n, struct cefp_out *o, struct cefp_line *l)
{
	const char *p = s, *end = s + n;
	unsigned fields;

	memset(l, 0, sizeof(*l));
	if (n >= 6 && !memcmp(s, "CEF:0|", 6)) {
		fields = 6;
		p += 6;
	} else if (n >= 9 && !memcmp(s, "LEEF:2.0|", 9)) {
		l->leef = true;
		fields = 5;
		p += 9;
	} else {
		return false;
	}
	for (unsigned i = 0; i < fields; i++)
		if (!cefp_head_field(&p, end, o, &l->head[i]))
			return false;
	if (l->leef) {
		const struct cefp_str *d = &l->head[4];

		if (d->n == 1) {
			l->delim = d->p[0];
		} else if (d->n >= 2 && (d->p[0] == 'x' || (d->n >= 3 && d->p[0] == '0' && d->p[1] == 'x'))) {
			size_t at = d->p[0] == 'x' ? 1 : 2;
			int v = 0;

			if (d->n - at != 2 || cefp_hex(d->p[at]) < 0 || cefp_hex(d->p[at + 1]) < 0)
				return false;
			v = cefp_hex(d->p[at]) * 16 + cefp_hex(d->p[at + 1]);
			l->delim = (char)v;
		} else {
			return false;
		}
		return cefp_leef_ext(p, (size_t)(end - p), o, l);
	}
	return cefp_cef_ext(p, (size_t)(end - p), o, l);
}

/* The value of key `k` (NUL-terminated name), or NULL. */
static inline const struct cefp_str *cefp_get(const struct cefp_line *l, const char *k)
{
	for (unsigned i = 0; i < l->npairs; i++)
		if (l->key[i].n == strlen(k) && !memcmp(l->key[i].p, k, l->key[i].n))
			return &l->val[i];
	return NULL;
}

/*
 * What the documented rule makes of raw bytes in a value: the reader's
 * decoding gives them back, but for U+FFFD in place of every control byte
 * (LF and CR too where `header`), DEL, C1 control and byte outside a valid
 * UTF-8 sequence.  Written from utf8.h's table, one byte at a time.
 */
static inline size_t cefp_expect(char *out, const uint8_t *s, size_t n, bool header, bool keep_nl)
{
	size_t o = 0;

	for (size_t i = 0; i < n;) {
		uint8_t c = s[i];
		size_t len = 0;

		if (c < 0x80) {
			bool bad = c < 0x20 || c == 0x7f;

			if (!header && keep_nl && (c == '\n' || c == '\r'))
				bad = false;
			if (bad) {
				memcpy(out + o, "\xef\xbf\xbd", 3);
				o += 3;
			} else {
				out[o++] = (char)c;
			}
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf && i + 1 < n && (s[i + 1] & 0xc0) == 0x80)
			len = 2;
		else if (c >= 0xe0 && c <= 0xef && i + 2 < n)
			len = ((c == 0xe0 && s[i + 1] >= 0xa0) || (c == 0xed && s[i + 1] <= 0x9f) ||
			       (c != 0xe0 && c != 0xed)) && (s[i + 1] & 0xc0) == 0x80 &&
					      (s[i + 2] & 0xc0) == 0x80 ? 3 : 0;
		else if (c >= 0xf0 && c <= 0xf4 && i + 3 < n)
			len = ((c == 0xf0 && s[i + 1] >= 0x90) || (c == 0xf4 && s[i + 1] <= 0x8f) ||
			       (c != 0xf0 && c != 0xf4)) && (s[i + 1] & 0xc0) == 0x80 &&
					      (s[i + 2] & 0xc0) == 0x80 && (s[i + 3] & 0xc0) == 0x80 ? 4 : 0;
		if (len == 2 && c == 0xc2 && s[i + 1] < 0xa0) {
			memcpy(out + o, "\xef\xbf\xbd", 3);	/* C1: one for both bytes */
			o += 3;
			i += 2;
			continue;
		}
		if (!len) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(out + o, s + i, len);
		o += len;
		i += len;
	}
	return o;
}

#endif /* SLUICE_TEST_CEF_PARSE_H */
