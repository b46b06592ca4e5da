/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <string.h>

#include "log.h"

/*
 * Any thread may log.  The level is read atomically; each message is
 * formatted whole, then written with one stdio call, which holds the
 * stream's lock, so lines from two threads never interleave.
 */
static int current_level = SL_LOG_INFO;

const char *const log_level_names[] = {"err", "warning", "notice", "info", "debug", NULL};
static const int log_level_values[] = {SL_LOG_ERR, SL_LOG_WARNING, SL_LOG_NOTICE, SL_LOG_INFO,
				       SL_LOG_DEBUG};

void log_set_level(int level)
{
	__atomic_store_n(&current_level, level, __ATOMIC_RELAXED);
}

int log_get_level(void)
{
	return __atomic_load_n(&current_level, __ATOMIC_RELAXED);
}

int log_level_from_name(const char *name)
{
	for (int i = 0; log_level_names[i]; i++)
		if (strcmp(name, log_level_names[i]) == 0)
			return log_level_values[i];
	return -1;
}

static const char *level_tag(int level)
{
	switch (level) {
	case SL_LOG_ERR: return "error: ";
	case SL_LOG_WARNING: return "warning: ";
	case SL_LOG_NOTICE: return "";
	case SL_LOG_INFO: return "";
	default: return "debug: ";
	}
}

void log_msgv(int level, const char *who, const char *fmt, va_list ap)
{
	char line[2048];
	int n;

	if (level > log_get_level())
		return;
	/* Format the whole line first so concurrent writers never interleave. */
	n = snprintf(line, sizeof(line), "sluice: %s%s%s", who ? who : "", who ? ": " : "",
		     level_tag(level));
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	fprintf(stderr, "%s\n", line);
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_msgv(level, NULL, fmt, ap);
	va_end(ap);
}
