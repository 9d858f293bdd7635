/*
 * One block through the chain (src/chain/chain_run.h): the engine's
 * output scaled by the gain stage and metered on both sides; the suppressor
 * after the engine, a muted block (NaN input) a gap to it, as the live worker
 * and the offline pipeline both need; offline (retry) a failing backend call
 * redone on the CPU so the output stays exact, live (no retry) muted and
 * returned; the ring-out (no input) the engine's flush.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain_run.h"
#include "testutil.h"

#define CH 2u
#define BLOCK 64u
#define BLOCKS 12u
#define FRAMES (BLOCK * BLOCKS)
#define RATE 48000u
/* The suppressor's run: many of its frames (24 ms at most), the block at MUTED holding a NaN. */
#define SUP_BLOCKS 400u
#define SUP_FRAMES (BLOCK * SUP_BLOCKS)
#define MUTED 150u

static uint64_t rng = 0x51ab1e;

static float peak(const float *x, uint32_t frames, uint32_t ch)
{
	float m = 0.0f;
	for (uint32_t i = 0; i < frames; i++)
		m = fabsf(x[(size_t)i * CH + ch]) > m ? fabsf(x[(size_t)i * CH + ch]) : m;
	return m;
}

/* The gain stage last: the output is the convolution at half gain, each side metered. */
static void gain_last(void)
{
	struct gf_filter_set *fs = gf_test_random_filter(CH, 63, &rng);
	struct gf_errbuf eb = {{0}};
	struct gf_gain_stage *g = NULL;
	CHECK_OK_EB(gf_gain_stage_new(&g, CH, RATE, 0.5f, 0, &eb), &eb);
	struct gf_chain_run c = {.engine = gf_test_cpu_engine(CH, BLOCK, 0, 0, GF_ALGO_AUTO, 0, fs),
				 .gain = g,
				 .in_channels = CH,
				 .out_channels = CH};
	float *x = gf_test_noise((size_t)FRAMES * CH, &rng), *y = malloc((size_t)FRAMES * CH * sizeof(float));
	CHECK(y);
	for (uint32_t b = 0; b < BLOCKS; b++) {
		size_t off = (size_t)b * BLOCK * CH;
		int sup_err = -1;
		CHECK_OK(gf_chain_process(&c, x + off, x + off, y + off, BLOCK, 0, &sup_err));
		CHECK(sup_err == 0);
	}
	double *r = gf_test_reference_fs(x, FRAMES, CH, fs);
	for (size_t i = 0; i < (size_t)FRAMES * CH; i++)
		r[i] *= 0.5;
	double err = gf_test_rel_l2_frames(y, r, 0, FRAMES, CH);
	CHECK(err < 1e-6);
	static struct gf_gain_levels lv;
	struct gf_gain_reader rd = {0};
	CHECK_OK(gf_gain_stage_levels(g, GF_GAIN_READER_STATUS, &rd, &lv));
	CHECK(lv.frames == FRAMES && lv.capture_peak[0] == peak(x, FRAMES, 0) &&
	      lv.playback_peak[1] == peak(y, FRAMES, 1));
	printf("gain last: rel L2 %.2e against half the reference, meters on both sides\n", err);
	gf_gain_reader_free(&rd);
	gf_engine_free(c.engine);
	gf_gain_stage_free(g);
	gf_filter_set_free(fs);
	free(x);
	free(y);
	free(r);
}

static struct gf_suppress_bank *bank(void)
{
	static const struct gf_suppress_params p = {.reduction_db = GF_SUPPRESS_DEFAULT_REDUCTION_DB};
	const struct gf_suppress_params *per[CH] = {&p, &p};
	struct gf_suppress_bank *b = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_suppress_bank_new(per, CH, RATE, &b, &eb), &eb);
	return b;
}

/* The engine then the suppressor by hand, a muted block given to it as @p gap or as audio. */
static void by_hand(const struct gf_filter_set *fs, const float *x, float *y, int as_gap)
{
	struct gf_engine *e = gf_test_cpu_engine(CH, BLOCK, 0, 0, GF_ALGO_AUTO, 0, fs);
	struct gf_suppress_bank *s = bank();
	for (uint32_t b = 0; b < SUP_BLOCKS; b++) {
		size_t off = (size_t)b * BLOCK * CH;
		gf_engine_process(e, x + off, y + off, BLOCK);
		if (as_gap && gf_engine_muted(e))
			CHECK_OK(gf_suppress_bank_gap_by(s, y + off, BLOCK, 0));
		else
			CHECK_OK(gf_suppress_bank_process(s, y + off, BLOCK));
	}
	gf_suppress_bank_free(s);
	gf_engine_free(e);
}

/* The suppressor after the engine; the block holding NaN is muted and a gap to it. */
static void suppressor_gap(void)
{
	struct gf_filter_set *fs = gf_test_random_filter(CH, 31, &rng);
	float *x = gf_test_noise((size_t)SUP_FRAMES * CH, &rng);
	x[(size_t)MUTED * BLOCK * CH + 5] = NAN;
	size_t bytes = (size_t)SUP_FRAMES * CH * sizeof(float);
	float *y = malloc(bytes), *gap = malloc(bytes), *audio = malloc(bytes);
	CHECK(y && gap && audio);
	struct gf_chain_run c = {.engine = gf_test_cpu_engine(CH, BLOCK, 0, 0, GF_ALGO_AUTO, 0, fs),
				 .suppress = bank(),
				 .in_channels = CH,
				 .out_channels = CH};
	for (uint32_t b = 0; b < SUP_BLOCKS; b++) {
		size_t off = (size_t)b * BLOCK * CH;
		CHECK(gf_chain_process(&c, x + off, NULL, y + off, BLOCK, 0, NULL) == 0 || b == MUTED);
	}
	by_hand(fs, x, gap, 1);
	by_hand(fs, x, audio, 0);
	CHECK(!gf_test_all_zero(y, (size_t)SUP_FRAMES * CH)); /* past the suppressor's latency */
	CHECK(memcmp(y, gap, bytes) == 0);
	CHECK(memcmp(y, audio, bytes) != 0); /* the gap is seen: silence as audio is another output */
	printf("suppressor after the engine: a muted block is a gap to it\n");
	gf_suppress_bank_free(c.suppress);
	gf_engine_free(c.engine);
	gf_filter_set_free(fs);
	free(x);
	free(y);
	free(gap);
	free(audio);
}

/* Backend call 5 fails: offline (retry) redone exactly, live muted and returned; then a flush. */
static void retry(int offline)
{
	struct gf_filter_set *fs = gf_test_random_filter(CH, 127, &rng);
	CHECK(setenv("GPUFIR_FAULT_PROCESS_AFTER", "5", 1) == 0);
	struct gf_chain_run c = {.engine = gf_test_cpu_engine(CH, BLOCK, 0, 0, GF_ALGO_AUTO, offline, fs),
				 .retry = offline};
	CHECK(unsetenv("GPUFIR_FAULT_PROCESS_AFTER") == 0);
	float *x = gf_test_noise((size_t)FRAMES * CH, &rng), *y = malloc((size_t)FRAMES * CH * sizeof(float));
	CHECK(y);
	memset(x + (size_t)(BLOCKS - 2) * BLOCK * CH, 0, (size_t)2 * BLOCK * CH * sizeof(float));
	for (uint32_t b = 0; b < BLOCKS; b++) {
		size_t off = (size_t)b * BLOCK * CH;
		const float *in = b >= BLOCKS - 2 ? NULL : x + off; /* the last two: the ring-out */
		int err = gf_chain_process(&c, in, NULL, y + off, BLOCK, 0, NULL);
		if (!offline && b == 5) {
			CHECK(err == GF_E_CUDA && gf_test_all_zero(y + off, (size_t)BLOCK * CH));
			gf_engine_reap(c.engine);
			continue;
		}
		CHECK_OK(err);
	}
	double *r = gf_test_reference_fs(x, FRAMES, CH, fs);
	double err = gf_test_rel_l2_frames(y, r, offline ? 0 : 7 * BLOCK, FRAMES, CH);
	printf("%s: rel L2 %.2e %s, the ring-out flushed\n", offline ? "offline" : "live", err,
	       offline ? "over the whole file (the failed call redone)" : "after the muted block");
	CHECK(err < 1e-6);
	gf_engine_free(c.engine);
	gf_filter_set_free(fs);
	free(x);
	free(y);
	free(r);
}

int main(void)
{
	gain_last();
	suppressor_gap();
	retry(1);
	retry(0);
	return 0;
}
