/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: the pcapng writer's untrusted inputs.  The bytes are
 * cut at 0xfe into parts: the first is a file's body after its SHB, which
 * whole_end must walk without reading past it, keeping only blocks whose
 * lengths agree; the next ones are the comment's strings (prefix, table,
 * chain, comment, verdict, Community ID: from packets and rulesets) and
 * interface names.  The comment must be valid UTF-8 without a control
 * byte, no longer than its buffer, and whole (an escape or sequence is
 * never cut); every IDB the names add must be whole and the section must
 * never pass its bound.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pcapng.h"
#include "text_escape.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PARTS 12

static struct sl_pcapng w;

static void check_blocks(const uint8_t *p, size_t len)
{
	size_t whole = sl_pcapng_whole_end(p, len), off = 0;

	if (whole > len)
		abort();
	while (off < whole) {
		uint32_t n, again;

		memcpy(&n, p + off + 4, 4);
		if (n < 12 || (n & 3) || n > whole - off)
			abort();
		memcpy(&again, p + off + n - 4, 4);
		if (again != n)
			abort();
		off += n;
	}
	if (off != whole)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_bytes part[PARTS];
	size_t n = 0, start = 0, cap;
	static char out[SL_PCAPNG_COMMENT_MAX];
	struct sl_fmt_buf b;
	struct sl_pcapng_why why;
	size_t clen;

	memset(part, 0, sizeof(part));
	for (size_t i = 0; i <= size && n < PARTS; i++) {
		if (i == size || data[i] == 0xfe) {
			part[n].ptr = data + start;
			part[n].len = (uint32_t)(i - start);
			n++;
			start = i + 1;
		}
	}
	/* part 0: a file body, copied to an exact-size buffer for ASan */
	{
		uint8_t *body = malloc(part[0].len ? part[0].len : 1);

		if (!body)
			return 0;
		memcpy(body, part[0].ptr, part[0].len);
		check_blocks(body, part[0].len);
		free(body);
	}
	/* parts 1..6: the comment; its capacity from the first byte */
	memset(&why, 0, sizeof(why));
	why.prefix = n > 1 ? &part[1] : NULL;
	why.table = n > 2 ? &part[2] : NULL;
	why.chain = n > 3 ? &part[3] : NULL;
	why.comment = n > 4 ? &part[4] : NULL;
	why.verdict = n > 5 ? &part[5] : NULL;
	why.community_id = n > 6 ? &part[6] : NULL;
	why.has_handle = size > 1 && (data[1] & 1);
	why.handle = size > 2 ? data[2] * 0x0101010101010101ULL : 0;
	why.has_ct_id = size > 1 && (data[1] & 2);
	why.ct_id = size > 3 ? data[3] : 0;
	cap = size ? (data[0] & 1 ? sizeof(out) : data[0] * 4u) : sizeof(out);
	if (cap > sizeof(out))
		cap = sizeof(out);
	sl_fmt_init(&b, out, cap);
	clen = sl_pcapng_comment(&b, &why);
	if (clen != b.len || clen > cap)
		abort();
	if (sl_esc_scan(out, clen, 0) != clen)
		abort();	/* a control byte or invalid UTF-8 came through */
	if (clen && out[clen - 1] == '\\')
		abort();	/* an escape cut */
	/* parts 7..: interface names */
	sl_pcapng_init(&w, 65535);
	for (size_t i = 7; i < n; i++) {
		bool added;
		int id = sl_pcapng_if_find(&w, (uint16_t)i, (const char *)part[i].ptr, part[i].len);

		if (id < 0)
			id = sl_pcapng_if_add(&w, (uint16_t)i, (const char *)part[i].ptr, part[i].len,
					      &added);
		if (id < 0 || id >= SL_PCAPNG_MAX_IF || w.section_len > SL_PCAPNG_SECTION_MAX)
			abort();
	}
	check_blocks(w.section, w.section_len);
	if (sl_pcapng_whole_end(w.section, w.section_len) != w.section_len)
		abort();
	/* each IDB's if_name (its first option when present) is clean text */
	for (size_t off = SL_PCAPNG_SHB_LEN; off < w.section_len;) {
		uint32_t len;
		uint16_t code, olen;

		memcpy(&len, w.section + off + 4, 4);
		memcpy(&code, w.section + off + 16, 2);
		memcpy(&olen, w.section + off + 18, 2);
		if (code == 2 && (olen > len - 24 || sl_esc_scan(w.section + off + 20, olen, 0) != olen))
			abort();
		off += len;
	}
	return 0;
}
