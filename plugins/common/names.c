/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Protocol, family and TCP state names: see names.h. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <linux/netfilter.h>

#include "names.h"

#define CT SL_PROTO_CONNTRACK
#define JS SL_PROTO_JSON
#define CF SL_PROTO_CONFIG

/*
 * json never named dccp, nor conntrack -E igmp, esp, ah...: the sets keep
 * every output as it was.  `iana` is the IANA registry's keyword in lower
 * case (ECS's network.transport), which differs from the older names for
 * 4 (ipv4, not ipip: that is 94), 58 (ipv6-icmp) and 89 (ospfigp).
 */
const struct sl_proto_name sl_proto_names[256] = {
	[1] = {"icmp", CT | JS | CF, "icmp"},
	[2] = {"igmp", JS, "igmp"},
	[4] = {"ipip", JS, "ipv4"},
	[6] = {"tcp", CT | JS | CF, "tcp"},
	[17] = {"udp", CT | JS | CF, "udp"},
	[33] = {"dccp", CT | CF, "dccp"},
	[41] = {"ipv6", JS, "ipv6"},
	[47] = {"gre", CT | JS | CF, "gre"},
	[50] = {"esp", JS | CF, "esp"},
	[51] = {"ah", JS | CF, "ah"},
	[58] = {"icmpv6", CT | JS | CF, "ipv6-icmp"},
	[89] = {"ospf", JS, "ospfigp"},
	[94] = {NULL, 0, "ipip"},
	[103] = {"pim", JS, "pim"},
	[112] = {"vrrp", JS, "vrrp"},
	[132] = {"sctp", CT | JS | CF, "sctp"},
	[136] = {"udplite", CT | JS | CF, "udplite"},
};

int sl_proto_number(const char *s)
{
	char *end;
	long v;

	if (strcasecmp(s, "ipv6-icmp") == 0)	/* /etc/protocols' name */
		return 58;
	for (int i = 0; i < 256; i++)
		if ((sl_proto_names[i].sets & SL_PROTO_CONFIG) && strcasecmp(s, sl_proto_names[i].name) == 0)
			return i;
	v = strtol(s, &end, 10);
	if (end == s || *end || v < 0 || v > 255)
		return -1;
	return (int)v;
}

const char *const sl_family_names[13] = {
	[1] = "inet", [2] = "ipv4", [3] = "arp", [5] = "netdev", [7] = "bridge", [10] = "ipv6",
};

/* nftables' family names (nft's words) and their NFPROTO_ numbers. */
static const struct {
	const char *name;
	int num;
} nft_fams[] = {
	{"ip", NFPROTO_IPV4}, {"ip6", NFPROTO_IPV6}, {"inet", NFPROTO_INET},
	{"arp", NFPROTO_ARP}, {"bridge", NFPROTO_BRIDGE}, {"netdev", NFPROTO_NETDEV},
};

int sl_nft_family_number(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(nft_fams) / sizeof(nft_fams[0]); i++)
		if (strlen(nft_fams[i].name) == len && !memcmp(nft_fams[i].name, name, len))
			return nft_fams[i].num;
	return -1;
}

const char *sl_nft_family_name(int num)
{
	for (size_t i = 0; i < sizeof(nft_fams) / sizeof(nft_fams[0]); i++)
		if (nft_fams[i].num == num)
			return nft_fams[i].name;
	return NULL;
}

/* libnetfilter_conntrack's states[] (TCP_CONNTRACK_MAX = 10). */
const struct sl_tcp_state_name sl_tcp_state_names[SL_TCP_STATES] = {
	{"NONE", "none"},
	{"SYN_SENT", "syn_sent"},
	{"SYN_RECV", "syn_recv"},
	{"ESTABLISHED", "established"},
	{"FIN_WAIT", "fin_wait"},
	{"CLOSE_WAIT", "close_wait"},
	{"LAST_ACK", "last_ack"},
	{"TIME_WAIT", "time_wait"},
	{"CLOSE", "close"},
	{"SYN_SENT2", "syn_sent2"},
};
