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
 * An entry has two forms (struct sl_journal_entry's `native`):
 *  - journald's native protocol (https://systemd.io/JOURNAL_NATIVE_PROTOCOL/),
 *    one datagram: each field NAME=value\n, or, for a value with a
 *    newline, NAME\n, the value's length as 64 bits little-endian, the
 *    value, \n.  What the journal output sends; read back by
 *    sl_journal_native_fields().
 *  - the spool's: each field a 4-byte little-endian length and
 *    NAME=value, read back as iovecs by sl_journal_entry_iov() (what
 *    sd_journal_sendv() takes).
 * sl_journal_native_entry() and sl_journal_entry_native() turn one into
 * the other.  Reading either back checks every length and that each
 * field has a valid name, so a damaged spool record is refused, never
 * sent.
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

/* Entries being written; buf grows (and is reused). */
struct sl_journal_entry {
	char *buf;
	size_t len, cap;
	bool oom;		/* a field did not fit in memory */
	bool native;		/* journald's native form, else the spool's */
};

/*
 * Record r appended to e as one entry, in e's form (set len to 0 for
 * one entry alone): false when out of memory (e as it was before).
 */
bool sl_journal_encode(struct sl_journal_fmt *f, struct sl_journal_entry *e, const struct sl_record *r);
/* One field NAME=value (name holds the '=', nlen counts it), value as its bytes, in e's form. */
void sl_journal_entry_put(struct sl_journal_entry *e, const char *name, size_t nlen, const void *v,
			  size_t vlen);

/*
 * The entry rec (len bytes) as iovecs, at most max: how many, or 0 when
 * it is not an entry (a length past its end, more than max fields, a
 * field that is not NAME=... with a valid name, nothing at all).
 */
unsigned sl_journal_entry_iov(const void *rec, size_t len, struct iovec *iov, unsigned max);

/* A field of a native datagram: name with nlen bytes, its last '=' or '\n' (not part of the name). */
struct sl_journal_field {
	const char *name;
	size_t nlen;
	const void *value;
	size_t vlen;
};

/*
 * The native datagram (len bytes) as fields, at most max: how many, or 0
 * when it is not one (a field not ended by \n, a binary length past the
 * end, an invalid name, more than max fields, nothing at all).
 */
unsigned sl_journal_native_fields(const void *dgram, size_t len, struct sl_journal_field *out,
				  unsigned max);
/*
 * The native datagram as one entry in the spool's form, in e (emptied,
 * e->native cleared), fields[max] the room to read it: false when it is
 * not a datagram or out of memory.
 */
bool sl_journal_native_entry(const void *dgram, size_t len, struct sl_journal_field *fields,
			     unsigned max, struct sl_journal_entry *e);
/*
 * The spool record rec (len bytes) appended to e as a native datagram
 * (e->native set), iov[max] the room to read it: false when it is not an
 * entry or out of memory (e as it was).
 */
bool sl_journal_entry_native(const void *rec, size_t len, struct iovec *iov, unsigned max,
			     struct sl_journal_entry *e);

#endif /* SLUICE_JOURNAL_ENTRY_H */
