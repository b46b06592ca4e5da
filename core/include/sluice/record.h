/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sluice record model: typed fields with presence bits, records in batches.
 *
 * A record is a fixed array of field values plus a presence bitmap.  Every
 * field has a small integer id: the well-known fields below have fixed ids
 * (an enum), fields that plugins register by name get ids after them when
 * the configuration is loaded.  Plugins never look a field up by name per
 * record; they resolve names to ids once, in configure().
 *
 * Records live in batches.  A batch owns its records and a byte arena; both
 * come from a pool and are reused, so the hot path never calls malloc.  A
 * record may point into memory owned by the input (its receive buffer) or
 * into the batch arena: such pointers are valid only while the batch is
 * being processed (see docs/ARCHITECTURE.md, "Record memory").
 */
#ifndef SLUICE_RECORD_H
#define SLUICE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Value types of fields. */
enum sl_type {
	SL_T_U64 = 1,	/* unsigned integer (all widths) */
	SL_T_BYTES,	/* binary bytes: pointer + length */
	SL_T_STRING,	/* text: pointer + length, not NUL-terminated, any byte */
	SL_T_ADDR,	/* IP address, 16 bytes; IPv4 as IPv4-mapped ::ffff:a.b.c.d */
	SL_T_MAC,	/* 6-byte hardware address in addr[0..5] */
	SL_T_TIME,	/* wall-clock time: seconds + nanoseconds since the epoch */
};

struct sl_bytes {
	const uint8_t *ptr;
	uint32_t len;
};

struct sl_time {
	int64_t sec;
	uint32_t nsec;
};

/* One field value: 16 bytes, which member is valid depends on the type. */
union sl_value {
	uint64_t u64;
	struct sl_bytes bytes;
	uint8_t addr[16];
	struct sl_time time;
};

/*
 * The well-known fields, defined by the core: X(ID, "name", type, "doc").
 * New fields are only ever appended (ABI minor bump), so ids stay stable.
 */
#define SL_WELL_KNOWN_FIELDS(X)                                                         \
	/* raw event, as the input delivers it */                                      \
	X(PACKET, "packet", SL_T_BYTES, "the packet from its network header on")       \
	X(HWHDR, "hwhdr", SL_T_BYTES, "link-layer header, as captured")                \
	X(HWTYPE, "hwtype", SL_T_U64, "ARPHRD_* type of the link layer")               \
	X(HWADDR, "hwaddr", SL_T_BYTES, "source hardware address (NFULA_HWADDR)")       \
	X(HW_PROTOCOL, "hw_protocol", SL_T_U64, "ethertype of the packet")             \
	X(PREFIX, "prefix", SL_T_STRING, "log prefix of the rule")                     \
	X(HOOK, "hook", SL_T_U64, "netfilter hook number")                             \
	X(FAMILY, "family", SL_T_U64, "netfilter family (NFPROTO_*)")                  \
	X(MARK, "mark", SL_T_U64, "packet mark")                                       \
	X(IFINDEX_IN, "ifindex_in", SL_T_U64, "input interface index")                 \
	X(IFINDEX_OUT, "ifindex_out", SL_T_U64, "output interface index")              \
	X(PHYSINDEX_IN, "physindex_in", SL_T_U64, "physical input interface index")    \
	X(PHYSINDEX_OUT, "physindex_out", SL_T_U64, "physical output interface index") \
	X(UID, "uid", SL_T_U64, "uid of the local socket")                             \
	X(GID, "gid", SL_T_U64, "gid of the local socket")                             \
	X(TIMESTAMP, "timestamp", SL_T_TIME, "when the event happened")                \
	X(SEQ_LOCAL, "seq_local", SL_T_U64, "per-group sequence number")               \
	X(SEQ_GLOBAL, "seq_global", SL_T_U64, "global sequence number")                \
	X(CT_ID, "ct_id", SL_T_U64, "conntrack id")                                    \
	X(CT_STATE, "ct_state", SL_T_U64, "conntrack state (IP_CT_*)")                 \
	X(CAPLEN, "caplen", SL_T_U64, "bytes captured, when less than the original")   \
	X(ORIG_LEN, "orig_len", SL_T_U64, "original length of the packet")             \
	/* names of interfaces */                                                       \
	X(IFNAME_IN, "ifname_in", SL_T_STRING, "input interface name")                 \
	X(IFNAME_OUT, "ifname_out", SL_T_STRING, "output interface name")              \
	X(PHYSNAME_IN, "physname_in", SL_T_STRING, "physical input interface name")    \
	X(PHYSNAME_OUT, "physname_out", SL_T_STRING, "physical output interface name") \
	/* link layer, decoded */                                                       \
	X(MAC_SRC, "mac_src", SL_T_MAC, "source MAC")                                  \
	X(MAC_DST, "mac_dst", SL_T_MAC, "destination MAC")                             \
	X(ETH_TYPE, "eth_type", SL_T_U64, "ethertype after VLAN tags")                 \
	X(VLAN_ID, "vlan_id", SL_T_U64, "outer VLAN id")                               \
	/* network layer, decoded */                                                    \
	X(IP_VERSION, "ip_version", SL_T_U64, "4 or 6")                                \
	X(SRC_ADDR, "src_addr", SL_T_ADDR, "source address")                           \
	X(DST_ADDR, "dst_addr", SL_T_ADDR, "destination address")                      \
	X(IP_LEN, "ip_len", SL_T_U64, "IP total length (IPv6: payload + 40)")          \
	X(IP_HDRLEN, "ip_hdrlen", SL_T_U64, "bytes of IP headers before layer 4")      \
	X(IP_TOS, "ip_tos", SL_T_U64, "IPv4 TOS / IPv6 traffic class")                 \
	X(IP_TTL, "ip_ttl", SL_T_U64, "TTL / hop limit")                               \
	X(IP_ID, "ip_id", SL_T_U64, "IPv4 id / IPv6 fragment id")                      \
	X(IP_FRAG, "ip_frag", SL_T_U64, "fragment bits: SL_FRAG_* | offset in bytes")  \
	X(IP6_FLOWLABEL, "ip6_flowlabel", SL_T_U64, "IPv6 flow label")                 \
	X(IP_PROTO, "ip_proto", SL_T_U64, "layer-4 protocol number")                   \
	X(IP_OPTIONS, "ip_options", SL_T_BYTES, "IPv4 options / IPv6 ext. headers")    \
	/* transport layer, decoded */                                                  \
	X(SPORT, "sport", SL_T_U64, "source port")                                     \
	X(DPORT, "dport", SL_T_U64, "destination port")                                \
	X(TCP_SEQ, "tcp_seq", SL_T_U64, "TCP sequence number")                         \
	X(TCP_ACK, "tcp_ack", SL_T_U64, "TCP acknowledgement number")                  \
	X(TCP_WINDOW, "tcp_window", SL_T_U64, "TCP window")                            \
	X(TCP_FLAGS, "tcp_flags", SL_T_U64, "TCP flags, low 8 bits; reserved bits << 8") \
	X(TCP_URGP, "tcp_urgp", SL_T_U64, "TCP urgent pointer")                        \
	X(TCP_OPTIONS, "tcp_options", SL_T_BYTES, "TCP options")                       \
	X(UDP_LEN, "udp_len", SL_T_U64, "UDP length")                                  \
	X(ICMP_TYPE, "icmp_type", SL_T_U64, "ICMP / ICMPv6 type")                      \
	X(ICMP_CODE, "icmp_code", SL_T_U64, "ICMP / ICMPv6 code")                      \
	X(ICMP_ID, "icmp_id", SL_T_U64, "echo id")                                     \
	X(ICMP_SEQ, "icmp_seq", SL_T_U64, "echo sequence")                             \
	X(ICMP_MTU, "icmp_mtu", SL_T_U64, "next-hop MTU")                              \
	X(ICMP_GATEWAY, "icmp_gateway", SL_T_ADDR, "redirect gateway")                 \
	X(ICMP_PARAM, "icmp_param", SL_T_U64, "parameter problem pointer")             \
	X(IPSEC_SPI, "ipsec_spi", SL_T_U64, "ESP / AH SPI")                            \
	X(ARP_OP, "arp_op", SL_T_U64, "ARP operation")                                 \
	X(ARP_SHA, "arp_sha", SL_T_MAC, "ARP sender hardware address")                 \
	X(ARP_SPA, "arp_spa", SL_T_ADDR, "ARP sender protocol address")                \
	X(ARP_THA, "arp_tha", SL_T_MAC, "ARP target hardware address")                 \
	X(ARP_TPA, "arp_tpa", SL_T_ADDR, "ARP target protocol address")                \
	X(PAYLOAD, "payload", SL_T_BYTES, "layer-4 payload")                           \
	X(DECODE_FLAGS, "decode_flags", SL_T_U64, "SL_DECODE_* bits")                  \
	/* text produced by a converter */                                              \
	X(TEXT, "text", SL_T_STRING, "the record as one line of text (no newline)")    \
	/* connections and flows (conntrack events, flow aggregation) */               \
	X(CT_EVENT, "ct_event", SL_T_U64, "SL_CT_EVENT_* bits")                        \
	X(CT_STATUS, "ct_status", SL_T_U64, "conntrack status bits (IPS_*)")           \
	X(CT_ZONE, "ct_zone", SL_T_U64, "conntrack zone")                              \
	X(TCP_STATE, "tcp_state", SL_T_U64, "conntrack TCP state")                     \
	X(ORIG_SRC, "orig_src", SL_T_ADDR, "original direction source address")       \
	X(ORIG_DST, "orig_dst", SL_T_ADDR, "original direction destination address")  \
	X(ORIG_SPORT, "orig_sport", SL_T_U64, "original source port / ICMP id")        \
	X(ORIG_DPORT, "orig_dport", SL_T_U64, "original destination port / type<<8|code") \
	X(REPLY_SRC, "reply_src", SL_T_ADDR, "reply direction source address")        \
	X(REPLY_DST, "reply_dst", SL_T_ADDR, "reply direction destination address")   \
	X(REPLY_SPORT, "reply_sport", SL_T_U64, "reply source port")                   \
	X(REPLY_DPORT, "reply_dport", SL_T_U64, "reply destination port")              \
	X(ORIG_PACKETS, "orig_packets", SL_T_U64, "packets, original direction")       \
	X(ORIG_BYTES, "orig_bytes", SL_T_U64, "bytes, original direction")             \
	X(REPLY_PACKETS, "reply_packets", SL_T_U64, "packets, reply direction")        \
	X(REPLY_BYTES, "reply_bytes", SL_T_U64, "bytes, reply direction")              \
	X(FLOW_START, "flow_start", SL_T_TIME, "first packet of the flow")             \
	X(FLOW_END, "flow_end", SL_T_TIME, "last packet of the flow")                  \
	X(FLOW_TCP_FLAGS, "flow_tcp_flags", SL_T_U64, "OR of TCP flags seen")          \
	X(FLOW_END_REASON, "flow_end_reason", SL_T_U64, "SL_FLOW_END_*")                \
	/* added after the first plugins: appended, ids above stay put */                \
	X(NFLOG_GROUP, "nflog_group", SL_T_U64, "NFLOG group the event came from")          \
	/* ABI 1.2 */                                                                   \
	X(TEXT_SAFE, "text_safe", SL_T_BYTES, "the text its converter vouches for (sl_set_text_safe)")

/* Ids of the well-known fields: SL_F_PACKET, SL_F_PREFIX, ... */
enum sl_well_known_field {
#define SL_X_ENUM(id, name, type, doc) SL_F_##id,
	SL_WELL_KNOWN_FIELDS(SL_X_ENUM)
#undef SL_X_ENUM
	SL_F_WELL_KNOWN_COUNT
};

/* Their types, SL_F_PREFIX_TYPE ..., and names, for SL_FIELD_DECL(). */
enum sl_well_known_field_type {
#define SL_X_TYPE(id, name, type, doc) SL_F_##id##_TYPE = type,
	SL_WELL_KNOWN_FIELDS(SL_X_TYPE)
#undef SL_X_TYPE
};
static const char sl_well_known_names[][32] = {
#define SL_X_NAME(id, name, type, doc) name,
	SL_WELL_KNOWN_FIELDS(SL_X_NAME)
#undef SL_X_NAME
};

typedef uint16_t sl_field;

/* Most fields a configuration may use: well-known plus registered. */
#define SL_MAX_FIELDS 256
#define SL_PRESENCE_WORDS (SL_MAX_FIELDS / 64)

/*
 * (since ABI 1.3) Ids a record refuses.  field_id() answers -1 for a name
 * nobody registered: as an sl_field that is SL_FIELD_INVALID.  The last
 * presence bit, SL_FIELD_REFUSED, is never a field (the registry stops one
 * short of SL_MAX_FIELDS): sl_mark(), sl_unset() and every sl_set_*()
 * given an id at or above it write nothing and set that bit instead, and
 * sl_has() answers false.  After each process() (and each emit()) the core
 * clears the bit, counts the records that carried it in the instance's
 * `bad_field_writes` and logs the first one, so a plugin writing an id it
 * never resolved corrupts no other record.  One compare with a constant,
 * folded away for the well-known ids.  Ids between the configuration's
 * last field and SL_FIELD_REFUSED the setters cannot tell (they do not
 * know the configuration): such a write lands past the record's values;
 * the core finds its presence bit afterwards and counts it the same way,
 * but cannot undo it.  Use only ids from field_id(), need_field() and the
 * SL_F_* constants.
 */
#define SL_FIELD_INVALID ((sl_field)0xffff)
#define SL_FIELD_REFUSED ((sl_field)(SL_MAX_FIELDS - 1))
#define SL_FIELD_OK_(f) ((sl_field)(f) < SL_FIELD_REFUSED)

/* Bits of SL_F_IP_FRAG (the low 16 bits hold the offset in bytes). */
#define SL_FRAG_DF (1u << 16)
#define SL_FRAG_MF (1u << 17)
#define SL_FRAG_CE (1u << 18) /* the reserved "evil" bit, printed as CE */

/* Bits of SL_F_DECODE_FLAGS. */
#define SL_DECODE_TRUNCATED (1u << 0)	  /* a header was cut short */
#define SL_DECODE_BAD_IP_CSUM (1u << 1)
#define SL_DECODE_BAD_L4_CSUM (1u << 2)
#define SL_DECODE_FRAGMENT (1u << 3)	  /* non-first fragment: no L4 */
#define SL_DECODE_MALFORMED (1u << 4)	  /* a length field is impossible */

/* Bits of SL_F_CT_EVENT. */
#define SL_CT_EVENT_NEW (1u << 0)
#define SL_CT_EVENT_UPDATE (1u << 1)
#define SL_CT_EVENT_DESTROY (1u << 2)

/* Values of SL_F_FLOW_END_REASON. */
enum { SL_FLOW_END_IDLE = 1, SL_FLOW_END_ACTIVE, SL_FLOW_END_EOF, SL_FLOW_END_EVICTED, SL_FLOW_END_DESTROY };

/* A record: presence bits, then one value per field of the configuration. */
struct sl_record {
	uint64_t present[SL_PRESENCE_WORDS];
	union sl_value v[];
};

/* Byte arena of a batch: converters write text here; reset with the batch. */
struct sl_arena {
	uint8_t *base;
	size_t used;
	size_t size;
};

/*
 * A batch: up to `capacity` records.  rec[0..count) are the live records in
 * order; a filter drops records by compacting rec[] and lowering count.
 * Records are stored back to back in `storage`, `stride` bytes apart.
 */
struct sl_batch {
	unsigned count;
	unsigned capacity;
	unsigned filled;	/* records handed out by sl_batch_add() */
	unsigned stride;
	struct sl_record **rec;
	uint8_t *storage;
	struct sl_arena arena;
};

/* The write of id f was refused (see SL_FIELD_REFUSED). */
static inline void sl_refuse_(struct sl_record *r)
{
	r->present[SL_FIELD_REFUSED >> 6] |= (uint64_t)1 << (SL_FIELD_REFUSED & 63);
}

static inline bool sl_has(const struct sl_record *r, sl_field f)
{
	return SL_FIELD_OK_(f) && ((r->present[f >> 6] >> (f & 63)) & 1);
}

static inline void sl_mark(struct sl_record *r, sl_field f)
{
	if (!SL_FIELD_OK_(f)) {
		sl_refuse_(r);
		return;
	}
	r->present[f >> 6] |= (uint64_t)1 << (f & 63);
}

static inline void sl_unset(struct sl_record *r, sl_field f)
{
	if (!SL_FIELD_OK_(f)) {
		sl_refuse_(r);
		return;
	}
	r->present[f >> 6] &= ~((uint64_t)1 << (f & 63));
}

static inline void sl_set_u64(struct sl_record *r, sl_field f, uint64_t v)
{
	if (!SL_FIELD_OK_(f)) {
		sl_refuse_(r);
		return;
	}
	r->v[f].u64 = v;
	sl_mark(r, f);
}

static inline void sl_set_bytes(struct sl_record *r, sl_field f, const void *p, uint32_t len)
{
	if (!SL_FIELD_OK_(f)) {
		sl_refuse_(r);
		return;
	}
	r->v[f].bytes.ptr = (const uint8_t *)p;
	r->v[f].bytes.len = len;
	sl_mark(r, f);
}

/*
 * ABI 1.2: SL_F_TEXT_SAFE.  A converter whose text never holds a byte a
 * text output would escape (no control byte, no DEL, only valid UTF-8
 * without the C1 controls: the rules of text_escape.h) marks it with
 * sl_set_text_safe() after setting SL_F_TEXT; an output may then skip its
 * escape scan.  The mark holds the pointer and length of the text it
 * vouches for, so text that a later filter sets anew (other memory or
 * another length) is not covered: sl_text_is_safe() is false for it and
 * the output scans as before.  A filter that changes the bytes of the
 * text in place, keeping pointer and length, must sl_unset() the mark.
 */
static inline void sl_set_text_safe(struct sl_record *r)
{
	/* member by member: a 16-byte copy right after sl_set_bytes() would wait for its two stores */
	r->v[SL_F_TEXT_SAFE].bytes.ptr = r->v[SL_F_TEXT].bytes.ptr;
	r->v[SL_F_TEXT_SAFE].bytes.len = r->v[SL_F_TEXT].bytes.len;
	sl_mark(r, SL_F_TEXT_SAFE);
}

static inline bool sl_text_is_safe(const struct sl_record *r)
{
	return sl_has(r, SL_F_TEXT_SAFE) && sl_has(r, SL_F_TEXT) &&
	       r->v[SL_F_TEXT_SAFE].bytes.ptr == r->v[SL_F_TEXT].bytes.ptr &&
	       r->v[SL_F_TEXT_SAFE].bytes.len == r->v[SL_F_TEXT].bytes.len;
}

/* IPv4 address in network byte order, stored IPv4-mapped. */
static inline void sl_set_ip4(struct sl_record *r, sl_field f, const void *addr4)
{
	uint8_t *a;

	if (!SL_FIELD_OK_(f)) {
		sl_refuse_(r);
		return;
	}
	a = r->v[f].addr;
	memset(a, 0, 10);
	a[10] = 0xff;
	a[11] = 0xff;
	memcpy(a + 12, addr4, 4);
	sl_mark(r, f);
}

/* internal: the first n bytes of an address field (IPv6, MAC) */
static inline void sl_set_addr_(struct sl_record *r, sl_field f, const void *p, size_t n)
{
	if (!SL_FIELD_OK_(f)) {
		sl_refuse_(r);
		return;
	}
	memcpy(r->v[f].addr, p, n);
	sl_mark(r, f);
}

static inline void sl_set_ip6(struct sl_record *r, sl_field f, const void *addr16)
{
	sl_set_addr_(r, f, addr16, 16);
}

static inline bool sl_addr_is_v4(const uint8_t addr[16])
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	return memcmp(addr, mapped, 12) == 0;
}

static inline void sl_set_mac(struct sl_record *r, sl_field f, const void *mac6)
{
	sl_set_addr_(r, f, mac6, 6);
}

static inline void sl_set_time(struct sl_record *r, sl_field f, int64_t sec, uint32_t nsec)
{
	if (!SL_FIELD_OK_(f)) {
		sl_refuse_(r);
		return;
	}
	r->v[f].time.sec = sec;
	r->v[f].time.nsec = nsec;
	sl_mark(r, f);
}

/*
 * Append a fresh record (no field present) to a batch; NULL when full.
 * Inputs, and filters that build their own batches, use this.
 */
static inline struct sl_record *sl_batch_add(struct sl_batch *b)
{
	struct sl_record *r;

	if (b->filled == b->capacity)
		return NULL;
	r = (struct sl_record *)(b->storage + (size_t)b->filled * b->stride);
	b->filled++;
	memset(r->present, 0, sizeof(r->present));
	b->rec[b->count++] = r;
	return r;
}

/* Drop the last record added (an input that found the event malformed). */
static inline void sl_batch_unadd(struct sl_batch *b)
{
	b->count--;
	b->filled--;
}

/* Bytes free in the batch arena. */
static inline size_t sl_batch_room(const struct sl_batch *b)
{
	return b->arena.size - b->arena.used;
}

/*
 * Reserve len bytes of the batch arena (8-byte aligned); NULL when the arena
 * is full.  The memory is valid until the batch goes back to its pool.
 */
static inline void *sl_batch_alloc(struct sl_batch *b, size_t len)
{
	size_t at = (b->arena.used + 7) & ~(size_t)7;
	if (at > b->arena.size || b->arena.size - at < len)
		return NULL;
	b->arena.used = at + len;
	return b->arena.base + at;
}

/*
 * Arena bookkeeping, instead of writing b->arena.used: remember where the
 * arena stands, give back everything allocated since (a record that turned
 * out not to fit), or keep only the first `len` bytes of the last
 * allocation `p` (a line formatted into more room than it took).
 */
static inline size_t sl_batch_mark(const struct sl_batch *b)
{
	return b->arena.used;
}

static inline void sl_batch_rewind(struct sl_batch *b, size_t mark)
{
	if (mark <= b->arena.used)
		b->arena.used = mark;
}

static inline void sl_batch_trim(struct sl_batch *b, const void *p, size_t len)
{
	size_t at;

	if (!p)
		return;
	at = (size_t)((const uint8_t *)p - b->arena.base);
	if (at <= b->arena.used && len <= b->arena.used - at)
		b->arena.used = at + len;
}

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_RECORD_H */
