/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugins/common/otlp_pb.c: one request in protobuf compared byte for byte
 * with what protobufjs (the @opentelemetry/otlp-transformer root, an
 * independent encoder) writes for the same message; the same in OTLP/JSON
 * as text; invalid UTF-8 as U+00XX in both; a request from several units
 * and from none; the response's rejected_log_records in both encodings,
 * and malformed or truncated responses refused without reading past them.
 * The sources are compiled in (the unit-test rule links only the core).
 */
#include "../../plugins/common/fmt.c"
#include "../../plugins/common/otlp_pb.c"

#include <stdio.h>

#include "check.h"

/*
 * protobufjs's encoding of the request below (tests/unit/test_otlp_pb.c's
 * message written as a JS object, ExportLogsServiceRequest.encode()).
 */
static const char want_hex[] =
	"0a8d010a1a0a180a0c736572766963652e6e616d6512080a06736c75696365126f0a0f0a06736c756963"
	"651205312e322e33125c0915cd853dfe9c971710091a04494e464f2a0c0a0a68656c6c6f20c3a9c3bf32"
	"120a0b736f757263652e706f7274120318bb0332120a036e6567120b18feffffffffffffffff01320a0a"
	"016212053a030001fe5900cac471fe9c9717";

static const struct sl_otlp_kv res_attrs[] = {
	{ "service.name", 12, OTLP_STR, 0, "sluice", 6 },
};
static const struct sl_otlp_resource res = { res_attrs, 1, "sluice", "1.2.3" };
static const uint8_t raw3[] = { 0, 1, 0xfe };
static const struct sl_otlp_kv attrs[] = {
	{ "source.port", 11, OTLP_INT, 443, NULL, 0 },
	{ "neg", 3, OTLP_INT, -2, NULL, 0 },
	{ "b", 1, OTLP_BYTES, 0, raw3, 3 },
};
static const struct sl_otlp_log log1 = {
	.time_ns = 1700000000123456789ull,
	.observed_ns = 1700000001000000000ull,
	.severity_number = 9,
	.severity_text = "INFO",
	.body = "hello \xe9\xff",	/* two stray bytes: U+00E9, U+00FF */
	.body_len = 8,
	.attrs = attrs,
	.nattrs = 3,
};

static char *hex(const uint8_t *p, size_t n)
{
	static char s[4096];

	for (size_t i = 0; i < n && 2 * i + 2 < sizeof(s); i++)
		sprintf(s + 2 * i, "%02x", p[i]);
	s[2 * (n < sizeof(s) / 2 - 1 ? n : sizeof(s) / 2 - 1)] = 0;
	return s;
}

static void test_protobuf(void)
{
	struct sl_otlp_buf u = { 0 }, req = { 0 };
	struct iovec v;

	CHECK(sl_otlp_log_append(&u, OTLP_PROTOBUF, &log1));
	v.iov_base = u.p;
	v.iov_len = u.len;
	CHECK(sl_otlp_request(&req, OTLP_PROTOBUF, &res, &v, 1));
	CHECK_STREQ(hex(req.p, req.len), want_hex);

	/* two units in one request: the same LogRecord twice, the lengths grow by one unit */
	{
		size_t one = req.len, ulen = u.len;
		struct iovec two[2] = { { u.p, ulen }, { u.p, ulen } };

		CHECK(sl_otlp_request(&req, OTLP_PROTOBUF, &res, two, 2));
		/* ScopeLogs' length passes 127: its varint takes a byte more */
		CHECK_EQ_U(req.len, one + ulen + 1);
		CHECK(!memcmp(req.p + req.len - 2 * ulen, u.p, ulen));
		CHECK(!memcmp(req.p + req.len - ulen, u.p, ulen));
	}
	/* no units, no scope version, no time: still a well-formed request */
	{
		struct sl_otlp_resource r0 = { NULL, 0, "sluice", NULL };
		struct sl_otlp_log l0 = { .observed_ns = 1, .severity_number = 9 };

		u.len = 0;
		CHECK(sl_otlp_log_append(&u, OTLP_PROTOBUF, &l0));
		/* 12 02 (record of 2 + 9 bytes): severity 10 09, observed 59 + 8 bytes */
		CHECK_STREQ(hex(u.p, u.len), "120b10095901000000000000" "00");
		CHECK(sl_otlp_request(&req, OTLP_PROTOBUF, &r0, NULL, 0));
		CHECK_STREQ(hex(req.p, req.len), "0a0e0a00120a0a080a06736c75696365");
	}
	sl_otlp_buf_free(&u);
	sl_otlp_buf_free(&req);
}

/* More attributes than the encoder keeps sizes for (KV_CACHE): the same bytes each. */
static void test_many_attrs(void)
{
	static struct sl_otlp_kv many[KV_CACHE + 3];
	struct sl_otlp_log l = { .observed_ns = 1, .severity_number = 9, .attrs = many };
	struct sl_otlp_buf u = { 0 };
	size_t c0, a, cn, n = KV_CACHE + 3;

	for (size_t i = 0; i < n; i++)
		many[i] = (struct sl_otlp_kv){ "k\xff", 2, OTLP_STR, 0, "v\xe9", 2 };
	CHECK(sl_otlp_log_append(&u, OTLP_PROTOBUF, &l));
	c0 = u.len - 2;
	l.nattrs = 1;
	u.len = 0;
	CHECK(sl_otlp_log_append(&u, OTLP_PROTOBUF, &l));
	a = u.len - 2 - c0;
	l.nattrs = (unsigned)n;
	u.len = 0;
	CHECK(sl_otlp_log_append(&u, OTLP_PROTOBUF, &l));
	cn = c0 + n * a;
	CHECK_EQ_U(u.len, 1 + varint_size(cn) + cn);
	/* attribute 0 right after the severity (10 09), the last before observed (59 + 8) */
	CHECK(!memcmp(u.p + 1 + varint_size(cn) + 2, u.p + u.len - 9 - a, a));
	sl_otlp_buf_free(&u);
}

static void test_json(void)
{
	struct sl_otlp_buf u = { 0 }, req = { 0 };
	struct iovec v[2];
	const char *want_rec =
		"{\"timeUnixNano\":\"1700000000123456789\",\"observedTimeUnixNano\":\"1700000001000000000\","
		"\"severityNumber\":9,\"severityText\":\"INFO\",\"body\":{\"stringValue\":\"hello \\u00e9\\u00ff\"},"
		"\"attributes\":[{\"key\":\"source.port\",\"value\":{\"intValue\":\"443\"}},"
		"{\"key\":\"neg\",\"value\":{\"intValue\":\"-2\"}},"
		"{\"key\":\"b\",\"value\":{\"bytesValue\":\"AAH+\"}}]}";
	char want[2048];

	CHECK(sl_otlp_log_append(&u, OTLP_JSON, &log1));
	CHECK(u.len == strlen(want_rec) && !memcmp(u.p, want_rec, u.len), "%.*s", (int)u.len, u.p);
	v[0].iov_base = v[1].iov_base = u.p;
	v[0].iov_len = v[1].iov_len = u.len;
	CHECK(sl_otlp_request(&req, OTLP_JSON, &res, v, 2));
	snprintf(want, sizeof(want),
		 "{\"resourceLogs\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
		 "\"value\":{\"stringValue\":\"sluice\"}}]},\"scopeLogs\":[{\"scope\":{\"name\":\"sluice\","
		 "\"version\":\"1.2.3\"},\"logRecords\":[%s,%s]}]}]}", want_rec, want_rec);
	CHECK(req.len == strlen(want) && !memcmp(req.p, want, req.len), "%.*s", (int)req.len, req.p);

	/* quotes, backslashes and control bytes escaped; base64 of 1 and 2 bytes padded */
	{
		static const struct sl_otlp_kv k[] = {
			{ "q\"k", 3, OTLP_STR, 0, "a\\b\n\x01", 5 },
			{ "b1", 2, OTLP_BYTES, 0, "\xff", 1 },
			{ "b2", 2, OTLP_BYTES, 0, "\xff\xee", 2 },
			{ "i", 1, OTLP_INT, INT64_MIN, NULL, 0 },
		};
		struct sl_otlp_log l = { .observed_ns = 5, .severity_number = 17, .attrs = k, .nattrs = 4 };
		const char *w = "{\"observedTimeUnixNano\":\"5\",\"severityNumber\":17,\"attributes\":["
				"{\"key\":\"q\\\"k\",\"value\":{\"stringValue\":\"a\\\\b\\n\\u0001\"}},"
				"{\"key\":\"b1\",\"value\":{\"bytesValue\":\"/w==\"}},"
				"{\"key\":\"b2\",\"value\":{\"bytesValue\":\"/+4=\"}},"
				"{\"key\":\"i\",\"value\":{\"intValue\":\"-9223372036854775808\"}}]}";

		u.len = 0;
		CHECK(sl_otlp_log_append(&u, OTLP_JSON, &l));
		CHECK(u.len == strlen(w) && !memcmp(u.p, w, u.len), "%.*s", (int)u.len, u.p);
	}
	sl_otlp_buf_free(&u);
	sl_otlp_buf_free(&req);
}

static void test_response(void)
{
	/* partial_success { rejected_log_records: 3, error_message: "x" } */
	static const uint8_t pb3[] = { 0x0a, 0x05, 0x08, 0x03, 0x12, 0x01, 'x' };
	/* an unknown fixed64 and fixed32 field before it, then partial_success without a count */
	static const uint8_t pb_skip[] = { 0x11, 1, 2, 3, 4, 5, 6, 7, 8, 0x1d, 1, 2, 3, 4, 0x0a, 0x00 };
	static const uint8_t pb_trunc[] = { 0x0a, 0x05, 0x08, 0x03 };
	static const uint8_t pb_group[] = { 0x0b };
	static const uint8_t pb_long[] = { 0x0a, 0x0b, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
					   0xff, 0xff, 0xff, 0xff, 0xff };
	const char *j = "{\"partialSuccess\":{\"rejectedLogRecords\": \"12\",\"errorMessage\":\"m\"}}";

	CHECK_EQ_I(sl_otlp_response_rejected(OTLP_PROTOBUF, pb3, sizeof(pb3)), 3);
	CHECK_EQ_I(sl_otlp_response_rejected(OTLP_PROTOBUF, pb_skip, sizeof(pb_skip)), 0);
	CHECK_EQ_I(sl_otlp_response_rejected(OTLP_PROTOBUF, pb_trunc, sizeof(pb_trunc)), -1);
	CHECK_EQ_I(sl_otlp_response_rejected(OTLP_PROTOBUF, pb_group, sizeof(pb_group)), -1);
	CHECK_EQ_I(sl_otlp_response_rejected(OTLP_PROTOBUF, pb_long, sizeof(pb_long)), -1);
	CHECK_EQ_I(sl_otlp_response_rejected(OTLP_PROTOBUF, "", 0), 0);
	CHECK_EQ_I(sl_otlp_response_rejected(OTLP_JSON, j, strlen(j)), 12);
	CHECK_EQ_I(sl_otlp_response_rejected(OTLP_JSON, "{}", 2), 0);
	CHECK_EQ_I(sl_otlp_response_rejected(OTLP_JSON, "{\"rejectedLogRecords\":7}", 24), 7);
	CHECK_EQ_I(sl_otlp_response_rejected(OTLP_JSON, "{\"rejectedLogRecords\":", 22), -1);
	CHECK_EQ_I(sl_otlp_response_rejected(OTLP_JSON, "{\"rejectedLogRecords\":\"x\"}", 26), -1);
}

int main(void)
{
	test_protobuf();
	test_many_attrs();
	test_json();
	test_response();
	return check_summary("test_otlp_pb");
}
