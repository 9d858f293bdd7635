/*
 * Zero-latency, uniformly partitioned overlap-save convolution on the CPU
 * (FFTW single precision).
 *
 * The filter is cut into K partitions of P taps; H_j is the 2P-point spectrum
 * of partition j. The input is cut into segments of P frames; X_s is the
 * spectrum of [segment s-1 | segment s]. Output segment s is the last half of
 *     IFFT( H_0 X_s + A_s ),   A_s = sum_{j>=1} H_j X_{s-j}.
 * A_s (the "tail") only involves completed segments. Its terms j >= 2 are
 * known while segment s-1 is still arriving, so they are summed a share per
 * call, in proportion to the frames received (partitions 2..K-1 in order);
 * the segment's completion adds H_1 X_{s-1}. So no call pays for the whole
 * tail: a live block's cost is flat, not one spike per segment, and the sum's
 * order (hence its rounding) does not depend on the call sizes. The head
 * term H_0 X_s needs segment s itself,
 * which a call may deliver only partly. Per call and channel, in chunks that
 * never cross a segment edge:
 *   - a chunk that completes the segment: X_s = FFT, one IFFT of H_0 X_s + A_s,
 *     then X_s enters the frequency-domain delay line and A_{s+1} is summed;
 *   - a partial chunk: either the same FFT/IFFT pair on the partly filled
 *     segment (samples after the fill point only affect later outputs), or a
 *     direct convolution with the P head taps plus IFFT(A_s) computed once per
 *     segment; the cost model picks per call.
 * So any call size from 1 frame gives the exact causal convolution.
 *
 * A mixer (filter_set.h) is the same with the FIRs as paths: each input
 * channel is transformed once (its X_s and delay line are shared by every
 * path that reads it), each output sums H_j X over its paths into one
 * spectrum (head and tail) and takes one inverse transform. A plain set is
 * the mixer whose path c runs from input c to output c.
 */
#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_fft.h"
#include "cpu_fft_cost.h"
#include "cpu_fft_kernels.h"
#include "cpu_tune.h"
#include "fft_wisdom.h"
#include "memlimit.h"

/* One input channel: transformed once, whatever the paths that read it. */
struct fft_in {
	float *tbuf;		/* 2P: [previous segment | current segment] */
	float *fdl_re, *fdl_im; /* K slots of nbp bins: X of the latest segments */
	float *x_re, *x_im;	/* nbp: spectrum of a partial segment */
};

/* One path (a FIR): input in to output out. */
struct fft_path {
	uint32_t in;
	float *h_re, *h_im; /* K x nbp: partition spectra, scaled by 1/2P */
	float *head_r;	    /* Lh head taps reversed, for the direct head */
};

/* One output channel: the sum of its paths, paths[first .. first + n). */
struct fft_out {
	uint32_t first, n;
	float *acc_re, *acc_im; /* nbp: A_s of the current segment */
	float *nxt_re, *nxt_im; /* nbp: A_{s+1}, partitions 2..tail_next-1 summed so far */
	float *tail;		/* P: last half of IFFT(A_s), valid when tail_ok */
};

struct gf_cpu_fft {
	uint32_t inputs, outputs, paths, taps, max_block;
	uint32_t P, K, N;   /* partition frames, partitions, FFT size 2P */
	uint32_t nb, nbp;   /* bins P+1, padded to a multiple of 8 */
	uint32_t lh;	    /* head taps used by the direct head: min(taps, P) */
	uint32_t pos;	    /* frames of the current segment received */
	uint32_t newest;    /* FDL slot of the newest spectrum */
	uint32_t tail_next; /* next partition of A_{s+1} to sum (2..K) */
	uint32_t terms_max; /* the most tail partitions one process() call summed (per channel) */
	int tail_ok;
	enum gf_cpu_head head_mode;
	double cost_head_tap, cost_fft_pair, cost_tail; /* per-call head choice */
	const struct gf_fft_kernels *k;

	fftwf_plan r2c, c2r;
	float *time;	     /* 2P */
	fftwf_complex *spec; /* P+1 */
	float *z_re, *z_im;  /* nbp: H_0 X + A */
	float *head_y;	     /* P: one path's direct head, for outputs of several paths */
	struct fft_in *in;
	struct fft_path *path; /* grouped by output, in the set's order within one */
	struct fft_out *out;
};

/* ---- transforms ------------------------------------------------------------- */

static void forward(struct gf_cpu_fft *f, float *t, float *re, float *im)
{
	fftwf_execute_dft_r2c(f->r2c, t, f->spec);
	for (uint32_t k = 0; k < f->nb; k++) {
		re[k] = f->spec[k][0];
		im[k] = f->spec[k][1];
	}
}

static void inverse(struct gf_cpu_fft *f, const float *re, const float *im)
{
	for (uint32_t k = 0; k < f->nb; k++) {
		f->spec[k][0] = re[k];
		f->spec[k][1] = im[k];
	}
	fftwf_execute_dft_c2r(f->c2r, f->spec, f->time);
}

static uint32_t slot_back(const struct gf_cpu_fft *f, uint32_t back)
{
	return (f->newest + f->K - back % f->K) % f->K;
}

/* acc += H_j X over output @p o's paths, X being the spectrum @p back slots
 * before the newest. */
static void tail_term(struct gf_cpu_fft *f, float *acc_re, float *acc_im, const struct fft_out *o, uint32_t j,
		      uint32_t back)
{
	size_t sx = (size_t)slot_back(f, back) * f->nbp, sh = (size_t)j * f->nbp;
	for (uint32_t p = o->first; p < o->first + o->n; p++) {
		const struct fft_path *h = &f->path[p];
		const struct fft_in *x = &f->in[h->in];
		f->k->cmac(acc_re, acc_im, h->h_re + sh, h->h_im + sh, x->fdl_re + sx, x->fdl_im + sx,
			   f->nbp);
	}
}

/* A_{s+1} = sum_{j=1}^{K-1} H_j X_{s+1-j}, X_s being the newest spectrum, in
 * the streaming order: j = 2..K-1, then j = 1 (priming gives what streaming would). */
static void sum_tail(struct gf_cpu_fft *f, struct fft_out *o)
{
	memset(o->acc_re, 0, f->nbp * sizeof(float));
	memset(o->acc_im, 0, f->nbp * sizeof(float));
	for (uint32_t j = 2; j < f->K; j++)
		tail_term(f, o->acc_re, o->acc_im, o, j, j - 1);
	tail_term(f, o->acc_re, o->acc_im, o, 1, 0);
}

/* While segment s arrives (X_{s-1} the newest): sum A_{s+1}'s partitions up
 * to the share of @p pos frames received, j - 2 slots back from the newest.
 * @return the partitions summed per path */
static uint32_t tail_advance(struct gf_cpu_fft *f, uint32_t pos)
{
	uint32_t upto = 2 + (uint32_t)((uint64_t)(f->K - 2) * pos / f->P), from = f->tail_next;
	for (uint32_t c = 0; c < f->outputs; c++)
		for (uint32_t j = from; j < upto; j++)
			tail_term(f, f->out[c].nxt_re, f->out[c].nxt_im, &f->out[c], j, j - 2);
	f->tail_next = upto;
	return upto - from;
}

/* Segment s completed and X_s is the newest: add H_1 X_s; A_{s+1} becomes current. */
static void tail_complete(struct gf_cpu_fft *f)
{
	for (uint32_t c = 0; c < f->outputs; c++) {
		struct fft_out *ch = &f->out[c];
		tail_term(f, ch->nxt_re, ch->nxt_im, ch, 1, 0);
		float *re = ch->acc_re, *im = ch->acc_im;
		ch->acc_re = ch->nxt_re;
		ch->acc_im = ch->nxt_im;
		ch->nxt_re = re;
		ch->nxt_im = im;
		memset(ch->nxt_re, 0, f->nbp * sizeof(float));
		memset(ch->nxt_im, 0, f->nbp * sizeof(float));
	}
	f->tail_next = 2;
}

/* ---- construction ------------------------------------------------------------ */

static void *falloc(size_t floats)
{
	void *p = fftwf_malloc((floats ? floats : 1) * sizeof(float));
	if (p)
		memset(p, 0, (floats ? floats : 1) * sizeof(float));
	return p;
}

static int in_alloc(struct gf_cpu_fft *f, struct fft_in *c)
{
	size_t kn = (size_t)f->K * f->nbp;
	c->tbuf = falloc(f->N);
	c->fdl_re = falloc(kn);
	c->fdl_im = falloc(kn);
	c->x_re = falloc(f->nbp);
	c->x_im = falloc(f->nbp);
	return c->tbuf && c->fdl_re && c->fdl_im && c->x_re && c->x_im ? 0 : GF_E_NOMEM;
}

static void in_free(struct fft_in *c)
{
	fftwf_free(c->tbuf);
	fftwf_free(c->fdl_re);
	fftwf_free(c->fdl_im);
	fftwf_free(c->x_re);
	fftwf_free(c->x_im);
}

static int path_alloc(struct gf_cpu_fft *f, struct fft_path *c)
{
	size_t kn = (size_t)f->K * f->nbp;
	c->h_re = falloc(kn);
	c->h_im = falloc(kn);
	c->head_r = falloc(f->lh);
	return c->h_re && c->h_im && c->head_r ? 0 : GF_E_NOMEM;
}

static void path_free(struct fft_path *c)
{
	fftwf_free(c->h_re);
	fftwf_free(c->h_im);
	fftwf_free(c->head_r);
}

static int out_alloc(struct gf_cpu_fft *f, struct fft_out *c)
{
	c->acc_re = falloc(f->nbp);
	c->acc_im = falloc(f->nbp);
	c->nxt_re = falloc(f->nbp);
	c->nxt_im = falloc(f->nbp);
	c->tail = falloc(f->P);
	return c->acc_re && c->acc_im && c->nxt_re && c->nxt_im && c->tail ? 0 : GF_E_NOMEM;
}

static void out_free(struct fft_out *c)
{
	fftwf_free(c->acc_re);
	fftwf_free(c->acc_im);
	fftwf_free(c->nxt_re);
	fftwf_free(c->nxt_im);
	fftwf_free(c->tail);
}

/* Partition spectra H_j (scaled by 1/N, which the unnormalised IFFT needs) and head taps. */
static void path_load_taps(struct gf_cpu_fft *f, struct fft_path *c, const float *h)
{
	float scale = 1.0f / (float)f->N;
	for (uint32_t j = 0; j < f->K; j++) {
		uint32_t off = j * f->P, n = f->taps - off < f->P ? f->taps - off : f->P;
		memset(f->time, 0, (size_t)f->N * sizeof(float));
		for (uint32_t k = 0; k < n; k++)
			f->time[k] = h[off + k] * scale;
		forward(f, f->time, c->h_re + (size_t)j * f->nbp, c->h_im + (size_t)j * f->nbp);
	}
	for (uint32_t k = 0; k < f->lh; k++)
		c->head_r[k] = h[f->lh - 1 - k];
}

/* Paths grouped by output (in the set's order within one), their taps loaded. */
static void load_paths(struct gf_cpu_fft *f, const struct gf_filter_set *fs)
{
	uint32_t p = 0;
	for (uint32_t o = 0; o < f->outputs; o++) {
		f->out[o].first = p;
		for (uint32_t q = 0; q < fs->channels; q++) {
			if (gf_filter_set_path_out(fs, q) != o)
				continue;
			f->path[p].in = gf_filter_set_path_in(fs, q);
			path_load_taps(f, &f->path[p++], gf_filter_set_channel(fs, q));
		}
		f->out[o].n = p - f->out[o].first;
	}
}

/* FFTW aborts when its own allocation fails: its plans' memory is checked first (memlimit.h). */
static int make_plans(struct gf_cpu_fft *f, struct gf_errbuf *eb)
{
	char what[64];
	snprintf(what, sizeof(what), "cpu fft: FFTW's plans of %u points", f->N);
	int err = gf_mem_check(gf_mem_fft_plan_bytes(f->N, sizeof(float)), what, eb);
	if (err)
		return err;
	gf_fftwf_planner_lock();
	gf_fft_wisdom_plan_pair((int)f->N, f->time, f->spec, &f->r2c, &f->c2r);
	gf_fftwf_planner_unlock();
	if (f->r2c && f->c2r)
		return 0;
	gf_errbuf_set(eb, "cpu fft: FFTW could not plan a %u-point transform", f->N);
	return GF_E_FFT;
}

static void set_costs(struct gf_cpu_fft *f)
{
	struct gf_cpu_tuning t;
	gf_cpu_get_tuning(&t);
	f->head_mode = t.fft_head;
	f->k = gf_cpu_fft_kernels();
	f->cost_head_tap = GF_FFT_NS_HEAD_MAC * f->lh;
	f->cost_fft_pair = 2.0 * gf_cpu_fft_transform_cost(f->N) + f->nbp * 0.25;
	f->cost_tail = f->K > 1 ? gf_cpu_fft_transform_cost(f->N) : 0.0;
}

static int alloc_all(struct gf_cpu_fft *f)
{
	f->time = falloc(f->N);
	f->spec = fftwf_malloc(f->nb * sizeof(fftwf_complex));
	f->z_re = falloc(f->nbp);
	f->z_im = falloc(f->nbp);
	f->head_y = falloc(f->P);
	f->in = calloc(f->inputs, sizeof(*f->in));
	f->path = calloc(f->paths, sizeof(*f->path));
	f->out = calloc(f->outputs, sizeof(*f->out));
	if (!f->time || !f->spec || !f->z_re || !f->z_im || !f->head_y || !f->in || !f->path || !f->out)
		return GF_E_NOMEM;
	for (uint32_t c = 0; c < f->inputs; c++)
		if (in_alloc(f, &f->in[c]))
			return GF_E_NOMEM;
	for (uint32_t c = 0; c < f->paths; c++)
		if (path_alloc(f, &f->path[c]))
			return GF_E_NOMEM;
	for (uint32_t c = 0; c < f->outputs; c++)
		if (out_alloc(f, &f->out[c]))
			return GF_E_NOMEM;
	return 0;
}

int gf_cpu_fft_new(struct gf_cpu_fft **out, const struct gf_filter_set *fs, uint32_t max_block,
		   uint32_t partition, struct gf_errbuf *eb)
{
	*out = NULL;
	if (partition && (partition < 2 || (partition & (partition - 1)) || partition > (1u << 24))) {
		gf_errbuf_set(eb, "cpu fft: partition size %u is not a power of two", partition);
		return GF_E_INVAL;
	}
	if (gf_filter_set_check_paths(fs)) {
		gf_errbuf_set(eb, "cpu fft: a mixer path names a channel out of range");
		return GF_E_INVAL;
	}
	struct gf_cpu_fft *f = calloc(1, sizeof(*f));
	if (!f)
		return GF_E_NOMEM;
	f->inputs = gf_filter_set_inputs(fs);
	f->outputs = gf_filter_set_outputs(fs);
	f->paths = fs->channels;
	f->taps = fs->taps;
	f->max_block = max_block;
	f->P = partition ? partition : gf_cpu_fft_choose_partition(fs->taps, fs->channels, max_block, NULL);
	f->N = 2 * f->P;
	f->K = (fs->taps + f->P - 1) / f->P;
	f->nb = f->P + 1;
	f->nbp = (f->nb + 7) & ~7u;
	f->lh = fs->taps < f->P ? fs->taps : f->P;
	set_costs(f);

	int err = alloc_all(f);
	if (err)
		goto fail;
	if ((err = make_plans(f, eb)))
		goto fail_said;
	load_paths(f, fs);
	f->newest = f->K - 1;
	f->tail_next = 2;
	*out = f;
	return 0;
fail:
	gf_errbuf_set(eb, "cpu fft: out of memory for %u channels x %u taps", fs->channels, fs->taps);
fail_said:
	gf_cpu_fft_free(f);
	return err;
}

void gf_cpu_fft_free(struct gf_cpu_fft *f)
{
	if (!f)
		return;
	gf_fftwf_planner_lock();
	if (f->r2c)
		fftwf_destroy_plan(f->r2c);
	if (f->c2r)
		fftwf_destroy_plan(f->c2r);
	gf_fftwf_planner_unlock();
	for (uint32_t c = 0; f->in && c < f->inputs; c++)
		in_free(&f->in[c]);
	for (uint32_t c = 0; f->path && c < f->paths; c++)
		path_free(&f->path[c]);
	for (uint32_t c = 0; f->out && c < f->outputs; c++)
		out_free(&f->out[c]);
	free(f->in);
	free(f->path);
	free(f->out);
	fftwf_free(f->time);
	fftwf_free(f->spec);
	fftwf_free(f->z_re);
	fftwf_free(f->z_im);
	fftwf_free(f->head_y);
	free(f);
}

uint32_t gf_cpu_fft_partition(const struct gf_cpu_fft *f)
{
	return f->P;
}

/* ---- streaming --------------------------------------------------------------- */

/* Frames [first, first+P) of input c of the history into dst; outside it counts as zero. */
static void history_segment(const struct gf_cpu_fft *f, uint32_t c, const float *hist, uint32_t frames,
			    int64_t first, float *dst)
{
	for (uint32_t i = 0; i < f->P; i++) {
		int64_t idx = first + i;
		dst[i] = idx >= 0 && idx < (int64_t)frames ? hist[(size_t)idx * f->inputs + c] : 0.0f;
	}
}

void gf_cpu_fft_prime(struct gf_cpu_fft *f, const float *history, uint32_t frames)
{
	/* The history ends at a segment edge: segment -m is frames [frames - mP, frames - (m-1)P). */
	size_t kn = (size_t)f->K * f->nbp;
	f->pos = 0;
	f->tail_ok = 0;
	f->newest = f->K - 1;
	for (uint32_t c = 0; c < f->inputs; c++) {
		struct fft_in *ch = &f->in[c];
		memset(ch->fdl_re, 0, kn * sizeof(float));
		memset(ch->fdl_im, 0, kn * sizeof(float));
		for (uint32_t m = f->K - 1; m >= 1; m--) {
			int64_t first = (int64_t)frames - (int64_t)(m + 1) * f->P;
			uint32_t slot = (f->K - 1 - m) % f->K; /* oldest first, X_{-1} lands in slot K-2 */
			if (first + 2 * (int64_t)f->P <= 0)
				continue; /* all before the history: zero spectrum */
			history_segment(f, c, history, frames, first, ch->tbuf);
			history_segment(f, c, history, frames, first + f->P, ch->tbuf + f->P);
			forward(f, ch->tbuf, ch->fdl_re + slot * (size_t)f->nbp,
				ch->fdl_im + slot * (size_t)f->nbp);
		}
		history_segment(f, c, history, frames, (int64_t)frames - f->P, ch->tbuf);
		/* The segment not yet received is zero, as in a new instance: an FFT
		 * head transforms all of it, and what lies beyond the frames received
		 * changes the output's rounding though not its value. */
		memset(ch->tbuf + f->P, 0, (size_t)f->P * sizeof(float));
	}
	f->newest = f->K >= 2 ? f->K - 2 : 0;
	f->tail_next = 2;
	for (uint32_t c = 0; c < f->outputs && f->K > 1; c++) {
		sum_tail(f, &f->out[c]);
		memset(f->out[c].nxt_re, 0, f->nbp * sizeof(float));
		memset(f->out[c].nxt_im, 0, f->nbp * sizeof(float));
	}
}

/* Output @p o's head by FFT: IFFT(sum over its paths of H_0 X + A_s), X its
 * input's spectrum (in the delay line's @p slot, or of the partial segment). */
static void head_fft(struct gf_cpu_fft *f, const struct fft_out *o, int complete, uint32_t slot, float *y,
		     uint32_t ys, uint32_t m)
{
	if (o->n == 0) {
		for (uint32_t i = 0; i < m; i++)
			y[(size_t)i * ys] = 0.0f;
		return;
	}
	size_t sx = (size_t)slot * f->nbp;
	for (uint32_t p = o->first; p < o->first + o->n; p++) {
		const struct fft_path *h = &f->path[p];
		const struct fft_in *x = &f->in[h->in];
		const float *xr = complete ? x->fdl_re + sx : x->x_re,
			    *xi = complete ? x->fdl_im + sx : x->x_im;
		if (p == o->first)
			f->k->cmul_add(f->z_re, f->z_im, h->h_re, h->h_im, xr, xi,
				       f->K > 1 ? o->acc_re : NULL, o->acc_im, f->nbp);
		else
			f->k->cmac(f->z_re, f->z_im, h->h_re, h->h_im, xr, xi, f->nbp);
	}
	inverse(f, f->z_re, f->z_im);
	const float *t = f->time + f->P + f->pos;
	for (uint32_t i = 0; i < m; i++)
		y[(size_t)i * ys] = t[i];
}

/* Output @p o's head by direct convolution of each path's head taps, plus the
 * tail computed once per segment. */
static void head_direct(struct gf_cpu_fft *f, struct fft_out *o, float *y, uint32_t ys, uint32_t m)
{
	if (f->K > 1 && !f->tail_ok) {
		inverse(f, o->acc_re, o->acc_im);
		memcpy(o->tail, f->time + f->P, (size_t)f->P * sizeof(float));
	}
	if (o->n == 0) {
		for (uint32_t i = 0; i < m; i++)
			y[(size_t)i * ys] = 0.0f;
		return;
	}
	for (uint32_t p = o->first; p < o->first + o->n; p++) {
		const struct fft_path *h = &f->path[p];
		const float *x = f->in[h->in].tbuf + f->P + f->pos - (f->lh - 1);
		if (p == o->first) {
			f->k->head(h->head_r, f->lh, x, f->K > 1 ? o->tail + f->pos : NULL, y, ys, m);
			continue;
		}
		f->k->head(h->head_r, f->lh, x, NULL, f->head_y, 1, m);
		for (uint32_t i = 0; i < m; i++)
			y[(size_t)i * ys] += f->head_y[i];
	}
}

static int use_fft_head(const struct gf_cpu_fft *f, uint32_t m)
{
	if (f->head_mode != GF_CPU_HEAD_AUTO)
		return f->head_mode == GF_CPU_HEAD_FFT;
	double direct = m * f->cost_head_tap + (f->tail_ok ? 0.0 : f->cost_tail);
	return f->cost_fft_pair < direct;
}

uint32_t gf_cpu_fft_tail_terms_max(const struct gf_cpu_fft *f)
{
	return f->terms_max;
}

/* One chunk (within a segment): every input read (and transformed where the
 * head goes by FFT) before any output is written, so in may alias out. */
static void process_chunk(struct gf_cpu_fft *f, const float *in, float *out, uint32_t m, int complete,
			  int by_fft, uint32_t slot)
{
	for (uint32_t c = 0; c < f->inputs; c++) {
		struct fft_in *x = &f->in[c];
		float *t = x->tbuf + f->P + f->pos;
		for (uint32_t i = 0; i < m; i++)
			t[i] = in[(size_t)i * f->inputs + c];
		if (complete)
			forward(f, x->tbuf, x->fdl_re + (size_t)slot * f->nbp,
				x->fdl_im + (size_t)slot * f->nbp);
		else if (by_fft)
			forward(f, x->tbuf, x->x_re, x->x_im);
	}
	for (uint32_t o = 0; o < f->outputs; o++) {
		if (complete || by_fft)
			head_fft(f, &f->out[o], complete, slot, out + o, f->outputs, m);
		else
			head_direct(f, &f->out[o], out + o, f->outputs, m);
	}
	for (uint32_t c = 0; complete && c < f->inputs; c++)
		memcpy(f->in[c].tbuf, f->in[c].tbuf + f->P, (size_t)f->P * sizeof(float));
}

void gf_cpu_fft_process(struct gf_cpu_fft *f, const float *in, float *out, uint32_t frames)
{
	uint32_t terms = 0;
	while (frames) {
		uint32_t m = f->P - f->pos < frames ? f->P - f->pos : frames;
		int complete = f->pos + m == f->P;
		int by_fft = !complete && use_fft_head(f, m);
		uint32_t slot = (f->newest + 1) % f->K;
		process_chunk(f, in, out, m, complete, by_fft, slot);
		/* Before newest moves: tail_advance counts slots back from X_{s-1}. */
		if (f->K > 2)
			terms += tail_advance(f, f->pos + m);
		if (complete) {
			f->newest = slot;
			if (f->K > 1) {
				tail_complete(f);
				terms++;
			}
			f->pos = 0;
			f->tail_ok = 0;
		} else {
			f->pos += m;
			f->tail_ok |= !by_fft;
		}
		in += (size_t)m * f->inputs;
		out += (size_t)m * f->outputs;
		frames -= m;
	}
	if (terms > f->terms_max)
		f->terms_max = terms;
}
