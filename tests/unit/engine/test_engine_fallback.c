/*
 * Backend failure and the CPU fallback, without a GPU: the test hook
 * GPUFIR_FAULT_PROCESS_AFTER=N makes backend process() call N+1 fail with
 * GF_E_CUDA. Checked: the failed block is muted and the flag raised; the
 * engine stays parked (muted, the failed backend not called) until reap()
 * builds the fallback; after it the output equals the double reference over
 * the whole input, muted blocks' input included (live); gf_engine_retry()
 * redoes the failed block exactly (offline); failures during a crossfade and
 * swaps around a failure; a processing thread racing the control thread.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "testutil.h"

static uint64_t rng;

/* A CPU engine whose backend process() call number @p fault_after + 1 fails (-1: none). */
static struct gf_engine *make(uint32_t ch, uint32_t block, uint32_t max_taps, uint32_t xfade,
			      enum gf_algo algo, const struct gf_filter_set *fs, long fault_after, int retry)
{
	char n[32];
	snprintf(n, sizeof(n), "%ld", fault_after);
	if (fault_after >= 0)
		CHECK(setenv("GPUFIR_FAULT_PROCESS_AFTER", n, 1) == 0);
	struct gf_engine *e = gf_test_cpu_engine(ch, block, max_taps, xfade, algo, retry, fs);
	CHECK(unsetenv("GPUFIR_FAULT_PROCESS_AFTER") == 0);
	return e;
}

/*
 * Live: block F fails; blocks F+1, F+2 arrive before the control thread
 * reaps (muted, the failed backend not called); then the fallback takes over
 * and every later block equals the reference of the whole input.
 */
static void test_live(uint32_t ch, uint32_t taps, uint32_t block, enum gf_algo algo, int retry)
{
	const uint32_t blocks = 12, fail = 3, frames = blocks * block;
	struct gf_filter_set *fs = gf_test_random_filter(ch, taps, &rng);
	struct gf_engine *e = make(ch, block, 0, 0, algo, fs, fail, retry);
	float *x = gf_test_noise((size_t)frames * ch, &rng), *y = calloc((size_t)frames * ch, sizeof(float));
	CHECK(y);
	for (uint32_t b = 0; b < blocks; b++) {
		size_t off = (size_t)b * block * ch;
		int in_place = b & 1;
		if (in_place)
			memcpy(y + off, x + off, (size_t)block * ch * sizeof(float));
		int err = gf_engine_process(e, in_place ? y + off : x + off, y + off, block);
		if (b < fail) {
			CHECK_OK(err);
			CHECK(!gf_engine_failed(e));
		} else if (b <= fail + 2) {
			CHECK(err == GF_E_CUDA);
			CHECK(gf_test_all_zero(y + off, (size_t)block * ch));
			if (!retry)
				CHECK(gf_engine_retry(e, y + off, block) == GF_E_UNSUPPORTED);
			CHECK(gf_engine_failed(e) == GF_E_CUDA);
			CHECK(gf_test_stats(e).errors == b - fail + 1 && gf_test_stats(e).fallbacks == 0);
			if (b == fail + 2) {
				gf_engine_reap(e); /* the control loop comes round */
				CHECK(!gf_engine_failed(e) && gf_test_stats(e).fallbacks == 1);
				CHECK(strcmp(gf_engine_backend_name(e), "cpu") == 0);
				CHECK(strstr(gf_engine_describe(e), "cpu backend"));
				CHECK(gf_engine_swap_pending(e));
			}
		} else {
			CHECK_OK(err);
			CHECK(!gf_engine_swap_pending(e));
		}
	}
	double *r = gf_test_reference_fs(x, frames, ch, fs);
	double before = gf_test_rel_l2_frames(y, r, 0, fail * block, ch);
	double after = gf_test_rel_l2_frames(y, r, (fail + 3) * block, frames, ch);
	printf("live   %-6s ch %u taps %5u block %4u%s: rel L2 before %.2e, after the fallback %.2e\n",
	       gf_engine_algo_name(e), ch, taps, block, retry ? " (retry ring)" : "", before, after);
	CHECK(before < 1e-6 && after < 1e-6);
	struct gf_engine_stats s = gf_test_stats(e);
	CHECK(s.errors == 3 && s.fallbacks == 1 && s.frames == frames && s.swaps == 0);
	gf_engine_reap(e);
	gf_engine_free(e);
	free(r);
	free(x);
	free(y);
	gf_filter_set_free(fs);
}

/* Offline: reap and retry right after the failure; the whole output is exact, in place too. */
static void test_retry(uint32_t ch, uint32_t taps, uint32_t block, enum gf_algo algo, int flush)
{
	const uint32_t blocks = 8, fail = 5, frames = blocks * block;
	struct gf_filter_set *fs = gf_test_random_filter(ch, taps, &rng);
	struct gf_engine *e = make(ch, block, 0, 0, algo, fs, fail, 1);
	float *x = gf_test_noise((size_t)frames * ch, &rng), *y = malloc((size_t)frames * ch * sizeof(float));
	CHECK(y);
	if (flush) /* the failing call is a flush: the tail of a file */
		memset(x + (size_t)fail * block * ch, 0,
		       (size_t)(frames - fail * block) * ch * sizeof(float));
	memcpy(y, x, (size_t)frames * ch * sizeof(float));
	for (uint32_t b = 0; b < blocks; b++) {
		float *yb = y + (size_t)b * block * ch;
		int err = flush && b >= fail ? gf_engine_flush(e, yb, block)
					     : gf_engine_process(e, yb, yb, block);
		if (b != fail) {
			CHECK_OK(err);
			CHECK(gf_engine_retry(e, yb, block) == GF_E_INVAL); /* nothing failed */
			continue;
		}
		CHECK(err == GF_E_CUDA && gf_test_all_zero(yb, (size_t)block * ch));
		CHECK(gf_engine_retry(e, yb, block - 1) == GF_E_INVAL);
		yb[0] = 1.0f;
		CHECK(gf_engine_retry(e, yb, block) == GF_E_CUDA); /* not reaped yet */
		CHECK(yb[0] == 0.0f);
		gf_engine_reap(e);
		CHECK_OK(gf_engine_retry(e, yb, block));
		CHECK(gf_engine_retry(e, yb, block) == GF_E_INVAL); /* once */
	}
	double *r = gf_test_reference_fs(x, frames, ch, fs);
	double err = gf_test_rel_l2_frames(y, r, 0, frames, ch);
	printf("retry  %-6s ch %u taps %5u block %4u%s: rel L2 %.2e over the whole stream\n",
	       gf_engine_algo_name(e), ch, taps, block, flush ? " (flush)" : "", err);
	CHECK(err < 1e-6);
	struct gf_engine_stats s = gf_test_stats(e);
	CHECK(s.errors == 1 && s.fallbacks == 1 && s.nonfinite_blocks == 0);
	gf_engine_free(e);
	free(r);
	free(x);
	free(y);
	gf_filter_set_free(fs);
}

/*
 * A failure in the middle of a crossfade: the fallback is built from the new
 * filter (the newest published), the ramp is cut short, both old instances
 * are retired. Then a swap while parked is refused (BUSY) in favour of the
 * fallback, and the next swap is built on the CPU.
 */
static void test_crossfade(void)
{
	const uint32_t ch = 2, block = 64, xfade = 500, frames = 40 * block;
	struct gf_filter_set *f1 = gf_test_random_filter(ch, 300, &rng),
			     *f2 = gf_test_random_filter(ch, 700, &rng),
			     *f3 = gf_test_random_filter(ch, 129, &rng);
	/* Calls 0-3: blocks 0-3; 4-9: blocks 4-6, two a block while crossfading; 10 fails (block 7). */
	struct gf_engine *e = make(ch, block, 1024, xfade, GF_ALGO_AUTO, f1, 4 + 2 * 3, 0);
	float *x = gf_test_noise((size_t)frames * ch, &rng), *y = malloc((size_t)frames * ch * sizeof(float));
	CHECK(y);
	struct gf_errbuf eb = {{0}};
	uint32_t b = 0;
	for (; b < 4; b++)
		CHECK_OK(gf_engine_process(e, x + (size_t)b * block * ch, y + (size_t)b * block * ch, block));
	CHECK_OK_EB(gf_engine_swap(e, f2, &eb), &eb);
	for (; b < 7; b++)
		CHECK_OK(gf_engine_process(e, x + (size_t)b * block * ch, y + (size_t)b * block * ch, block));
	CHECK(gf_engine_swap_pending(e));
	CHECK(gf_engine_process(e, x + (size_t)b * block * ch, y + (size_t)b * block * ch, block) ==
	      GF_E_CUDA);
	b++;
	CHECK(gf_engine_swap(e, f3, &eb) == GF_E_BUSY); /* the fallback went first */
	CHECK(gf_test_stats(e).fallbacks == 1 && !gf_engine_failed(e));
	for (; b < 20; b++)
		CHECK_OK(gf_engine_process(e, x + (size_t)b * block * ch, y + (size_t)b * block * ch, block));
	CHECK(!gf_engine_swap_pending(e) && gf_engine_taps(e) == 700);
	double *r2 = gf_test_reference_fs(x, frames, ch, f2);
	double e2 = gf_test_rel_l2_frames(y, r2, 8 * block, 20 * block, ch);
	CHECK_OK_EB(gf_engine_swap(e, f3, &eb), &eb);
	CHECK(strstr(gf_engine_describe(e), "cpu backend"));
	for (; b < 40; b++)
		CHECK_OK(gf_engine_process(e, x + (size_t)b * block * ch, y + (size_t)b * block * ch, block));
	double *r3 = gf_test_reference_fs(x, frames, ch, f3);
	double e3 = gf_test_rel_l2_frames(y, r3, 20 * block + xfade, frames, ch);
	printf("xfade  failure mid-ramp: new filter exact after the fallback (%.2e), next swap exact "
	       "(%.2e)\n",
	       e2, e3);
	CHECK(e2 < 1e-6 && e3 < 1e-6);
	struct gf_engine_stats s = gf_test_stats(e);
	CHECK(s.swaps == 1 && s.fallbacks == 1 && s.errors == 1); /* f2's swap was cut short, f3's done */
	gf_engine_reap(e);
	gf_engine_free(e);
	free(r2);
	free(r3);
	free(x);
	free(y);
	gf_filter_set_free(f1);
	gf_filter_set_free(f2);
	gf_filter_set_free(f3);
}

/* The hook's value must be a count; anything else is ignored (with a warning). */
static void test_bad_hook(void)
{
	struct gf_filter_set *fs = gf_test_random_filter(1, 33, &rng);
	CHECK(setenv("GPUFIR_FAULT_PROCESS_AFTER", "soon", 1) == 0);
	struct gf_engine_params p = {.backend = GF_BACKEND_CPU, .channels = 1, .max_block = 16};
	struct gf_engine *e = NULL;
	CHECK_OK(gf_engine_new(&e, &p, fs, NULL));
	CHECK(unsetenv("GPUFIR_FAULT_PROCESS_AFTER") == 0);
	float buf[16] = {1.0f};
	for (int i = 0; i < 10; i++)
		CHECK_OK(gf_engine_process(e, buf, buf, 16));
	CHECK(gf_test_stats(e).errors == 0);
	gf_engine_free(e);
	gf_filter_set_free(fs);
}

/* ---- a processing thread racing the control thread ------------------------- */

struct race {
	struct gf_engine *e;
	const float *x;
	float *y;
	uint32_t frames, ch, block;
	atomic_uint pos; /* frames done */
	int failures;
};

/* Paced like a sound card (100 us a block), so the control thread gets its turns. */
static void *audio_main(void *arg)
{
	struct race *r = arg;
	for (uint32_t pos = 0; pos < r->frames; pos += r->block) {
		size_t off = (size_t)pos * r->ch;
		if (gf_engine_process(r->e, r->x + off, r->y + off, r->block))
			r->failures++;
		atomic_store(&r->pos, pos + r->block);
		struct timespec ts = {0, 100000};
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/*
 * The audio thread streams while the control thread reaps and swaps in a
 * loop (as the daemon does). After the fault the stream must recover by
 * itself; once the last swap has landed, the output is exact.
 */
static void test_race(void)
{
	const uint32_t ch = 2, block = 32, frames = 32 * 1024;
	struct gf_filter_set *fs[2] = {gf_test_random_filter(ch, 200, &rng),
				       gf_test_random_filter(ch, 90, &rng)};
	struct gf_engine *e = make(ch, block, 256, 64, GF_ALGO_AUTO, fs[0], 200, 0);
	float *x = gf_test_noise((size_t)frames * ch, &rng), *y = calloc((size_t)frames * ch, sizeof(float));
	CHECK(y);
	struct race r = {.e = e, .x = x, .y = y, .frames = frames, .ch = ch, .block = block};
	pthread_t t;
	CHECK(pthread_create(&t, NULL, audio_main, &r) == 0);
	int swaps = 0, last = 0;
	uint32_t pos;
	while ((pos = atomic_load(&r.pos)) < frames) {
		gf_engine_reap(e);
		/* Swaps in the first half only: the second half ends on a settled filter. */
		if (pos < frames / 2 && gf_engine_swap(e, fs[(swaps + 1) & 1], NULL) == 0)
			last = (++swaps) & 1;
		struct timespec ts = {0, 200000};
		nanosleep(&ts, NULL);
	}
	pthread_join(t, NULL);
	gf_engine_reap(e);
	struct gf_engine_stats s = gf_test_stats(e);
	printf("race   %d swaps, %llu muted blocks, %llu fallback; backend %s\n", swaps,
	       (unsigned long long)s.errors, (unsigned long long)s.fallbacks, gf_engine_backend_name(e));
	CHECK(s.fallbacks == 1 && s.errors >= 1 && r.failures == (int)s.errors && swaps > 1);
	CHECK(!gf_engine_failed(e) && !gf_engine_swap_pending(e));
	/* The tail of the stream (after the last swap's ramp) against the filter it ended on. */
	double *ref = gf_test_reference_fs(x, frames, ch, fs[last]);
	double err = gf_test_rel_l2_frames(y, ref, frames - 1024, frames, ch);
	printf("race   last 1024 frames vs the final filter: rel L2 %.2e\n", err);
	CHECK(gf_engine_taps(e) == fs[last]->taps && err < 1e-6);
	gf_engine_free(e);
	free(ref);
	free(x);
	free(y);
	gf_filter_set_free(fs[0]);
	gf_filter_set_free(fs[1]);
}

int main(void)
{
	rng = gf_test_seed("test_engine_fallback");
	test_live(1, 31, 64, GF_ALGO_DIRECT, 0);
	test_live(2, 1000, 128, GF_ALGO_FFT, 0);
	test_live(3, 5000, 1000, GF_ALGO_AUTO, 1);
	test_live(1, 1, 16, GF_ALGO_AUTO, 0); /* one tap: no history at all */
	test_live(2, 1, 16, GF_ALGO_AUTO, 1);
	test_retry(2, 257, 512, GF_ALGO_DIRECT, 0);
	test_retry(2, 4000, 4096, GF_ALGO_FFT, 0);
	test_retry(1, 3000, 700, GF_ALGO_FFT, 1);
	test_crossfade();
	test_bad_hook();
	test_race();
	printf("test_engine_fallback: OK\n");
	return 0;
}
