/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * geoip: country, city and AS of src_addr and dst_addr from MaxMind DB
 * files (libmaxminddb), as fields src_<key> and dst_<key>.
 *
 * `fields` maps a key to a path inside the database ("country.iso_code").
 * For each address the databases are asked in order, and each key takes
 * its value from the first database that has the address and the path.
 * Keys are a fixed set (GEOIP_KEYS below): a field must be registered
 * when the plugin is loaded, before any configuration is read, so a key
 * cannot be invented in the YAML.  Which path fills a key is free.
 *
 * Results are cached per address in a preallocated table (4-way buckets,
 * a seeded hash, round-robin replacement): a warm lookup is a hash and a
 * 16-byte compare, and nothing is allocated per record.  Unknown addresses
 * are cached too.  String values are not copied anywhere: libmaxminddb
 * hands out pointers into the file's memory map, and a map is unmapped
 * only by reopen() or stop(), which run between batches on this
 * instance's thread, so a record's string stays valid until its batch is
 * done (threaded outputs copy what they keep, as for any field).
 *
 * The files are opened in start() and reopened on SIGHUP (reopen()) when
 * their inode, size or mtime changed: a new file put in place by rename
 * (geoipupdate does) is picked up, the cache emptied; a file that does not
 * open keeps the old database, with a warning.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <maxminddb.h>

#include <sluice/plugin.h>

#include "plugin_state.h"
#include "safefile.h"

#define GEOIP_MAX_DEPTH 8	/* components of one lookup path */
#define GEOIP_WAYS 4		/* entries per cache bucket */

/* The keys, their types and defaults (NULL: not looked up unless configured). */
#define GEOIP_KEYS(X)                                                     \
	X(COUNTRY, "country", SL_T_STRING, "country.iso_code")            \
	X(CITY, "city", SL_T_STRING, "city.names.en")                     \
	X(ASN, "asn", SL_T_U64, "autonomous_system_number")               \
	X(AS_ORG, "as_org", SL_T_STRING, "autonomous_system_organization") \
	X(COUNTRY_NAME, "country_name", SL_T_STRING, NULL)                \
	X(CONTINENT, "continent", SL_T_STRING, NULL)                      \
	X(REGION, "region", SL_T_STRING, NULL)                            \
	X(POSTAL, "postal", SL_T_STRING, NULL)                            \
	X(TIMEZONE, "timezone", SL_T_STRING, NULL)

enum {
#define GEOIP_X_ENUM(id, name, type, def) GK_##id,
	GEOIP_KEYS(GEOIP_X_ENUM)
#undef GEOIP_X_ENUM
	GK_COUNT
};

static const struct gkey_def {
	const char *name;
	enum sl_type type;
	const char *def;
} gkey_defs[GK_COUNT] = {
#define GEOIP_X_DEF(id, name, type, def) { name, type, def },
	GEOIP_KEYS(GEOIP_X_DEF)
#undef GEOIP_X_DEF
};

struct geoip_cfg {
	struct sl_strlist databases;
	struct sl_strlist fields;	/* key, path, key, path... */
	int64_t cache_size;
};

/* One configured key: what it is, where its value sits, the fields it sets. */
struct gkey {
	unsigned def;			/* index into gkey_defs */
	enum sl_type type;
	const char *path[GEOIP_MAX_DEPTH + 1];	/* NULL-terminated, into pathbuf */
	char *pathbuf;
	sl_field fid[2];		/* src_<key>, dst_<key> */
	const char *spec;		/* the path as written, for messages */
	bool mismatch_logged;
};

struct gdb {
	const char *file;
	MMDB_s *mmdb;			/* NULL until start() */
	struct stat st;			/* of the file when it was opened */
};

/* A cached answer for one address: the values of the keys it has. */
struct gent {
	uint8_t addr[16];
	uint32_t gen;			/* valid while equal to the state's gen */
	uint32_t found;			/* bit k: v[k] holds key k's value */
	union sl_value v[GK_COUNT];
};

struct geoip_state {
	SL_STATE_HEAD(struct geoip_cfg);

	struct gkey keys[GK_COUNT];
	unsigned nkeys;
	uint32_t allmask;

	struct gdb *dbs;
	unsigned ndbs;

	struct gent *tab;		/* nbuckets * GEOIP_WAYS entries */
	uint8_t *clock;			/* next victim of each bucket */
	uint32_t bmask;
	uint32_t gen;
	uint64_t seed;

	/* per batch, added to the counters once per batch */
	uint64_t n_hits, n_misses, n_unknown, n_mismatch, n_errors;
	int c_hits, c_misses, c_unknown, c_mismatch, c_errors, c_reopen_failed;
};

/* ---- configuration ---- */

static int key_lookup(const char *name)
{
	for (unsigned i = 0; i < GK_COUNT; i++)
		if (strcmp(gkey_defs[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Edit distance of two short names, capped at 3 (enough for "did you mean"). */
static unsigned name_distance(const char *a, const char *b)
{
	unsigned row[32], la = (unsigned)strlen(a), lb = (unsigned)strlen(b);

	if (la >= 31 || lb >= 31)
		return 3;
	for (unsigned j = 0; j <= lb; j++)
		row[j] = j;
	for (unsigned i = 1; i <= la; i++) {
		unsigned diag = row[0], t;

		row[0] = i;
		for (unsigned j = 1; j <= lb; j++) {
			t = row[j];
			row[j] = diag + (a[i - 1] != b[j - 1]);
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			if (t + 1 < row[j])
				row[j] = t + 1;
			diag = t;
		}
	}
	return row[lb] < 3 ? row[lb] : 3;
}

static void unknown_key(struct geoip_state *st, const char *opt, const char *name)
{
	unsigned best = 3, d;
	const char *near = NULL;

	for (unsigned i = 0; i < GK_COUNT; i++)
		if ((d = name_distance(name, gkey_defs[i].name)) < best) {
			best = d;
			near = gkey_defs[i].name;
		}
	if (near)
		st->host->config_error(st->inst, opt, "unknown key '%s'; did you mean '%s'?", name,
				       near);
	else
		st->host->config_error(st->inst, opt,
				       "unknown key '%s'; expected one of country, city, asn, as_org, "
				       "country_name, continent, region, postal, timezone",
				       name);
}

/* Split "a.b.0.c" into k->path.  0, or -1 after a config error. */
static int key_set_path(struct geoip_state *st, struct gkey *k, const char *opt, const char *spec)
{
	unsigned n = 0;
	char *p;

	k->spec = spec;
	k->pathbuf = strdup(spec);
	if (!k->pathbuf) {
		st->host->config_error(st->inst, opt, "out of memory");
		return -1;
	}
	for (p = k->pathbuf;; p++) {
		char *dot = strchr(p, '.');

		if (dot)
			*dot = '\0';
		if (!*p || n == GEOIP_MAX_DEPTH) {
			st->host->config_error(st->inst, opt,
					       "path '%s': expected names separated by single dots "
					       "(at most %d), like country.iso_code",
					       spec, GEOIP_MAX_DEPTH);
			return -1;
		}
		k->path[n++] = p;
		if (!dot)
			break;
		p = dot;
	}
	k->path[n] = NULL;
	return 0;
}

static int key_add(struct geoip_state *st, unsigned def, const char *opt, const char *spec)
{
	struct gkey *k = &st->keys[st->nkeys];
	char name[64];
	int id[2];

	/* counted at once, so destroy() frees its path whatever fails below */
	st->nkeys++;
	k->def = def;
	k->type = gkey_defs[def].type;
	if (key_set_path(st, k, opt, spec) < 0)
		return -1;
	for (int dir = 0; dir < 2; dir++) {
		snprintf(name, sizeof(name), "%s_%s", dir ? "dst" : "src", gkey_defs[def].name);
		id[dir] = st->host->field_id(st->inst, name);
		if (id[dir] < 0) {
			st->host->config_error(st->inst, opt, "field '%s' is not registered", name);
			return -1;
		}
		k->fid[dir] = (sl_field)id[dir];
	}
	return 0;
}

/* The keys the user mapped, else the default ones.  0, or -1. */
static int keys_configure(struct geoip_state *st)
{
	const struct sl_strlist *f = &st->cfg->fields;
	char opt[96];

	if (f->n == 0) {
		for (unsigned i = 0; i < GK_COUNT; i++)
			if (gkey_defs[i].def && key_add(st, i, "fields", gkey_defs[i].def) < 0)
				return -1;
		return 0;
	}
	for (unsigned i = 0; i + 1 < f->n; i += 2) {
		int def = key_lookup(f->v[i]);

		snprintf(opt, sizeof(opt), "fields/%s", f->v[i]);
		if (def < 0) {
			unknown_key(st, opt, f->v[i]);
			return -1;
		}
		for (unsigned k = 0; k < st->nkeys; k++)
			if (st->keys[k].def == (unsigned)def) {
				st->host->config_error(st->inst, opt, "key '%s' given twice", f->v[i]);
				return -1;
			}
		if (key_add(st, (unsigned)def, opt, f->v[i + 1]) < 0)
			return -1;
	}
	return 0;
}

static void geoip_destroy(void *state);

static int geoip_configure(const struct sl_host *host, struct sl_instance *inst,
			   const void *config, void **state)
{
	const struct geoip_cfg *cfg = config;
	struct geoip_state *st = sl_state_new(struct geoip_state, host, inst, config);
	uint32_t nb;

	if (!st)
		return -1;
	if (cfg->databases.n == 0) {
		host->config_error(inst, "databases", "expected one or more .mmdb files");
		goto fail;
	}
	for (unsigned i = 0; i < cfg->databases.n; i++) {
		if (!cfg->databases.v[i][0]) {
			host->config_error(inst, "databases", "an empty file name");
			goto fail;
		}
	}
	if (keys_configure(st) < 0)
		goto fail;
	st->allmask = (uint32_t)((1u << st->nkeys) - 1);
	st->dbs = calloc(cfg->databases.n, sizeof(*st->dbs));
	if (!st->dbs) {
		host->config_error(inst, NULL, "out of memory");
		goto fail;
	}
	st->ndbs = cfg->databases.n;
	for (unsigned i = 0; i < st->ndbs; i++)
		st->dbs[i].file = cfg->databases.v[i];
	for (nb = 1; (uint64_t)nb * GEOIP_WAYS < (uint64_t)cfg->cache_size; nb <<= 1)
		;
	st->bmask = nb - 1;
	st->c_hits = host->counter_new(inst, "cache_hits");
	st->c_misses = host->counter_new(inst, "cache_misses");
	st->c_unknown = host->counter_new(inst, "not_found");
	st->c_mismatch = host->counter_new(inst, "type_mismatch");
	st->c_errors = host->counter_new(inst, "lookup_errors");
	st->c_reopen_failed = host->counter_new(inst, "reopen_failed");
	*state = st;
	return 0;
fail:
	geoip_destroy(st);
	return -1;
}

/* ---- databases ---- */

/* Open db->file into a new MMDB_s.  NULL after logging why. */
static MMDB_s *db_open(struct geoip_state *st, const char *file, struct stat *sb,
		       enum sl_log_level level)
{
	MMDB_s *m = calloc(1, sizeof(*m));
	char why[128], fdpath[32];
	int rc, fd;

	if (!m) {
		st->host->log(st->inst, level, "%s: out of memory", file);
		return NULL;
	}
	/*
	 * MMDB_open() takes a name and opens it blocking: a FIFO there would
	 * stop this thread (and SIGTERM with it).  Open it ourselves without
	 * blocking, refuse what is not a regular file, and hand libmaxminddb
	 * this very file by its /proc name (no race with a rename).
	 */
	fd = sl_open_in(file, sb, why, sizeof(why));
	if (fd < 0) {
		st->host->log(st->inst, level, "%s: cannot open: %s", file, why);
		free(m);
		return NULL;
	}
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	rc = MMDB_open(fdpath, MMDB_MODE_MMAP, m);
	if (rc != MMDB_SUCCESS) {
		st->host->log(st->inst, level, "%s: %s%s%s", file, MMDB_strerror(rc),
			      rc == MMDB_IO_ERROR ? ": " : "",
			      rc == MMDB_IO_ERROR ? strerror(errno) : "");
		close(fd);
		free(m);
		return NULL;
	}
	close(fd);	/* the database is mapped */
	return m;
}

static void db_close(MMDB_s *m)
{
	if (m) {
		MMDB_close(m);
		free(m);
	}
}

/* "file: GeoLite2-City, built 2026-06-17 19:53:00 UTC, IPv6, 2352653 nodes" */
static void db_describe(struct geoip_state *st, const struct gdb *db, const char *what)
{
	const MMDB_metadata_s *md = &db->mmdb->metadata;
	time_t t = (time_t)md->build_epoch;
	char when[32] = "?";
	struct tm tm;

	if (gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	st->host->log(st->inst, SL_LOG_NOTICE, "%s%s: type %s, built %s, IPv%u, %u nodes", what,
		      db->file, md->database_type ? md->database_type : "?", when,
		      (unsigned)md->ip_version, (unsigned)md->node_count);
}

static void geoip_stop(void *state)
{
	struct geoip_state *st = state;

	for (unsigned i = 0; i < st->ndbs; i++) {
		db_close(st->dbs[i].mmdb);
		st->dbs[i].mmdb = NULL;
	}
	free(st->tab);
	free(st->clock);
	st->tab = NULL;
	st->clock = NULL;
}

static int geoip_start(void *state)
{
	struct geoip_state *st = state;
	size_t nb = (size_t)st->bmask + 1;

	for (unsigned i = 0; i < st->ndbs; i++) {
		st->dbs[i].mmdb = db_open(st, st->dbs[i].file, &st->dbs[i].st, SL_LOG_ERR);
		if (!st->dbs[i].mmdb)
			goto fail;
		db_describe(st, &st->dbs[i], "");
	}
	st->tab = calloc(nb * GEOIP_WAYS, sizeof(*st->tab));
	st->clock = calloc(nb, 1);
	if (!st->tab || !st->clock) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot allocate a cache of %zu entries",
			      nb * GEOIP_WAYS);
		goto fail;
	}
	/* entries of generation 0 are empty */
	st->gen = 1;
	/* A secret seed: crafted addresses cannot all land in one bucket. */
	if (getrandom(&st->seed, sizeof(st->seed), GRND_NONBLOCK) != sizeof(st->seed))
		st->seed = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)st;
	return 0;
fail:
	geoip_stop(st);
	return -1;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* SIGHUP: take the databases whose files changed; keep the old on failure. */
static int geoip_reopen(void *state)
{
	struct geoip_state *st = state;
	bool changed = false;

	for (unsigned i = 0; i < st->ndbs; i++) {
		struct gdb *db = &st->dbs[i];
		struct stat sb;
		MMDB_s *m;

		if (!db->mmdb || (stat(db->file, &sb) == 0 && same_file(&sb, &db->st)))
			continue;
		m = db_open(st, db->file, &sb, SL_LOG_WARNING);
		if (!m) {
			st->host->counter_add(st->inst, st->c_reopen_failed, 1);
			st->host->log(st->inst, SL_LOG_WARNING, "%s: keeping the database opened before",
				      db->file);
			continue;
		}
		db_close(db->mmdb);
		db->mmdb = m;
		db->st = sb;
		changed = true;
		db_describe(st, db, "reopened ");
	}
	/* cached strings point into the old maps: forget them all */
	if (changed && ++st->gen == 0) {
		memset(st->tab, 0, ((size_t)st->bmask + 1) * GEOIP_WAYS * sizeof(*st->tab));
		st->gen = 1;
	}
	return 0;
}

/* ---- lookups ---- */

/* One key's value from one database entry; false if the entry has none. */
static bool value_get(struct geoip_state *st, struct gkey *k, MMDB_entry_s *entry,
		      union sl_value *v)
{
	MMDB_entry_data_s d;
	int rc = MMDB_aget_value(entry, &d, k->path);

	if (rc == MMDB_LOOKUP_PATH_DOES_NOT_MATCH_DATA_ERROR || rc == MMDB_INVALID_LOOKUP_PATH_ERROR)
		return false;
	if (rc != MMDB_SUCCESS) {
		st->n_errors++;
		return false;
	}
	if (!d.has_data)
		return false;
	if (k->type == SL_T_STRING && d.type == MMDB_DATA_TYPE_UTF8_STRING) {
		v->bytes.ptr = (const uint8_t *)d.utf8_string;
		v->bytes.len = d.data_size;
		return true;
	}
	if (k->type == SL_T_U64) {
		switch (d.type) {
		case MMDB_DATA_TYPE_UINT16: v->u64 = d.uint16; return true;
		case MMDB_DATA_TYPE_UINT32: v->u64 = d.uint32; return true;
		case MMDB_DATA_TYPE_UINT64: v->u64 = d.uint64; return true;
		case MMDB_DATA_TYPE_INT32:
			if (d.int32 >= 0) {
				v->u64 = (uint64_t)d.int32;
				return true;
			}
			break;
		}
	}
	st->n_mismatch++;
	if (!k->mismatch_logged) {
		k->mismatch_logged = true;
		st->host->log(st->inst, SL_LOG_WARNING,
			      "%s: '%s' holds MMDB data type %u, not %s; the field is left out "
			      "(counted in type_mismatch)",
			      gkey_defs[k->def].name, k->spec, (unsigned)d.type,
			      k->type == SL_T_U64 ? "an integer" : "a string");
	}
	return false;
}

/* Ask the databases in order about addr; fill e. */
static void resolve(struct geoip_state *st, const uint8_t addr[16], struct gent *e)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in s4 = { .sin_family = AF_INET };
	const struct sockaddr *sa = (const struct sockaddr *)&s6;
	uint32_t need = st->allmask;

	if (sl_addr_is_v4(addr)) {
		memcpy(&s4.sin_addr, addr + 12, 4);
		sa = (const struct sockaddr *)&s4;
	} else {
		memcpy(&s6.sin6_addr, addr, 16);
	}
	e->found = 0;
	for (unsigned i = 0; i < st->ndbs && need; i++) {
		MMDB_lookup_result_s res;
		int err = MMDB_SUCCESS;

		res = MMDB_lookup_sockaddr(st->dbs[i].mmdb, sa, &err);
		if (err == MMDB_IPV6_LOOKUP_IN_IPV4_DATABASE_ERROR)
			continue;
		if (err != MMDB_SUCCESS) {
			st->n_errors++;
			continue;
		}
		if (!res.found_entry)
			continue;
		for (unsigned k = 0; k < st->nkeys; k++)
			if ((need >> k & 1) && value_get(st, &st->keys[k], &res.entry, &e->v[k]))
				e->found |= 1u << k;
		need = st->allmask & ~e->found;
	}
	if (!e->found)
		st->n_unknown++;
}

static inline uint32_t addr_hash(const uint8_t a[16], uint64_t seed)
{
	uint64_t x, y;

	memcpy(&x, a, 8);
	memcpy(&y, a + 8, 8);
	x = ((x ^ seed) * 0x9e3779b97f4a7c15ull ^ y) * 0xc2b2ae3d27d4eb4full;
	return (uint32_t)(x >> 32);
}

static inline const struct gent *cache_get(struct geoip_state *st, const uint8_t addr[16])
{
	uint32_t b = addr_hash(addr, st->seed) & st->bmask;
	struct gent *e = &st->tab[(size_t)b * GEOIP_WAYS];

	for (unsigned w = 0; w < GEOIP_WAYS; w++)
		if (e[w].gen == st->gen && memcmp(e[w].addr, addr, 16) == 0) {
			st->n_hits++;
			return &e[w];
		}
	e += st->clock[b];
	st->clock[b] = (uint8_t)((st->clock[b] + 1) % GEOIP_WAYS);
	st->n_misses++;
	memcpy(e->addr, addr, 16);
	e->gen = st->gen;
	resolve(st, addr, e);
	return e;
}

static inline void apply(const struct geoip_state *st, struct sl_record *r, int dir,
			 const struct gent *e)
{
	for (unsigned k = 0; k < st->nkeys; k++)
		if (e->found >> k & 1) {
			sl_field f = st->keys[k].fid[dir];

			r->v[f] = e->v[k];
			sl_mark(r, f);
		}
}

static void counters_flush(struct geoip_state *st)
{
	const struct sl_host *h = st->host;

	if (st->n_hits)
		h->counter_add(st->inst, st->c_hits, st->n_hits);
	if (st->n_misses)
		h->counter_add(st->inst, st->c_misses, st->n_misses);
	if (st->n_unknown)
		h->counter_add(st->inst, st->c_unknown, st->n_unknown);
	if (st->n_mismatch)
		h->counter_add(st->inst, st->c_mismatch, st->n_mismatch);
	if (st->n_errors)
		h->counter_add(st->inst, st->c_errors, st->n_errors);
	st->n_hits = st->n_misses = st->n_unknown = st->n_mismatch = st->n_errors = 0;
}

static int geoip_process(void *state, struct sl_batch *b)
{
	struct geoip_state *st = state;

	for (unsigned i = 0; i < b->count; i++) {
		struct sl_record *r = b->rec[i];

		if (sl_has(r, SL_F_SRC_ADDR))
			apply(st, r, 0, cache_get(st, r->v[SL_F_SRC_ADDR].addr));
		if (sl_has(r, SL_F_DST_ADDR))
			apply(st, r, 1, cache_get(st, r->v[SL_F_DST_ADDR].addr));
	}
	counters_flush(st);
	return 0;
}

static void geoip_destroy(void *state)
{
	struct geoip_state *st = state;

	if (!st)
		return;
	geoip_stop(st);
	for (unsigned k = 0; k < st->nkeys; k++)
		free(st->keys[k].pathbuf);
	free(st->dbs);
	free(st);
}

static const struct sl_option geoip_options[] = {
	SL_OPT_LIST("databases", struct geoip_cfg, databases, SL_REQUIRED,
		    "MaxMind DB files (.mmdb), asked in order: a key takes the first value found"),
	SL_OPT_MAP("fields", struct geoip_cfg, fields,
		   "key: path inside the database, e.g. {country: country_code}; keys: country, "
		   "city, asn, as_org, country_name, continent, region, postal, timezone; "
		   "default: country, city, asn, as_org at their GeoIP2/GeoLite2 paths"),
	SL_OPT_INT("cache_size", struct geoip_cfg, cache_size, "8192", 16, 1 << 22,
		   "addresses whose answers are cached (about 170 bytes each)"),
	SL_OPT_END
};

static const struct sl_field_decl geoip_needs[] = {
	SL_FIELD_DECL(SL_F_SRC_ADDR),
	SL_FIELD_DECL(SL_F_DST_ADDR),
	SL_FIELD_END
};

static const struct sl_field_decl geoip_provides[] = {
#define GEOIP_X_DECL(id, name, type, def) { "src_" name, type }, { "dst_" name, type },
	GEOIP_KEYS(GEOIP_X_DECL)
#undef GEOIP_X_DECL
	SL_FIELD_END
};

static const struct sl_field_decl geoip_reads[] = {
	SL_FIELD_END
};

static const struct sl_plugin geoip_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_FILTER,
	.name = "geoip",
	.description = "country, city and AS of src_addr and dst_addr from MaxMind DB files",
	.config_size = sizeof(struct geoip_cfg),
	.options = geoip_options,
	.needs = geoip_needs,
	.provides = geoip_provides,
	.configure = geoip_configure,
	.start = geoip_start,
	.process = geoip_process,
	.reopen = geoip_reopen,
	.stop = geoip_stop,
	.destroy = geoip_destroy,
	.reads = geoip_reads,
};

SLUICE_PLUGIN(geoip_plugin)
