/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The expression engine of the where filter (plugins/common/expr.c): a
 * table of expressions against four records (a TCP/IPv4 drop, a UDP/IPv6
 * accept, an ICMP/IPv4 drop, a record with no field at all), each result
 * written out by hand; then every error message with its column.  Record
 * strings are not NUL-terminated: each is followed by bytes that would
 * change a result if the engine read past its length.
 */
#include <arpa/inet.h>
#include <stdio.h>

#include "check.h"
#include "expr.h"

/* Two fields a plugin registers, after the well-known ones. */
#define F_COUNTRY SL_F_WELL_KNOWN_COUNT
#define F_ASN (SL_F_WELL_KNOWN_COUNT + 1)

static int lookup(void *ctx, const char *name, enum sl_type *type)
{
	static const enum sl_type types[] = {
#define X(id, n, t, d) t,
		SL_WELL_KNOWN_FIELDS(X)
#undef X
	};

	(void)ctx;
	for (int i = 0; i < SL_F_WELL_KNOWN_COUNT; i++)
		if (strcmp(name, sl_well_known_names[i]) == 0) {
			*type = types[i];
			return i;
		}
	if (strcmp(name, "src_country") == 0) {
		*type = SL_T_STRING;
		return F_COUNTRY;
	}
	if (strcmp(name, "src_asn") == 0) {
		*type = SL_T_U64;
		return F_ASN;
	}
	return -1;
}

enum { NREC = 4 };
static _Alignas(16) uint8_t store[NREC][sizeof(struct sl_record) + SL_MAX_FIELDS * sizeof(union sl_value)];
static struct sl_record *rec[NREC];

/* A string field pointing at `s`, of length len (what follows is not part of it). */
static void set_str(struct sl_record *r, sl_field f, const char *s, uint32_t len)
{
	sl_set_bytes(r, f, s, len);
}

static void set_addr(struct sl_record *r, sl_field f, const char *a)
{
	uint8_t b[16];

	if (inet_pton(AF_INET, a, b) == 1)
		sl_set_ip4(r, f, b);
	else if (inet_pton(AF_INET6, a, b) == 1)
		sl_set_ip6(r, f, b);
	else
		abort();
}

static void make_records(void)
{
	static const uint8_t mac1[6] = {0x02, 0, 0, 0, 0, 0x01}, mac2[6] = {0x02, 0, 0, 0, 0, 0x99};
	struct sl_record *r;

	for (int i = 0; i < NREC; i++) {
		rec[i] = (struct sl_record *)store[i];
		memset(rec[i]->present, 0, sizeof(rec[i]->present));
	}
	/* 0: TCP over IPv4, dropped, to SSH */
	r = rec[0];
	set_str(r, SL_F_PREFIX, "DROP sshXYZ", 8);
	sl_set_u64(r, SL_F_IP_PROTO, 6);
	sl_set_u64(r, SL_F_SPORT, 40000);
	sl_set_u64(r, SL_F_DPORT, 22);
	sl_set_u64(r, SL_F_MARK, 0x1f00);
	sl_set_u64(r, SL_F_FAMILY, 2);
	sl_set_u64(r, SL_F_TCP_FLAGS, 0x02);
	set_addr(r, SL_F_SRC_ADDR, "10.1.2.3");
	set_addr(r, SL_F_DST_ADDR, "192.0.2.1");
	set_str(r, SL_F_IFNAME_IN, "eth0.100", 4);
	sl_set_mac(r, SL_F_MAC_SRC, mac1);
	sl_set_time(r, SL_F_TIMESTAMP, 1700000000, 5);
	set_str(r, F_COUNTRY, "DE", 2);
	sl_set_u64(r, F_ASN, 3320);
	/* 1: UDP over IPv6, accepted */
	r = rec[1];
	set_str(r, SL_F_PREFIX, "ACCEPT", 6);
	sl_set_u64(r, SL_F_IP_PROTO, 17);
	sl_set_u64(r, SL_F_SPORT, 53);
	sl_set_u64(r, SL_F_DPORT, 5353);
	sl_set_u64(r, SL_F_FAMILY, 10);
	set_addr(r, SL_F_SRC_ADDR, "2001:db8::1");
	set_addr(r, SL_F_DST_ADDR, "fd00::5");
	set_str(r, SL_F_IFNAME_IN, "wlan0", 5);
	sl_set_mac(r, SL_F_MAC_SRC, mac2);
	sl_set_time(r, SL_F_TIMESTAMP, 1800000000, 0);
	/* 2: ICMP over IPv4, dropped; no ports, no mark */
	r = rec[2];
	set_str(r, SL_F_PREFIX, "DROP", 4);
	sl_set_u64(r, SL_F_IP_PROTO, 1);
	sl_set_u64(r, SL_F_ICMP_TYPE, 8);
	sl_set_u64(r, SL_F_FAMILY, 2);
	set_addr(r, SL_F_SRC_ADDR, "10.255.255.255");
	set_addr(r, SL_F_DST_ADDR, "11.0.0.0");
	set_str(r, SL_F_IFNAME_IN, "", 0);
	/* 3: nothing present */
}

/* Each expression and its result on records 0..3: 'T' true, 'F' false. */
static const struct {
	const char *expr, *want;
} table[] = {
	/* == != on integers; absent is false for both */
	{"dport == 22", "TFFF"},
	{"dport != 22", "FTFF"},
	{"not dport == 22", "FTTT"},
	{"not dport != 22", "TFTT"},
	{"dport == 0x16", "TFFF"},
	{"dport == 0x1F", "FFFF"},
	{"dport == 5353", "FTFF"},
	/* < <= > >= */
	{"dport < 22", "FFFF"},
	{"dport <= 22", "TFFF"},
	{"dport > 22", "FTFF"},
	{"dport >= 22", "TTFF"},
	{"sport < 1024", "FTFF"},
	{"not sport < 1024", "TFTT"},
	/* & bit test */
	{"mark & 0x100", "TFFF"},
	{"mark & 0xff", "FFFF"},
	{"not mark & 0xff", "TTTT"},
	{"tcp_flags & 0x12", "TFFF"},
	/* in: sets, ranges, == with a set */
	{"dport in {22, 3389}", "TFFF"},
	{"dport in {22, 5353,}", "TTFF"},
	{"dport in 1-1023", "TFFF"},
	{"dport in 1024-65535", "FTFF"},
	{"dport in {1-21, 23-100}", "FFFF"},
	{"dport == {1-30, 5000-6000}", "TTFF"},
	{"dport != {22, 3389}", "FTFF"},
	{"dport in {1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,5353}", "FTFF"},
	{"dport in {1,3,5,7,9,11,13,15,17,19,21,22,25,27,29,31,5352}", "TFFF"},
	{"sport in {0-10, 20-30, 40-50, 60-70, 80-90, 100-110, 120-130, 140-150, 39999-40001}", "TFFF"},
	{"sport in {0-10, 20-30, 40-50, 52-52, 54-60, 80-90, 100-110, 120-130, 140-150}", "FFFF"},
	{"dport in {22}", "TFFF"},
	/* protocol and family names */
	{"ip_proto == tcp", "TFFF"},
	{"ip_proto == TCP", "TFFF"},
	{"ip_proto in {udp, icmp}", "FTTF"},
	{"ip_proto == 17", "FTFF"},
	{"ip_proto == ipv6-icmp", "FFFF"},
	{"ip_proto != icmpv6", "TTTF"},
	{"family == ipv4", "TFTF"},
	{"family == ipv6", "FTFF"},
	/* strings: ==, !=, ^=, ~, sets; not NUL-terminated */
	{"prefix == \"DROP ssh\"", "TFFF"},
	{"prefix == 'DROP'", "FFTF"},
	{"prefix != \"DROP\"", "TTFF"},
	{"prefix ^= \"DROP\"", "TFTF"},
	{"prefix ^= \"DROP sshX\"", "FFFF"},
	{"prefix ^= \"\"", "TTTF"},
	{"prefix ~ \"ssh$\"", "TFFF"},
	{"prefix ~ \"^(DROP|ACCEPT)$\"", "FTTF"},
	{"prefix ~ \"^d\"", "FFFF"},
	{"prefix ~ \"^[]A-Z]{4}( [a-z+*]{1,3})?$\"", "TFTF"},
	{"prefix ~ \"\\\\+|^A\"", "FTFF"},
	{"prefix in {\"ACCEPT\", \"DROP\"}", "FTTF"},
	{"prefix in {\"a\", \"b\", \"c\", \"d\", \"e\", \"f\", \"g\", \"h\", \"i\", \"DROP\"}", "FFTF"},
	{"prefix in {\"a\", \"b\", \"c\", \"d\", \"e\", \"f\", \"g\", \"h\", \"i\", \"DROP ssh\"}", "TFFF"},
	{"ifname_in == \"eth0\"", "TFFF"},
	{"ifname_in == \"\"", "FFTF"},
	{"prefix == \"\\x44ROP\"", "FFTF"},
	{"prefix == \"DROP\\tssh\"", "FFFF"},
	/* addresses: IPv4, IPv6, CIDR, ranges, sets */
	{"src_addr == 10.1.2.3", "TFFF"},
	{"src_addr in 10.0.0.0/8", "TFTF"},
	{"src_addr == 10.0.0.0/8", "TFTF"},
	{"src_addr != 10.0.0.0/8", "FTFF"},
	{"src_addr in 10.1.2.3/32", "TFFF"},
	{"src_addr in 0.0.0.0/0", "TFTF"},
	{"src_addr in ::/0", "TTTF"},
	{"src_addr in 2001:db8::/32", "FTFF"},
	{"src_addr == 2001:db8::1", "FTFF"},
	{"src_addr == 2001:db8::2", "FFFF"},
	{"src_addr in ::ffff:10.0.0.0/104", "TFTF"},
	{"dst_addr in 10.0.0.0/8", "FFFF"},
	{"dst_addr in 10.255.255.255-11.0.0.0", "FFTF"},
	{"dst_addr in {192.0.2.0/24, fd00::/8}", "TTFF"},
	{"dst_addr in {192.0.2.2-192.0.2.9, 11.0.0.0, fc00::/7}", "FTTF"},
	{"src_addr in {10.1.2.4, 10.1.2.2, 10.255.255.255}", "FFTF"},
	{"src_addr in {10.1.2.3/31, 10.1.2.0/30, 192.168.0.0/16}", "TFFF"},
	{"src_addr in 10.1.2.3/8", "TFTF"},
	/* MACs */
	{"mac_src == 02:00:00:00:00:01", "TFFF"},
	{"mac_src != 02:00:00:00:00:01", "FTFF"},
	{"mac_src in {02:00:00:00:00:99, 0a:00:00:00:00:00}", "FTFF"},
	{"mac_src in 02:00:00:00:00:00-02:00:00:00:00:ff", "TTFF"},
	/* times: seconds since the epoch */
	{"timestamp >= 1700000000", "TTFF"},
	{"timestamp < 1750000000", "TFFF"},
	/* aliases: the JSON keys */
	{"src_ip in 10.0.0.0/8", "TFTF"},
	{"dest_ip == 192.0.2.1", "TFFF"},
	{"proto == udp", "FTFF"},
	{"src_port == 53", "FTFF"},
	{"dest_port == 22", "TFFF"},
	{"in == \"wlan0\"", "FTFF"},
	{"in in {\"eth0\", \"wlan0\"}", "TTFF"},
	{"has in", "TTTF"},
	{"has out", "FFFF"},
	/* fields registered by plugins */
	{"src_country == \"DE\"", "TFFF"},
	{"src_asn == 3320", "TFFF"},
	{"has src_country", "TFFF"},
	/* has, and, or, not, parentheses, precedence */
	{"has dport", "TTFF"},
	{"not has dport", "FFTT"},
	{"has icmp_type and icmp_type == 8", "FFTF"},
	{"dport == 22 or ip_proto == icmp", "TFTF"},
	{"dport == 22 and ip_proto == udp", "FFFF"},
	{"dport == 5353 or dport == 22 and ip_proto == udp", "FTFF"},
	{"(dport == 5353 or dport == 22) and ip_proto == udp", "FTFF"},
	{"(dport == 5353 or dport == 22) and ip_proto == tcp", "TFFF"},
	{"not (dport == 22 or ip_proto == udp)", "FFTT"},
	{"not not has prefix", "TTTF"},
	{"((((has prefix))))", "TTTF"},
	{"prefix ^= \"DROP\" and ip_proto == tcp and dport in {22, 3389} and src_addr in 10.0.0.0/8",
	 "TFFF"},
	{"  dport\t==\n22  ", "TFFF"},
	{"dport==22 and ip_proto==tcp", "TFFF"},
};

static void results(void)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct sl_expr_error err;
		struct sl_expr *e = sl_expr_compile(table[i].expr, lookup, NULL, &err);
		char got[NREC + 1] = {0};

		CHECK(e != NULL, "%s: column %u: %s", table[i].expr, err.column, err.msg);
		if (!e)
			continue;
		for (int r = 0; r < NREC; r++)
			got[r] = sl_expr_match(e, rec[r]) ? 'T' : 'F';
		CHECK(strcmp(got, table[i].want) == 0, "%s: %s, want %s", table[i].expr, got,
		      table[i].want);
		sl_expr_free(e);
	}
}

/* Every error: the column it names and the start of its message. */
static const struct {
	const char *expr;
	unsigned column;
	const char *msg;
} errors[] = {
	{"", 1, "expected an expression, found nothing"},
	{"   ", 4, "expected an expression, found nothing"},
	{"dprt == 22", 1, "unknown field 'dprt'; did you mean 'dport'? (sluice --describe lists the fields)"},
	{"dport == 22 and sprt == 1", 17, "unknown field 'sprt'; did you mean 'sport'?"},
	{"dest_prot == 1", 1, "unknown field 'dest_prot'; did you mean 'dest_port'?"},
	{"xyzzy == 1", 1, "unknown field 'xyzzy' (sluice --describe lists the fields)"},
	{"22 == dport", 1, "expected a field name, 'has', 'not' or '(', found '22'"},
	{"dport", 6, "expected an operator (== != < <= > >= in ^= ~ &) after 'dport', found the end"},
	{"dport 22", 7, "expected an operator (== != < <= > >= in ^= ~ &) after 'dport', found '22'"},
	{"dport = 22", 7, "unexpected character '='"},
	{"dport == ", 10, "expected a number (decimal or 0x hex), found the end of the expression"},
	{"dport == tcp", 10, "expected a number (decimal or 0x hex), found 'tcp'"},
	{"dport == \"22\"", 10, "expected a number (decimal or 0x hex), found '\"22\"'"},
	{"dport == 99999999999999999999", 10, "expected a number"},
	{"ip_proto == tcpx", 13, "expected a protocol number or name (tcp, udp, icmp...), found 'tcpx'"},
	{"family == ipv5", 11, "expected a family number or name (ipv4, ipv6...)"},
	{"dport == 22 22", 13, "expected 'and', 'or' or the end of the expression, found '22'"},
	{"dport == 22 and", 16, "expected a field name, 'has', 'not' or '(', found the end"},
	{"(dport == 22", 13, "expected ')' to close the '(' at column 1, found the end"},
	{"dport == 22)", 12, "expected 'and', 'or' or the end of the expression, found ')'"},
	{"dport in {22, 23", 17, "expected ',' or '}', found the end"},
	{"dport in {22 23}", 14, "expected ',' or '}', found '23'"},
	{"dport in {}", 11, "expected a number (decimal or 0x hex), found '}'"},
	{"dport in 30-20", 10, "empty range: expected low-high with low <= high"},
	{"dport ^= \"2\"", 7, "operator '^=' does not apply to 'dport', which is an integer"},
	{"dport ~ \"2\"", 7, "operator '~' does not apply to 'dport', which is an integer"},
	{"prefix < \"a\"", 8, "operator '<' does not apply to 'prefix', which is a string"},
	{"prefix & 1", 8, "operator '&' does not apply to 'prefix', which is a string"},
	{"src_addr > 10.0.0.1", 10, "operator '>' does not apply to 'src_addr', which is an IP address"},
	{"mac_src & 1", 9, "operator '&' does not apply to 'mac_src', which is a MAC address"},
	{"timestamp & 1", 11, "operator '&' does not apply to 'timestamp', which is a time"},
	{"prefix == 10.0.0.0/8", 11, "expected a string in quotes, found '10.0.0.0/8'"},
	{"prefix == DROP", 11, "expected a string in quotes, found 'DROP'"},
	{"prefix in {\"a\"-\"b\"}", 15, "strings have no ranges"},
	{"src_addr == \"10.0.0.1\"", 13, "expected an IPv4 or IPv6 address or CIDR prefix, found '\"10.0.0.1\"'"},
	{"src_addr == 10.0.0.256", 13, "expected an IPv4 or IPv6 address or CIDR prefix"},
	{"src_addr in 10.0.0.0/33", 13, "expected a prefix length 0-32 after '/', found '33'"},
	{"src_addr in fd00::/129", 13, "expected a prefix length 0-128 after '/', found '129'"},
	{"src_addr in 10.0.0.0/", 13, "expected a prefix length 0-32 after '/', found ''"},
	{"src_addr in 10.0.0.0/8-10.2.0.0", 23, "a CIDR prefix cannot start a range"},
	{"src_addr in 10.0.0.9-10.0.0.1", 13, "expected a range of addresses low-high, low <= high"},
	{"mac_src == 02:00:00:00:00", 12, "expected a MAC address (aa:bb:cc:dd:ee:ff), found '02:00:00:00:00'"},
	{"mac_src == 22", 12, "expected a MAC address"},
	{"prefix == \"abc", 11, "unterminated string: expected \""},
	{"prefix == 'abc", 11, "unterminated string: expected '"},
	{"prefix == \"a\\qb\"", 13, "unknown escape '\\q' in a string"},
	{"prefix == \"a\\x4\"", 13, "unknown escape '\\x'"},
	{"prefix ~ \"(a\"", 10, "bad regular expression (POSIX extended): "},
	{"prefix ~ \"a\\x00b\"", 10, "a regular expression cannot hold a NUL byte"},
	{"prefix ~ \"a++\"", 10, "regular expression refused: two repetitions in a row"},
	{"prefix ~ \"(a{10}){10}{2}\"", 10, "regular expression refused: two repetitions in a row"},
	{"prefix ~ \"(a{10})b{10}c{10}\"", 10, "regular expression refused: repetition counts multiply past 1000"},
	{"prefix ~ \"(a)\\\\1\"", 10, "regular expression refused: back-references"},
	{"src_country == 5", 16, "expected a string in quotes, found '5'"},
	{"src_asn ^= \"3320\"", 9, "operator '^=' does not apply to 'src_asn', which is an integer"},
	{"has", 4, "expected a field name, 'has', 'not' or '(', found the end"},
	{"has 10", 5, "expected a field name, 'has', 'not' or '(', found '10'"},
	{"has nosuch", 5, "unknown field 'nosuch'"},
	{"not", 4, "expected a field name, 'has', 'not' or '(', found the end"},
	{"dport in in", 10, "expected a number (decimal or 0x hex), found 'in'"},
	{"dport == 22 ; rm", 13, "unexpected character ';'"},
	{"dport == 22 && sport == 1", 13, "expected 'and', 'or' or the end of the expression, found '&'"},
};

static void error_messages(void)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		struct sl_expr_error err;
		struct sl_expr *e = sl_expr_compile(errors[i].expr, lookup, NULL, &err);

		CHECK(e == NULL, "%s compiled", errors[i].expr);
		sl_expr_free(e);
		CHECK(err.column == errors[i].column, "%s: column %u, want %u (%s)", errors[i].expr,
		      err.column, errors[i].column, err.msg);
		CHECK(strncmp(err.msg, errors[i].msg, strlen(errors[i].msg)) == 0,
		      "%s: \"%s\", want \"%s...\"", errors[i].expr, err.msg, errors[i].msg);
	}
}

/* Nesting, length and term limits; a text of the limits' size still works. */
static void limits(void)
{
	static char buf[SL_EXPR_MAX_LEN + 2];
	struct sl_expr_error err;
	struct sl_expr *e;
	int n = 0;

	for (int i = 0; i < SL_EXPR_MAX_DEPTH - 1; i++)
		n += sprintf(buf + n, "(");
	n += sprintf(buf + n, "has dport");
	for (int i = 0; i < SL_EXPR_MAX_DEPTH - 1; i++)
		n += sprintf(buf + n, ")");
	e = sl_expr_compile(buf, lookup, NULL, &err);
	CHECK(e && sl_expr_match(e, rec[0]) && !sl_expr_match(e, rec[2]), "%s", err.msg);
	sl_expr_free(e);

	memmove(buf + 1, buf, (size_t)n + 1);
	buf[0] = '(';
	strcat(buf, ")");
	e = sl_expr_compile(buf, lookup, NULL, &err);
	CHECK(!e && strstr(err.msg, "nested too deeply"), "%s", err.msg);
	CHECK_EQ_U(err.column, SL_EXPR_MAX_DEPTH + 1);

	n = sprintf(buf, "has dport");
	while (n < SL_EXPR_MAX_LEN - 40)
		n += sprintf(buf + n, " or dport == %d", n);
	e = sl_expr_compile(buf, lookup, NULL, &err);
	CHECK(!e && strstr(err.msg, "more than 1024 terms"), "%s", err.msg);

	memset(buf, ' ', SL_EXPR_MAX_LEN + 1);
	buf[SL_EXPR_MAX_LEN + 1] = 0;
	e = sl_expr_compile(buf, lookup, NULL, &err);
	CHECK(!e && strstr(err.msg, "longer than"), "%s", err.msg);
}

/* The fields an expression reads, each once, with where it is first named. */
static void fields(void)
{
	struct sl_expr_error err;
	struct sl_expr *e = sl_expr_compile("dport == 1 or (has src_ip and dest_port in {2, 3}) or "
					    "not proto == tcp",
					    lookup, NULL, &err);

	CHECK(e != NULL, "%s", err.msg);
	if (!e)
		return;
	CHECK_EQ_U(sl_expr_nfields(e), 3);
	CHECK_EQ_U(sl_expr_field(e, 0), SL_F_DPORT);
	CHECK_EQ_U(sl_expr_field_column(e, 0), 1);
	CHECK_EQ_U(sl_expr_field(e, 1), SL_F_SRC_ADDR);
	CHECK_EQ_U(sl_expr_field_column(e, 1), 20);
	CHECK_EQ_U(sl_expr_field(e, 2), SL_F_IP_PROTO);
	sl_expr_free(e);
	CHECK_STREQ(sl_expr_alias("dest_ip"), "dst_addr");
	CHECK_STREQ(sl_expr_alias("src_port"), "sport");
	CHECK_STREQ(sl_expr_alias("dport"), NULL);
}

int main(void)
{
	make_records();
	results();
	error_messages();
	limits();
	fields();
	return check_summary("test_expr");
}
