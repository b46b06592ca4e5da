/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kernel address -> "symbol+0xoffset", from a /proc/kallsyms text.
 *
 * sl_kallsyms_load() reads the text symbols (types t, T, w, W) of a file
 * in the /proc/kallsyms format ("ADDR TYPE NAME [MODULE]" per line) into
 * a table sorted by address; lines of another form are skipped.  Read it
 * while the process may see the addresses: the kernel shows zeros to a
 * reader without CAP_SYSLOG (kptr_restrict), and a table of zeros only is
 * refused with EPERM.  sl_kallsyms_format() is then pure: no file, no
 * allocation, safe from any thread once loaded.
 */
#ifndef SLUICE_KALLSYMS_H
#define SLUICE_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct sl_kallsyms {
	struct sl_ksym *sym;	/* sorted by address */
	size_t n;
	char *names;		/* every name, NUL-terminated, back to back */
};

/* 0, or -1 with errno (ENOENT, EPERM: only zero addresses, ENOMEM...). */
int sl_kallsyms_load(struct sl_kallsyms *k, const char *path);
/*
 * The same from a text already in memory (len bytes, need not end with a
 * newline): what sl_kallsyms_load() parses, and what the fuzz target feeds.
 */
int sl_kallsyms_parse(struct sl_kallsyms *k, const char *text, size_t len);
/*
 * Write "name+0xoff" (or "0xADDR" when no symbol is at or below addr)
 * into buf (always NUL-terminated when len > 0).  Returns the length it
 * needed, as snprintf does.
 */
int sl_kallsyms_format(const struct sl_kallsyms *k, uint64_t addr, char *buf, size_t len);
void sl_kallsyms_free(struct sl_kallsyms *k);

#endif
