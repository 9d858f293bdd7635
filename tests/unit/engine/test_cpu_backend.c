/*
 * The CPU backend against the double-precision reference: both algorithms,
 * many tap counts, channel counts, partition sizes and head strategies, call
 * sizes from 1 frame to max_block in random order, in place and out of place;
 * an impulse across block boundaries; priming from history.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "cpu_direct.h"
#include "cpu_fft.h"
#include "cpu_tune.h"
#include "testutil.h"

static uint64_t rng;

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *make(enum gf_algo algo, uint32_t ch, uint32_t max_block, const struct gf_filter_set *fs)
{
	struct gf_engine_params p = {
		.backend = GF_BACKEND_CPU, .algo = algo, .channels = ch, .max_block = max_block};
	struct gf_errbuf eb = {{0}};
	void *inst = NULL;
	CHECK_OK_EB(gf_cpu_backend.create(&p, fs, &inst, &eb), &eb);
	CHECK(inst != NULL);
	return inst;
}

/* Feed x through inst: first calls of 1..70 frames, then random sizes up to max_block. */
static void run_calls(void *inst, const float *x, float *y, uint32_t frames, uint32_t ch, uint32_t max_block,
		      int inplace)
{
	uint32_t pos = 0, small_until = frames / 3 < 4000 ? frames / 3 : 4000;
	uint32_t small_max = max_block < 70 ? max_block : 70;
	while (pos < frames) {
		uint32_t n;
		if (pos < small_until)
			n = 1 + gf_test_rand_below(&rng, small_max);
		else
			n = gf_test_rand_below(&rng, 4) == 0 ? max_block
							     : 1 + gf_test_rand_below(&rng, max_block);
		if (n > frames - pos)
			n = frames - pos;
		size_t off = (size_t)pos * ch;
		if (inplace) {
			memcpy(y + off, x + off, (size_t)n * ch * sizeof(float));
			CHECK_OK(gf_backend_process(&gf_cpu_backend, inst, y + off, y + off, n));
		} else {
			CHECK_OK(gf_backend_process(&gf_cpu_backend, inst, x + off, y + off, n));
		}
		pos += n;
	}
}

static double ref_at(const float *x, uint32_t ch, const struct gf_filter_set *fs, uint32_t n, uint32_t c)
{
	const float *h = gf_filter_set_channel(fs, c);
	uint32_t kmax = n + 1 < fs->taps ? n + 1 : fs->taps;
	double acc = 0.0;
	for (uint32_t k = 0; k < kmax; k++)
		acc += (double)h[k] * (double)x[(size_t)(n - k) * ch + c];
	return acc;
}

/* Relative L2 error over a sample of the output frames (all of them when cheap enough). */
static double check_output(const float *x, const float *y, uint32_t frames, uint32_t ch,
			   const struct gf_filter_set *fs, uint32_t from)
{
	double budget = 2e7;
	uint32_t want = (uint32_t)fmin((double)frames, budget / ((double)fs->taps * ch) + 64);
	uint32_t stride = (frames - from) / want > 1 ? (frames - from) / want : 1;
	double num = 0.0, den = 0.0;
	for (uint32_t n = from; n < frames;
	     n += (n < from + 64 || stride < 2 ? 1 : stride - 1 + gf_test_rand_below(&rng, 3))) {
		for (uint32_t c = 0; c < ch; c++) {
			double r = ref_at(x, ch, fs, n, c), d = (double)y[(size_t)n * ch + c] - r;
			num += d * d;
			den += r * r;
		}
	}
	return den > 0 ? sqrt(num / den) : sqrt(num);
}

struct acc_case {
	uint32_t taps, ch, max_block, frames;
	enum gf_algo algo;
	uint32_t partition;
	enum gf_cpu_head head;
	int baseline; /* portable kernels instead of AVX2+FMA */
};

static void accuracy_case(const struct acc_case *k, int inplace)
{
	struct gf_cpu_tuning t = {
		.fft_partition = k->partition, .fft_head = k->head, .baseline_kernels = k->baseline};
	gf_cpu_set_tuning(&t);
	struct gf_filter_set *fs = gf_test_random_filter(k->ch, k->taps, &rng);
	size_t n = (size_t)k->frames * k->ch;
	float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
	CHECK(x && y);
	gf_test_fill_noise(x, n, &rng);
	double t0 = seconds();
	void *inst = make(k->algo, k->ch, k->max_block, fs);
	const char *want = k->algo == GF_ALGO_DIRECT ? "direct" : "fft";
	CHECK(strcmp(gf_cpu_backend.algo_name(inst), want) == 0);
	run_calls(inst, x, y, k->frames, k->ch, k->max_block, inplace);
	double err = check_output(x, y, k->frames, k->ch, fs, 0);
	printf("%-6s taps %6u ch %u block %5u P %5u head %d %s%s: rel L2 %.3g (%.2f s)\n", want, k->taps,
	       k->ch, k->max_block, k->partition, k->head, inplace ? "in place" : "        ",
	       k->baseline ? " baseline" : "", err, seconds() - t0);
	CHECK(err < 1e-6);
	gf_cpu_backend.destroy(inst);
	gf_filter_set_free(fs);
	free(x);
	free(y);
	struct gf_cpu_tuning zero = {0};
	gf_cpu_set_tuning(&zero);
}

static void test_accuracy(void)
{
	static const uint32_t taps[] = {1, 2, 3, 7, 64, 65, 255, 1000, 4096, 65536};
	int i = 0;
	for (size_t ti = 0; ti < sizeof(taps) / sizeof(taps[0]); ti++) {
		uint32_t T = taps[ti];
		uint32_t ch = 1 + (uint32_t)(ti % 8);
		uint32_t frames = T < 2000 ? 6000 : T + 9000;
		if (T >= 65536)
			ch = 2;
		struct acc_case cases[] = {
			{T, ch, 512, frames, GF_ALGO_DIRECT, 0, 0, 0},
			{T, ch, 512, frames, GF_ALGO_FFT, 0, GF_CPU_HEAD_AUTO, 0},
			{T, ch, 300, frames, GF_ALGO_FFT, 16, GF_CPU_HEAD_DIRECT, 0},
			{T, ch, 300, frames, GF_ALGO_FFT, 32, GF_CPU_HEAD_FFT, 0},
			{T, 8 - ch % 8, 4096, frames, GF_ALGO_FFT, 0, GF_CPU_HEAD_AUTO, 0},
		};
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			struct acc_case k = cases[c];
			if (T >= 65536 && k.algo == GF_ALGO_DIRECT) {
				k.ch = 1; /* slow path: keep it short */
				k.frames = T + 300;
			}
			if (T >= 4096 && k.partition == 16)
				k.partition = 1024;
			if (T >= 4096 && k.partition == 32)
				k.partition = 256;
			accuracy_case(&k, (i++ % 3) == 1);
		}
	}
	/* Offline-sized blocks, and the smallest ones. */
	struct acc_case big[] = {
		{65536, 2, 65536, 200000, GF_ALGO_FFT, 0, GF_CPU_HEAD_AUTO, 0},
		{1u << 20, 1, 65536, (1u << 20) + 70000, GF_ALGO_FFT, 0, GF_CPU_HEAD_AUTO, 0}, /* 1M taps */
		{4095, 3, 65536, 150000, GF_ALGO_FFT, 0, GF_CPU_HEAD_AUTO, 0},
		{255, 2, 65536, 140000, GF_ALGO_DIRECT, 0, 0, 0},
		{300, 2, 1, 1500, GF_ALGO_FFT, 0, GF_CPU_HEAD_AUTO, 0},
		{300, 2, 1, 1500, GF_ALGO_DIRECT, 0, 0, 0},
		{5000, 1, 7, 12000, GF_ALGO_FFT, 0, GF_CPU_HEAD_AUTO, 0},
		/* the portable kernels (what non-AVX2 machines run) */
		{1000, 3, 300, 6000, GF_ALGO_DIRECT, 0, 0, 1},
		{1000, 3, 300, 6000, GF_ALGO_FFT, 64, GF_CPU_HEAD_DIRECT, 1},
		{4096, 2, 4096, 20000, GF_ALGO_FFT, 0, GF_CPU_HEAD_AUTO, 1},
	};
	for (size_t c = 0; c < sizeof(big) / sizeof(big[0]); c++)
		accuracy_case(&big[c], (int)(c % 2));
}

/* An impulse per channel (different taps, different positions) returns the taps in order. */
static void impulse_case(enum gf_algo algo, uint32_t ch, uint32_t taps, uint32_t max_block)
{
	struct gf_filter_set *fs = gf_test_random_filter(ch, taps, &rng);
	uint32_t frames = taps + 3 * max_block + 50;
	size_t n = (size_t)frames * ch;
	float *x = calloc(n, sizeof(float)), *y = malloc(n * sizeof(float));
	CHECK(x && y);
	for (uint32_t c = 0; c < ch; c++)
		x[(size_t)(5 + 11 * c) * ch + c] = 1.0f;
	void *inst = make(algo, ch, max_block, fs);
	run_calls(inst, x, y, frames, ch, max_block, 0);
	double worst = 0.0;
	for (uint32_t c = 0; c < ch; c++) {
		const float *h = gf_filter_set_channel(fs, c);
		uint32_t at = 5 + 11 * c;
		for (uint32_t i = 0; i < frames; i++) {
			double want = i >= at && i - at < taps ? h[i - at] : 0.0;
			worst = fmax(worst, fabs(y[(size_t)i * ch + c] - want));
		}
	}
	printf("impulse %-6s taps %5u ch %u block %4u: max abs error %.3g\n", gf_cpu_backend.algo_name(inst),
	       taps, ch, max_block, worst);
	CHECK(worst < (algo == GF_ALGO_DIRECT ? 1e-7 : 2e-6));
	gf_cpu_backend.destroy(inst);
	gf_filter_set_free(fs);
	free(x);
	free(y);
}

/* prime(history) then process(input) == convolution of [history | input], for any history length. */
static void prime_case(enum gf_algo algo, uint32_t ch, uint32_t taps, uint32_t max_block, uint32_t hist)
{
	struct gf_filter_set *fs = gf_test_random_filter(ch, taps, &rng);
	uint32_t frames = hist + 2 * taps + 2 * max_block;
	size_t n = (size_t)frames * ch;
	float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
	CHECK(x && y);
	gf_test_fill_noise(x, n, &rng);
	/* A used instance: its own state must be replaced by the history. */
	void *inst = make(algo, ch, max_block, fs);
	run_calls(inst, x + (size_t)(frames - max_block) * ch, y, max_block, ch, max_block, 0);
	CHECK_OK(gf_cpu_backend.prime(inst, x, hist));
	run_calls(inst, x + (size_t)hist * ch, y + (size_t)hist * ch, frames - hist, ch, max_block, 0);
	double err = check_output(x, y, frames, ch, fs, hist);
	printf("prime   %-6s taps %5u ch %u block %4u history %6u: rel L2 %.3g\n",
	       gf_cpu_backend.algo_name(inst), taps, ch, max_block, hist, err);
	CHECK(err < 1e-6);
	gf_cpu_backend.destroy(inst);
	gf_filter_set_free(fs);
	free(x);
	free(y);
}

/* A used instance primed with no history (an engine reset between files of a
 * batch) gives, bit for bit, what a new instance gives on the same calls. */
static void reset_case(enum gf_algo algo, uint32_t ch, uint32_t taps, uint32_t max_block, uint32_t call)
{
	struct gf_filter_set *fs = gf_test_random_filter(ch, taps, &rng);
	uint32_t frames = 3 * max_block + call, used = 5 * max_block + max_block / 3;
	size_t n = (size_t)frames * ch;
	float *x = malloc(n * sizeof(float)), *y0 = malloc(n * sizeof(float)),
	      *y1 = malloc(n * sizeof(float));
	float *z = malloc((size_t)used * ch * sizeof(float)), *zy = malloc((size_t)used * ch * sizeof(float));
	CHECK(x && y0 && y1 && z && zy);
	gf_test_fill_noise(x, n, &rng);
	gf_test_fill_noise(z, (size_t)used * ch, &rng);
	void *fresh = make(algo, ch, max_block, fs), *reused = make(algo, ch, max_block, fs);
	run_calls(reused, z, zy, used, ch, max_block, 0); /* ends inside a segment */
	CHECK_OK(gf_cpu_backend.prime(reused, z, 0));
	for (uint32_t pos = 0; pos < frames; pos += call) {
		uint32_t m = frames - pos < call ? frames - pos : call;
		size_t off = (size_t)pos * ch;
		CHECK_OK(gf_backend_process(&gf_cpu_backend, fresh, x + off, y0 + off, m));
		CHECK_OK(gf_backend_process(&gf_cpu_backend, reused, x + off, y1 + off, m));
	}
	int same = memcmp(y0, y1, n * sizeof(float)) == 0;
	printf("reset   %-6s taps %5u ch %u block %4u calls of %4u: %s\n", gf_cpu_backend.algo_name(fresh),
	       taps, ch, max_block, call,
	       same ? "bit-identical to a new instance" : "DIFFERENT from a new instance");
	CHECK(same);
	gf_cpu_backend.destroy(fresh);
	gf_cpu_backend.destroy(reused);
	gf_filter_set_free(fs);
	free(x), free(y0), free(y1), free(z), free(zy);
}

static void test_misc(void)
{
	struct gf_filter_set *fs = gf_test_random_filter(2, 100, &rng);
	void *inst = make(GF_ALGO_AUTO, 2, 64, fs);
	float buf[2 * 65] = {0};
	CHECK(gf_backend_process(&gf_cpu_backend, inst, buf, buf, 65) == GF_E_INVAL);
	CHECK(gf_backend_process(&gf_cpu_backend, inst, buf, buf, 0) == GF_E_INVAL);
	CHECK(strlen(gf_cpu_backend.describe(inst)) > 0);
	printf("auto, 100 taps, block 64: %s (%s)\n", gf_cpu_backend.algo_name(inst),
	       gf_cpu_backend.describe(inst));
	gf_cpu_backend.destroy(inst);
	gf_cpu_backend.destroy(NULL);
	/* AUTO: short filters direct, long ones FFT. */
	struct gf_filter_set *lg = gf_test_random_filter(1, 8192, &rng);
	struct gf_filter_set *sh = gf_test_random_filter(1, 16, &rng);
	inst = make(GF_ALGO_AUTO, 1, 1024, lg);
	CHECK(strcmp(gf_cpu_backend.algo_name(inst), "fft") == 0);
	gf_cpu_backend.destroy(inst);
	inst = make(GF_ALGO_AUTO, 1, 1024, sh);
	CHECK(strcmp(gf_cpu_backend.algo_name(inst), "direct") == 0);
	gf_cpu_backend.destroy(inst);
	/* A bad partition size is refused. */
	struct gf_cpu_tuning t = {.fft_partition = 48};
	gf_cpu_set_tuning(&t);
	struct gf_engine_params p = {.algo = GF_ALGO_FFT, .channels = 1, .max_block = 64};
	CHECK(gf_cpu_backend.create(&p, lg, &inst, NULL) == GF_E_INVAL && inst == NULL);
	struct gf_cpu_tuning zero = {0};
	gf_cpu_set_tuning(&zero);
	gf_filter_set_free(fs);
	gf_filter_set_free(lg);
	gf_filter_set_free(sh);
}

/*
 * A live call's cost is bounded by its share of the tail: a call of m frames
 * sums at most ceil((K-2) m / P) + 2 partitions (its share, rounding at a
 * segment edge, and H_1 X_s at a completion), not all K-1 of them in the call
 * that completes a segment. Random call sizes up to the block; the output
 * must still be the convolution.
 */
static void test_fft_tail_spread(void)
{
	const uint32_t ch = 2, taps = 65535, P = 1024, block = 128, K = (taps + P - 1) / P;
	struct gf_filter_set *fs = gf_test_random_filter(ch, taps, &rng);
	struct gf_cpu_fft *f;
	struct gf_errbuf eb;
	CHECK_OK_EB(gf_cpu_fft_new(&f, fs, block, P, &eb), &eb);
	const uint32_t frames = 12 * P;
	float *x = gf_test_noise((size_t)frames * ch, &rng);
	float *y = malloc((size_t)frames * ch * sizeof(float));
	CHECK(y);
	for (uint32_t pos = 0, n; pos < frames; pos += n) {
		n = 1 + gf_test_rand_below(&rng, block);
		n = n < frames - pos ? n : frames - pos;
		gf_cpu_fft_process(f, x + (size_t)pos * ch, y + (size_t)pos * ch, n);
	}
	uint32_t bound = (uint32_t)(((uint64_t)(K - 2) * block + P - 1) / P) + 2;
	printf("fft tail: %u partitions, calls <= %u frames: at most %u summed in one call (bound %u)\n", K,
	       block, gf_cpu_fft_tail_terms_max(f), bound);
	CHECK(gf_cpu_fft_tail_terms_max(f) >= 1 && gf_cpu_fft_tail_terms_max(f) <= bound);
	double num = 0.0, den = 0.0;
	for (uint32_t n = frames - 300; n < frames; n++)
		for (uint32_t c = 0; c < ch; c++) {
			double want = ref_at(x, ch, fs, n, c), d = y[(size_t)n * ch + c] - want;
			num += d * d;
			den += want * want;
		}
	CHECK(sqrt(num / den) < 1e-5);
	gf_cpu_fft_free(f);
	gf_filter_set_free(fs);
	free(x);
	free(y);
}

int main(void)
{
	rng = gf_test_seed("test_cpu_backend");
	test_misc();
	test_accuracy();
	test_fft_tail_spread();
	impulse_case(GF_ALGO_DIRECT, 3, 200, 64);
	impulse_case(GF_ALGO_FFT, 3, 200, 64);
	impulse_case(GF_ALGO_FFT, 5, 5000, 1000);
	impulse_case(GF_ALGO_DIRECT, 2, 1, 7);
	impulse_case(GF_ALGO_FFT, 2, 1, 7);
	static const uint32_t hist_of[] = {0, 1, 50, 0xffffffffu, 0xfffffffeu};
	for (size_t i = 0; i < sizeof(hist_of) / sizeof(hist_of[0]); i++) {
		for (int a = 0; a < 2; a++) {
			enum gf_algo algo = a ? GF_ALGO_FFT : GF_ALGO_DIRECT;
			/* special values: taps-1 exactly, and well beyond the filter */
			uint32_t h1 = hist_of[i] == 0xffffffffu	  ? 999
				      : hist_of[i] == 0xfffffffeu ? 3777
								  : hist_of[i];
			prime_case(algo, 2, 1000, 256, h1);
			prime_case(algo, 1, 7, 5, h1);
		}
	}
	reset_case(GF_ALGO_FFT, 2, 301, 4096, 100);
	reset_case(GF_ALGO_FFT, 2, 5000, 1024, 333);
	reset_case(GF_ALGO_DIRECT, 2, 301, 256, 100);
	struct gf_cpu_tuning heads[2] = {{.fft_partition = 256, .fft_head = GF_CPU_HEAD_FFT},
					 {.fft_partition = 256, .fft_head = GF_CPU_HEAD_DIRECT}};
	for (int i = 0; i < 2; i++) { /* each partial-segment head forced */
		gf_cpu_set_tuning(&heads[i]);
		reset_case(GF_ALGO_FFT, 2, 301, 4096, 100);
		reset_case(GF_ALGO_FFT, 1, 1000, 512, 77);
	}
	struct gf_cpu_tuning t = {.fft_partition = 64, .fft_head = GF_CPU_HEAD_DIRECT};
	gf_cpu_set_tuning(&t);
	prime_case(GF_ALGO_FFT, 3, 1000, 100, 2500);
	prime_case(GF_ALGO_FFT, 3, 64, 100, 63);
	struct gf_cpu_tuning zero = {0};
	gf_cpu_set_tuning(&zero);
	printf("test_cpu_backend: OK\n");
	return 0;
}
