/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "infile.h"
#include "strset.h"
#include "yaml_tree.h"

struct builder {
	yaml_parser_t parser;
	const char *name;
	char *err;
	size_t errlen;
	/* reading a file: counted, so a pipe cannot feed more than the limit */
	FILE *file;
	uint64_t bytes;
	bool too_big;
	int read_errno;
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

/*
 * The items array holds the next power of two of n slots: it doubles
 * when n reaches one, so a list of n items costs O(n) copies, not O(n^2).
 */
static int node_append(struct ynode *parent, struct ynode *child)
{
	size_t n = parent->n;

	if ((n & (n - 1)) == 0) {
		struct ynode **items;

		if (n > SIZE_MAX / 2 / sizeof(*items))
			return -1;
		items = realloc(parent->items, (n ? n * 2 : 1) * sizeof(*items));
		if (!items)
			return -1;
		parent->items = items;
	}
	parent->items[parent->n++] = child;
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

	if (b->too_big) {
		snprintf(b->err, b->errlen,
			 "%s: error: file too large: expected at most %s (%u bytes), got more",
			 b->name, YTREE_MAX_FILE_TEXT, YTREE_MAX_FILE);
		return;
	}
	if (b->read_errno) {
		snprintf(b->err, b->errlen, "%s: error: cannot read: %s", b->name,
			 strerror(b->read_errno));
		return;
	}
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

/* Keys must be scalars and unique: a duplicated key is a typo.  0 or -1. */
static int check_keys(struct builder *b, const struct ynode *map)
{
	struct strset seen = {0};
	int rc = 0;

	for (size_t i = 0; i < map->n && !rc; i += 2) {
		struct ynode *k = map->items[i];
		yaml_mark_t m = {0, k->mark.line - 1, k->mark.col - 1};
		void *first = NULL;
		char msg[300];

		if (k->kind != YN_SCALAR) {
			fail_at(b, &m, "a mapping key must be a plain name");
			rc = -1;
			break;
		}
		switch (strset_add(&seen, k->scalar, k, &first)) {
		case 1:
			break;
		case 0:
			snprintf(msg, sizeof(msg), "duplicate key '%s' (first at line %u)", k->scalar,
				 ((const struct ynode *)first)->mark.line);
			fail_at(b, &m, msg);
			rc = -1;
			break;
		default:
			fail_at(b, &m, "out of memory");
			rc = -1;
			break;
		}
	}
	strset_free(&seen);
	return rc;
}

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
			yaml_tree_free(child);
			goto fail;
		}
	}
	if (coll->kind == YN_MAP && check_keys(b, coll))
		goto fail;
	return coll;
fail:
	yaml_tree_free(coll);
	return NULL;
}

static struct ynode *build(struct builder *b, yaml_event_t *ev, unsigned depth)
{
	struct ynode *n;

	char msg[200];

	if (depth > YTREE_MAX_DEPTH) {
		snprintf(msg, sizeof(msg),
			 "nesting too deep: expected at most %d levels of lists and mappings",
			 YTREE_MAX_DEPTH);
		fail_at(b, &ev->start_mark, msg);
		return NULL;
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		if (ev->data.scalar.length > YTREE_MAX_SCALAR) {
			snprintf(msg, sizeof(msg),
				 "value too long: expected at most %s (%u bytes), got %zu bytes",
				 YTREE_MAX_SCALAR_TEXT, YTREE_MAX_SCALAR, ev->data.scalar.length);
			fail_at(b, &ev->start_mark, msg);
			return NULL;
		}
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
			yaml_tree_free(root);
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
				yaml_tree_free(root);
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

/* libyaml's read handler: counts bytes, so no input exceeds the limit. */
static int read_counted(void *data, unsigned char *buf, size_t size, size_t *got)
{
	struct builder *b = data;

	*got = fread(buf, 1, size, b->file);
	if (!*got && ferror(b->file)) {
		b->read_errno = errno ? errno : EIO;
		return 0;
	}
	b->bytes += *got;
	if (b->bytes > YTREE_MAX_FILE) {
		b->too_big = true;
		return 0;
	}
	return 1;
}

static void report_too_big(struct builder *b, uint64_t size)
{
	snprintf(b->err, b->errlen,
		 "%s: error: file too large: expected at most %s (%u bytes), got %" PRIu64 " bytes",
		 b->name, YTREE_MAX_FILE_TEXT, YTREE_MAX_FILE, size);
}

struct ynode *yaml_tree_load_file(const char *path, char *err, size_t errlen)
{
	struct builder b = {.name = path, .err = err, .errlen = errlen};
	struct ynode *root;
	struct stat st;
	char why[128];
	FILE *f = infile_fopen(path, why, sizeof(why));

	if (!f) {
		snprintf(err, errlen, "%s: error: cannot open: %s", path, why);
		return NULL;
	}
	/* A regular file is refused before it is read; a pipe, once it passes the limit. */
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > YTREE_MAX_FILE) {
		report_too_big(&b, (uint64_t)st.st_size);
		fclose(f);
		return NULL;
	}
	b.file = f;
	yaml_parser_initialize(&b.parser);
	yaml_parser_set_input(&b.parser, read_counted, &b);
	root = load(&b);
	yaml_parser_delete(&b.parser);
	fclose(f);
	return root;
}

struct ynode *yaml_tree_load_string(const char *name, const char *text, char *err, size_t errlen)
{
	struct builder b = {.name = name, .err = err, .errlen = errlen};
	struct ynode *root;
	size_t len = strlen(text);

	if (len > YTREE_MAX_FILE) {
		report_too_big(&b, len);
		return NULL;
	}
	yaml_parser_initialize(&b.parser);
	yaml_parser_set_input_string(&b.parser, (const unsigned char *)text, len);
	root = load(&b);
	yaml_parser_delete(&b.parser);
	return root;
}

void yaml_tree_free(struct ynode *node)
{
	if (!node)
		return;
	for (size_t i = 0; i < node->n; i++)
		yaml_tree_free(node->items[i]);
	free(node->items);
	free(node->scalar);
	free(node);
}

struct ynode *yaml_tree_map_key(const struct ynode *map, const char *key)
{
	if (!map || map->kind != YN_MAP)
		return NULL;
	for (size_t i = 0; i + 1 < map->n; i += 2)
		if (strcmp(map->items[i]->scalar, key) == 0)
			return map->items[i];
	return NULL;
}

struct ynode *yaml_tree_map_get(const struct ynode *map, const char *key)
{
	if (!map || map->kind != YN_MAP)
		return NULL;
	for (size_t i = 0; i + 1 < map->n; i += 2)
		if (strcmp(map->items[i]->scalar, key) == 0)
			return map->items[i + 1];
	return NULL;
}

bool yaml_tree_is_null(const struct ynode *node)
{
	return node->kind == YN_SCALAR && node->plain &&
	       (!node->scalar[0] || strcmp(node->scalar, "~") == 0 ||
		strcmp(node->scalar, "null") == 0);
}

const char *yaml_tree_kind_name(enum ynode_kind kind)
{
	static const char *const names[] = {
		[YN_SCALAR] = "a value", [YN_SEQ] = "a list", [YN_MAP] = "a mapping",
	};

	return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}
