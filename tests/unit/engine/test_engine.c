/*
 * The backend-neutral engine on the CPU backend: accuracy against the double
 * reference, flush, filter swaps (hard and crossfaded, primed from history,
 * across tap counts and algorithms), rejected swaps, the NaN policy, argument
 * checks, and swaps racing a processing thread.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "gpu.h"
#include "testutil.h"

static uint64_t rng;

static struct gf_engine *make(uint32_t ch, uint32_t max_block, uint32_t max_taps, uint32_t xfade,
			      enum gf_algo algo, const struct gf_filter_set *fs)
{
	return gf_test_cpu_engine(ch, max_block, max_taps, xfade, algo, 0, fs);
}

/* Process frames [from, to) of x in random call sizes (1..max_block), in place half of the time. */
static void feed(struct gf_engine *e, const float *x, float *y, uint32_t from, uint32_t to, uint32_t ch,
		 uint32_t max_block)
{
	uint32_t pos = from;
	while (pos < to) {
		uint32_t n = 1 + gf_test_rand_below(&rng, max_block);
		if (n > to - pos)
			n = to - pos;
		size_t off = (size_t)pos * ch;
		if (gf_test_rand_below(&rng, 2)) {
			memcpy(y + off, x + off, (size_t)n * ch * sizeof(float));
			CHECK_OK(gf_engine_process(e, y + off, y + off, n));
		} else {
			CHECK_OK(gf_engine_process(e, x + off, y + off, n));
		}
		pos += n;
	}
}

/* ---- accuracy and flush ----------------------------------------------------- */

static void test_accuracy_and_flush(enum gf_algo algo, uint32_t ch, uint32_t taps, uint32_t max_block)
{
	struct gf_filter_set *fs = gf_test_random_filter(ch, taps, &rng);
	uint32_t frames = 3000, total = frames + taps - 1 + 37;
	float *x = calloc((size_t)total * ch, sizeof(float)), *y = malloc((size_t)total * ch * sizeof(float));
	CHECK(x && y);
	gf_test_fill_noise(x, (size_t)frames * ch, &rng);
	struct gf_engine *e = make(ch, max_block, 0, 0, algo, fs);
	feed(e, x, y, 0, frames, ch, max_block);
	/* One flush call longer than max_block, then the rest. */
	uint32_t first = (taps - 1 + 37) / 2;
	CHECK_OK(gf_engine_flush(e, y + (size_t)frames * ch, first));
	CHECK_OK(gf_engine_flush(e, y + (size_t)(frames + first) * ch, total - frames - first));
	double *r = gf_test_reference_fs(x, total, ch, fs);
	double err = gf_test_rel_l2_frames(y, r, 0, frames, ch),
	       tail = gf_test_rel_l2_frames(y, r, frames, total, ch);
	printf("engine %-6s taps %5u ch %u block %4u: rel L2 %.3g, flushed tail %.3g\n",
	       gf_engine_algo_name(e), taps, ch, max_block, err, tail);
	CHECK(err < 1e-6 && tail < 1e-6);
	/* Past the tail: silence. */
	float z[4 * 8];
	CHECK_OK(gf_engine_flush(e, z, 4));
	for (uint32_t i = 0; i < 4 * ch; i++)
		CHECK(fabsf(z[i]) < 1e-6f);
	struct gf_engine_stats st;
	gf_engine_get_stats(e, &st);
	CHECK(st.frames == (uint64_t)total + 4 && st.swaps == 0 && st.errors == 0 &&
	      st.nonfinite_blocks == 0);
	CHECK(gf_engine_taps(e) == taps);
	CHECK(strcmp(gf_engine_backend_name(e), "cpu") == 0);
	CHECK(strlen(gf_engine_describe(e)) > 0);
	gf_engine_free(e);
	gf_filter_set_free(fs);
	free(x);
	free(y);
	free(r);
}

/* ---- swaps ------------------------------------------------------------------- */

/* Raised-cosine gain of the new filter at frame k of an n-frame crossfade (see docs/engine.md). */
static double ramp(uint32_t k, uint32_t n)
{
	return k >= n ? 1.0 : 0.5 - 0.5 * cos(M_PI * ((double)k + 0.5) / n);
}

/*
 * A sequence of filters swapped in at block edges; after each swap the output
 * must be the crossfade of the old and new filters' full-history convolutions.
 */
static void test_swaps(uint32_t xfade, uint32_t max_block)
{
	const uint32_t ch = 2, seg = 3000;
	static const uint32_t taps[] = {63, 4095, 63, 1, 700};
	static const char *const algo[] = {"direct", "fft", "direct", "direct", "fft"};
	const uint32_t nf = sizeof(taps) / sizeof(taps[0]), frames = nf * seg;
	struct gf_filter_set *fs[5];
	double *ref[5];
	float *x = gf_test_noise((size_t)frames * ch, &rng);
	float *y = malloc((size_t)frames * ch * sizeof(float));
	CHECK(y);
	for (uint32_t i = 0; i < nf; i++) {
		fs[i] = gf_test_random_filter(ch, taps[i], &rng);
		ref[i] = gf_test_reference_fs(x, frames, ch, fs[i]);
	}
	struct gf_engine *e = make(ch, max_block, 4095, xfade, GF_ALGO_AUTO, fs[0]);
	for (uint32_t i = 0; i < nf; i++) {
		uint32_t at = i * seg;
		if (i > 0) {
			struct gf_errbuf eb;
			CHECK_OK_EB(gf_engine_swap(e, fs[i], &eb), &eb);
			CHECK(gf_engine_swap_pending(e) == 1);
			CHECK(gf_engine_swap(e, fs[i], &eb) == GF_E_BUSY);
		}
		feed(e, x, y, at, at + seg, ch, max_block);
		CHECK(gf_engine_swap_pending(e) == 0);
		CHECK(gf_engine_taps(e) == taps[i]);
		CHECK(strcmp(gf_engine_algo_name(e), algo[i]) == 0);
		/* Expected: (1-g) old + g new over the ramp, then new alone. */
		double num = 0.0, den = 0.0;
		for (uint32_t n = at; n < at + seg; n++) {
			double g = i > 0 ? ramp(n - at, xfade) : 1.0;
			for (uint32_t c = 0; c < ch; c++) {
				size_t k = (size_t)n * ch + c;
				double want = i > 0 ? (1.0 - g) * ref[i - 1][k] + g * ref[i][k] : ref[i][k];
				num += (y[k] - want) * (y[k] - want);
				den += want * want;
			}
		}
		double err = sqrt(num / den);
		printf("swap to %4u taps (%s), crossfade %4u, block %4u: rel L2 %.3g\n", taps[i], algo[i],
		       xfade, max_block, err);
		CHECK(err < 1e-6);
		gf_engine_reap(e);
	}
	struct gf_engine_stats st;
	gf_engine_get_stats(e, &st);
	CHECK(st.swaps == nf - 1);
	gf_engine_free(e);
	for (uint32_t i = 0; i < nf; i++) {
		gf_filter_set_free(fs[i]);
		free(ref[i]);
	}
	free(x);
	free(y);
}

/* Rejected swaps leave the running filter untouched. */
static void test_swap_rejects(void)
{
	const uint32_t ch = 2, frames = 4000, block = 100;
	struct gf_filter_set *a = gf_test_random_filter(ch, 300, &rng);
	struct gf_filter_set *b = gf_test_random_filter(ch, 200, &rng);
	struct gf_filter_set *longer = gf_test_random_filter(ch, 301, &rng);
	struct gf_filter_set *mono = gf_test_random_filter(1, 100, &rng);
	struct gf_filter_set *bad = gf_test_random_filter(ch, 50, &rng);
	bad->coeffs[57] = NAN;
	float *x = gf_test_noise((size_t)frames * ch, &rng);
	float *y = malloc((size_t)frames * ch * sizeof(float));
	double *ra = gf_test_reference_fs(x, frames, ch, a), *rb = gf_test_reference_fs(x, frames, ch, b);
	struct gf_engine *e = make(ch, block, 0, 0, GF_ALGO_AUTO, a); /* max_taps = initial 300 */
	struct gf_errbuf eb;
	feed(e, x, y, 0, 1000, ch, block);
	CHECK(gf_engine_swap(e, longer, &eb) == GF_E_TOOLONG);
	printf("rejected: %s\n", eb.msg);
	CHECK(gf_engine_swap(e, mono, &eb) == GF_E_INVAL);
	printf("rejected: %s\n", eb.msg);
	CHECK(gf_engine_swap(e, bad, &eb) == GF_E_NONFINITE);
	printf("rejected: %s\n", eb.msg);
	bad->coeffs[57] = INFINITY;
	CHECK(gf_engine_swap(e, bad, &eb) == GF_E_NONFINITE);
	CHECK(gf_engine_swap_pending(e) == 0);
	feed(e, x, y, 1000, 2000, ch, block);
	CHECK(gf_engine_taps(e) == 300);
	CHECK(gf_test_rel_l2_frames(y, ra, 0, 2000, ch) < 1e-6);
	/* A second swap while the first is pending: BUSY, and the first one wins. */
	CHECK_OK_EB(gf_engine_swap(e, b, &eb), &eb);
	CHECK(gf_engine_swap(e, a, &eb) == GF_E_BUSY);
	printf("rejected: %s\n", eb.msg);
	feed(e, x, y, 2000, frames, ch, block);
	CHECK(gf_engine_taps(e) == 200);
	CHECK(gf_test_rel_l2_frames(y, rb, 2000, frames, ch) < 1e-6);
	gf_engine_free(e); /* frees the retired instance too */
	gf_filter_set_free(a);
	gf_filter_set_free(b);
	gf_filter_set_free(longer);
	gf_filter_set_free(mono);
	gf_filter_set_free(bad);
	free(x);
	free(y);
	free(ra);
	free(rb);
}

/* ---- NaN policy ---------------------------------------------------------------- */

/*
 * A block with NaN/Inf input is muted and counted; the bad samples enter the
 * filter (and the history) as zeros, so the next block is already clean.
 */
static void test_nonfinite_input(enum gf_algo algo, uint32_t taps)
{
	const uint32_t ch = 3, block = 64, frames = 40 * block;
	struct gf_filter_set *fs = gf_test_random_filter(ch, taps, &rng);
	float *x = gf_test_noise((size_t)frames * ch, &rng);
	float *y = malloc((size_t)frames * ch * sizeof(float));
	struct gf_engine *e = make(ch, block, 0, 0, algo, fs);
	uint32_t bad1 = 10, bad2 = 25; /* blocks */
	for (uint32_t b = 0; b < frames / block; b++) {
		float *in = x + (size_t)b * block * ch;
		float keep[2] = {0};
		if (b == bad1 || b == bad2) {
			keep[0] = in[7 * ch + 1];
			keep[1] = in[30 * ch + 2];
			in[7 * ch + 1] = b == bad1 ? NAN : INFINITY;
			in[30 * ch + 2] = b == bad1 ? -INFINITY : NAN;
		}
		CHECK_OK(gf_engine_process(e, in, y + (size_t)b * block * ch, block));
		if (b == bad1 || b == bad2) {
			for (uint32_t i = 0; i < block * ch; i++)
				CHECK(y[(size_t)b * block * ch + i] == 0.0f);
			/* The reference sees zeros there, as the engine does. */
			(void)keep;
			in[7 * ch + 1] = 0.0f;
			in[30 * ch + 2] = 0.0f;
		}
	}
	double *r = gf_test_reference_fs(x, frames, ch, fs);
	double worst = 0.0;
	for (uint32_t b = 0; b < frames / block; b++) {
		if (b == bad1 || b == bad2)
			continue;
		double err = gf_test_rel_l2_frames(y, r, b * block, (b + 1) * block, ch);
		worst = fmax(worst, err);
	}
	struct gf_engine_stats st;
	gf_engine_get_stats(e, &st);
	printf("non-finite input, %s %u taps: %llu blocks muted, other blocks rel L2 <= %.3g\n",
	       gf_engine_algo_name(e), taps, (unsigned long long)st.nonfinite_blocks, worst);
	CHECK(st.nonfinite_blocks == 2);
	CHECK(worst < 1e-6);
	gf_engine_free(e);
	gf_filter_set_free(fs);
	free(x);
	free(y);
	free(r);
}

/* Finite input that overflows to Inf in the output is muted too. */
static void test_overflow_output(void)
{
	struct gf_filter_set *fs = gf_test_random_filter(1, 4, &rng);
	fs->coeffs[0] = 1e10f;
	struct gf_engine *e = make(1, 8, 0, 0, GF_ALGO_DIRECT, fs);
	float x[8] = {1e30f, 1e30f, 0, 0, 0, 0, 0, 0}, y[8];
	CHECK_OK(gf_engine_process(e, x, y, 8));
	for (int i = 0; i < 8; i++)
		CHECK(y[i] == 0.0f);
	struct gf_engine_stats st;
	gf_engine_get_stats(e, &st);
	CHECK(st.nonfinite_blocks == 1);
	memset(x, 0, sizeof(x));
	CHECK_OK(gf_engine_process(e, x, y,
				   8)); /* the overflowing samples are 8 frames old: out of the filter */
	for (int i = 0; i < 8; i++)
		CHECK(y[i] == 0.0f);
	gf_engine_get_stats(e, &st);
	CHECK(st.nonfinite_blocks == 1);
	gf_engine_free(e);
	gf_filter_set_free(fs);
}

/* ---- arguments -------------------------------------------------------------------- */

static void test_arguments(void)
{
	struct gf_filter_set *fs = gf_test_random_filter(2, 10, &rng);
	struct gf_engine *e = NULL;
	struct gf_errbuf eb;
	struct gf_engine_params p = {.backend = GF_BACKEND_CPU, .channels = 2, .max_block = 16};
	p.channels = 0;
	CHECK(gf_engine_new(&e, &p, fs, &eb) == GF_E_INVAL && !e);
	p.channels = 3;
	CHECK(gf_engine_new(&e, &p, fs, &eb) == GF_E_INVAL && !e);
	p.channels = 2;
	p.max_block = 0;
	CHECK(gf_engine_new(&e, &p, fs, &eb) == GF_E_INVAL && !e);
	p.max_block = 16;
	p.max_taps = 9;
	CHECK(gf_engine_new(&e, &p, fs, &eb) == GF_E_TOOLONG && !e);
	p.max_taps = 0;
	fs->coeffs[3] = NAN;
	CHECK(gf_engine_new(&e, &p, fs, &eb) == GF_E_NONFINITE && !e);
	fs->coeffs[3] = 0.5f;

	/* Forced CUDA without a usable device fails with the probe's reason. */
	char desc[256];
	int perr = gf_cuda_probe(0, desc, sizeof(desc));
	if (perr) {
		p.backend = GF_BACKEND_CUDA;
		CHECK(gf_engine_new(&e, &p, fs, &eb) == perr && !e);
		CHECK(strstr(eb.msg, desc) != NULL);
		printf("forced cuda: %s\n", eb.msg);
		p.backend = GF_BACKEND_AUTO;
		CHECK_OK_EB(gf_engine_new(&e, &p, fs, &eb), &eb);
		CHECK(strcmp(gf_engine_backend_name(e), "cpu") == 0);
		gf_engine_free(e);
		p.backend = GF_BACKEND_CPU;
	}

	CHECK_OK_EB(gf_engine_new(&e, &p, fs, &eb), &eb);
	float buf[2 * 17] = {0};
	CHECK(gf_engine_process(e, buf, buf, 0) == GF_E_INVAL);
	CHECK(gf_engine_process(e, buf, buf, 17) == GF_E_INVAL);
	CHECK(gf_engine_swap(e, NULL, &eb) == GF_E_INVAL);
	gf_engine_reap(e);
	gf_engine_free(e);
	gf_engine_free(NULL);
	gf_engine_reap(NULL);

	enum gf_backend_kind bk;
	enum gf_algo al;
	CHECK(gf_backend_parse("auto", &bk) == 0 && bk == GF_BACKEND_AUTO);
	CHECK(gf_backend_parse("cpu", &bk) == 0 && bk == GF_BACKEND_CPU);
	CHECK(gf_backend_parse("cuda", &bk) == 0 && bk == GF_BACKEND_CUDA);
	CHECK(gf_backend_parse("opencl", &bk) == GF_E_INVAL);
	CHECK(gf_backend_parse(NULL, &bk) == GF_E_INVAL);
	CHECK(gf_algo_parse("auto", &al) == 0 && al == GF_ALGO_AUTO);
	CHECK(gf_algo_parse("direct", &al) == 0 && al == GF_ALGO_DIRECT);
	CHECK(gf_algo_parse("fft", &al) == 0 && al == GF_ALGO_FFT);
	CHECK(gf_algo_parse("fast", &al) == GF_E_INVAL);
	gf_filter_set_free(fs);
}

/* ---- swaps racing the audio thread ----------------------------------------------- */

struct race {
	struct gf_engine *e;
	const float *x;
	float *y;
	uint32_t frames, block, ch;
	atomic_int done;
};

static void *race_audio(void *arg)
{
	struct race *r = arg;
	for (uint32_t pos = 0; pos < r->frames; pos += r->block) {
		CHECK_OK(gf_engine_process(r->e, r->x + (size_t)pos * r->ch, r->y + (size_t)pos * r->ch,
					   r->block));
		nanosleep(&(struct timespec){0, 20000}, NULL); /* paced like an audio thread */
	}
	atomic_store(&r->done, 1);
	return NULL;
}

static void test_race(void)
{
	const uint32_t ch = 2, block = 32, frames = 60000, extra = 1024;
	struct gf_filter_set *fs[4];
	static const uint32_t taps[] = {31, 500, 129, 2000};
	for (int i = 0; i < 4; i++)
		fs[i] = gf_test_random_filter(ch, taps[i], &rng);
	float *x = gf_test_noise((size_t)(frames + extra) * ch, &rng);
	float *y = malloc((size_t)(frames + extra) * ch * sizeof(float));
	struct race r = {.x = x, .y = y, .frames = frames, .block = block, .ch = ch};
	r.e = make(ch, block, 2000, 100, GF_ALGO_AUTO, fs[0]);
	pthread_t t;
	CHECK(pthread_create(&t, NULL, race_audio, &r) == 0);
	unsigned ok = 0, busy = 0, last = 0;
	for (int i = 1; !atomic_load(&r.done); i++) {
		struct gf_errbuf eb;
		int err = gf_engine_swap(r.e, fs[i % 4], &eb);
		CHECK(err == 0 || err == GF_E_BUSY);
		ok += err == 0;
		last = err == 0 ? (unsigned)i : last;
		busy += err == GF_E_BUSY;
		gf_engine_reap(r.e);
		nanosleep(&(struct timespec){0, (long)gf_test_rand_below(&rng, 300000)}, NULL);
	}
	CHECK(pthread_join(t, NULL) == 0);
	/* Finish a swap still pending, then the output must be the last filter's
	 * convolution over the whole input: the history survived every swap. */
	uint32_t pos = frames;
	for (; pos < frames + extra; pos += block)
		CHECK_OK(gf_engine_process(r.e, x + (size_t)pos * ch, y + (size_t)pos * ch, block));
	CHECK(gf_engine_swap_pending(r.e) == 0);
	struct gf_engine_stats st;
	gf_engine_get_stats(r.e, &st);
	printf("race: %u swaps accepted, %u busy, %llu completed\n", ok, busy, (unsigned long long)st.swaps);
	CHECK(ok > 0 && st.swaps == ok);
	const struct gf_filter_set *cur = fs[last % 4];
	CHECK(gf_engine_taps(r.e) == cur->taps);
	double num = 0.0, den = 0.0;
	for (uint32_t n = frames + extra - 500; n < frames + extra; n++) {
		for (uint32_t c = 0; c < ch; c++) {
			const float *h = gf_filter_set_channel(cur, c);
			double want = 0.0;
			for (uint32_t k = 0; k < cur->taps; k++)
				want += (double)h[k] * x[(size_t)(n - k) * ch + c];
			double d = y[(size_t)n * ch + c] - want;
			num += d * d;
			den += want * want;
		}
	}
	printf("race: after the last swap, rel L2 %.3g\n", sqrt(num / den));
	CHECK(sqrt(num / den) < 1e-6);
	gf_engine_free(r.e);
	for (int i = 0; i < 4; i++)
		gf_filter_set_free(fs[i]);
	free(x);
	free(y);
}

/* ---- the swap window --------------------------------------------------------- */

struct window_watch {
	struct gf_engine *e;
	atomic_int stop, seen_building;
};

static void *watch_window(void *arg)
{
	struct window_watch *w = arg;
	while (!atomic_load(&w->stop))
		if (gf_engine_swap_window(w->e) & GF_SWAP_BUILDING)
			atomic_store(&w->seen_building, 1);
	return NULL;
}

/*
 * gf_engine_swap_window() is what the live worker attributes late blocks to:
 * open through the build and priming on the control thread (seen from another
 * thread while the swap call runs), the take-up and the crossfade; shut before
 * and after, and after a rejected swap.
 */
static void test_swap_window(void)
{
	const uint32_t ch = 2, block = 128, taps = 65535, xfade = 500;
	struct gf_filter_set *a = gf_test_random_filter(ch, taps, &rng);
	struct gf_filter_set *b = gf_test_random_filter(ch, taps, &rng);
	struct gf_filter_set *too_long = gf_test_random_filter(ch, taps + 1, &rng);
	struct gf_engine *e = make(ch, block, taps, xfade, GF_ALGO_FFT, a);
	float *buf = calloc((size_t)block * ch, sizeof(float));
	CHECK(buf);
	for (int i = 0; i < 4; i++)
		CHECK_OK(gf_engine_process(e, buf, buf, block));
	CHECK(!gf_engine_swap_window(e));
	struct gf_errbuf eb;
	CHECK(gf_engine_swap(e, too_long, &eb) == GF_E_TOOLONG);
	CHECK(!gf_engine_swap_window(e));

	struct window_watch w = {.e = e};
	pthread_t t;
	CHECK(pthread_create(&t, NULL, watch_window, &w) == 0);
	int seen = 0;
	for (int attempt = 0; attempt < 20 && !seen; attempt++) {
		CHECK_OK_EB(gf_engine_swap(e, attempt % 2 ? a : b, &eb), &eb);
		CHECK(gf_engine_swap_window(e) == GF_SWAP_PUBLISHED && gf_engine_swap_pending(e));
		uint32_t fed = 0;
		while (gf_engine_swap_pending(e)) {
			CHECK(gf_engine_swap_window(e));
			CHECK_OK(gf_engine_process(e, buf, buf, block));
			fed += block;
			CHECK(fed <= xfade + 2 * block);
		}
		CHECK(!gf_engine_swap_window(e));
		gf_engine_reap(e);
		seen = atomic_load(&w.seen_building);
	}
	atomic_store(&w.stop, 1);
	CHECK(pthread_join(t, NULL) == 0);
	CHECK(seen); /* a 65535-tap build and priming takes milliseconds: the watcher sees it */
	printf("swap window: open from the build to the end of the crossfade\n");
	gf_engine_free(e);
	gf_filter_set_free(a);
	gf_filter_set_free(b);
	gf_filter_set_free(too_long);
	free(buf);
}

int main(void)
{
	rng = gf_test_seed("test_engine");
	test_arguments();
	test_accuracy_and_flush(GF_ALGO_DIRECT, 2, 300, 128);
	test_accuracy_and_flush(GF_ALGO_FFT, 3, 300, 128);
	test_accuracy_and_flush(GF_ALGO_FFT, 1, 2000, 700);
	test_accuracy_and_flush(GF_ALGO_DIRECT, 8, 1, 5);
	test_accuracy_and_flush(GF_ALGO_AUTO, 2, 5000, 4096);
	test_swaps(0, 256);
	test_swaps(1000, 128);
	test_swaps(50, 333);
	test_swap_rejects();
	test_nonfinite_input(GF_ALGO_DIRECT, 100);
	test_nonfinite_input(GF_ALGO_FFT, 1000);
	test_overflow_output();
	test_race();
	test_swap_window();
	printf("test_engine: OK\n");
	return 0;
}
