/*
 * Direct convolution on the CPU, accumulated in double: the oracle-quality
 * path, and the fastest for short filters.
 *
 * Each channel keeps a linear buffer [taps-1 history | new block]; the history
 * slides forward with a memmove only when the buffer is full (amortised O(1)).
 * A mixer (filter_set.h) keeps one buffer per input and convolves per path;
 * an output of several paths sums their float results.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_direct.h"
#include "cpu_tune.h"

struct gf_cpu_direct {
	uint32_t inputs, outputs, paths, taps, max_block;
	uint32_t span;	     /* floats per input buffer */
	uint32_t w;	     /* index of the oldest of the taps-1 history samples */
	double *hr;	     /* paths x taps, reversed: hr[m] = h[taps-1-m] */
	double *buf;	     /* inputs x span, the input widened once */
	uint32_t *path_in;   /* per path: its input */
	uint32_t *path_out;  /* per path: its output */
	float *mix;	     /* max_block: one path's output, for outputs of several paths */
	unsigned char *seen; /* outputs: written by a path in this call */
	void (*kernel)(const double *hr, uint32_t taps, const double *x, float *y, uint32_t ys,
		       uint32_t frames);
};

typedef double v4d __attribute__((vector_size(32)));

/* Unaligned view of four doubles; a macro, so no vector-typed ABI between clones. */
typedef double v4d_u __attribute__((vector_size(32), aligned(8), may_alias));
#define load4(p) (*(const v4d_u *)(p))

/*
 * y[n*ys] = sum_m hr[m] * x[n+m] for n < frames: x[n + taps-1] is input frame n.
 * Thirty-two outputs at a time in eight independent accumulators, enough to
 * cover the latency of the multiply-adds; the input is kept in double so the
 * inner loop is loads and multiply-adds only.
 */
static inline __attribute__((always_inline)) void
direct_body(const double *hr, uint32_t taps, const double *x, float *y, uint32_t ys, uint32_t frames)
{
	uint32_t n = 0;
	for (; n + 32 <= frames; n += 32) {
		v4d a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0}, a5 = {0}, a6 = {0}, a7 = {0};
		const double *xp = x + n;
		for (uint32_t m = 0; m < taps; m++) {
			double h = hr[m];
			const double *p = xp + m;
			a0 += h * load4(p);
			a1 += h * load4(p + 4);
			a2 += h * load4(p + 8);
			a3 += h * load4(p + 12);
			a4 += h * load4(p + 16);
			a5 += h * load4(p + 20);
			a6 += h * load4(p + 24);
			a7 += h * load4(p + 28);
		}
		for (int j = 0; j < 4; j++) {
			y[(size_t)(n + j) * ys] = (float)a0[j];
			y[(size_t)(n + 4 + j) * ys] = (float)a1[j];
			y[(size_t)(n + 8 + j) * ys] = (float)a2[j];
			y[(size_t)(n + 12 + j) * ys] = (float)a3[j];
			y[(size_t)(n + 16 + j) * ys] = (float)a4[j];
			y[(size_t)(n + 20 + j) * ys] = (float)a5[j];
			y[(size_t)(n + 24 + j) * ys] = (float)a6[j];
			y[(size_t)(n + 28 + j) * ys] = (float)a7[j];
		}
	}
	for (; n + 4 <= frames; n += 4) {
		v4d a0 = {0};
		for (uint32_t m = 0; m < taps; m++)
			a0 += hr[m] * load4(x + n + m);
		for (int j = 0; j < 4; j++)
			y[(size_t)(n + j) * ys] = (float)a0[j];
	}
	for (; n < frames; n++) {
		double acc = 0.0;
		for (uint32_t m = 0; m < taps; m++)
			acc += hr[m] * x[n + m];
		y[(size_t)n * ys] = (float)acc;
	}
}

static void direct_base(const double *hr, uint32_t taps, const double *x, float *y, uint32_t ys,
			uint32_t frames)
{
	direct_body(hr, taps, x, y, ys, frames);
}

#ifdef GF_CPU_X86
GF_TARGET_AVX2 static void direct_avx2(const double *hr, uint32_t taps, const double *x, float *y,
				       uint32_t ys, uint32_t frames)
{
	direct_body(hr, taps, x, y, ys, frames);
}
#endif

double gf_cpu_direct_cost(uint32_t taps)
{
	/* Nanoseconds, measured with bench_cpu (AVX2 core). */
	return 0.062 * taps + 1.5;
}

int gf_cpu_direct_new(struct gf_cpu_direct **out, const struct gf_filter_set *fs, uint32_t max_block,
		      struct gf_errbuf *eb)
{
	*out = NULL;
	struct gf_cpu_direct *d = calloc(1, sizeof(*d));
	if (!d)
		return GF_E_NOMEM;
	d->inputs = gf_filter_set_inputs(fs);
	d->outputs = gf_filter_set_outputs(fs);
	d->paths = fs->channels;
	d->taps = fs->taps;
	d->max_block = max_block;
	d->kernel = direct_base;
#ifdef GF_CPU_X86
	if (gf_cpu_use_avx2())
		d->kernel = direct_avx2;
#endif
	uint32_t room = max_block > fs->taps ? max_block : fs->taps;
	d->span = fs->taps - 1 + room;
	d->hr = malloc((size_t)fs->channels * fs->taps * sizeof(double));
	d->buf = calloc((size_t)d->inputs * d->span, sizeof(double));
	d->path_in = malloc((size_t)d->paths * sizeof(uint32_t));
	d->path_out = malloc((size_t)d->paths * sizeof(uint32_t));
	d->mix = malloc((size_t)max_block * sizeof(float));
	d->seen = malloc(d->outputs);
	if (!d->hr || !d->buf || !d->path_in || !d->path_out || !d->mix || !d->seen) {
		gf_errbuf_set(eb, "cpu direct: out of memory for %u channels x %u taps", fs->channels,
			      fs->taps);
		gf_cpu_direct_free(d);
		return GF_E_NOMEM;
	}
	for (uint32_t c = 0; c < fs->channels; c++) {
		const float *h = gf_filter_set_channel(fs, c);
		double *hr = d->hr + (size_t)c * fs->taps;
		for (uint32_t m = 0; m < fs->taps; m++)
			hr[m] = h[fs->taps - 1 - m];
		d->path_in[c] = gf_filter_set_path_in(fs, c);
		d->path_out[c] = gf_filter_set_path_out(fs, c);
	}
	*out = d;
	return 0;
}

void gf_cpu_direct_free(struct gf_cpu_direct *d)
{
	if (!d)
		return;
	free(d->hr);
	free(d->buf);
	free(d->path_in);
	free(d->path_out);
	free(d->mix);
	free(d->seen);
	free(d);
}

void gf_cpu_direct_prime(struct gf_cpu_direct *d, const float *history, uint32_t frames)
{
	uint32_t keep = d->taps - 1, ch = d->inputs;
	uint32_t n = frames < keep ? frames : keep;
	const float *src = history + (size_t)(frames - n) * ch;
	memset(d->buf, 0, (size_t)ch * d->span * sizeof(double));
	d->w = 0;
	for (uint32_t c = 0; c < ch; c++) {
		double *b = d->buf + (size_t)c * d->span + (keep - n);
		for (uint32_t i = 0; i < n; i++)
			b[i] = src[(size_t)i * ch + c];
	}
}

/* Each path into its output: the first writes it, later ones add; outputs of none are silent. */
static void run_paths(struct gf_cpu_direct *d, float *out, uint32_t frames)
{
	uint32_t nout = d->outputs;
	memset(d->seen, 0, nout);
	for (uint32_t p = 0; p < d->paths; p++) {
		const double *x = d->buf + (size_t)d->path_in[p] * d->span + d->w;
		const double *hr = d->hr + (size_t)p * d->taps;
		uint32_t o = d->path_out[p];
		if (!d->seen[o]) {
			d->kernel(hr, d->taps, x, out + o, nout, frames);
			d->seen[o] = 1;
			continue;
		}
		d->kernel(hr, d->taps, x, d->mix, 1, frames);
		for (uint32_t i = 0; i < frames; i++)
			out[(size_t)i * nout + o] += d->mix[i];
	}
	for (uint32_t o = 0; o < nout; o++)
		for (uint32_t i = 0; !d->seen[o] && i < frames; i++)
			out[(size_t)i * nout + o] = 0.0f;
}

void gf_cpu_direct_process(struct gf_cpu_direct *d, const float *in, float *out, uint32_t frames)
{
	uint32_t keep = d->taps - 1, ch = d->inputs;
	if (d->w + keep + frames > d->span) {
		for (uint32_t c = 0; c < ch; c++) {
			double *b = d->buf + (size_t)c * d->span;
			memmove(b, b + d->w, (size_t)keep * sizeof(double));
		}
		d->w = 0;
	}
	/* Every input column is copied in before any output is written, so in may alias out. */
	for (uint32_t c = 0; c < ch; c++) {
		double *x = d->buf + (size_t)c * d->span + d->w;
		for (uint32_t i = 0; i < frames; i++)
			x[keep + i] = in[(size_t)i * ch + c];
	}
	run_paths(d, out, frames);
	d->w += frames;
}
