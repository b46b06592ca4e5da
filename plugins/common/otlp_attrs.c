/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A record's fields as OTLP log attributes: see otlp_attrs.h. */
#include <string.h>

#include "fmt.h"
#include "names.h"
#include "otlp_attrs.h"

enum akind {
	A_INT,		/* int_value */
	A_STR,		/* string_value, the field's bytes */
	A_BYTES,	/* bytes_value */
	A_ADDR,		/* string_value, as json writes it */
	A_MAC,		/* string_value aa:bb:cc:dd:ee:ff */
	A_PROTO,	/* string_value: json's protocol name, else the number */
	A_IPVER,	/* string_value ipv4 / ipv6 (network.type) */
	A_IFINDEX,	/* int_value, only without the name field `aux` */
};

/*
 * The attributes, in this order: X(field, kind, aux, name).  Keep
 * docs/PLUGINS.md's otlp table in step.
 */
#define OTLP_ATTRS(X) \
	X(SL_F_SRC_ADDR, A_ADDR, 0, "source.address") \
	X(SL_F_SPORT, A_INT, 0, "source.port") \
	X(SL_F_DST_ADDR, A_ADDR, 0, "destination.address") \
	X(SL_F_DPORT, A_INT, 0, "destination.port") \
	X(SL_F_IP_PROTO, A_PROTO, 0, "network.transport") \
	X(SL_F_IP_VERSION, A_IPVER, 0, "network.type") \
	X(SL_F_IFNAME_IN, A_STR, 0, "network.interface.name") \
	X(SL_F_PREFIX, A_STR, 0, "netfilter.prefix") \
	X(SL_F_NFLOG_GROUP, A_INT, 0, "netfilter.group") \
	X(SL_F_HOOK, A_INT, 0, "netfilter.hook") \
	X(SL_F_IFINDEX_IN, A_IFINDEX, SL_F_IFNAME_IN, "netfilter.ifindex_in") \
	X(SL_F_IFNAME_OUT, A_STR, 0, "netfilter.out") \
	X(SL_F_IFINDEX_OUT, A_IFINDEX, SL_F_IFNAME_OUT, "netfilter.ifindex_out") \
	X(SL_F_PHYSNAME_IN, A_STR, 0, "netfilter.physin") \
	X(SL_F_PHYSINDEX_IN, A_IFINDEX, SL_F_PHYSNAME_IN, "netfilter.physindex_in") \
	X(SL_F_PHYSNAME_OUT, A_STR, 0, "netfilter.physout") \
	X(SL_F_PHYSINDEX_OUT, A_IFINDEX, SL_F_PHYSNAME_OUT, "netfilter.physindex_out") \
	X(SL_F_MARK, A_INT, 0, "netfilter.mark") \
	X(SL_F_UID, A_INT, 0, "netfilter.uid") \
	X(SL_F_GID, A_INT, 0, "netfilter.gid") \
	X(SL_F_MAC_SRC, A_MAC, 0, "netfilter.mac_src") \
	X(SL_F_MAC_DST, A_MAC, 0, "netfilter.mac_dst") \
	X(SL_F_ETH_TYPE, A_INT, 0, "netfilter.eth_type") \
	X(SL_F_VLAN_ID, A_INT, 0, "netfilter.vlan") \
	X(SL_F_IP_LEN, A_INT, 0, "netfilter.len") \
	X(SL_F_IP_TOS, A_INT, 0, "netfilter.tos") \
	X(SL_F_IP_TTL, A_INT, 0, "netfilter.ttl") \
	X(SL_F_IP_ID, A_INT, 0, "netfilter.ip_id") \
	X(SL_F_IP6_FLOWLABEL, A_INT, 0, "netfilter.flowlabel") \
	X(SL_F_IP_OPTIONS, A_BYTES, 0, "netfilter.ip_options") \
	X(SL_F_TCP_FLAGS, A_INT, 0, "netfilter.tcp_flags") \
	X(SL_F_TCP_SEQ, A_INT, 0, "netfilter.tcp_seq") \
	X(SL_F_TCP_ACK, A_INT, 0, "netfilter.tcp_ack") \
	X(SL_F_TCP_WINDOW, A_INT, 0, "netfilter.tcp_window") \
	X(SL_F_TCP_URGP, A_INT, 0, "netfilter.tcp_urgp") \
	X(SL_F_TCP_OPTIONS, A_BYTES, 0, "netfilter.tcp_options") \
	X(SL_F_UDP_LEN, A_INT, 0, "netfilter.udp_len") \
	X(SL_F_ICMP_TYPE, A_INT, 0, "netfilter.icmp_type") \
	X(SL_F_ICMP_CODE, A_INT, 0, "netfilter.icmp_code") \
	X(SL_F_ICMP_ID, A_INT, 0, "netfilter.icmp_id") \
	X(SL_F_ICMP_SEQ, A_INT, 0, "netfilter.icmp_seq") \
	X(SL_F_ICMP_MTU, A_INT, 0, "netfilter.icmp_mtu") \
	X(SL_F_ICMP_GATEWAY, A_ADDR, 0, "netfilter.icmp_gateway") \
	X(SL_F_ICMP_PARAM, A_INT, 0, "netfilter.icmp_param") \
	X(SL_F_IPSEC_SPI, A_INT, 0, "netfilter.spi") \
	X(SL_F_ARP_OP, A_INT, 0, "netfilter.arp_op") \
	X(SL_F_ARP_SHA, A_MAC, 0, "netfilter.arp_sha") \
	X(SL_F_ARP_SPA, A_ADDR, 0, "netfilter.arp_spa") \
	X(SL_F_ARP_THA, A_MAC, 0, "netfilter.arp_tha") \
	X(SL_F_ARP_TPA, A_ADDR, 0, "netfilter.arp_tpa") \
	X(SL_F_ORIG_LEN, A_INT, 0, "netfilter.pktlen") \
	X(SL_F_CAPLEN, A_INT, 0, "netfilter.caplen") \
	X(SL_F_SEQ_LOCAL, A_INT, 0, "netfilter.seq_local") \
	X(SL_F_SEQ_GLOBAL, A_INT, 0, "netfilter.seq_global") \
	X(SL_F_CT_ID, A_INT, 0, "netfilter.ct_id") \
	X(SL_F_CT_STATE, A_INT, 0, "netfilter.ct_state") \
	X(SL_F_CT_STATUS, A_INT, 0, "netfilter.ct_status") \
	X(SL_F_CT_ZONE, A_INT, 0, "netfilter.ct_zone") \
	X(SL_F_ORIG_SRC, A_ADDR, 0, "netfilter.orig_src_ip") \
	X(SL_F_ORIG_DST, A_ADDR, 0, "netfilter.orig_dest_ip") \
	X(SL_F_ORIG_SPORT, A_INT, 0, "netfilter.orig_src_port") \
	X(SL_F_ORIG_DPORT, A_INT, 0, "netfilter.orig_dest_port") \
	X(SL_F_REPLY_SRC, A_ADDR, 0, "netfilter.reply_src_ip") \
	X(SL_F_REPLY_DST, A_ADDR, 0, "netfilter.reply_dest_ip") \
	X(SL_F_REPLY_SPORT, A_INT, 0, "netfilter.reply_src_port") \
	X(SL_F_REPLY_DPORT, A_INT, 0, "netfilter.reply_dest_port") \
	X(SL_F_ORIG_PACKETS, A_INT, 0, "netfilter.orig_packets") \
	X(SL_F_ORIG_BYTES, A_INT, 0, "netfilter.orig_bytes") \
	X(SL_F_REPLY_PACKETS, A_INT, 0, "netfilter.reply_packets") \
	X(SL_F_REPLY_BYTES, A_INT, 0, "netfilter.reply_bytes")

struct attr {
	sl_field id;
	uint8_t kind;
	sl_field aux;
	const char *key;
	uint8_t keylen;
};

#define ATTR_ROW(id, kind, aux, name) { id, kind, aux, name, sizeof(name) - 1 },
static const struct attr attrs[] = { OTLP_ATTRS(ATTR_ROW) };
#define N_ATTRS (sizeof(attrs) / sizeof(attrs[0]))
_Static_assert(N_ATTRS + SL_OTLP_RULE_ATTRS <= SL_OTLP_ATTRS_MAX, "otlp_attrs: SL_OTLP_ATTRS_MAX");

#define ATTR_FIELD(id, kind, aux, name) SL_FIELD_DECL(id),
const struct sl_field_decl sl_otlp_fields_read[] = {
	OTLP_ATTRS(ATTR_FIELD)
	SL_FIELD_DECL(SL_F_FAMILY),	/* sl_fmt_rec_v6() */
	SL_FIELD_DECL(SL_F_TEXT),	/* the body */
	SL_FIELD_DECL(SL_F_TIMESTAMP),	/* time_unix_nano */
	SL_FIELD_END
};

unsigned sl_otlp_record_attrs(const struct sl_record *r, struct sl_otlp_kv *kv, char *scratch)
{
	bool v6 = sl_fmt_rec_v6(r);
	unsigned n = 0;
	char *s = scratch;

	for (unsigned i = 0; i < N_ATTRS; i++) {
		const struct attr *a = &attrs[i];
		const union sl_value *v = &r->v[a->id];
		struct sl_otlp_kv *k = &kv[n];
		const char *name;

		if (!sl_has(r, a->id))
			continue;
		k->key = a->key;
		k->keylen = a->keylen;
		k->kind = OTLP_STR;
		switch (a->kind) {
		case A_IFINDEX:
			if (sl_has(r, a->aux))
				continue;
			/* fall through */
		case A_INT:
			k->kind = OTLP_INT;
			k->i = (int64_t)v->u64;
			break;
		case A_STR:
		case A_BYTES:
			k->kind = a->kind == A_STR ? OTLP_STR : OTLP_BYTES;
			k->s = v->bytes.ptr;
			k->n = v->bytes.len;
			break;
		case A_ADDR:
		case A_MAC:
			k->s = s;
			s = a->kind == A_ADDR ? sl_fmt_addr_in_raw(s, v->addr, v6) : sl_fmt_mac_raw(s, v->addr);
			k->n = (size_t)(s - (const char *)k->s);
			break;
		case A_PROTO:
			name = sl_proto_name(v->u64, SL_PROTO_JSON);
			k->s = name ? name : s;
			if (!name)
				s = sl_fmt_u64_raw(s, v->u64);
			k->n = name ? strlen(name) : (size_t)(s - (const char *)k->s);
			break;
		case A_IPVER:
			if (v->u64 != 4 && v->u64 != 6)
				continue;
			k->s = v->u64 == 4 ? "ipv4" : "ipv6";
			k->n = 4;
			break;
		}
		n++;
	}
	return n;
}

/* One string attribute from field id, when r has it. */
static unsigned rule_str(struct sl_otlp_kv *k, const struct sl_record *r, int id, const char *key)
{
	const struct sl_bytes *v = sl_rule_str(r, id);

	if (!v)
		return 0;
	k->key = key;
	k->keylen = strlen(key);
	k->kind = OTLP_STR;
	k->s = v->ptr;
	k->n = v->len;
	return 1;
}

unsigned sl_otlp_rule_attrs(const struct sl_rule_fields *f, const struct sl_record *r,
			    struct sl_otlp_kv *kv)
{
	unsigned n = 0;

	n += rule_str(&kv[n], r, f->family, "netfilter.rule_family");
	n += rule_str(&kv[n], r, f->table, "security_rule.ruleset.name");
	n += rule_str(&kv[n], r, f->chain, "netfilter.rule_chain");
	if (f->handle >= 0 && sl_has(r, (sl_field)f->handle)) {
		kv[n].key = "netfilter.rule_handle";
		kv[n].keylen = sizeof("netfilter.rule_handle") - 1;
		kv[n].kind = OTLP_INT;
		kv[n].i = (int64_t)r->v[f->handle].u64;
		n++;
	}
	n += rule_str(&kv[n], r, f->comment, "security_rule.name");
	n += rule_str(&kv[n], r, f->verdict, "netfilter.rule_verdict");
	return n;
}
