/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Not a plugin: the formatter of `sluice tail` (core/src/tail_module.h).
 * A session's `where` expression (common/expr.c) decides which records
 * it sees; each is written as the json filter's flat object (the rows of
 * common/json_fields.h, then the fields plugins registered, by type) or
 * as the kernel's LOG line (common/logline_fmt.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "fmt.h"
#include "json_fields.h"
#include "logline_fmt.h"
#include "tail_module.h"

struct textra {
	sl_field id;
	enum sl_type type;
	char key[72];			/* "name": escaped; empty: not printed */
	size_t keylen;
};

struct sl_tail_fmt {
	struct sl_expr *where;		/* NULL: every record */
	int json;
	struct sl_json_rows rows;
	struct sl_fmt_time_cache tc[SL_JSON_TIME_CACHES];
	struct textra *extra;		/* registered fields, in id order */
	unsigned nextra;
};

static int lookup(void *ctx, const char *name, enum sl_type *type)
{
	const struct sl_tail_fields *f = ctx;

	return f->lookup(f->ctx, name, type);
}

/* The registered fields' keys (the well-known ones are the table's rows). */
static int extra_keys(struct sl_tail_fmt *t, const struct sl_tail_fields *f)
{
	if (f->count <= SL_F_WELL_KNOWN_COUNT)
		return 0;
	t->extra = calloc(f->count - SL_F_WELL_KNOWN_COUNT, sizeof(*t->extra));
	if (!t->extra)
		return -1;
	for (unsigned id = SL_F_WELL_KNOWN_COUNT; id < f->count; id++) {
		struct textra *x = &t->extra[t->nextra];
		const char *name = f->name(f->ctx, id, &x->type);
		struct sl_fmt_buf b;

		if (!name || id >= SL_FIELD_REFUSED)
			continue;
		sl_fmt_init(&b, x->key, sizeof(x->key));
		sl_fmt_chr(&b, ',');
		sl_fmt_json_str(&b, name, strlen(name));
		sl_fmt_chr(&b, ':');
		if (b.overflow)
			continue;
		x->id = (sl_field)id;
		x->keylen = b.len;
		t->nextra++;
	}
	return 0;
}

static struct sl_tail_fmt *tail_open(const char *where, int json, const struct sl_tail_fields *f,
				     char *err, size_t errlen)
{
	struct sl_tail_fmt *t = calloc(1, sizeof(*t));
	struct sl_expr_error e;

	if (!t || extra_keys(t, f)) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (where && *where &&
	    !(t->where = sl_expr_compile(where, lookup, (void *)f, &e))) {
		snprintf(err, errlen, "--where, column %u: %s", e.column, e.msg);
		goto fail;
	}
	t->json = json;
	sl_json_rows_init(&t->rows);
	for (unsigned i = 0; i < SL_JSON_TIME_CACHES; i++)
		sl_fmt_time_cache_init(&t->tc[i], false);
	return t;
fail:
	if (t)
		free(t->extra);
	free(t);
	return NULL;
}

/* One row of the table; the caller checks b->overflow. */
static void put_row(struct sl_tail_fmt *t, struct sl_fmt_buf *b, const struct sl_record *r,
		    unsigned i, bool first, bool v6)
{
	const struct sl_jfield *f = &sl_jfields[i];
	char tmp[SL_JSON_VALUE_MAX + 32];

	sl_fmt_mem(b, f->key + first, f->keylen - first);
	if (f->kind == J_STR) {
		sl_fmt_json_str(b, r->v[f->id].bytes.ptr, r->v[f->id].bytes.len);
	} else if (f->kind == J_HEX) {
		sl_json_hex_str(b, &r->v[f->id].bytes);
	} else {
		char *end = sl_json_value(tmp, f, r, t->tc, v6);

		sl_fmt_mem(b, tmp, (size_t)(end - tmp));
	}
}

static void json_object(struct sl_tail_fmt *t, struct sl_fmt_buf *b, const struct sl_record *r)
{
	bool first = true, v6 = sl_fmt_rec_v6(r);
	uint64_t rows[2];

	sl_json_rows_of(&t->rows, r, rows);
	sl_fmt_chr(b, '{');
	for (unsigned w = 0; w < 2; w++)
		for (uint64_t m = rows[w]; m; m &= m - 1) {
			put_row(t, b, r, w * 64 + (unsigned)__builtin_ctzll(m), first, v6);
			first = false;
		}
	for (unsigned x = 0; x < t->nextra; x++) {
		if (!sl_has(r, t->extra[x].id))
			continue;
		sl_fmt_mem(b, t->extra[x].key + first, t->extra[x].keylen - first);
		sl_json_typed_value(b, t->extra[x].type, &r->v[t->extra[x].id], &t->tc[0], v6);
		first = false;
	}
	sl_fmt_chr(b, '}');
}

static long tail_format(struct sl_tail_fmt *t, const struct sl_record *r, char *buf, size_t cap)
{
	struct sl_fmt_buf b;

	if (t->where && !sl_expr_match(t->where, r))
		return 0;
	/* a full buffer (tap.c passes 0 then): lost, without formatting */
	if (!cap)
		return -1;
	sl_fmt_init(&b, buf, cap);
	/* logline_fmt needs room for the kernel's longest line before it starts */
	if (t->json || !sl_has(r, SL_F_PACKET) ||
	    (cap >= SL_LOGLINE_MAX && !sl_logline_format(&b, r, 0)))
		json_object(t, &b, r);
	else if (cap < SL_LOGLINE_MAX)
		return -1;
	if (b.overflow)
		return -1;
	return b.len ? (long)b.len : -1;
}

static void tail_close(struct sl_tail_fmt *t)
{
	if (!t)
		return;
	sl_expr_free(t->where);
	free(t->extra);
	free(t);
}

static const struct sl_tail_module tail_module = {
	.version = SL_TAIL_IFACE_VERSION,
	.size = sizeof(struct sl_tail_module),
	.open = tail_open,
	.format = tail_format,
	.close = tail_close,
};

__attribute__((visibility("default"))) const struct sl_tail_module *sluice_tail_entry(void);
__attribute__((visibility("default"))) const struct sl_tail_module *sluice_tail_entry(void)
{
	return &tail_module;
}
