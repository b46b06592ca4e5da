/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json: SL_F_TEXT = one JSON object per record (no newline), written with
 * the formatters of plugins/common/fmt.c straight into the batch arena.
 * Only fields present in the record are written, in a fixed order; the
 * schema is documented in docs/JSON.md.  Every string is escaped (a prefix
 * may hold any byte) and the output is always valid UTF-8 JSON.
 */
#include <stdlib.h>

#include <sluice/plugin.h>

#include "fmt.h"
#include "json_ecs.h"
#include "names.h"
#include "plugin_state.h"

enum jkind {
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

struct jfield {
	sl_field id;
	uint8_t kind;
	uint8_t aux;		/* J_TIME: cache index; J_IFINDEX: name field */
	const char *key;	/* ",\"key\":" ready to copy, see JF() */
	uint8_t keylen;
};

/* The key ",\"name\":" fits the KEY_COPY-byte copy (else this does not compile). */
#define JF(id_, kind_, aux_, name)                                                \
	{ (id_), (kind_), (aux_), ",\"" name "\":",                                \
	  sizeof(",\"" name "\":") - 1 + 0 * sizeof(char[sizeof(name) <= 29 ? 1 : -1]) }

/* Output order.  Keep docs/JSON.md in step with this table. */
static const struct jfield jfields[] = {
	JF(SL_F_TIMESTAMP, J_TIME, 0, "timestamp"),
	JF(SL_F_PREFIX, J_STR, 0, "prefix"),
	JF(SL_F_NFLOG_GROUP, J_U64, 0, "group"),
	JF(SL_F_FAMILY, J_FAMILY, 0, "family"),
	JF(SL_F_HOOK, J_HOOK, 0, "hook"),
	JF(SL_F_IFNAME_IN, J_STR, 0, "in"),
	JF(SL_F_IFINDEX_IN, J_IFINDEX, SL_F_IFNAME_IN, "ifindex_in"),
	JF(SL_F_IFNAME_OUT, J_STR, 0, "out"),
	JF(SL_F_IFINDEX_OUT, J_IFINDEX, SL_F_IFNAME_OUT, "ifindex_out"),
	JF(SL_F_PHYSNAME_IN, J_STR, 0, "physin"),
	JF(SL_F_PHYSINDEX_IN, J_IFINDEX, SL_F_PHYSNAME_IN, "physindex_in"),
	JF(SL_F_PHYSNAME_OUT, J_STR, 0, "physout"),
	JF(SL_F_PHYSINDEX_OUT, J_IFINDEX, SL_F_PHYSNAME_OUT, "physindex_out"),
	JF(SL_F_MARK, J_U64, 0, "mark"),
	JF(SL_F_UID, J_U64, 0, "uid"),
	JF(SL_F_GID, J_U64, 0, "gid"),
	JF(SL_F_MAC_SRC, J_MAC, 0, "mac_src"),
	JF(SL_F_MAC_DST, J_MAC, 0, "mac_dst"),
	JF(SL_F_ETH_TYPE, J_U64, 0, "eth_type"),
	JF(SL_F_VLAN_ID, J_U64, 0, "vlan"),
	JF(SL_F_IP_VERSION, J_U64, 0, "ip_version"),
	JF(SL_F_SRC_ADDR, J_ADDR, 0, "src_ip"),
	JF(SL_F_DST_ADDR, J_ADDR, 0, "dest_ip"),
	JF(SL_F_IP_PROTO, J_PROTO, 0, "proto"),
	JF(SL_F_IP_LEN, J_U64, 0, "len"),
	JF(SL_F_IP_TOS, J_U64, 0, "tos"),
	JF(SL_F_IP_TTL, J_U64, 0, "ttl"),
	JF(SL_F_IP_ID, J_U64, 0, "ip_id"),
	JF(SL_F_IP_FRAG, J_IPFLAGS, 0, "ip_flags"),
	JF(SL_F_IP_FRAG, J_FRAGOFF, 0, "frag_offset"),
	JF(SL_F_IP6_FLOWLABEL, J_U64, 0, "flowlabel"),
	JF(SL_F_SPORT, J_U64, 0, "src_port"),
	JF(SL_F_DPORT, J_U64, 0, "dest_port"),
	JF(SL_F_TCP_FLAGS, J_TCPFLAGS, 0, "tcp_flags"),
	JF(SL_F_TCP_SEQ, J_U64, 0, "tcp_seq"),
	JF(SL_F_TCP_ACK, J_U64, 0, "tcp_ack"),
	JF(SL_F_TCP_WINDOW, J_U64, 0, "tcp_window"),
	JF(SL_F_TCP_URGP, J_U64, 0, "tcp_urgp"),
	JF(SL_F_UDP_LEN, J_U64, 0, "udp_len"),
	JF(SL_F_ICMP_TYPE, J_U64, 0, "icmp_type"),
	JF(SL_F_ICMP_CODE, J_U64, 0, "icmp_code"),
	JF(SL_F_ICMP_ID, J_U64, 0, "icmp_id"),
	JF(SL_F_ICMP_SEQ, J_U64, 0, "icmp_seq"),
	JF(SL_F_ICMP_MTU, J_U64, 0, "icmp_mtu"),
	JF(SL_F_ICMP_GATEWAY, J_ADDR, 0, "icmp_gateway"),
	JF(SL_F_ICMP_PARAM, J_U64, 0, "icmp_param"),
	JF(SL_F_IPSEC_SPI, J_U64, 0, "spi"),
	JF(SL_F_ARP_OP, J_U64, 0, "arp_op"),
	JF(SL_F_ARP_SHA, J_MAC, 0, "arp_sha"),
	JF(SL_F_ARP_SPA, J_ADDR, 0, "arp_spa"),
	JF(SL_F_ARP_THA, J_MAC, 0, "arp_tha"),
	JF(SL_F_ARP_TPA, J_ADDR, 0, "arp_tpa"),
	JF(SL_F_ORIG_LEN, J_U64, 0, "pktlen"),
	JF(SL_F_CAPLEN, J_U64, 0, "caplen"),
	JF(SL_F_SEQ_LOCAL, J_U64, 0, "seq_local"),
	JF(SL_F_SEQ_GLOBAL, J_U64, 0, "seq_global"),
	JF(SL_F_CT_ID, J_U64, 0, "ct_id"),
	JF(SL_F_CT_STATE, J_CTSTATE, 0, "ct_state"),
	JF(SL_F_CT_EVENT, J_CTEVENT, 0, "ct_event"),
	JF(SL_F_CT_STATUS, J_U64, 0, "ct_status"),
	JF(SL_F_CT_ZONE, J_U64, 0, "ct_zone"),
	JF(SL_F_TCP_STATE, J_TCPSTATE, 0, "tcp_state"),
	JF(SL_F_ORIG_SRC, J_ADDR, 0, "orig_src_ip"),
	JF(SL_F_ORIG_DST, J_ADDR, 0, "orig_dest_ip"),
	JF(SL_F_ORIG_SPORT, J_U64, 0, "orig_src_port"),
	JF(SL_F_ORIG_DPORT, J_U64, 0, "orig_dest_port"),
	JF(SL_F_REPLY_SRC, J_ADDR, 0, "reply_src_ip"),
	JF(SL_F_REPLY_DST, J_ADDR, 0, "reply_dest_ip"),
	JF(SL_F_REPLY_SPORT, J_U64, 0, "reply_src_port"),
	JF(SL_F_REPLY_DPORT, J_U64, 0, "reply_dest_port"),
	JF(SL_F_ORIG_PACKETS, J_U64, 0, "orig_packets"),
	JF(SL_F_ORIG_BYTES, J_U64, 0, "orig_bytes"),
	JF(SL_F_REPLY_PACKETS, J_U64, 0, "reply_packets"),
	JF(SL_F_REPLY_BYTES, J_U64, 0, "reply_bytes"),
	JF(SL_F_FLOW_START, J_TIME, 1, "flow_start"),
	JF(SL_F_FLOW_END, J_TIME, 2, "flow_end"),
	JF(SL_F_FLOW_TCP_FLAGS, J_TCPFLAGS, 0, "flow_tcp_flags"),
	JF(SL_F_FLOW_END_REASON, J_ENDREASON, 0, "flow_end_reason"),
	JF(SL_F_DECODE_FLAGS, J_DECODE, 0, "decode_flags"),
};
#define N_TIME_CACHES 3

static const char *const tz_choices[] = {"utc", "local", NULL};
static const char *const schema_choices[] = {"sluice", "ecs", NULL};
enum { SCHEMA_SLUICE, SCHEMA_ECS };

struct json_cfg {
	int schema;
	int timezone;
	bool packet;
	bool payload;
	const char *host;
};

/*
 * Keys copied into zero-padded slots: a key is written with one fixed
 * 32-byte copy (two vector moves) and the length advanced by its own
 * length.  A memcpy of a variable length of 8-20 bytes was compiled into
 * `rep movsq`, whose start-up cost made it half of the formatter's time.
 */
#define KEY_SLOT 40		/* 32 bytes read from offset 0 or 1, and room */
#define KEY_COPY 32

#define N_JFIELDS (sizeof(jfields) / sizeof(jfields[0]))
/* Table fields are well-known, so their presence bits are in present[0..1]. */
#define JF_ID_LIMIT 128
_Static_assert(SL_F_WELL_KNOWN_COUNT <= JF_ID_LIMIT, "json: widen jbits for more well-known fields");
_Static_assert(N_JFIELDS <= 128, "json: rows are a 128-bit set");

struct json {
	SL_STATE_HEAD(struct json_cfg);
	/*
	 * Per field id: the rows of jfields[] that print it (set), and the
	 * rows its presence leaves out (clear: an interface index when its
	 * name is there), as 128-bit sets (row i is bit i % 64 of word
	 * i / 64).  A record's rows are found from its presence bits and
	 * walked in row order: the cost follows the ~20 fields a record has,
	 * not the 79 rows of the table.
	 */
	struct jrows {
		uint64_t set[2], clear[2];
	} jrows[JF_ID_LIMIT];
	uint64_t ipflags_row[2], fragoff_row[2];	/* those rows, as sets */
	uint64_t last_present[2], last_rows[2];	/* the rows of the last presence bits */
	char keys[N_JFIELDS][KEY_SLOT];
	bool packet, payload;
	bool v6;		/* the record being written is IPv6 (sl_fmt_rec_v6) */
	struct sl_fmt_time_cache tc[N_TIME_CACHES];
	char *host_frag;	/* "host":"..." pre-escaped, or NULL */
	size_t host_len;
	int c_no_room;
	struct jextra **extra;	/* fields registered by plugins, in id order */
	unsigned nextra;
	bool ecs;		/* schema: ecs */
	struct json_ecs ecs_ctx;
};

/* A field some plugin registered: printed by its type, named as registered. */
struct jextra {
	sl_field id;
	enum sl_type type;
	size_t keylen;
	char key[];		/* ,"name": escaped */
};

static const struct sl_option json_options[] = {
	SL_OPT_ENUM("schema", struct json_cfg, schema, "sluice", schema_choices,
		    "sluice: the flat keys of docs/JSON.md; ecs: Elastic Common Schema names, nested"),
	SL_OPT_ENUM("timezone", struct json_cfg, timezone, "utc", tz_choices,
		    "utc: times end in Z; local: in the local offset, like +02:00"),
	SL_OPT_BOOL("packet", struct json_cfg, packet, "false",
		    "add the packet (from its network header) as hex in \"packet\""),
	SL_OPT_BOOL("payload", struct json_cfg, payload, "false",
		    "add the layer-4 payload as hex in \"payload\""),
	SL_OPT_STR("host", struct json_cfg, host, NULL,
		   "add \"host\": this string to every object (like ulogd's dvc)"),
	SL_OPT_END
};

static const struct sl_field_decl json_provides[] = {
	SL_FIELD_DECL(SL_F_TEXT),
	SL_FIELD_DECL(SL_F_TEXT_SAFE),	/* the text never needs escaping */
	SL_FIELD_END
};

/* ---- value writers ---- */

/*
 * Names in padded slots, written with one fixed-size copy (see KEY_SLOT):
 * the bytes after the name are scratch that the next piece overwrites.
 */
struct jname {
	char s[23];
	uint8_t len;
};
#define JN(str) { str, sizeof(str) - 1 }

/* One static slot per case: NAMES(X) lists X(value, "name"). */
#define JNAME_CASE(v, str)                           \
	case v: {                                    \
		static const struct jname n_ = JN(str); \
		return &n_;                          \
	}

/*
 * Protocol and family names come from the one table in common/names.c,
 * copied once into padded slots so writing one is a fixed-size copy.
 * Written when the plugin is loaded (fill_all() below), before any thread
 * can read them: a reload's configure() runs beside running instances.
 */
static struct jname proto_slots[256], family_slots[16];

static void fill_slots(struct jname *slots, size_t n, const char *(*name)(uint64_t))
{
	for (size_t v = 0; v < n; v++) {
		const char *s = name(v);

		if (s && strlen(s) < sizeof(slots[v].s)) {
			memcpy(slots[v].s, s, strlen(s));
			slots[v].len = (uint8_t)strlen(s);
		}
	}
}

static const char *json_proto(uint64_t p)
{
	return sl_proto_name(p, SL_PROTO_JSON);
}

__attribute__((constructor)) static void fill_all(void)
{
	fill_slots(proto_slots, 256, json_proto);
	fill_slots(family_slots, 16, sl_family_name);
}

static const struct jname *proto_name(uint64_t p)
{
	return p < 256 && proto_slots[p].len ? &proto_slots[p] : NULL;
}

static const struct jname *family_name(uint64_t f)
{
	return f < 16 && family_slots[f].len ? &family_slots[f] : NULL;
}

enum { NFPROTO_ARP_ = 3, NFPROTO_NETDEV_ = 5 };

static const struct jname *hook_name(uint64_t h, const struct sl_record *r)
{
	static const struct jname ip[] = {JN("PREROUTING"), JN("INPUT"), JN("FORWARD"), JN("OUTPUT"),
					  JN("POSTROUTING")};
	static const struct jname arp[] = {JN("INPUT"), JN("OUTPUT"), JN("FORWARD")};
	static const struct jname netdev[] = {JN("ingress"), JN("egress")};
	uint64_t fam = sl_has(r, SL_F_FAMILY) ? r->v[SL_F_FAMILY].u64 : 0;

	if (fam == NFPROTO_ARP_)
		return h < 3 ? &arp[h] : NULL;
	if (fam == NFPROTO_NETDEV_)
		return h < 2 ? &netdev[h] : NULL;
	/* ipv4, ipv6, inet, bridge (NF_BR_* use the same numbers), unknown */
	return h < 5 ? &ip[h] : NULL;
}

#define CT_STATE_NAMES(X)                                                                     \
	X(0, "established") X(1, "related") X(2, "new") X(3, "established_reply")               \
	X(4, "related_reply") X(7, "untracked")

static const struct jname *ct_state_name(uint64_t s)
{
	switch (s) {
	CT_STATE_NAMES(JNAME_CASE)
	default: return NULL;
	}
}

static const struct jname *tcp_state_name(uint64_t s)
{
	static const struct jname n[] = {JN("none"), JN("syn_sent"), JN("syn_recv"), JN("established"),
					 JN("fin_wait"), JN("close_wait"), JN("last_ack"), JN("time_wait"),
					 JN("close"), JN("syn_sent2")};

	return s < 10 ? &n[s] : NULL;
}

#define END_REASON_NAMES(X)                                                                   \
	X(SL_FLOW_END_IDLE, "idle") X(SL_FLOW_END_ACTIVE, "active") X(SL_FLOW_END_EOF, "eof")   \
	X(SL_FLOW_END_EVICTED, "evicted") X(SL_FLOW_END_DESTROY, "destroy")

static const struct jname *end_reason_name(uint64_t s)
{
	switch (s) {
	END_REASON_NAMES(JNAME_CASE)
	default: return NULL;
	}
}

static inline char *put_jname(char *q, const struct jname *n)
{
	memcpy(q, n->s, sizeof(n->s));
	return q + n->len;
}

/* A name, or the number as a string when there is none. */
static char *put_name(char *q, const struct jname *n, uint64_t v)
{
	*q++ = '"';
	q = n ? put_jname(q, n) : sl_fmt_u64_inline(q, v);
	*q++ = '"';
	return q;
}

/* Space-separated names of the set bits, in the order given. */
static char *put_bits(char *q, uint64_t v, const uint64_t *bits, const struct jname *names, unsigned n)
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
		q = put_jname(q, &names[i]);
	}
	*q++ = '"';
	return q;
}

static char *put_tcp_flags(char *q, uint64_t v)
{
	/* the kernel LOG target's order; AE is reserved bit 0 (<< 8) */
	static const uint64_t bits[] = {0x100, 0x80, 0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01};
	static const struct jname names[] = {JN("AE"),	JN("CWR"), JN("ECE"), JN("URG"), JN("ACK"),
					     JN("PSH"), JN("RST"), JN("SYN"), JN("FIN")};

	return put_bits(q, v, bits, names, 9);
}

static char *put_decode_flags(char *q, uint64_t v)
{
	static const uint64_t bits[] = {SL_DECODE_TRUNCATED, SL_DECODE_BAD_IP_CSUM, SL_DECODE_BAD_L4_CSUM,
					SL_DECODE_FRAGMENT, SL_DECODE_MALFORMED};
	static const struct jname names[] = {JN("\"truncated\""), JN("\"bad_ip_checksum\""),
					     JN("\"bad_l4_checksum\""), JN("\"fragment\""),
					     JN("\"malformed\"")};
	char *start;
	unsigned i;

	*q++ = '[';
	start = q;
	for (i = 0; i < 5; i++) {
		if (!(v & bits[i]))
			continue;
		*q = ',';
		q += q != start;
		q = put_jname(q, &names[i]);
	}
	*q++ = ']';
	return q;
}

static void put_hex_str(struct sl_fmt_buf *b, const struct sl_bytes *v)
{
	sl_fmt_chr(b, '"');
	sl_fmt_hexbytes(b, v->ptr, v->len, 0);
	sl_fmt_chr(b, '"');
}

/*
 * Room one row of a fixed-size kind needs (all but J_STR and J_HEX): its
 * key (a KEY_COPY-byte copy) and its value with the scratch of the copies
 * above.  The largest value is decode_flags with every bit (72 bytes), the
 * key before it is at most 20; 128 leaves a margin.
 */
#define ROW_MAX 128

/*
 * Row i of jfields[] (of a fixed-size kind) at q, which has ROW_MAX bytes:
 * no bound checks per piece.  Returns the end.
 */
static inline __attribute__((always_inline)) char *json_row(struct json *st, char *q, const struct sl_record *r, unsigned i, bool first)
{
	const struct jfield *f = &jfields[i];
	const union sl_value *v = &r->v[f->id];

	/* the first key goes without its leading comma */
	memcpy(q, st->keys[i] + first, KEY_COPY);
	q += f->keylen - first;

	switch (f->kind) {
	case J_U64:
	case J_IFINDEX:
		return sl_fmt_u64_inline(q, v->u64);
	case J_ADDR:
		*q++ = '"';
		q = sl_fmt_addr_in_raw(q, v->addr, st->v6);
		*q++ = '"';
		return q;
	case J_MAC:
		*q++ = '"';
		q = sl_fmt_mac_raw(q, v->addr);
		*q++ = '"';
		return q;
	case J_TIME:
		*q++ = '"';
		q = sl_fmt_rfc3339_raw(q, &st->tc[f->aux], v->time);
		*q++ = '"';
		return q;
	case J_HOOK:
		return put_name(q, hook_name(v->u64, r), v->u64);
	case J_FAMILY:
		return put_name(q, family_name(v->u64), v->u64);
	case J_PROTO:
		return put_name(q, proto_name(v->u64), v->u64);
	case J_TCPFLAGS:
		return put_tcp_flags(q, v->u64);
	case J_IPFLAGS: {
		static const uint64_t bits[] = {SL_FRAG_CE, SL_FRAG_DF, SL_FRAG_MF};
		static const struct jname names[] = {JN("CE"), JN("DF"), JN("MF")};

		return put_bits(q, v->u64, bits, names, 3);
	}
	case J_FRAGOFF:
		return sl_fmt_u64_inline(q, v->u64 & 0xffff);
	case J_DECODE:
		return put_decode_flags(q, v->u64);
	case J_CTSTATE:
		return put_name(q, ct_state_name(v->u64), v->u64);
	case J_CTEVENT: {
		static const uint64_t bits[] = {SL_CT_EVENT_NEW, SL_CT_EVENT_UPDATE, SL_CT_EVENT_DESTROY};
		static const struct jname names[] = {JN("NEW"), JN("UPDATE"), JN("DESTROY")};

		return put_bits(q, v->u64, bits, names, 3);
	}
	case J_TCPSTATE:
		return put_name(q, tcp_state_name(v->u64), v->u64);
	case J_ENDREASON:
		return put_name(q, end_reason_name(v->u64), v->u64);
	}
	return q;
}

/*
 * The rows of jfields[] record r prints, as a 128-bit set.  (Scalars, not
 * an array: a 16-byte load of words just stored one by one would wait.)
 */
static void json_rows(struct json *st, const struct sl_record *r, uint64_t rows[2])
{
	uint64_t set0 = 0, set1 = 0, clear0 = 0, clear1 = 0;
	unsigned w;

	/* records of one stream mostly have the same fields: keep the last set */
	if (r->present[0] == st->last_present[0] && r->present[1] == st->last_present[1]) {
		set0 = st->last_rows[0];
		set1 = st->last_rows[1];
	} else {
		for (w = 0; w < JF_ID_LIMIT / 64; w++) {
			uint64_t x = r->present[w];

			while (x) {
				const struct jrows *j = &st->jrows[w * 64 + (unsigned)__builtin_ctzll(x)];

				set0 |= j->set[0];
				set1 |= j->set[1];
				clear0 |= j->clear[0];
				clear1 |= j->clear[1];
				x &= x - 1;
			}
		}
		set0 &= ~clear0;
		set1 &= ~clear1;
		clear0 = clear1 = 0;
		st->last_present[0] = r->present[0];
		st->last_present[1] = r->present[1];
		st->last_rows[0] = set0;
		st->last_rows[1] = set1;
	}
	/* ip_flags and frag_offset are left out when they would be empty / 0 */
	if (sl_has(r, SL_F_IP_FRAG)) {
		uint64_t v = r->v[SL_F_IP_FRAG].u64;

		if (!(v & (SL_FRAG_DF | SL_FRAG_MF | SL_FRAG_CE))) {
			clear0 |= st->ipflags_row[0];
			clear1 |= st->ipflags_row[1];
		}
		if (!(v & 0xffff)) {
			clear0 |= st->fragoff_row[0];
			clear1 |= st->fragoff_row[1];
		}
	}
	rows[0] = set0 & ~clear0;
	rows[1] = set1 & ~clear1;
}

/* A registered field; kept out of json_record(), which usually has none. */
static __attribute__((noinline)) void put_extra(struct json *st, struct sl_fmt_buf *b,
						const struct jextra *x, const union sl_value *v,
						bool first)
{
	sl_fmt_mem(b, x->key + first, x->keylen - first);
	switch (x->type) {
	case SL_T_U64:
		sl_fmt_u64(b, v->u64);
		break;
	case SL_T_STRING:
		sl_fmt_json_str(b, v->bytes.ptr, v->bytes.len);
		break;
	case SL_T_BYTES:
		put_hex_str(b, &v->bytes);
		break;
	case SL_T_ADDR:
		sl_fmt_chr(b, '"');
		sl_fmt_addr_in(b, v->addr, st->v6);
		sl_fmt_chr(b, '"');
		break;
	case SL_T_MAC:
		sl_fmt_chr(b, '"');
		sl_fmt_mac(b, v->addr);
		sl_fmt_chr(b, '"');
		break;
	case SL_T_TIME:
		sl_fmt_chr(b, '"');
		sl_fmt_rfc3339(b, &st->tc[0], v->time);
		sl_fmt_chr(b, '"');
		break;
	}
}

/* Write one record's object; the caller checks b->overflow. */
static void json_record(struct json *st, struct sl_fmt_buf *b, const struct sl_record *r)
{
	uint64_t rows[2];
	bool first = true;
	char *q, *lim;
	unsigned w;

	json_rows(st, r, rows);
	st->v6 = sl_fmt_rec_v6(r);
	sl_fmt_chr(b, '{');
	if (st->host_frag) {
		sl_fmt_mem(b, st->host_frag, st->host_len);
		first = false;
	}
	if (b->overflow)
		return;
	/* rows are written at a cursor; J_STR goes through the bounded appenders */
	q = sl_fmt_end(b);
	lim = b->p + b->cap;
	for (w = 0; w < 2; w++) {
		uint64_t m = rows[w];	/* a local: the array would be stored every row */

		while (m) {
			unsigned i = w * 64 + (unsigned)__builtin_ctzll(m);
			const struct jfield *f = &jfields[i];

			m &= m - 1;
			if (f->kind == J_STR) {
				const struct sl_bytes *s = &r->v[f->id].bytes;

				sl_fmt_commit(b, q);
				if (lim - q >= KEY_COPY) {
					memcpy(q, st->keys[i] + first, KEY_COPY);
					b->len += f->keylen - first;
				} else {
					sl_fmt_mem(b, f->key + first, f->keylen - first);
				}
				sl_fmt_json_str(b, s->ptr, s->len);
				if (b->overflow)
					return;
				q = sl_fmt_end(b);
			} else if (lim - q >= ROW_MAX) {
				q = json_row(st, q, r, i, first);
			} else {
				/* near the end: through scratch, so that what fits fits */
				char tmp[ROW_MAX];
				size_t n = (size_t)(json_row(st, tmp, r, i, first) - tmp);

				if ((size_t)(lim - q) < n) {
					sl_fmt_commit(b, q);
					b->overflow = true;
					return;
				}
				memcpy(q, tmp, n);
				q += n;
			}
			first = false;
		}
	}
	sl_fmt_commit(b, q);
	for (unsigned x = 0; x < st->nextra; x++) {
		if (sl_has(r, st->extra[x]->id)) {
			put_extra(st, b, st->extra[x], &r->v[st->extra[x]->id], first);
			first = false;
		}
	}
	if (st->packet && sl_has(r, SL_F_PACKET)) {
		sl_fmt_mem(b, &",\"packet\":"[first], sizeof(",\"packet\":") - 1 - first);
		put_hex_str(b, &r->v[SL_F_PACKET].bytes);
		first = false;
	}
	if (st->payload && sl_has(r, SL_F_PAYLOAD)) {
		sl_fmt_mem(b, &",\"payload\":"[first], sizeof(",\"payload\":") - 1 - first);
		put_hex_str(b, &r->v[SL_F_PAYLOAD].bytes);
	}
	sl_fmt_chr(b, '}');
}

static void json_destroy(void *state);

/* Whether json writes this key already (a registered field may not take it). */
static bool key_taken(const char *name)
{
	size_t n = strlen(name);

	if (!strcmp(name, "host") || !strcmp(name, "packet") || !strcmp(name, "payload"))
		return true;
	for (unsigned i = 0; i < sizeof(jfields) / sizeof(jfields[0]); i++)
		if (jfields[i].keylen == n + 4 && !memcmp(jfields[i].key + 2, name, n))
			return true;
	return false;
}

/* The fields plugins registered (ids after the well-known ones).  0 or -1. */
static int find_extra(struct json *st, const struct sl_host *host, struct sl_instance *inst)
{
	const char *name;
	int id;

	for (id = SL_F_WELL_KNOWN_COUNT; id < SL_MAX_FIELDS && (name = host->field_name(inst, id));
	     id++) {
		size_t n = strlen(name), cap = 6 * n + 8;
		struct jextra *x, **grown;
		struct sl_fmt_buf fb;

		if (key_taken(name)) {
			host->log(inst, SL_LOG_WARNING, "field '%s' has the name of a json key: not written",
				  name);
			continue;
		}
		x = malloc(sizeof(*x) + cap);
		grown = realloc(st->extra, (st->nextra + 1) * sizeof(*grown));
		if (!x || !grown) {
			free(x);
			if (grown)
				st->extra = grown;
			return -1;
		}
		st->extra = grown;
		x->id = (sl_field)id;
		x->type = host->field_type(inst, id);
		sl_fmt_init(&fb, x->key, cap);
		sl_fmt_chr(&fb, ',');
		sl_fmt_json_str(&fb, name, n);
		sl_fmt_chr(&fb, ':');
		x->keylen = fb.len;
		st->extra[st->nextra++] = x;
	}
	return 0;
}

/* The id of registered field `name` when it has type t, else -1. */
static int field_of(const struct sl_host *host, struct sl_instance *inst, const char *name,
		    enum sl_type t)
{
	int id = host->field_id(inst, name);

	return id >= 0 && host->field_type(inst, id) == t ? id : -1;
}

/* schema: ecs.  0 or -1 (the error said). */
static int json_ecs_configure(struct json *st, const struct sl_host *host, struct sl_instance *inst,
			      const struct json_cfg *cfg)
{
	if (cfg->packet || cfg->payload) {
		host->config_error(inst, cfg->packet ? "packet" : "payload",
				   "not written with schema: ecs (ECS has no field for raw bytes)");
		return -1;
	}
	st->ecs = true;
	st->ecs_ctx.tc = &st->tc[0];
	st->ecs_ctx.cid_field = host->field_id(inst, "community_id");
	st->ecs_ctx.rule_handle = field_of(host, inst, "rule_handle", SL_T_U64);
	st->ecs_ctx.rule_comment = field_of(host, inst, "rule_comment", SL_T_STRING);
	st->ecs_ctx.rule_table = field_of(host, inst, "rule_table", SL_T_STRING);
	st->ecs_ctx.rule_verdict = field_of(host, inst, "rule_verdict", SL_T_STRING);
	if (st->host_frag) {
		/* "host": observer.hostname: the escaped string after the key */
		static const char key[] = "\"host\":";

		st->ecs_ctx.host = st->host_frag + sizeof(key) - 1;
		st->ecs_ctx.host_len = st->host_len - (sizeof(key) - 1);
	}
	return 0;
}

static int json_configure(const struct sl_host *host, struct sl_instance *inst, const void *config, void **state)
{
	const struct json_cfg *cfg = config;
	struct json *st = sl_state_new(struct json, host, inst, config);
	unsigned i;

	if (!st)
		return -1;
	for (i = 0; i < N_JFIELDS; i++) {
		const struct jfield *f = &jfields[i];
		uint64_t bit = (uint64_t)1 << (i % 64);

		memcpy(st->keys[i], f->key, f->keylen);
		st->jrows[f->id].set[i / 64] |= bit;
		if (f->kind == J_IFINDEX)
			st->jrows[f->aux].clear[i / 64] |= bit;
		if (f->kind == J_IPFLAGS)
			st->ipflags_row[i / 64] |= bit;
		if (f->kind == J_FRAGOFF)
			st->fragoff_row[i / 64] |= bit;
	}
	st->packet = cfg->packet;
	st->payload = cfg->payload;
	for (i = 0; i < N_TIME_CACHES; i++)
		sl_fmt_time_cache_init(&st->tc[i], cfg->timezone == 1);
	if (cfg->host) {
		size_t n = strlen(cfg->host), cap = 6 * n + 16;
		struct sl_fmt_buf fb;

		st->host_frag = malloc(cap);
		if (!st->host_frag) {
			free(st);
			host->config_error(inst, "host", "out of memory");
			return -1;
		}
		sl_fmt_init(&fb, st->host_frag, cap);
		sl_fmt_lit(&fb, "\"host\":");
		sl_fmt_json_str(&fb, cfg->host, n);
		st->host_len = fb.len;
	}
	if (cfg->schema == SCHEMA_ECS && json_ecs_configure(st, host, inst, cfg) < 0) {
		json_destroy(st);
		return -1;
	}
	if (find_extra(st, host, inst) < 0) {
		json_destroy(st);
		host->config_error(inst, NULL, "out of memory");
		return -1;
	}
	*state = st;
	return 0;
}

static int json_start(void *state)
{
	struct json *st = state;

	st->c_no_room = st->host->counter_new(st->inst, "no_room");
	return 0;
}

/* Most objects are well under this; a bigger one retries with all the room left. */
#define FIRST_TRY 2048

static int json_process(void *state, struct sl_batch *b)
{
	struct json *st = state;
	uint64_t no_room = 0;
	unsigned i;

	for (i = 0; i < b->count; i++) {
		struct sl_record *r = b->rec[i];
		size_t start = sl_batch_mark(b), room;
		struct sl_fmt_buf fb;
		void *mem;
		int pass;

		/* reserve, write, hand back the unused tail (nothing else allocates meanwhile) */
		for (pass = 0; pass < 2; pass++) {
			sl_batch_rewind(b, start);
			room = sl_batch_room(b);
			room = room > 8 ? (room - 8) & ~(size_t)7 : 0;
			if (pass == 0 && room > FIRST_TRY)
				room = FIRST_TRY;
			mem = room ? sl_batch_alloc(b, room) : NULL;
			sl_fmt_init(&fb, mem, room);
			if (st->ecs)
				json_ecs_record(&st->ecs_ctx, &fb, r);
			else
				json_record(st, &fb, r);
			if (!fb.overflow || room < FIRST_TRY)
				break;
		}
		if (fb.overflow) {
			sl_batch_rewind(b, start);
			sl_unset(r, SL_F_TEXT);
			no_room++;
			continue;
		}
		sl_batch_trim(b, mem, fb.len);
		sl_set_bytes(r, SL_F_TEXT, mem, (uint32_t)fb.len);
		sl_set_text_safe(r);
	}
	if (no_room) {
		st->host->counter_add(st->inst, st->c_no_room, no_room);
		st->host->error_add(st->inst, no_room);
	}
	return 0;
}

static void json_destroy(void *state)
{
	struct json *st = state;

	for (unsigned i = 0; i < st->nextra; i++)
		free(st->extra[i]);
	free(st->extra);
	free(st->host_frag);
	free(st);
}

static const struct sl_plugin json_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_FILTER,
	.name = "json",
	.description = "one JSON object per record (RFC 3339 times, escaped strings), see docs/JSON.md",
	.config_size = sizeof(struct json_cfg),
	.options = json_options,
	.provides = json_provides,
	.configure = json_configure,
	.start = json_start,
	.process = json_process,
	.destroy = json_destroy,
};

SLUICE_PLUGIN(json_plugin)
