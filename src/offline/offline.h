/**
 * @file offline.h
 * Offline filtering of a sound file: gpufir -i IN -o OUT.
 *
 * Three threads overlap: a reader decodes IN (libsndfile) into a few large
 * chunks, the calling thread runs the engine on each chunk, and a writer
 * encodes finished chunks into a temporary file beside OUT. Memory does not
 * grow with the file's length. OUT appears (by rename) only when everything
 * succeeded; on any error or stop request the temporary file is removed and
 * OUT is left as it was. IN is only ever opened for reading.
 *
 * Control thread: gf_offline_run blocks until done. Not for the live path.
 *
 * Folder src/offline/ (files, batches, the pipeline, stripes, progress bar):
 * this header is its entry point. It stands on config and the engine.
 */
#ifndef GPUFIR_OFFLINE_H
#define GPUFIR_OFFLINE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "engine.h"
#include "error.h"

/** Frames per chunk (and the engine's max_block) unless the caller picks another size. */
#define GF_OFFLINE_CHUNK_FRAMES 65536u
/** A chunk whose input holds NaN/Inf is filtered in pieces of this many frames, and only the
 * pieces holding them are muted (21 ms at 48 kHz, where a chunk is 1.4 s). */
#define GF_OFFLINE_MUTE_FRAMES 1024u
/** Chunks in flight between reader, engine and writer. */
#define GF_OFFLINE_CHUNKS 4u

struct gf_offline_opts {
	const char *input;	     /**< any file libsndfile reads, any channel count */
	const char *output;	     /**< replaced atomically on success */
	struct gf_config_source src; /**< the config (NULL path: built-in denoise chain) and overrides */
	int tail;		     /**< 1: append the filter's ring-out (taps-1 frames) */
	int causal;		     /**< 1: keep the linear-phase delay (offline_pipeline.c) */
	int format_subtype;	     /**< SF_FORMAT_* subtype of OUT; 0 = keep the input's */
	int progress;		     /**< 1: draw a progress bar on stderr (caller checks isatty) */
	int log_level_set;	     /**< 1: the command line chose the log level; ignore the config's */
	const atomic_int *stop;	     /**< optional: set nonzero (e.g. by a signal handler) to stop */
	uint32_t chunk_frames;	     /**< 0 = GF_OFFLINE_CHUNK_FRAMES */
	int gpu_set;		     /**< 1: gpu_index overrides the configuration's */
	int gpu_index;		     /**< CUDA device (with gpu_set) */
	uint32_t threads;	     /**< CPU threads one file may stripe over, or its noise
					  suppressor's CPU channels spread over; 0 = the CPUs (a
					  batch: its share of them) */
};

/**
 * Filter o->input into o->output. Logs a one-line summary at info level.
 * @return 0; GF_E_IO / GF_E_FORMAT (input or output file), GF_E_CONFIG (config
 * or filter files), GF_E_INVAL (OUT is IN, a format OUT cannot hold),
 * GF_E_INTERRUPTED (o->stop was set), or an engine error. Details in @p eb.
 * Map to an exit status with gf_exit_code().
 */
int gf_offline_run(const struct gf_offline_opts *o, struct gf_errbuf *eb);

/**
 * 1 while gf_offline_run is setting up (config, filter files, designs, the
 * engine) and has written nothing: a stop signal may then _exit at once.
 * Async-signal-safe.
 */
int gf_offline_in_setup(void);

/**
 * Parse a --format name ("PCM_16", "pcm_24", "FLOAT", ...; case-insensitive)
 * into an SF_FORMAT_* subtype. @return 0 or GF_E_INVAL
 */
int gf_offline_parse_format(const char *name, int *subtype);

/** Name of an SF_FORMAT_* subtype ("PCM_16"), or "unknown". */
const char *gf_offline_format_name(int subtype);

/** Comma-separated list of the names gf_offline_parse_format accepts. */
const char *gf_offline_format_list(void);

/* ---- batches: many files in one process (offline_list.c, offline_batch.c) ---- */

struct gf_offline_job {
	char *input, *output;
};

/** A growing list of jobs; zero it to start. */
struct gf_offline_jobs {
	struct gf_offline_job *v;
	size_t n, cap;
};

void gf_offline_jobs_free(struct gf_offline_jobs *j);
/** Append IN -> @p output, or -> @p outdir/<IN's file name> when @p output is NULL. */
int gf_offline_jobs_add(struct gf_offline_jobs *j, const char *input, const char *output, const char *outdir,
			struct gf_errbuf *eb);
/**
 * Append the jobs of a list file ("-": standard input): one "INPUT" or
 * "INPUT<TAB>OUTPUT" per line; blank lines and lines starting with '#' are
 * skipped; a NUL byte in a line is refused. With @p nul, records end in NUL
 * bytes instead (find -print0), taken as they are: only empty ones are
 * skipped. The whole list is read before anything runs, so a list that
 * cannot be read to its end (a read error, a record over 64 KiB) fails as a
 * whole. @return 0, GF_E_IO, GF_E_NOMEM, or GF_E_INVAL naming FILE:RECORD
 */
int gf_offline_jobs_read_list(struct gf_offline_jobs *j, const char *path, const char *outdir, int nul,
			      struct gf_errbuf *eb);
/** Parse "K/N" (0 <= K < N). @return 0 or GF_E_INVAL */
int gf_offline_shard_parse(const char *s, uint32_t *k, uint32_t *n);
/** Keep the K-th of N shards: jobs K, K+N, K+2N, ... of the list. */
void gf_offline_jobs_shard(struct gf_offline_jobs *j, uint32_t k, uint32_t n);
/**
 * Refuse an output named twice, or an output that is an input, compared by
 * identity (the folder's device and inode and the last name; an existing
 * file's own device and inode), not by spelling. @return 0, GF_E_INVAL or
 * GF_E_NOMEM
 */
int gf_offline_jobs_check(const struct gf_offline_jobs *j, struct gf_errbuf *eb);

/** A list of CUDA devices for a batch: "all", or indices "0,1,3". */
struct gf_offline_gpus {
	int all;
	uint32_t n;
	int index[64];
};
/** Parse --gpu's value. @return 0 or GF_E_INVAL */
int gf_offline_gpus_parse(const char *s, struct gf_offline_gpus *g);

struct gf_offline_batch_opts {
	struct gf_offline_opts base; /**< everything but input and output; progress: the batch's bar */
	const struct gf_offline_jobs *jobs;
	uint32_t lanes;			    /**< files in flight at once; 0 = one per online CPU */
	const struct gf_offline_gpus *gpus; /**< NULL: the configuration's device */
	int skip_existing;		    /**< 1: a job whose output exists is done already */
};

struct gf_offline_batch_result {
	size_t written, failed, skipped, not_started;
	int first_err;	      /**< the first failed file's code (GF_E_INTERRUPTED after a stop) */
	double audio_s;	      /**< seconds of audio written */
	double wall_s;	      /**< the batch's wall time */
	uint32_t lanes, gpus; /**< what ran: lanes, and GPUs among them (0: the CPU) */
};

/**
 * Filter every job, several at once (lanes, each a reader/engine/writer
 * pipeline with one engine per (rate, channels), reused across its files).
 * Each file keeps gf_offline_run's guarantees; a failing file is reported
 * (error log) and the others go on; a stop request finishes no new file.
 * Logs a summary line. Control thread; blocks until done.
 * @return 0 when every job was written or skipped, else the first failure's
 * code (GF_E_INTERRUPTED when stopped); a configuration error or --gpu with no
 * usable device fails before any file (result counts are then zero).
 */
int gf_offline_batch_run(const struct gf_offline_batch_opts *o, struct gf_offline_batch_result *res,
			 struct gf_errbuf *eb);

#endif
