/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Escaping of untrusted bytes in text outputs (one record = one line), in
 * the form the kernel uses for /dev/kmsg: a byte is written as \xNN, two
 * lowercase hex digits.
 *
 * Escaped:
 *   - every byte below 0x20 (newline, CR, ESC, ...), and DEL (0x7f);
 *     TAB only without SL_ESC_KEEP_TAB;
 *   - every byte that is not part of a valid UTF-8 sequence: stray
 *     continuation bytes, the leads 0xc0 0xc1 and 0xf5..0xff, overlong
 *     forms, UTF-16 surrogates (U+D800..U+DFFF), code points above
 *     U+10FFFF, a sequence cut short.  An invalid sequence has its lead
 *     byte escaped and scanning goes on at the next byte, so each byte of
 *     it ends up escaped;
 *   - the C1 controls U+0080..U+009F (both bytes: \xc2\x9b): terminals
 *     obey U+009B like ESC [;
 *   - with SL_ESC_BACKSLASH, '\' itself (\x5c), so the escaped text can be
 *     decoded back unambiguously.
 * Everything else (printable ASCII, valid UTF-8) is copied as it is.
 *
 * The kernel's own rule for /dev/kmsg is c < 0x20 || c >= 0x7f || c == '\\'
 * (printk.c); it escapes valid UTF-8 too, we keep it readable.  The two
 * flag sets in use:
 *   SL_ESC_BACKSLASH  where raw bytes become text (logline's prefix and
 *                     interface names): \x5c as in /dev/kmsg;
 *   SL_ESC_KEEP_TAB   the safety pass of text outputs (file, syslog) over
 *                     text some upstream plugin made: backslashes are left
 *                     alone because they are the escape character of
 *                     logline's \xNN and json's \", and the tab after
 *                     conntrack -E's timestamp stays.  Text that logline
 *                     or json made passes this pass unchanged, so it is a
 *                     scan and a copy.
 *
 * Cost: sl_esc_scan() checks 16 bytes per step (no per-byte branch) while
 * they are ASCII and need nothing; runs that need nothing are memcpy'd.
 */
#ifndef SLUICE_TEXT_ESCAPE_H
#define SLUICE_TEXT_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fmt.h"

#define SL_ESC_BACKSLASH 0x1	/* escape '\' as \x5c */
#define SL_ESC_KEEP_TAB 0x2	/* leave TAB as it is */

/* An escaped byte takes this many bytes. */
#define SL_ESC_UNIT 4

/* Offset of the first byte of s[0..n) that must be escaped, or n. */
size_t sl_esc_scan(const void *s, size_t n, unsigned flags);

/* Length of the escaped form of s[0..n). */
size_t sl_esc_len(const void *s, size_t n, unsigned flags);

/*
 * Escape s[0..n) into dst (cap bytes); returns the bytes written.  Only
 * whole units are written (an escape, a UTF-8 sequence): when not all of
 * s fits, *used (if not NULL) is less than n and dst ends on a boundary.
 */
size_t sl_esc_write(char *dst, size_t cap, const void *s, size_t n, unsigned flags, size_t *used);

/* Append the escaped s to b: what fits, in whole units; overflow if cut. */
void sl_fmt_escaped(struct sl_fmt_buf *b, const void *s, size_t n, unsigned flags);

/*
 * A length <= len at which text p[0..total) (escaped with SL_ESC_BACKSLASH,
 * so every '\' starts an escape) can be cut without splitting an escape
 * or a UTF-8 sequence.
 */
size_t sl_esc_cut(const char *p, size_t total, size_t len);

#endif /* SLUICE_TEXT_ESCAPE_H */
