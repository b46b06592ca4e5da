/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The tls_* options every TLS-capable output shares: one struct in the
 * output's config, one block of option rows, one conversion to the
 * GnuTLS stream's settings (tls_stream.h).  An output whose library does
 * its own TLS (libcurl, libnats, librelp) maps the same struct onto that
 * library, and refuses with config_error() what the library cannot do.
 *
 * Names are flat (tls_ca_file, not tls: {ca_file}) because the option
 * table has no nested mappings.  Paths are checked and opened by the
 * option table (SL_OPT_IN_FILE) before configure() runs.
 *
 * Header only: the rows, the version names and two small helpers.
 */
#ifndef SLUICE_TLS_OPTIONS_H
#define SLUICE_TLS_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include <sluice/plugin.h>

#include "tls_stream.h"

struct sl_tls_cfg {
	const char *ca_file;		/* NULL: the system's trust store */
	const char *cert_file;		/* client certificate (mutual TLS), with key_file */
	const char *key_file;
	const char *server_name;	/* NULL: the host of the output's address */
	bool verify;			/* false: encrypt only (logged as a warning) */
	int min_version;		/* index in sl_tls_version_names: 0 = 1.2, 1 = 1.3 */
};

static const char *const sl_tls_version_names[] = { "1.2", "1.3", NULL };

/*
 * The six rows, in the output's table where they belong (`member` names
 * its struct sl_tls_cfg).  `when` starts every text, a string literal
 * saying when the rows apply ("tls: " where TLS is one transport of
 * several, "" where it is switched on by the address's scheme).
 */
#define SL_TLS_OPTIONS(st, member, when)                                                           \
	SL_OPT_STR("tls_ca_file", st, member.ca_file, SL_PATH(NULL, SL_OPT_IN_FILE),                \
		   when "PEM CA certificates the server's is verified against "                     \
		   "(default: system store)"),                                                      \
	SL_OPT_STR("tls_cert_file", st, member.cert_file, SL_PATH(NULL, SL_OPT_IN_FILE),            \
		   when "PEM client certificate, for mutual TLS (with tls_key_file)"),              \
	SL_OPT_STR("tls_key_file", st, member.key_file, SL_PATH(NULL, SL_OPT_IN_FILE),              \
		   when "PEM private key of tls_cert_file"),                                        \
	SL_OPT_STR("tls_server_name", st, member.server_name, NULL,                                 \
		   when "name the server certificate must carry (default: the host of address)"),   \
	SL_OPT_BOOL("tls_verify", st, member.verify, "true",                                        \
		    when "verify the server certificate and name (false: encrypt only)"),           \
	SL_OPT_ENUM("tls_min_version", st, member.min_version, "1.2", sl_tls_version_names,         \
		    when "oldest TLS version offered, 1.2 or 1.3 (never 1.0 or 1.1)")

/* The GnuTLS stream's settings from the options. */
static inline struct sl_tls_conf sl_tls_conf_of(const struct sl_tls_cfg *t)
{
	struct sl_tls_conf tc = {
		.ca_file = t->ca_file,
		.cert_file = t->cert_file,
		.key_file = t->key_file,
		.verify = t->verify,
		.min_tls13 = t->min_version == 1,
	};

	return tc;
}

/*
 * The name of the first tls_* option that differs from its default, or
 * NULL: for "only applies to …" errors where TLS is not in use.
 */
static inline const char *sl_tls_cfg_first_set(const struct sl_tls_cfg *t)
{
	return t->ca_file ? "tls_ca_file" : t->cert_file ? "tls_cert_file"
	     : t->key_file ? "tls_key_file" : t->server_name ? "tls_server_name"
	     : !t->verify ? "tls_verify" : t->min_version ? "tls_min_version" : NULL;
}

#endif
