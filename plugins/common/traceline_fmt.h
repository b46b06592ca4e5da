/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The line `nft monitor trace` prints for a trace record of the nftrace
 * input, built from the record's fields (decoded packet fields for the
 * "packet:" line):
 *
 *   trace id 3a9c0f12 inet filter input packet: iif "veth0" ip saddr 10.0.0.1 ... tcp dport 22
 *   trace id 3a9c0f12 inet filter input rule [ ... ] comment "ssh" # handle 5 (verdict accept)
 *   trace id 3a9c0f12 inet filter input policy drop
 *
 * Differences from nft: the rule is libnftnl's text of it (nft_rules.h),
 * the packet line names the fields decode found (not nft's every header
 * field, no raw @ll/@th dumps), the rule's handle is always printed (as
 * with nft -a), and no line ends with a space.
 */
#ifndef SLUICE_TRACELINE_FMT_H
#define SLUICE_TRACELINE_FMT_H

#include <stdbool.h>

#include <sluice/plugin.h>
#include <sluice/record.h>

#include "fmt.h"

/* Ids of nftrace's registered fields (-1: not configured). */
struct sl_traceline_fields {
	int id, table, chain, handle, type, verdict, jump, rule;
};

/* The ids of those fields, looked up by the names nftrace registers them with. */
struct sl_traceline_fields sl_traceline_fields_lookup(const struct sl_host *host, struct sl_instance *inst);

/* Whether r is a trace record (it has a trace_id). */
static inline bool sl_traceline_applies(const struct sl_record *r, const struct sl_traceline_fields *f)
{
	return f->id >= 0 && f->type >= 0 && sl_has(r, (sl_field)f->id) && sl_has(r, (sl_field)f->type);
}

/* Append the line (no newline); b->overflow when it did not fit. */
void sl_traceline_format(struct sl_fmt_buf *b, const struct sl_record *r, const struct sl_traceline_fields *f);

#endif
