/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Secrets in option values and what is shown instead (see secret.h). */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "secret.h"

#define MAX_SPANS 16	/* more passwords in one value: the value is masked whole */

_Static_assert(SECRET_SHOW_EXTRA > MAX_SPANS * (sizeof(SECRET_MASK) - 1), "room for the masks");

struct span {
	size_t off, len;
};

static bool contains_ci(const char *s, size_t n, const char *word)
{
	size_t w = strlen(word);

	for (size_t i = 0; i + w <= n; i++)
		if (strncasecmp(s + i, word, w) == 0)
			return true;
	return false;
}

/* The words of SECRET_WORDS (secret.h): keep them in step. */
bool secret_name(const char *name)
{
	static const char *const words[] = {"pass", "secret", "token", "cred", "key", "pem",
					    "auth", NULL};

	for (int i = 0; words[i]; i++)
		if (contains_ci(name, strlen(name), words[i]))
			return true;
	return false;
}

/* A keyword inside a value (password=, sslpassword=): narrower than secret_name(). */
static bool embedded_name(const char *s, size_t n)
{
	return contains_ci(s, n, "password") || contains_ci(s, n, "secret");
}

/* n spans so far; MAX_SPANS + 1: too many (none kept past MAX_SPANS). */
static size_t add_span(struct span *sp, size_t n, size_t off, size_t len)
{
	if (!len)
		return n;
	if (n >= MAX_SPANS)
		return MAX_SPANS + 1;
	sp[n].off = off;
	sp[n].len = len;
	return n + 1;
}

/* scheme://user:PASSWORD@host...: the password (to the last '@' before any query). */
static size_t uri_spans(const char *s, struct span *sp, size_t n)
{
	const char *p = s, *auth, *end, *at = NULL, *colon;

	if (!isalpha((unsigned char)*p))
		return n;
	while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.')
		p++;
	if (strncmp(p, "://", 3) != 0)
		return n;
	auth = p + 3;
	end = auth + strcspn(auth, "?#");
	for (const char *q = auth; q < end; q++)
		if (*q == '@')
			at = q;
	if (!at)
		return n;
	colon = memchr(auth, ':', (size_t)(at - auth));
	if (colon)
		n = add_span(sp, n, (size_t)(colon + 1 - s), (size_t)(at - colon - 1));
	return n;
}

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-';
}

/*
 * NAME = VALUE anywhere, NAME password-like: libpq's connection string
 * ("password='a b'", backslash escapes; an unquoted value ends at a
 * space) and a URI's query (?password=...).  An unterminated quote runs
 * to the end, as far as libpq would look.
 */
static size_t keyword_spans(const char *s, struct span *sp, size_t n)
{
	for (const char *p = s; *p;) {
		const char *name = p, *v;

		if (!word_char(*p) || (p > s && word_char(p[-1]))) {
			p++;
			continue;
		}
		while (word_char(*p))
			p++;
		if (!embedded_name(name, (size_t)(p - name)))
			continue;
		v = p;
		while (*v == ' ' || *v == '\t')
			v++;
		if (*v != '=')
			continue;
		v++;
		while (*v == ' ' || *v == '\t')
			v++;
		p = v;
		if (*p == '\'') {
			for (p++; *p && *p != '\''; p++)
				if (*p == '\\' && p[1])
					p++;
			if (*p)
				p++;
		} else {
			for (; *p && !isspace((unsigned char)*p); p++)
				if (*p == '\\' && p[1])
					p++;
		}
		n = add_span(sp, n, (size_t)(v - s), (size_t)(p - v));
	}
	return n;
}

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* The embedded passwords of a value, sorted, overlaps merged; SIZE_MAX: too many. */
static size_t embedded_spans(const char *s, struct span *sp)
{
	size_t n = keyword_spans(s, sp, uri_spans(s, sp, 0)), m = 0;

	if (n > MAX_SPANS)
		return SIZE_MAX;
	qsort(sp, n, sizeof(*sp), cmp_span);
	for (size_t i = 0; i < n; i++) {
		if (m && sp[i].off <= sp[m - 1].off + sp[m - 1].len) {
			size_t end = sp[i].off + sp[i].len;

			if (end > sp[m - 1].off + sp[m - 1].len)
				sp[m - 1].len = end - sp[m - 1].off;
			continue;
		}
		sp[m++] = sp[i];
	}
	return m;
}

/* Append n bytes of s to buf (len bytes, *used so far), truncating. */
static void put(char *buf, size_t len, size_t *used, const char *s, size_t n)
{
	if (*used + 1 >= len)
		return;
	if (n > len - 1 - *used)
		n = len - 1 - *used;
	memcpy(buf + *used, s, n);
	*used += n;
	buf[*used] = 0;
}

const char *secret_show(const char *value, bool whole, char *buf, size_t len)
{
	struct span sp[MAX_SPANS];
	size_t n, used = 0, at = 0;

	if (!len)
		return buf;
	buf[0] = 0;
	if (whole) {
		put(buf, len, &used, SECRET_MASK, strlen(SECRET_MASK));
		return buf;
	}
	n = embedded_spans(value, sp);
	if (n == SIZE_MAX)
		return secret_show(value, true, buf, len);
	for (size_t i = 0; i < n; i++) {
		put(buf, len, &used, value + at, sp[i].off - at);
		put(buf, len, &used, SECRET_MASK, strlen(SECRET_MASK));
		at = sp[i].off + sp[i].len;
	}
	put(buf, len, &used, value + at, strlen(value + at));
	return buf;
}

const char *secret_show_option(const struct sl_option *o, const char *entry, const char *value,
			       char *buf, size_t len)
{
	bool whole = o && (o->flags & SL_OPT_SECRET);

	if (whole && entry && (o->flags & SL_OPT_MAP_ENTRIES))
		whole = secret_name(entry);
	return secret_show(value, whole, buf, len);
}

/* ---- scrubbing messages ---- */

struct secrets {
	char **v;
	size_t n, cap;
	bool failed;		/* out of memory: the message is not shown */
};

static void keep(struct secrets *s, const char *p, size_t n)
{
	char *c;

	if (!n)
		return;
	for (size_t i = 0; i < s->n; i++)
		if (strlen(s->v[i]) == n && memcmp(s->v[i], p, n) == 0)
			return;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		char **bigger = realloc(s->v, cap * sizeof(*bigger));

		if (!bigger) {
			s->failed = true;
			return;
		}
		s->v = bigger;
		s->cap = cap;
	}
	c = strndup(p, n);
	if (c)
		s->v[s->n++] = c;
	else
		s->failed = true;
}

static int hexval(char c)
{
	return isdigit((unsigned char)c) ? c - '0' : tolower((unsigned char)c) - 'a' + 10;
}

/* A secret as written, and as a library may repeat it: unquoted, percent-decoded. */
static void keep_forms(struct secrets *s, const char *p, size_t n)
{
	char *d = malloc(n + 1);
	size_t k = 0;

	keep(s, p, n);
	if (!d) {
		s->failed = true;
		return;
	}
	if (n >= 2 && p[0] == '\'') {
		for (size_t i = 1; i < n && p[i] != '\''; i++) {
			if (p[i] == '\\' && i + 1 < n)
				i++;
			d[k++] = p[i];
		}
		keep(s, d, k);
		k = 0;
	}
	if (memchr(p, '%', n)) {
		for (size_t i = 0; i < n; i++) {
			if (p[i] == '%' && i + 2 < n && isxdigit((unsigned char)p[i + 1]) &&
			    isxdigit((unsigned char)p[i + 2])) {
				d[k++] = (char)(hexval(p[i + 1]) * 16 + hexval(p[i + 2]));
				i += 2;
			} else {
				d[k++] = p[i];
			}
		}
		keep(s, d, k);
	}
	free(d);
}

static void keep_value(struct secrets *s, const char *v, bool whole)
{
	struct span sp[MAX_SPANS];
	size_t n;

	if (!v)
		return;
	if (whole) {
		keep(s, v, strlen(v));
		return;
	}
	n = embedded_spans(v, sp);
	if (n == SIZE_MAX) {
		keep(s, v, strlen(v));
		return;
	}
	for (size_t i = 0; i < n; i++)
		keep_forms(s, v + sp[i].off, sp[i].len);
}

static void collect(const struct sl_option *opts, const void *config, struct secrets *s)
{
	for (const struct sl_option *o = opts; o && o->name; o++) {
		const char *m = (const char *)config + o->offset;
		bool secret = o->flags & SL_OPT_SECRET;

		if (o->type == SL_OPT_STRING) {
			keep_value(s, *(const char *const *)m, secret);
		} else if (o->type == SL_OPT_LIST) {
			const struct sl_strlist *l = (const struct sl_strlist *)m;
			bool map = o->flags & SL_OPT_MAP_ENTRIES;

			for (unsigned i = 0; i < l->n; i++) {
				if (map && i % 2 == 0)
					continue;	/* a name: shown */
				keep_value(s, l->v[i],
					   secret && (!map || secret_name(l->v[i - 1])));
			}
		}
	}
}

static int longer_first(const void *a, const void *b)
{
	size_t x = strlen(*(char *const *)a), y = strlen(*(char *const *)b);

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Replace every `secret` in msg by the mask; -1: out of memory. */
static int replace_all(char *msg, size_t len, const char *secret)
{
	size_t n = strlen(secret), used = 0;
	char *out, *p = msg, *hit;

	if (!strstr(msg, secret))
		return 0;
	if (!(out = malloc(len)))
		return -1;
	out[0] = 0;
	while ((hit = strstr(p, secret))) {
		put(out, len, &used, p, (size_t)(hit - p));
		put(out, len, &used, SECRET_MASK, strlen(SECRET_MASK));
		p = hit + n;
	}
	put(out, len, &used, p, strlen(p));
	memcpy(msg, out, used + 1);
	free(out);
	return 0;
}

void secret_scrub(const struct sl_option *opts, const void *config, char *msg, size_t len)
{
	struct secrets s = {0};

	if (!config || !len)
		return;
	collect(opts, config, &s);
	/* longest first: a secret that contains another goes whole */
	if (s.n)
		qsort(s.v, s.n, sizeof(*s.v), longer_first);
	for (size_t i = 0; i < s.n; i++) {
		if (!s.failed && replace_all(msg, len, s.v[i]))
			s.failed = true;
		free(s.v[i]);
	}
	free(s.v);
	/* never the message unmasked: without memory, say only that */
	if (s.failed)
		snprintf(msg, len, "(a message not shown: out of memory masking its secrets)");
}
