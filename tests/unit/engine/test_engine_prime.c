/*
 * Priming off the audio path: a paced audio thread filters blocks while the
 * control thread swaps in a new filter. The control thread primes the new
 * instance from the history ring and catches it up; the audio thread only
 * feeds it the frames since then at take-up. Checked for filters up to
 * 262143 taps: the frames fed at take-up stay within a few blocks (they do
 * not grow with the tap count, where priming on the audio thread fed
 * taps - 1), and the whole output is exactly the old filter's, then the
 * crossfade of old and new, then the new filter's (an unthreaded engine of
 * each filter is the reference).
 */
#include <math.h>
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

#define CH 2
#define BLOCK 64
#define XFADE 256
#define RATE 48000
#define BLOCKS 600
#define SWAP_AT 150 /* block the audio thread has reached when the swap starts */
#define TAKEUP_MAX_FRAMES (32 * BLOCK)

static uint64_t rng;

struct audio {
	struct gf_engine *e;
	const float *x;
	float *y;
	atomic_uint done; /* blocks filtered */
	uint64_t worst_ns;
};

/* The audio thread: one block per block period (48 kHz), like a device. */
static void *audio_main(void *arg)
{
	struct audio *a = arg;
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (uint32_t b = 0; b < BLOCKS; b++) {
		next.tv_nsec += 1000000000L / RATE * BLOCK;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		size_t off = (size_t)b * BLOCK * CH;
		uint64_t t0 = gf_now_ns();
		CHECK_OK(gf_engine_process(a->e, a->x + off, a->y + off, BLOCK));
		uint64_t dt = gf_now_ns() - t0;
		a->worst_ns = dt > a->worst_ns ? dt : a->worst_ns;
		atomic_store(&a->done, b + 1);
	}
	return NULL;
}

/* The filter's output over the whole input, from an engine on this thread alone. */
static float *oracle(const float *x, uint32_t frames, const struct gf_filter_set *fs)
{
	struct gf_engine *e = gf_test_cpu_engine(CH, 4096, 0, 0, GF_ALGO_AUTO, 0, fs);
	float *y = malloc((size_t)frames * CH * sizeof(float));
	CHECK(y);
	for (uint32_t f = 0; f < frames; f += 4096)
		CHECK_OK(gf_engine_process(e, x + (size_t)f * CH, y + (size_t)f * CH,
					   frames - f < 4096 ? frames - f : 4096));
	gf_engine_free(e);
	return y;
}

static double block_err(const float *y, const float *r, uint32_t b)
{
	double num = 0, den = 0;
	for (size_t i = (size_t)b * BLOCK * CH; i < (size_t)(b + 1) * BLOCK * CH; i++) {
		num += ((double)y[i] - r[i]) * ((double)y[i] - r[i]);
		den += (double)r[i] * r[i];
	}
	return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void test_swap(uint32_t taps_a, uint32_t taps_b)
{
	const uint32_t frames = BLOCKS * BLOCK;
	uint32_t max_taps = taps_a > taps_b ? taps_a : taps_b;
	struct gf_filter_set *fa = gf_test_random_filter(CH, taps_a, &rng);
	struct gf_filter_set *fb = gf_test_random_filter(CH, taps_b, &rng);
	static struct audio a;
	memset(&a, 0, sizeof(a));
	a.e = gf_test_cpu_engine(CH, BLOCK, max_taps, XFADE, GF_ALGO_AUTO, 0, fa);
	float *x = gf_test_noise((size_t)frames * CH, &rng);
	a.x = x;
	a.y = calloc((size_t)frames * CH, sizeof(float));
	CHECK(a.y);
	pthread_t t;
	CHECK(pthread_create(&t, NULL, audio_main, &a) == 0);
	while (atomic_load(&a.done) < SWAP_AT) {
		struct timespec ts = {0, 1000000L};
		nanosleep(&ts, NULL);
	}
	struct gf_errbuf eb = {{0}};
	uint64_t t0 = gf_now_ns();
	CHECK_OK_EB(gf_engine_swap(a.e, fb, &eb), &eb);
	double swap_ms = (double)(gf_now_ns() - t0) / 1e6;
	CHECK(pthread_join(t, NULL) == 0);
	CHECK(!gf_engine_swap_pending(a.e));
	struct gf_engine_stats s;
	gf_engine_get_stats(a.e, &s);

	/* Expected: A until the take-up block, then the crossfade, then B. */
	float *ra = oracle(x, frames, fa), *rb = oracle(x, frames, fb);
	uint32_t k = 0;
	while (k < BLOCKS && block_err(a.y, ra, k) < 1e-4)
		k++;
	CHECK(k >= SWAP_AT && k < BLOCKS - XFADE / BLOCK - 1);
	double num = 0, den = 0;
	for (size_t i = 0; i < (size_t)frames; i++) {
		size_t t_in = i - (size_t)k * BLOCK;
		double g = i < (size_t)k * BLOCK ? 0.0
			   : t_in < XFADE	 ? 0.5 - 0.5 * cos(M_PI * ((double)t_in + 0.5) / XFADE)
						 : 1.0;
		for (int c = 0; c < CH; c++) {
			double want = (1.0 - g) * ra[i * CH + c] + g * rb[i * CH + c];
			double d = a.y[i * CH + c] - want;
			num += d * d;
			den += want * want;
		}
	}
	double err = sqrt(num / den);
	printf("taps %6u -> %6u: swap %.1f ms on the control thread, take-up at block %u fed %llu frames "
	       "(worst %llu), worst block %.0f us; rel L2 vs A/crossfade/B %.2e\n",
	       taps_a, taps_b, swap_ms, k, (unsigned long long)s.takeup_frames,
	       (unsigned long long)s.takeup_frames_max, (double)a.worst_ns / 1e3, err);
	CHECK(s.swaps == 1 && s.errors == 0);
	/* A block or two in the usual case; never anything like the taps. The
	 * bound leaves room for a virtual machine that stalls the control thread
	 * between its catch-up and the publish (CI once: 896 frames, a 26 ms
	 * swap): 32 blocks is still half of what priming on the audio thread
	 * fed at 4095 taps. */
	CHECK(s.takeup_frames_max <= TAKEUP_MAX_FRAMES);
	CHECK(err < 1e-5);
	gf_engine_free(a.e);
	free(ra);
	free(rb);
	free(x);
	free(a.y);
	gf_filter_set_free(fa);
	gf_filter_set_free(fb);
}

int main(void)
{
	rng = gf_test_seed("test_engine_prime");
	test_swap(1023, 4095);
	test_swap(65535, 32767);
	test_swap(262143, 262143);
	printf("all priming checks passed\n");
	return 0;
}
