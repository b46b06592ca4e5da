/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `sluice convert KIND ...`: converters from what people run today to
 * sluice.  Each kind is one entry of the table in convert.c.
 */
#ifndef SLUICE_CONVERT_H
#define SLUICE_CONVERT_H

int convert_is_command(const char *arg);
/*
 * argv[0] is "convert".  Exit status: 0, 1 (--check found something not
 * converted), 2 (not a valid file of its kind), 64 (usage), 66 (no file).
 */
int convert_main(int argc, char **argv);

/* The converters; argv[0] is the kind. */
int convert_nft_main(int argc, char **argv);

#endif
