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

enum ynode_kind { YN_SCALAR, YN_SEQ, YN_MAP };

struct ymark {
	unsigned line;
	unsigned col;
};

struct ynode {
	enum ynode_kind kind;
	struct ymark mark;
	char *scalar;		/* YN_SCALAR: the text */
	bool plain;		/* YN_SCALAR: written without quotes */
	/* YN_SEQ: items[0..n); YN_MAP: items[2i] is a key, items[2i+1] its value */
	struct ynode **items;
	size_t n;
};

/*
 * Parse the file.  NULL on error, with "FILE:LINE:COL: message" in err.
 * An empty document gives an empty mapping.
 */
struct ynode *ytree_load_file(const char *path, char *err, size_t errlen);
struct ynode *ytree_load_string(const char *name, const char *text, char *err, size_t errlen);
void ytree_free(struct ynode *node);

/* YN_MAP lookup by key; NULL if absent. */
struct ynode *ytree_map_get(const struct ynode *map, const char *key);
/* The key node of a mapping entry (for its position). */
struct ynode *ytree_map_key(const struct ynode *map, const char *key);
/* Whether a plain scalar means null ("", "~", "null"). */
bool ytree_is_null(const struct ynode *node);
const char *ytree_kind_name(enum ynode_kind kind);

#endif
