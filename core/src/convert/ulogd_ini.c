/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ulogd.conf's syntax, as ulogd2's conffile.c reads it, but strict: an
 * unterminated section name or string, a key without '=' and text after
 * a value are errors with their line and column (ulogd ignores most).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ulogd_ini.h"

struct reader {
	struct ulogd_ini *ini;
	size_t entries;
	unsigned line;
};

static int ini_error(struct reader *r, const char *at, const char *start, const char *fmt, ...)
{
	va_list ap;

	r->ini->err_line = r->line;
	r->ini->err_col = (unsigned)(at - start) + 1;
	va_start(ap, fmt);
	vsnprintf(r->ini->err, sizeof(r->ini->err), fmt, ap);
	va_end(ap);
	return -1;
}

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *q;

	if (n < *cap)
		return p;
	ncap = *cap ? *cap * 2 : 8;
	q = realloc(p, ncap * size);
	if (q)
		*cap = ncap;
	return q;
}

static char *dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static const char *skip_blank(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* Nothing but blanks and an optional comment may follow. */
static int rest_of_line(struct reader *r, const char *p, const char *line, const char *after)
{
	p = skip_blank(p);
	if (*p && *p != '#')
		return ini_error(r, p, line, "unexpected '%c' after %s (a comment starts with '#')",
				 *p, after);
	return 0;
}

static int section_line(struct reader *r, const char *line, const char *p)
{
	struct ulogd_ini *ini = r->ini;
	const char *name = ++p, *end = strchr(p, ']');
	struct ini_section *s;
	void *first;

	if (!end)
		return ini_error(r, p + strlen(p), line, "expected ']' to end the section name");
	if (end == name)
		return ini_error(r, end, line, "expected a section name before ']'");
	for (const char *q = name; q < end; q++)
		if (*q == ' ' || *q == '\t' || *q == '[' || *q == '#')
			return ini_error(r, q, line, "unexpected '%c' in a section name", *q);
	if (rest_of_line(r, end + 1, line, "the section name"))
		return -1;
	ini->s = grow(ini->s, &ini->cap, ini->n, sizeof(*ini->s));
	if (!ini->s)
		return ini_error(r, line, line, "out of memory");
	s = &ini->s[ini->n];
	memset(s, 0, sizeof(*s));
	s->name = dup_n(name, (size_t)(end - name));
	if (!s->name)
		return ini_error(r, line, line, "out of memory");
	s->line = r->line;
	switch (strset_add(&ini->names, s->name, (void *)(ini->n + 1), &first)) {
	case 1:
		break;
	case 0:
		/* ulogd reads only the first: which one was meant is not ours to guess */
		free(s->name);
		return ini_error(r, name, line, "section [%.*s] again (first on line %u)",
				 (int)(end - name), name, ini->s[(size_t)first - 1].line);
	default:
		free(s->name);
		return ini_error(r, line, line, "out of memory");
	}
	ini->n++;
	return 0;
}

static bool key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.';
}

static int key_line(struct reader *r, const char *line, const char *p)
{
	struct ulogd_ini *ini = r->ini;
	const char *key = p, *val, *vend;
	struct ini_section *s;
	struct ini_entry *e;

	while (key_char(*p))
		p++;
	if (p == key)
		return ini_error(r, p, line, "expected a key, a [section] or a # comment, found '%c'",
				 *p);
	if (!ini->n)
		return ini_error(r, key, line, "key '%.*s' before the first [section]",
				 (int)(p - key), key);
	val = skip_blank(p);
	if (*val != '=')
		return ini_error(r, val, line, "expected '=' after the key '%.*s'", (int)(p - key),
				 key);
	val = skip_blank(val + 1);
	if (*val == '"') {
		vend = strchr(++val, '"');
		if (!vend)
			return ini_error(r, val - 1, line, "string not terminated by '\"'");
		if (rest_of_line(r, vend + 1, line, "the value"))
			return -1;
	} else {
		for (vend = val; *vend && *vend != ' ' && *vend != '\t' && *vend != '#'; vend++)
			;
		if (rest_of_line(r, vend, line, "the value"))
			return -1;
	}
	if (++r->entries > ULOGD_INI_MAX_ENTRIES)
		return ini_error(r, key, line, "more than %d keys", ULOGD_INI_MAX_ENTRIES);
	s = &ini->s[ini->n - 1];
	s->e = grow(s->e, &s->cap, s->n, sizeof(*s->e));
	if (!s->e)
		return ini_error(r, line, line, "out of memory");
	e = &s->e[s->n];
	e->key = dup_n(key, (size_t)(p - key));
	e->value = dup_n(val, (size_t)(vend - val));
	if (!e->key || !e->value) {
		free(e->key);
		free(e->value);
		return ini_error(r, line, line, "out of memory");
	}
	e->line = r->line;
	e->col = (unsigned)(key - line) + 1;
	e->vcol = (unsigned)(val - line) + 1;
	s->n++;
	return 0;
}

/*
 * The converter copies names and values into YAML: only what libyaml reads
 * back as the same text.  UTF-8 without overlong forms, surrogates or
 * controls (tab allowed), and none of YAML's other line breaks (NEL, LS,
 * PS), which would end a comment or fold a scalar; no BOM inside.
 */
static const char *bad_text(const char *p)
{
	const unsigned char *s = (const unsigned char *)p;

	while (*s) {
		unsigned n, cp;

		if (*s < 0x80) {
			if ((*s < 0x20 && *s != '\t') || *s == 0x7f)
				return (const char *)s;
			s++;
			continue;
		}
		n = (*s & 0xe0) == 0xc0 ? 1 : (*s & 0xf0) == 0xe0 ? 2 : (*s & 0xf8) == 0xf0 ? 3 : 0;
		if (!n)
			return (const char *)s;
		cp = *s & (0x3f >> n);
		for (unsigned i = 1; i <= n; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return (const char *)s;
			cp = cp << 6 | (s[i] & 0x3f);
		}
		if (cp < (n == 1 ? 0x80u : n == 2 ? 0x800u : 0x10000u) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff) || cp < 0xa0 || cp == 0x2028 || cp == 0x2029 ||
		    cp == 0xfeff || cp == 0xfffe || cp == 0xffff)
			return (const char *)s;
		s += n + 1;
	}
	return NULL;
}

static int one_line(struct reader *r, const char *line)
{
	const char *p = skip_blank(line), *bad = bad_text(line);

	if (bad)
		return ini_error(r, bad, line, "byte 0x%02x: the file must be UTF-8 text",
				 (unsigned char)*bad);

	if (!*p || *p == '#')
		return 0;
	if (*p == '[')
		return section_line(r, line, p);
	return key_line(r, line, p);
}

/* One line without its "\n" (and "\r"): its length, or -1 at the end of the file. */
static long read_line(struct reader *r, FILE *f, char *buf, size_t size)
{
	size_t len = 0;
	int c;

	while ((c = getc(f)) != EOF && c != '\n') {
		if (len + 1 >= size)
			return ini_error(r, buf + len, buf, "line longer than %d bytes",
					 ULOGD_INI_MAX_LINE) - 1;
		if (c == '\0')
			return ini_error(r, buf + len, buf, "NUL byte in the line") - 1;
		buf[len++] = (char)c;
	}
	if (c == EOF && !len)
		return -1;
	if (len && buf[len - 1] == '\r')
		len--;
	buf[len] = '\0';
	return (long)len;
}

int ulogd_ini_read(struct ulogd_ini *ini, FILE *f)
{
	struct reader r = { .ini = ini };
	char buf[ULOGD_INI_MAX_LINE + 1];
	long len;

	memset(ini, 0, sizeof(*ini));
	for (;;) {
		r.line++;
		len = read_line(&r, f, buf, sizeof(buf));
		if (len == -2)
			return -1;
		if (len < 0)
			break;
		if (one_line(&r, buf))
			return -1;
	}
	if (ferror(f)) {
		snprintf(ini->err, sizeof(ini->err), "read error: %s", strerror(errno));
		ini->err_line = r.line;
		return -1;
	}
	return 0;
}

int ulogd_ini_read_mem(struct ulogd_ini *ini, const char *buf, size_t len)
{
	FILE *f;
	int ret;

	memset(ini, 0, sizeof(*ini));
	if (!len)
		return 0;
	f = fmemopen((void *)buf, len, "r");
	if (!f) {
		snprintf(ini->err, sizeof(ini->err), "fmemopen: %s", strerror(errno));
		return -1;
	}
	ret = ulogd_ini_read(ini, f);
	fclose(f);
	return ret;
}

void ulogd_ini_free(struct ulogd_ini *ini)
{
	for (size_t i = 0; i < ini->n; i++) {
		for (size_t j = 0; j < ini->s[i].n; j++) {
			free(ini->s[i].e[j].key);
			free(ini->s[i].e[j].value);
		}
		free(ini->s[i].e);
		free(ini->s[i].name);
	}
	free(ini->s);
	strset_free(&ini->names);
	memset(ini, 0, sizeof(*ini));
}

const struct ini_section *ulogd_ini_section(const struct ulogd_ini *ini, const char *name)
{
	size_t i = (size_t)strset_get(&ini->names, name);

	return i ? &ini->s[i - 1] : NULL;
}

const struct ini_entry *ulogd_ini_get(const struct ini_section *s, const char *key)
{
	for (size_t i = 0; s && i < s->n; i++)
		if (strcmp(s->e[i].key, key) == 0)
			return &s->e[i];
	return NULL;
}
