/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctnetlink conntrack messages (IPCTNL_MSG_CT_NEW / _DELETE, events and
 * dump replies) -> one connection, and a connection -> record: the parser
 * of the `nfct` input, kept apart from the plugin so unit tests and a fuzz
 * target can drive it on bytes.  Nothing here reads outside the message.
 */
#ifndef SLUICE_CT_ATTRS_H
#define SLUICE_CT_ATTRS_H

#include <stdint.h>

#include <linux/netlink.h>

#include <sluice/record.h>

/* What a message carried (struct sl_ct_info.have). */
enum {
	SL_CI_ID = 1u << 0,
	SL_CI_REPLY = 1u << 1,
	SL_CI_PORTS = 1u << 2,	/* orig ports / ICMP id and type-code */
	SL_CI_RPORTS = 1u << 3,
	SL_CI_OCOUNT = 1u << 4,
	SL_CI_RCOUNT = 1u << 5,
	SL_CI_START = 1u << 6,
	SL_CI_STOP = 1u << 7,
	SL_CI_MARK = 1u << 8,
	SL_CI_STATUS = 1u << 9,
	SL_CI_TCPSTATE = 1u << 10,
	SL_CI_ZONE = 1u << 11,
	SL_CI_TIMEOUT = 1u << 12,	/* of this message only: never tracked */
};

struct sl_ct_info {
	uint8_t osrc[16], odst[16], rsrc[16], rdst[16];	/* IPv4 stored mapped */
	uint64_t opkts, obytes, rpkts, rbytes;
	uint64_t start_ns, stop_ns;
	uint32_t have;
	uint32_t id, mark, status, timeout;
	uint16_t osport, odport, rsport, rdport;
	uint16_t zone;
	uint8_t family, proto, tcp_state;
};

/*
 * Parse one ctnetlink conntrack message (nlh->nlmsg_len bytes, checked by
 * the caller with mnl_nlmsg_ok) into *ci: 0, or -1 if malformed.
 * Attributes newer than our headers are skipped.
 */
int sl_ct_parse(const struct nlmsghdr *nlh, struct sl_ct_info *ci);

/*
 * The record of a connection event (SL_CT_EVENT_*) received at `now` into
 * the fresh record r: only the fields the message carried.  timeout_field
 * is the registered id of ct_timeout, or -1.
 */
void sl_ct_fill(struct sl_record *r, const struct sl_ct_info *ci, uint32_t event,
		const struct sl_time *now, int timeout_field);

#endif /* SLUICE_CT_ATTRS_H */
