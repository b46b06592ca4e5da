/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ipfix output's templates and data records: see ipfix_records.h.
 */
#include <string.h>

#include <netinet/in.h>

#include "ipfix_records.h"
#include "time_clamp.h"

/* Information elements (IANA numbers). */
enum {
	IE_octetDeltaCount = 1,
	IE_packetDeltaCount = 2,
	IE_protocolIdentifier = 4,
	IE_ipClassOfService = 5,
	IE_tcpControlBits = 6,
	IE_sourceTransportPort = 7,
	IE_sourceIPv4Address = 8,
	IE_ingressInterface = 10,
	IE_destinationTransportPort = 11,
	IE_destinationIPv4Address = 12,
	IE_egressInterface = 14,
	IE_postOctetDeltaCount = 23,
	IE_postPacketDeltaCount = 24,
	IE_sourceIPv6Address = 27,
	IE_destinationIPv6Address = 28,
	IE_flowEndReason = 136,
	IE_flowStartMilliseconds = 152,
	IE_flowEndMilliseconds = 153,
	IE_postNATSourceIPv4Address = 225,
	IE_postNATDestinationIPv4Address = 226,
	IE_postNAPTSourceTransportPort = 227,
	IE_postNAPTDestinationTransportPort = 228,
	IE_postNATSourceIPv6Address = 281,
	IE_postNATDestinationIPv6Address = 282,
};

void ipfix_template_build(struct ipfix_tmpl *t, unsigned idx)
{
	bool v6 = idx > G_ALL;
	unsigned mask = idx & G_ALL;
	uint16_t n = 0, reclen = 0;
	uint8_t *p = t->spec + 4;

#define FIELD(ie, len)                           \
	do {                                     \
		p = ipfix_put16(p, (ie));              \
		p = ipfix_put16(p, (len));             \
		reclen = (uint16_t)(reclen + (len)); \
		n++;                             \
	} while (0)
	FIELD(v6 ? IE_sourceIPv6Address : IE_sourceIPv4Address, v6 ? 16 : 4);
	FIELD(v6 ? IE_destinationIPv6Address : IE_destinationIPv4Address, v6 ? 16 : 4);
	FIELD(IE_protocolIdentifier, 1);
	FIELD(IE_sourceTransportPort, 2);
	FIELD(IE_destinationTransportPort, 2);
	FIELD(IE_flowStartMilliseconds, 8);
	FIELD(IE_flowEndMilliseconds, 8);
	if (mask & G_OCOUNT) {
		FIELD(IE_octetDeltaCount, 8);
		FIELD(IE_packetDeltaCount, 8);
	}
	if (mask & G_RCOUNT) {
		FIELD(IE_postOctetDeltaCount, 8);
		FIELD(IE_postPacketDeltaCount, 8);
	}
	if (mask & G_TCPFLAGS)
		FIELD(IE_tcpControlBits, 1);	/* reduced-size encoding (RFC 7011 6.2) */
	if (mask & G_IFIN)
		FIELD(IE_ingressInterface, 4);
	if (mask & G_IFOUT)
		FIELD(IE_egressInterface, 4);
	if (mask & G_NAT) {
		FIELD(v6 ? IE_postNATSourceIPv6Address : IE_postNATSourceIPv4Address, v6 ? 16 : 4);
		FIELD(v6 ? IE_postNATDestinationIPv6Address : IE_postNATDestinationIPv4Address,
		      v6 ? 16 : 4);
		FIELD(IE_postNAPTSourceTransportPort, 2);
		FIELD(IE_postNAPTDestinationTransportPort, 2);
	}
	if (mask & G_ENDREASON)
		FIELD(IE_flowEndReason, 1);
	if (mask & G_TOS)
		FIELD(IE_ipClassOfService, 1);	/* the whole byte, DSCP and ECN (RFC 7012) */
#undef FIELD
	t->id = (uint16_t)(TEMPLATE_ID_BASE + idx);
	ipfix_put16(t->spec, t->id);
	ipfix_put16(t->spec + 2, n);
	t->speclen = (uint16_t)(p - t->spec);
	t->reclen = reclen;
	t->built = true;
	t->sent_ms = 0;
}

/* dateTimeMilliseconds is unsigned: clamped as time_clamp.h says */
static uint64_t time_ms(const struct sl_time *t)
{
	return sl_time_ms_clamped(*t);
}

static bool is_icmp(uint64_t proto)
{
	return proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6;
}

/* IPFIX flowEndReason from SL_FLOW_END_*. */
static uint8_t end_reason(uint64_t r)
{
	switch (r) {
	case SL_FLOW_END_IDLE: return 1;	/* idle timeout */
	case SL_FLOW_END_ACTIVE: return 2;	/* active timeout */
	case SL_FLOW_END_DESTROY: return 3;	/* end of flow detected */
	case SL_FLOW_END_EOF: return 4;		/* forced end */
	case SL_FLOW_END_EVICTED: return 5;	/* lack of resources */
	}
	return 0;
}

/* The reply tuple says the connection was translated. */
static bool translated(const struct sl_record *r, bool v6)
{
	const uint8_t *rs, *rd;

	if (!sl_has(r, SL_F_REPLY_SRC) || !sl_has(r, SL_F_REPLY_DST))
		return false;
	rs = r->v[SL_F_REPLY_SRC].addr;
	rd = r->v[SL_F_REPLY_DST].addr;
	if (sl_addr_is_v4(rs) == v6 || sl_addr_is_v4(rd) == v6)
		return false;	/* NAT between families: no element for it */
	if (memcmp(rs, r->v[SL_F_ORIG_DST].addr, 16) || memcmp(rd, r->v[SL_F_ORIG_SRC].addr, 16))
		return true;
	if (sl_has(r, SL_F_REPLY_SPORT) && sl_has(r, SL_F_ORIG_DPORT) &&
	    r->v[SL_F_REPLY_SPORT].u64 != r->v[SL_F_ORIG_DPORT].u64)
		return true;
	if (sl_has(r, SL_F_REPLY_DPORT) && sl_has(r, SL_F_ORIG_SPORT) &&
	    r->v[SL_F_REPLY_DPORT].u64 != r->v[SL_F_ORIG_SPORT].u64)
		return true;
	return false;
}

static uint64_t u64_or(const struct sl_record *r, sl_field f, uint64_t dflt)
{
	return sl_has(r, f) ? r->v[f].u64 : dflt;
}

static uint8_t *put_addr(uint8_t *p, const uint8_t a[16], bool v6)
{
	if (v6) {
		memcpy(p, a, 16);
		return p + 16;
	}
	memcpy(p, a + 12, 4);
	return p + 4;
}

void ipfix_record_put(uint8_t *p, const struct sl_record *r, unsigned idx,
		      const struct sl_time *now)
{
	bool v6 = idx > G_ALL;
	unsigned mask = idx & G_ALL;
	uint64_t proto = u64_or(r, SL_F_IP_PROTO, 0), start, end, sport, dport;
	const struct sl_time *ts = sl_has(r, SL_F_TIMESTAMP) ? &r->v[SL_F_TIMESTAMP].time : now;

	/* a record without times gets the time it was made */
	end = sl_has(r, SL_F_FLOW_END) ? time_ms(&r->v[SL_F_FLOW_END].time) : time_ms(ts);
	start = sl_has(r, SL_F_FLOW_START) ? time_ms(&r->v[SL_F_FLOW_START].time) : end;
	sport = u64_or(r, SL_F_ORIG_SPORT, 0);
	dport = u64_or(r, SL_F_ORIG_DPORT, 0);
	if (is_icmp(proto))
		sport = 0;	/* NetFlow custom: type<<8|code in the destination port only */

	p = put_addr(p, r->v[SL_F_ORIG_SRC].addr, v6);
	p = put_addr(p, r->v[SL_F_ORIG_DST].addr, v6);
	*p++ = (uint8_t)proto;
	p = ipfix_put16(p, (uint16_t)sport);
	p = ipfix_put16(p, (uint16_t)dport);
	p = ipfix_put64(p, start);
	p = ipfix_put64(p, end);
	if (mask & G_OCOUNT) {
		p = ipfix_put64(p, u64_or(r, SL_F_ORIG_BYTES, 0));
		p = ipfix_put64(p, u64_or(r, SL_F_ORIG_PACKETS, 0));
	}
	if (mask & G_RCOUNT) {
		p = ipfix_put64(p, u64_or(r, SL_F_REPLY_BYTES, 0));
		p = ipfix_put64(p, u64_or(r, SL_F_REPLY_PACKETS, 0));
	}
	if (mask & G_TCPFLAGS)
		*p++ = (uint8_t)r->v[SL_F_FLOW_TCP_FLAGS].u64;
	if (mask & G_IFIN)
		p = ipfix_put32(p, (uint32_t)r->v[SL_F_IFINDEX_IN].u64);
	if (mask & G_IFOUT)
		p = ipfix_put32(p, (uint32_t)r->v[SL_F_IFINDEX_OUT].u64);
	if (mask & G_NAT) {
		/* the reply goes to the translated source, from the translated destination */
		p = put_addr(p, r->v[SL_F_REPLY_DST].addr, v6);
		p = put_addr(p, r->v[SL_F_REPLY_SRC].addr, v6);
		p = ipfix_put16(p, (uint16_t)u64_or(r, SL_F_REPLY_DPORT, sport));
		p = ipfix_put16(p, (uint16_t)u64_or(r, SL_F_REPLY_SPORT, dport));
	}
	if (mask & G_ENDREASON)
		*p++ = end_reason(r->v[SL_F_FLOW_END_REASON].u64);
	if (mask & G_TOS)
		*p++ = (uint8_t)r->v[SL_F_IP_TOS].u64;
}

unsigned ipfix_template_index(const struct sl_record *r, bool v6)
{
	unsigned mask = 0;

	if (sl_has(r, SL_F_ORIG_BYTES) || sl_has(r, SL_F_ORIG_PACKETS))
		mask |= G_OCOUNT;
	if (sl_has(r, SL_F_REPLY_BYTES) || sl_has(r, SL_F_REPLY_PACKETS))
		mask |= G_RCOUNT;
	if (sl_has(r, SL_F_FLOW_TCP_FLAGS))
		mask |= G_TCPFLAGS;
	if (sl_has(r, SL_F_IFINDEX_IN))
		mask |= G_IFIN;
	if (sl_has(r, SL_F_IFINDEX_OUT))
		mask |= G_IFOUT;
	if (translated(r, v6))
		mask |= G_NAT;
	if (sl_has(r, SL_F_FLOW_END_REASON) && end_reason(r->v[SL_F_FLOW_END_REASON].u64))
		mask |= G_ENDREASON;
	if (sl_has(r, SL_F_IP_TOS))
		mask |= G_TOS;
	return (v6 ? G_ALL + 1 : 0) + mask;
}
