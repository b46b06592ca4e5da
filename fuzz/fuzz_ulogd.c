/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: any bytes as a ulogd.conf for `sluice convert ulogd`.
 * The reader and the converter must report errors, never crash or leak,
 * and YAML the converter writes without an error must be YAML the
 * configuration reader can parse (whatever it then says of its shape).
 * The "build" has every plugin the converter may name, with every option.
 * Run with -close_fd_mask=2: every input prints its warnings to stderr.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "convert_ulogd.h"
#include "ulogd_ini.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int caps_has(void *ctx, const char *plugin, const char *option, const char *choice)
{
	static const char *const known[] = { "nflog", "nfct", "nfacct", "decode", "logline",
		"json", "where", "file", "syslog", "pcap", "ipfix", "sql", NULL };

	(void)ctx;
	(void)option;
	(void)choice;
	for (const char *const *k = known; *k; k++)
		if (strcmp(*k, plugin) == 0)
			return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct convert_caps caps = { .has = caps_has };
	struct convert_result res;
	struct ulogd_ini ini;
	struct config cfg;
	struct diag diag = {0};
	char *yaml = NULL;
	size_t len = 0;
	FILE *out;

	if (ulogd_ini_read_mem(&ini, (const char *)data, size)) {
		ulogd_ini_free(&ini);
		return 0;
	}
	out = open_memstream(&yaml, &len);
	if (!out) {
		ulogd_ini_free(&ini);
		return 0;
	}
	/* no stack converted: nothing written (the command exits 1) */
	if (convert_ulogd(&ini, "fuzz.conf", &caps, out, stderr, &res) == 0 && res.stacks) {
		fclose(out);
		config_load_string(&cfg, "fuzz.yaml", yaml, &diag);
		if (!cfg.root) {
			fprintf(stderr, "the converter wrote YAML that does not parse:\n%s", yaml);
			abort();
		}
		config_free(&cfg);
	} else {
		fclose(out);
	}
	free(yaml);
	ulogd_ini_free(&ini);
	return 0;
}
