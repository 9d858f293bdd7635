/*
 * Internal to the offline driver: file and format handling (offline_file.c),
 * the reader/engine/writer pipeline (offline_pipeline.c), shared with the run
 * itself (offline.c). Control-side code: it may block and allocate.
 */
#ifndef GPUFIR_OFFLINE_INTERNAL_H
#define GPUFIR_OFFLINE_INTERNAL_H

#include <pthread.h>
#include <sndfile.h>
#include <stdint.h>
#include <time.h>

#include "engine.h"
#include "error.h"
#include "offline.h"
#include "progress.h"

static inline double gf_offline_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + 1e-6 * (double)ts.tv_nsec;
}

/* offline_file.c */
int gf_offline_subtype_clips(int format);
const char *gf_offline_major_name(int major);
int gf_offline_choose_format(const SF_INFO *in, const struct gf_offline_opts *o, SF_INFO *out,
			     struct gf_errbuf *eb);
int gf_offline_check_paths(const char *in, const char *out, struct gf_errbuf *eb);
int gf_offline_open_temp(const char *out, char **tmp_path, int *fd, struct gf_errbuf *eb);
/* offline_temp.c: the temporary output for the fatal-signal handler, and
 * the removal of those that dead runs left in @p dir. */
void gf_offline_temp_register(const char *path); /* also ends the set-up phase */
void gf_offline_setup_phase(int on);
void gf_offline_temp_forget(void);
void gf_offline_temp_sweep(const char *dir);
void gf_offline_copy_strings(SNDFILE *in, SNDFILE *out);
void gf_offline_warn_if_truncated(SNDFILE *f, const char *path, sf_count_t frames);

/* offline_align.c: frames the writer drops at the start, frames of silence the engine runs at the end */
struct gf_offline_align {
	uint64_t skip;
	uint64_t flush;
};
void gf_offline_align_plan(struct gf_offline_align *a, uint32_t taps, uint32_t delay, int tail, int causal);
/* Of a chunk of @p frames, the frames to write (from *offset on); counts the skip down. */
uint32_t gf_offline_align_trim(struct gf_offline_align *a, uint32_t frames, uint32_t *offset);

/* offline_pipeline.c */
struct gf_offline_fifo {
	uint32_t idx[GF_OFFLINE_CHUNKS];
	uint32_t head, count;
};

struct gf_offline_chunk {
	float *buf;
	uint32_t frames;
	int pinned;
};

struct gf_offline_pipeline {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct gf_offline_chunk chunk[GF_OFFLINE_CHUNKS];
	struct gf_offline_fifo free_q, decoded_q, filtered_q;
	int reader_done; /* no more decoded chunks will come */
	int engine_done; /* no more filtered chunks will come */
	int failed;	 /* first error code; everyone stops */
	struct gf_errbuf eb;

	const struct gf_offline_opts *o;
	SNDFILE *in, *out;
	uint32_t channels, chunk_frames;
	int clips; /* OUT's format clips beyond +-1.0 */
	struct gf_offline_align align;
	uint64_t frames_read, frames_filtered, frames_written, clipped;
	float peak;
	double busy_ms[3]; /* reader, engine, writer: time spent working (debug log) */
};

void gf_offline_pipeline_free(struct gf_offline_pipeline *p);
int gf_offline_pipeline_init(struct gf_offline_pipeline *p, const struct gf_offline_opts *o,
			     uint32_t channels, uint32_t chunk_frames, int pin);
int gf_offline_pipeline_run(struct gf_offline_pipeline *p, struct gf_engine *e, struct gf_progress *prog,
			    struct gf_errbuf *eb);

#endif
