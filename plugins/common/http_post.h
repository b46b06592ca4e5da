/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the HTTP POST outputs on libcurl (clickhouse, otlp) set up alike: a
 * blocking easy handle on the output's own thread (one kept-alive
 * connection, a timeout per request) and the server's answer kept, its
 * first bytes only, for the output to read or log.  Each output still sets
 * its url, headers and body and judges the answer itself.  Linked only into
 * the plugins that link libcurl.
 */
#ifndef SLUICE_HTTP_POST_H
#define SLUICE_HTTP_POST_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

/* The answer to one request.  The caller owns buf and sets len to 0 before each request. */
struct sl_http_answer {
	char *buf;	/* max + 1 bytes: room for a terminating NUL after the kept bytes */
	size_t max;	/* bytes kept; the rest of a longer answer is read and dropped */
	size_t len;	/* bytes kept so far, at most max */
};

/*
 * libcurl's write callback (CURLOPT_WRITEFUNCTION) with ctx a struct
 * sl_http_answer: keeps what fits of data, takes it all (never a write error).
 */
size_t sl_http_answer_write(char *data, size_t size, size_t n, void *ctx);

/*
 * The options every HTTP POST output sets on its easy handle curl: no
 * signals (libcurl runs on a plugin thread), timeout_ms for the connection
 * and for the whole request, libcurl's error text into err
 * (CURL_ERROR_SIZE bytes), the answer's body into a
 * (sl_http_answer_write()), TCP keepalive.  err and a must outlive the
 * handle's requests.
 */
void sl_http_post_setup(CURL *curl, uint64_t timeout_ms, char *err, struct sl_http_answer *a);

#endif
