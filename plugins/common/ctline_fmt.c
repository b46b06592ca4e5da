/* SPDX-License-Identifier: GPL-2.0-or-later */
/* conntrack -E's line for a connection record: see ctline_fmt.h. */
#include "ctline_fmt.h"
#include "names.h"

#define CT_AF_INET 2
#define CT_AF_INET6 10

/* IPS_* status bits that change the text. */
#define CT_IPS_SEEN_REPLY (1u << 1)
#define CT_IPS_ASSURED (1u << 2)
#define CT_IPS_OFFLOAD (1u << 14)
#define CT_IPS_HW_OFFLOAD (1u << 15)

bool sl_ctline_applies(const struct sl_record *r)
{
	if (sl_has(r, SL_F_PACKET))
		return false;
	return sl_has(r, SL_F_CT_EVENT) || (sl_has(r, SL_F_ORIG_SRC) && sl_has(r, SL_F_ORIG_DST));
}

static const char *proto_name(uint64_t p)
{
	const char *n = sl_proto_name(p, SL_PROTO_CONNTRACK);

	return n ? n : "unknown";
}

/* "%-8s %u " */
static void name_num(struct sl_fmt_buf *b, const char *name, uint64_t num)
{
	size_t n = strlen(name);

	sl_fmt_mem(b, name, n);
	for (; n < 8; n++)
		sl_fmt_chr(b, ' ');
	sl_fmt_chr(b, ' ');
	sl_fmt_u64(b, num);
	sl_fmt_chr(b, ' ');
}

static void addr(struct sl_fmt_buf *b, const uint8_t a[16], bool v6)
{
	if (v6)
		sl_fmt_ip6(b, a);
	else
		sl_fmt_addr(b, a);
}

static uint64_t u64_or0(const struct sl_record *r, sl_field f)
{
	return sl_has(r, f) ? r->v[f].u64 : 0;
}

/* __snprintf_address + __snprintf_proto for one direction. */
static void tuple(struct sl_fmt_buf *b, const struct sl_record *r, sl_field src, sl_field dst, sl_field sport,
		  sl_field dport, uint64_t proto, bool v6)
{
	uint64_t sp = u64_or0(r, sport), dp = u64_or0(r, dport);

	sl_fmt_lit(b, "src=");
	addr(b, r->v[src].addr, v6);
	sl_fmt_lit(b, " dst=");
	addr(b, r->v[dst].addr, v6);
	sl_fmt_chr(b, ' ');
	switch (proto) {
	case 6: case 17: case 136: case 132: case 33:
		sl_fmt_lit(b, "sport=");
		sl_fmt_u64(b, sp);
		sl_fmt_lit(b, " dport=");
		sl_fmt_u64(b, dp);
		sl_fmt_chr(b, ' ');
		break;
	case 47:
		sl_fmt_lit(b, "srckey=0x");
		sl_fmt_hex(b, sp, 1, false);
		sl_fmt_lit(b, " dstkey=0x");
		sl_fmt_hex(b, dp, 1, false);
		sl_fmt_chr(b, ' ');
		break;
	case 1: case 58:
		sl_fmt_lit(b, "type=");
		sl_fmt_u64(b, dp >> 8 & 0xff);
		sl_fmt_lit(b, " code=");
		sl_fmt_u64(b, dp & 0xff);
		sl_fmt_lit(b, " id=");
		sl_fmt_u64(b, sp);
		sl_fmt_chr(b, ' ');
		break;
	default:
		break;
	}
}

static void counters(struct sl_fmt_buf *b, const struct sl_record *r, sl_field pk, sl_field by)
{
	if (!sl_has(r, pk) || !sl_has(r, by))
		return;
	sl_fmt_lit(b, "packets=");
	sl_fmt_u64(b, r->v[pk].u64);
	sl_fmt_lit(b, " bytes=");
	sl_fmt_u64(b, r->v[by].u64);
	sl_fmt_chr(b, ' ');
}

static void kv(struct sl_fmt_buf *b, const char *key, size_t klen, uint64_t v)
{
	sl_fmt_mem(b, key, klen);
	sl_fmt_u64(b, v);
	sl_fmt_chr(b, ' ');
}
#define KV(b, lit, v) kv((b), "" lit, sizeof(lit) - 1, (v))

void sl_ctline_format(struct sl_fmt_buf *b, const struct sl_record *r, const struct sl_ctline_fields *f,
		      unsigned flags)
{
	uint64_t proto = u64_or0(r, SL_F_IP_PROTO), fam = u64_or0(r, SL_F_FAMILY);
	bool v6 = fam == CT_AF_INET6;
	bool has_status = sl_has(r, SL_F_CT_STATUS);
	uint64_t status = u64_or0(r, SL_F_CT_STATUS);

	if (flags & SL_CTLINE_TIMESTAMP) {
		const struct sl_time *t = sl_has(r, SL_F_TIMESTAMP) ? &r->v[SL_F_TIMESTAMP].time
					  : sl_has(r, SL_F_FLOW_END) ? &r->v[SL_F_FLOW_END].time
					  : NULL;
		uint64_t sec = t && t->sec > 0 ? (uint64_t)t->sec : 0, usec = t ? t->nsec / 1000 : 0;

		/* "[%-.8ld.%-.6ld]\t": at least 8 and exactly 6 digits */
		sl_fmt_chr(b, '[');
		for (uint64_t m = 10000000; m > 1 && sec < m; m /= 10)
			sl_fmt_chr(b, '0');
		sl_fmt_u64(b, sec);
		sl_fmt_chr(b, '.');
		for (uint64_t m = 100000; m > 1 && usec < m; m /= 10)
			sl_fmt_chr(b, '0');
		sl_fmt_u64(b, usec);
		sl_fmt_lit(b, "]\t");
	}
	if (sl_has(r, SL_F_CT_EVENT)) {
		uint64_t ev = r->v[SL_F_CT_EVENT].u64;

		/* "%9s " */
		if (ev & SL_CT_EVENT_DESTROY)
			sl_fmt_lit(b, "[DESTROY] ");
		else if (ev & SL_CT_EVENT_NEW)
			sl_fmt_lit(b, "    [NEW] ");
		else if (ev & SL_CT_EVENT_UPDATE)
			sl_fmt_lit(b, " [UPDATE] ");
	}
	if (flags & SL_CTLINE_EXTENDED)
		name_num(b, fam == CT_AF_INET || v6 ? sl_family_name(fam) : "unknown", fam);
	name_num(b, proto_name(proto), proto);
	if (f->timeout >= 0 && sl_has(r, (sl_field)f->timeout))
		KV(b, "", r->v[f->timeout].u64);
	if (sl_has(r, SL_F_TCP_STATE)) {
		uint64_t s = r->v[SL_F_TCP_STATE].u64;

		sl_fmt_str(b, sl_tcp_state_upper(s < SL_TCP_STATES ? s : 0));
		sl_fmt_chr(b, ' ');
	}
	if (sl_has(r, SL_F_ORIG_SRC) && sl_has(r, SL_F_ORIG_DST))
		tuple(b, r, SL_F_ORIG_SRC, SL_F_ORIG_DST, SL_F_ORIG_SPORT, SL_F_ORIG_DPORT, proto, v6);
	counters(b, r, SL_F_ORIG_PACKETS, SL_F_ORIG_BYTES);
	if (has_status && !(status & CT_IPS_SEEN_REPLY))
		sl_fmt_lit(b, "[UNREPLIED] ");
	/* A flow record has no reply tuple: its zero reply counters are left out too. */
	if (sl_has(r, SL_F_REPLY_SRC) && sl_has(r, SL_F_REPLY_DST)) {
		tuple(b, r, SL_F_REPLY_SRC, SL_F_REPLY_DST, SL_F_REPLY_SPORT, SL_F_REPLY_DPORT, proto, v6);
		counters(b, r, SL_F_REPLY_PACKETS, SL_F_REPLY_BYTES);
	}
	if (has_status) {
		if (status & CT_IPS_HW_OFFLOAD)
			sl_fmt_lit(b, "[HW_OFFLOAD] ");
		else if (status & CT_IPS_OFFLOAD)
			sl_fmt_lit(b, "[OFFLOAD] ");
		else if (status & CT_IPS_ASSURED)
			sl_fmt_lit(b, "[ASSURED] ");
	}
	if (sl_has(r, SL_F_MARK))
		KV(b, "mark=", r->v[SL_F_MARK].u64 & 0xffffffffu);
	if (sl_has(r, SL_F_CT_ZONE))
		KV(b, "zone=", r->v[SL_F_CT_ZONE].u64);
	if (sl_has(r, SL_F_FLOW_START)) {
		/* whole seconds of each, subtracted (time_t arithmetic, printed %llu) */
		int64_t stop = sl_has(r, SL_F_FLOW_END) ? r->v[SL_F_FLOW_END].time.sec
			       : sl_has(r, SL_F_TIMESTAMP) ? r->v[SL_F_TIMESTAMP].time.sec
			       : r->v[SL_F_FLOW_START].time.sec;

		KV(b, "delta-time=", (uint64_t)(stop - r->v[SL_F_FLOW_START].time.sec));
	}
	if ((flags & SL_CTLINE_ID) && sl_has(r, SL_F_CT_ID))
		KV(b, "id=", r->v[SL_F_CT_ID].u64 & 0xffffffffu);
	/* "Delete the last blank space" */
	if (!b->overflow && b->len && b->p[b->len - 1] == ' ')
		b->len--;
	if (f->portid >= 0 && sl_has(r, (sl_field)f->portid) && r->v[f->portid].u64) {
		sl_fmt_lit(b, " [USERSPACE] portid=");
		sl_fmt_u64(b, r->v[f->portid].u64);
	}
}
