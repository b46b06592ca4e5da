/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A record as one systemd journal entry: see journal_entry.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "journal_entry.h"

size_t sl_journal_name(char out[SL_JOURNAL_NAME_MAX + 2], const char *name, size_t n)
{
	size_t o = 0;

	if (!n || name[0] == '_' || (name[0] >= '0' && name[0] <= '9'))
		out[o++] = 'X';
	for (size_t i = 0; i < n && o < SL_JOURNAL_NAME_MAX; i++) {
		char c = name[i];

		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			c = '_';
		out[o++] = c;
	}
	out[o++] = '=';
	return o;
}

int sl_journal_fmt_init(struct sl_journal_fmt *f, int priority, const char *ident)
{
	static const char id[] = "SYSLOG_IDENTIFIER=";

	memset(f, 0, sizeof(*f));
	for (unsigned i = 0; i < SL_JSON_NFIELDS; i++)
		f->namelen[i] = (uint8_t)sl_journal_name(f->names[i], sl_jfields[i].key + 2,
							 sl_jfields[i].keylen - 4u);
	sl_json_rows_init(&f->rows);
	for (unsigned i = 0; i < SL_JSON_TIME_CACHES; i++)
		sl_fmt_time_cache_init(&f->tc[i], false);	/* json's default: UTC */
	snprintf(f->prio, sizeof(f->prio), "PRIORITY=%d", priority & 7);
	f->ident = malloc(sizeof(id) + strlen(ident));
	if (!f->ident)
		return -1;
	memcpy(f->ident, id, sizeof(id) - 1);
	strcpy(f->ident + sizeof(id) - 1, ident);
	return 0;
}

static bool name_taken(const struct sl_journal_fmt *f, const char *name, size_t len)
{
	static const char *const own[] = { "MESSAGE=", "PRIORITY=", "SYSLOG_IDENTIFIER=" };

	for (unsigned i = 0; i < 3; i++)
		if (strlen(own[i]) == len && !memcmp(own[i], name, len))
			return true;
	for (unsigned i = 0; i < SL_JSON_NFIELDS; i++)
		if (f->namelen[i] == len && !memcmp(f->names[i], name, len))
			return true;
	for (unsigned i = 0; i < f->nextra; i++)
		if (f->extra[i].namelen == len && !memcmp(f->extra[i].name, name, len))
			return true;
	return false;
}

int sl_journal_fmt_add(struct sl_journal_fmt *f, sl_field id, enum sl_type type, const char *name)
{
	struct sl_journal_extra x = { .id = id, .type = type };
	struct sl_journal_extra *grown;

	x.namelen = (uint8_t)sl_journal_name(x.name, name, strlen(name));
	if (name_taken(f, x.name, x.namelen))
		return 0;
	grown = realloc(f->extra, (f->nextra + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	f->extra = grown;
	f->extra[f->nextra++] = x;
	return 1;
}

void sl_journal_fmt_free(struct sl_journal_fmt *f)
{
	free(f->extra);
	free(f->ident);
	f->extra = NULL;
	f->ident = NULL;
	f->nextra = 0;
}

/* NAME=value\n, or NAME\n, value's length (64 bits, little-endian), value, \n (a newline in it). */
static void put_native(struct sl_journal_entry *e, const char *name, size_t nlen, const void *v,
		       size_t vlen, bool plain)
{
	bool binary = !plain && vlen && memchr(v, '\n', vlen);
	size_t n = nlen + vlen + 1 + (binary ? 8 : 0);
	unsigned char *p;

	if (!nlen || !sl_grow(&e->buf, &e->cap, e->len + n)) {
		e->oom = true;
		return;
	}
	p = (unsigned char *)e->buf + e->len;
	memcpy(p, name, nlen);
	p += nlen;
	if (binary) {
		p[-1] = '\n';
		for (unsigned i = 0; i < 8; i++)
			*p++ = (unsigned char)((uint64_t)vlen >> (8 * i));
	}
	if (vlen)
		memcpy(p, v, vlen);
	p[vlen] = '\n';
	e->len += n;
}

void sl_journal_entry_put(struct sl_journal_entry *e, const char *name, size_t nlen, const void *v,
			  size_t vlen)
{
	size_t n = nlen + vlen;
	unsigned char *p;

	if (e->native) {
		put_native(e, name, nlen, v, vlen, false);
		return;
	}
	if (n > UINT32_MAX || !sl_grow(&e->buf, &e->cap, e->len + 4 + n)) {
		e->oom = true;
		return;
	}
	p = (unsigned char *)e->buf + e->len;
	p[0] = (unsigned char)n;
	p[1] = (unsigned char)(n >> 8);
	p[2] = (unsigned char)(n >> 16);
	p[3] = (unsigned char)(n >> 24);
	memcpy(p + 4, name, nlen);
	if (vlen)
		memcpy(p + 4 + nlen, v, vlen);
	e->len += 4 + n;
}

/*
 * JSON text of a value, without the quotes of a string (json's strings
 * here need no escape).  JSON text holds no raw newline: no need to look
 * for one.
 */
static void put_json(struct sl_journal_entry *e, const char *name, size_t nlen, const char *v, size_t vlen)
{
	if (vlen >= 2 && v[0] == '"' && v[vlen - 1] == '"') {
		v++;
		vlen -= 2;
	}
	if (e->native)
		put_native(e, name, nlen, v, vlen, true);
	else
		sl_journal_entry_put(e, name, nlen, v, vlen);
}

static void put_extra(struct sl_journal_fmt *f, struct sl_journal_entry *e,
		      const struct sl_journal_extra *x, const union sl_value *v, bool v6)
{
	struct sl_fmt_buf fb;
	char tmp[256], *mem = tmp;
	size_t cap = sizeof(tmp);

	if (x->type == SL_T_STRING) {
		sl_journal_entry_put(e, x->name, x->namelen, v->bytes.ptr, v->bytes.len);
		return;
	}
	if (x->type == SL_T_BYTES && 2 * (size_t)v->bytes.len + 2 > cap) {
		cap = 2 * (size_t)v->bytes.len + 2;
		mem = malloc(cap);
		if (!mem) {
			e->oom = true;
			return;
		}
	}
	sl_fmt_init(&fb, mem, cap);
	sl_json_typed_value(&fb, x->type, v, &f->tc[0], v6);
	if (!fb.overflow)
		put_json(e, x->name, x->namelen, mem, fb.len);
	if (mem != tmp)
		free(mem);
}

bool sl_journal_encode(struct sl_journal_fmt *f, struct sl_journal_entry *e, const struct sl_record *r)
{
	static const char msg[] = "MESSAGE=";
	const struct sl_bytes *text = NULL;
	bool v6 = sl_fmt_rec_v6(r);
	uint64_t rows[2];
	size_t start = e->len;

	e->oom = false;
	if (sl_has(r, SL_F_TEXT))
		text = &r->v[SL_F_TEXT].bytes;
	else if (sl_has(r, SL_F_PREFIX))
		text = &r->v[SL_F_PREFIX].bytes;
	sl_journal_entry_put(e, msg, sizeof(msg) - 1, text ? text->ptr : NULL, text ? text->len : 0);
	sl_journal_entry_put(e, f->prio, strlen(f->prio), NULL, 0);
	sl_journal_entry_put(e, f->ident, strlen(f->ident), NULL, 0);
	sl_json_rows_of(&f->rows, r, rows);
	for (unsigned w = 0; w < 2; w++) {
		for (uint64_t m = rows[w]; m; m &= m - 1) {
			unsigned i = w * 64 + (unsigned)__builtin_ctzll(m);
			const struct sl_jfield *jf = &sl_jfields[i];
			char tmp[SL_JSON_VALUE_MAX];

			if (jf->kind == J_STR) {
				const struct sl_bytes *s = &r->v[jf->id].bytes;

				sl_journal_entry_put(e, f->names[i], f->namelen[i], s->ptr, s->len);
				continue;
			}
			put_json(e, f->names[i], f->namelen[i], tmp,
				 (size_t)(sl_json_value(tmp, jf, r, f->tc, v6) - tmp));
		}
	}
	for (unsigned x = 0; x < f->nextra; x++)
		if (sl_has(r, f->extra[x].id))
			put_extra(f, e, &f->extra[x], &r->v[f->extra[x].id], v6);
	if (e->oom)
		e->len = start;
	return !e->oom;
}

static bool name_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || c == '_' || (c >= '0' && c <= '9');
}

/* NAME at p (k bytes): 1..SL_JOURNAL_NAME_MAX of A-Z0-9_, not starting with _ or a digit. */
static bool valid_name(const unsigned char *p, size_t k)
{
	if (k < 1 || k > SL_JOURNAL_NAME_MAX || p[0] == '_' || (p[0] >= '0' && p[0] <= '9'))
		return false;
	for (size_t i = 0; i < k; i++)
		if (!name_char(p[i]))
			return false;
	return true;
}

/* NAME= at p (n bytes), a valid name. */
static bool valid_field(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n && i <= SL_JOURNAL_NAME_MAX && p[i] != '='; i++)
		if (!name_char(p[i]))
			return false;
	return i < n && p[i] == '=' && valid_name(p, i);
}

unsigned sl_journal_entry_iov(const void *rec, size_t len, struct iovec *iov, unsigned max)
{
	const unsigned char *p = rec;
	unsigned n = 0;
	size_t off = 0;

	while (off < len) {
		size_t flen;

		if (len - off < 4 || n == max)
			return 0;
		flen = (size_t)p[off] | (size_t)p[off + 1] << 8 | (size_t)p[off + 2] << 16 |
		       (size_t)p[off + 3] << 24;
		off += 4;
		if (flen > len - off || !valid_field(p + off, flen))
			return 0;
		iov[n].iov_base = (void *)(p + off);
		iov[n].iov_len = flen;
		n++;
		off += flen;
	}
	return n;
}

unsigned sl_journal_native_fields(const void *dgram, size_t len, struct sl_journal_field *out,
				  unsigned max)
{
	const unsigned char *p = dgram;
	unsigned n = 0;
	size_t off = 0;

	while (off < len) {
		const unsigned char *nl = memchr(p + off, '\n', len - off);
		const unsigned char *eq;
		size_t line, vlen = 0;

		if (!nl || n == max)
			return 0;
		line = (size_t)(nl - (p + off));
		eq = memchr(p + off, '=', line);
		if (eq) {
			out[n].name = (const char *)p + off;
			out[n].nlen = (size_t)(eq - (p + off)) + 1;
			out[n].value = eq + 1;
			out[n].vlen = line - out[n].nlen;
			off += line + 1;
		} else {
			/* NAME\n, a 64-bit length, the value, \n */
			if (len - off - line - 1 < 8)
				return 0;
			for (unsigned i = 0; i < 8; i++)
				vlen |= (size_t)nl[1 + i] << (8 * i);
			if (vlen > len - off - line - 9 || vlen == len - off - line - 9 ||
			    nl[9 + vlen] != '\n')
				return 0;
			out[n].name = (const char *)p + off;
			out[n].nlen = line + 1;	/* the \n stands for '=' */
			out[n].value = nl + 9;
			out[n].vlen = vlen;
			off += line + 9 + vlen + 1;
		}
		if (!valid_name((const unsigned char *)out[n].name, out[n].nlen - 1))
			return 0;
		n++;
	}
	return n;
}

bool sl_journal_native_entry(const void *dgram, size_t len, struct sl_journal_field *fields,
			     unsigned max, struct sl_journal_entry *e)
{
	unsigned n = sl_journal_native_fields(dgram, len, fields, max);
	char name[SL_JOURNAL_NAME_MAX + 2];

	e->native = false;
	e->len = 0;
	e->oom = false;
	for (unsigned i = 0; i < n; i++) {
		memcpy(name, fields[i].name, fields[i].nlen - 1);
		name[fields[i].nlen - 1] = '=';
		sl_journal_entry_put(e, name, fields[i].nlen, fields[i].value, fields[i].vlen);
	}
	return n && !e->oom;
}

bool sl_journal_entry_native(const void *rec, size_t len, struct iovec *iov, unsigned max,
			     struct sl_journal_entry *e)
{
	unsigned n = sl_journal_entry_iov(rec, len, iov, max);
	size_t start = e->len;

	e->native = true;
	e->oom = false;
	for (unsigned i = 0; i < n; i++) {
		const char *p = iov[i].iov_base;
		size_t nl = (size_t)((const char *)memchr(p, '=', iov[i].iov_len) - p) + 1;

		sl_journal_entry_put(e, p, nl, p + nl, iov[i].iov_len - nl);
	}
	if (!n || e->oom)
		e->len = start;
	return n && !e->oom;
}
