/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugins/common/otlp_attrs.c: a record's fields as OTLP attributes, in
 * the table's order, each with its name and type: ports and numbers as
 * ints, addresses and MACs as json writes them (an IPv6 packet's
 * ::ffff:a.b.c.d kept as such), the protocol's name or else its number,
 * network.type only for 4 and 6, an interface index only without its
 * name, options as bytes; nothing for an absent field.  The rule an nflog
 * record was attributed to: security_rule.* and netfilter.rule_*, the
 * handle an int, only the parts the record has, none without a rule.  The
 * sources are compiled in (the unit-test rule links only the core library).
 */
#include "../../plugins/common/fmt.c"
#include "../../plugins/common/names.c"
#include "../../plugins/common/otlp_attrs.c"

#include <stdio.h>

#include "check.h"

static union {
	struct sl_record r;
	uint8_t mem[sizeof(struct sl_record) + (SL_F_WELL_KNOWN_COUNT + 8) * sizeof(union sl_value)];
} recmem;

static struct sl_otlp_kv kv[SL_OTLP_ATTRS_MAX];
static char scratch[SL_OTLP_ATTRS_SCRATCH];

/* Attribute `key` among kv[0..n), or NULL. */
static const struct sl_otlp_kv *find(unsigned n, const char *key)
{
	for (unsigned i = 0; i < n; i++)
		if (kv[i].keylen == strlen(key) && !memcmp(kv[i].key, key, kv[i].keylen))
			return &kv[i];
	return NULL;
}

static void check_str(unsigned n, const char *key, const char *want)
{
	const struct sl_otlp_kv *k = find(n, key);

	CHECK(k && k->kind == OTLP_STR && k->n == strlen(want) && !memcmp(k->s, want, k->n),
	      "%s: %.*s, want %s", key, k ? (int)k->n : 6, k ? (const char *)k->s : "absent", want);
}

static void check_int(unsigned n, const char *key, int64_t want)
{
	const struct sl_otlp_kv *k = find(n, key);

	CHECK(k && k->kind == OTLP_INT && k->i == want, "%s: %lld, want %lld", key,
	      k ? (long long)k->i : -1LL, (long long)want);
}

/* The rule's attributes: ids after the well-known fields, as the host registers them. */
static void check_rule(struct sl_record *r)
{
	const sl_field base = SL_F_WELL_KNOWN_COUNT;
	struct sl_rule_fields none = SL_RULE_FIELDS_NONE, f = {
		base, base + 1, base + 2, base + 3, base + 4, base + 5,
	};
	static const char comment[] = "ssh \"in\"\n";
	unsigned n;

	CHECK_EQ_U(sl_otlp_rule_attrs(&f, r, kv), 0);	/* unattributed: nothing */
	sl_set_bytes(r, base, "inet", 4);
	sl_set_bytes(r, base + 1, "filter", 6);
	sl_set_bytes(r, base + 2, "input", 5);
	sl_set_u64(r, base + 3, 12);
	sl_set_bytes(r, base + 4, comment, sizeof(comment) - 1);
	sl_set_bytes(r, base + 5, "jump log_drop", 13);
	n = sl_otlp_rule_attrs(&f, r, kv);
	CHECK_EQ_U(n, 6);
	check_str(n, "netfilter.rule_family", "inet");
	check_str(n, "security_rule.ruleset.name", "filter");
	check_str(n, "netfilter.rule_chain", "input");
	check_int(n, "netfilter.rule_handle", 12);
	check_str(n, "security_rule.name", comment);	/* bytes as they are: protobuf and json escape */
	check_str(n, "netfilter.rule_verdict", "jump log_drop");
	CHECK_EQ_U(sl_otlp_rule_attrs(&none, r, kv), 0);	/* no plugin registers them */
	/* a rule without comment and verdict: only what it has */
	sl_unset(r, base + 4);
	sl_unset(r, base + 5);
	n = sl_otlp_rule_attrs(&f, r, kv);
	CHECK_EQ_U(n, 4);
	CHECK(!find(n, "security_rule.name") && !find(n, "netfilter.rule_verdict"));
}

int main(void)
{
	struct sl_record *r = &recmem.r;
	static const uint8_t a4[4] = { 192, 0, 2, 1 }, mac[6] = { 2, 0, 0, 0x98, 0, 1 };
	static const uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	static const uint8_t opts[4] = { 2, 4, 5, 0xb4 };
	unsigned n;

	/* an IPv4 TCP packet */
	sl_set_ip4(r, SL_F_SRC_ADDR, a4);
	sl_set_ip6(r, SL_F_DST_ADDR, a6);
	sl_set_u64(r, SL_F_SPORT, 31000);
	sl_set_u64(r, SL_F_DPORT, 443);
	sl_set_u64(r, SL_F_IP_PROTO, 6);
	sl_set_u64(r, SL_F_IP_VERSION, 4);
	sl_set_bytes(r, SL_F_IFNAME_IN, "eth0", 4);
	sl_set_u64(r, SL_F_IFINDEX_IN, 2);	/* named: not an attribute */
	sl_set_u64(r, SL_F_IFINDEX_OUT, 3);	/* unnamed: an attribute */
	sl_set_bytes(r, SL_F_PREFIX, "drop ", 5);
	sl_set_u64(r, SL_F_HOOK, 1);
	sl_set_mac(r, SL_F_MAC_SRC, mac);
	sl_set_bytes(r, SL_F_TCP_OPTIONS, opts, 4);
	n = sl_otlp_record_attrs(r, kv, scratch);
	CHECK_EQ_U(n, 12);
	CHECK(n && !strcmp(kv[0].key, "source.address"), "the table's order: source.address first");
	check_str(n, "source.address", "192.0.2.1");
	check_str(n, "destination.address", "2001:db8::1");
	check_int(n, "source.port", 31000);
	check_int(n, "destination.port", 443);
	check_str(n, "network.transport", "tcp");
	check_str(n, "network.type", "ipv4");
	check_str(n, "network.interface.name", "eth0");
	CHECK(!find(n, "netfilter.ifindex_in"));
	check_int(n, "netfilter.ifindex_out", 3);
	check_str(n, "netfilter.prefix", "drop ");
	check_int(n, "netfilter.hook", 1);
	check_str(n, "netfilter.mac_src", "02:00:00:98:00:01");
	{
		const struct sl_otlp_kv *k = find(n, "netfilter.tcp_options");

		CHECK(k && k->kind == OTLP_BYTES && k->n == 4 && !memcmp(k->s, opts, 4));
	}

	/* an IPv6 packet from ::ffff:192.0.2.1, a protocol without a name, a version that is neither */
	memset(r->present, 0, sizeof(r->present));
	sl_set_ip4(r, SL_F_SRC_ADDR, a4);
	sl_set_u64(r, SL_F_IP_VERSION, 6);
	sl_set_u64(r, SL_F_IP_PROTO, 253);
	n = sl_otlp_record_attrs(r, kv, scratch);
	CHECK_EQ_U(n, 3);
	check_str(n, "source.address", "::ffff:192.0.2.1");
	check_str(n, "network.transport", "253");
	check_str(n, "network.type", "ipv6");
	sl_set_u64(r, SL_F_IP_VERSION, 5);
	n = sl_otlp_record_attrs(r, kv, scratch);
	CHECK(!find(n, "network.type"));

	/* nothing present: no attribute */
	memset(r->present, 0, sizeof(r->present));
	CHECK_EQ_U(sl_otlp_record_attrs(r, kv, scratch), 0);
	check_rule(r);
	return check_summary("test_otlp_attrs");
}
