/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The json filter's flat schema as a table, shared with the journal
 * output: see json_fields.h.
 */
#include "json_fields.h"
#include "names.h"

/* The key ",\"name\":" is at most 32 bytes, the json filter's one copy of a key (else this does not compile). */
#define JF(id_, kind_, aux_, name)                                                \
	{ (id_), (kind_), (aux_), ",\"" name "\":",                                \
	  sizeof(",\"" name "\":") - 1 + 0 * sizeof(char[sizeof(name) <= 29 ? 1 : -1]) }

/* Output order.  Keep docs/JSON.md (and docs/PLUGINS.md's journal fields) in step with this table. */
const struct sl_jfield sl_jfields[SL_JSON_NFIELDS] = {
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
_Static_assert(sizeof(sl_jfields) / sizeof(sl_jfields[0]) == SL_JSON_NFIELDS,
	       "json_fields: SL_JSON_NFIELDS is the table's size");
_Static_assert(SL_F_WELL_KNOWN_COUNT <= SL_JSON_ID_LIMIT, "json_fields: widen the row sets for more well-known fields");
_Static_assert(SL_JSON_NFIELDS <= 128, "json_fields: rows are a 128-bit set");

/*
 * Protocol and family names come from the one table in common/names.c,
 * copied once into padded slots so writing one is a fixed-size copy.
 * Written when the plugin is loaded (fill_all() below), before any thread
 * can read them: a reload's configure() runs beside running instances.
 */
struct sl_jname sl_json_proto_slots[256], sl_json_family_slots[16];

static void fill_slots(struct sl_jname *slots, size_t n, const char *(*name)(uint64_t))
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
	fill_slots(sl_json_proto_slots, 256, json_proto);
	fill_slots(sl_json_family_slots, 16, sl_family_name);
}

void sl_json_rows_init(struct sl_json_rows *jr)
{
	memset(jr, 0, sizeof(*jr));
	for (unsigned i = 0; i < SL_JSON_NFIELDS; i++) {
		const struct sl_jfield *f = &sl_jfields[i];
		uint64_t bit = (uint64_t)1 << (i % 64);

		jr->by_id[f->id].set[i / 64] |= bit;
		if (f->kind == J_IFINDEX)
			jr->by_id[f->aux].clear[i / 64] |= bit;
		if (f->kind == J_IPFLAGS)
			jr->ipflags_row[i / 64] |= bit;
		if (f->kind == J_FRAGOFF)
			jr->fragoff_row[i / 64] |= bit;
	}
}

/* (Scalars, not an array: a 16-byte load of words just stored one by one would wait.) */
void sl_json_rows_of(struct sl_json_rows *jr, const struct sl_record *r, uint64_t rows[2])
{
	uint64_t set0 = 0, set1 = 0, clear0 = 0, clear1 = 0;
	unsigned w;

	/* records of one stream mostly have the same fields: keep the last set */
	if (r->present[0] == jr->last_present[0] && r->present[1] == jr->last_present[1]) {
		set0 = jr->last_rows[0];
		set1 = jr->last_rows[1];
	} else {
		for (w = 0; w < SL_JSON_ID_LIMIT / 64; w++) {
			uint64_t x = r->present[w];

			while (x) {
				unsigned id = w * 64 + (unsigned)__builtin_ctzll(x);

				set0 |= jr->by_id[id].set[0];
				set1 |= jr->by_id[id].set[1];
				clear0 |= jr->by_id[id].clear[0];
				clear1 |= jr->by_id[id].clear[1];
				x &= x - 1;
			}
		}
		set0 &= ~clear0;
		set1 &= ~clear1;
		clear0 = clear1 = 0;
		jr->last_present[0] = r->present[0];
		jr->last_present[1] = r->present[1];
		jr->last_rows[0] = set0;
		jr->last_rows[1] = set1;
	}
	/* ip_flags and frag_offset are left out when they would be empty / 0 */
	if (sl_has(r, SL_F_IP_FRAG)) {
		uint64_t v = r->v[SL_F_IP_FRAG].u64;

		if (!(v & (SL_FRAG_DF | SL_FRAG_MF | SL_FRAG_CE))) {
			clear0 |= jr->ipflags_row[0];
			clear1 |= jr->ipflags_row[1];
		}
		if (!(v & 0xffff)) {
			clear0 |= jr->fragoff_row[0];
			clear1 |= jr->fragoff_row[1];
		}
	}
	rows[0] = set0 & ~clear0;
	rows[1] = set1 & ~clear1;
}

void sl_json_hex_str(struct sl_fmt_buf *b, const struct sl_bytes *v)
{
	sl_fmt_chr(b, '"');
	sl_fmt_hexbytes(b, v->ptr, v->len, 0);
	sl_fmt_chr(b, '"');
}

void sl_json_typed_value(struct sl_fmt_buf *b, enum sl_type type, const union sl_value *v,
			 struct sl_fmt_time_cache *tc, bool v6)
{
	switch (type) {
	case SL_T_U64:
		sl_fmt_u64(b, v->u64);
		break;
	case SL_T_STRING:
		sl_fmt_json_str(b, v->bytes.ptr, v->bytes.len);
		break;
	case SL_T_BYTES:
		sl_json_hex_str(b, &v->bytes);
		break;
	case SL_T_ADDR:
		sl_fmt_chr(b, '"');
		sl_fmt_addr_in(b, v->addr, v6);
		sl_fmt_chr(b, '"');
		break;
	case SL_T_MAC:
		sl_fmt_chr(b, '"');
		sl_fmt_mac(b, v->addr);
		sl_fmt_chr(b, '"');
		break;
	case SL_T_TIME:
		sl_fmt_chr(b, '"');
		sl_fmt_rfc3339(b, tc, v->time);
		sl_fmt_chr(b, '"');
		break;
	}
}
