/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The json filter's `schema: ecs`: one record as an Elastic Common Schema
 * document (nested objects, ECS field names).  The mapping is documented in
 * docs/JSON.md; keep the two in step.
 */
#ifndef SLUICE_JSON_ECS_H
#define SLUICE_JSON_ECS_H

#include <sluice/record.h>

#include "fmt.h"

/* The ECS version the mapping follows, written as ecs.version. */
#define SLUICE_ECS_VERSION "8.11.0"

struct json_ecs {
	struct sl_fmt_time_cache *tc;
	const char *host;	/* "hostname":"..." pre-escaped, or NULL */
	size_t host_len;
	int cid_field;		/* id of community_id, or -1 */
	/* ids of nflog's rule_* fields (rules: true), or -1 */
	int rule_handle, rule_comment, rule_table, rule_verdict;
	int netns;		/* id of the inputs' netns, or -1 */
};

/* Write record r's document; the caller checks b->overflow. */
void json_ecs_record(const struct json_ecs *e, struct sl_fmt_buf *b, const struct sl_record *r);

#endif /* SLUICE_JSON_ECS_H */
