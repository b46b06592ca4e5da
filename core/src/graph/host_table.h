/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The struct sl_host every plugin call is handed.  The runtime defines it
 * (runtime/host.c: delivery, counters, timers); it is declared on the
 * graph's floor because the graph hands it to configure() and the guard
 * and strict mode count through it, and they sit below the runtime.
 */
#ifndef SLUICE_HOST_TABLE_H
#define SLUICE_HOST_TABLE_H

#include <sluice/plugin.h>

extern const struct sl_host host_table;

#endif
