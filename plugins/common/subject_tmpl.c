/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A NATS subject from a template with record fields: subject_tmpl.h. */
#include <stdio.h>
#include <string.h>

#include "fmt.h"
#include "subject_tmpl.h"

#define NAME_MAX_LEN 64

/* Literal bytes allowed in a subject we publish to. */
static bool literal_ok(char c)
{
	return c > ' ' && c < 0x7f && c != '*' && c != '>' && c != '{' && c != '}';
}

static int add_part(struct sl_subject_tmpl *t, size_t off, size_t len, int field,
		    enum sl_type type, char *err, size_t errlen)
{
	if (t->n == SL_SUBJECT_MAX_PARTS) {
		snprintf(err, errlen, "more than %d parts", SL_SUBJECT_MAX_PARTS);
		return -1;
	}
	t->p[t->n++] = (struct sl_subject_part){ .off = (uint16_t)off, .len = (uint16_t)len,
						 .field = field, .type = type };
	return 0;
}

int sl_subject_parse(struct sl_subject_tmpl *t, const char *s, sl_subject_resolve_fn resolve,
		     void *ctx, char *err, size_t errlen)
{
	size_t len = strlen(s), lit = 0;	/* bytes of t->text used */
	char prev = '.';			/* a token starts here */

	memset(t, 0, sizeof(*t));
	*err = 0;
	if (!len || len >= SL_SUBJECT_MAX_LEN) {
		snprintf(err, errlen, "must be 1 to %d characters", SL_SUBJECT_MAX_LEN - 1);
		return -1;
	}
	for (size_t i = 0; i < len;) {
		if (s[i] == '{') {
			const char *end = strchr(s + i + 1, '}');
			char name[NAME_MAX_LEN];
			size_t nlen = end ? (size_t)(end - s - i - 1) : 0;
			enum sl_type type = 0;
			int id;

			if (!end || !nlen || nlen >= sizeof(name)) {
				snprintf(err, errlen, "'{' at %zu: expected {field name}", i + 1);
				return -1;
			}
			memcpy(name, s + i + 1, nlen);
			name[nlen] = 0;
			for (size_t k = 0; k < nlen; k++)
				if (!literal_ok(name[k]) || name[k] == '.') {
					snprintf(err, errlen, "'{%s}': not a field name", name);
					return -1;
				}
			id = resolve(ctx, name, &type);
			if (id < 0)
				return -1;
			if (add_part(t, 0, 0, id, type, err, errlen) < 0)
				return -1;
			prev = '}';	/* a value: never an empty token */
			i += nlen + 2;
			continue;
		}
		size_t start = i;

		for (; i < len && s[i] != '{'; i++) {
			if (!literal_ok(s[i])) {
				snprintf(err, errlen, "'%c' at %zu: not allowed in a subject "
					 "(no spaces, wildcards or unmatched braces)",
					 s[i] >= ' ' && s[i] < 0x7f ? s[i] : '?', i + 1);
				return -1;
			}
			if (s[i] == '.' && prev == '.') {
				snprintf(err, errlen, "empty token at %zu", i + 1);
				return -1;
			}
			prev = s[i];
		}
		memcpy(t->text + lit, s + start, i - start);
		if (add_part(t, lit, i - start, -1, 0, err, errlen) < 0)
			return -1;
		lit += i - start;
	}
	if (prev == '.') {
		snprintf(err, errlen, "ends with an empty token");
		return -1;
	}
	t->fixed = t->n == 1 && t->p[0].field < 0;
	return 0;
}

/* Field f of r as plain text into b (nothing when absent). */
static void value_text(const struct sl_subject_part *p, const struct sl_record *r,
		       struct sl_fmt_buf *b)
{
	const union sl_value *v = &r->v[p->field];

	if (!sl_has(r, (sl_field)p->field))
		return;
	switch (p->type) {
	case SL_T_U64:
		sl_fmt_u64(b, v->u64);
		break;
	case SL_T_STRING:
		sl_fmt_mem(b, v->bytes.ptr, v->bytes.len);
		break;
	case SL_T_BYTES:
		sl_fmt_hexbytes(b, v->bytes.ptr, v->bytes.len, 0);
		break;
	case SL_T_ADDR:
		sl_fmt_addr_in(b, v->addr, sl_fmt_rec_v6(r));
		break;
	case SL_T_MAC:
		sl_fmt_mac(b, v->addr);
		break;
	case SL_T_TIME:
		if (v->time.sec < 0) {
			sl_fmt_chr(b, '-');
			sl_fmt_u64(b, (uint64_t)-(v->time.sec + 1) + 1);
		} else {
			sl_fmt_u64(b, (uint64_t)v->time.sec);
		}
		break;
	}
}

size_t sl_subject_render(const struct sl_subject_tmpl *t, const struct sl_record *r, char *buf,
			 size_t cap)
{
	static const char hex[] = "0123456789ABCDEF";
	char raw[SL_SUBJECT_MAX_LEN];
	struct sl_fmt_buf out, val;

	if (!cap)
		return 0;
	sl_fmt_init(&out, buf, cap - 1);	/* room for the NUL */
	for (unsigned i = 0; i < t->n; i++) {
		const struct sl_subject_part *p = &t->p[i];

		if (p->field < 0) {
			sl_fmt_mem(&out, t->text + p->off, p->len);
			continue;
		}
		sl_fmt_init(&val, raw, sizeof(raw));
		value_text(p, r, &val);
		if (val.overflow)
			return 0;
		if (!val.len || (val.len == 1 && raw[0] == '-')) {
			sl_fmt_str(&out, val.len ? "%2D" : "-");
			continue;
		}
		for (size_t k = 0; k < val.len; k++) {
			uint8_t c = (uint8_t)raw[k];

			if (sl_subject_keeps(c)) {
				sl_fmt_chr(&out, (char)c);
			} else {
				char e[3] = { '%', hex[c >> 4], hex[c & 15] };

				sl_fmt_mem(&out, e, 3);
			}
		}
	}
	if (out.overflow || !out.len)
		return 0;
	buf[out.len] = 0;
	return out.len;
}
