/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: nflog's conntrack lookups (plugins/common/ct_lookup.c).
 * The first byte chooses: even, the rest is a logged packet (from its
 * network header): its tuple, the tuple inverted twice (must be itself),
 * the GET request built for it, read back by nfct's parser (must give the
 * same addresses and protocol); odd, the rest is a datagram of replies to
 * request 1 (sl_ct_get_reply(), then the tuples of the connection, as the
 * destroy events are read).  Nothing may read outside the bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <netinet/in.h>

#include "ct_lookup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void packet(const uint8_t *p, size_t n)
{
	union {
		uint8_t b[SL_CT_GET_MAX];
		struct nlmsghdr h;
	} m;
	struct sl_ct_tuple t, u;
	struct sl_ct_info ci;
	struct nlmsghdr *nlh;
	unsigned fl;

	if (sl_ct_tuple_from_packet(&t, p, n, &fl) < 0)
		return;
	u = t;
	sl_ct_tuple_invert(&u);
	sl_ct_tuple_invert(&u);
	if (memcmp(&u, &t, sizeof(t)) != 0)
		abort();
	nlh = sl_ct_get_put(m.b, &t, 1);
	if (nlh->nlmsg_len > SL_CT_GET_MAX)
		abort();
	nlh->nlmsg_type = NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_NEW;
	if (sl_ct_parse(nlh, &ci) < 0 || ci.proto != t.proto || ci.family != t.family)
		abort();
}

static void replies(const uint8_t *p, size_t n)
{
	struct sl_ct_tuple o, r;
	struct sl_ct_info ci;

	if (sl_ct_get_reply(p, n, 1, &ci) == 1)
		(void)sl_ct_tuples_of(&ci, &o, &r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size, aligned copy, so reading past the end trips AddressSanitizer */
	uint8_t *copy;

	if (size < 1)
		return 0;
	copy = malloc(size - 1 ? size - 1 : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 1, size - 1);
	if (data[0] & 1)
		replies(copy, size - 1);
	else
		packet(copy, size - 1);
	free(copy);
	return 0;
}
