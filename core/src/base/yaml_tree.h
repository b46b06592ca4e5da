/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A YAML document as a small tree of scalars, sequences and mappings, each
 * node remembering where it was written (line and column, 1-based), so
 * that every configuration error can name file:line:column.
 */
#ifndef SLUICE_YAML_TREE_H
#define SLUICE_YAML_TREE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Limits, each reported as an error rather than exhausting memory or the
 * stack.  A file: 16 MiB is hundreds of thousands of instances, far more
 * than any real configuration.  A value: 64 KiB holds any path (PATH_MAX
 * is 4 KiB) and a BPF expression listing a few thousand hosts, yet keeps
 * one scalar from being most of the file.  Nesting: a configuration needs
 * five levels; the tree is built recursively, so depth is capped well
 * before the C stack could overflow.
 */
#define YTREE_MAX_FILE (16u << 20)
#define YTREE_MAX_FILE_TEXT "16 MiB"
#define YTREE_MAX_SCALAR (64u << 10)
#define YTREE_MAX_SCALAR_TEXT "64 KiB"
#define YTREE_MAX_DEPTH 64

enum ynode_kind { YN_SCALAR, YN_SEQ, YN_MAP };

struct ymark {
	unsigned line;
	unsigned col;
};

/* File order: -1, 0 or 1 as a comes before, at or after b. */
static inline int ymark_cmp(const struct ymark *a, const struct ymark *b)
{
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return a->col < b->col ? -1 : a->col > b->col;
}

struct ynode {
	enum ynode_kind kind;
	struct ymark mark;
	char *scalar;		/* YN_SCALAR: the text */
	bool plain;		/* YN_SCALAR: written without quotes */
	/*
	 * YN_SEQ: items[0..n); YN_MAP: items[2i] is a key, items[2i+1] its value.
	 * Room for the next power of two of n items (see node_append).
	 */
	struct ynode **items;
	size_t n;
};

/*
 * Parse the file.  NULL on error, with "FILE:LINE:COL: message" in err.
 * An empty document gives an empty mapping.
 */
struct ynode *yaml_tree_load_file(const char *path, char *err, size_t errlen);
struct ynode *yaml_tree_load_string(const char *name, const char *text, char *err, size_t errlen);
void yaml_tree_free(struct ynode *node);

/* YN_MAP lookup by key; NULL if absent. */
struct ynode *yaml_tree_map_get(const struct ynode *map, const char *key);
/* The key node of a mapping entry (for its position). */
struct ynode *yaml_tree_map_key(const struct ynode *map, const char *key);
/* Whether a plain scalar means null ("", "~", "null"). */
bool yaml_tree_is_null(const struct ynode *node);
const char *yaml_tree_kind_name(enum ynode_kind kind);

#endif
