/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: any bytes as a /proc/kallsyms text
 * (plugins/common/kallsyms.c, skbdrop's drop_location).  A table it
 * accepts must be sorted with a name for every symbol; every address of a
 * few taken from the input and around each symbol is formatted into a
 * short and a long buffer: abort() when the text is not NUL-terminated,
 * its length disagrees with the return value, or the short one is not the
 * long one's prefix.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct sl_ksym {	/* as kallsyms.c lays it out */
	uint64_t addr;
	size_t name;
};

static void format(const struct sl_kallsyms *k, uint64_t addr)
{
	char small[8], big[512];
	int n = sl_kallsyms_format(k, addr, big, sizeof(big));

	if (n < 0 || (size_t)n >= sizeof(big) || strlen(big) != (size_t)n)
		abort();
	if (sl_kallsyms_format(k, addr, small, sizeof(small)) != n ||
	    strncmp(small, big, sizeof(small) - 1) || strlen(small) >= sizeof(small))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_kallsyms k;

	if (sl_kallsyms_parse(&k, (const char *)data, size) < 0)
		return 0;
	for (size_t i = 0; i < k.n; i++) {
		if (i && k.sym[i - 1].addr > k.sym[i].addr)
			abort();
		if (!k.names[k.sym[i].name] || strlen(k.names + k.sym[i].name) > 256)
			abort();
		format(&k, k.sym[i].addr);
		format(&k, k.sym[i].addr - 1);
		format(&k, k.sym[i].addr + 0x100);
	}
	for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
		uint64_t a;

		memcpy(&a, data + i, 8);
		format(&k, a);
	}
	sl_kallsyms_free(&k);
	return 0;
}
