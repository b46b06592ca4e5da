/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `sluice convert KIND ...`: other tools' configurations to sluice YAML. */
#ifndef SLUICE_CONVERT_H
#define SLUICE_CONVERT_H

int convert_is_command(const char *arg);
/* argv[0] is "convert". Exit status: 0, 1 (--check found something not converted), 2, 64. */
int convert_main(int argc, char **argv);

#endif
