/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: any bytes as the payload of one NFT_MSG_TRACE message
 * (nfgenmsg, then attributes).  sl_nftrace_parse() must never read outside
 * it; a parsed event becomes a trace record as nftrace makes them (its
 * headers as the packet), which is decoded and printed as its nft monitor
 * trace line.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nftrace_attrs.h"
#include "pkt_decode.h"
#include "traceline_fmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { F_ID = SL_F_WELL_KNOWN_COUNT, F_TABLE, F_CHAIN, F_HANDLE, F_TYPE, F_VERDICT, F_JUMP, F_RULE };

static void set_s(struct sl_record *r, int f, const char *s, uint32_t n)
{
	if (s)
		sl_set_bytes(r, (sl_field)f, s, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct sl_traceline_fields tf = {F_ID, F_TABLE, F_CHAIN, F_HANDLE,
						      F_TYPE, F_VERDICT, F_JUMP, F_RULE};
	static char line[4096];
	struct sl_record *r = calloc(1, sizeof(*r) + SL_MAX_FIELDS * sizeof(union sl_value));
	/* An exact-size copy, so reading past the end trips AddressSanitizer. */
	uint8_t *copy = malloc(size ? size : 1);
	struct sl_nftrace t;
	struct sl_fmt_buf fb;
	const char *name;

	if (!r || !copy)
		goto out;
	memcpy(copy, data, size);
	if (sl_nftrace_parse(&t, copy, size) < 0)
		goto out;
	sl_set_u64(r, SL_F_FAMILY, t.family);
	sl_set_u64(r, F_ID, t.id);
	set_s(r, F_TABLE, t.table.ptr, t.table.len);
	set_s(r, F_CHAIN, t.chain.ptr, t.chain.len);
	set_s(r, F_JUMP, t.jump.ptr, t.jump.len);
	if (t.has & SL_NFTRACE_HANDLE)
		sl_set_u64(r, F_HANDLE, t.handle);
	if (t.has & SL_NFTRACE_MARK)
		sl_set_u64(r, SL_F_MARK, t.mark);
	if (t.has & SL_NFTRACE_IIF)
		sl_set_u64(r, SL_F_IFINDEX_IN, t.iif);
	if ((name = sl_nftrace_verdict_name(t.verdict)))
		set_s(r, F_VERDICT, name, (uint32_t)strlen(name));
	if (t.has & SL_NFTRACE_LL)
		sl_set_bytes(r, SL_F_HWHDR, t.ll.ptr, t.ll.len);
	if (t.has & SL_NFTRACE_NH) {
		sl_set_bytes(r, SL_F_PACKET, t.nh.ptr, t.nh.len);
		sl_pkt_decode(r, NULL);
		set_s(r, F_TYPE, "packet", 6);
		sl_fmt_init(&fb, line, sizeof(line));
		sl_traceline_format(&fb, r, &tf);
	}
	if ((name = sl_nftrace_type_name(t.type))) {
		set_s(r, F_TYPE, name, (uint32_t)strlen(name));
		sl_fmt_init(&fb, line, sizeof(line));
		sl_traceline_format(&fb, r, &tf);
	}
out:
	free(copy);
	free(r);
	return 0;
}
