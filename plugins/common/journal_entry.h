/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A record as one systemd journal entry, without I/O (the journal output
 * sends it): MESSAGE= the record's text (else its prefix, else empty),
 * PRIORITY=, SYSLOG_IDENTIFIER=, then every field the json filter writes
 * for it (json_fields.h), named as json's key in upper case, with json's
 * value (a JSON string without its quotes, a string from the packet or
 * the ruleset as its own bytes), then the fields plugins registered,
 * named the same way (sl_journal_name()).
 *
 * The entry is a byte string of fields, each a 4-byte little-endian
 * length and NAME=value: what the output sends as iovecs
 * (sl_journal_entry_iov()) and keeps as its spool record.  Reading one
 * back checks every length and that each field is NAME=... with a valid
 * name, so a damaged spool record is refused, never sent.
 */
#ifndef SLUICE_JOURNAL_ENTRY_H
#define SLUICE_JOURNAL_ENTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <sluice/record.h>

#include "fmt.h"
#include "json_fields.h"

#define SL_JOURNAL_NAME_MAX 64	/* journald's longest field name */
/* Most fields an entry has: its own three, json's rows, the registered ones. */
#define SL_JOURNAL_MAX_FIELDS (3 + SL_JSON_NFIELDS + SL_MAX_FIELDS)

/*
 * name (n bytes) as a journal field name followed by '=', in out: A-Z,
 * 0-9 and _ (lower case raised, anything else _), an X before a leading _
 * or digit (or for an empty name), at most SL_JOURNAL_NAME_MAX before
 * the '='.  Returns the length with the '='.
 */
size_t sl_journal_name(char out[SL_JOURNAL_NAME_MAX + 2], const char *name, size_t n);

/* A field plugins registered: its journal name with '=', and its type. */
struct sl_journal_extra {
	sl_field id;
	enum sl_type type;
	uint8_t namelen;
	char name[SL_JOURNAL_NAME_MAX + 2];
};

struct sl_journal_fmt {
	char names[SL_JSON_NFIELDS][SL_JOURNAL_NAME_MAX + 2];	/* "SRC_IP=" per json row */
	uint8_t namelen[SL_JSON_NFIELDS];
	struct sl_journal_extra *extra;
	unsigned nextra;
	struct sl_json_rows rows;
	struct sl_fmt_time_cache tc[SL_JSON_TIME_CACHES];
	char prio[16];		/* "PRIORITY=6" */
	char *ident;		/* "SYSLOG_IDENTIFIER=..." */
};

/* The names, PRIORITY=priority (0..7) and SYSLOG_IDENTIFIER=ident.  -1: out of memory. */
int sl_journal_fmt_init(struct sl_journal_fmt *f, int priority, const char *ident);
/*
 * A registered field: 1 added, 0 not (its journal name is taken: MESSAGE,
 * PRIORITY, SYSLOG_IDENTIFIER, a json row's or an earlier one's), -1 out
 * of memory.
 */
int sl_journal_fmt_add(struct sl_journal_fmt *f, sl_field id, enum sl_type type, const char *name);
void sl_journal_fmt_free(struct sl_journal_fmt *f);

/* An entry being written; buf grows (and is reused). */
struct sl_journal_entry {
	char *buf;
	size_t len, cap;
	bool oom;		/* a field did not fit in memory */
};

/* Record r as the entry e (emptied first): false when out of memory. */
bool sl_journal_encode(struct sl_journal_fmt *f, struct sl_journal_entry *e, const struct sl_record *r);
/* One field NAME=value (name holds the '='), value as its bytes. */
void sl_journal_entry_put(struct sl_journal_entry *e, const char *name, size_t nlen, const void *v,
			  size_t vlen);

/*
 * The entry rec (len bytes) as iovecs, at most max: how many, or 0 when
 * it is not an entry (a length past its end, more than max fields, a
 * field that is not NAME=... with a valid name, nothing at all).
 */
unsigned sl_journal_entry_iov(const void *rec, size_t len, struct iovec *iov, unsigned max);

#endif /* SLUICE_JOURNAL_ENTRY_H */
