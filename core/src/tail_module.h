/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The interface between the core and its `sluice tail` formatter
 * (tail_fmt.so, plugins/service/tail_fmt.c).  The `where` language and the
 * json and logline formatters live in plugins/common, which the core does
 * not link (plugins link it statically, each its own copy): the module
 * links them and the core loads it, from the plugin search path, the first
 * time a tail session is asked for.
 *
 * A session's formatter is made on the main thread (open()), used by one
 * thread at a time (format(): the caller holds the session's lock, tap.c)
 * and closed on the main thread.  format() allocates nothing and makes no
 * syscall, except that a `~` term's regexec() allocates its match state.
 * It is the core's private interface (built with the core, from the same
 * tree), not part of the plugin ABI.
 */
#ifndef SLUICE_TAIL_MODULE_H
#define SLUICE_TAIL_MODULE_H

#include <stddef.h>
#include <stdint.h>

#include <sluice/record.h>

/* The file, looked up on the plugin search path; --list-plugins skips it. */
#define SL_TAIL_MODULE_NAME "tail_fmt"
/* Bumped on any change below; the core refuses another version. */
#define SL_TAIL_IFACE_VERSION 1
#define SL_TAIL_ENTRY "sluice_tail_entry"

/* The fields of the running graph: a name's id and type (-1: none), an id's name and type. */
struct sl_tail_fields {
	void *ctx;
	int (*lookup)(void *ctx, const char *name, enum sl_type *type);
	const char *(*name)(void *ctx, unsigned id, enum sl_type *type);
	unsigned count;			/* ids 0..count-1 */
};

struct sl_tail_fmt;

struct sl_tail_module {
	uint32_t version;		/* SL_TAIL_IFACE_VERSION */
	uint32_t size;			/* sizeof(struct sl_tail_module) */
	/*
	 * A formatter: records matching where (NULL or "": all) as one JSON
	 * object (json != 0; the json filter's flat schema, docs/JSON.md) or
	 * the kernel's LOG line (a record without a packet: its JSON).
	 * NULL with "column N: why" in err for a bad expression.
	 */
	struct sl_tail_fmt *(*open)(const char *where, int json, const struct sl_tail_fields *f,
				    char *err, size_t errlen);
	/*
	 * Record r's line at buf, without a newline and with no newline or
	 * control byte in it: its length; 0 when r does not match; -1 when it
	 * does not fit in cap bytes (cap 0: only whether it matches, no line).
	 */
	long (*format)(struct sl_tail_fmt *t, const struct sl_record *r, char *buf, size_t cap);
	void (*close)(struct sl_tail_fmt *t);
};

typedef const struct sl_tail_module *(*sl_tail_entry_fn)(void);

#endif
