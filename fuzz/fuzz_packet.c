/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: any bytes as one NFLOG event (nfgenmsg + TLVs, what
 * the nflog input and replay of NFLOG captures parse), then through the
 * packet decoder (with checksums) and the kernel-format text line.  The
 * hot-path parsers must never read outside the event.  The same bytes are
 * also decoded as a bare IPv4/IPv6 packet.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "logline_fmt.h"
#include "nflog_attrs.h"
#include "pkt_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void to_text(struct sl_record *r)
{
	static char line[4096];
	struct sl_fmt_buf fb;
	static const char empty[1];

	/* logline needs interface names; decode leaves them to the cache. */
	sl_set_bytes(r, SL_F_IFNAME_IN, empty, 0);
	sl_set_bytes(r, SL_F_IFNAME_OUT, empty, 0);
	sl_fmt_init(&fb, line, sizeof(line));
	sl_logline_format(&fb, r, SL_LOGLINE_TCPSEQ | SL_LOGLINE_TCPOPT | SL_LOGLINE_IPOPT |
					 SL_LOGLINE_UID);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct sl_pkt_decode_opts opts = {.checksums = true};
	const struct sl_time now = {1700000000, 0};
	struct sl_record *r = calloc(1, sizeof(*r) + SL_MAX_FIELDS * sizeof(union sl_value));
	/* An exact-size copy, so reading past the end trips AddressSanitizer. */
	uint8_t *copy = malloc(size ? size : 1);

	if (!r || !copy)
		goto out;
	memcpy(copy, data, size);
	if (sl_nflog_parse(r, copy, size, &now, SL_NFLOG_TRUNCATED_OK) == 0 &&
	    sl_has(r, SL_F_PACKET)) {
		sl_pkt_decode(r, &opts);
		to_text(r);
	}
	memset(r->present, 0, sizeof(r->present));
	sl_set_bytes(r, SL_F_PACKET, copy, (uint32_t)size);
	sl_pkt_decode(r, &opts);
	to_text(r);
out:
	free(copy);
	free(r);
	return 0;
}
