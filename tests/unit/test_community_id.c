/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Community ID v1 (plugins/common/community_id.c) against the published
 * vectors of the specification's repository, corelight/community-id-spec:
 * baseline/README.md (tables "Default settings" and "A custom seed=1
 * value", with the ICMP rows given as raw type/code) and
 * baseline/baseline_deflt.json (tuples from its pcaps; for the ICMPs its
 * sport/dport columns are already the mapped port equivalents, so the raw
 * type and code of those packets are given here, taken from the packets).
 * The expected strings are copied from those files.
 */
#include <arpa/inet.h>
#include <stdio.h>

#include "check.h"
#include "community_id.h"

struct vec {
	const char *src, *dst;
	int proto;
	int sport, dport;	/* -1: no ports (RSVP) */
	unsigned seed;
	const char *want;
};

static const struct vec vecs[] = {
	/* baseline/README.md, default settings (seed 0) */
	{"1.2.3.4", "5.6.7.8", 6, 1122, 3344, 0, "1:wCb3OG7yAFWelaUydu0D+125CLM="},
	{"5.6.7.8", "1.2.3.4", 6, 3344, 1122, 0, "1:wCb3OG7yAFWelaUydu0D+125CLM="},
	{"1.2.3.4", "5.6.7.8", 17, 1122, 3344, 0, "1:0Mu9InQx6z4ZiCZM/7HXi2WMhOg="},
	{"5.6.7.8", "1.2.3.4", 17, 3344, 1122, 0, "1:0Mu9InQx6z4ZiCZM/7HXi2WMhOg="},
	{"1.2.3.4", "5.6.7.8", 132, 1122, 3344, 0, "1:EKt4MsxuyaE6mL+hmrEkQ9csDD8="},
	{"5.6.7.8", "1.2.3.4", 132, 3344, 1122, 0, "1:EKt4MsxuyaE6mL+hmrEkQ9csDD8="},
	{"1.2.3.4", "5.6.7.8", 1, 8, 0, 0, "1:crodRHL2FEsHjbv3UkRrfbs4bZ0="},
	{"5.6.7.8", "1.2.3.4", 1, 0, 0, 0, "1:crodRHL2FEsHjbv3UkRrfbs4bZ0="},
	{"1.2.3.4", "5.6.7.8", 1, 11, 0, 0, "1:f/YiSyWqczrTgfUCZlBUnvHRcPk="},
	{"fe80:0001:0203:0405:0607:0809:0A0B:0C0D", "fe80:1011:1213:1415:1617:1819:1A1B:1C1D", 58, 128, 0, 0,
	 "1:0bf7hyMJUwt3fMED7z8LIfRpBeo="},
	{"fe80:1011:1213:1415:1617:1819:1A1B:1C1D", "fe80:0001:0203:0405:0607:0809:0A0B:0C0D", 58, 129, 0, 0,
	 "1:0bf7hyMJUwt3fMED7z8LIfRpBeo="},
	{"fe80:0001:0203:0405:0607:0809:0A0B:0C0D", "fe80:1011:1213:1415:1617:1819:1A1B:1C1D", 58, 146, 0, 0,
	 "1:fYC8+pz24E+EhANP1EZhpX0Dw10="},
	{"1.2.3.4", "5.6.7.8", 46, -1, -1, 0, "1:ikv3kmf89luf73WPz1jOs49S768="},
	{"5.6.7.8", "1.2.3.4", 46, -1, -1, 0, "1:ikv3kmf89luf73WPz1jOs49S768="},
	{"fe80:0001:0203:0405:0607:0809:0A0B:0C0D", "fe80:1011:1213:1415:1617:1819:1A1B:1C1D", 46, -1, -1, 0,
	 "1:wQ/2mwrnXP4lmJcHdGL5ePjR+e0="},
	{"fe80:1011:1213:1415:1617:1819:1A1B:1C1D", "fe80:0001:0203:0405:0607:0809:0A0B:0C0D", 46, -1, -1, 0,
	 "1:wQ/2mwrnXP4lmJcHdGL5ePjR+e0="},
	/* baseline/README.md, seed=1 */
	{"1.2.3.4", "5.6.7.8", 6, 1122, 3344, 1, "1:HhA1B+6CoLbiKPEs5nhNYN4XWfk="},
	{"5.6.7.8", "1.2.3.4", 6, 3344, 1122, 1, "1:HhA1B+6CoLbiKPEs5nhNYN4XWfk="},
	{"1.2.3.4", "5.6.7.8", 17, 1122, 3344, 1, "1:OShq+iKDAMVouh/4bMxB9Sz4amw="},
	{"1.2.3.4", "5.6.7.8", 132, 1122, 3344, 1, "1:uitchpn5MMGAQKBJh7bIr/bAr7s="},
	{"1.2.3.4", "5.6.7.8", 1, 8, 0, 1, "1:9pr4ZGTICiuZoIh90RRYE2RyXpU="},
	{"5.6.7.8", "1.2.3.4", 1, 0, 0, 1, "1:9pr4ZGTICiuZoIh90RRYE2RyXpU="},
	{"1.2.3.4", "5.6.7.8", 1, 11, 0, 1, "1:1DD7cWGC/Yg91YGsQeni8du3pIA="},
	{"fe80:0001:0203:0405:0607:0809:0A0B:0C0D", "fe80:1011:1213:1415:1617:1819:1A1B:1C1D", 58, 128, 0, 1,
	 "1:IO27GQzPuCtNnwFvjWALMHu5tJE="},
	{"fe80:0001:0203:0405:0607:0809:0A0B:0C0D", "fe80:1011:1213:1415:1617:1819:1A1B:1C1D", 58, 146, 0, 1,
	 "1:Cv4IKJe56BNkF0MBW2YxQ3Nwc3s="},
	{"1.2.3.4", "5.6.7.8", 46, -1, -1, 1, "1:/buhqeOmaRCopOZFy9HnoJd5XW8="},
	{"fe80:0001:0203:0405:0607:0809:0A0B:0C0D", "fe80:1011:1213:1415:1617:1819:1A1B:1C1D", 46, -1, -1, 1,
	 "1:j6EyyfBzL4vWKHFXgUqb5Az3OxM="},
	/* baseline/baseline_deflt.json (seed 0): ICMPv6 neighbor solicitation/advertisement ... */
	{"fe80::200:86ff:fe05:80da", "fe80::260:97ff:fe07:69ea", 58, 135, 0, 0, "1:dGHyGvjMfljg6Bppwm3bg0LO8TY="},
	{"fe80::260:97ff:fe07:69ea", "fe80::200:86ff:fe05:80da", 58, 136, 0, 0, "1:dGHyGvjMfljg6Bppwm3bg0LO8TY="},
	{"fe80::260:97ff:fe07:69ea", "fe80::200:86ff:fe05:80da", 58, 135, 0, 0, "1:zavyT/cezQr1fmImYCwYnMXbgck="},
	{"fe80::200:86ff:fe05:80da", "fe80::260:97ff:fe07:69ea", 58, 136, 0, 0, "1:zavyT/cezQr1fmImYCwYnMXbgck="},
	/* ... one-way ICMPv6: time exceeded (3/0), destination unreachable (1/4) ... */
	{"3ffe:501:1800:2345::2", "3ffe:507:0:1:200:86ff:fe05:80da", 58, 3, 0, 0, "1:2ObVBgIn28oZvibYZhZMBgh7WdQ="},
	{"3ffe:501:410:0:2c0:dfff:fe47:33e", "3ffe:507:0:1:200:86ff:fe05:80da", 58, 1, 4, 0,
	 "1:hLZd0XGWojozrvxqE0dWB1iM6R0="},
	/* ... ICMPv6 echo, router solicitation and advertisement to multicast ... */
	{"3ffe:507:0:1:200:86ff:fe05:80da", "3ffe:501:0:1001::2", 58, 128, 0, 0, "1:+TW+HtLHvV1xnGhV1lv7XoJrqQg="},
	{"3ffe:501:0:1001::2", "3ffe:507:0:1:200:86ff:fe05:80da", 58, 129, 0, 0, "1:+TW+HtLHvV1xnGhV1lv7XoJrqQg="},
	{"fe80::200:86ff:fe05:80da", "ff02::2", 58, 133, 0, 0, "1:hO+sN4H+MG5MY/8hIrXPqc4ZQz0="},
	{"fe80::260:97ff:fe07:69ea", "ff02::1", 58, 134, 0, 0, "1:pkvHqCL88/tg1k4cPigmZXUtL00="},
	/* ... ICMP echo both ways, time exceeded ... */
	{"192.168.0.89", "192.168.0.1", 1, 8, 0, 0, "1:X0snYXpgwiv9TZtqg64sgzUn6Dk="},
	{"192.168.0.1", "192.168.0.89", 1, 0, 0, 0, "1:X0snYXpgwiv9TZtqg64sgzUn6Dk="},
	{"10.0.0.1", "10.0.0.2", 1, 11, 0, 0, "1:YHxtAirCG//0OzkcVAukqKQN9xM="},
	/* ... TCP over IPv6 and IPv4, SCTP, UDP, RSVP */
	{"2001:470:e5bf:dead:4957:2174:e82c:4887", "2607:f8b0:400c:c03::1a", 6, 63943, 25, 0,
	 "1:/qFaeAR+gFe1KYjMzVDsMv+wgU4="},
	{"2607:f8b0:400c:c03::1a", "2001:470:e5bf:dead:4957:2174:e82c:4887", 6, 25, 63943, 0,
	 "1:/qFaeAR+gFe1KYjMzVDsMv+wgU4="},
	{"192.168.170.8", "192.168.170.56", 132, 7, 7, 0, "1:MP2EtRCAUIZvTw6MxJHLV7N7JDs="},
	{"192.168.170.56", "192.168.170.8", 132, 7, 7, 0, "1:MP2EtRCAUIZvTw6MxJHLV7N7JDs="},
	{"128.232.110.120", "66.35.250.204", 6, 34855, 80, 0, "1:LQU9qZlK+B5F3KDmev6m5PMibrg="},
	{"66.35.250.204", "128.232.110.120", 6, 80, 34855, 0, "1:LQU9qZlK+B5F3KDmev6m5PMibrg="},
	{"192.168.1.52", "8.8.8.8", 17, 54585, 53, 0, "1:d/FP5EW3wiY1vCndhwleRRKHowQ="},
	{"8.8.8.8", "192.168.1.52", 17, 53, 54585, 0, "1:d/FP5EW3wiY1vCndhwleRRKHowQ="},
	{"10.1.12.1", "10.1.12.2", 46, -1, -1, 0, "1:KHlLkgoJW7ifUTyTSgyVfkFHzKw="},
	{"10.1.12.2", "10.1.12.1", 46, -1, -1, 0, "1:KHlLkgoJW7ifUTyTSgyVfkFHzKw="},
};

/* An address as SL_T_ADDR holds it: IPv4 mapped into ::ffff:0:0/96. */
static void parse_addr(const char *s, uint8_t a[16])
{
	memset(a, 0, 16);
	if (inet_pton(AF_INET, s, a + 12) == 1) {
		a[10] = a[11] = 0xff;
		return;
	}
	if (inet_pton(AF_INET6, s, a) != 1) {
		fprintf(stderr, "bad address in test: %s\n", s);
		exit(2);
	}
}

static void vectors(void)
{
	for (size_t i = 0; i < sizeof(vecs) / sizeof(vecs[0]); i++) {
		const struct vec *v = &vecs[i];
		uint8_t s[16], d[16];
		char out[SL_COMMUNITY_ID_LEN + 1] = {0};
		struct sl_cid_tuple t = {.saddr = s, .daddr = d, .proto = (uint8_t)v->proto};

		parse_addr(v->src, s);
		parse_addr(v->dst, d);
		if (v->sport >= 0) {
			t.has_ports = true;
			t.sport = (uint16_t)v->sport;
			t.dport = (uint16_t)v->dport;
		}
		CHECK(sl_community_id(&t, (uint16_t)v->seed, out), "vector %zu", i);
		CHECK_STREQ(out, v->want);
	}
}

/* No hash rather than a wrong one: mixed families, ports missing (a fragment). */
static void refusals(void)
{
	uint8_t s[16], d[16];
	char out[SL_COMMUNITY_ID_LEN + 1] = "untouched";
	struct sl_cid_tuple t = {.saddr = s, .daddr = d, .proto = 6, .has_ports = true, .sport = 1, .dport = 2};

	parse_addr("1.2.3.4", s);
	parse_addr("2001:db8::1", d);
	CHECK(!sl_community_id(&t, 0, out));
	parse_addr("5.6.7.8", d);
	t.has_ports = false;
	CHECK(!sl_community_id(&t, 0, out));
	CHECK_STREQ(out, "untouched");
	/* a port-less protocol ignores stray ports */
	t.proto = 46;
	t.has_ports = true;
	CHECK(sl_community_id(&t, 0, out));
	CHECK_STREQ(out, "1:ikv3kmf89luf73WPz1jOs49S768=");
}

int main(void)
{
	vectors();
	refusals();
	return check_summary("community_id");
}
