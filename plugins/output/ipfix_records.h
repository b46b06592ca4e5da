/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ipfix output's templates and data records (RFC 7011).
 *
 * A template per address family and set of optional fields a record
 * carries (the G_* bits of its index: counters per direction, TCP flags,
 * interfaces, NAT translation, end reason, TOS), so a record never
 * exports a field it does not have as a fake zero.  Index idx (IPv6:
 * G_ALL + 1 + mask) has id TEMPLATE_ID_BASE + idx and always the same
 * fields: an id means one template for the process's whole life.
 *
 * Counters: octetDeltaCount/packetDeltaCount (1, 2) carry the original
 * direction, postOctetDeltaCount/postPacketDeltaCount (23, 24) the reply
 * direction, all 64-bit.  nfdump decodes 23/24 as "out" bytes/packets;
 * it does not tell RFC 5103 reverse elements (PEN 29305) from the forward
 * ones, so those are not used.
 */
#ifndef SLUICE_IPFIX_RECORDS_H
#define SLUICE_IPFIX_RECORDS_H

#include <stdbool.h>
#include <stdint.h>

#include <sluice/plugin.h>

#define TEMPLATE_ID_BASE 256

/* Optional groups of fields: bits of a template's mask. */
enum {
	G_OCOUNT = 1u << 0,	/* original direction bytes/packets */
	G_RCOUNT = 1u << 1,	/* reply direction bytes/packets */
	G_TCPFLAGS = 1u << 2,
	G_IFIN = 1u << 3,
	G_IFOUT = 1u << 4,
	G_NAT = 1u << 5,
	G_ENDREASON = 1u << 6,
	G_TOS = 1u << 7,	/* ip_tos: a flow filter's record has it, conntrack's not */
	G_ALL = (1u << 8) - 1,
};
#define NTEMPLATES (2 * (G_ALL + 1))	/* IPv4 and IPv6 */
#define MAX_TEMPLATE_FIELDS 24

struct ipfix_tmpl {
	bool built;
	uint16_t id;
	uint16_t reclen;	/* bytes of one data record */
	uint16_t speclen;	/* bytes of the template record */
	int64_t sent_ms;	/* monotonic; 0: must be sent */
	uint8_t spec[4 + 4 * MAX_TEMPLATE_FIELDS];
};

static inline uint8_t *ipfix_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return p + 2;
}

static inline uint8_t *ipfix_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

static inline uint8_t *ipfix_put64(uint8_t *p, uint64_t v)
{
	ipfix_put32(p, (uint32_t)(v >> 32));
	return ipfix_put32(p + 4, (uint32_t)v);
}

/* Template idx's template record into t (id, fields, data record length). */
void ipfix_template_build(struct ipfix_tmpl *t, unsigned idx);
/* The index of the template record r needs (v6: either address is IPv6). */
unsigned ipfix_template_index(const struct sl_record *r, bool v6);
/*
 * Record r as a data record of template idx at p (reclen bytes).  A
 * record without times gets `now`.
 */
void ipfix_record_put(uint8_t *p, const struct sl_record *r, unsigned idx,
		      const struct sl_time *now);

#endif /* SLUICE_IPFIX_RECORDS_H */
