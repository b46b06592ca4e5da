/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Daemon logging: to stderr, one line per message, filtered by level. */
#ifndef SLUICE_LOG_H
#define SLUICE_LOG_H

#include <stdarg.h>
#include <sluice/plugin.h>

void log_set_level(int level);
int log_get_level(void);
/* Parse "err", "warning", "notice", "info", "debug"; -1 if unknown. */
int log_level_from_name(const char *name);
extern const char *const log_level_names[]; /* NULL-terminated, for the enum option */

void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_msgv(int level, const char *who, const char *fmt, va_list ap);

#endif
