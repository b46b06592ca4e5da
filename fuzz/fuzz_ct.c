/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: any bytes as one netlink datagram of ctnetlink
 * messages, walked as nfct walks a receive (sl_nlmsg_ok, mnl_nlmsg_next); each
 * message is parsed (sl_ct_parse: nested tuples, counters, timestamps,
 * protocol info), made a record (sl_ct_fill) and a conntrack-format line.
 * The parser must never read outside the message.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include "ct_attrs.h"
#include "ctline_fmt.h"
#include "nlsock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct sl_ctline_fields fields = {-1, -1};
	static char line[SL_CTLINE_MAX * 2];
	const struct sl_time now = {1700000000, 0};
	struct sl_record *r = calloc(1, sizeof(*r) + SL_MAX_FIELDS * sizeof(union sl_value));
	/* An exact-size copy, so reading past the end trips AddressSanitizer. */
	uint8_t *copy = malloc(size ? size : 1);
	const struct nlmsghdr *nlh;
	int n = size > INT_MAX ? INT_MAX : (int)size;

	if (!r || !copy)
		goto out;
	memcpy(copy, data, size);
	for (nlh = (const struct nlmsghdr *)copy; sl_nlmsg_ok(nlh, n); nlh = mnl_nlmsg_next(nlh, &n)) {
		struct sl_ct_info ci;
		struct sl_fmt_buf fb;

		if (sl_ct_parse(nlh, &ci) < 0)
			continue;
		memset(r->present, 0, sizeof(r->present));
		sl_ct_fill(r, &ci,
			   NFNL_MSG_TYPE(nlh->nlmsg_type) == IPCTNL_MSG_CT_DELETE ? SL_CT_EVENT_DESTROY
										  : SL_CT_EVENT_NEW,
			   &now, -1);
		sl_fmt_init(&fb, line, sizeof(line));
		sl_ctline_format(&fb, r, &fields, SL_CTLINE_TIMESTAMP | SL_CTLINE_ID | SL_CTLINE_EXTENDED);
	}
out:
	free(copy);
	free(r);
	return 0;
}
