/*
 * The mixer (N inputs to M outputs, a FIR per path) on the CPU backend:
 * each output against the double reference's sum over its paths, for
 * several N, M, path layouts, block sizes, tap counts and both algorithms,
 * in random call sizes (in place where the buffer allows); a plain set and
 * the identity mixer give the same bits; outputs of no path are silent;
 * swaps between mixers crossfade and are exact afterwards; swaps that change
 * the channel counts and paths out of range are refused. On a backend of plain
 * sets (the stand-in for CUDA, which refuses a mixer as cu_create does) the
 * engine runs a mixer as its paths, gathering and summing around it: the same
 * output, through swaps and a reset with history.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "engine_test.h"
#include "fake_backend.h"
#include "testutil.h"

static uint64_t rng;

/* A mixer of @p paths random paths (in[p], out[p]; NULL: random channels), decaying taps. */
static struct gf_filter_set *mixer(uint32_t nin, uint32_t nout, uint32_t paths, const uint32_t *in,
				   const uint32_t *out, uint32_t taps)
{
	struct gf_filter_set *fs;
	CHECK_OK(gf_filter_set_new_mixer(&fs, nin, nout, paths, taps));
	for (uint32_t p = 0; p < paths; p++) {
		fs->path_in[p] = in ? in[p] : gf_test_rand_below(&rng, nin);
		fs->path_out[p] = out ? out[p] : gf_test_rand_below(&rng, nout);
		gf_test_fill_decaying_taps(gf_filter_set_channel(fs, p), taps, &rng);
		if (gf_test_rand_below(&rng, 2)) /* polarity */
			for (uint32_t k = 0; k < taps; k++)
				gf_filter_set_channel(fs, p)[k] *= -1.0f;
	}
	return fs;
}

/* Frames [from, to) through @p e in random call sizes; in place where the buffer can hold both. */
static void feed(struct gf_engine *e, const float *x, float *y, uint32_t from, uint32_t to, uint32_t nin,
		 uint32_t nout, uint32_t max_block, float *work)
{
	uint32_t pos = from;
	while (pos < to) {
		uint32_t n = 1 + gf_test_rand_below(&rng, max_block);
		if (n > to - pos)
			n = to - pos;
		const float *src = x + (size_t)pos * nin;
		float *dst = y + (size_t)pos * nout;
		if (gf_test_rand_below(&rng, 2)) { /* in == out: a buffer of the larger size */
			memcpy(work, src, (size_t)n * nin * sizeof(float));
			CHECK_OK(gf_engine_process(e, work, work, n));
			memcpy(dst, work, (size_t)n * nout * sizeof(float));
		} else {
			CHECK_OK(gf_engine_process(e, src, dst, n));
		}
		pos += n;
	}
}

static struct gf_engine *engine_for(const struct gf_filter_set *fs, uint32_t max_block, uint32_t max_taps,
				    uint32_t xfade, enum gf_algo algo)
{
	return gf_test_cpu_engine(gf_filter_set_inputs(fs), max_block, max_taps, xfade, algo, 0, fs);
}

/* The mixer's output against the reference; outputs without a path exactly zero. */
static void check_mixer(const struct gf_filter_set *fs, enum gf_algo algo, uint32_t max_block)
{
	uint32_t nin = fs->inputs, nout = fs->outputs, frames = 4000;
	uint32_t wide = nin > nout ? nin : nout;
	float *x = gf_test_noise((size_t)frames * nin, &rng);
	float *y = malloc((size_t)frames * nout * sizeof(float));
	float *work = malloc((size_t)max_block * wide * sizeof(float));
	CHECK(x && y && work);
	struct gf_engine *e = engine_for(fs, max_block, 0, 0, algo);
	CHECK(gf_engine_out_channels(e) == nout);
	CHECK(strcmp(gf_engine_backend_name(e), "cpu") == 0);
	feed(e, x, y, 0, frames, nin, nout, max_block, work);
	double *ref = gf_test_reference_mix(x, frames, fs);
	double tol = algo == GF_ALGO_DIRECT ? 1e-6 : 2e-5;
	double err = gf_test_rel_l2(y, ref, (size_t)frames * nout);
	if (!(err < tol))
		fprintf(stderr, "mixer %u->%u, %u paths, %u taps, block %u, %s: rel L2 %g\n", nin, nout,
			fs->channels, fs->taps, max_block, gf_engine_algo_name(e), err);
	CHECK(err < tol);
	for (uint32_t o = 0; o < nout; o++) {
		int used = 0;
		for (uint32_t p = 0; p < fs->channels; p++)
			used |= fs->path_out[p] == o;
		for (uint32_t n = 0; !used && n < frames; n++)
			CHECK(y[(size_t)n * nout + o] == 0.0f);
	}
	gf_engine_free(e);
	free(ref);
	free(x);
	free(y);
	free(work);
}

static void test_shapes(void)
{
	static const uint32_t taps[] = {1, 7, 300, 3000};
	static const uint32_t blocks[] = {1, 64, 333, 1024};
	/* Crossover 2 -> 4: left to 0 and 1, right to 2 and 3. */
	static const uint32_t xo_in[] = {0, 0, 1, 1}, xo_out[] = {0, 1, 2, 3};
	/* M/S 2 -> 2, all four paths; crossfeed; 1 -> 6 with output 5 unused. */
	static const uint32_t ms_in[] = {0, 1, 0, 1}, ms_out[] = {0, 0, 1, 1};
	static const uint32_t up_in[] = {0, 0, 0, 0, 0}, up_out[] = {0, 1, 2, 3, 4};
	for (int a = 0; a < 2; a++) {
		enum gf_algo algo = a ? GF_ALGO_FFT : GF_ALGO_DIRECT;
		for (size_t t = 0; t < sizeof(taps) / sizeof(taps[0]); t++) {
			uint32_t b = blocks[(t + (size_t)a) % 4];
			struct gf_filter_set *sets[] = {
				mixer(2, 4, 4, xo_in, xo_out, taps[t]),
				mixer(2, 2, 4, ms_in, ms_out, taps[t]),
				mixer(1, 6, 5, up_in, up_out, taps[t]),
				mixer(3, 2, 7, NULL, NULL, taps[t]),
				mixer(4, 3, 3, NULL, NULL, taps[t]),
			};
			for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++) {
				check_mixer(sets[s], algo, b);
				gf_filter_set_free(sets[s]);
			}
		}
	}
}

/* A plain set and the mixer of paths c -> c compute the same bits. */
static void test_identity_bits(enum gf_algo algo, uint32_t ch, uint32_t taps, uint32_t max_block)
{
	struct gf_filter_set *plain = gf_test_random_filter(ch, taps, &rng), *mix;
	CHECK_OK(gf_filter_set_new_mixer(&mix, ch, ch, ch, taps));
	memcpy(mix->coeffs, plain->coeffs, (size_t)ch * taps * sizeof(float));
	for (uint32_t c = 0; c < ch; c++)
		mix->path_in[c] = mix->path_out[c] = c;
	uint32_t frames = 5000;
	float *x = gf_test_noise((size_t)frames * ch, &rng);
	float *y1 = malloc((size_t)frames * ch * sizeof(float)),
	      *y2 = malloc((size_t)frames * ch * sizeof(float));
	CHECK(x && y1 && y2);
	struct gf_engine *e1 = engine_for(plain, max_block, 0, 0, algo),
			 *e2 = engine_for(mix, max_block, 0, 0, algo);
	for (uint32_t pos = 0; pos < frames;) {
		uint32_t n = 1 + gf_test_rand_below(&rng, max_block);
		n = n < frames - pos ? n : frames - pos;
		CHECK_OK(gf_engine_process(e1, x + (size_t)pos * ch, y1 + (size_t)pos * ch, n));
		CHECK_OK(gf_engine_process(e2, x + (size_t)pos * ch, y2 + (size_t)pos * ch, n));
		pos += n;
	}
	CHECK(memcmp(y1, y2, (size_t)frames * ch * sizeof(float)) == 0);
	gf_engine_free(e1);
	gf_engine_free(e2);
	gf_filter_set_free(plain);
	gf_filter_set_free(mix);
	free(x);
	free(y1);
	free(y2);
}

/* What a swap case allocates: mixers A and B, their references, the input, output and work. */
static void free_swap_case(struct gf_filter_set *a, struct gf_filter_set *b, double *ra, double *rb, float *x,
			   float *y, float *work)
{
	gf_filter_set_free(a);
	gf_filter_set_free(b);
	free(ra);
	free(rb);
	free(x);
	free(y);
	free(work);
}

/* Mixer A, then a crossfaded swap to mixer B (other paths, taps, algorithm): once the
 * ramp is over the output is B's full convolution of the whole input. */
static void test_swap(uint32_t xfade, uint32_t max_block)
{
	static const uint32_t a_in[] = {0, 1, 0}, a_out[] = {0, 2, 3};
	struct gf_filter_set *a = mixer(2, 4, 3, a_in, a_out, 500), *b = mixer(2, 4, 6, NULL, NULL, 2500);
	uint32_t frames = 12000, cut = 4000 + gf_test_rand_below(&rng, 1000);
	float *x = gf_test_noise((size_t)frames * 2, &rng), *y = malloc((size_t)frames * 4 * sizeof(float));
	float *work = malloc((size_t)max_block * 4 * sizeof(float));
	CHECK(x && y && work);
	struct gf_engine *e = engine_for(a, max_block, 4000, xfade, GF_ALGO_AUTO);
	feed(e, x, y, 0, cut, 2, 4, max_block, work);
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_engine_swap(e, b, &eb), &eb);
	feed(e, x, y, cut, frames, 2, 4, max_block, work);
	CHECK(!gf_engine_swap_pending(e));
	struct gf_engine_stats st;
	gf_engine_get_stats(e, &st);
	CHECK(st.swaps == 1);
	double *ra = gf_test_reference_mix(x, frames, a), *rb = gf_test_reference_mix(x, frames, b);
	CHECK(gf_test_rel_l2_frames(y, ra, 0, cut, 4) < 2e-5);
	/* Taken up by the first call after the swap: from the cut, (1 - g) A + g B with the engine's
	 * raised cosine over xfade frames (docs/engine.md), then B alone, as for any filter set. */
	double *want = malloc((size_t)frames * 4 * sizeof(double));
	CHECK(want);
	for (uint32_t n = 0; n < frames; n++) {
		double g = n < cut	      ? 0.0
			   : n - cut >= xfade ? 1.0
					      : 0.5 - 0.5 * cos(M_PI * (n - cut + 0.5) / xfade);
		for (uint32_t o = 0; o < 4; o++)
			want[(size_t)n * 4 + o] =
				(1.0 - g) * ra[(size_t)n * 4 + o] + g * rb[(size_t)n * 4 + o];
	}
	double e_fade = gf_test_rel_l2_frames(y, want, cut, frames, 4);
	printf("  swap 2->4 mixers, crossfade %u, block %u: rel L2 %.3g from the cut on\n", xfade, max_block,
	       e_fade);
	CHECK(e_fade < 2e-5);
	free(want);
	gf_engine_free(e);
	free_swap_case(a, b, ra, rb, x, y, work);
}

/* What the engine refuses: other channel counts, paths out of range. */
static void test_refusals(void)
{
	static const uint32_t in[] = {0, 1}, out[] = {0, 3};
	struct gf_filter_set *m = mixer(2, 4, 2, in, out, 64);
	struct gf_engine *e = engine_for(m, 64, 0, 0, GF_ALGO_AUTO);
	struct gf_errbuf eb = {{0}};
	struct gf_filter_set *m3 = mixer(2, 3, 2, in, (const uint32_t[]){0, 2}, 64);
	CHECK(gf_engine_swap(e, m3, &eb) == GF_E_INVAL); /* 3 outputs, the stream has 4 */
	CHECK(strstr(eb.msg, "output channels"));
	struct gf_filter_set *plain = gf_test_random_filter(2, 64, &rng);
	CHECK(gf_engine_swap(e, plain, &eb) == GF_E_INVAL); /* a plain set writes 2 */
	struct gf_filter_set *bad = mixer(2, 4, 2, in, out, 64);
	bad->path_out[1] = 4;
	CHECK(gf_engine_swap(e, bad, &eb) == GF_E_INVAL);
	CHECK(strstr(eb.msg, "out of range"));
	gf_engine_free(e);

	gf_filter_set_free(m);
	gf_filter_set_free(m3);
	gf_filter_set_free(plain);
	gf_filter_set_free(bad);
}
/* The engine on the GPU's stand-in: a mixer runs as its paths there, the same output as the
 * reference, through a crossfaded swap to another mixer and a reset with history (the prime of
 * the paths). */
static void test_plain_backend(uint32_t max_block)
{
	static const uint32_t a_in[] = {0, 0, 1, 1}, a_out[] = {0, 1, 2, 3};
	struct gf_filter_set *a = mixer(2, 4, 4, a_in, a_out, 700), *b = mixer(2, 4, 5, NULL, NULL, 1500);
	uint32_t frames = 16000, cut = 5000, xfade = 256;
	float *x = gf_test_noise((size_t)frames * 2, &rng), *y = malloc((size_t)frames * 4 * sizeof(float));
	float *work = malloc((size_t)max_block * 4 * sizeof(float));
	CHECK(x && y && work);
	gf_engine_test_backends(&fake_backend, NULL);
	fake_reset();
	struct gf_engine_params p = {.backend = GF_BACKEND_CUDA,
				     .channels = 2,
				     .max_block = max_block,
				     .max_taps = 2000,
				     .crossfade_frames = xfade};
	struct gf_errbuf eb = {{0}};
	struct gf_engine *e;
	CHECK_OK_EB(gf_engine_new(&e, &p, a, &eb), &eb);
	CHECK(strcmp(gf_engine_backend_name(e), "cpu") != 0 && g_fake.creates == 1);
	CHECK(gf_engine_out_channels(e) == 4);
	feed(e, x, y, 0, cut, 2, 4, max_block, work);
	CHECK_OK_EB(gf_engine_swap(e, b, &eb), &eb); /* primed with the paths' history */
	feed(e, x, y, cut, frames, 2, 4, max_block, work);
	CHECK(g_fake.creates == 2 && g_fake.primes >= 1);
	double *ra = gf_test_reference_mix(x, frames, a), *rb = gf_test_reference_mix(x, frames, b);
	double e_a = gf_test_rel_l2_frames(y, ra, 0, cut, 4);
	double e_b = gf_test_rel_l2_frames(y, rb, cut + xfade, frames, 4);
	printf("  mixer 2->4 on a backend of plain sets, block %u: rel L2 %.3g before the swap, %.3g "
	       "after\n",
	       max_block, e_a, e_b);
	CHECK(e_a < 2e-5 && e_b < 2e-5);

	/* A reset with history: the paths primed from the newest frames, then exact again. */
	CHECK_OK_EB(gf_engine_reset_history(e, x, cut, &eb), &eb);
	feed(e, x, y, cut, frames, 2, 4, max_block, work);
	CHECK(gf_test_rel_l2_frames(y, rb, cut, frames, 4) < 2e-5);
	gf_engine_free(e);
	gf_engine_test_backends(NULL, NULL);
	free_swap_case(a, b, ra, rb, x, y, work);
}

int main(void)
{
	rng = gf_test_seed("test_mixer");
	test_shapes();
	test_identity_bits(GF_ALGO_FFT, 3, 3000, 500);
	test_identity_bits(GF_ALGO_FFT, 2, 200, 37);
	test_identity_bits(GF_ALGO_DIRECT, 2, 100, 64);
	test_swap(0, 256);
	test_swap(1000, 128);
	test_swap(300, 77);
	test_refusals();
	test_plain_backend(256);
	test_plain_backend(97);
	printf("test_mixer: OK\n");
	return 0;
}
