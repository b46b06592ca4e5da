/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * NFLOG attribute parser: every field, the malformed cases, and that no
 * truncation or corruption of an event makes it read outside the event
 * (run under ASan/valgrind to make that last part bite).
 */
#include "../../plugins/common/nflog_attrs.c"

#include <stdio.h>
#include <stdlib.h>

#include <linux/netlink.h>

#include "check.h"

static union {
	struct sl_record r;
	uint8_t mem[sizeof(struct sl_record) + SL_F_WELL_KNOWN_COUNT * sizeof(union sl_value)];
} rec_mem;

static struct sl_record *fresh(void)
{
	memset(&rec_mem, 0xa5, sizeof(rec_mem));
	memset(rec_mem.r.present, 0, sizeof(rec_mem.r.present));
	return &rec_mem.r;
}

struct ev {
	uint8_t b[1024];
	size_t len;
};

static void ev_start(struct ev *e, uint8_t family, uint16_t group)
{
	e->b[0] = family;
	e->b[1] = 0;
	e->b[2] = (uint8_t)(group >> 8);
	e->b[3] = (uint8_t)group;
	e->len = 4;
}

/* Append a TLV: length and type in host order, value padded to 4. */
static void ev_put(struct ev *e, uint16_t type, const void *v, size_t n)
{
	uint16_t l = (uint16_t)(4 + n);

	memcpy(e->b + e->len, &l, 2);
	memcpy(e->b + e->len + 2, &type, 2);
	memcpy(e->b + e->len + 4, v, n);
	memset(e->b + e->len + 4 + n, 0, SL_TLV_ALIGN(n) - n);
	e->len += SL_TLV_ALIGN(4 + n);
}

static void ev_put32(struct ev *e, uint16_t type, uint32_t v)
{
	v = htobe32(v);
	ev_put(e, type, &v, 4);
}

static const uint8_t pkt[28] = {0x45, 0, 0, 28, 0, 1, 0, 0, 64, 17, 0, 0, 10, 99, 0, 1,
				10, 99, 0, 2, 0x30, 0x39, 0x27, 0x0f, 0, 8, 0, 0};

static void build_full(struct ev *e)
{
	uint8_t hdr[4] = {0x08, 0x00, 1, 0};	/* IPv4, NF_INET_LOCAL_IN */
	uint8_t hw[12] = {0, 6, 0, 0, 2, 0, 0, 0x99, 0, 1, 0, 0};
	uint8_t hwhdr[14] = {2, 0, 0, 0x99, 0, 2, 2, 0, 0, 0x99, 0, 1, 8, 0};
	uint16_t hwtype = htobe16(1);
	uint64_t ts[2] = {htobe64(1700000000), htobe64(123456)};
	uint8_t ct[16];
	uint16_t l = 8, t = CTA_ID, ls = 8, ts_ = CTA_STATUS;
	uint32_t id = htobe32(0xdeadbeef), status = htobe32(8);

	/* nested conntrack attributes: CTA_STATUS then CTA_ID, as the kernel nests them */
	memcpy(ct, &ls, 2);
	memcpy(ct + 2, &ts_, 2);
	memcpy(ct + 4, &status, 4);
	memcpy(ct + 8, &l, 2);
	memcpy(ct + 10, &t, 2);
	memcpy(ct + 12, &id, 4);

	ev_start(e, 2, 7);
	ev_put(e, NFULA_PACKET_HDR, hdr, 4);
	ev_put(e, NFULA_PREFIX, "sluice-test ", 13);
	ev_put32(e, NFULA_IFINDEX_INDEV, 2);
	ev_put32(e, NFULA_IFINDEX_OUTDEV, 3);
	ev_put32(e, NFULA_IFINDEX_PHYSINDEV, 4);
	ev_put32(e, NFULA_IFINDEX_PHYSOUTDEV, 5);
	ev_put32(e, NFULA_MARK, 0x1234);
	ev_put(e, NFULA_HWADDR, hw, sizeof(hw));
	ev_put(e, NFULA_HWTYPE, &hwtype, 2);
	ev_put(e, NFULA_HWLEN, &(uint16_t){htobe16(14)}, 2);
	ev_put(e, NFULA_HWHEADER, hwhdr, sizeof(hwhdr));
	ev_put(e, NFULA_TIMESTAMP, ts, sizeof(ts));
	ev_put32(e, NFULA_UID, 1000);
	ev_put32(e, NFULA_GID, 100);
	ev_put32(e, NFULA_SEQ, 41);
	ev_put32(e, NFULA_SEQ_GLOBAL, 4242);
	ev_put(e, NFULA_CT | NLA_F_NESTED, ct, sizeof(ct));
	ev_put32(e, NFULA_CT_INFO, 2);
	ev_put(e, NFULA_PAYLOAD, pkt, sizeof(pkt));
}

static void test_full(void)
{
	struct ev e;
	struct sl_record *r = fresh();
	struct sl_time rx = {5, 6};

	build_full(&e);
	CHECK(sl_nflog_parse(r, e.b, e.len, &rx, 0) == 0);
	CHECK(r->v[SL_F_FAMILY].u64 == 2);
	CHECK(r->v[SL_F_HW_PROTOCOL].u64 == 0x0800);
	CHECK(r->v[SL_F_HOOK].u64 == 1);
	CHECK(sl_has(r, SL_F_PREFIX) && r->v[SL_F_PREFIX].bytes.len == 12 &&
	      memcmp(r->v[SL_F_PREFIX].bytes.ptr, "sluice-test ", 12) == 0);
	CHECK(r->v[SL_F_IFINDEX_IN].u64 == 2 && r->v[SL_F_IFINDEX_OUT].u64 == 3);
	CHECK(r->v[SL_F_PHYSINDEX_IN].u64 == 4 && r->v[SL_F_PHYSINDEX_OUT].u64 == 5);
	CHECK(r->v[SL_F_MARK].u64 == 0x1234);
	CHECK(sl_has(r, SL_F_HWADDR) && r->v[SL_F_HWADDR].bytes.len == 6 &&
	      r->v[SL_F_HWADDR].bytes.ptr[5] == 1);
	CHECK(r->v[SL_F_HWTYPE].u64 == 1);
	CHECK(sl_has(r, SL_F_HWHDR) && r->v[SL_F_HWHDR].bytes.len == 14);
	CHECK(r->v[SL_F_TIMESTAMP].time.sec == 1700000000 &&
	      r->v[SL_F_TIMESTAMP].time.nsec == 123456000);
	CHECK(r->v[SL_F_UID].u64 == 1000 && r->v[SL_F_GID].u64 == 100);
	CHECK(r->v[SL_F_SEQ_LOCAL].u64 == 41 && r->v[SL_F_SEQ_GLOBAL].u64 == 4242);
	CHECK(sl_has(r, SL_F_CT_ID) && r->v[SL_F_CT_ID].u64 == 0xdeadbeef);
	CHECK(r->v[SL_F_CT_STATE].u64 == 2);
	CHECK(sl_has(r, SL_F_PACKET) && r->v[SL_F_PACKET].bytes.len == sizeof(pkt) &&
	      memcmp(r->v[SL_F_PACKET].bytes.ptr, pkt, sizeof(pkt)) == 0);
	CHECK(!sl_has(r, SL_F_CAPLEN) && !sl_has(r, SL_F_ORIG_LEN));
}

static void test_minimal_and_rx_time(void)
{
	struct ev e;
	struct sl_record *r = fresh();
	struct sl_time rx = {1234, 5678};

	ev_start(&e, 10, 1);
	ev_put(&e, NFULA_PACKET_HDR, (uint8_t[4]){0x86, 0xdd, 3, 0}, 4);
	CHECK(sl_nflog_parse(r, e.b, e.len, &rx, 0) == 0);
	CHECK(r->v[SL_F_FAMILY].u64 == 10 && r->v[SL_F_HW_PROTOCOL].u64 == 0x86dd);
	CHECK(sl_has(r, SL_F_TIMESTAMP) && r->v[SL_F_TIMESTAMP].time.sec == 1234 &&
	      r->v[SL_F_TIMESTAMP].time.nsec == 5678);
	CHECK(!sl_has(r, SL_F_PACKET) && !sl_has(r, SL_F_PREFIX) && !sl_has(r, SL_F_UID));

	r = fresh();
	CHECK(sl_nflog_parse(r, e.b, e.len, NULL, 0) == 0);
	CHECK(!sl_has(r, SL_F_TIMESTAMP));

	/* just the header */
	r = fresh();
	CHECK(sl_nflog_parse(r, e.b, 4, NULL, 0) == 0);
	CHECK(sl_nflog_parse(fresh(), e.b, 3, NULL, 0) == -1);
}

static void test_l2hdr_preferred(void)
{
	struct ev e;
	struct sl_record *r = fresh();
	uint8_t l2[18] = {0};

	ev_start(&e, 7, 1);
	ev_put(&e, NFULA_HWHEADER, l2, 14);
	ev_put(&e, NFULA_L2HDR, l2, 18);
	CHECK(sl_nflog_parse(r, e.b, e.len, NULL, 0) == 0);
	CHECK(r->v[SL_F_HWHDR].bytes.len == 18);
}

/* Tags the receive path moved into skb metadata arrive in NFULA_VLAN. */
static void test_vlan(void)
{
	struct ev e;
	struct sl_record *r = fresh();
	/* nested: NFULA_VLAN_TCI 0x2014 (prio 1, id 20), NFULA_VLAN_PROTO 0x8100 */
	uint8_t vlan[16] = {6, 0, NFULA_VLAN_TCI, 0, 0x20, 0x14, 0, 0, 6, 0, NFULA_VLAN_PROTO, 0, 0x81, 0x00, 0, 0};

	ev_start(&e, 7, 1);
	ev_put(&e, NFULA_VLAN | 0x8000, vlan, sizeof(vlan));
	CHECK(sl_nflog_parse(r, e.b, e.len, NULL, 0) == 0);
	CHECK(sl_has(r, SL_F_VLAN_ID) && r->v[SL_F_VLAN_ID].u64 == 20);
	ev_start(&e, 7, 1);
	ev_put(&e, NFULA_VLAN | 0x8000, (uint8_t[4]){9, 0, 2, 0}, 4);
	CHECK(sl_nflog_parse(fresh(), e.b, e.len, NULL, 0) == -1);
}

/* netdev egress: the payload is the whole frame; packet starts after it. */
static void test_netdev_egress(void)
{
	struct ev e;
	struct sl_record *r = fresh();
	uint8_t frame[14 + 20] = {2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00, 0x45};

	ev_start(&e, 5, 1);
	ev_put(&e, NFULA_PACKET_HDR, (uint8_t[4]){0x08, 0x00, 1, 0}, 4);
	ev_put(&e, NFULA_L2HDR, frame, 14);
	ev_put(&e, NFULA_PAYLOAD, frame, sizeof(frame));
	CHECK(sl_nflog_parse(r, e.b, e.len, NULL, 0) == 0);
	CHECK(r->v[SL_F_HWHDR].bytes.len == 14);
	CHECK(r->v[SL_F_PACKET].bytes.len == 20 && r->v[SL_F_PACKET].bytes.ptr[0] == 0x45);
	/* ingress (hook 0): the payload already starts at the network header */
	r = fresh();
	ev_start(&e, 5, 1);
	ev_put(&e, NFULA_PACKET_HDR, (uint8_t[4]){0x08, 0x00, 0, 0}, 4);
	ev_put(&e, NFULA_L2HDR, frame, 14);
	ev_put(&e, NFULA_PAYLOAD, frame + 14, 20);
	CHECK(sl_nflog_parse(r, e.b, e.len, NULL, 0) == 0);
	CHECK(r->v[SL_F_PACKET].bytes.len == 20);
}

static void test_malformed(void)
{
	struct ev e;
	uint16_t v;

	/* a TLV longer than the event */
	build_full(&e);
	v = 900;
	memcpy(e.b + 4, &v, 2);
	CHECK(sl_nflog_parse(fresh(), e.b, e.len, NULL, 0) == -1);

	/* a TLV shorter than its header */
	build_full(&e);
	v = 2;
	memcpy(e.b + 4, &v, 2);
	CHECK(sl_nflog_parse(fresh(), e.b, e.len, NULL, 0) == -1);

	/* two stray bytes after the last TLV */
	build_full(&e);
	CHECK(sl_nflog_parse(fresh(), e.b, e.len + 2, NULL, 0) == -1);

	/* fixed-size attributes too short */
	ev_start(&e, 2, 1);
	ev_put(&e, NFULA_MARK, "ab", 2);
	CHECK(sl_nflog_parse(fresh(), e.b, e.len, NULL, 0) == -1);
	ev_start(&e, 2, 1);
	ev_put(&e, NFULA_TIMESTAMP, "01234567", 8);
	CHECK(sl_nflog_parse(fresh(), e.b, e.len, NULL, 0) == -1);
	ev_start(&e, 2, 1);
	ev_put(&e, NFULA_PACKET_HDR, "ab", 2);
	CHECK(sl_nflog_parse(fresh(), e.b, e.len, NULL, 0) == -1);

	/* hardware address length beyond the attribute */
	ev_start(&e, 2, 1);
	ev_put(&e, NFULA_HWADDR, (uint8_t[12]){0, 9}, 12);
	CHECK(sl_nflog_parse(fresh(), e.b, e.len, NULL, 0) == -1);

	/* microseconds out of range */
	ev_start(&e, 2, 1);
	ev_put(&e, NFULA_TIMESTAMP, (uint64_t[2]){0, htobe64(1000000)}, 16);
	CHECK(sl_nflog_parse(fresh(), e.b, e.len, NULL, 0) == -1);

	/* a nested conntrack attribute running out of its parent */
	ev_start(&e, 2, 1);
	ev_put(&e, NFULA_CT, (uint16_t[4]){40, CTA_ID, 0, 0}, 8);
	CHECK(sl_nflog_parse(fresh(), e.b, e.len, NULL, 0) == -1);
}

static void test_unpadded_last_and_prefix_without_nul(void)
{
	struct ev e;
	struct sl_record *r = fresh();

	ev_start(&e, 2, 1);
	ev_put(&e, NFULA_PREFIX, "abc", 3);	/* no NUL */
	e.len -= 1;				/* and no padding */
	CHECK(sl_nflog_parse(r, e.b, e.len, NULL, 0) == 0);
	CHECK(r->v[SL_F_PREFIX].bytes.len == 3);
}

static void test_truncated_capture(void)
{
	struct ev e;
	struct sl_record *r;
	size_t cut;

	build_full(&e);
	cut = e.len - 10;	/* inside the payload, the last TLV */
	CHECK(sl_nflog_parse(fresh(), e.b, cut, NULL, 0) == -1);
	r = fresh();
	CHECK(sl_nflog_parse(r, e.b, cut, NULL, SL_NFLOG_TRUNCATED_OK) == 0);
	CHECK(r->v[SL_F_PACKET].bytes.len == sizeof(pkt) - 10);
	CHECK(r->v[SL_F_CAPLEN].u64 == sizeof(pkt) - 10);
	CHECK(r->v[SL_F_ORIG_LEN].u64 == sizeof(pkt));
}

/* Every prefix of the event and random corruption: parse or refuse, never overrun. */
static void test_no_overrun(void)
{
	struct ev e;

	build_full(&e);
	for (size_t n = 0; n <= e.len; n++) {
		/* a copy of exactly n bytes so ASan sees any overrun */
		uint8_t *c = malloc(n ? n : 1);

		memcpy(c, e.b, n);
		(void)sl_nflog_parse(fresh(), c, n, NULL, 0);
		(void)sl_nflog_parse(fresh(), c, n, NULL, SL_NFLOG_TRUNCATED_OK);
		free(c);
	}
	srand(42);
	for (int i = 0; i < 20000; i++) {
		uint8_t *c = malloc(e.len);
		struct sl_record *r = fresh();

		memcpy(c, e.b, e.len);
		for (int k = 0; k < 1 + rand() % 4; k++)
			c[rand() % e.len] = (uint8_t)rand();
		if (sl_nflog_parse(r, c, e.len, NULL, SL_NFLOG_TRUNCATED_OK) == 0) {
			for (unsigned f = 0; f < SL_F_WELL_KNOWN_COUNT; f++) {
				const struct sl_bytes *b = &r->v[f].bytes;

				if (!sl_has(r, (sl_field)f) || (f != SL_F_PACKET && f != SL_F_PREFIX &&
								 f != SL_F_HWHDR && f != SL_F_HWADDR))
					continue;
				CHECK(b->ptr >= c && b->ptr + b->len <= c + e.len);
			}
		}
		free(c);
	}
}

/*
 * sl_nflog_parse_some(): only the attributes asked for.  The fields asked
 * for are exactly what the full parse makes; the others are left unset,
 * and a malformed attribute nobody asked for is stepped over.
 */
static void test_parse_some(void)
{
	uint64_t fields[SL_PRESENCE_WORDS] = {0};
	static __typeof__(rec_mem) full_mem;
	struct sl_record *full = &full_mem.r, *r;
	struct sl_time rx = {5, 6};
	uint32_t attrs;
	struct ev e;
	static const int made[] = {SL_F_PACKET, SL_F_TIMESTAMP, SL_F_HOOK, SL_F_HW_PROTOCOL,
				   SL_F_FAMILY, SL_F_NFLOG_GROUP, SL_F_MARK};
	static const int left_out[] = {SL_F_PREFIX, SL_F_UID, SL_F_GID, SL_F_IFINDEX_IN,
				       SL_F_IFINDEX_OUT, SL_F_HWADDR, SL_F_HWHDR, SL_F_SEQ_LOCAL,
				       SL_F_SEQ_GLOBAL, SL_F_CT_ID, SL_F_CT_STATE, SL_F_HWTYPE};

	CHECK(sl_nflog_attrs_for(NULL) == SL_NFLOG_ATTRS_ALL);
	build_full(&e);
	r = fresh();
	CHECK(sl_nflog_parse(r, e.b, e.len, &rx, 0) == 0);
	memcpy(&full_mem, &rec_mem, sizeof(rec_mem));

	/* what pcap (raw) and a `mark` filter read */
	fields[SL_F_PACKET >> 6] |= 1ull << (SL_F_PACKET & 63);
	fields[SL_F_TIMESTAMP >> 6] |= 1ull << (SL_F_TIMESTAMP & 63);
	fields[SL_F_MARK >> 6] |= 1ull << (SL_F_MARK & 63);
	attrs = sl_nflog_attrs_for(fields);
	CHECK(attrs & (1u << NFULA_PAYLOAD) && attrs & (1u << NFULA_TIMESTAMP) &&
	      attrs & (1u << NFULA_MARK) && attrs & (1u << NFULA_PACKET_HDR));
	CHECK(!(attrs & (1u << NFULA_PREFIX)) && !(attrs & (1u << NFULA_UID)));
	r = fresh();
	CHECK(sl_nflog_parse_some(r, e.b, e.len, &rx, 0, attrs) == 0);
	for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++)
		CHECK(sl_has(r, (sl_field)made[i]) &&
		      memcmp(&r->v[made[i]], &full->v[made[i]], sizeof(union sl_value)) == 0,
		      "field %d as the full parse makes it", made[i]);
	for (size_t i = 0; i < sizeof(left_out) / sizeof(left_out[0]); i++)
		CHECK(!sl_has(r, (sl_field)left_out[i]) && sl_has(full, (sl_field)left_out[i]),
		      "field %d left out", left_out[i]);

	/* all attributes: the full parse */
	r = fresh();
	CHECK(sl_nflog_parse_some(r, e.b, e.len, &rx, 0, SL_NFLOG_ATTRS_ALL) == 0);
	CHECK(memcmp(r->present, full->present, sizeof(r->present)) == 0);

	/* a short NFULA_UID: malformed when parsed, stepped over when not asked for */
	ev_start(&e, 2, 7);
	ev_put(&e, NFULA_UID, "ab", 2);
	ev_put(&e, NFULA_PAYLOAD, pkt, sizeof(pkt));
	CHECK(sl_nflog_parse(fresh(), e.b, e.len, NULL, 0) == -1);
	r = fresh();
	CHECK(sl_nflog_parse_some(r, e.b, e.len, NULL, 0, attrs) == 0 && sl_has(r, SL_F_PACKET));
	/* the framing is checked whatever is asked for */
	CHECK(sl_nflog_parse_some(fresh(), e.b, e.len - 1, NULL, 0, attrs) == -1);
}

int main(void)
{
	test_full();
	test_minimal_and_rx_time();
	test_l2hdr_preferred();
	test_vlan();
	test_netdev_egress();
	test_malformed();
	test_unpadded_last_and_prefix_without_nul();
	test_truncated_capture();
	test_no_overrun();
	test_parse_some();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("test_nflog_attrs: ok\n");
	return 0;
}
