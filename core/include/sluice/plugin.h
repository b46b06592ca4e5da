/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sluice plugin ABI.  This header and <sluice/record.h> are all a plugin
 * includes; a plugin links against no symbol of the daemon.  Everything
 * the core does for a plugin goes through the struct sl_host table it is
 * handed in configure().
 *
 * A plugin is a shared object exporting one function:
 *
 *     const struct sl_plugin *sluice_plugin_entry(void);
 *
 * (SLUICE_PLUGIN(descriptor) defines it, with default visibility: build
 * with -fvisibility=hidden and it is the only symbol the plugin exports,
 * the only one the loader needs).  The descriptor starts with the
 * ABI version the plugin needs and its own size; the loader refuses a
 * different major version, or a required minor version newer than the
 * daemon's (SL_PLUGIN_HEADER requires the minor of these headers;
 * SL_PLUGIN_HEADER_MIN(2) lets a plugin that uses nothing newer than 1.2
 * load on a 1.2 daemon).  Each addition below is marked with the minor
 * that brought it.
 *
 * The header compiles as C (gnu11 or later) and as C++ (C++17 or later):
 * the option and field macros use no designated initialisers there, and
 * SL_PLUGIN_HEADER is designated, so a C++ descriptor is written with
 * designators in member order (C++20, or g++ >= 8 / clang >= 10 in
 * C++17 mode, where they are an extension) or positionally.
 *
 * Minimal filter (see also tests/oot/ for complete out-of-tree plugins, a
 * filter and a generic output, and docs/PLUGINS.md, "Writing a plugin"):
 *
 *     struct upper_cfg { bool enabled; const char *tag; };
 *     static const struct sl_option upper_opts[] = {
 *         SL_OPT_BOOL("enabled", struct upper_cfg, enabled, "true", "do it"),
 *         SL_OPT_STR("tag", struct upper_cfg, tag, SL_REQUIRED, "a tag"),
 *         SL_OPT_END
 *     };
 *     static const struct sl_field_decl upper_fields[] = {
 *         SL_FIELD_DECL(SL_F_TEXT), SL_FIELD_END
 *     };
 *     static int upper_process(void *st, struct sl_batch *b) { ...; return 0; }
 *     static const struct sl_plugin upper = {
 *         SL_PLUGIN_HEADER, .kind = SL_KIND_FILTER, .name = "upper", ...
 *     };
 *     SLUICE_PLUGIN(upper)
 */
#ifndef SLUICE_PLUGIN_H
#define SLUICE_PLUGIN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/record.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SL_ABI_MAJOR 1
#define SL_ABI_MINOR 4

/* Name of the entry symbol every plugin exports. */
#define SL_PLUGIN_ENTRY_SYMBOL "sluice_plugin_entry"

enum sl_kind {
	SL_KIND_INPUT = 1,	/* produces records (first element of a stack) */
	SL_KIND_FILTER,		/* converts, adds fields, drops records */
	SL_KIND_OUTPUT,		/* consumes records (last element of a stack) */
};

/* ---- typed options, in the spirit of nginx and Fluent Bit's config_map ---- */

enum sl_opt_type {
	SL_OPT_STRING = 1,	/* const char *  (owned by the core) */
	SL_OPT_INT,		/* int64_t, within [min, max] */
	SL_OPT_BOOL,		/* bool: true/false/yes/no/on/off */
	SL_OPT_SIZE,		/* uint64_t bytes: 512, 64k, 8MiB, 1G ... */
	SL_OPT_DURATION,	/* uint64_t milliseconds: 50ms, 2s, 5m, 1h, 1d */
	SL_OPT_ENUM,		/* int: index into choices[] */
	SL_OPT_LIST,		/* struct sl_strlist: YAML sequence (or one scalar) */
};

/* A list option's value. */
struct sl_strlist {
	unsigned n;
	const char *const *v;
};

#define SL_OPT_REQUIRED (1u << 0) /* (ABI 1.0) no default: the user must set it */
/*
 * (ABI 1.2) The option names a resource only one instance can hold: two
 * instances of the plugin whose SL_OPT_EXCLUSIVE options all have equal
 * parsed values (lists compared as sets) are a configuration error at the
 * later one, naming the first.  nflog's `group` (the kernel binds an NFLOG
 * group to one socket), nfct's `events` (one subscription, one reader).
 */
#define SL_OPT_EXCLUSIVE (1u << 1)
/*
 * (ABI 1.3) A list option whose YAML value is a mapping of names to scalar values
 * (SL_OPT_MAP): stored as a list of 2n strings, name, value, name, value...
 * config_error(inst, "option/name", ...) blames that entry's position.
 * Used for free-form maps handed to a library (kafka's `properties`).
 */
#define SL_OPT_MAP_ENTRIES (1u << 2)
/*
 * (ABI 1.3) The option's value is a secret (a password, a key): the core never
 * prints it.  `sluice -t`, --describe's default, the core's messages and
 * every log line and config_error() of the instance show "********"
 * instead (the core replaces the value wherever a plugin's or a
 * library's message repeats it).  On a mapping (SL_OPT_MAP) only the
 * values of secret-looking names are masked: a name containing, in any
 * case, pass, secret, token, cred, key, pem or auth (sasl.password,
 * ssl.key.pem); the names stay visible.  Without the flag, the core still
 * masks a password inside any value: a URI's user-info
 * (scheme://user:PASSWORD@host) and a password=... or secret=... keyword
 * (libpq's connection string, a URI's query).
 */
#define SL_OPT_SECRET (1u << 3)
/*
 * (ABI 1.3) A string option that names a path the instance will use as the daemon's
 * user (daemon.user).  `sluice -t` checks each one as that user (error at
 * the option's position), and a start that fails removes the files and
 * directories of SL_OPT_OUT_FILE/SL_OPT_OUT_MKDIR options that it created.
 * Bit 3 is taken; an unset or empty value is not checked.
 *   SL_OPT_OUT_FILE   a file it creates or appends to ('-': stdout; a '%':
 *                     a strftime pattern): its directory exists, writable
 *   SL_OPT_OUT_DIR    a directory it writes files into: exists, writable
 *   SL_OPT_OUT_MKDIR  a directory it creates when missing: exists and is
 *                     writable, or its parent is
 *   SL_OPT_IN_FILE    a file it reads: readable
 * Write them in the default's place: SL_PATH(NULL, SL_OPT_OUT_MKDIR),
 * SL_PATH_REQUIRED(SL_OPT_OUT_FILE).
 */
#define SL_OPT_OUT_FILE (1u << 4)
#define SL_OPT_OUT_DIR (1u << 5)
#define SL_OPT_OUT_MKDIR (1u << 6)
#define SL_OPT_IN_FILE (1u << 7)
#define SL_OPT_PATHS (SL_OPT_OUT_FILE | SL_OPT_OUT_DIR | SL_OPT_OUT_MKDIR | SL_OPT_IN_FILE)
/*
 * The option flags each minor version defines.  The loader refuses a
 * plugin using a flag newer than the minor it requires (a plugin that
 * declares SL_PLUGIN_HEADER_MIN(2) and marks an option SL_OPT_SECRET would
 * have its secret printed by a 1.2 daemon), and any other bit.
 */
#define SL_OPT_FLAGS_1_2 (SL_OPT_REQUIRED | SL_OPT_EXCLUSIVE)
#define SL_OPT_FLAGS_1_3 (SL_OPT_FLAGS_1_2 | SL_OPT_MAP_ENTRIES | SL_OPT_SECRET | SL_OPT_PATHS)

struct sl_option {
	const char *name;
	enum sl_opt_type type;
	size_t offset;			/* where the value goes in the config struct */
	const char *def;		/* default, written as in the config; NULL: none */
	const char *description;	/* one line, shown by sluice --describe */
	int64_t min, max;		/* INT, SIZE, DURATION: inclusive range (0,0: any) */
	const char *const *choices;	/* ENUM: NULL-terminated */
	unsigned flags;			/* SL_OPT_REQUIRED, SL_OPT_EXCLUSIVE, SL_OPT_SECRET... */
};

/*
 * Option table rows.  Every macro takes the same arguments in the same
 * order: the option's name, the config struct, its member, the default
 * (written as in the YAML configuration, or SL_REQUIRED), then what the type
 * needs (a range, the choices), then a one-line description:
 *
 *     SL_OPT_STR("file", struct cfg, file, SL_REQUIRED, "path of the file"),
 *     SL_OPT_INT("port", struct cfg, port, "514", 1, 65535, "UDP port"),
 *     SL_OPT_LIST("events", struct cfg, events, "[new, destroy]", "events"),
 *     SL_OPT_ENUM("mode", struct cfg, mode, "fast", mode_names, "mode"),
 *     SL_OPT_MAP("properties", struct cfg, props, "passed to the library"),
 *
 * The member must have the option's C type (const char *, int64_t, bool,
 * uint64_t, uint64_t, int, struct sl_strlist): a row that would make the
 * core write an int64_t into an int does not compile.  A default of NULL
 * leaves the member zero; SL_REQUIRED makes leaving the option out a
 * configuration error at the element, naming the option.  List defaults
 * are YAML too: "[a, b]", or "a" for a list of one.
 */
#define SL_REQUIRED NULL, SL_OPT_REQUIRED
/* In the default's place: SL_EXCLUSIVE("[destroy]"), or required and exclusive. */
#define SL_EXCLUSIVE(d) d, SL_OPT_EXCLUSIVE
#define SL_REQUIRED_EXCLUSIVE NULL, SL_OPT_REQUIRED | SL_OPT_EXCLUSIVE
/* In the default's place: SL_SECRET(NULL) (a secret), SL_REQUIRED_SECRET. */
#define SL_SECRET(d) d, SL_OPT_SECRET
#define SL_REQUIRED_SECRET NULL, SL_OPT_REQUIRED | SL_OPT_SECRET
#define SL_PATH(d, kind) d, (kind)
#define SL_PATH_REQUIRED(kind) NULL, SL_OPT_REQUIRED | (kind)

/* 0, or a compile error when st.mem is not of type T. */
#ifdef __cplusplus
#define SL_OPT_CHECK_(st, mem, T) \
	(::sl_opt_check_<decltype(((st *)0)->mem), T>::ok ? (size_t)0 : (size_t)0)
#else
#define SL_OPT_CHECK_(st, mem, T)                                                     \
	(0 * sizeof(struct {                                                          \
		_Static_assert(__builtin_types_compatible_p(__typeof__(((st *)0)->mem), T), \
			       "option member " #mem " must be of type " #T);        \
		int ok_;                                                              \
	}))
#endif
/*
 * Positional, in member order, so the row is valid C and C++: the default
 * argument is "value" or "value, flags" (SL_REQUIRED and friends); the
 * trailing 0 is the flags when it has none.
 */
#define SL_OPT_ROW_(n, t, off, desc, lo, hi, ch, d, fl, ...) \
	{ (n), (t), (off), (d), (desc), (lo), (hi), (ch), (fl) }
#define SL_OPT_ROWX_(...) SL_OPT_ROW_(__VA_ARGS__)
#define SL_OPT_TYPED_(n, t, st, mem, T, lo, hi, ch, desc, ...)                        \
	SL_OPT_ROWX_(n, t, offsetof(st, mem) + SL_OPT_CHECK_(st, mem, T), desc, lo, hi, ch, \
		     __VA_ARGS__, 0u, 0u)

#define SL_OPT_STR(n, st, mem, d, desc) \
	SL_OPT_TYPED_(n, SL_OPT_STRING, st, mem, const char *, 0, 0, NULL, desc, d)
#define SL_OPT_INT(n, st, mem, d, lo, hi, desc) \
	SL_OPT_TYPED_(n, SL_OPT_INT, st, mem, int64_t, lo, hi, NULL, desc, d)
#define SL_OPT_BOOL(n, st, mem, d, desc) \
	SL_OPT_TYPED_(n, SL_OPT_BOOL, st, mem, bool, 0, 0, NULL, desc, d)
#define SL_OPT_SIZE(n, st, mem, d, lo, hi, desc) \
	SL_OPT_TYPED_(n, SL_OPT_SIZE, st, mem, uint64_t, lo, hi, NULL, desc, d)
#define SL_OPT_DURATION(n, st, mem, d, lo, hi, desc) \
	SL_OPT_TYPED_(n, SL_OPT_DURATION, st, mem, uint64_t, lo, hi, NULL, desc, d)
#define SL_OPT_ENUM(n, st, mem, d, ch, desc) \
	SL_OPT_TYPED_(n, SL_OPT_ENUM, st, mem, int, 0, 0, ch, desc, d)
#define SL_OPT_LIST(n, st, mem, d, desc) \
	SL_OPT_TYPED_(n, SL_OPT_LIST, st, mem, struct sl_strlist, 0, 0, NULL, desc, d)
#define SL_OPT_MAP(n, st, mem, desc) \
	SL_OPT_TYPED_(n, SL_OPT_LIST, st, mem, struct sl_strlist, 0, 0, NULL, desc, NULL, \
		      SL_OPT_MAP_ENTRIES)
/* A mapping whose secret-looking entries are masked (SL_OPT_SECRET). */
#define SL_OPT_SECRET_MAP(n, st, mem, desc) \
	SL_OPT_TYPED_(n, SL_OPT_LIST, st, mem, struct sl_strlist, 0, 0, NULL, desc, NULL, \
		      SL_OPT_MAP_ENTRIES | SL_OPT_SECRET)
#define SL_OPT_END { NULL, (enum sl_opt_type)0, 0, NULL, NULL, 0, 0, NULL, 0 }

/*
 * The untyped row of ABI 1.0 is gone in 1.3: it took any member, so an
 * SL_OPT_INT row on an int member made the core write 8 bytes into 4.
 * A source still using it fails to compile, naming the replacement.
 */
#define SL_OPT_ROW(...) SL_OPT_ROW_was_removed_in_ABI_1_3_use_SL_OPT_INT_STR_and_the_typed_macros

/* ---- fields a plugin needs and provides ---- */

/*
 * A field named in a plugin's needs/provides.  A name that is not
 * well-known is registered (with this type) when the plugin is loaded;
 * two plugins registering one name with different types is an error, and
 * a new name one or two letters from a known field gets a "did you mean"
 * warning.  Declare well-known fields by their id, so a typo does not
 * compile: SL_FIELD_DECL(SL_F_PREFIX) is {"prefix", SL_T_STRING}.
 *
 * `needs` holds per stack, not per record: the graph check makes sure
 * something before the plugin sets each field, but whether one record has
 * it depends on the record (a TCP port on an ICMP packet).  Test sl_has()
 * before reading any field.
 */
struct sl_field_decl {
	const char *name;
	enum sl_type type;
};
#define SL_FIELD_DECL(id) { sl_well_known_names[id], (enum sl_type)id##_TYPE }
#define SL_FIELD_END { NULL, (enum sl_type)0 }

/* ---- the host: what the core does for a plugin ---- */

struct sl_instance;	/* opaque: one configured element of a stack */
struct sl_timer;	/* opaque: created by timer_new() */

enum sl_log_level { SL_LOG_ERR = 3, SL_LOG_WARNING = 4, SL_LOG_NOTICE = 5, SL_LOG_INFO = 6, SL_LOG_DEBUG = 7 };

typedef void (*sl_fd_cb)(void *ctx, int fd, uint32_t epoll_events);
typedef void (*sl_timer_cb)(void *ctx);

/*
 * ABI 1.4: one labelled counter a plugin keeps per something of its own
 * (nflog: per rule), for /metrics.  `family` is the whole metric name
 * (`sluice_rule_records_total`), `help` its HELP text; labels[i] is
 * named names[i].  The strings need only live during the put() call.
 */
struct sl_series {
	const char *family, *help;
	const char *const *names, *const *labels;
	unsigned nlabels;
	uint64_t value;
};
typedef void (*sl_series_put)(void *out, const struct sl_series *s);
typedef void (*sl_series_cb)(void *ctx, sl_series_put put, void *out);

struct sl_host {
	uint32_t size;	/* sizeof(struct sl_host) of the daemon */

	/* Log a message prefixed with the instance name. */
	void (*log)(struct sl_instance *inst, enum sl_log_level level, const char *fmt, ...)
		__attribute__((format(printf, 3, 4)));

	/*
	 * In configure() only: report a configuration error about one option
	 * (or the whole element when option is NULL).  The core prefixes it
	 * with file:line:column; configure() then returns -1.
	 */
	void (*config_error)(struct sl_instance *inst, const char *option, const char *fmt, ...)
		__attribute__((format(printf, 3, 4)));

	/*
	 * Resolve a field name to its id (in configure()); -1 if unknown.
	 * Since ABI 1.3, -1 used as an id (SL_FIELD_INVALID) is refused by
	 * every setter and counted (<sluice/record.h>, SL_FIELD_REFUSED).
	 */
	int (*field_id)(struct sl_instance *inst, const char *name);

	/*
	 * Batches: take an empty batch from the pool, fill it with
	 * sl_batch_add(), hand it downstream with emit().  emit() runs every
	 * element below this instance to completion and returns the batch to
	 * the pool: after emit() returns, the batch and anything its records
	 * pointed to may be reused.  emit() accepts an empty batch (it only
	 * returns it to the pool), so callers need no special case.
	 * batch_put() returns an unused batch.
	 */
	struct sl_batch *(*batch_get)(struct sl_instance *inst);
	void (*emit)(struct sl_instance *inst, struct sl_batch *batch);
	void (*batch_put)(struct sl_instance *inst, struct sl_batch *batch);

	/*
	 * Call cb(ctx, fd, events) when fd is ready (EPOLLIN, EPOLLOUT...).
	 * ctx is usually the instance state; a helper object embedded in it
	 * (a rotating file, a socket) passes itself.
	 */
	int (*watch_fd)(struct sl_instance *inst, int fd, uint32_t epoll_events, sl_fd_cb cb,
			void *ctx);
	int (*modify_fd)(struct sl_instance *inst, int fd, uint32_t epoll_events);
	void (*unwatch_fd)(struct sl_instance *inst, int fd);

	/*
	 * Timers on the monotonic clock, millisecond resolution, calling
	 * cb(ctx).  arm() with
	 * 0 ms runs the callback on the next turn of the event loop (after
	 * signals and ready descriptors are served); period_ms != 0 repeats.
	 * A timer lives until timer_free() (ABI 1.2) or the daemon's exit;
	 * create them in start(), disarm them in stop().
	 */
	struct sl_timer *(*timer_new)(struct sl_instance *inst, sl_timer_cb cb, void *ctx);
	void (*timer_arm)(struct sl_timer *t, uint64_t delay_ms, uint64_t period_ms);
	void (*timer_disarm)(struct sl_timer *t);

	/* Named counters, shown by SIGUSR1 next to in/out/dropped/errors. */
	int (*counter_new)(struct sl_instance *inst, const char *name);
	void (*counter_add)(struct sl_instance *inst, int counter, uint64_t n);
	/* Bump the instance's standard "errors" counter. */
	void (*error_add)(struct sl_instance *inst, uint64_t n);

	/* A finite input (replay) has delivered its last record. */
	void (*input_done)(struct sl_instance *inst);

	/* Instance name, as the user gave it or as the core made it up. */
	const char *(*name)(struct sl_instance *inst);

	/* ---- ABI 1.2 ---- */

	/*
	 * An output did not deliver n records it had accepted or was handed:
	 * a full queue, a failed write, a record it cannot represent.  The
	 * core moves them from the instance's `out` to its `dropped`, so
	 * in == out + dropped + errors holds for every output and stats,
	 * SIGUSR1 and metrics agree with the plugin's own counters.  Call it
	 * once per record lost, whatever else the plugin counts.
	 */
	void (*dropped_add)(struct sl_instance *inst, uint64_t n);

	/*
	 * Type and name of field `id` as registered; 0 and NULL if there is
	 * none.  Since ABI 1.3 the name lives as long as the process: a
	 * plugin may keep it, also across a reload that keeps its instance.
	 */
	enum sl_type (*field_type)(struct sl_instance *inst, int id);
	const char *(*field_name)(struct sl_instance *inst, int id);

	/*
	 * In configure() only: this instance needs field `name`, as one of its
	 * options says (a list of fields to print).  Returns the field's id
	 * when it is set before this instance in its stack; otherwise reports
	 * a configuration error at `option` (nothing upstream provides the
	 * field, or no such field exists) and returns -1.
	 */
	int (*need_field)(struct sl_instance *inst, const char *option, const char *name);

	/*
	 * Free a timer from timer_new() (disarming it).  Timers not freed live
	 * until the daemon exits; a timer must not be used after timer_free().
	 * It may be freed from any callback of its thread's loop, its own
	 * included (since ABI 1.3 this is the documented contract; the loop
	 * of 1.2 already allowed it): the loop only marks it and releases it
	 * once its walk over the timers is done, and a freed timer never runs
	 * again, even when it was due in the same turn.
	 */
	void (*timer_free)(struct sl_timer *t);

	/* ---- ABI 1.3 ---- */

	/*
	 * Inputs: the fields some element below this input may read, as bits
	 * (bit id of word id / 64, SL_PRESENCE_WORDS words): the union of what
	 * every filter and output of its subtree needs, reads or asked for
	 * (`needs`, `needs_one_of`, `reads`, need_field(), read_field()); all
	 * bits when one of them declares no `reads`.  An input may leave
	 * unset a field whose bit is clear, and skip the work of making it.
	 * The array lives as long as the instance; a reload rewrites it while
	 * the input's thread is paused, so read it afresh for each batch (from
	 * start() on; in configure() it is not computed yet).
	 */
	const uint64_t *(*subtree_reads)(struct sl_instance *inst);

	/*
	 * In configure() only: this instance reads field `name` when a record
	 * has it, as one of its options says (an addition to `reads` for this
	 * instance; not checked by the graph).  Returns the field's id, or -1
	 * if no field has that name.
	 */
	int (*read_field)(struct sl_instance *inst, const char *name);

	/* ---- ABI 1.4 ---- */

	/*
	 * Labelled series of the plugin's own (struct sl_series), from
	 * start() on: for each /metrics scrape the core calls cb(ctx, put,
	 * out) on the main thread, and cb calls put(out, series) once per
	 * series; the core adds the label instance="..." first, and writes
	 * the series of one family together.  cb runs beside the instance's
	 * own thread: it synchronises with it (a lock its record path never
	 * takes) and answers nothing once stop() ran.  One cb per instance; a
	 * later call replaces it, cb NULL removes it.
	 */
	void (*series_source)(struct sl_instance *inst, sl_series_cb cb, void *ctx);
};

/*
 * Whether the daemon's host table has `member` (a function added in a
 * later minor version than the plugin may meet).  A plugin that needs 1.N
 * (SL_PLUGIN_HEADER_MIN) is only loaded by a daemon of 1.N or newer, so it
 * has every member of 1.N; test only members newer than the minor you
 * declare as required.
 */
#define SL_HOST_HAS(host, member) \
	((host)->size >= offsetof(struct sl_host, member) + sizeof((host)->member))


/* ---- the descriptor ---- */

struct sl_plugin {
	uint16_t abi_major;
	uint16_t abi_minor;
	uint32_t size;			/* sizeof(struct sl_plugin) it was built with */

	enum sl_kind kind;
	const char *name;
	const char *description;	/* one line */

	size_t config_size;			/* the struct the option table fills */
	const struct sl_option *options;	/* ends with SL_OPT_END */
	const struct sl_field_decl *needs;	/* ends with SL_FIELD_END, may be NULL */
	const struct sl_field_decl *provides;	/* ends with SL_FIELD_END, may be NULL */

	/*
	 * Check the filled config and build the instance state.  Runs for
	 * every instance before anything starts (also for sluice -t): no
	 * sockets, no files here.  Returns 0 and sets *state, or -1 after
	 * host->config_error().  `config` stays valid until destroy().
	 */
	int (*configure)(const struct sl_host *host, struct sl_instance *inst,
			 const void *config, void **state);
	/* Open sockets and files; register fds and timers.  0, or -1. */
	int (*start)(void *state);
	/*
	 * Filters and outputs: handle a batch.  A filter may set fields it
	 * provides and drop records (compact batch->rec, lower count).
	 * Since ABI 1.3 a field a filter or output changes without providing
	 * it is put back after process() where another stack would see it
	 * (below a fan-out; in strict mode everywhere) and counted in its
	 * `undeclared_writes`: sluice-plugin(3), "What a plugin may write".
	 * Returns 0, or -1 if the whole batch failed: then no record of it goes
	 * further down the stack, all of them are counted in the instance's
	 * `errors` (so in == out + dropped + errors still holds), and the core
	 * logs a warning (the first time, then at most once a minute).  A
	 * plugin that can still pass some records on drops the others itself.
	 */
	int (*process)(void *state, struct sl_batch *batch);
	/* Write out anything buffered (outputs; filters holding state emit). */
	int (*flush)(void *state);
	/* Reopen output files (SIGHUP, for logrotate). */
	int (*reopen)(void *state);
	/* Close what start() opened.  May be called without start(). */
	void (*stop)(void *state);
	/* Free the state from configure(). */
	void (*destroy)(void *state);

	/* ---- ABI 1.1 ---- */

	/*
	 * Alternatives, for a plugin that handles several kinds of record
	 * (packets, or connections): a NULL-terminated array of field lists,
	 * at least one of which must be provided entirely before it in the
	 * stack, on top of `needs`.  NULL: no alternatives.
	 */
	const struct sl_field_decl *const *needs_one_of;

	/* ---- ABI 1.2 ---- */

	/*
	 * SL_PLUGIN_* bits.  SL_PLUGIN_NETWORK: an output that sends to the
	 * network (syslog, ipfix): the core runs it on its own thread behind
	 * a bounded queue unless the instance says `thread: false`.
	 * SL_PLUGIN_FINITE: an input that reads a finite source at its own
	 * pace (replay): a threaded output below it waits for room in its
	 * queue (`when_full: block`) unless told otherwise, since nothing
	 * would be gained by dropping.  A plugin built against 1.1 has no flags.
	 */
	uint32_t flags;

	/* ---- ABI 1.3 ---- */

	/*
	 * Fields the plugin reads when a record has them, beyond `needs` and
	 * `needs_one_of` (and the fields its configure() asked for with
	 * need_field() or read_field()): with those, every field it ever reads.  Not checked
	 * by the graph (a record may lack any of them).  An output is shown
	 * only the fields it reads, so a field missing here is absent for it:
	 * on its own thread its queue copies only those, and since ABI 1.3
	 * without a thread the others' presence bits are cleared.  NULL (a
	 * plugin that does not say, or one built before this member): every
	 * field is copied.  A plugin that reads nothing more gives an empty
	 * list ({SL_FIELD_END}).  The same set tells the input above what to
	 * make (host subtree_reads(), ABI 1.3).
	 */
	const struct sl_field_decl *reads;
};

#define SL_PLUGIN_NETWORK (1u << 0)
#define SL_PLUGIN_FINITE (1u << 1)

/*
 * The descriptor's first members.  abi_minor is the minor version the
 * plugin needs (ABI 1.3; before, the one it was built with, which the
 * loader checked the same way): SL_PLUGIN_HEADER needs these headers'
 * minor, SL_PLUGIN_HEADER_MIN(m) only 1.m, for a plugin that uses nothing
 * added after 1.m (descriptor members, option flags, host functions it
 * does not test with SL_HOST_HAS) and should load on older daemons.  The
 * loader refuses what it can see of a plugin using more than it declares
 * (option flags, `reads`); sluice --check-plugin FILE.so reports it.
 */
#define SL_PLUGIN_HEADER_MIN(minor) .abi_major = SL_ABI_MAJOR, .abi_minor = (minor), \
				    .size = sizeof(struct sl_plugin)
#define SL_PLUGIN_HEADER SL_PLUGIN_HEADER_MIN(SL_ABI_MINOR)

#ifdef __cplusplus
#define SL_EXTERN_C_ extern "C"
#else
#define SL_EXTERN_C_
#endif
#define SLUICE_PLUGIN(desc)                                                       \
	SL_EXTERN_C_ __attribute__((visibility("default")))                         \
	const struct sl_plugin *sluice_plugin_entry(void);                          \
	SL_EXTERN_C_ __attribute__((visibility("default")))                         \
	const struct sl_plugin *sluice_plugin_entry(void)                           \
	{                                                                         \
		return &(desc);                                                   \
	}

#ifdef __cplusplus
}

/* SL_OPT_CHECK_ in C++: a compile error when an option member has another type. */
template <class M, class T> struct sl_opt_same_ { static const bool value = false; };
template <class T> struct sl_opt_same_<T, T> { static const bool value = true; };
template <class M, class T> struct sl_opt_check_ {
	static_assert(sl_opt_same_<M, T>::value,
		      "option member must have the option's type (SL_OPT_INT: int64_t ...)");
	static const bool ok = true;
};
#endif
#endif /* SLUICE_PLUGIN_H */
