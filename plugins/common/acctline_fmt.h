/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The line `nfacct list` prints for an extended accounting object (the
 * nfacct input's records), libnetfilter_acct's plain format:
 *
 *   { pkts = 00000000000000000004, bytes = 00000000000000000512 } = http;
 *   { pkts = 00000000000000000005, bytes = 00000000000000000640, quota = 00000000000000000003, mode = packet, overquota = yes } = q;
 *
 * the second for an object with a quota (nfacct add q packet 3).
 */
#ifndef SLUICE_ACCTLINE_FMT_H
#define SLUICE_ACCTLINE_FMT_H

#include <stdbool.h>

#include <sluice/plugin.h>
#include <sluice/record.h>

#include "fmt.h"

/* Ids of nfacct's registered fields (-1: not configured). */
struct sl_acctline_fields {
	int name, packets, bytes;
	int quota, quota_mode, overquota;	/* objects with a quota */
};

/* The field names nfacct registers (its provides and logline's needs_one_of). */
#define SL_ACCT_NAME "acct_name"
#define SL_ACCT_PACKETS "acct_packets"
#define SL_ACCT_BYTES "acct_bytes"
#define SL_ACCT_QUOTA "acct_quota"
#define SL_ACCT_QUOTA_MODE "acct_quota_mode"
#define SL_ACCT_OVERQUOTA "acct_overquota"

struct sl_acctline_fields sl_acctline_fields_lookup(const struct sl_host *host, struct sl_instance *inst);

/* Whether r is an accounting record (it has the three fields). */
static inline bool sl_acctline_applies(const struct sl_record *r, const struct sl_acctline_fields *f)
{
	return f->name >= 0 && f->packets >= 0 && f->bytes >= 0 && sl_has(r, (sl_field)f->name) &&
	       sl_has(r, (sl_field)f->packets) && sl_has(r, (sl_field)f->bytes);
}

/* Append the line (no newline); b->overflow when it did not fit. */
void sl_acctline_format(struct sl_fmt_buf *b, const struct sl_record *r, const struct sl_acctline_fields *f);

#endif
