/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A record's key: the values of a list of fields (a filter's `key`
 * option), packed into a fixed number of bytes that a keytable compares
 * with memcmp, without allocation.  Each field has a slot, 8-byte aligned
 * (a key is written in whole words and hashed as words just after, so
 * every load of the hash is forwarded from one store): a header word (tag
 * 1, so an absent field, all zero, differs from a zero one; strings: and
 * their length) and the value:
 *
 *   u64 8 bytes, MAC 8, address 16, time 16 (seconds, nanoseconds),
 *   string and bytes 24: up to 24 bytes verbatim; a longer value keeps its
 *   first 16 bytes and a seeded 64-bit hash of all of it (length 0xff), so
 *   two long values that differ collide only by chance (about 2^-64).
 *
 * The key is printed back as text ("src_addr=10.0.0.1 dport=22") from its
 * bytes alone, so a summary can be written when the records are gone.
 */
#ifndef SLUICE_RECKEY_H
#define SLUICE_RECKEY_H

#include <stdbool.h>
#include <stdint.h>

#include <sluice/record.h>

#include "fmt.h"

#define SL_RECKEY_MAX_FIELDS 8
#define SL_RECKEY_MAX_BYTES 96
#define SL_RECKEY_STR_INLINE 24
#define SL_RECKEY_STR_HEAD 16

struct sl_reckey_field {
	sl_field id;
	uint8_t type;		/* enum sl_type */
	uint16_t off, len;	/* slot in the key, header word included */
	char name[32];
};

struct sl_reckey {
	unsigned n;
	uint32_t len;		/* bytes of a key: every slot */
	uint64_t seed;
	struct sl_reckey_field f[SL_RECKEY_MAX_FIELDS];
};

void sl_reckey_init(struct sl_reckey *k, uint64_t seed);

/*
 * Add a field of the given type.  0, or -1 when the key would pass
 * SL_RECKEY_MAX_FIELDS fields or SL_RECKEY_MAX_BYTES bytes (or the type is
 * unknown).
 */
int sl_reckey_add(struct sl_reckey *k, sl_field id, enum sl_type type, const char *name);

/* Write the k->len bytes of r's key. */
void sl_reckey_build(const struct sl_reckey *k, const struct sl_record *r, uint8_t *out);

/* Print a key built by sl_reckey_build(): name=value, separated by spaces. */
void sl_reckey_format(const struct sl_reckey *k, const uint8_t *key, struct sl_fmt_buf *b);

/* The seeded 64-bit hash of long strings (also used by dedup for its text). */
uint64_t sl_reckey_hash_bytes(uint64_t seed, const uint8_t *p, size_t n);

#endif /* SLUICE_RECKEY_H */
