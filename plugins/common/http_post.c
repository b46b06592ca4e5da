/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The easy-handle setup and answer buffer of the HTTP POST outputs (contract in http_post.h). */
#include <string.h>

#include "http_post.h"

size_t sl_http_answer_write(char *data, size_t size, size_t n, void *ctx)
{
	struct sl_http_answer *a = ctx;
	size_t len = size * n, room = a->max - a->len;

	if (len < room)
		room = len;
	memcpy(a->buf + a->len, data, room);
	a->len += room;
	return len;
}

void sl_http_post_setup(CURL *curl, uint64_t timeout_ms, char *err, struct sl_http_answer *a)
{
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, sl_http_answer_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, a);
	curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
}
