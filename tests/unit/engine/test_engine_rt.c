/*
 * RT contract of the engine on the CPU backend: process() and flush(),
 * including taking up a swap (prime) and crossfading, never allocate or free
 * memory, and never fault a page in. The program interposes the C allocator
 * (glibc) and counts calls made while the audio-path functions run; FFTW's
 * allocations go through the same functions. Page faults are the thread's
 * (getrusage): memory the engine allocated but never touched faults in on
 * first use, which where the process's memory is not locked (no mlockall
 * permission, a program hosting the engine) costs the audio thread a fault
 * per page. A late answer and the catch-up after it (muted blocks, the
 * skipped frames fed from the history) allocate nothing either. Skipped under
 * AddressSanitizer, which owns the allocator.
 */
#include <stdio.h>

#include "allocprobe.h"
#include "testutil.h"

#if !GF_ALLOC_PROBE
int main(void)
{
	gf_test_skip("allocator interposition needs glibc without AddressSanitizer");
}
#else
#include <stdlib.h>
#include <time.h>

#include "engine.h"
#include "suppress.h"

static uint64_t rng;

/* Stereo decaying taps, @p taps long. */
static struct gf_filter_set *new_taps(uint32_t taps)
{
	struct gf_filter_set *fs;
	CHECK_OK(gf_filter_set_new(&fs, 2, taps));
	gf_test_fill_decaying_taps(fs->coeffs, (size_t)2 * taps, &rng);
	return fs;
}

/* A stereo CPU engine on @p fs, and a block of noise for it (from libc, uncounted). */
static struct gf_engine *new_engine(enum gf_algo algo, const struct gf_filter_set *fs, uint32_t max_block,
				    uint32_t crossfade, float **x)
{
	struct gf_engine_params p = {.backend = GF_BACKEND_CPU,
				     .algo = algo,
				     .channels = 2,
				     .max_block = max_block,
				     .max_taps = fs->taps,
				     .crossfade_frames = crossfade};
	struct gf_engine *e;
	struct gf_errbuf eb;
	CHECK_OK_EB(gf_engine_new(&e, &p, fs, &eb), &eb);
	*x = __libc_calloc((size_t)max_block * 2, sizeof(float));
	CHECK(*x);
	gf_test_fill_noise(*x, (size_t)max_block * 2, &rng);
	return e;
}

/*
 * A fresh engine writes every block into its history ring (taps - 1 + a
 * margin frames, mirrored): the first pass over it, after a warm-up that
 * runs every code path once, must fault no page in.
 */
static void fault_case(enum gf_algo algo, uint32_t taps, uint32_t block)
{
	struct gf_filter_set *fs = new_taps(taps);
	float *x;
	struct gf_engine *e = new_engine(algo, fs, block, 0, &x);
	for (int i = 0; i < 4; i++)
		CHECK(gf_engine_process(e, x, x, block) == 0);
	const uint32_t pass = taps + 16384 + block; /* GF_ENGINE_HIST_MARGIN (engine_internal.h) */
	long before = gf_thread_faults();
	for (uint32_t done = 0; done < pass; done += block)
		CHECK(gf_engine_process(e, x, x, block) == 0);
	long faults = gf_thread_faults() - before;
	printf("%-6s taps %7u block %5u: %ld page faults over the history's first pass (%u frames)\n",
	       gf_engine_algo_name(e), taps, block, faults, pass);
	CHECK(faults == 0);
	gf_engine_free(e);
	gf_filter_set_free(fs);
	__libc_free(x);
}

static void rt_case(enum gf_algo algo, uint32_t taps, uint32_t max_block)
{
	struct gf_filter_set *fs = new_taps(taps), *fs2 = new_taps(taps / 2 + 1);
	float *x;
	struct gf_engine *e = new_engine(algo, fs, max_block, 300, &x);
	struct gf_errbuf eb;
	uint32_t goal = 2 * taps + 4 * max_block + 300;
	long faults = 0;
	for (int round = 0; round < 2; round++) {
		CHECK_OK_EB(gf_engine_swap(e, round ? fs : fs2, &eb), &eb);
		long before = gf_thread_faults(); /* round 1: every code path has run once */
		gf_alloc_probe_on();
		uint32_t done = 0;
		for (uint32_t i = 0; i < 40 || done < goal; i++) {
			uint32_t n = 1 + (uint32_t)((gf_test_randf(&rng) + 1.0f) * 0.5f * (max_block - 1));
			CHECK(gf_engine_process(e, x, x, n) == 0);
			done += n;
		}
		CHECK(gf_engine_flush(e, x, max_block) == 0);
		gf_alloc_probe_off();
		if (round == 1)
			faults = gf_thread_faults() - before;
		CHECK(!gf_engine_swap_pending(e));
		gf_engine_reap(e);
	}
	int n = gf_alloc_probe_calls();
	printf("%-6s taps %7u block %5u: %d allocator calls in process/flush, %ld page faults in a swap's "
	       "take-up and crossfade\n",
	       gf_engine_algo_name(e), taps, max_block, n, faults);
	CHECK(n == 0);
	CHECK(faults == 0);
	gf_engine_free(e);
	gf_filter_set_free(fs);
	gf_filter_set_free(fs2);
	__libc_free(x);
}

/*
 * Block 6's call completes 20 ms late (GPUFIR_FAULT_LATE_AFTER, deadline 5 ms):
 * it is muted at its deadline, blocks 7 and 8 are muted at once (its answer
 * polled), then block 9 collects it and feeds 7 and 8 from the history before
 * its own call. None of it allocates.
 */
static void late_case(enum gf_algo algo, uint32_t taps, uint32_t block)
{
	struct gf_filter_set *fs = new_taps(taps);
	CHECK(setenv("GPUFIR_FAULT_LATE_AFTER", "6", 1) == 0 && setenv("GPUFIR_FAULT_LATE_MS", "20", 1) == 0);
	struct gf_engine_params p = {.backend = GF_BACKEND_CPU,
				     .algo = algo,
				     .channels = 2,
				     .max_block = block,
				     .deadline_us = 5000};
	struct gf_engine *e;
	struct gf_errbuf eb;
	CHECK_OK_EB(gf_engine_new(&e, &p, fs, &eb), &eb);
	CHECK(unsetenv("GPUFIR_FAULT_LATE_AFTER") == 0 && unsetenv("GPUFIR_FAULT_LATE_MS") == 0);
	float *x = __libc_calloc((size_t)block * 2, sizeof(float));
	CHECK(x);
	gf_test_fill_noise(x, (size_t)block * 2, &rng);
	gf_alloc_probe_on();
	int muted = 0;
	for (int b = 0; b < 16; b++) {
		if (gf_engine_process(e, x, x, block) != 0)
			muted++;
		if (b == 8) {
			struct timespec ts = {0, 25000000}; /* the late answer is in */
			nanosleep(&ts, NULL);
		}
	}
	gf_alloc_probe_off();
	struct gf_engine_stats s;
	gf_engine_get_stats(e, &s);
	int n = gf_alloc_probe_calls();
	printf("%-6s taps %7u block %5u: a late answer, %d muted blocks and the catch-up: %d allocator "
	       "calls\n",
	       gf_engine_algo_name(e), taps, block, muted, n);
	CHECK(n == 0 && muted == 3 && s.late_blocks == 3 && s.fallbacks == 0);
	gf_engine_free(e);
	gf_filter_set_free(fs);
	__libc_free(x);
}

/*
 * The noise suppressor on the audio path: calls of any size allocate
 * nothing, and from the first call on fault no page in (new() touched its
 * state and its transform buffers).
 */
static void suppress_case(uint32_t channels, uint32_t block)
{
	struct gf_suppress_params p = {.reduction_db = 18.0};
	struct gf_errbuf eb = {{0}};
	struct gf_suppress *s;
	CHECK_OK_EB(gf_suppress_new(&p, channels, 48000, &s, &eb), &eb);
	float *x = gf_test_noise((size_t)channels * block, &rng);
	gf_alloc_probe_reset();
	long before = gf_thread_faults();
	gf_alloc_probe_on();
	for (uint32_t done = 0; done < 48000; done += block)
		gf_suppress_process(s, x, block);
	gf_alloc_probe_off();
	long faults = gf_thread_faults() - before;
	printf("suppress %u ch, block %5u: %d allocations, %ld page faults over a second\n", channels, block,
	       gf_alloc_probe_calls(), faults);
	CHECK(gf_alloc_probe_calls() == 0 && faults == 0);
	gf_suppress_free(s);
	free(x);
}

int main(void)
{
	rng = gf_test_seed("test_engine_rt");
	/* The interposition works: a counted allocation is seen. */
	void *(*volatile alloc)(size_t) = malloc;
	gf_alloc_probe_on();
	void *q = alloc(16);
	free(q);
	gf_alloc_probe_off();
	CHECK(gf_alloc_probe_calls() == 2);
	gf_alloc_probe_reset();
	static const uint32_t blocks[] = {1, 128, 4096};
	for (size_t b = 0; b < sizeof(blocks) / sizeof(blocks[0]); b++) {
		rt_case(GF_ALGO_DIRECT, 300, blocks[b]);
		rt_case(GF_ALGO_FFT, 16, blocks[b]);
		rt_case(GF_ALGO_FFT, 5000, blocks[b]);
		rt_case(GF_ALGO_FFT, 262144, blocks[b]);
	}
	fault_case(GF_ALGO_DIRECT, 300, 128);
	fault_case(GF_ALGO_FFT, 65536, 256);
	late_case(GF_ALGO_DIRECT, 300, 128);
	late_case(GF_ALGO_FFT, 65536, 256);
	suppress_case(1, 1);
	suppress_case(8, 64);
	suppress_case(2, 4096);
	printf("test_engine_rt: OK\n");
	return 0;
}
#endif
