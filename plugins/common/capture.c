/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Capture framing for `replay`: the per-file parts (see capture.h). */
#include "capture.h"

bool sl_cap_dlt_supported(int dlt)
{
	switch (dlt) {
	case DLT_NFLOG:
	case DLT_RAW:
	case SL_LT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
	case DLT_EN10MB:
	case DLT_LINUX_SLL:
	case DLT_LINUX_SLL2:
		return true;
	}
	return false;
}

bool sl_cap_map_ok(const uint8_t hdr[SL_CAP_FILE_HDR])
{
	uint32_t fh[6];

	memcpy(fh, hdr, sizeof(fh));
	/* FCS bits or a LINKTYPE_ number that is not the DLT_ one: libpcap */
	return (fh[0] == 0xa1b2c3d4 || fh[0] == 0xa1b23c4d) && (fh[1] & 0xffff) == 2 &&
	       fh[5] <= 0xffff && sl_cap_dlt_supported((int)fh[5]) && fh[5] != DLT_RAW;
}

int sl_cap_map_open(struct sl_cap_map *m, const void *p, size_t len)
{
	uint32_t fh[6];

	if (len < SL_CAP_FILE_HDR || !sl_cap_map_ok(p))
		return -1;
	memcpy(fh, p, sizeof(fh));
	memset(m, 0, sizeof(*m));
	m->p = p;
	m->len = len;
	m->off = SL_CAP_FILE_HDR;
	m->nsec = fh[0] == 0xa1b23c4d;
	m->snaplen = fh[4];
	m->dlt = (int)fh[5];
	return 0;
}
