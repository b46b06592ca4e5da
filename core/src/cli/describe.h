/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the plugins say about themselves, printed from their descriptors:
 * sluice --describe NAME and --describe-all (text, man or markdown), the
 * source of the plugin section of sluice.yaml(5) and of the tables
 * docs/PLUGINS.md is checked against.
 */
#ifndef SLUICE_DESCRIBE_H
#define SLUICE_DESCRIBE_H

#include <stddef.h>

enum describe_format { DESCRIBE_TEXT, DESCRIBE_MAN, DESCRIBE_MARKDOWN };

/* "text", "man", "markdown" -> *fmt; -1 for anything else. */
int describe_parse_format(const char *s, enum describe_format *fmt);

/*
 * Describe one plugin (a name on the search path, or a path with a '/'),
 * searching `dirs` after $SLUICE_PLUGIN_PATH as plugin_loader_init() does.
 * 0, or an exit status (EX_CONFIG: not found).
 */
int describe_plugin(const char *name, const char *const *dirs, size_t ndirs);

/*
 * Every plugin found, inputs, filters, outputs, each by name.  A plugin
 * that fails to load is reported on stderr and makes the status
 * EX_UNAVAILABLE, so a build generating docs from it fails loudly.
 */
int describe_all(enum describe_format fmt, const char *const *dirs, size_t ndirs);

#endif
