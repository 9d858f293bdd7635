/*
 * Auto for a stream (src/engine/cost/cost_live.c): the decision with injected
 * figures (the lower p99 per block, the GPU only when clearly lower); the
 * CPU's model ruling the CPU out where the longest filter a swap may bring
 * would not fit its share of a period (no timing, no GPU needed); a measured
 * pick where no GPU is usable (the CPU, saying why) and its reuse for the
 * same shape; and an engine built for a stream under AUTO.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cost.h"
#include "engine.h"
#include "error.h"
#include "filter_set.h"
#include "testutil.h"

static void test_choose(void)
{
	CHECK(gf_cost_live_choose(6.0, 30.0) == GF_BACKEND_CPU);
	CHECK(gf_cost_live_choose(30.0, 6.0) == GF_BACKEND_CUDA);
	/* Close figures keep the CPU: the GPU must be below the margin. */
	CHECK(gf_cost_live_choose(10.0, 10.0 * GF_COST_LIVE_GPU_MARGIN) == GF_BACKEND_CPU);
	CHECK(gf_cost_live_choose(10.0, 10.0 * GF_COST_LIVE_GPU_MARGIN - 0.01) == GF_BACKEND_CUDA);
	/* A backend that cannot run the shape (-1) loses. */
	CHECK(gf_cost_live_choose(50.0, -1.0) == GF_BACKEND_CPU);
	CHECK(gf_cost_live_choose(-1.0, 50.0) == GF_BACKEND_CUDA);
	printf("  choose: ok\n");
}

static struct gf_filter_set *taps_set(uint32_t channels, uint32_t taps, uint64_t *seed)
{
	struct gf_filter_set *fs;
	CHECK_OK(gf_filter_set_new(&fs, channels, taps));
	for (uint32_t c = 0; c < channels; c++)
		gf_test_fill_noise(gf_filter_set_channel(fs, c), taps, seed);
	return fs;
}

static struct gf_engine_params stream_params(uint32_t channels, uint32_t block, uint32_t max_taps)
{
	struct gf_engine_params p = {.backend = GF_BACKEND_AUTO,
				     .channels = channels,
				     .max_block = block,
				     .max_taps = max_taps,
				     .live_rate = 48000};
	return p;
}

/* 64 channels that a swap may bring to 1048575 taps: the CPU's model alone rules it out. */
static void test_model_rules_cpu_out(uint64_t *seed)
{
	struct gf_filter_set *fs = taps_set(64, 255, seed);
	struct gf_engine_params p = stream_params(64, 64, 1048575);
	char why[320];
	double t0 = gf_now_s();
	CHECK(gf_cost_live_pick(&p, fs, why, sizeof(why)) == GF_BACKEND_CUDA);
	printf("  64 ch, max_taps 1048575: %s (%.3f s)\n", why, gf_now_s() - t0);
	CHECK(strstr(why, "model") != NULL);
	CHECK(gf_now_s() - t0 < 0.05); /* decided by the model: nothing was timed */
	gf_filter_set_free(fs);
}

/* Both backends timed where a GPU is usable, the pick following the figures;
 * where CUDA cannot run (no GPU, a CPU-only build) the CPU, untimed. */
static void test_measured_pick(uint64_t *seed)
{
	struct gf_filter_set *fs = taps_set(2, 4095, seed);
	struct gf_engine_params p = stream_params(2, 64, 4095);
	char why[320];
	enum gf_backend_kind pick = gf_cost_live_pick(&p, fs, why, sizeof(why));
	printf("  2 ch, 4095 taps, 64 frames: %s\n", why);
	double cpu, gpu;
	if (sscanf(why, "%*s p99 of a 64-frame block: CPU %lf us, CUDA %lf us", &cpu, &gpu) == 2)
		CHECK(cpu > 0 && gpu > 0 &&
		      pick == gf_cost_live_choose(cpu, gpu)); /* both ran: a GPU is here */
	else
		CHECK(pick == GF_BACKEND_CPU && strncmp(why, "cpu: the GPU cannot run this stream", 35) == 0);
	double t0 = gf_now_s();
	CHECK(gf_cost_live_pick(&p, fs, why, sizeof(why)) == pick);
	CHECK(strstr(why, "measured earlier") != NULL && gf_now_s() - t0 < 0.01);
	gf_filter_set_free(fs);
}

/* An engine for a stream under AUTO filters exactly, whichever backend won. */
static void test_engine(uint64_t *seed)
{
	struct gf_filter_set *fs = taps_set(2, 255, seed);
	struct gf_engine_params p = stream_params(2, 64, 255);
	struct gf_engine *e;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_engine_new(&e, &p, fs, &eb), &eb);
	float x[64 * 2], y[64 * 2];
	gf_test_fill_noise(x, 64 * 2, seed);
	CHECK_OK(gf_engine_process(e, x, y, 64));
	for (int i = 0; i < 2; i++) { /* first block: y[n] = sum_k h[k] x[n-k] from zero history */
		double ref = 0;
		for (int k = 0; k <= 10; k++)
			ref += (double)gf_filter_set_channel(fs, i)[k] * x[(10 - k) * 2 + i];
		CHECK(fabs(ref - y[10 * 2 + i]) < 1e-5);
	}
	printf("  engine: %s\n", gf_engine_describe(e));
	gf_engine_free(e);
	gf_filter_set_free(fs);
}

int main(void)
{
	uint64_t seed = gf_test_seed("test_cost_live");
	test_choose();
	test_model_rules_cpu_out(&seed);
	test_measured_pick(&seed);
	test_engine(&seed);
	printf("test_cost_live: ok\n");
	return 0;
}
