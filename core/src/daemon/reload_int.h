/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the reload: what reload.c (the diff and the swap, on the main
 * thread) and reload_read.c (reading and checking the new file on a
 * thread of its own, and the askers waiting for the answer) share.
 */
#ifndef SLUICE_RELOAD_INT_H
#define SLUICE_RELOAD_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "daemon.h"
#include "graph.h"

/* A configuration replaced while some kept instance's options still point into it. */
struct retired {
	struct config *cfg;
	unsigned gen;
	bool owned;		/* calloc'ed here (not main()'s) */
};

/* The answer: lines of text (the control socket returns them). */
struct reload {
	char *msg;
	size_t len, used;
	size_t kept, added, removed;
	bool start;		/* the daemon's start: applied onto the empty graph */
};

/*
 * One reload: what the reading thread makes (the new configuration and
 * graph, checked and configured, or the reasons it failed), handed to the
 * main loop to be applied.
 */
struct reload_job {
	struct daemon *d;
	unsigned run;		/* which reload: askers wait for a number */
	struct config *cfg;
	struct graph *g;
	struct diag diag;
	struct reload r;
	char text[2048];	/* r.msg */
	uint64_t hash;		/* of the file read */
	bool hashed;
	int rc;			/* 1: the file is unchanged; 0: built; -1: failed */
	bool oom;		/* rc -1 before any diagnostic: out of memory */
};

struct reload_asker {
	daemon_reload_cb cb;
	void *ctx;
	unsigned run;		/* answered when this reload has finished */
};

struct reload_state {
	/* The running configuration: main thread; read (never written) by the reader. */
	struct graph *graph;
	struct config *cfg;
	bool owned;		/* both made by a reload (else main()'s) */
	unsigned gen;		/* of cfg */
	struct retired *retired;
	size_t nretired;
	uint64_t hash;		/* the file as last loaded */
	bool hashed;

	/* Main thread only. */
	struct reload_job *job;	/* the reload being read; NULL: none */
	pthread_t reader;
	bool threaded;		/* reader is a thread to join */
	int donefd;		/* eventfd: the reader has finished */
	unsigned runs;		/* reloads begun */
	bool again;		/* asked while one was read: another after it */
	struct reload_asker *askers;
	size_t naskers;

	/* Configurations to free, and the thread freeing the last ones (main thread only). */
	struct retired *garbage;
	size_t ngarbage;
	pthread_t reaper;
	bool reaping;		/* reaper to join */
	bool reaped;		/* atomic: the reaper has finished */

	bool cancel;		/* atomic: stop reading (shutdown) */
};

void reload_say(struct reload *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* FNV-1a of the file: an unchanged file means reopen only.  0 or -1. */
int reload_file_hash(const char *file, uint64_t *h);
/* On the reading thread: parse, check and configure what `sluice -t` would. */
void reload_read(struct reload_state *st, struct reload_job *j);
/*
 * On the main thread, once read: apply the job to the running graph (or
 * count its failure).  0: reloaded; 1: unchanged; -1: failed; the answer
 * in j->r.  Takes the job's configuration and graph when applied.
 */
int reload_apply(struct daemon *d, struct reload_job *j);
/* The job's configuration and graph, when not applied, and the job. */
void reload_job_free(struct reload_job *j);
void reload_free_config(struct config *c, bool owned);
/*
 * A configuration no longer used: freed by a thread of its own after the
 * reload (a large file's tree takes a while to free), or at exit.
 */
void reload_discard(struct reload_state *st, struct config *c, bool owned);
/* The thread freeing discarded configurations has finished. */
void reload_reap_wait(struct reload_state *st);

#endif
