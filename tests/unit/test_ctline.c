/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugins/common/ctline_fmt.c: conntrack -E's line from hand-built records.
 * The first two expected lines were printed by conntrack 1.4.7 (Linux 6.18)
 * for the same connections; the others cover what the live test
 * (tests/e2e/test_netns_nfct_logline.sh) cannot make: flow records, offload
 * flags, out-of-range values, padding, a buffer that is too small.
 */
#include "../../plugins/common/fmt.c"
#include "../../plugins/common/ctline_fmt.c"
#include "../../plugins/common/names.c"
#include "../../plugins/common/text_escape.c"

#include <stdio.h>

static int failures;

#define F_TIMEOUT SL_F_WELL_KNOWN_COUNT
#define F_PORTID (SL_F_WELL_KNOWN_COUNT + 1)

static union {
	struct sl_record r;
	uint8_t mem[sizeof(struct sl_record) + (SL_F_WELL_KNOWN_COUNT + 2) * sizeof(union sl_value)];
} recmem;

static const struct sl_ctline_fields fields = { F_TIMEOUT, F_PORTID };

static struct sl_record *fresh(void)
{
	memset(&recmem, 0, sizeof(recmem));
	return &recmem.r;
}

static void ip4(struct sl_record *r, sl_field f, uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	uint8_t v[4] = { a, b, c, d };

	sl_set_ip4(r, f, v);
}

static void ip6(struct sl_record *r, sl_field f, uint8_t last)
{
	uint8_t v[16] = { 0x20, 0x01, 0x0d, 0xb8 };

	v[15] = last;
	memcpy(r->v[f].addr, v, 16);
	sl_mark(r, f);
}

static void check(const char *name, const struct sl_record *r, unsigned flags, const char *want)
{
	static char mem[1024];
	struct sl_fmt_buf b;

	sl_fmt_init(&b, mem, sizeof(mem));
	sl_ctline_format(&b, r, &fields, flags);
	if (b.overflow || b.len != strlen(want) || memcmp(b.p, want, b.len) != 0) {
		printf("FAIL %s:\n  want '%s'\n  got  '%.*s'%s\n", name, want, (int)b.len, b.p,
		       b.overflow ? " (overflow)" : "");
		failures++;
	}
	/* conntrack lines copy no bytes from the record: nothing to escape */
	if (sl_esc_scan(b.p, b.len, SL_ESC_KEEP_TAB) != b.len) {
		printf("FAIL %s: the line needs escaping\n", name);
		failures++;
	}
}

static void four_tuple(struct sl_record *r, uint64_t proto, uint64_t sp, uint64_t dp)
{
	sl_set_u64(r, SL_F_FAMILY, 2);
	sl_set_u64(r, SL_F_IP_PROTO, proto);
	ip4(r, SL_F_ORIG_SRC, 127, 0, 0, 1);
	ip4(r, SL_F_ORIG_DST, 127, 0, 0, 1);
	sl_set_u64(r, SL_F_ORIG_SPORT, sp);
	sl_set_u64(r, SL_F_ORIG_DPORT, dp);
	ip4(r, SL_F_REPLY_SRC, 127, 0, 0, 1);
	ip4(r, SL_F_REPLY_DST, 127, 0, 0, 1);
}

int main(void)
{
	struct sl_record *r;

	/* conntrack -E -o timestamp, a TCP connection flushed by conntrack -F */
	r = fresh();
	sl_set_time(r, SL_F_TIMESTAMP, 1795993730, 732704123);
	sl_set_u64(r, SL_F_CT_EVENT, SL_CT_EVENT_DESTROY);
	four_tuple(r, 6, 40001, 5001);
	sl_set_u64(r, SL_F_REPLY_SPORT, 5001);
	sl_set_u64(r, SL_F_REPLY_DPORT, 40001);
	sl_set_u64(r, F_TIMEOUT, 119);
	sl_set_u64(r, SL_F_TCP_STATE, 7);
	sl_set_u64(r, SL_F_ORIG_PACKETS, 5);
	sl_set_u64(r, SL_F_ORIG_BYTES, 1268);
	sl_set_u64(r, SL_F_REPLY_PACKETS, 5);
	sl_set_u64(r, SL_F_REPLY_BYTES, 3268);
	sl_set_u64(r, SL_F_CT_STATUS, 0x20e);
	sl_set_time(r, SL_F_FLOW_START, 1795993730, 503000000);
	sl_set_time(r, SL_F_FLOW_END, 1795993730, 732000000);
	sl_set_u64(r, SL_F_CT_ID, 4000000000u);
	sl_set_u64(r, F_PORTID, 23958);
	check("tcp destroy", r, SL_CTLINE_TIMESTAMP,
	      "[1795993730.732704]\t[DESTROY] tcp      6 119 TIME_WAIT src=127.0.0.1 dst=127.0.0.1 "
	      "sport=40001 dport=5001 packets=5 bytes=1268 src=127.0.0.1 dst=127.0.0.1 sport=5001 "
	      "dport=40001 packets=5 bytes=3268 [ASSURED] delta-time=0 [USERSPACE] portid=23958");
	/* a kernel-caused event has portid 0: nothing printed */
	sl_set_u64(r, F_PORTID, 0);
	check("tcp destroy, id, no portid", r, SL_CTLINE_ID,
	      "[DESTROY] tcp      6 119 TIME_WAIT src=127.0.0.1 dst=127.0.0.1 "
	      "sport=40001 dport=5001 packets=5 bytes=1268 src=127.0.0.1 dst=127.0.0.1 sport=5001 "
	      "dport=40001 packets=5 bytes=3268 [ASSURED] delta-time=0 id=4000000000");

	/* conntrack -E, a new ping */
	r = fresh();
	sl_set_u64(r, SL_F_CT_EVENT, SL_CT_EVENT_NEW);
	four_tuple(r, 1, 23954, 8 << 8);
	sl_set_u64(r, SL_F_REPLY_SPORT, 23954);
	sl_set_u64(r, SL_F_REPLY_DPORT, 0);
	sl_set_u64(r, F_TIMEOUT, 30);
	sl_set_u64(r, SL_F_CT_STATUS, 0x188);
	check("icmp new", r, 0,
	      "    [NEW] icmp     1 30 src=127.0.0.1 dst=127.0.0.1 type=8 code=0 id=23954 [UNREPLIED] "
	      "src=127.0.0.1 dst=127.0.0.1 type=0 code=0 id=23954");

	/* a flow record: no event, no reply tuple; the prefix is its end */
	r = fresh();
	sl_set_u64(r, SL_F_FAMILY, 2);
	sl_set_u64(r, SL_F_IP_PROTO, 17);
	ip4(r, SL_F_ORIG_SRC, 10, 0, 0, 1);
	ip4(r, SL_F_ORIG_DST, 10, 0, 0, 2);
	sl_set_u64(r, SL_F_ORIG_SPORT, 1000);
	sl_set_u64(r, SL_F_ORIG_DPORT, 53);
	sl_set_u64(r, SL_F_ORIG_PACKETS, 2);
	sl_set_u64(r, SL_F_ORIG_BYTES, 150);
	sl_set_u64(r, SL_F_REPLY_PACKETS, 0);
	sl_set_u64(r, SL_F_REPLY_BYTES, 0);
	sl_set_time(r, SL_F_FLOW_START, 1700000000, 900000000);
	sl_set_time(r, SL_F_FLOW_END, 1700000003, 500999);
	check("flow", r, SL_CTLINE_TIMESTAMP,
	      "[1700000003.000500]\tudp      17 src=10.0.0.1 dst=10.0.0.2 sport=1000 dport=53 "
	      "packets=2 bytes=150 delta-time=3");

	/* IPv6, extended, offload, a TCP state past the table, mark, zone */
	r = fresh();
	sl_set_time(r, SL_F_TIMESTAMP, 5, 7000);
	sl_set_u64(r, SL_F_CT_EVENT, SL_CT_EVENT_UPDATE);
	sl_set_u64(r, SL_F_FAMILY, 10);
	sl_set_u64(r, SL_F_IP_PROTO, 6);
	ip6(r, SL_F_ORIG_SRC, 1);
	ip6(r, SL_F_ORIG_DST, 2);
	sl_set_u64(r, SL_F_ORIG_SPORT, 1);
	sl_set_u64(r, SL_F_ORIG_DPORT, 2);
	ip6(r, SL_F_REPLY_SRC, 2);
	ip6(r, SL_F_REPLY_DST, 1);
	sl_set_u64(r, SL_F_REPLY_SPORT, 2);
	sl_set_u64(r, SL_F_REPLY_DPORT, 1);
	sl_set_u64(r, F_TIMEOUT, 86400);
	sl_set_u64(r, SL_F_TCP_STATE, 42);
	sl_set_u64(r, SL_F_CT_STATUS, (1u << 15) | (1u << 14) | 0xe);
	sl_set_u64(r, SL_F_MARK, 0xffffffffu);
	sl_set_u64(r, SL_F_CT_ZONE, 65535);
	sl_set_u64(r, SL_F_CT_ID, 12345);
	check("ipv6 extended", r, SL_CTLINE_TIMESTAMP | SL_CTLINE_ID | SL_CTLINE_EXTENDED,
	      "[00000005.000007]\t [UPDATE] ipv6     10 tcp      6 86400 NONE src=2001:db8::1 "
	      "dst=2001:db8::2 sport=1 dport=2 src=2001:db8::2 dst=2001:db8::1 sport=2 dport=1 "
	      "[HW_OFFLOAD] mark=4294967295 zone=65535 id=12345");
	sl_set_u64(r, SL_F_CT_STATUS, (1u << 14) | 0xe);
	sl_unset(r, SL_F_TIMESTAMP);
	sl_unset(r, SL_F_MARK);
	sl_unset(r, SL_F_CT_ZONE);
	sl_unset(r, F_TIMEOUT);
	sl_unset(r, SL_F_TCP_STATE);
	check("ipv6 offload", r, 0,
	      " [UPDATE] tcp      6 src=2001:db8::1 dst=2001:db8::2 sport=1 dport=2 src=2001:db8::2 "
	      "dst=2001:db8::1 sport=2 dport=1 [OFFLOAD]");

	/* applies: a tuple or an event, never a packet */
	r = fresh();
	if (sl_ctline_applies(r)) {
		printf("FAIL applies: empty record\n");
		failures++;
	}
	sl_set_u64(r, SL_F_CT_EVENT, SL_CT_EVENT_NEW);
	if (!sl_ctline_applies(r)) {
		printf("FAIL applies: event\n");
		failures++;
	}
	sl_set_bytes(r, SL_F_PACKET, "x", 1);
	if (sl_ctline_applies(r)) {
		printf("FAIL applies: packet\n");
		failures++;
	}

	/* too small a buffer overflows, never writes past it */
	{
		char small[40];
		struct sl_fmt_buf b;

		r = fresh();
		four_tuple(r, 17, 1, 2);
		sl_fmt_init(&b, small, sizeof(small));
		sl_ctline_format(&b, r, &fields, SL_CTLINE_TIMESTAMP);
		if (!b.overflow || b.len > sizeof(small)) {
			printf("FAIL overflow not reported\n");
			failures++;
		}
	}

	if (failures)
		return 1;
	printf("test_ctline: all passed\n");
	return 0;
}
