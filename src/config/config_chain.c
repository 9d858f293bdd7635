/*
 * The chain's builder (chain.h): what a parsed config means to the
 * engine, the suppressor bank and the gain stage of one stream, written once
 * for the daemon, offline runs and the filter tools.
 */
#include "chain.h"

#include <math.h>
#include <string.h>

#include "gain_stage.h"

int gf_chain_filters(const struct gf_config *c, const struct gf_chain_facts *f, struct gf_filter_set **fs,
		     struct gf_config_build_info *info, struct gf_errbuf *eb)
{
	int err = gf_config_build_ex(c, f->rate, f->channels, fs, info, eb);
	if (!err && gf_filter_set_check_finite(*fs) != 0) {
		err = GF_E_NONFINITE;
		gf_errbuf_set(eb, "%s: filter has NaN or Inf coefficients", c->path ? c->path : "config");
	}
	if (err) {
		gf_filter_set_free(*fs);
		*fs = NULL;
	}
	return err;
}

/* The live stream's rate: the config's, else the default. */
static uint32_t live_rate(const struct gf_config *c)
{
	return c->sample_rate ? c->sample_rate : GF_CHAIN_DEFAULT_RATE;
}

uint32_t gf_chain_deadline_us(const struct gf_config *c)
{
	if (c->gpu_deadline_ms > 0)
		return (uint32_t)lround(c->gpu_deadline_ms * 1000.0);
	/* Two block periods: one is the block's own budget, the second the slack
	 * a late block may still use before it costs an underrun. */
	uint64_t us = 2000000ull * c->block_frames / live_rate(c);
	return us > 0 ? (uint32_t)us : 1;
}

/* A stream's blocks: swaps crossfade, each block waits until its deadline. */
static void live_params(const struct gf_config *c, uint32_t taps, struct gf_engine_params *p)
{
	p->max_block = c->block_frames;
	p->max_taps = c->max_taps			 ? c->max_taps
		      : taps > GF_CHAIN_DEFAULT_MAX_TAPS ? taps
							 : GF_CHAIN_DEFAULT_MAX_TAPS;
	p->crossfade_frames = (uint32_t)lround(c->crossfade_ms * c->sample_rate / 1000.0);
	p->deadline_us = gf_chain_deadline_us(c);
	p->live_rate = live_rate(c);
}

void gf_chain_engine_params(const struct gf_config *c, const struct gf_chain_facts *f, uint32_t taps,
			    struct gf_engine_params *p)
{
	memset(p, 0, sizeof(*p));
	p->backend = f->backend != GF_BACKEND_AUTO ? f->backend : c->backend;
	p->algo = c->algo;
	p->channels = f->channels;
	p->gpu_index = f->gpu_index >= 0 ? f->gpu_index : c->gpu_index;
	p->gpu_path = c->gpu_path;
	if (f->mode == GF_CHAIN_LIVE) {
		live_params(c, taps, p);
		return;
	}
	p->max_block = f->max_block;
	p->retry = 1;			 /* a backend failing mid-file: the chunk is redone on the CPU */
	p->job_samples = f->job_samples; /* auto weighs the CPU against CUDA's start-up */
	p->job_cpu_threads = f->job_cpu_threads;
}

int gf_chain_suppressor(const struct gf_config *c, const struct gf_chain_facts *f, const struct gf_engine *e,
			struct gf_suppress_bank **out, struct gf_errbuf *eb)
{
	/* On the GPU where the engine runs (suppress_bank.h): its waits bounded by the block's
	 * deadline live; offline a hop waits GF_SUPPRESS_GPU_HOP_WAIT_NS at most, and the CPU
	 * channels spread over the threads the FIR leaves to it. */
	struct gf_suppress_bank_opts so = {
		.gpu = e && strcmp(gf_engine_backend_name(e), "cuda") == 0,
		.gpu_index = f->gpu_index >= 0 ? f->gpu_index : c->gpu_index,
	};
	if (f->mode == GF_CHAIN_LIVE)
		so.deadline_us = gf_chain_deadline_us(c);
	else
		so.threads = f->threads;
	return gf_config_suppress_new_ex(c, f->rate, f->out_channels, e ? &so : NULL, out, eb);
}

void gf_chain_gain_shape(const struct gf_config *c, uint32_t in_channels, uint32_t out_channels,
			 uint32_t *channels, uint32_t *rate)
{
	/* Metered on both sides: the capture's channels and the playback's (a mixer's M). */
	uint32_t ch = in_channels > out_channels ? in_channels : out_channels;
	*channels = ch < GF_GAIN_MAX_CHANNELS ? ch : GF_GAIN_MAX_CHANNELS;
	*rate = live_rate(c);
}
