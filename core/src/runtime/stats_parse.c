/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `sluice stats` reads the daemon's JSON (stats_write_json()) back into a
 * snapshot.  A small JSON reader: objects, arrays, strings (with the
 * escapes the writer makes), unsigned 64-bit integers, null.
 * Unknown keys are skipped, so a newer daemon can add some.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

enum jtype { J_NULL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jv {
	enum jtype type;
	unsigned long long num;
	char *str;
	char **keys;		/* J_OBJ */
	struct jv *items;	/* J_ARR, J_OBJ */
	size_t n;
};

struct jp {
	const char *p;
	int depth;
	const char *err;
};

static void jv_free(struct jv *v)
{
	for (size_t i = 0; i < v->n; i++) {
		if (v->keys)
			free(v->keys[i]);
		jv_free(&v->items[i]);
	}
	free(v->keys);
	free(v->items);
	free(v->str);
}

static void skip_ws(struct jp *j)
{
	while (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r')
		j->p++;
}

static char *parse_string(struct jp *j)
{
	size_t cap = 16, n = 0;
	char *s = malloc(cap);

	if (!s || *j->p != '"')
		goto bad;
	j->p++;
	while (*j->p != '"') {
		unsigned c = (unsigned char)*j->p++;

		if (!c)
			goto bad;
		if (c == '\\') {
			c = (unsigned char)*j->p++;
			if (c == 'u') {
				char hex[5] = {0};

				for (int k = 0; k < 4; k++)
					if (!isxdigit((unsigned char)(hex[k] = j->p[k])))
						goto bad;
				c = (unsigned)strtoul(hex, NULL, 16);
				if (!c || c > 0x7f)
					goto bad;	/* the writer escapes only controls */
				j->p += 4;
			} else if (c == 'n') {
				c = '\n';
			} else if (c != '"' && c != '\\' && c != '/') {
				goto bad;
			}
		}
		if (n + 2 > cap) {
			char *more = realloc(s, cap *= 2);

			if (!more)
				goto bad;
			s = more;
		}
		s[n++] = (char)c;
	}
	j->p++;
	s[n] = 0;
	return s;
bad:
	free(s);
	j->err = "bad string";
	return NULL;
}

static int parse_value(struct jp *j, struct jv *v);

/* An array's or object's members, up to the closing bracket. */
static int parse_members(struct jp *j, struct jv *v, char close)
{
	j->p++;
	skip_ws(j);
	if (*j->p == close) {
		j->p++;
		return 0;
	}
	for (;;) {
		struct jv *items = realloc(v->items, (v->n + 1) * sizeof(*items));

		if (!items)
			return -1;
		v->items = items;
		memset(&v->items[v->n], 0, sizeof(*items));
		if (v->type == J_OBJ) {
			char **keys = realloc(v->keys, (v->n + 1) * sizeof(*keys));

			if (!keys)
				return -1;
			v->keys = keys;
			skip_ws(j);
			if (!(v->keys[v->n] = parse_string(j)))
				return -1;
			v->n++;
			skip_ws(j);
			if (*j->p != ':')
				return j->err = "expected ':'", -1;
			j->p++;
		} else {
			v->n++;
		}
		if (parse_value(j, &v->items[v->n - 1]))
			return -1;
		skip_ws(j);
		if (*j->p == close) {
			j->p++;
			return 0;
		}
		if (*j->p++ != ',')
			return j->err = "expected ',' or a closing bracket", -1;
	}
}

static int parse_value(struct jp *j, struct jv *v)
{
	char *end;

	skip_ws(j);
	memset(v, 0, sizeof(*v));
	if (++j->depth > 8)
		return j->err = "nested too deeply", -1;
	switch (*j->p) {
	case '{':
		v->type = J_OBJ;
		return parse_members(j, v, '}') ? -1 : (j->depth--, 0);
	case '[':
		v->type = J_ARR;
		return parse_members(j, v, ']') ? -1 : (j->depth--, 0);
	case '"':
		v->type = J_STR;
		return (v->str = parse_string(j)) ? (j->depth--, 0) : -1;
	case 'n':
		if (strncmp(j->p, "null", 4))
			break;
		j->p += 4;
		j->depth--;
		return 0;
	default:
		if (*j->p < '0' || *j->p > '9')
			break;
		v->type = J_NUM;
		errno = 0;
		v->num = strtoull(j->p, &end, 10);
		if (errno)
			return j->err = "number out of range", -1;
		j->p = end;
		j->depth--;
		return 0;
	}
	return j->err = "unexpected character", -1;
}

static const struct jv *get(const struct jv *obj, const char *key, enum jtype type)
{
	for (size_t i = 0; obj && obj->type == J_OBJ && i < obj->n; i++)
		if (strcmp(obj->keys[i], key) == 0)
			return obj->items[i].type == type ? &obj->items[i] : NULL;
	return NULL;
}

static uint64_t num(const struct jv *obj, const char *key)
{
	const struct jv *v = get(obj, key, J_NUM);

	return v ? (uint64_t)v->num : 0;
}

static char *str(const struct jv *obj, const char *key)
{
	const struct jv *v = get(obj, key, J_STR);

	return strdup(v ? v->str : "?");
}

static int fill_inst(struct stats_inst *si, const struct jv *o)
{
	const struct jv *stacks = get(o, "stacks", J_ARR), *ctr = get(o, "counters", J_OBJ);
	const struct jv *q = get(o, "queue", J_OBJ);

	si->name = str(o, "name");
	si->plugin = str(o, "plugin");
	si->kind = str(o, "kind");
	si->stacks = calloc(stacks && stacks->n ? stacks->n : 1, sizeof(char *));
	si->counters = calloc(ctr && ctr->n ? ctr->n : 1, sizeof(*si->counters));
	if (!si->name || !si->plugin || !si->kind || !si->stacks || !si->counters)
		return -1;
	for (size_t k = 0; stacks && k < stacks->n; k++)
		if (stacks->items[k].type == J_STR &&
		    !(si->stacks[si->nstacks++] = strdup(stacks->items[k].str)))
			return -1;
	for (size_t k = 0; ctr && k < ctr->n; k++) {
		if (ctr->items[k].type != J_NUM)
			continue;
		if (!(si->counters[si->ncounters].name = strdup(ctr->keys[k])))
			return -1;
		si->counters[si->ncounters++].value = (uint64_t)ctr->items[k].num;
	}
	si->in = num(o, "in");
	si->out = num(o, "out");
	si->dropped = num(o, "dropped");
	si->errors = num(o, "errors");
	if (q) {
		si->queued = true;
		si->queue_depth = num(q, "depth");
		si->queue_capacity = num(q, "capacity");
		si->queue_high = num(q, "high_water");
		si->queue_bytes = num(q, "bytes");
		si->queue_dropped = num(q, "dropped");
	}
	return 0;
}

int stats_parse_json(struct stats_snap *s, const char *text, char *err, size_t errlen)
{
	struct jp j = {.p = text};
	struct jv root;
	const struct jv *arr;
	int rc = -1;

	memset(s, 0, sizeof(*s));
	if (parse_value(&j, &root)) {
		snprintf(err, errlen, "malformed JSON at byte %zu: %s", (size_t)(j.p - text),
			 j.err ? j.err : "out of memory");
		jv_free(&root);
		return -1;
	}
	if (!(arr = get(&root, "instances", J_ARR))) {
		snprintf(err, errlen, "no \"instances\" array");
		goto out;
	}
	s->version = str(&root, "version");
	s->start_time = (int64_t)num(&root, "start_time");
	s->now = (int64_t)num(&root, "now");
	s->reloads_ok = num(&root, "reloads_ok");
	s->reloads_failed = num(&root, "reloads_failed");
	if (!s->version || !(s->inst = calloc(arr->n ? arr->n : 1, sizeof(*s->inst))))
		goto oom;
	for (; s->n < arr->n; s->n++)
		if (fill_inst(&s->inst[s->n], &arr->items[s->n])) {
			s->n++;
			goto oom;
		}
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory");
out:
	if (rc)
		stats_free(s);
	jv_free(&root);
	return rc;
}
