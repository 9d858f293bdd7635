/*
 * Internal to the offline driver: file and format handling (offline_file.c),
 * the reader/engine/writer pipeline (offline_pipeline.c) over its chunk
 * queues (offline_queue.c), one chunk through the chain (offline_chunk.c),
 * the configuration,
 * filters and engines kept across files (offline_ctx.c), one file's run
 * (offline.c) and the batch's lanes (offline_batch.c). Control-side code: it
 * may block and allocate.
 */
#ifndef GPUFIR_OFFLINE_INTERNAL_H
#define GPUFIR_OFFLINE_INTERNAL_H

#include <pthread.h>
#include <sndfile.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "chain.h"
#include "chain_run.h"
#include "engine.h"
#include "error.h"
#include "offline.h"
#include "progress.h"
#include "suppress_bank.h"

/* offline_file.c */
int gf_offline_subtype_clips(int format);
const char *gf_offline_major_name(int major);
int gf_offline_choose_format(const SF_INFO *in, const struct gf_offline_opts *o, SF_INFO *out,
			     struct gf_errbuf *eb);
int gf_offline_check_paths(const char *in, const char *out, struct gf_errbuf *eb);
/* offline.c: the set-up phase, in which a stop signal may end the run at once
 * (the temporary output itself: temp_file.h). */
void gf_offline_setup_phase(int on);
void gf_offline_copy_strings(SNDFILE *in, SNDFILE *out);
void gf_offline_warn_if_truncated(SNDFILE *f, const SF_INFO *info, const char *path);

/* offline_pipeline.c: frames the writer drops at the start, frames of silence the engine runs at the end */
struct gf_offline_align {
	uint64_t skip;
	uint64_t flush;
};
/* @p delay: the chain's linear-phase delay; @p suppress: the suppressor's latency (0: none). */
void gf_offline_align_plan(struct gf_offline_align *a, uint32_t taps, uint32_t delay, uint32_t suppress,
			   int tail, int causal);
/* Of a chunk of @p frames, the frames to write (from *offset on); counts the skip down. */
uint32_t gf_offline_align_trim(struct gf_offline_align *a, uint32_t frames, uint32_t *offset);

/* offline_chunk.c: the input's NaN/Inf samples, for the warning */
struct gf_offline_bad {
	uint64_t samples;     /* how many */
	uint64_t pieces;      /* the GF_OFFLINE_MUTE_FRAMES pieces holding them: muted */
	uint64_t first_frame; /* where the first is */
	uint32_t first_channel;
};

/* offline_pipeline.c */
struct gf_offline_fifo {
	uint32_t *idx; /* nchunks slots */
	uint32_t cap, head, count;
};

struct gf_offline_chunk {
	float *buf;
	float *piece; /* GF_OFFLINE_MUTE_FRAMES x channels: a piece's input where buf holds NaN/Inf */
	uint32_t frames;
	int pinned;
	uint64_t seq; /* position in the file, in chunks: the writer writes in this order */
	int hist;     /* striped: the history slot of the stripe this chunk starts, else -1 */
};

/* Striped filtering (offline_stripe.c): one file cut into stripes of
 * stripe_chunks chunks, each stripe filtered by one of threads engines that
 * starts it from the input before it (hist_frames frames). 1 thread: the
 * plain pipeline, one engine on the calling thread. */
struct gf_offline_stripes {
	uint32_t threads;
	uint32_t stripe_chunks;
	uint32_t hist_frames;
	uint32_t chunks; /* chunks in flight */
};

struct gf_offline_pipeline {
	int inited; /* mu, cv and the chunks exist (kept across files of a lane) */
	int pin;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct gf_offline_chunk *chunk;
	uint32_t nchunks;
	struct gf_offline_fifo free_q, decoded_q, filtered_q;
	int reader_done;    /* no more decoded chunks will come */
	int engine_done;    /* no more filtered chunks will come */
	int failed;	    /* first error code; everyone stops */
	uint64_t seq_next;  /* the next chunk's seq (reader, then the tail's flush) */
	uint64_t seq_write; /* the seq the writer waits for */
	struct gf_errbuf eb;

	/* Striped runs (offline_stripe.c); guarded by mu where shared. */
	struct gf_offline_stripes stripes;
	const struct gf_engine_params *stripe_params; /* the extra engines' (CPU) */
	const struct gf_filter_set *stripe_fs;
	float **hist_buf; /* history slots: hist_frames frames each */
	uint8_t *hist_used;
	uint32_t n_hist;
	int reader_hist;      /* the slot the reader fills for the next stripe, -1 none */
	uint64_t stripe_next; /* the next stripe a filter thread claims */
	uint32_t threads_running;
	uint64_t input_chunks;	   /* set by the reader at the end of the input */
	uint64_t stripe_nonfinite; /* muted blocks of the filter threads' own engines */
	struct gf_offline_bad bad; /* NaN/Inf input samples (offline_chunk.c); mu */

	/* The noise suppressor after the engine (NULL: none): stateful, so a file
	 * with one is never striped (offline.c). Run by the engine thread. */
	struct gf_suppress_bank *suppress;

	const struct gf_offline_opts *o;
	SNDFILE *in, *out;
	uint32_t channels, chunk_frames; /* the input's channels */
	uint32_t out_channels;		 /* the output's: a mixer's outputs, else channels */
	int clips;			 /* OUT's format clips beyond +-1.0 */
	struct gf_offline_align align;
	uint64_t frames_read, frames_filtered, frames_written, clipped;
	float peak;
	double busy_ms[3]; /* reader, engine, writer: time spent working (debug log) */
};

/* Accepts a zeroed, never prepared pipeline. */
void gf_offline_pipeline_free(struct gf_offline_pipeline *p);
/* Ready @p p for one file: keeps the chunks of the previous file when the sizes
 * match. @p st: the stripes (NULL or 1 thread: GF_OFFLINE_CHUNKS chunks, one engine).
 * Chunks hold the larger of @p channels (in) and @p out_channels (a mixer's outputs):
 * the engine filters in place. */
int gf_offline_pipeline_prepare(struct gf_offline_pipeline *p, const struct gf_offline_opts *o,
				uint32_t channels, uint32_t out_channels, uint32_t chunk_frames, int pin,
				const struct gf_offline_stripes *st);
int gf_offline_pipeline_run(struct gf_offline_pipeline *p, struct gf_engine *e, struct gf_progress *prog,
			    struct gf_errbuf *eb);

/* offline_queue.c: the chunk queues and the one failure, shared by the pipeline's stages; caller
 * holds mu where named _locked. */
/* Empty the queues and put every chunk in the free one (before a file; no thread running). */
void gf_offline_queues_reset(struct gf_offline_pipeline *p);
void gf_offline_fail(struct gf_offline_pipeline *p, int err, const struct gf_errbuf *eb);
void gf_offline_fail_locked(struct gf_offline_pipeline *p, int err, const struct gf_errbuf *eb);
void gf_offline_give(struct gf_offline_pipeline *p, struct gf_offline_fifo *q, uint32_t idx);
/* Take a chunk index from @p q, waiting while it is empty (@p seq >= 0: only that chunk).
 * @return 1 with *idx set, 0 when it will not come and *done says none will, -1 when the
 * pipeline failed. With @p poll_stop (the engine thread) the stop flag is looked at too. */
int gf_offline_take(struct gf_offline_pipeline *p, struct gf_offline_fifo *q, const int *done, int poll_stop,
		    int64_t seq, uint32_t *idx);
/* Take chunk @p seq from @p q, waiting: gf_offline_take without the stop flag. */
int gf_offline_take_seq(struct gf_offline_pipeline *p, struct gf_offline_fifo *q, const int *done,
			uint64_t seq, uint32_t *idx);
/* Set a stage's done flag and wake the others. */
void gf_offline_set_done(struct gf_offline_pipeline *p, int *flag);
/* offline_chunk.c */
/* The chain an engine thread runs on @p e: p->suppress after it, no gain stage; a failed backend
 * call falls back to the CPU and the piece is redone (chain_run.h). */
struct gf_chain_run gf_offline_chain(const struct gf_offline_pipeline *p, struct gf_engine *e);
/* Decoded chunk @p c (its frames from file frame @p at) through @p e and p->suppress (if any), in
 * place: one holding NaN/Inf goes in pieces of GF_OFFLINE_MUTE_FRAMES through c->piece, counted in
 * p->bad, and only those holding them are muted (a gap to the suppressor). Allocates nothing.
 * @return 0 or the error: the engine's, or the suppressor's with *@p sup_failed set. */
int gf_offline_run_chunk(struct gf_offline_pipeline *p, struct gf_engine *e, struct gf_offline_chunk *c,
			 uint64_t at, int *sup_failed);
/* Chunk @p i failed at file frame @p frame, in the engine or (@p sup_failed) in a GPU suppressor's
 * hop: it goes back free and the pipeline fails. A failed hop's piece is muted, so the file would
 * hold a gap; an offline run fails the file instead (exit status 5) rather than write it
 * (docs/cuda.md). */
void gf_offline_chunk_failed(struct gf_offline_pipeline *p, uint32_t i, uint64_t frame, int err,
			     int sup_failed);
/* The tail's flush on @p e, after the file's last chunk (any engine thread). */
int gf_offline_flush_tail(struct gf_offline_pipeline *p, struct gf_engine *e);

/* offline_stripe.c */
/* CPUs this process may run on (its affinity: taskset, cgroups, a job's allocation). */
uint32_t gf_offline_cpus(void);
/* How to stripe a file of @p frames (0: unknown, a pipe) for a filter of
 * @p taps on up to @p max_threads CPU threads, in chunks of @p chunk_frames:
 * threads 1 when it does not pay (a file of one stripe, a filter too long
 * for the memory cap). */
void gf_offline_stripe_plan(uint64_t frames, uint32_t taps, uint32_t channels, uint32_t chunk_frames,
			    uint32_t max_threads, struct gf_offline_stripes *st);
/* Reader side: history for the stripes ahead, from chunk @p i as decoded. 0 or -1 (failed). */
int gf_offline_stripe_note_chunk(struct gf_offline_pipeline *p, uint32_t i);
/* Run the filter threads (the calling thread watches stop and draws progress). */
void gf_offline_stripe_run(struct gf_offline_pipeline *p, struct gf_engine *e, struct gf_progress *prog);

/* offline_ctx.c: what a run keeps across files. */
#define GF_OFFLINE_MAX_KEYS 8 /* distinct (rate, channels) kept; more: the oldest is rebuilt */

struct gf_offline_fs_entry {
	uint32_t rate, channels;
	struct gf_filter_set *fs;
	struct gf_config_build_info built;
	int err; /* building failed: every file of this shape fails the same way */
	struct gf_errbuf eb;
};

/* Shared by every lane (its mutex guards the lazy config and the filter sets). */
struct gf_offline_ctx {
	const struct gf_offline_opts *o; /* base options (input/output unused in a batch) */
	pthread_mutex_t mu;
	struct gf_config *cfg;
	int cfg_err;
	struct gf_errbuf cfg_eb;
	struct gf_offline_fs_entry fs[GF_OFFLINE_MAX_KEYS];
	uint32_t n_fs;
	uint32_t stripe_max; /* CPU threads one file may stripe over (1: none) */
	int quiet_files;     /* batch: one file's summary goes at debug level */
	int per_file;	     /* the filters are measured from each input: built per file */
	/* The job's size for auto by cost (guarded by mu): a batch sets job_bytes
	 * (its inputs' total) and job_lanes; the first input to open sets
	 * job_samples (a batch's extrapolated from that file's samples per byte). */
	int weigh_cost; /* 0: no weighing (--gpu asks for the GPU; a stream of unknown size) */
	uint64_t job_bytes;
	uint32_t job_lanes;
	int job_known;
	uint64_t job_samples;
};

struct gf_offline_engine_entry {
	const struct gf_filter_set *fs;
	struct gf_engine *engine;
	struct gf_engine_params params; /* the CPU's, for a striped file's other engines */
	uint32_t chunk_frames;
	uint64_t last_use;
};

/* One worker's engines (one per filter set it met) and its pipeline buffers. */
struct gf_offline_lane {
	struct gf_offline_ctx *ctx;
	int gpu_index;		      /* -1: the configuration's */
	enum gf_backend_kind backend; /* the run's choice, or AUTO (the configuration's) */
	struct gf_offline_engine_entry eng[GF_OFFLINE_MAX_KEYS];
	uint32_t n_eng;
	uint64_t uses;
	struct gf_offline_pipeline pipe;
};

int gf_offline_ctx_init(struct gf_offline_ctx *c, const struct gf_offline_opts *o);
void gf_offline_ctx_free(struct gf_offline_ctx *c);
/* Load the configuration once (any thread; later calls return the first result). */
int gf_offline_ctx_config(struct gf_offline_ctx *c, const struct gf_config **cfg, struct gf_errbuf *eb);
/* The filters at (rate, channels), built once (any thread); *owned: built for @p input
 * alone (ctx->per_file), the caller frees it. */
int gf_offline_ctx_filters(struct gf_offline_ctx *c, uint32_t rate, uint32_t channels, const char *input,
			   struct gf_filter_set **fs, int *owned, struct gf_config_build_info *built,
			   struct gf_errbuf *eb);
/* The suppressors for @p input (any thread; the configuration loaded): a hum they remove in their
 * frames (gf_config_hum_in_suppressor_any) is measured in @p input, as a hum notch's is. */
int gf_offline_ctx_suppressor(struct gf_offline_ctx *c, const char *input, const struct gf_chain_facts *f,
			      const struct gf_engine *e, struct gf_suppress_bank **out, struct gf_errbuf *eb);

/* An input of @p samples (frames x channels; 0 = unknown) opened: the job's size, once. */
void gf_offline_ctx_note_input(struct gf_offline_ctx *c, const char *path, uint64_t samples);

void gf_offline_lane_init(struct gf_offline_lane *l, struct gf_offline_ctx *c, int gpu_index,
			  enum gf_backend_kind backend);
void gf_offline_lane_free(struct gf_offline_lane *l);
/* The lane's engine for @p fs, reset for a new file (built on first use), and
 * the parameters of a CPU engine like it (for stripes). */
int gf_offline_lane_engine(struct gf_offline_lane *l, const struct gf_filter_set *fs, uint32_t channels,
			   struct gf_engine **e, uint32_t *chunk_frames, const struct gf_engine_params **cpu,
			   struct gf_errbuf *eb);
/* Forget the engine of @p fs (it failed: the next file builds a new one). */
void gf_offline_lane_drop(struct gf_offline_lane *l, const struct gf_filter_set *fs);

/* offline.c: one file through a lane. */
struct gf_offline_file_stats {
	uint64_t frames; /* frames written */
	uint32_t rate;	 /* the input's sample rate (0 if it never opened) */
	double seconds;	 /* wall time of the file */
	int on_gpu;	 /* the engine that filtered it ran on CUDA */
};
int gf_offline_file_run(struct gf_offline_lane *l, const struct gf_offline_opts *o,
			struct gf_offline_file_stats *st, struct gf_errbuf *eb);

#endif
