/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: any bytes as a configuration file.  The YAML reader
 * and the shape checks must report errors, never crash or leak.
 * Run with -close_fd_mask=2: every input prints its errors to stderr.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct config cfg;
	struct diag diag = {0};

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	config_load_string(&cfg, "fuzz.yaml", text, &diag);
	config_free(&cfg);
	free(text);
	return 0;
}
