/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon.metrics checked where it is written: the listen address (numeric
 * IPv4 ADDR:PORT or [IPv6]:PORT), and a non-loopback address refused
 * unless allow_remote says the exposure is meant.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "metrics_config.h"
#include "options.h"

static const char *const metrics_keys[] = {"listen", "allow_remote", NULL};

/* "127.0.0.1:9560", "[::1]:9560" into mc->addr.  0, or -1. */
static int parse_listen(struct metrics_config *mc, const char *s)
{
	char host[INET6_ADDRSTRLEN + 1];
	struct addrinfo hints = {0}, *ai;
	const char *colon, *port;
	size_t hlen;
	int64_t p;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return -1;
		hlen = (size_t)(close - s - 1);
		if (hlen >= sizeof(host))
			return -1;
		memcpy(host, s + 1, hlen);
		port = close + 2;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', (size_t)(colon - s)))
			return -1;	/* an IPv6 address needs its brackets */
		hlen = (size_t)(colon - s);
		if (hlen >= sizeof(host))
			return -1;
		memcpy(host, s, hlen);
		port = colon + 1;
	}
	host[hlen] = 0;
	if (options_parse_int(port, &p) || p < 1 || p > 65535)
		return -1;
	/* Numeric only: a name would be resolved once, at an unknown time. */
	hints.ai_family = s[0] == '[' ? AF_INET6 : AF_INET;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, port, &hints, &ai) != 0)
		return -1;
	memset(&mc->addr, 0, sizeof(mc->addr));
	memcpy(&mc->addr, ai->ai_addr, ai->ai_addrlen);
	mc->addrlen = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

static bool is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)ss;

		return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	}
	const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;

	if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr))
		return a->sin6_addr.s6_addr[12] == 127;
	return IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
}

void metrics_config_parse(struct metrics_config *mc, const struct ynode *map, struct diag *d)
{
	const struct ynode *listen = NULL;

	memset(mc, 0, sizeof(*mc));
	mc->enabled = true;
	if (!yaml_tree_is_null(map) && map->kind != YN_MAP) {
		diag_error(d, &map->mark,
			   "'daemon.metrics' must be a mapping like { listen: \"%s\" }, not %s",
			   METRICS_DEFAULT_LISTEN, yaml_tree_kind_name(map->kind));
		return;
	}
	for (size_t i = 0; map->kind == YN_MAP && i < map->n; i += 2) {
		const struct ynode *k = map->items[i], *v = map->items[i + 1];

		if (strcmp(k->scalar, "listen") == 0 && v->kind == YN_SCALAR) {
			listen = v;
		} else if (strcmp(k->scalar, "allow_remote") == 0 && v->kind == YN_SCALAR) {
			if (options_parse_bool(v->scalar, &mc->allow_remote))
				diag_error(d, &v->mark,
					   "daemon.metrics.allow_remote: expected true or false, "
					   "got '%s'", v->scalar);
		} else if (strcmp(k->scalar, "listen") == 0 ||
			   strcmp(k->scalar, "allow_remote") == 0) {
			diag_error(d, &v->mark, "daemon.metrics.%s must be a scalar, not %s",
				   k->scalar, yaml_tree_kind_name(v->kind));
		} else {
			const char *near = options_suggest(k->scalar, metrics_keys);

			if (near)
				diag_error(d, &k->mark,
					   "unknown key 'daemon.metrics.%s' (did you mean '%s'?)",
					   k->scalar, near);
			else
				diag_error(d, &k->mark,
					   "unknown key 'daemon.metrics.%s' (expected listen or "
					   "allow_remote)", k->scalar);
		}
	}
	snprintf(mc->listen, sizeof(mc->listen), "%s",
		 listen ? listen->scalar : METRICS_DEFAULT_LISTEN);
	if (strlen(listen ? listen->scalar : "") >= sizeof(mc->listen) ||
	    parse_listen(mc, mc->listen)) {
		diag_error(d, &listen->mark,
			   "daemon.metrics.listen: expected a numeric ADDRESS:PORT like %s or "
			   "[::1]:9560 (port 1 to 65535), got '%s'",
			   METRICS_DEFAULT_LISTEN, listen->scalar);
		return;
	}
	if (!mc->allow_remote && !is_loopback(&mc->addr))
		diag_error(d, listen ? &listen->mark : &map->mark,
			   "daemon.metrics.listen: '%s' is not a loopback address, so /metrics "
			   "would be reachable from the network; set allow_remote: true if that "
			   "is meant", mc->listen);
}
