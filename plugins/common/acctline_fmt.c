/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfacct list lines (see acctline_fmt.h). */
#include "acctline_fmt.h"

struct sl_acctline_fields sl_acctline_fields_lookup(const struct sl_host *host, struct sl_instance *inst)
{
	struct sl_acctline_fields f = {
		.name = host->field_id(inst, SL_ACCT_NAME),
		.packets = host->field_id(inst, SL_ACCT_PACKETS),
		.bytes = host->field_id(inst, SL_ACCT_BYTES),
		.quota = host->field_id(inst, SL_ACCT_QUOTA),
		.quota_mode = host->field_id(inst, SL_ACCT_QUOTA_MODE),
		.overquota = host->field_id(inst, SL_ACCT_OVERQUOTA),
	};

	return f;
}

/* libnetfilter_acct prints counters as %.20llu: 20 digits, zero-padded. */
static void u64_20(struct sl_fmt_buf *b, uint64_t v)
{
	char *p;

	if (!sl_fmt_room(b, 20))
		return;
	p = sl_fmt_end(b);
	for (int i = 19; i >= 0; i--, v /= 10)
		p[i] = (char)('0' + v % 10);
	sl_fmt_commit(b, p + 20);
}

void sl_acctline_format(struct sl_fmt_buf *b, const struct sl_record *r, const struct sl_acctline_fields *f)
{
	const struct sl_bytes *name = &r->v[f->name].bytes;

	sl_fmt_lit(b, "{ pkts = ");
	u64_20(b, r->v[f->packets].u64);
	sl_fmt_lit(b, ", bytes = ");
	u64_20(b, r->v[f->bytes].u64);
	if (f->quota >= 0 && sl_has(r, (sl_field)f->quota)) {
		bool over = f->overquota >= 0 && sl_has(r, (sl_field)f->overquota) &&
			    r->v[f->overquota].u64;

		sl_fmt_lit(b, ", quota = ");
		u64_20(b, r->v[f->quota].u64);
		sl_fmt_lit(b, ", mode = ");
		if (f->quota_mode >= 0 && sl_has(r, (sl_field)f->quota_mode))
			sl_fmt_mem(b, r->v[f->quota_mode].bytes.ptr, r->v[f->quota_mode].bytes.len);
		if (over)
			sl_fmt_lit(b, ", overquota = yes");
		else
			sl_fmt_lit(b, ", overquota = no");
	}
	sl_fmt_lit(b, " } = ");
	sl_fmt_mem(b, name->ptr, name->len);
	sl_fmt_chr(b, ';');
}
