/*
 * What an offline run keeps across files: the configuration (loaded once),
 * the filters per (sample rate, channels) (designed once, shared by every
 * lane), and per lane one engine per filter set, reset between files, so a
 * batch pays CUDA's and the planner's set-up once per shape, not per file.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cost.h"
#include "gpu.h"
#include "log.h"
#include "offline_internal.h"

#define MAX_CHUNK_BYTES (8u << 20) /* many-channel files get shorter chunks */

int gf_offline_ctx_init(struct gf_offline_ctx *c, const struct gf_offline_opts *o)
{
	memset(c, 0, sizeof(*c));
	c->o = o;
	c->cfg_err = 1;		     /* not loaded yet */
	c->weigh_cost = !o->gpu_set; /* --gpu N asks for that GPU */
	return pthread_mutex_init(&c->mu, NULL) == 0 ? 0 : GF_E_SYSTEM;
}

void gf_offline_ctx_free(struct gf_offline_ctx *c)
{
	for (uint32_t i = 0; i < c->n_fs; i++)
		gf_filter_set_free(c->fs[i].fs);
	gf_config_free(c->cfg);
	pthread_mutex_destroy(&c->mu);
}

/*
 * Start CUDA ahead (overlapping the filter's design) only where it will run:
 * --backend cuda, or auto for a job the GPU wins whatever the filter (the
 * choice itself waits for the taps: engine.c). A batch's size before any
 * file is open counts 4 bytes a sample (float WAV; 16-bit files have more
 * samples: they only miss the overlap).
 */
static int wants_prewarm(const struct gf_offline_ctx *c)
{
	if (c->cfg->backend != GF_BACKEND_AUTO || !c->weigh_cost)
		return c->cfg->backend != GF_BACKEND_CPU;
	uint64_t samples = c->job_known ? c->job_samples : c->job_bytes / 4;
	if (!c->job_known && !c->job_bytes)
		return 1;
	struct gf_cost_calib cal;
	gf_cost_calib_current(&cal);
	uint32_t threads = (c->job_lanes ? c->job_lanes : 1) * (c->stripe_max ? c->stripe_max : 1);
	return gf_cost_gpu_certain(samples, threads, &cal);
}

void gf_offline_ctx_note_input(struct gf_offline_ctx *c, const char *path, uint64_t samples)
{
	pthread_mutex_lock(&c->mu);
	if (!c->job_known) {
		c->job_known = 1;
		struct stat st;
		if (samples && c->job_bytes && stat(path, &st) == 0 && st.st_size > 0)
			samples = (uint64_t)((double)samples * (double)c->job_bytes / (double)st.st_size);
		c->job_samples = samples;
	}
	pthread_mutex_unlock(&c->mu);
}

static int load_config_locked(struct gf_offline_ctx *c)
{
	struct gf_errbuf eb = {{0}};
	int err = gf_config_load_source(&c->o->src, &c->cfg, &eb);
	if (err) {
		c->cfg_err = gf_config_failure(err);
		c->cfg_eb = eb;
		return c->cfg_err;
	}
	c->cfg_err = 0;
	c->per_file = gf_config_reads_input(c->cfg);
	if (wants_prewarm(c)) /* CUDA starts while the taps are read */
		gf_cuda_prewarm(c->o->gpu_set ? c->o->gpu_index : c->cfg->gpu_index);
	if (!c->o->log_level_set)
		gf_log_set_level(c->cfg->log_level);
	return 0;
}

int gf_offline_ctx_config(struct gf_offline_ctx *c, const struct gf_config **cfg, struct gf_errbuf *eb)
{
	pthread_mutex_lock(&c->mu);
	int err = c->cfg_err == 1 ? load_config_locked(c) : c->cfg_err;
	if (err)
		*eb = c->cfg_eb;
	*cfg = c->cfg;
	pthread_mutex_unlock(&c->mu);
	return err;
}

static struct gf_offline_fs_entry *find_fs(struct gf_offline_ctx *c, uint32_t rate, uint32_t ch)
{
	for (uint32_t i = 0; i < c->n_fs; i++)
		if (c->fs[i].rate == rate && c->fs[i].channels == ch)
			return &c->fs[i];
	return NULL;
}

/* Design the filters at the file's rate and channel count: any failure is a config error. */
static void build_fs_locked(struct gf_offline_ctx *c, struct gf_offline_fs_entry *f, const char *input)
{
	struct gf_config *cfg = c->cfg;
	cfg->program_file = input; /* learned filters measure what they will filter */
	if (cfg->sample_rate && cfg->sample_rate != f->rate)
		gf_warn("%s sets sample_rate = %u Hz but %s is %u Hz: designing the filters at "
			"%u Hz, the file's rate (WAV impulse responses must match it)",
			cfg->path ? cfg->path : "the configuration", cfg->sample_rate, input, f->rate,
			f->rate);
	struct gf_chain_facts facts = {.mode = GF_CHAIN_OFFLINE, .rate = f->rate, .channels = f->channels};
	int err = gf_chain_filters(cfg, &facts, &f->fs, &f->built, &f->eb);
	f->err = gf_config_failure(err);
}

int gf_offline_ctx_filters(struct gf_offline_ctx *c, uint32_t rate, uint32_t channels, const char *input,
			   struct gf_filter_set **fs, int *owned, struct gf_config_build_info *built,
			   struct gf_errbuf *eb)
{
	*owned = 0;
	const struct gf_config *cfg;
	int err = gf_offline_ctx_config(c, &cfg, eb);
	if (err)
		return err;
	pthread_mutex_lock(&c->mu);
	if (c->per_file) {
		struct gf_offline_fs_entry one = {.rate = rate, .channels = channels};
		build_fs_locked(c, &one, input);
		c->cfg->program_file = NULL;
		pthread_mutex_unlock(&c->mu);
		if (one.err)
			*eb = one.eb;
		*fs = one.fs;
		*built = one.built;
		*owned = one.err == 0;
		return one.err;
	}
	struct gf_offline_fs_entry *f = find_fs(c, rate, channels);
	if (!f && c->n_fs < GF_OFFLINE_MAX_KEYS) {
		f = &c->fs[c->n_fs++];
		*f = (struct gf_offline_fs_entry){.rate = rate, .channels = channels};
		build_fs_locked(c, f, input);
	}
	if (!f) {
		/* Past the cache's size a shape is designed for this file alone; lanes keep theirs. */
		pthread_mutex_unlock(&c->mu);
		gf_errbuf_set(eb,
			      "more than %u different (sample rate, channels) in one run: split the batch",
			      GF_OFFLINE_MAX_KEYS);
		return GF_E_CONFIG;
	}
	err = f->err;
	if (err)
		*eb = f->eb;
	*fs = f->fs;
	*built = f->built;
	pthread_mutex_unlock(&c->mu);
	return err;
}

int gf_offline_ctx_suppressor(struct gf_offline_ctx *c, const char *input, const struct gf_chain_facts *f,
			      const struct gf_engine *e, struct gf_suppress_bank **out, struct gf_errbuf *eb)
{
	pthread_mutex_lock(&c->mu); /* program_file is the configuration's, shared by the lanes */
	c->cfg->program_file = input;
	int err = gf_chain_suppressor(c->cfg, f, e, out, eb);
	c->cfg->program_file = NULL;
	pthread_mutex_unlock(&c->mu);
	return err;
}

void gf_offline_lane_init(struct gf_offline_lane *l, struct gf_offline_ctx *c, int gpu_index,
			  enum gf_backend_kind backend)
{
	memset(l, 0, sizeof(*l));
	l->ctx = c;
	l->gpu_index = gpu_index;
	l->backend = backend;
}

void gf_offline_lane_free(struct gf_offline_lane *l)
{
	for (uint32_t i = 0; i < l->n_eng; i++)
		gf_engine_free(l->eng[i].engine);
	l->n_eng = 0;
	gf_offline_pipeline_free(&l->pipe);
}

/* A power of two when chosen here: stripes then start at partition edges (offline_stripe.c). */
static uint32_t pick_chunk_frames(const struct gf_offline_opts *o, uint32_t channels)
{
	uint32_t f = o->chunk_frames ? o->chunk_frames : GF_OFFLINE_CHUNK_FRAMES;
	uint32_t cap = MAX_CHUNK_BYTES / (channels * (uint32_t)sizeof(float));
	if (!o->chunk_frames)
		while (f > cap && f > 1024)
			f /= 2;
	return f;
}

static int make_engine(struct gf_offline_lane *l, const struct gf_filter_set *fs, uint32_t channels,
		       struct gf_offline_engine_entry *en, struct gf_errbuf *eb)
{
	const struct gf_config *cfg = l->ctx->cfg;
	en->fs = fs;
	en->chunk_frames = pick_chunk_frames(l->ctx->o, channels);
	pthread_mutex_lock(&l->ctx->mu);
	uint64_t job_samples = l->ctx->weigh_cost && l->ctx->job_known ? l->ctx->job_samples : 0;
	uint32_t job_lanes = l->ctx->job_lanes ? l->ctx->job_lanes : 1;
	pthread_mutex_unlock(&l->ctx->mu);
	/* The CPU's threads for auto's weighing: the lanes, and the stripes of each file. */
	struct gf_offline_stripes st;
	gf_offline_stripe_plan(job_samples / channels / job_lanes, fs->taps, channels, en->chunk_frames,
			       l->ctx->stripe_max, &st);
	struct gf_chain_facts f = {
		.mode = GF_CHAIN_OFFLINE,
		.channels = channels,
		.max_block = en->chunk_frames,
		.backend = l->backend,
		.gpu_index = l->gpu_index,
		.job_samples = job_samples,
		.job_cpu_threads = job_lanes * st.threads,
	};
	struct gf_engine_params ep;
	gf_chain_engine_params(cfg, &f, fs->taps, &ep);
	en->params = ep;
	en->params.backend = GF_BACKEND_CPU;
	en->params.job_samples = 0;
	struct gf_errbuf eeb = {{0}};
	int err = gf_engine_new(&en->engine, &ep, fs, &eeb);
	if (err)
		gf_errbuf_set(eb, "cannot start the engine: %s", eeb.msg[0] ? eeb.msg : gf_strerror(err));
	return err;
}

int gf_offline_lane_engine(struct gf_offline_lane *l, const struct gf_filter_set *fs, uint32_t channels,
			   struct gf_engine **e, uint32_t *chunk_frames, const struct gf_engine_params **cpu,
			   struct gf_errbuf *eb)
{
	struct gf_offline_engine_entry *en = NULL;
	for (uint32_t i = 0; i < l->n_eng && !en; i++)
		if (l->eng[i].fs == fs)
			en = &l->eng[i];
	if (en) {
		int err = gf_engine_reset(en->engine, eb);
		if (err) {
			gf_offline_lane_drop(l, fs);
			en = NULL;
		}
	}
	if (!en) {
		uint32_t slot = l->n_eng;
		if (slot == GF_OFFLINE_MAX_KEYS) { /* full: replace the least recently used */
			slot = 0;
			for (uint32_t i = 1; i < l->n_eng; i++)
				if (l->eng[i].last_use < l->eng[slot].last_use)
					slot = i;
			gf_engine_free(l->eng[slot].engine);
			l->n_eng--; /* counted again below */
		}
		l->n_eng++;
		en = &l->eng[slot];
		memset(en, 0, sizeof(*en));
		int err = make_engine(l, fs, channels, en, eb);
		if (err) {
			l->eng[slot] = l->eng[l->n_eng - 1];
			l->n_eng--;
			return err;
		}
	}
	en->last_use = ++l->uses;
	*e = en->engine;
	*chunk_frames = en->chunk_frames;
	*cpu = &en->params;
	return 0;
}

void gf_offline_lane_drop(struct gf_offline_lane *l, const struct gf_filter_set *fs)
{
	for (uint32_t i = 0; i < l->n_eng; i++) {
		if (l->eng[i].fs != fs)
			continue;
		gf_engine_free(l->eng[i].engine);
		l->eng[i] = l->eng[--l->n_eng];
		return;
	}
}
