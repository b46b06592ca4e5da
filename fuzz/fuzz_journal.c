/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: any bytes as a journal entry left in the spool
 * (plugins/common/journal_entry.h), as a datagram of journald's native
 * protocol, and as a record's prefix and input interface name.  abort()
 * when:
 *
 * - sl_journal_entry_iov() accepts bytes that are not exactly a sequence
 *   of length-prefixed NAME=value fields with valid names (A-Z0-9_, not a
 *   leading _ or digit, 1..64), or the fields it gives, written again
 *   with sl_journal_entry_put(), are not the same bytes;
 * - sl_journal_native_fields() accepts bytes whose fields do not lie
 *   inside them, one after another to the end, with valid names; or the
 *   fields, turned into the spool's form and back into a datagram, do not
 *   read back as the same names and values;
 * - a record's entry does not read back, or its MESSAGE, PREFIX and IN
 *   are not the record's bytes as they were, in either form.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "journal_entry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct iovec iov[SL_JOURNAL_MAX_FIELDS];
static struct sl_journal_field jf[SL_JOURNAL_MAX_FIELDS], jf2[SL_JOURNAL_MAX_FIELDS];
static _Alignas(16) uint8_t
	store[sizeof(struct sl_record) + SL_F_WELL_KNOWN_COUNT * sizeof(union sl_value)];

static void check_name(const char *p, size_t len)
{
	const char *eq = memchr(p, '=', len);
	size_t n;

	if (!eq)
		abort();
	n = (size_t)(eq - p);
	if (n < 1 || n > SL_JOURNAL_NAME_MAX || p[0] == '_' || (p[0] >= '0' && p[0] <= '9'))
		abort();
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= '0' && p[i] <= '9') || p[i] == '_'))
			abort();
}

/* The value of NAME in iov[0..n), or NULL. */
static const char *value(unsigned n, const char *name, size_t *len)
{
	size_t k = strlen(name);

	for (unsigned i = 0; i < n; i++) {
		const char *p = iov[i].iov_base;

		if (iov[i].iov_len > k && !memcmp(p, name, k) && p[k] == '=') {
			*len = iov[i].iov_len - k - 1;
			return p + k + 1;
		}
	}
	return NULL;
}

static void as_spool_record(const uint8_t *data, size_t size)
{
	struct sl_journal_entry e = { 0 };
	unsigned n = sl_journal_entry_iov(data, size, iov, SL_JOURNAL_MAX_FIELDS);

	if (!n)
		return;
	for (unsigned i = 0; i < n; i++) {
		const char *p = iov[i].iov_base;
		const char *eq = memchr(p, '=', iov[i].iov_len);

		check_name(p, iov[i].iov_len);
		sl_journal_entry_put(&e, p, (size_t)(eq - p) + 1, eq + 1, iov[i].iov_len - (size_t)(eq - p) - 1);
	}
	if (e.oom || e.len != size || memcmp(e.buf, data, size))
		abort();
	free(e.buf);
}

static void check_native_name(const char *p, size_t nlen)
{
	if (nlen < 2 || nlen - 1 > SL_JOURNAL_NAME_MAX || p[0] == '_' || (p[0] >= '0' && p[0] <= '9'))
		abort();
	for (size_t i = 0; i + 1 < nlen; i++)
		if (!((p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= '0' && p[i] <= '9') || p[i] == '_'))
			abort();
	if (p[nlen - 1] != '=' && p[nlen - 1] != '\n')
		abort();
}

static void as_datagram(const uint8_t *data, size_t size)
{
	struct sl_journal_entry sp = { 0 }, back = { .native = true };
	unsigned n = sl_journal_native_fields(data, size, jf, SL_JOURNAL_MAX_FIELDS), m;
	const uint8_t *end = data + size;

	if (!n)
		return;
	for (unsigned i = 0; i < n; i++) {
		const uint8_t *nm = (const uint8_t *)jf[i].name, *v = jf[i].value;

		if (nm < data || nm + jf[i].nlen > end || v < nm + jf[i].nlen || v + jf[i].vlen >= end ||
		    v[jf[i].vlen] != '\n' || (i && nm <= (const uint8_t *)jf[i - 1].value))
			abort();
		check_native_name(jf[i].name, jf[i].nlen);
	}
	if (!((const uint8_t *)jf[n - 1].value + jf[n - 1].vlen + 1 == end))
		abort();
	if (!sl_journal_native_entry(data, size, jf, SL_JOURNAL_MAX_FIELDS, &sp))
		abort();
	if (!sl_journal_entry_native(sp.buf, sp.len, iov, SL_JOURNAL_MAX_FIELDS, &back))
		abort();
	m = sl_journal_native_fields(back.buf, back.len, jf2, SL_JOURNAL_MAX_FIELDS);
	if (m != n)
		abort();
	for (unsigned i = 0; i < n; i++)
		if (jf2[i].nlen != jf[i].nlen || memcmp(jf2[i].name, jf[i].name, jf[i].nlen - 1) ||
		    jf2[i].vlen != jf[i].vlen || memcmp(jf2[i].value, jf[i].value, jf[i].vlen))
			abort();
	free(sp.buf);
	free(back.buf);
}

static void as_record(const uint8_t *data, size_t size)
{
	struct sl_record *r = (struct sl_record *)store;
	struct sl_journal_fmt f;
	struct sl_journal_entry e = { 0 };
	const uint8_t *nul = memchr(data, 0, size);
	size_t plen = nul ? (size_t)(nul - data) : size;
	const char *v;
	size_t len;
	unsigned n;

	memset(store, 0, sizeof(store));
	sl_set_bytes(r, SL_F_PREFIX, data, (uint32_t)plen);
	if (nul)
		sl_set_bytes(r, SL_F_IFNAME_IN, nul + 1, (uint32_t)(size - plen - 1));
	if (sl_journal_fmt_init(&f, 6, "sluice") < 0)
		return;
	if (!sl_journal_encode(&f, &e, r))
		abort();
	n = sl_journal_entry_iov(e.buf, e.len, iov, SL_JOURNAL_MAX_FIELDS);
	if (n != (nul ? 5u : 4u))	/* MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, PREFIX, IN */
		abort();
	if (!(v = value(n, "MESSAGE", &len)) || len != plen || memcmp(v, data, plen))
		abort();
	if (!(v = value(n, "PREFIX", &len)) || len != plen || memcmp(v, data, plen))
		abort();
	if (nul && (!(v = value(n, "IN", &len)) || len != size - plen - 1 || memcmp(v, nul + 1, len)))
		abort();
	/* the same as a datagram */
	e.len = 0;
	e.native = true;
	if (!sl_journal_encode(&f, &e, r))
		abort();
	n = sl_journal_native_fields(e.buf, e.len, jf, SL_JOURNAL_MAX_FIELDS);
	if (n != (nul ? 5u : 4u) || jf[0].vlen != plen || memcmp(jf[0].value, data, plen))
		abort();
	for (unsigned i = 3; i < n; i++) {
		size_t want = jf[i].nlen == 3 ? size - plen - 1 : plen;	/* IN, else PREFIX */
		const void *w = jf[i].nlen == 3 ? (const void *)(nul + 1) : (const void *)data;

		if (jf[i].vlen != want || memcmp(jf[i].value, w, want))
			abort();
	}
	free(e.buf);
	sl_journal_fmt_free(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	as_spool_record(data, size);
	as_datagram(data, size);
	as_record(data, size);
	return 0;
}
