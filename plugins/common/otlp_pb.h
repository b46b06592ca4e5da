/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * OpenTelemetry logs (OTLP) as request bodies: ExportLogsServiceRequest
 * in protobuf, written by hand from the published field numbers
 * (opentelemetry-proto: collector/logs/v1/logs_service.proto,
 * logs/v1/logs.proto, common/v1/common.proto, resource/v1/resource.proto),
 * or in OTLP/JSON (the proto3 JSON mapping with OTLP's rules: lowerCamelCase
 * keys, 64-bit integers as decimal strings, enums as numbers, bytes as
 * base64).  No generated code, no library.
 *
 * A request is built in two steps, so a batch can be kept as units (and a
 * unit spooled on its own):
 *   1. sl_otlp_log_append() appends one LogRecord, as a unit: in protobuf the
 *      whole ScopeLogs.log_records field (tag, length, message), in JSON
 *      one object;
 *   2. sl_otlp_request() wraps units into one request: one ResourceLogs with
 *      the resource's attributes and one ScopeLogs whose scope is
 *      {name, version}.  JSON units are joined with commas.
 * Units of one encoding only: a request never mixes them.
 *
 * Strings: valid UTF-8 is copied; a byte that is not part of a valid
 * sequence (utf8.h) becomes the character U+00XX, as the json filter
 * writes it (\u00XX), so the string is always valid UTF-8 (protobuf
 * requires it) and equal in both encodings.  In JSON, '"', '\\' and the
 * control characters are escaped.
 *
 * sl_otlp_response_rejected() reads partial_success.rejected_log_records
 * from an ExportLogsServiceResponse, in either encoding.
 *
 * Errors: false when out of memory (the buffer keeps what it had before
 * the call).  No global state; thread-safe for distinct buffers.
 */
#ifndef SLUICE_OTLP_PB_H
#define SLUICE_OTLP_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

enum sl_otlp_encoding { OTLP_PROTOBUF, OTLP_JSON };

/* A growable byte buffer (reused: len = 0 empties it). */
struct sl_otlp_buf {
	uint8_t *p;
	size_t len, cap;
};

/* The value types of an attribute (AnyValue's string_value, int_value, bytes_value). */
enum sl_otlp_kind { OTLP_STR, OTLP_INT, OTLP_BYTES };

/* One attribute, KeyValue{key, AnyValue}: key and s are not NUL-terminated. */
struct sl_otlp_kv {
	const char *key;
	size_t keylen;
	enum sl_otlp_kind kind;
	int64_t i;		/* OTLP_INT */
	const void *s;		/* OTLP_STR, OTLP_BYTES */
	size_t n;
};

/* One LogRecord.  severity_text NULL: not written; body NULL: no body. */
struct sl_otlp_log {
	uint64_t time_ns;		/* time_unix_nano; 0: unknown (not written) */
	uint64_t observed_ns;		/* observed_time_unix_nano */
	int severity_number;		/* 1..24 (SeverityNumber) */
	const char *severity_text;
	const void *body;		/* AnyValue string_value */
	size_t body_len;
	const struct sl_otlp_kv *attrs;
	unsigned nattrs;
};

/* What every request of an output carries: resource attributes and the scope. */
struct sl_otlp_resource {
	const struct sl_otlp_kv *attrs;
	unsigned nattrs;
	const char *scope_name;		/* InstrumentationScope */
	const char *scope_version;	/* NULL: not written */
};

/* Make room for `need` more bytes; false when out of memory. */
bool sl_otlp_buf_reserve(struct sl_otlp_buf *b, size_t need);
void sl_otlp_buf_free(struct sl_otlp_buf *b);

/* Append log record l to b as one unit in encoding enc. */
bool sl_otlp_log_append(struct sl_otlp_buf *b, enum sl_otlp_encoding enc, const struct sl_otlp_log *l);

/*
 * Replace out's content with one ExportLogsServiceRequest holding the n
 * units unit[0..n) (from sl_otlp_log_append, same enc) for resource res.
 */
bool sl_otlp_request(struct sl_otlp_buf *out, enum sl_otlp_encoding enc, const struct sl_otlp_resource *res,
		  const struct iovec *unit, unsigned n);

/*
 * The rejected_log_records of an ExportLogsServiceResponse body: 0 when
 * the body is empty or has no partial_success, -1 when it cannot be read
 * (truncated or malformed protobuf, or JSON without a readable number
 * after "rejectedLogRecords").  Never reads past body[len).
 */
int64_t sl_otlp_response_rejected(enum sl_otlp_encoding enc, const void *body, size_t len);

#endif /* SLUICE_OTLP_PB_H */
