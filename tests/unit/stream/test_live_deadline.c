/*
 * One deadline per block on the live worker, without a device or a GPU: the
 * test plays the duplex callback itself while the real worker runs an
 * engine on a stand-in GPU backend (fake_backend.c) and, after it, a
 * suppressor bank whose GPU group is a stand-in too
 * (GPUFIR_FAULT_SUPPRESS_FAKE_GPU). Both are given the same deadline D, as
 * the daemon does (gpu_deadline_ms). In one block the engine's answer takes
 * 3/4 of D and the suppressor's hop is not back by the deadline
 * (GPUFIR_FAULT_SUPPRESS_GPU_LATE_AFTER): that block must take no longer than
 * D (plus scheduling slack), not 3/4 D plus a second D for the suppressor;
 * the suppressor's channels of that block are muted and counted late, the
 * suppressor stays on the GPU (a late hop is no failure), the engine's answer
 * was in time (no engine error), and the stream carries sound again after it.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/fake_backend.h"
#include "engine.h"
#include "engine_test.h"
#include "error.h"
#include "live_internal.h"
#include "liveutil.h"
#include "suppress_bank.h"
#include "testutil.h"

#define RATE 48000u
#define CH 8u /* GF_SUPPRESS_GPU_MIN_CHANNELS: the whole stream is the GPU group */
#define B 64u
#define D_US 40000u		  /* the deadline of the engine and of the suppressor */
#define ENGINE_NS (30000000ull)	  /* the engine's answer in the slow block: 3/4 of D */
#define SLACK_US 15000.0	  /* scheduling on a loaded machine; the old bound was D more */
#define SLOW_BLOCK 40u		  /* > (the suppressor's 1152 frames + the stream's latency) / B */
#define BLOCKS (SLOW_BLOCK + 60u) /* the stream's latency after it, and more */
#define FRAMES (BLOCKS * B)

static struct gf_engine *make_engine(void)
{
	struct gf_filter_set *fs;
	CHECK_OK(gf_filter_set_new(&fs, CH, 32));
	for (uint32_t c = 0; c < CH; c++)
		gf_filter_set_channel(fs, c)[0] = 1.0f;
	struct gf_engine_params p = {.backend = GF_BACKEND_CUDA,
				     .channels = CH,
				     .max_block = B,
				     .max_taps = 32,
				     .deadline_us = D_US};
	struct gf_engine *e = NULL;
	struct gf_errbuf eb = {{0}};
	gf_engine_test_backends(&fake_backend, NULL);
	CHECK_OK_EB(gf_engine_new(&e, &p, fs, &eb), &eb);
	gf_engine_test_backends(NULL, NULL);
	CHECK(strcmp(gf_engine_backend_name(e), "fakegpu") == 0);
	gf_filter_set_free(fs);
	return e;
}

/* All CH channels one group on the stand-in GPU, with the engine's deadline; its call SLOW_BLOCK
 * (one call a block) back only after its deadline. */
static struct gf_suppress_bank *make_bank(void)
{
	static const struct gf_suppress_params p = {.reduction_db = 18.0};
	const struct gf_suppress_params *per[CH];
	for (uint32_t c = 0; c < CH; c++)
		per[c] = &p;
	char n[16];
	snprintf(n, sizeof(n), "%u", SLOW_BLOCK);
	CHECK(setenv("GPUFIR_FAULT_SUPPRESS_FAKE_GPU", "1", 1) == 0);
	CHECK(setenv("GPUFIR_FAULT_SUPPRESS_GPU_LATE_AFTER", n, 1) == 0);
	struct gf_suppress_bank_opts o = {.gpu = 1, .gpu_index = 4096, .deadline_us = D_US};
	struct gf_suppress_bank *b = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_suppress_bank_new_ex(per, CH, RATE, &o, &b, &eb), &eb);
	CHECK(unsetenv("GPUFIR_FAULT_SUPPRESS_FAKE_GPU") == 0 &&
	      unsetenv("GPUFIR_FAULT_SUPPRESS_GPU_LATE_AFTER") == 0);
	CHECK(gf_suppress_bank_gpu_channels(b) == CH);
	return b;
}

static void play_block(struct gf_live *l, const float *x, float *y, uint32_t k)
{
	gf_live_duplex_cb(x + (size_t)k * B * CH, y + (size_t)k * B * CH, B, NULL, 0, l);
	gf_test_live_wait_idle(l, B);
}

/* Output frames [from, to) all zero. */
static int silent(const float *y, uint32_t from, uint32_t to)
{
	return gf_test_all_zero(y + (size_t)from * CH, (size_t)(to - from) * CH);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	uint64_t rng = gf_test_seed("test_live_deadline");
	float *x = gf_test_noise((size_t)FRAMES * CH, &rng), *y = calloc((size_t)FRAMES * CH, sizeof(float));
	CHECK(x && y);
	for (size_t i = 0; i < (size_t)FRAMES * CH; i++)
		x[i] *= 0.1f;
	fake_reset();
	struct gf_engine *e = make_engine();
	struct gf_suppress_bank *bank = make_bank();
	struct gf_live *l;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_live_new_detached(&l, RATE, CH, B, 1, NULL, e, &eb), &eb);
	gf_live_set_suppress(l, bank);
	CHECK_OK_EB(gf_live_start(l, &eb), &eb);

	struct gf_live_stats s;
	for (uint32_t k = 0; k < SLOW_BLOCK; k++)
		play_block(l, x, y, k);
	gf_live_get_stats(l, &s); /* the window of block times starts after it */
	CHECK(s.engine_errors == 0 && gf_suppress_bank_gpu_failures(bank) == 0);
	uint32_t lat = s.latency_frames;

	atomic_store(&g_fake.base_ns, ENGINE_NS);
	play_block(l, x, y, SLOW_BLOCK);
	atomic_store(&g_fake.base_ns, 0);
	gf_live_get_stats(l, &s);
	double took = s.block_us_max;
	printf("the block: engine %.1f ms of a %.1f ms deadline, then a suppressor hop late: %.1f ms "
	       "in all (bound %.1f ms; one deadline more for the suppressor: %.1f ms)\n",
	       ENGINE_NS / 1e6, D_US / 1e3, took / 1e3, (D_US + SLACK_US) / 1e3,
	       (ENGINE_NS / 1e3 + D_US) / 1e3);
	CHECK(took >= ENGINE_NS / 1e3 && took <= D_US + SLACK_US);
	CHECK(s.late_blocks >= 1 && s.engine_errors == 0);
	CHECK(gf_suppress_bank_gpu_late(bank) == 1 && gf_suppress_bank_gpu_failures(bank) == 0 &&
	      gf_suppress_bank_gpu_channels(bank) == CH);

	for (uint32_t k = SLOW_BLOCK + 1; k < BLOCKS; k++)
		play_block(l, x, y, k);
	gf_live_get_stats(l, &s);
	gf_live_stop(l);
	gf_live_free(l);
	/* Played at the stream's latency: sound before the slow block, its block muted, sound again
	 * right after it (the suppressor stayed on the GPU: no latency of a restart). */
	uint32_t at = SLOW_BLOCK * B + lat;
	CHECK(!silent(y, at - B, at) && silent(y, at, at + B));
	CHECK(!silent(y, at + B, at + 2 * B) && !silent(y, FRAMES - 4 * B, FRAMES));
	CHECK(s.engine_errors == 0 && gf_suppress_bank_gpu_failures(bank) == 0 &&
	      gf_suppress_bank_gpu_channels(bank) == CH);
	printf("that block muted on every channel, counted late, the suppressor still on the GPU "
	       "(0 failures), sound again the block after; no engine error\n");
	gf_suppress_bank_free(bank);
	gf_engine_free(e);
	free(x);
	free(y);
	printf("test_live_deadline: ok\n");
	return 0;
}
