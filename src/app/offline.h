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
 */
#ifndef GPUFIR_OFFLINE_H
#define GPUFIR_OFFLINE_H

#include <stdatomic.h>
#include <stdint.h>

#include "config.h"
#include "engine.h"
#include "error.h"

/** Frames per chunk (and the engine's max_block) unless the caller picks another size. */
#define GF_OFFLINE_CHUNK_FRAMES 65536u
/** Chunks in flight between reader, engine and writer. */
#define GF_OFFLINE_CHUNKS 4u

struct gf_offline_opts {
	const char *input;	     /**< any file libsndfile reads, any channel count */
	const char *output;	     /**< replaced atomically on success */
	struct gf_config_source src; /**< the config (NULL path: built-in denoise chain) and overrides */
	int tail;		     /**< 1: append the filter's ring-out (taps-1 frames) */
	int causal;		     /**< 1: keep the linear-phase delay (offline_align.c) */
	int format_subtype;	     /**< SF_FORMAT_* subtype of OUT; 0 = keep the input's */
	int progress;		     /**< 1: draw a progress bar on stderr (caller checks isatty) */
	int log_level_set;	     /**< 1: the command line chose the log level; ignore the config's */
	const atomic_int *stop;	     /**< optional: set nonzero (e.g. by a signal handler) to stop */
	uint32_t chunk_frames;	     /**< 0 = GF_OFFLINE_CHUNK_FRAMES */
	int gpu_set;		     /**< 1: gpu_index overrides the configuration's */
	int gpu_index;		     /**< CUDA device (with gpu_set) */
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
 * Remove the temporary output being written, if any. Async-signal-safe: for
 * the handlers of fatal signals (SIGHUP, SIGPIPE, ...), which then die by
 * the signal.
 */
void gf_offline_temp_unlink_now(void);

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

#endif
