/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A plain name: one or more ASCII letters, digits, '_', '-' and '.', with
 * no locale involved.  Instance and stack names in the configuration are
 * plain names, and so are the nft tables and chains `sluice convert nft`
 * writes into a command unquoted.
 */
#ifndef SLUICE_IDENT_H
#define SLUICE_IDENT_H

#include <stdbool.h>

static inline bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.';
}

static inline bool ident_valid(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!ident_char(*s))
			return false;
	return true;
}

#endif /* SLUICE_IDENT_H */
