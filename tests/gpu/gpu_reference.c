/*
 * test_gpu_engine's yardstick: filters of decaying noise, streaming a signal
 * through an instance in calls of a pattern, and the error against the
 * double-precision reference (sampled at chosen frames for long filters).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "gpu_cases.h"
#include "testutil.h"

struct gf_filter_set *make_taps(uint32_t channels, uint32_t taps)
{
	struct gf_filter_set *fs;
	CHECK_OK(gf_filter_set_new(&fs, channels, taps));
	for (uint32_t c = 0; c < channels; c++)
		gf_test_fill_decaying_taps(gf_filter_set_channel(fs, c), taps, &g_rng);
	return fs;
}

static uint32_t call_size(enum pattern pat, uint32_t max_block, uint32_t left)
{
	uint32_t n = pat == FIXED  ? max_block
		     : pat == ONES ? 1
				   : 1 + (uint32_t)((gf_test_randf(&g_rng) + 1.0f) * 0.5f * (float)max_block);
	if (pat == RANDOM && gf_test_randf(&g_rng) > 0.8f)
		n = 1 + n / 16; /* plenty of small and odd calls */
	if (n > max_block)
		n = max_block;
	return n < left ? n : left;
}

void stream(const struct gf_backend_ops *ops, void *inst, const float *x, float *y, uint32_t frames,
	    uint32_t channels, uint32_t max_block, enum pattern pat)
{
	for (uint32_t done = 0; done < frames;) {
		uint32_t n = call_size(pat, max_block, frames - done);
		int err = gf_backend_process(ops, inst, x + (size_t)done * channels,
					     y + (size_t)done * channels, n);
		if (err)
			fprintf(stderr, "process(%u frames at %u) failed: %s\n", n, done, gf_strerror(err));
		CHECK_OK(err);
		done += n;
	}
}

/* Reference at selected output frames only (long filters): the last frames,
 * the frames around the filter length, and random ones. Returns rel L2. */
static double sparse_error(const float *x, const float *y, uint32_t frames, uint32_t channels,
			   const struct gf_filter_set *fs, uint32_t from)
{
	enum { NPICK = 1200 };
	double num = 0.0, den = 0.0;
	for (int i = 0; i < NPICK; i++) {
		uint32_t n;
		if (i < 200)
			n = frames - 1 - (uint32_t)i;
		else if (i < 300)
			n = fs->taps - 50 + (uint32_t)(i - 200);
		else
			n = (uint32_t)((gf_test_randf(&g_rng) + 1.0f) * 0.5f * (float)frames);
		if (n >= frames || n < from)
			continue;
		for (uint32_t c = 0; c < channels; c++) {
			const float *h = gf_filter_set_channel(fs, c);
			double acc = 0.0;
			uint32_t kmax = n + 1 < fs->taps ? n + 1 : fs->taps;
			for (uint32_t k = 0; k < kmax; k++)
				acc += (double)h[k] * (double)x[(size_t)(n - k) * channels + c];
			double d = (double)y[(size_t)n * channels + c] - acc;
			if (!isfinite(d))
				return INFINITY;
			num += d * d;
			den += acc * acc;
		}
	}
	return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

double error_of(const float *x, const float *y, uint32_t frames, uint32_t channels,
		const struct gf_filter_set *fs, uint32_t from)
{
	if ((double)frames * fs->taps * channels > 3e8)
		return sparse_error(x, y, frames, channels, fs, from);
	double *ref = malloc((size_t)frames * channels * sizeof(double));
	CHECK(ref);
	gf_test_reference(x, frames, channels, fs->coeffs, fs->taps, ref);
	size_t off = (size_t)from * channels;
	double e = gf_test_rel_l2(y + off, ref + off, (size_t)(frames - from) * channels);
	free(ref);
	return e;
}
