/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugins/common/journal_entry.c: a record's journal entry holds
 * MESSAGE (the text, else the prefix, else empty), PRIORITY,
 * SYSLOG_IDENTIFIER and json's fields under upper-case names with json's
 * values (strings unquoted, packet strings as their bytes, a newline
 * kept); registered fields named by sl_journal_name()'s rule, one whose
 * name is taken refused; the encoded entry reads back field for field,
 * and every damaged form of it (cut, a length past the end, a bad name)
 * is refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "journal_entry.h"

static union {
	struct sl_record r;
	uint8_t mem[sizeof(struct sl_record) + SL_MAX_FIELDS * sizeof(union sl_value)];
} recmem;

static struct iovec iov[SL_JOURNAL_MAX_FIELDS];
static unsigned niov;

/* The value of field NAME in the entry read back, or NULL; *len its length. */
static const char *field(const char *name, size_t *len)
{
	size_t n = strlen(name);

	for (unsigned i = 0; i < niov; i++) {
		const char *p = iov[i].iov_base;

		if (iov[i].iov_len > n && !memcmp(p, name, n) && p[n] == '=') {
			*len = iov[i].iov_len - n - 1;
			return p + n + 1;
		}
	}
	return NULL;
}

static int has(const char *name, const char *want)
{
	size_t len;
	const char *v = field(name, &len);

	if (!v) {
		fprintf(stderr, "no field %s\n", name);
		return 0;
	}
	if (len != strlen(want) || memcmp(v, want, len)) {
		fprintf(stderr, "%s=%.*s, expected %s\n", name, (int)len, v, want);
		return 0;
	}
	return 1;
}

static void test_names(void)
{
	char out[SL_JOURNAL_NAME_MAX + 2];
	char longname[100];
	size_t n;

	n = sl_journal_name(out, "src_ip", 6);
	CHECK(n == 7 && !memcmp(out, "SRC_IP=", 7));
	n = sl_journal_name(out, "geo.country-code", 16);
	CHECK(n == 17 && !memcmp(out, "GEO_COUNTRY_CODE=", 17));
	n = sl_journal_name(out, "_trusted", 8);
	CHECK(n == 10 && !memcmp(out, "X_TRUSTED=", 10));
	n = sl_journal_name(out, "9lives", 6);
	CHECK(n == 8 && !memcmp(out, "X9LIVES=", 8));
	n = sl_journal_name(out, "", 0);
	CHECK(n == 2 && !memcmp(out, "X=", 2));
	memset(longname, 'a', sizeof(longname));
	n = sl_journal_name(out, longname, sizeof(longname));
	CHECK(n == SL_JOURNAL_NAME_MAX + 1 && out[SL_JOURNAL_NAME_MAX] == '=');
}

static void test_entry(void)
{
	struct sl_journal_fmt f;
	struct sl_journal_entry e = { 0 };
	struct sl_record *r = &recmem.r;
	static const char prefix[] = "drop\nin=\"x\" ";
	static const uint8_t src[4] = { 192, 0, 2, 1 };
	static const uint8_t dst[4] = { 198, 51, 100, 7 };
	size_t len;
	int cid;

	CHECK(sl_journal_fmt_init(&f, 5, "fw") == 0);
	cid = SL_F_WELL_KNOWN_COUNT;
	CHECK(sl_journal_fmt_add(&f, (sl_field)cid, SL_T_STRING, "community_id") == 1);
	CHECK(sl_journal_fmt_add(&f, (sl_field)(cid + 1), SL_T_U64, "src-ip") == 0);	/* SRC_IP is json's */
	CHECK(sl_journal_fmt_add(&f, (sl_field)(cid + 1), SL_T_U64, "message") == 0);
	CHECK(sl_journal_fmt_add(&f, (sl_field)(cid + 2), SL_T_BYTES, "raw") == 1);

	memset(recmem.mem, 0, sizeof(recmem.mem));
	sl_set_bytes(r, SL_F_PREFIX, prefix, sizeof(prefix) - 1);
	sl_set_u64(r, SL_F_IP_PROTO, 6);
	sl_set_u64(r, SL_F_DPORT, 22);
	sl_set_u64(r, SL_F_TCP_FLAGS, 0x12);
	sl_set_ip4(r, SL_F_SRC_ADDR, src);
	sl_set_ip4(r, SL_F_DST_ADDR, dst);
	sl_set_bytes(r, SL_F_IFNAME_IN, "eth0", 4);
	sl_set_u64(r, SL_F_IFINDEX_IN, 2);	/* left out: its name is there */
	sl_set_u64(r, SL_F_DECODE_FLAGS, SL_DECODE_TRUNCATED | SL_DECODE_FRAGMENT);
	sl_set_bytes(r, (sl_field)cid, "1:abc=", 6);
	sl_set_bytes(r, (sl_field)(cid + 2), "\x01\xff", 2);

	/* no text: the prefix is the message, bytes as they are */
	e.len = 0;
	CHECK(sl_journal_encode(&f, &e, r));
	niov = sl_journal_entry_iov(e.buf, e.len, iov, SL_JOURNAL_MAX_FIELDS);
	CHECK(niov == 13);
	CHECK(has("MESSAGE", prefix));
	CHECK(has("PREFIX", prefix));
	CHECK(has("PRIORITY", "5"));
	CHECK(has("SYSLOG_IDENTIFIER", "fw"));
	CHECK(has("PROTO", "tcp"));
	CHECK(has("DEST_PORT", "22"));
	CHECK(has("TCP_FLAGS", "ACK SYN"));	/* json's order, the LOG target's */
	CHECK(has("SRC_IP", "192.0.2.1"));
	CHECK(has("DEST_IP", "198.51.100.7"));
	CHECK(has("IN", "eth0"));
	CHECK(has("DECODE_FLAGS", "[\"truncated\",\"fragment\"]"));
	CHECK(has("COMMUNITY_ID", "1:abc="));
	CHECK(has("RAW", "01ff"));
	CHECK(!field("IFINDEX_IN", &len));

	/* a text is the message; no prefix, no text: an empty one */
	sl_set_bytes(r, SL_F_TEXT, "line", 4);
	e.len = 0;
	CHECK(sl_journal_encode(&f, &e, r));
	niov = sl_journal_entry_iov(e.buf, e.len, iov, SL_JOURNAL_MAX_FIELDS);
	CHECK(has("MESSAGE", "line"));
	sl_unset(r, SL_F_TEXT);
	sl_unset(r, SL_F_PREFIX);
	e.len = 0;
	CHECK(sl_journal_encode(&f, &e, r));
	niov = sl_journal_entry_iov(e.buf, e.len, iov, SL_JOURNAL_MAX_FIELDS);
	CHECK(niov == 12 && has("MESSAGE", ""));

	/* damaged entries are refused */
	{
		char *copy = malloc(e.len);
		size_t first = 4 + iov[0].iov_len;

		memcpy(copy, e.buf, e.len);
		CHECK(sl_journal_entry_iov(copy, e.len, iov, SL_JOURNAL_MAX_FIELDS) == 12);
		CHECK(sl_journal_entry_iov(copy, e.len, iov, 11) == 0);		/* more fields than room */
		CHECK(sl_journal_entry_iov(copy, e.len - 1, iov, SL_JOURNAL_MAX_FIELDS) == 0);	/* cut */
		CHECK(sl_journal_entry_iov(copy, first + 2, iov, SL_JOURNAL_MAX_FIELDS) == 0);	/* cut length */
		CHECK(sl_journal_entry_iov(copy, 0, iov, SL_JOURNAL_MAX_FIELDS) == 0);
		copy[0] = (char)0xff;							/* past the end */
		CHECK(sl_journal_entry_iov(copy, e.len, iov, SL_JOURNAL_MAX_FIELDS) == 0);
		memcpy(copy, e.buf, e.len);
		copy[4] = 'm';								/* "mESSAGE=" */
		CHECK(sl_journal_entry_iov(copy, e.len, iov, SL_JOURNAL_MAX_FIELDS) == 0);
		copy[4] = '_';								/* trusted */
		CHECK(sl_journal_entry_iov(copy, e.len, iov, SL_JOURNAL_MAX_FIELDS) == 0);
		memcpy(copy, e.buf, e.len);
		memset(copy + 4, 'A', iov[0].iov_len);					/* no '=' */
		CHECK(sl_journal_entry_iov(copy, e.len, iov, SL_JOURNAL_MAX_FIELDS) == 0);
		free(copy);
	}
	free(e.buf);
	sl_journal_fmt_free(&f);
}

static struct sl_journal_field jf[SL_JOURNAL_MAX_FIELDS];

/* The value of NAME in the native datagram read back (n fields), or NULL. */
static const char *nfield(unsigned n, const char *name, size_t *len)
{
	size_t k = strlen(name);

	for (unsigned i = 0; i < n; i++)
		if (jf[i].nlen == k + 1 && !memcmp(jf[i].name, name, k)) {
			*len = jf[i].vlen;
			return jf[i].value;
		}
	return NULL;
}

/*
 * The native form: a value with a newline in the binary form (the exact
 * bytes the protocol document gives), others NAME=value; several entries
 * one after another; read back field for field; turned into the spool's
 * form and back, the same bytes; damaged datagrams refused.
 */
static void test_native(void)
{
	struct sl_journal_fmt f;
	struct sl_journal_entry e = { .native = true }, sp = { 0 }, back = { .native = true };
	struct sl_record *r = &recmem.r;
	static const char prefix[] = "drop\nin=\"x\" ";
	static const char want_prefix[] = "PREFIX\n\x0c\0\0\0\0\0\0\0drop\nin=\"x\" \n";
	size_t len, first;
	const char *v;
	unsigned n;

	CHECK(sl_journal_fmt_init(&f, 6, "sluice") == 0);
	memset(recmem.mem, 0, sizeof(recmem.mem));
	sl_set_bytes(r, SL_F_TEXT, "a line", 6);
	sl_set_bytes(r, SL_F_PREFIX, prefix, sizeof(prefix) - 1);
	sl_set_u64(r, SL_F_DPORT, 22);
	CHECK(sl_journal_encode(&f, &e, r));
	first = e.len;
	CHECK(e.len > 8 && !memcmp(e.buf, "MESSAGE=a line\nPRIORITY=6\nSYSLOG_IDENTIFIER=sluice\n", 50));
	CHECK(memmem(e.buf, e.len, want_prefix, sizeof(want_prefix) - 1) != NULL);
	CHECK(memmem(e.buf, e.len, "\nDEST_PORT=22\n", 14) != NULL);
	n = sl_journal_native_fields(e.buf, e.len, jf, SL_JOURNAL_MAX_FIELDS);
	CHECK(n == 5, "%u fields", n);
	CHECK((v = nfield(n, "PREFIX", &len)) && len == sizeof(prefix) - 1 && !memcmp(v, prefix, len));
	CHECK((v = nfield(n, "MESSAGE", &len)) && len == 6 && !memcmp(v, "a line", 6));
	CHECK((v = nfield(n, "DEST_PORT", &len)) && len == 2 && !memcmp(v, "22", 2));

	/* appended: a second entry after the first, the first untouched */
	sl_unset(r, SL_F_TEXT);
	CHECK(sl_journal_encode(&f, &e, r));
	CHECK(sl_journal_native_fields(e.buf + first, e.len - first, jf, SL_JOURNAL_MAX_FIELDS) == 5);
	CHECK((v = nfield(5, "MESSAGE", &len)) && len == sizeof(prefix) - 1);	/* binary form too */
	CHECK(sl_journal_native_fields(e.buf, first, jf, SL_JOURNAL_MAX_FIELDS) == 5);

	/* the spool's form and back: the same datagram */
	CHECK(sl_journal_native_entry(e.buf, first, jf, SL_JOURNAL_MAX_FIELDS, &sp));
	niov = sl_journal_entry_iov(sp.buf, sp.len, iov, SL_JOURNAL_MAX_FIELDS);
	CHECK(niov == 5 && has("PREFIX", prefix) && has("MESSAGE", "a line"));
	CHECK(sl_journal_entry_native(sp.buf, sp.len, iov, SL_JOURNAL_MAX_FIELDS, &back));
	CHECK(back.len == first && !memcmp(back.buf, e.buf, first));
	CHECK(!sl_journal_entry_native(sp.buf, sp.len - 1, iov, SL_JOURNAL_MAX_FIELDS, &back));
	CHECK(back.len == first);	/* a failed one adds nothing */

	/* damaged datagrams are refused */
	{
		char *copy = malloc(first);
		char *bin = memmem(e.buf, first, "PREFIX\n", 7);
		size_t at = (size_t)(bin - e.buf) + 7;

		memcpy(copy, e.buf, first);
		CHECK(sl_journal_native_fields(copy, first, jf, 4) == 0);		/* more fields than room */
		CHECK(sl_journal_native_fields(copy, first - 1, jf, SL_JOURNAL_MAX_FIELDS) == 0);	/* no final \n */
		CHECK(sl_journal_native_fields(copy, 0, jf, SL_JOURNAL_MAX_FIELDS) == 0);
		CHECK(sl_journal_native_fields(copy, at + 4, jf, SL_JOURNAL_MAX_FIELDS) == 0);	/* cut length */
		copy[at] = 13;								/* one past its \n */
		CHECK(sl_journal_native_fields(copy, first, jf, SL_JOURNAL_MAX_FIELDS) == 0);
		copy[at] = (char)0xff;							/* past the end */
		CHECK(sl_journal_native_fields(copy, first, jf, SL_JOURNAL_MAX_FIELDS) == 0);
		memcpy(copy, e.buf, first);
		copy[0] = 'm';								/* "mESSAGE=" */
		CHECK(sl_journal_native_fields(copy, first, jf, SL_JOURNAL_MAX_FIELDS) == 0);
		CHECK(!sl_journal_native_entry(copy, first, jf, SL_JOURNAL_MAX_FIELDS, &sp));
		copy[0] = '_';								/* trusted */
		CHECK(sl_journal_native_fields(copy, first, jf, SL_JOURNAL_MAX_FIELDS) == 0);
		free(copy);
	}
	free(e.buf);
	free(sp.buf);
	free(back.buf);
	sl_journal_fmt_free(&f);
}

int main(void)
{
	test_names();
	test_entry();
	test_native();
	return check_summary("journal_entry");
}
