/* SPDX-License-Identifier: GPL-2.0-or-later */
/* enum skb_drop_reason from BTF (drop_reasons.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <bpf/btf.h>

#include "drop_reasons.h"

#define PREFIX "SKB_DROP_REASON_"
/* Values above this are subsystem reasons (SKB_DROP_REASON_SUBSYS_MASK) or _MAX. */
#define VALUE_LIMIT 65536

int sl_drop_reasons_load(struct sl_drop_reasons *t, const struct btf *btf)
{
	int id = btf__find_by_name_kind(btf, "skb_drop_reason", BTF_KIND_ENUM);
	const struct btf_type *ty;
	const struct btf_enum *e;
	uint32_t n = 0;

	memset(t, 0, sizeof(*t));
	if (id < 0 || !(ty = btf__type_by_id(btf, (uint32_t)id))) {
		errno = ENOENT;
		return -1;
	}
	e = btf_enum(ty);
	for (unsigned i = 0; i < btf_vlen(ty); i++)
		if ((uint32_t)e[i].val < VALUE_LIMIT && (uint32_t)e[i].val >= n)
			n = (uint32_t)e[i].val + 1;
	if (!(t->name = calloc(n ? n : 1, sizeof(*t->name)))) {
		errno = ENOMEM;
		return -1;
	}
	t->n = n;
	for (unsigned i = 0; i < btf_vlen(ty); i++) {
		const char *s = btf__name_by_offset(btf, e[i].name_off);
		uint32_t v = (uint32_t)e[i].val;

		if (!s || v >= n || t->name[v])
			continue;
		if (!strncmp(s, PREFIX, strlen(PREFIX)))
			s += strlen(PREFIX);
		if (!strcmp(s, "MAX") || !*s)
			continue;
		if (!(t->name[v] = strdup(s))) {
			sl_drop_reasons_free(t);
			errno = ENOMEM;
			return -1;
		}
	}
	return 0;
}

int64_t sl_drop_reasons_find(const struct sl_drop_reasons *t, const char *name)
{
	if (!strncasecmp(name, PREFIX, strlen(PREFIX)))
		name += strlen(PREFIX);
	for (uint32_t v = 0; v < t->n; v++)
		if (t->name[v] && !strcasecmp(t->name[v], name))
			return v;
	return -1;
}

const char *sl_drop_reasons_name(const struct sl_drop_reasons *t, uint32_t v)
{
	return v < t->n ? t->name[v] : NULL;
}

/* Levenshtein distance, case-insensitive, capped at 9 (names are short). */
static unsigned distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[64], prev;

	if (la >= 63 || lb >= 63)
		return 9;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned cur = row[j];
			unsigned sub = prev + ((a[i - 1] | 0x20) != (b[j - 1] | 0x20));
			unsigned best = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;

			row[j] = sub < best ? sub : best;
			prev = cur;
		}
	}
	return row[lb] > 9 ? 9 : row[lb];
}

static unsigned score(const char *known, const char *name)
{
	unsigned d = distance(known, name);

	if (d <= 2)
		return d;
	if (strlen(name) >= 3 && (strcasestr(known, name) || strcasestr(name, known)))
		return 3;
	return 9;
}

unsigned sl_drop_reasons_close(const struct sl_drop_reasons *t, const char *name, unsigned max,
			       char *buf, size_t len)
{
	unsigned written = 0;
	size_t used = 0;

	if (len)
		buf[0] = 0;
	if (!strncasecmp(name, PREFIX, strlen(PREFIX)))
		name += strlen(PREFIX);
	for (unsigned s = 0; s <= 3 && written < max; s++)
		for (uint32_t v = 0; v < t->n && written < max; v++) {
			int n;

			if (!t->name[v] || score(t->name[v], name) != s)
				continue;
			n = snprintf(buf + used, len - used, "%s%s", written ? ", " : "", t->name[v]);
			if (n < 0 || (size_t)n >= len - used)
				return written;
			used += (size_t)n;
			written++;
		}
	return written;
}

void sl_drop_reasons_free(struct sl_drop_reasons *t)
{
	for (uint32_t v = 0; v < t->n; v++)
		free(t->name[v]);
	free(t->name);
	t->name = NULL;
	t->n = 0;
}

int sl_drop_reasons_tracepoint_ok(const struct btf *btf)
{
	int id = btf__find_by_name_kind(btf, "btf_trace_kfree_skb", BTF_KIND_TYPEDEF);
	const struct btf_type *ty;
	const struct btf_param *p;

	if (id < 0) {
		errno = ENOENT;
		return -1;
	}
	ty = btf__type_by_id(btf, (uint32_t)id);
	/* typedef -> pointer -> func_proto (void *ctx, skb, location, reason...) */
	while (ty && (btf_is_typedef(ty) || btf_is_ptr(ty)))
		ty = btf__type_by_id(btf, ty->type);
	if (!ty || !btf_is_func_proto(ty) || btf_vlen(ty) < 4) {
		errno = ENOTSUP;
		return -1;
	}
	p = btf_params(ty);
	ty = btf__type_by_id(btf, p[3].type);
	if (!ty || !btf_is_enum(ty) ||
	    strcmp(btf__name_by_offset(btf, ty->name_off) ?: "", "skb_drop_reason")) {
		errno = ENOTSUP;
		return -1;
	}
	return 0;
}
