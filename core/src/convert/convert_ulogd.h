/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `sluice convert ulogd`: a ulogd2 configuration (read by ulogd_ini.c) to
 * sluice YAML.  What the build's plugins offer is asked through
 * convert_caps, so an option is written only when the plugin that
 * should take it has it (the rest becomes a "not converted" comment).
 */
#ifndef SLUICE_CONVERT_ULOGD_H
#define SLUICE_CONVERT_ULOGD_H

#include <stdio.h>

#include "ulogd_ini.h"

struct convert_caps {
	/*
	 * 1 when the plugin exists (option NULL), has the option (choice
	 * NULL) or the option takes that enum value; 0 otherwise.
	 */
	int (*has)(void *ctx, const char *plugin, const char *option, const char *choice);
	void *ctx;
};

struct convert_result {
	unsigned errors;	/* the file is not a valid ulogd.conf: nothing usable written */
	unsigned not_converted;	/* things without a sluice equivalent (--check fails) */
	unsigned notes;		/* converted, but behaving differently (warned) */
	unsigned stacks;	/* stacks converted: 0 means the YAML would run nothing */
};

/*
 * Writes the YAML to out and "FILE:LINE: warning: ..." / "FILE:LINE:COL:
 * error: ..." lines to diag.  Returns 0, or -1 when res->errors (then
 * out holds nothing meaningful).  With res->stacks 0 nothing is written
 * to out: a configuration without stacks is one `sluice -t` refuses.
 */
int convert_ulogd(const struct ulogd_ini *ini, const char *file, const struct convert_caps *caps,
		  FILE *out, FILE *diag, struct convert_result *res);

#endif
