/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/plugin.h>

#include "config.h"
#include "identity.h"
#include "secret.h"
#include "strset.h"

struct kbuf {
	char *p;
	size_t len, cap;
	bool failed;
};

static void kb_add(struct kbuf *b, const char *s, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *bigger = realloc(b->p, cap);

		if (!bigger) {
			b->failed = true;
			return;
		}
		b->p = bigger;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void kb_str(struct kbuf *b, const char *s)
{
	kb_add(b, s, strlen(s));
}

/* A value with its length in front, so no value can imitate a separator. */
static void kb_value(struct kbuf *b, const char *v)
{
	char len[24];
	size_t n = strlen(v);

	kb_add(b, len, (size_t)snprintf(len, sizeof(len), "%zu:", n));
	kb_add(b, v, n);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * One option's parsed value, from the config struct the table filled.
 * as_set: a list as a set (sorted, repeats once), for resources.
 */
static void kb_option(struct kbuf *b, const struct sl_option *o, const void *config, bool as_set)
{
	const char *m = (const char *)config + o->offset;
	char num[32];

	switch (o->type) {
	case SL_OPT_STRING: {
		const char *s = *(const char *const *)m;

		/* unset and "" differ: a plugin may tell them apart */
		if (s)
			kb_value(b, s);
		else
			kb_str(b, "~");
		return;
	}
	case SL_OPT_INT:
		snprintf(num, sizeof(num), "%" PRId64, *(const int64_t *)m);
		break;
	case SL_OPT_BOOL:
		snprintf(num, sizeof(num), "%s", *(const bool *)m ? "true" : "false");
		break;
	case SL_OPT_SIZE:
		snprintf(num, sizeof(num), "%" PRIu64, *(const uint64_t *)m);
		break;
	case SL_OPT_DURATION:
		snprintf(num, sizeof(num), "%" PRIu64 "ms", *(const uint64_t *)m);
		break;
	case SL_OPT_ENUM:
		snprintf(num, sizeof(num), "%d", *(const int *)m);
		break;
	case SL_OPT_LIST: {
		const struct sl_strlist *l = (const struct sl_strlist *)m;
		const char **v = NULL;

		if (as_set && l->n > 1) {
			v = malloc(l->n * sizeof(*v));
			if (!v) {
				b->failed = true;
				return;
			}
			memcpy(v, l->v, l->n * sizeof(*v));
			qsort(v, l->n, sizeof(*v), cmp_str);
		}
		kb_str(b, "[");
		for (unsigned i = 0; i < l->n; i++) {
			const char *item = v ? v[i] : l->v[i];

			if (v && i && strcmp(item, v[i - 1]) == 0)
				continue;
			kb_value(b, item);
		}
		kb_str(b, "]");
		free(v);
		return;
	}
	default:
		snprintf(num, sizeof(num), "?");
		break;
	}
	kb_str(b, num);
}

char *identity_key(const struct sl_plugin *d, const void *config, bool thread,
		   unsigned queue_batches, bool block_when_full)
{
	struct kbuf b = {0};
	char core[64];

	kb_str(&b, d->name);
	for (const struct sl_option *o = d->options; o && o->name; o++) {
		kb_str(&b, "\x1f");
		kb_str(&b, o->name);
		kb_str(&b, "=");
		kb_option(&b, o, config, false);
	}
	/* The core's own keys, as parsed (their defaults included). */
	snprintf(core, sizeof(core), "\x1ethread=%d,queue=%u,when_full=%s", thread,
		 queue_batches, block_when_full ? "block" : "drop");
	kb_str(&b, core);
	if (b.failed) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

static bool has_exclusive(const struct sl_plugin *d)
{
	for (const struct sl_option *o = d->options; o && o->name; o++)
		if (o->flags & SL_OPT_EXCLUSIVE)
			return true;
	return false;
}

/* The resource: plugin and every exclusive option's value.  NULL: OOM. */
static char *resource_key(const struct sl_plugin *desc, const void *config)
{
	struct kbuf b = {0};

	kb_str(&b, desc->name);
	for (const struct sl_option *o = desc->options; o && o->name; o++) {
		if (!(o->flags & SL_OPT_EXCLUSIVE))
			continue;
		kb_str(&b, "\x1f");
		kb_str(&b, o->name);
		kb_str(&b, "=");
		kb_option(&b, o, config, true);
	}
	if (b.failed) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

/* "group 5", "events [destroy, new]": the resource as a user reads it. */
static void describe_resource(const struct sl_plugin *desc, const void *config, char *buf,
			      size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (const struct sl_option *o = desc->options; o && o->name && used < len; o++) {
		const char *m = (const char *)config + o->offset;

		if (!(o->flags & SL_OPT_EXCLUSIVE))
			continue;
		/* an optional string left unset (nflog's netns) is not part of what is held */
		if (o->type == SL_OPT_STRING && !*(const char *const *)m)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s ", used ? ", " : "", o->name);
		if (used >= len)
			break;
		if (o->flags & SL_OPT_SECRET) {
			used += (size_t)snprintf(buf + used, len - used, "%s", SECRET_MASK);
		} else if (o->type == SL_OPT_LIST) {
			/* as the set it is compared as: sorted, each item once */
			const struct sl_strlist *l = (const struct sl_strlist *)m;
			const char **v = malloc((l->n + 1) * sizeof(*v));
			unsigned k = 0;

			if (v) {
				memcpy(v, l->v, l->n * sizeof(*v));
				qsort(v, l->n, sizeof(*v), cmp_str);
			}
			used += (size_t)snprintf(buf + used, len - used, "[");
			for (unsigned i = 0; v && i < l->n && used < len; i++)
				if (!i || strcmp(v[i], v[i - 1]) != 0)
					used += (size_t)snprintf(buf + used, len - used, "%s%s",
								 k++ ? ", " : "", v[i]);
			if (used < len)
				used += (size_t)snprintf(buf + used, len - used, "]");
			free(v);
		} else if (o->type == SL_OPT_INT) {
			used += (size_t)snprintf(buf + used, len - used, "%" PRId64,
						 *(const int64_t *)m);
		} else if (o->type == SL_OPT_STRING) {
			const char *s = *(const char *const *)m;

			used += (size_t)snprintf(buf + used, len - used, "%s", s ? s : "~");
		} else if (o->type == SL_OPT_ENUM) {
			used += (size_t)snprintf(buf + used, len - used, "%s",
						 o->choices[*(const int *)m]);
		} else {
			struct kbuf b = {0};

			kb_option(&b, o, config, false);
			used += (size_t)snprintf(buf + used, len - used, "%s", b.p ? b.p : "?");
			free(b.p);
		}
	}
}

const struct sl_option *identity_first_exclusive(const struct sl_plugin *d)
{
	for (const struct sl_option *o = d->options; o && o->name; o++)
		if (o->flags & SL_OPT_EXCLUSIVE)
			return o;
	return NULL;
}

bool identity_same_resource(const struct sl_plugin *da, const void *ca, const struct sl_plugin *db,
			    const void *cb, char *what, size_t len)
{
	char *ka, *kb;
	bool same;

	if (da != db || !has_exclusive(da))
		return false;
	ka = resource_key(da, ca);
	kb = resource_key(db, cb);
	same = ka && kb && strcmp(ka, kb) == 0;
	free(ka);
	free(kb);
	if (same)
		describe_resource(da, ca, what, len);
	return same;
}

static int cmp_mark(const void *a, const void *b)
{
	const struct identity_holder *x = *(const struct identity_holder *const *)a;
	const struct identity_holder *y = *(const struct identity_holder *const *)b;

	return ymark_cmp(x->mark, y->mark);
}

int identity_check_exclusive(const struct identity_holder *h, size_t nh, struct diag *diag)
{
	const struct identity_holder **v;
	struct strset held = {0};
	char **keys;
	size_t n = 0;
	unsigned before = diag->errors;

	v = calloc(nh + 1, sizeof(*v));
	keys = calloc(nh + 1, sizeof(*keys));
	if (!v || !keys) {
		free(v);
		free(keys);
		diag_error(diag, NULL, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < nh; i++)
		if (has_exclusive(h[i].desc))
			v[n++] = &h[i];
	/* In file order, so the error is at the later one of each pair. */
	qsort(v, n, sizeof(*v), cmp_mark);
	for (size_t i = 0; i < n; i++) {
		const struct identity_holder *first = NULL;
		int r;

		keys[i] = resource_key(v[i]->desc, v[i]->config);
		r = keys[i] ? strset_add(&held, keys[i], (void *)v[i], (void **)&first) : -1;
		if (r < 0) {
			diag_error(diag, v[i]->mark, "out of memory");
			break;
		}
		if (r == 0) {
			const struct sl_option *o = identity_first_exclusive(v[i]->desc);
			char what[512];

			describe_resource(v[i]->desc, v[i]->config, what, sizeof(what));
			diag_error(diag, v[i]->at,
				   "instance '%s' has the same %s as instance '%s' (line %u, "
				   "column %u); plugin '%s' allows one instance per value of '%s'",
				   v[i]->name, what, first->name, first->at->line, first->at->col,
				   v[i]->desc->name, o->name);
		}
	}
	strset_free(&held);
	for (size_t i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
	free(v);
	return diag->errors == before ? 0 : -1;
}
