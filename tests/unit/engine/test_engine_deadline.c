/*
 * Bounded waits, without a GPU, through the engine's own fault hooks (what
 * the daemon's tests use). GPUFIR_FAULT_LATE_AFTER=N makes backend call N+1
 * complete GPUFIR_FAULT_LATE_MS after its submit: checked, the block comes
 * back at its deadline muted, the next block is exact on the same instance,
 * nothing falls back. GPUFIR_FAULT_HANG_AFTER=N makes call N+1 never
 * complete: the block comes back at its deadline (not later) muted, the
 * blocks after it are muted without a wait until hang_ms has passed, then
 * the engine parks, reap() builds the CPU fallback, the hung instance is
 * destroyed (the CPU's work ends with its calls: nothing left alive), and
 * the output after the fallback equals the reference of the whole input;
 * the same during a crossfade. GPUFIR_FAULT_STUCK_AFTER=N really leaves the
 * audio thread inside the backend call.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "clock.h"
#include "engine.h"
#include "testutil.h"

static uint64_t rng;

#define DEADLINE_US 20000u
#define HANG_MS 100u

static struct gf_engine *make(uint32_t ch, uint32_t block, uint32_t xfade, const struct gf_filter_set *fs,
			      const char *hook, long after)
{
	char n[32];
	snprintf(n, sizeof(n), "%ld", after);
	CHECK(setenv(hook, n, 1) == 0);
	struct gf_engine_params p = {.backend = GF_BACKEND_CPU,
				     .channels = ch,
				     .max_block = block,
				     .crossfade_frames = xfade,
				     .deadline_us = DEADLINE_US,
				     .hang_ms = HANG_MS};
	struct gf_engine *e = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_engine_new(&e, &p, fs, &eb), &eb);
	CHECK(unsetenv(hook) == 0);
	return e;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {0, (long)ms * 1000000L};
	nanosleep(&ts, NULL);
}

/* Block L's call completes 1.5 deadlines late: L is muted at its deadline;
 * the next block, called once the answer is in, is exact; no fallback. */
static void test_late(void)
{
	const uint32_t ch = 2, block = 64, blocks = 10, L = 4, frames = blocks * block;
	struct gf_filter_set *fs = gf_test_random_filter(ch, 200, &rng);
	CHECK(setenv("GPUFIR_FAULT_LATE_MS", "30", 1) == 0);
	struct gf_engine *e = make(ch, block, 0, fs, "GPUFIR_FAULT_LATE_AFTER", L);
	CHECK(unsetenv("GPUFIR_FAULT_LATE_MS") == 0);
	float *x = gf_test_noise((size_t)frames * ch, &rng), *y = calloc((size_t)frames * ch, sizeof(float));
	CHECK(y);
	double late_ms = 0;
	for (uint32_t b = 0; b < blocks; b++) {
		size_t off = (size_t)b * block * ch;
		uint64_t t0 = gf_now_ns();
		int err = gf_engine_process(e, x + off, y + off, block);
		if (b == L) {
			late_ms = (double)(gf_now_ns() - t0) / 1e6;
			CHECK(err == GF_E_TIMEOUT && gf_test_all_zero(y + off, (size_t)block * ch));
			sleep_ms(15); /* 35 ms after the submit: the answer is in */
		} else {
			CHECK_OK(err);
		}
		gf_engine_reap(e);
	}
	struct gf_engine_stats s = gf_test_stats(e);
	double *r = gf_test_reference_fs(x, frames, ch, fs);
	double before = gf_test_rel_l2_frames(y, r, 0, L * block, ch);
	double after = gf_test_rel_l2_frames(y, r, (L + 1) * block, frames, ch);
	printf("late   GPUFIR_FAULT_LATE_AFTER=%u (30 ms): block %u back after %.1f ms, muted; rel L2 before "
	       "%.2e, after %.2e; late %llu, fallbacks %llu\n",
	       L, L, late_ms, before, after, (unsigned long long)s.late_blocks,
	       (unsigned long long)s.fallbacks);
	CHECK(late_ms >= DEADLINE_US / 1000.0 && late_ms < 10 * DEADLINE_US / 1000.0);
	CHECK(before < 1e-6 && after < 1e-6);
	CHECK(s.late_blocks == 1 && s.timeouts == 1 && s.fallbacks == 0 && s.hangs == 0 && s.errors == 0);
	gf_engine_free(e);
	free(r);
	free(x);
	free(y);
	gf_filter_set_free(fs);
}

/*
 * Block F hangs: it comes back at its deadline, muted; the blocks after it
 * (2 ms apart, reaped one by one) are muted without waiting until hang_ms,
 * then the engine parks and reap() builds the fallback; from then on the
 * output is the reference of the whole input. With @p crossfade a crossfade
 * (to a second filter) is running when the hang hits: the fallback cuts it
 * short.
 */
static void test_hang(uint32_t taps, uint32_t block, int crossfade)
{
	const uint32_t ch = 2, blocks = 120, fail = 6, frames = blocks * block;
	const uint32_t xfade = crossfade ? 8 * block : 0;
	struct gf_filter_set *fs = gf_test_random_filter(ch, taps, &rng);
	struct gf_filter_set *fs2 = gf_test_random_filter(ch, taps, &rng);
	/* Crossfade: calls 0..4 are blocks 0..4 alone; block 5 swaps (calls 5, 6); block 6's first call
	 * hangs. */
	struct gf_engine *e = make(ch, block, xfade, fs, "GPUFIR_FAULT_HANG_AFTER", crossfade ? 7 : fail);
	float *x = gf_test_noise((size_t)frames * ch, &rng), *y = calloc((size_t)frames * ch, sizeof(float));
	CHECK(y);
	double hang_ms = 0;
	uint32_t back = 0; /* the first block on the fallback */
	uint64_t t_hang = 0, t_back = 0;
	for (uint32_t b = 0; b < blocks; b++) {
		size_t off = (size_t)b * block * ch;
		if (crossfade && b == fail - 1) {
			struct gf_errbuf eb = {{0}};
			CHECK_OK_EB(gf_engine_swap(e, fs2, &eb), &eb);
		}
		uint64_t t0 = gf_now_ns();
		int err = gf_engine_process(e, x + off, y + off, block);
		double ms = (double)(gf_now_ns() - t0) / 1e6;
		if (b < fail || (back && b >= back)) {
			CHECK_OK(err);
		} else if (b == fail) {
			hang_ms = ms;
			t_hang = t0;
			CHECK(err == GF_E_TIMEOUT);
			CHECK(ms >= DEADLINE_US / 1000.0 && ms < 10 * DEADLINE_US / 1000.0);
			CHECK(gf_test_all_zero(y + off, (size_t)block * ch));
			CHECK(!gf_engine_failed(e) && gf_test_stats(e).timeouts == 1 &&
			      gf_test_stats(e).late_blocks == 1);
		} else {
			CHECK(err == GF_E_TIMEOUT); /* late (a poll, no wait), then parked */
			CHECK(ms < DEADLINE_US / 1000.0 && gf_test_all_zero(y + off, (size_t)block * ch));
		}
		gf_engine_reap(e);
		if (!back && gf_test_stats(e).fallbacks == 1) {
			back = b + 1;
			t_back = gf_now_ns();
		}
		sleep_ms(2);
	}
	struct gf_engine_stats s = gf_test_stats(e);
	CHECK(back > fail && s.timeouts == 1 && s.hangs == 1 && s.fallbacks == 1);
	CHECK(s.abandoned == 0 && s.dying == 0 && s.errors == 1 && s.late_blocks == back - 1 - fail);
	double muted_ms = (double)(t_back - t_hang) / 1e6;
	CHECK(muted_ms >= HANG_MS && muted_ms < HANG_MS + 10 * DEADLINE_US / 1000.0);
	/* The fallback carries the newest filter set: the swapped-in one after a crossfade. */
	double *r = gf_test_reference_fs(x, frames, ch, crossfade ? fs2 : fs);
	double before = crossfade ? 0.0 : gf_test_rel_l2_frames(y, r, 0, fail * block, ch);
	double after = gf_test_rel_l2_frames(y, r, back * block, frames, ch);
	printf("hang   taps %5u block %4u%s: block %u back after %.1f ms (deadline %.1f ms), muted for %.0f "
	       "ms "
	       "(hang_ms %u), rel L2 before %.2e, after the fallback %.2e\n",
	       taps, block, crossfade ? " (in a crossfade)" : "", fail, hang_ms, DEADLINE_US / 1000.0,
	       muted_ms, HANG_MS, before, after);
	CHECK(before < 1e-6 && after < 1e-6);
	gf_engine_free(e);
	free(r);
	free(x);
	free(y);
	gf_filter_set_free(fs);
	gf_filter_set_free(fs2);
}

struct stuck_arg {
	struct gf_engine *e;
	float *buf;
	uint32_t block;
	atomic_int done;
};

static void *stuck_main(void *arg)
{
	struct stuck_arg *a = arg;
	for (int b = 0; b < 4; b++)
		gf_engine_process(a->e, a->buf, a->buf, a->block);
	atomic_store(&a->done, 1);
	return NULL;
}

/* Call 3 never returns: the thread stays inside it (and is left there). */
static void test_stuck(void)
{
	const uint32_t ch = 1, block = 64;
	struct gf_filter_set *fs = gf_test_random_filter(ch, 100, &rng);
	static struct stuck_arg a;
	a.e = make(ch, block, 0, fs, "GPUFIR_FAULT_STUCK_AFTER", 2);
	a.buf = calloc(block, sizeof(float));
	a.block = block;
	CHECK(a.buf);
	pthread_t t;
	CHECK(pthread_create(&t, NULL, stuck_main, &a) == 0);
	struct timespec ts = {0, 300000000L};
	nanosleep(&ts, NULL);
	CHECK(!atomic_load(&a.done));
	CHECK(gf_test_stats(a.e).frames == 2 * block);
	CHECK(pthread_detach(t) == 0); /* abandoned, with the engine it uses */
	gf_filter_set_free(fs);
	printf("stuck  GPUFIR_FAULT_STUCK_AFTER=2: the 3rd call has not returned after 300 ms (thread "
	       "left)\n");
}

int main(void)
{
	rng = gf_test_seed("test_engine_deadline");
	test_late();
	test_hang(100, 64, 0);
	test_hang(3000, 256, 0);
	test_hang(500, 64, 1);
	test_stuck();
	printf("all deadline checks passed\n");
	return 0;
}
