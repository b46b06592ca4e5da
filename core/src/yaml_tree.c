/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "yaml_tree.h"

struct builder {
	yaml_parser_t parser;
	const char *name;
	char *err;
	size_t errlen;
};

static struct ynode *node_new(enum ynode_kind kind, const yaml_mark_t *m)
{
	struct ynode *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->kind = kind;
	n->mark.line = (unsigned)m->line + 1;
	n->mark.col = (unsigned)m->column + 1;
	return n;
}

static int node_append(struct ynode *parent, struct ynode *child)
{
	struct ynode **items = realloc(parent->items, (parent->n + 1) * sizeof(*items));

	if (!items)
		return -1;
	items[parent->n++] = child;
	parent->items = items;
	return 0;
}

static void fail_at(struct builder *b, const yaml_mark_t *m, const char *msg)
{
	snprintf(b->err, b->errlen, "%s:%zu:%zu: error: %s", b->name, m->line + 1, m->column + 1, msg);
}

static void parser_failed(struct builder *b)
{
	const yaml_mark_t *m = &b->parser.problem_mark;
	char msg[512];

	if (b->parser.context)
		snprintf(msg, sizeof(msg), "invalid YAML: %s %s", b->parser.problem,
			 b->parser.context);
	else
		snprintf(msg, sizeof(msg), "invalid YAML: %s",
			 b->parser.problem ? b->parser.problem : "parse error");
	fail_at(b, m, msg);
}

/* Build the node that starts with event ev (already read); recursive. */
static struct ynode *build(struct builder *b, yaml_event_t *ev, unsigned depth);

static struct ynode *build_collection(struct builder *b, struct ynode *coll, yaml_event_type_t end,
				      unsigned depth)
{
	yaml_event_t ev;

	for (;;) {
		struct ynode *child;

		if (!yaml_parser_parse(&b->parser, &ev)) {
			parser_failed(b);
			goto fail;
		}
		if (ev.type == end) {
			yaml_event_delete(&ev);
			break;
		}
		child = build(b, &ev, depth + 1);
		yaml_event_delete(&ev);
		if (!child || node_append(coll, child)) {
			ytree_free(child);
			goto fail;
		}
	}
	if (coll->kind == YN_MAP) {
		/* Keys must be scalars and unique: a duplicated key is a typo. */
		for (size_t i = 0; i < coll->n; i += 2) {
			struct ynode *k = coll->items[i];
			yaml_mark_t m = {0, k->mark.line - 1, k->mark.col - 1};

			if (k->kind != YN_SCALAR) {
				fail_at(b, &m, "a mapping key must be a plain name");
				goto fail;
			}
			for (size_t j = 0; j < i; j += 2) {
				if (strcmp(coll->items[j]->scalar, k->scalar) == 0) {
					char msg[300];

					snprintf(msg, sizeof(msg), "duplicate key '%s' (first at line %u)",
						 k->scalar, coll->items[j]->mark.line);
					fail_at(b, &m, msg);
					goto fail;
				}
			}
		}
	}
	return coll;
fail:
	ytree_free(coll);
	return NULL;
}

static struct ynode *build(struct builder *b, yaml_event_t *ev, unsigned depth)
{
	struct ynode *n;

	if (depth > 64) {
		fail_at(b, &ev->start_mark, "nesting too deep");
		return NULL;
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		n = node_new(YN_SCALAR, &ev->start_mark);
		if (!n)
			return NULL;
		n->scalar = strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		if (!n->scalar) {
			free(n);
			return NULL;
		}
		return n;
	case YAML_SEQUENCE_START_EVENT:
		n = node_new(YN_SEQ, &ev->start_mark);
		return n ? build_collection(b, n, YAML_SEQUENCE_END_EVENT, depth) : NULL;
	case YAML_MAPPING_START_EVENT:
		n = node_new(YN_MAP, &ev->start_mark);
		return n ? build_collection(b, n, YAML_MAPPING_END_EVENT, depth) : NULL;
	case YAML_ALIAS_EVENT:
		fail_at(b, &ev->start_mark,
			"YAML aliases (*name) are not supported; use a named instance instead");
		return NULL;
	default:
		fail_at(b, &ev->start_mark, "unexpected YAML event");
		return NULL;
	}
}

static struct ynode *load(struct builder *b)
{
	yaml_event_t ev;
	struct ynode *root = NULL;
	bool done = false;

	while (!done) {
		if (!yaml_parser_parse(&b->parser, &ev)) {
			parser_failed(b);
			ytree_free(root);
			return NULL;
		}
		switch (ev.type) {
		case YAML_STREAM_START_EVENT:
		case YAML_DOCUMENT_END_EVENT:
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (root) {
				fail_at(b, &ev.start_mark, "only one YAML document is allowed");
				yaml_event_delete(&ev);
				ytree_free(root);
				return NULL;
			}
			break;
		case YAML_STREAM_END_EVENT:
			if (!root) {
				yaml_mark_t m = ev.start_mark;
				root = node_new(YN_MAP, &m);
			}
			done = true;
			break;
		default:
			root = build(b, &ev, 0);
			if (!root) {
				yaml_event_delete(&ev);
				return NULL;
			}
			break;
		}
		yaml_event_delete(&ev);
	}
	return root;
}

struct ynode *ytree_load_file(const char *path, char *err, size_t errlen)
{
	struct builder b = {.name = path, .err = err, .errlen = errlen};
	struct ynode *root;
	FILE *f = fopen(path, "rb");

	if (!f) {
		snprintf(err, errlen, "%s: error: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	yaml_parser_initialize(&b.parser);
	yaml_parser_set_input_file(&b.parser, f);
	root = load(&b);
	yaml_parser_delete(&b.parser);
	fclose(f);
	return root;
}

struct ynode *ytree_load_string(const char *name, const char *text, char *err, size_t errlen)
{
	struct builder b = {.name = name, .err = err, .errlen = errlen};
	struct ynode *root;

	yaml_parser_initialize(&b.parser);
	yaml_parser_set_input_string(&b.parser, (const unsigned char *)text, strlen(text));
	root = load(&b);
	yaml_parser_delete(&b.parser);
	return root;
}

void ytree_free(struct ynode *node)
{
	if (!node)
		return;
	for (size_t i = 0; i < node->n; i++)
		ytree_free(node->items[i]);
	free(node->items);
	free(node->scalar);
	free(node);
}

struct ynode *ytree_map_key(const struct ynode *map, const char *key)
{
	if (!map || map->kind != YN_MAP)
		return NULL;
	for (size_t i = 0; i + 1 < map->n; i += 2)
		if (strcmp(map->items[i]->scalar, key) == 0)
			return map->items[i];
	return NULL;
}

struct ynode *ytree_map_get(const struct ynode *map, const char *key)
{
	if (!map || map->kind != YN_MAP)
		return NULL;
	for (size_t i = 0; i + 1 < map->n; i += 2)
		if (strcmp(map->items[i]->scalar, key) == 0)
			return map->items[i + 1];
	return NULL;
}

bool ytree_is_null(const struct ynode *node)
{
	return node->kind == YN_SCALAR && node->plain &&
	       (!node->scalar[0] || strcmp(node->scalar, "~") == 0 ||
		strcmp(node->scalar, "null") == 0);
}

const char *ytree_kind_name(enum ynode_kind kind)
{
	switch (kind) {
	case YN_SCALAR: return "a value";
	case YN_SEQ: return "a list";
	case YN_MAP: return "a mapping";
	}
	return "?";
}
