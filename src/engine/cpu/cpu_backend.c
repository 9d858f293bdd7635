/*
 * The CPU backend: one function table over two convolvers that compute the
 * same function, direct (short filters, double accumulation) and partitioned
 * FFT (long filters). AUTO picks the cheaper by the cost models. Both run
 * a mixer (filter_set.h): N inputs to M outputs, the FFT transforming each
 * input once and each output once.
 */
#include <fftw3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cpu_direct.h"
#include "cpu_fft.h"
#include "cpu_tune.h"

struct cpu_inst {
	enum gf_algo algo; /* DIRECT or FFT, never AUTO */
	struct gf_cpu_direct *direct;
	struct gf_cpu_fft *fft;
	uint32_t inputs; /* channels of submit()'s frames */
	uint32_t max_block;
	float *in;	 /* submit()'s input, max_block frames: computed in finish() */
	uint32_t frames; /* frames submitted, 0 = none */
	char desc[192];
};

static enum gf_algo choose_algo(const struct gf_engine_params *p, const struct gf_filter_set *fs)
{
	if (p->algo != GF_ALGO_AUTO)
		return p->algo;
	double fft_cost;
	uint32_t taps = fs->taps;
	gf_cpu_fft_choose_partition(taps, fs->channels, p->max_block, &fft_cost);
	return gf_cpu_direct_cost(taps) <= fft_cost ? GF_ALGO_DIRECT : GF_ALGO_FFT;
}

static void cpu_destroy(void *inst)
{
	struct cpu_inst *ci = inst;
	if (!ci)
		return;
	gf_cpu_direct_free(ci->direct);
	gf_cpu_fft_free(ci->fft);
	free(ci->in);
	free(ci);
}

static int cpu_create(const struct gf_engine_params *p, const struct gf_filter_set *fs, void **inst,
		      struct gf_errbuf *eb)
{
	*inst = NULL;
	if (gf_filter_set_inputs(fs) != p->channels || p->max_block == 0 || fs->taps == 0 ||
	    gf_filter_set_check_paths(fs)) {
		gf_errbuf_set(eb, "cpu backend: invalid parameters");
		return GF_E_INVAL;
	}
	struct cpu_inst *ci = calloc(1, sizeof(*ci));
	if (!ci)
		return GF_E_NOMEM;
	ci->inputs = p->channels;
	ci->max_block = p->max_block;
	ci->algo = choose_algo(p, fs);
	ci->in = malloc((size_t)p->max_block * p->channels * sizeof(float));
	if (!ci->in) {
		free(ci);
		return GF_E_NOMEM;
	}
	const char *simd = gf_cpu_use_avx2() ? "AVX2+FMA" : "portable";
	int err;
	if (ci->algo == GF_ALGO_DIRECT) {
		err = gf_cpu_direct_new(&ci->direct, fs, p->max_block, eb);
		snprintf(ci->desc, sizeof(ci->desc),
			 "CPU, direct convolution in double, %s kernels, single-threaded", simd);
	} else {
		struct gf_cpu_tuning t;
		gf_cpu_get_tuning(&t);
		err = gf_cpu_fft_new(&ci->fft, fs, p->max_block, t.fft_partition, eb);
		if (!err)
			snprintf(ci->desc, sizeof(ci->desc),
				 "CPU, %s single precision, zero-latency overlap-save with %u-frame "
				 "partitions, "
				 "%s kernels, single-threaded",
				 fftwf_version, gf_cpu_fft_partition(ci->fft), simd);
	}
	if (err) {
		cpu_destroy(ci);
		return err;
	}
	*inst = ci;
	return 0;
}

static int cpu_prime(void *inst, const float *history, uint32_t frames)
{
	struct cpu_inst *ci = inst;
	if (ci->direct)
		gf_cpu_direct_prime(ci->direct, history, frames);
	else
		gf_cpu_fft_prime(ci->fft, history, frames);
	return 0;
}

/* The work is done in finish(): submit() only keeps a copy of the input, so
 * the caller may reuse its buffer (and a crossfade submits both instances
 * before computing either). */
static int cpu_submit(void *inst, const float *in, uint32_t frames)
{
	struct cpu_inst *ci = inst;
	if (frames == 0 || frames > ci->max_block)
		return GF_E_INVAL;
	memcpy(ci->in, in, (size_t)frames * ci->inputs * sizeof(float));
	ci->frames = frames;
	return 0;
}

/* Computing is not waiting: the deadline bounds waits only, so it is unused. */
static int cpu_finish(void *inst, float *out, uint64_t deadline_ns)
{
	struct cpu_inst *ci = inst;
	(void)deadline_ns;
	uint32_t frames = ci->frames;
	if (frames == 0)
		return GF_E_INVAL;
	ci->frames = 0;
	if (ci->direct)
		gf_cpu_direct_process(ci->direct, ci->in, out, frames);
	else
		gf_cpu_fft_process(ci->fft, ci->in, out, frames);
	return 0;
}

static const char *cpu_algo_name(const void *inst)
{
	const struct cpu_inst *ci = inst;
	return ci->algo == GF_ALGO_DIRECT ? "direct" : "fft";
}

static const char *cpu_describe(const void *inst)
{
	const struct cpu_inst *ci = inst;
	return ci->desc;
}

const struct gf_backend_ops gf_cpu_backend = {
	.name = "cpu",
	.create = cpu_create,
	.prime = cpu_prime,
	.submit = cpu_submit,
	.finish = cpu_finish,
	.destroy = cpu_destroy,
	.algo_name = cpu_algo_name,
	.describe = cpu_describe,
};
