/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugins/common/acctline_fmt.c: logline's line for an accounting record
 * against libnetfilter_acct's nfacct_snprintf() (plain, what `nfacct list`
 * prints) for the same object: zero, small and the largest counters, names
 * of 1 and 31 bytes, byte and packet quotas, exceeded or not; and a buffer
 * one byte short overflows.
 */
#include "../../plugins/common/fmt.c"
#include "../../plugins/common/acctline_fmt.c"

#include <libnetfilter_acct/libnetfilter_acct.h>

#include "check.h"

#define F_NAME SL_F_WELL_KNOWN_COUNT
#define F_PKTS (SL_F_WELL_KNOWN_COUNT + 1)
#define F_BYTES (SL_F_WELL_KNOWN_COUNT + 2)
#define F_QUOTA (SL_F_WELL_KNOWN_COUNT + 3)
#define F_MODE (SL_F_WELL_KNOWN_COUNT + 4)
#define F_OVER (SL_F_WELL_KNOWN_COUNT + 5)

static union {
	struct sl_record r;
	uint8_t mem[sizeof(struct sl_record) + (SL_F_WELL_KNOWN_COUNT + 6) * sizeof(union sl_value)];
} recmem;

static const struct sl_acctline_fields fields = { F_NAME, F_PKTS, F_BYTES, F_QUOTA, F_MODE, F_OVER };

/*
 * Format (name, pkts, bytes) both ways, with a quota when flags has
 * NFACCT_F_QUOTA_*, as nfacct sets the record's fields; returns our line's length.
 */
static size_t compare_quota(const char *name, uint64_t pkts, uint64_t bytes, uint32_t flags,
			    uint64_t quota)
{
	struct nfacct *o = nfacct_alloc();
	char want[256], got[256];
	struct sl_record *r = &recmem.r;
	struct sl_fmt_buf b;

	memset(&recmem, 0, sizeof(recmem));
	sl_set_bytes(r, F_NAME, name, (uint32_t)strlen(name));
	sl_set_u64(r, F_PKTS, pkts);
	sl_set_u64(r, F_BYTES, bytes);
	CHECK(sl_acctline_applies(r, &fields));
	nfacct_attr_set_str(o, NFACCT_ATTR_NAME, name);
	nfacct_attr_set_u64(o, NFACCT_ATTR_PKTS, pkts);
	nfacct_attr_set_u64(o, NFACCT_ATTR_BYTES, bytes);
	if (flags) {
		nfacct_attr_set(o, NFACCT_ATTR_FLAGS, &flags);
		nfacct_attr_set_u64(o, NFACCT_ATTR_QUOTA, quota);
		sl_set_u64(r, F_QUOTA, quota);
		if (flags & NFACCT_F_QUOTA_PKTS)
			sl_set_bytes(r, F_MODE, "packet", 6);
		else
			sl_set_bytes(r, F_MODE, "byte", 4);
		sl_set_u64(r, F_OVER, !!(flags & NFACCT_F_OVERQUOTA));
	}
	nfacct_snprintf(want, sizeof(want), o, NFACCT_SNPRINTF_T_PLAIN, NFACCT_SNPRINTF_F_FULL);
	nfacct_free(o);
	sl_fmt_init(&b, got, sizeof(got));
	sl_acctline_format(&b, r, &fields);
	CHECK(!b.overflow);
	sl_fmt_nul(&b);
	CHECK_STREQ(got, want);
	return b.len;
}

static size_t compare(const char *name, uint64_t pkts, uint64_t bytes)
{
	return compare_quota(name, pkts, bytes, 0, 0);
}

int main(void)
{
	char small[128];
	struct sl_fmt_buf b;
	size_t len;

	compare("a1", 0, 0);
	compare("http-in", 4, 512);
	compare("x", 12345678901234567ULL, 9876543210987654321ULL);
	compare("n234567890123456789012345678901", UINT64_MAX, UINT64_MAX);
	compare_quota("qb", 1, 2, NFACCT_F_QUOTA_BYTES, 1000);
	compare_quota("qp", 5, 640, NFACCT_F_QUOTA_PKTS | NFACCT_F_OVERQUOTA, 3);
	compare_quota("qbig", UINT64_MAX, 0, NFACCT_F_QUOTA_BYTES | NFACCT_F_OVERQUOTA, UINT64_MAX);
	len = compare("edge", UINT64_MAX - 1, 1);

	/* one byte short: the line is not cut silently */
	sl_fmt_init(&b, small, len - 1);
	sl_acctline_format(&b, &recmem.r, &fields);
	CHECK(b.overflow);

	/* a record without the counters is not an accounting record */
	sl_unset(&recmem.r, F_BYTES);
	CHECK(!sl_acctline_applies(&recmem.r, &fields));
	return check_summary("test_acctline");
}
