/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json: SL_F_TEXT = one JSON object per record (no newline), written with
 * the formatters of plugins/common/fmt.c straight into the batch arena.
 * Only fields present in the record are written, in a fixed order; the
 * schema is documented in docs/JSON.md, its table and values are
 * common/json_fields.h (the journal output's too).  Every string is escaped (a prefix
 * may hold any byte) and the output is always valid UTF-8 JSON.
 */
#include <stdlib.h>

#include <sluice/plugin.h>

#include "fmt.h"
#include "json_ecs.h"
#include "json_fields.h"
#include "plugin_state.h"
#include "text_room.h"

static const char *const tz_choices[] = {"utc", "local", NULL};
static const char *const schema_choices[] = {"sluice", "ecs", NULL};
enum { SCHEMA_SLUICE, SCHEMA_ECS };

struct json_cfg {
	int schema;
	int timezone;
	bool packet;
	bool payload;
	const char *host;
};

/*
 * Keys copied into zero-padded slots: a key is written with one fixed
 * 32-byte copy (two vector moves) and the length advanced by its own
 * length.  A memcpy of a variable length of 8-20 bytes was compiled into
 * `rep movsq`, whose start-up cost made it half of the formatter's time.
 */
#define KEY_SLOT 40		/* 32 bytes read from offset 0 or 1, and room */
#define KEY_COPY 32

#define N_JFIELDS SL_JSON_NFIELDS
#define N_TIME_CACHES SL_JSON_TIME_CACHES

struct json {
	SL_STATE_HEAD(struct json_cfg);
	/* the rows of sl_jfields[] a record prints, walked in row order (json_fields.h) */
	struct sl_json_rows rows;
	char keys[N_JFIELDS][KEY_SLOT];
	bool packet, payload;
	bool v6;		/* the record being written is IPv6 (sl_fmt_rec_v6) */
	struct sl_fmt_time_cache tc[N_TIME_CACHES];
	char *host_frag;	/* "host":"..." pre-escaped, or NULL */
	size_t host_len;
	int c_no_room;
	struct jextra **extra;	/* fields registered by plugins, in id order */
	unsigned nextra;
	bool ecs;		/* schema: ecs */
	struct json_ecs ecs_ctx;
};

/* A field some plugin registered: printed by its type, named as registered. */
struct jextra {
	sl_field id;
	enum sl_type type;
	size_t keylen;
	char key[];		/* ,"name": escaped */
};

static const struct sl_option json_options[] = {
	SL_OPT_ENUM("schema", struct json_cfg, schema, "sluice", schema_choices,
		    "sluice: the flat keys of docs/JSON.md; ecs: Elastic Common Schema names, nested"),
	SL_OPT_ENUM("timezone", struct json_cfg, timezone, "utc", tz_choices,
		    "utc: times end in Z; local: in the local offset, like +02:00"),
	SL_OPT_BOOL("packet", struct json_cfg, packet, "false",
		    "add the packet (from its network header) as hex in \"packet\""),
	SL_OPT_BOOL("payload", struct json_cfg, payload, "false",
		    "add the layer-4 payload as hex in \"payload\""),
	SL_OPT_STR("host", struct json_cfg, host, NULL,
		   "add \"host\": this string to every object (like ulogd's dvc)"),
	SL_OPT_END
};

static const struct sl_field_decl json_provides[] = {
	SL_FIELD_DECL(SL_F_TEXT),
	SL_FIELD_DECL(SL_F_TEXT_SAFE),	/* the text never needs escaping */
	SL_FIELD_END
};

/* ---- value writers ---- */

/*
 * Room one row of a fixed-size kind needs (all but J_STR and J_HEX): its
 * key (a KEY_COPY-byte copy) and its value with the scratch of the copies
 * above.  The largest value is decode_flags with every bit (72 bytes), the
 * key before it is at most 20; 128 leaves a margin.
 */
#define ROW_MAX 128

/*
 * Row i of sl_jfields[] (of a fixed-size kind) at q, which has ROW_MAX bytes:
 * no bound checks per piece.  Returns the end.
 */
static inline __attribute__((always_inline)) char *json_row(struct json *st, char *q, const struct sl_record *r, unsigned i, bool first)
{
	const struct sl_jfield *f = &sl_jfields[i];

	/* the first key goes without its leading comma */
	memcpy(q, st->keys[i] + first, KEY_COPY);
	q += f->keylen - first;
	return sl_json_value(q, f, r, st->tc, st->v6);
}

/* A registered field; kept out of json_record(), which usually has none. */
static __attribute__((noinline)) void put_extra(struct json *st, struct sl_fmt_buf *b,
						const struct jextra *x, const union sl_value *v,
						bool first)
{
	sl_fmt_mem(b, x->key + first, x->keylen - first);
	sl_json_typed_value(b, x->type, v, &st->tc[0], st->v6);
}

/* Write one record's object; the caller checks b->overflow. */
static void json_record(struct json *st, struct sl_fmt_buf *b, const struct sl_record *r)
{
	uint64_t rows[2];
	bool first = true;
	char *q, *lim;
	unsigned w;

	sl_json_rows_of(&st->rows, r, rows);
	st->v6 = sl_fmt_rec_v6(r);
	sl_fmt_chr(b, '{');
	if (st->host_frag) {
		sl_fmt_mem(b, st->host_frag, st->host_len);
		first = false;
	}
	if (b->overflow)
		return;
	/* rows are written at a cursor; J_STR goes through the bounded appenders */
	q = sl_fmt_end(b);
	lim = b->p + b->cap;
	for (w = 0; w < 2; w++) {
		uint64_t m = rows[w];	/* a local: the array would be stored every row */

		while (m) {
			unsigned i = w * 64 + (unsigned)__builtin_ctzll(m);
			const struct sl_jfield *f = &sl_jfields[i];

			m &= m - 1;
			if (f->kind == J_STR) {
				const struct sl_bytes *s = &r->v[f->id].bytes;

				sl_fmt_commit(b, q);
				if (lim - q >= KEY_COPY) {
					memcpy(q, st->keys[i] + first, KEY_COPY);
					b->len += f->keylen - first;
				} else {
					sl_fmt_mem(b, f->key + first, f->keylen - first);
				}
				sl_fmt_json_str(b, s->ptr, s->len);
				if (b->overflow)
					return;
				q = sl_fmt_end(b);
			} else if (lim - q >= ROW_MAX) {
				q = json_row(st, q, r, i, first);
			} else {
				/* near the end: through scratch, so that what fits fits */
				char tmp[ROW_MAX];
				size_t n = (size_t)(json_row(st, tmp, r, i, first) - tmp);

				if ((size_t)(lim - q) < n) {
					sl_fmt_commit(b, q);
					b->overflow = true;
					return;
				}
				memcpy(q, tmp, n);
				q += n;
			}
			first = false;
		}
	}
	sl_fmt_commit(b, q);
	for (unsigned x = 0; x < st->nextra; x++) {
		if (sl_has(r, st->extra[x]->id)) {
			put_extra(st, b, st->extra[x], &r->v[st->extra[x]->id], first);
			first = false;
		}
	}
	if (st->packet && sl_has(r, SL_F_PACKET)) {
		sl_fmt_mem(b, &",\"packet\":"[first], sizeof(",\"packet\":") - 1 - first);
		sl_json_hex_str(b, &r->v[SL_F_PACKET].bytes);
		first = false;
	}
	if (st->payload && sl_has(r, SL_F_PAYLOAD)) {
		sl_fmt_mem(b, &",\"payload\":"[first], sizeof(",\"payload\":") - 1 - first);
		sl_json_hex_str(b, &r->v[SL_F_PAYLOAD].bytes);
	}
	sl_fmt_chr(b, '}');
}

static void json_destroy(void *state);

/* Whether json writes this key already (a registered field may not take it). */
static bool key_taken(const char *name)
{
	size_t n = strlen(name);

	if (!strcmp(name, "host") || !strcmp(name, "packet") || !strcmp(name, "payload"))
		return true;
	for (unsigned i = 0; i < SL_JSON_NFIELDS; i++)
		if (sl_jfields[i].keylen == n + 4 && !memcmp(sl_jfields[i].key + 2, name, n))
			return true;
	return false;
}

/* The fields plugins registered (ids after the well-known ones).  0 or -1. */
static int find_extra(struct json *st, const struct sl_host *host, struct sl_instance *inst)
{
	const char *name;
	int id;

	for (id = SL_F_WELL_KNOWN_COUNT; id < SL_MAX_FIELDS && (name = host->field_name(inst, id));
	     id++) {
		size_t n = strlen(name), cap = 6 * n + 8;
		struct jextra *x, **grown;
		struct sl_fmt_buf fb;

		if (key_taken(name)) {
			host->log(inst, SL_LOG_WARNING, "field '%s' has the name of a json key: not written",
				  name);
			continue;
		}
		x = malloc(sizeof(*x) + cap);
		grown = realloc(st->extra, (st->nextra + 1) * sizeof(*grown));
		if (!x || !grown) {
			free(x);
			if (grown)
				st->extra = grown;
			return -1;
		}
		st->extra = grown;
		x->id = (sl_field)id;
		x->type = host->field_type(inst, id);
		sl_fmt_init(&fb, x->key, cap);
		sl_fmt_chr(&fb, ',');
		sl_fmt_json_str(&fb, name, n);
		sl_fmt_chr(&fb, ':');
		x->keylen = fb.len;
		st->extra[st->nextra++] = x;
	}
	return 0;
}

/* The id of registered field `name` when it has type t, else -1. */
static int field_of(const struct sl_host *host, struct sl_instance *inst, const char *name,
		    enum sl_type t)
{
	int id = host->field_id(inst, name);

	return id >= 0 && host->field_type(inst, id) == t ? id : -1;
}

/* schema: ecs.  0 or -1 (the error said). */
static int json_ecs_configure(struct json *st, const struct sl_host *host, struct sl_instance *inst,
			      const struct json_cfg *cfg)
{
	if (cfg->packet || cfg->payload) {
		host->config_error(inst, cfg->packet ? "packet" : "payload",
				   "not written with schema: ecs (ECS has no field for raw bytes)");
		return -1;
	}
	st->ecs = true;
	st->ecs_ctx.tc = &st->tc[0];
	st->ecs_ctx.cid_field = host->field_id(inst, "community_id");
	st->ecs_ctx.rule_handle = field_of(host, inst, "rule_handle", SL_T_U64);
	st->ecs_ctx.rule_comment = field_of(host, inst, "rule_comment", SL_T_STRING);
	st->ecs_ctx.rule_table = field_of(host, inst, "rule_table", SL_T_STRING);
	st->ecs_ctx.rule_verdict = field_of(host, inst, "rule_verdict", SL_T_STRING);
	st->ecs_ctx.netns = field_of(host, inst, "netns", SL_T_STRING);
	if (st->host_frag) {
		/* "host": observer.hostname: the escaped string after the key */
		static const char key[] = "\"host\":";

		st->ecs_ctx.host = st->host_frag + sizeof(key) - 1;
		st->ecs_ctx.host_len = st->host_len - (sizeof(key) - 1);
	}
	return 0;
}

static int json_configure(const struct sl_host *host, struct sl_instance *inst, const void *config, void **state)
{
	const struct json_cfg *cfg = config;
	struct json *st = sl_state_new(struct json, host, inst, config);
	unsigned i;

	if (!st)
		return -1;
	for (i = 0; i < N_JFIELDS; i++)
		memcpy(st->keys[i], sl_jfields[i].key, sl_jfields[i].keylen);
	sl_json_rows_init(&st->rows);
	st->packet = cfg->packet;
	st->payload = cfg->payload;
	for (i = 0; i < N_TIME_CACHES; i++)
		sl_fmt_time_cache_init(&st->tc[i], cfg->timezone == 1);
	if (cfg->host) {
		size_t n = strlen(cfg->host), cap = 6 * n + 16;
		struct sl_fmt_buf fb;

		st->host_frag = malloc(cap);
		if (!st->host_frag) {
			free(st);
			host->config_error(inst, "host", "out of memory");
			return -1;
		}
		sl_fmt_init(&fb, st->host_frag, cap);
		sl_fmt_lit(&fb, "\"host\":");
		sl_fmt_json_str(&fb, cfg->host, n);
		st->host_len = fb.len;
	}
	if (cfg->schema == SCHEMA_ECS && json_ecs_configure(st, host, inst, cfg) < 0) {
		json_destroy(st);
		return -1;
	}
	if (find_extra(st, host, inst) < 0) {
		json_destroy(st);
		host->config_error(inst, NULL, "out of memory");
		return -1;
	}
	*state = st;
	return 0;
}

static int json_start(void *state)
{
	struct json *st = state;

	st->c_no_room = st->host->counter_new(st->inst, "no_room");
	return 0;
}

/* Most objects are well under this; a bigger one retries with all the room left. */
#define FIRST_TRY 2048

static int json_process(void *state, struct sl_batch *b)
{
	struct json *st = state;
	uint64_t no_room = 0;
	unsigned i;

	for (i = 0; i < b->count; i++) {
		struct sl_record *r = b->rec[i];
		struct sl_text_room t;
		struct sl_fmt_buf fb;

		sl_text_room_begin(&t, b, FIRST_TRY);
		while (sl_text_room_try(&t, b, &fb)) {
			if (st->ecs)
				json_ecs_record(&st->ecs_ctx, &fb, r);
			else
				json_record(st, &fb, r);
		}
		if (!sl_text_room_keep(&t, b, &fb, r)) {
			no_room++;
			continue;
		}
		sl_set_text_safe(r);
	}
	if (no_room) {
		st->host->counter_add(st->inst, st->c_no_room, no_room);
		st->host->error_add(st->inst, no_room);
	}
	return 0;
}

static void json_destroy(void *state)
{
	struct json *st = state;

	for (unsigned i = 0; i < st->nextra; i++)
		free(st->extra[i]);
	free(st->extra);
	free(st->host_frag);
	free(st);
}

static const struct sl_plugin json_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_FILTER,
	.name = "json",
	.description = "one JSON object per record (RFC 3339 times, escaped strings), see docs/JSON.md",
	.config_size = sizeof(struct json_cfg),
	.options = json_options,
	.provides = json_provides,
	.configure = json_configure,
	.start = json_start,
	.process = json_process,
	.destroy = json_destroy,
};

SLUICE_PLUGIN(json_plugin)
