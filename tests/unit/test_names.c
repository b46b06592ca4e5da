/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one table of protocol, family and TCP state names
 * (plugins/common/names.c), against what each user printed before it:
 * libnetfilter_conntrack's l4proto2str and states[] for the conntrack -E
 * line, the json filter's names, nfct's `protocols` vocabulary; nft's
 * family names (nflog's rule cache, the rule index).
 */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "names.h"

/* Every protocol number in every vocabulary: named exactly as listed here. */
static void protocols(void)
{
	static const struct {
		int num;
		const char *ct, *json;
	} want[] = {
		{IPPROTO_ICMP, "icmp", "icmp"},	     {IPPROTO_IGMP, NULL, "igmp"},
		{IPPROTO_IPIP, NULL, "ipip"},	     {IPPROTO_TCP, "tcp", "tcp"},
		{IPPROTO_UDP, "udp", "udp"},	     {IPPROTO_DCCP, "dccp", NULL},
		{IPPROTO_IPV6, NULL, "ipv6"},	     {IPPROTO_GRE, "gre", "gre"},
		{IPPROTO_ESP, NULL, "esp"},	     {IPPROTO_AH, NULL, "ah"},
		{IPPROTO_ICMPV6, "icmpv6", "icmpv6"}, {89, NULL, "ospf"},
		{IPPROTO_PIM, NULL, "pim"},	     {112, NULL, "vrrp"},
		{IPPROTO_SCTP, "sctp", "sctp"},	     {IPPROTO_UDPLITE, "udplite", "udplite"},
	};

	for (int p = 0; p < 300; p++) {
		const char *ct = NULL, *json = NULL;

		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			if (want[i].num == p) {
				ct = want[i].ct;
				json = want[i].json;
			}
		CHECK_STREQ(sl_proto_name((uint64_t)p, SL_PROTO_CONNTRACK), ct);
		CHECK_STREQ(sl_proto_name((uint64_t)p, SL_PROTO_JSON), json);
	}
	CHECK_STREQ(sl_proto_name(UINT64_MAX, SL_PROTO_JSON), NULL);
	CHECK_STREQ(sl_proto_name(256 + 6, SL_PROTO_JSON), NULL);
}

/*
 * ECS's network.transport: the keyword of IANA's "Assigned Internet
 * Protocol Numbers" registry in lower case, for every number named.
 */
static void iana_keywords(void)
{
	static const struct {
		int num;
		const char *kw;
	} want[] = {
		{1, "icmp"}, {2, "igmp"},	{4, "ipv4"},	  {6, "tcp"},	{17, "udp"},
		{33, "dccp"}, {41, "ipv6"},	{47, "gre"},	  {50, "esp"},	{51, "ah"},
		{58, "ipv6-icmp"}, {89, "ospfigp"}, {94, "ipip"}, {103, "pim"}, {112, "vrrp"},
		{132, "sctp"}, {136, "udplite"},
	};

	for (int p = 0; p < 300; p++) {
		const char *kw = NULL;

		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			if (want[i].num == p)
				kw = want[i].kw;
		CHECK_STREQ(sl_proto_iana((uint64_t)p), kw);
	}
	CHECK_STREQ(sl_proto_iana(UINT64_MAX), NULL);
}

/* nfct's protocols option: the names it always took, numbers, nothing else. */
static void proto_numbers(void)
{
	static const struct {
		const char *s;
		int want;
	} cases[] = {
		{"tcp", 6},	  {"TCP", 6},	   {"udp", 17},	      {"icmp", 1},    {"icmpv6", 58},
		{"ipv6-icmp", 58}, {"IPv6-ICMP", 58}, {"sctp", 132},    {"dccp", 33},   {"udplite", 136},
		{"gre", 47},	  {"esp", 50},	   {"ah", 51},	      {"0", 0},	      {"255", 255},
		{"17", 17},	  {"256", -1},	   {"-1", -1},	      {"", -1},	      {"tcpx", -1},
		{"6x", -1},	  {"ipv6", -1},	   {"igmp", -1},      {"ospf", -1},   {"ipv4", -1},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(sl_proto_number(cases[i].s) == cases[i].want, "\"%s\" -> %d, want %d", cases[i].s,
		      sl_proto_number(cases[i].s), cases[i].want);
}

static void families(void)
{
	static const char *const want[] = {
		NULL, "inet", "ipv4", "arp", NULL, "netdev", NULL, "bridge", NULL, NULL, "ipv6", NULL, NULL,
	};

	for (uint64_t f = 0; f < 13; f++)
		CHECK_STREQ(sl_family_name(f), want[f]);
	CHECK_STREQ(sl_family_name(13), NULL);
	CHECK_STREQ(sl_family_name(UINT64_MAX), NULL);
}

/* nft's family names, as nflog's rule cache and the rule index read them. */
static void nft_families(void)
{
	static const struct {
		const char *s;
		int want;
	} cases[] = {
		{"ip", 2}, {"ip6", 10}, {"inet", 1}, {"arp", 3}, {"bridge", 7}, {"netdev", 5},
		{"ipv4", -1}, {"IP", -1}, {"", -1}, {"i", -1}, {"ip66", -1},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(sl_nft_family_number(cases[i].s, strlen(cases[i].s)) == cases[i].want,
		      "\"%s\" -> %d, want %d", cases[i].s,
		      sl_nft_family_number(cases[i].s, strlen(cases[i].s)), cases[i].want);
	CHECK(sl_nft_family_number("ip6 filter", 3) == 10);	/* a word within a line */
	CHECK(sl_nft_family_number("inet", 2) == -1);
}

static void tcp_states(void)
{
	/* libnetfilter_conntrack's states[] */
	static const char *const up[] = {"NONE", "SYN_SENT", "SYN_RECV", "ESTABLISHED", "FIN_WAIT",
					  "CLOSE_WAIT", "LAST_ACK", "TIME_WAIT", "CLOSE", "SYN_SENT2"};
	static const char *const low[] = {"none", "syn_sent", "syn_recv", "established", "fin_wait",
					   "close_wait", "last_ack", "time_wait", "close", "syn_sent2"};

	for (uint64_t s = 0; s < 10; s++) {
		CHECK_STREQ(sl_tcp_state_upper(s), up[s]);
		CHECK_STREQ(sl_tcp_state_lower(s), low[s]);
	}
	CHECK_STREQ(sl_tcp_state_upper(10), NULL);
	CHECK_STREQ(sl_tcp_state_lower(10), NULL);
}

int main(void)
{
	protocols();
	iana_keywords();
	proto_numbers();
	families();
	nft_families();
	tcp_states();
	return check_summary("names");
}
