/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nft monitor trace lines (see traceline_fmt.h). */
#include "traceline_fmt.h"

#include <string.h>

/* nft's family words (family2str), by NFPROTO_*. */
static const char *const families[] = {
	[1] = "inet", [2] = "ip", [3] = "arp", [5] = "netdev", [7] = "bridge", [10] = "ip6",
};

static const char *const icmp_types[] = {
	[0] = "echo-reply", [3] = "destination-unreachable", [4] = "source-quench",
	[5] = "redirect", [8] = "echo-request", [9] = "router-advertisement",
	[10] = "router-solicitation", [11] = "time-exceeded", [12] = "parameter-problem",
	[13] = "timestamp-request", [14] = "timestamp-reply", [15] = "info-request",
	[16] = "info-reply", [17] = "address-mask-request", [18] = "address-mask-reply",
};

static const char *const icmp6_types[] = {
	[1] = "destination-unreachable", [2] = "packet-too-big", [3] = "time-exceeded",
	[4] = "parameter-problem", [128] = "echo-request", [129] = "echo-reply",
	[130] = "mld-listener-query", [131] = "mld-listener-report", [132] = "mld-listener-done",
	[133] = "nd-router-solicit", [134] = "nd-router-advert", [135] = "nd-neighbor-solicit",
	[136] = "nd-neighbor-advert", [137] = "nd-redirect",
};

static const char *const protocols[] = {[1] = "icmp", [6] = "tcp", [17] = "udp", [58] = "ipv6-icmp"};

static const char *const tcp_flags[] = {"fin", "syn", "rst", "psh", "ack", "urg", "ecn", "cwr"};

static bool has(const struct sl_record *r, int f)
{
	return f >= 0 && sl_has(r, (sl_field)f);
}

static void str_field(struct sl_fmt_buf *b, const struct sl_record *r, int f)
{
	sl_fmt_mem(b, r->v[f].bytes.ptr, r->v[f].bytes.len);
}

/* " name " when the record has field f: false (nothing written) when not */
static bool kv_key(struct sl_fmt_buf *b, const struct sl_record *r, sl_field f, const char *name)
{
	if (!sl_has(r, f))
		return false;
	sl_fmt_chr(b, ' ');
	sl_fmt_str(b, name);
	sl_fmt_chr(b, ' ');
	return true;
}

/* " name N" when the record has field f */
static void u64_kv(struct sl_fmt_buf *b, const struct sl_record *r, sl_field f, const char *name)
{
	if (kv_key(b, r, f, name))
		sl_fmt_u64(b, r->v[f].u64);
}

static void addr_kv(struct sl_fmt_buf *b, const struct sl_record *r, sl_field f, const char *name)
{
	if (kv_key(b, r, f, name))
		sl_fmt_addr_in(b, r->v[f].addr, sl_fmt_rec_v6(r));
}

static void ifname(struct sl_fmt_buf *b, const struct sl_record *r, sl_field name, sl_field index,
		   const char *key)
{
	sl_fmt_chr(b, ' ');
	sl_fmt_str(b, key);
	if (sl_has(r, name)) {
		sl_fmt_lit(b, " \"");
		str_field(b, r, name);
		sl_fmt_chr(b, '"');
	} else {
		sl_fmt_chr(b, ' ');
		sl_fmt_u64(b, r->v[index].u64);
	}
}

static void type_name(struct sl_fmt_buf *b, const char *const *names, size_t n, uint64_t t)
{
	if (t < n && names[t])
		sl_fmt_str(b, names[t]);
	else
		sl_fmt_u64(b, t);
}

static void l4(struct sl_fmt_buf *b, const struct sl_record *r)
{
	uint64_t p = r->v[SL_F_IP_PROTO].u64;

	if (p == 6 || p == 17) {
		const char *n = p == 6 ? "tcp" : "udp";

		if (sl_has(r, SL_F_SPORT)) {
			sl_fmt_chr(b, ' ');
			sl_fmt_str(b, n);
			sl_fmt_lit(b, " sport ");
			sl_fmt_u64(b, r->v[SL_F_SPORT].u64);
		}
		if (sl_has(r, SL_F_DPORT)) {
			sl_fmt_chr(b, ' ');
			sl_fmt_str(b, n);
			sl_fmt_lit(b, " dport ");
			sl_fmt_u64(b, r->v[SL_F_DPORT].u64);
		}
	}
	if (p == 6 && sl_has(r, SL_F_TCP_FLAGS)) {
		uint64_t fl = r->v[SL_F_TCP_FLAGS].u64 & 0xff;
		bool first = true;

		sl_fmt_lit(b, " tcp flags == ");
		for (unsigned i = 0; i < 8; i++) {
			if (!(fl & (1u << i)))
				continue;
			if (!first)
				sl_fmt_lit(b, " | ");
			sl_fmt_str(b, tcp_flags[i]);
			first = false;
		}
		if (first)
			sl_fmt_lit(b, "0x0");
		u64_kv(b, r, SL_F_TCP_WINDOW, "tcp window");
	}
	if (p == 17)
		u64_kv(b, r, SL_F_UDP_LEN, "udp length");
	if ((p == 1 || p == 58) && sl_has(r, SL_F_ICMP_TYPE)) {
		bool v6 = p == 58;

		sl_fmt_str(b, v6 ? " icmpv6 type " : " icmp type ");
		if (v6)
			type_name(b, icmp6_types, sizeof(icmp6_types) / sizeof(icmp6_types[0]),
				  r->v[SL_F_ICMP_TYPE].u64);
		else
			type_name(b, icmp_types, sizeof(icmp_types) / sizeof(icmp_types[0]),
				  r->v[SL_F_ICMP_TYPE].u64);
		u64_kv(b, r, SL_F_ICMP_CODE, v6 ? "icmpv6 code" : "icmp code");
		u64_kv(b, r, SL_F_ICMP_ID, v6 ? "icmpv6 id" : "icmp id");
		u64_kv(b, r, SL_F_ICMP_SEQ, v6 ? "icmpv6 sequence" : "icmp sequence");
	}
}

/* "iif "lo" ip saddr ... tcp dport 22": what decode found, in nft's words */
static void packet(struct sl_fmt_buf *b, const struct sl_record *r)
{
	bool v6 = sl_has(r, SL_F_IP_VERSION) && r->v[SL_F_IP_VERSION].u64 == 6;
	const char *ip = v6 ? "ip6" : "ip";

	sl_fmt_lit(b, "packet:");
	if (sl_has(r, SL_F_IFINDEX_IN))
		ifname(b, r, SL_F_IFNAME_IN, SL_F_IFINDEX_IN, "iif");
	if (sl_has(r, SL_F_IFINDEX_OUT))
		ifname(b, r, SL_F_IFNAME_OUT, SL_F_IFINDEX_OUT, "oif");
	if (sl_has(r, SL_F_HWHDR) && sl_has(r, SL_F_MAC_SRC) && sl_has(r, SL_F_MAC_DST) &&
	    (!sl_has(r, SL_F_HWTYPE) || r->v[SL_F_HWTYPE].u64 == 1)) {
		sl_fmt_lit(b, " ether saddr ");
		sl_fmt_mac(b, r->v[SL_F_MAC_SRC].addr);
		sl_fmt_lit(b, " ether daddr ");
		sl_fmt_mac(b, r->v[SL_F_MAC_DST].addr);
	}
	if (!sl_has(r, SL_F_IP_VERSION))
		return;
	addr_kv(b, r, SL_F_SRC_ADDR, v6 ? "ip6 saddr" : "ip saddr");
	addr_kv(b, r, SL_F_DST_ADDR, v6 ? "ip6 daddr" : "ip daddr");
	u64_kv(b, r, SL_F_IP_TTL, v6 ? "ip6 hoplimit" : "ip ttl");
	if (!v6)
		u64_kv(b, r, SL_F_IP_ID, "ip id");
	if (sl_has(r, SL_F_IP_PROTO)) {
		sl_fmt_chr(b, ' ');
		sl_fmt_str(b, ip);
		sl_fmt_str(b, v6 ? " nexthdr " : " protocol ");
		type_name(b, protocols, sizeof(protocols) / sizeof(protocols[0]), r->v[SL_F_IP_PROTO].u64);
	}
	if (sl_has(r, SL_F_IP_LEN))
		u64_kv(b, r, SL_F_IP_LEN, v6 ? "ip6 length" : "ip length");
	if (sl_has(r, SL_F_IP_PROTO))
		l4(b, r);
}

void sl_traceline_format(struct sl_fmt_buf *b, const struct sl_record *r, const struct sl_traceline_fields *f)
{
	uint64_t fam = sl_has(r, SL_F_FAMILY) ? r->v[SL_F_FAMILY].u64 : 0;
	const struct sl_bytes *type = &r->v[f->type].bytes;

	sl_fmt_lit(b, "trace id ");
	sl_fmt_hex(b, r->v[f->id].u64, 8, false);
	sl_fmt_chr(b, ' ');
	if (fam < sizeof(families) / sizeof(families[0]) && families[fam])
		sl_fmt_str(b, families[fam]);
	else
		sl_fmt_u64(b, fam);
	sl_fmt_chr(b, ' ');
	if (has(r, f->table)) {
		str_field(b, r, f->table);
		sl_fmt_chr(b, ' ');
	}
	if (has(r, f->chain)) {
		str_field(b, r, f->chain);
		sl_fmt_chr(b, ' ');
	}
	if (type->len == 6 && !memcmp(type->ptr, "packet", 6)) {
		packet(b, r);
		return;
	}
	if (type->len == 4 && !memcmp(type->ptr, "rule", 4)) {
		sl_fmt_lit(b, "rule ");
		if (has(r, f->rule)) {
			str_field(b, r, f->rule);
		} else {
			sl_fmt_lit(b, "unknown rule handle ");
			sl_fmt_u64(b, has(r, f->handle) ? r->v[f->handle].u64 : 0);
		}
		/* as nft -a monitor trace: which rule, whatever its text */
		if (has(r, f->rule) && has(r, f->handle)) {
			sl_fmt_lit(b, " # handle ");
			sl_fmt_u64(b, r->v[f->handle].u64);
		}
		sl_fmt_lit(b, " (verdict ");
		if (has(r, f->verdict))
			str_field(b, r, f->verdict);
		if (has(r, f->jump)) {
			sl_fmt_chr(b, ' ');
			str_field(b, r, f->jump);
		}
		sl_fmt_chr(b, ')');
		return;
	}
	/* policy and return: nft says "policy accept", "verdict continue" */
	if (type->len == 6 && !memcmp(type->ptr, "policy", 6))
		sl_fmt_lit(b, "policy ");
	else
		sl_fmt_lit(b, "verdict ");
	if (has(r, f->verdict))
		str_field(b, r, f->verdict);
	if (sl_has(r, SL_F_MARK) && r->v[SL_F_MARK].u64) {
		sl_fmt_lit(b, " meta mark 0x");
		sl_fmt_hex(b, r->v[SL_F_MARK].u64, 8, false);
	}
}

struct sl_traceline_fields sl_traceline_fields_lookup(const struct sl_host *host, struct sl_instance *inst)
{
	return (struct sl_traceline_fields){
		.id = host->field_id(inst, "trace_id"),
		.table = host->field_id(inst, "nft_table"),
		.chain = host->field_id(inst, "nft_chain"),
		.handle = host->field_id(inst, "rule_handle"),
		.type = host->field_id(inst, "trace_type"),
		.verdict = host->field_id(inst, "verdict"),
		.jump = host->field_id(inst, "jump_target"),
		.rule = host->field_id(inst, "rule_text"),
	};
}
