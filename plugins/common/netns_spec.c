/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "netns_spec.h"

static bool is_pattern_char(char c)
{
	return c == '*' || c == '?' || c == '[';
}

int sl_netns_spec_check(const char *spec, const char **why)
{
	const char *last = strrchr(spec, '/');
	size_t len = strlen(spec);
	bool pattern = false;

	if (!len) {
		*why = "empty: a name under " SL_NETNS_RUN_DIR ", an absolute path or a glob";
		return -1;
	}
	if (len >= PATH_MAX - sizeof(SL_NETNS_RUN_DIR)) {
		*why = "longer than a path can be";
		return -1;
	}
	for (const char *p = spec; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			*why = "a control character";
			return -1;
		}
	if (spec[0] != '/' && last) {
		*why = "a relative path: give a name under " SL_NETNS_RUN_DIR " or an absolute path";
		return -1;
	}
	last = last ? last + 1 : spec;
	for (const char *p = spec; p < last; p++)
		if (is_pattern_char(*p)) {
			*why = "a pattern is allowed in the last component only";
			return -1;
		}
	if (!*last || !strcmp(last, ".") || !strcmp(last, "..")) {
		*why = "the last component must name a file";
		return -1;
	}
	for (const char *p = last; *p; p++)
		pattern |= is_pattern_char(*p);
	if (pattern)
		return SL_NETNS_GLOB;
	return spec[0] == '/' ? SL_NETNS_PATH : SL_NETNS_NAME;
}

int sl_netns_spec_path(const char *spec, char *buf, size_t size)
{
	int n = spec[0] == '/' ? snprintf(buf, size, "%s", spec)
			       : snprintf(buf, size, SL_NETNS_RUN_DIR "/%s", spec);

	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

size_t sl_netns_label(const char *path, const char **label)
{
	const char *slash = strrchr(path, '/');
	const char *pid = path + sizeof("/proc/") - 1, *end;

	/* /proc/PID/ns/net: every such path ends in "net", the PID tells them apart */
	if (!strncmp(path, "/proc/", 6) && (end = strchr(pid, '/')) && end > pid &&
	    !strcmp(end, "/ns/net")) {
		*label = pid;
		return (size_t)(end - pid);
	}
	*label = slash ? slash + 1 : path;
	return strlen(*label);
}
