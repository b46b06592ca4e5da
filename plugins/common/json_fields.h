/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fields of the json filter's flat schema (docs/JSON.md), for the
 * json filter and for the journal output, which names its fields after
 * the same keys (upper-case) and writes the same values: the table of
 * rows (field, kind, key) in output order, which rows a record prints
 * (an interface index only without its name, ip_flags only when a flag
 * is set, frag_offset only when not 0), and each row's value as JSON
 * text.  The value writers are inline: they are the json filter's inner
 * loop, and json.c adds the key copies around them.
 */
#ifndef SLUICE_JSON_FIELDS_H
#define SLUICE_JSON_FIELDS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <sluice/record.h>

#include "fmt.h"

enum sl_jkind {
	J_U64,		/* number */
	J_STR,		/* escaped string */
	J_ADDR,		/* "192.0.2.1" / "2001:db8::1" */
	J_MAC,		/* "aa:bb:cc:dd:ee:ff" */
	J_TIME,		/* RFC 3339 */
	J_HEX,		/* bytes as a lowercase hex string */
	J_HOOK,		/* name of the hook, by family */
	J_FAMILY,	/* "ipv4", "ipv6", ... */
	J_PROTO,	/* "tcp", "udp", ... or the number as a string */
	J_TCPFLAGS,	/* "SYN ACK" */
	J_IPFLAGS,	/* "DF MF" */
	J_FRAGOFF,	/* fragment offset in bytes, when not 0 */
	J_IFINDEX,	/* index, only when the matching name is absent */
	J_DECODE,	/* ["truncated", ...] */
	J_CTSTATE,
	J_CTEVENT,
	J_TCPSTATE,
	J_ENDREASON,
};

struct sl_jfield {
	sl_field id;
	uint8_t kind;
	uint8_t aux;		/* J_TIME: time cache index; J_IFINDEX: name field */
	const char *key;	/* ",\"key\":" ready to copy: the name is key + 2, keylen - 4 bytes */
	uint8_t keylen;
};

/* The rows of the table, in output order; sl_jfields[] has this many. */
#define SL_JSON_NFIELDS 79
/* Time caches a writer keeps: the rows' aux of J_TIME is an index below this. */
#define SL_JSON_TIME_CACHES 3
/* Table fields are well-known, so their presence bits are in present[0..1]. */
#define SL_JSON_ID_LIMIT 128
/* Room sl_json_value() needs at its cursor: decode_flags with every bit (72) and a name's scratch copy (23). */
#define SL_JSON_VALUE_MAX 96

extern const struct sl_jfield sl_jfields[SL_JSON_NFIELDS];

/*
 * Which rows a record prints, as a 128-bit set (row i is bit i % 64 of
 * word i / 64): per field id the rows that print it (set) and the rows
 * its presence leaves out (clear: an interface index when its name is
 * there).  Walking a record's presence bits costs the ~20 fields it has,
 * not the 79 rows; the rows of the last presence bits are kept, since the
 * records of a stream mostly have the same fields.
 */
struct sl_json_rows {
	struct {
		uint64_t set[2], clear[2];
	} by_id[SL_JSON_ID_LIMIT];
	uint64_t ipflags_row[2], fragoff_row[2];
	uint64_t last_present[2], last_rows[2];
};

void sl_json_rows_init(struct sl_json_rows *jr);
/* The rows record r prints, in rows[0..1]. */
void sl_json_rows_of(struct sl_json_rows *jr, const struct sl_record *r, uint64_t rows[2]);

/* ---- the values ---- */

/* Bytes as a JSON string of lowercase hex. */
void sl_json_hex_str(struct sl_fmt_buf *b, const struct sl_bytes *v);
/*
 * The value of a field some plugin registered, by its type, as JSON text
 * (a number, or a string: escaped text, hex bytes, an address, a MAC, an
 * RFC 3339 time from tc).
 */
void sl_json_typed_value(struct sl_fmt_buf *b, enum sl_type type, const union sl_value *v,
			 struct sl_fmt_time_cache *tc, bool v6);

/*
 * Names in padded slots, written with one fixed-size copy: the bytes
 * after the name are scratch that the next piece overwrites.
 */
struct sl_jname {
	char s[23];
	uint8_t len;
};
#define SL_JN(str) { str, sizeof(str) - 1 }

/* Protocol and family names from common/names.c, filled when the object is loaded. */
extern struct sl_jname sl_json_proto_slots[256], sl_json_family_slots[16];

/* One static slot per case: NAMES(X) lists X(value, "name"). */
#define SL_JNAME_CASE(v, str)                           \
	case v: {                                       \
		static const struct sl_jname n_ = SL_JN(str); \
		return &n_;                             \
	}

enum { SL_JSON_NFPROTO_ARP = 3, SL_JSON_NFPROTO_NETDEV = 5 };

static inline const struct sl_jname *sl_json_hook_name(uint64_t h, const struct sl_record *r)
{
	static const struct sl_jname ip[] = {SL_JN("PREROUTING"), SL_JN("INPUT"), SL_JN("FORWARD"),
					     SL_JN("OUTPUT"), SL_JN("POSTROUTING")};
	static const struct sl_jname arp[] = {SL_JN("INPUT"), SL_JN("OUTPUT"), SL_JN("FORWARD")};
	static const struct sl_jname netdev[] = {SL_JN("ingress"), SL_JN("egress")};
	uint64_t fam = sl_has(r, SL_F_FAMILY) ? r->v[SL_F_FAMILY].u64 : 0;

	if (fam == SL_JSON_NFPROTO_ARP)
		return h < 3 ? &arp[h] : NULL;
	if (fam == SL_JSON_NFPROTO_NETDEV)
		return h < 2 ? &netdev[h] : NULL;
	/* ipv4, ipv6, inet, bridge (NF_BR_* use the same numbers), unknown */
	return h < 5 ? &ip[h] : NULL;
}

#define SL_JSON_CT_STATE_NAMES(X)                                                             \
	X(0, "established") X(1, "related") X(2, "new") X(3, "established_reply")               \
	X(4, "related_reply") X(7, "untracked")

static inline const struct sl_jname *sl_json_ct_state_name(uint64_t s)
{
	switch (s) {
	SL_JSON_CT_STATE_NAMES(SL_JNAME_CASE)
	default: return NULL;
	}
}

static inline const struct sl_jname *sl_json_tcp_state_name(uint64_t s)
{
	static const struct sl_jname n[] = {SL_JN("none"), SL_JN("syn_sent"), SL_JN("syn_recv"),
					    SL_JN("established"), SL_JN("fin_wait"), SL_JN("close_wait"),
					    SL_JN("last_ack"), SL_JN("time_wait"), SL_JN("close"),
					    SL_JN("syn_sent2")};

	return s < 10 ? &n[s] : NULL;
}

#define SL_JSON_END_REASON_NAMES(X)                                                           \
	X(SL_FLOW_END_IDLE, "idle") X(SL_FLOW_END_ACTIVE, "active") X(SL_FLOW_END_EOF, "eof")   \
	X(SL_FLOW_END_EVICTED, "evicted") X(SL_FLOW_END_DESTROY, "destroy")

static inline const struct sl_jname *sl_json_end_reason_name(uint64_t s)
{
	switch (s) {
	SL_JSON_END_REASON_NAMES(SL_JNAME_CASE)
	default: return NULL;
	}
}

static inline char *sl_json_put_jname(char *q, const struct sl_jname *n)
{
	memcpy(q, n->s, sizeof(n->s));
	return q + n->len;
}

/* A name, or the number as a string when there is none. */
static inline char *sl_json_put_name(char *q, const struct sl_jname *n, uint64_t v)
{
	*q++ = '"';
	q = n ? sl_json_put_jname(q, n) : sl_fmt_u64_inline(q, v);
	*q++ = '"';
	return q;
}

/* Space-separated names of the set bits, in the order given. */
static inline char *sl_json_put_bits(char *q, uint64_t v, const uint64_t *bits,
				     const struct sl_jname *names, unsigned n)
{
	char *start;
	unsigned i;

	*q++ = '"';
	start = q;
	for (i = 0; i < n; i++) {
		if (!(v & bits[i]))
			continue;
		*q = ' ';
		q += q != start;
		q = sl_json_put_jname(q, &names[i]);
	}
	*q++ = '"';
	return q;
}

static inline char *sl_json_put_tcp_flags(char *q, uint64_t v)
{
	/* the kernel LOG target's order; AE is reserved bit 0 (<< 8) */
	static const uint64_t bits[] = {0x100, 0x80, 0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01};
	static const struct sl_jname names[] = {SL_JN("AE"), SL_JN("CWR"), SL_JN("ECE"), SL_JN("URG"),
						SL_JN("ACK"), SL_JN("PSH"), SL_JN("RST"), SL_JN("SYN"),
						SL_JN("FIN")};

	return sl_json_put_bits(q, v, bits, names, 9);
}

static inline char *sl_json_put_decode_flags(char *q, uint64_t v)
{
	static const uint64_t bits[] = {SL_DECODE_TRUNCATED, SL_DECODE_BAD_IP_CSUM,
					SL_DECODE_BAD_L4_CSUM, SL_DECODE_FRAGMENT, SL_DECODE_MALFORMED};
	static const struct sl_jname names[] = {SL_JN("\"truncated\""), SL_JN("\"bad_ip_checksum\""),
						SL_JN("\"bad_l4_checksum\""), SL_JN("\"fragment\""),
						SL_JN("\"malformed\"")};
	char *start;
	unsigned i;

	*q++ = '[';
	start = q;
	for (i = 0; i < 5; i++) {
		if (!(v & bits[i]))
			continue;
		*q = ',';
		q += q != start;
		q = sl_json_put_jname(q, &names[i]);
	}
	*q++ = ']';
	return q;
}

static inline const struct sl_jname *sl_json_proto_name(uint64_t p)
{
	return p < 256 && sl_json_proto_slots[p].len ? &sl_json_proto_slots[p] : NULL;
}

static inline const struct sl_jname *sl_json_family_name(uint64_t f)
{
	return f < 16 && sl_json_family_slots[f].len ? &sl_json_family_slots[f] : NULL;
}

/*
 * The value of row f (any kind but J_STR and J_HEX) of record r as JSON
 * text at q, which has SL_JSON_VALUE_MAX bytes: no bound checks per piece.
 * tc: the writer's SL_JSON_TIME_CACHES caches; v6: sl_fmt_rec_v6(r).
 * Returns the end.
 */
static inline __attribute__((always_inline)) char *
sl_json_value(char *q, const struct sl_jfield *f, const struct sl_record *r,
	      struct sl_fmt_time_cache *tc, bool v6)
{
	const union sl_value *v = &r->v[f->id];

	switch (f->kind) {
	case J_U64:
	case J_IFINDEX:
		return sl_fmt_u64_inline(q, v->u64);
	case J_ADDR:
		*q++ = '"';
		q = sl_fmt_addr_in_raw(q, v->addr, v6);
		*q++ = '"';
		return q;
	case J_MAC:
		*q++ = '"';
		q = sl_fmt_mac_raw(q, v->addr);
		*q++ = '"';
		return q;
	case J_TIME:
		*q++ = '"';
		q = sl_fmt_rfc3339_raw(q, &tc[f->aux], v->time);
		*q++ = '"';
		return q;
	case J_HOOK:
		return sl_json_put_name(q, sl_json_hook_name(v->u64, r), v->u64);
	case J_FAMILY:
		return sl_json_put_name(q, sl_json_family_name(v->u64), v->u64);
	case J_PROTO:
		return sl_json_put_name(q, sl_json_proto_name(v->u64), v->u64);
	case J_TCPFLAGS:
		return sl_json_put_tcp_flags(q, v->u64);
	case J_IPFLAGS: {
		static const uint64_t bits[] = {SL_FRAG_CE, SL_FRAG_DF, SL_FRAG_MF};
		static const struct sl_jname names[] = {SL_JN("CE"), SL_JN("DF"), SL_JN("MF")};

		return sl_json_put_bits(q, v->u64, bits, names, 3);
	}
	case J_FRAGOFF:
		return sl_fmt_u64_inline(q, v->u64 & 0xffff);
	case J_DECODE:
		return sl_json_put_decode_flags(q, v->u64);
	case J_CTSTATE:
		return sl_json_put_name(q, sl_json_ct_state_name(v->u64), v->u64);
	case J_CTEVENT: {
		static const uint64_t bits[] = {SL_CT_EVENT_NEW, SL_CT_EVENT_UPDATE, SL_CT_EVENT_DESTROY};
		static const struct sl_jname names[] = {SL_JN("NEW"), SL_JN("UPDATE"), SL_JN("DESTROY")};

		return sl_json_put_bits(q, v->u64, bits, names, 3);
	}
	case J_TCPSTATE:
		return sl_json_put_name(q, sl_json_tcp_state_name(v->u64), v->u64);
	case J_ENDREASON:
		return sl_json_put_name(q, sl_json_end_reason_name(v->u64), v->u64);
	}
	return q;
}

#endif /* SLUICE_JSON_FIELDS_H */
