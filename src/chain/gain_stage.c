/* Volume, mute and meters on the live worker (gain_stage.h). The worker owns
 * the ramp and the per-block scratch; everything the control thread reads is
 * an atomic: the target, the peaks, and the running totals under a sequence
 * lock (written by the worker alone, so its stores never wait). */
#include "gain_stage.h"

#include <math.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { CAP = 0, PLAY = 1 };

struct gain_chan {
	_Atomic uint32_t peak[2][GF_GAIN_READERS]; /* float bits, per side and reader */
	_Atomic uint64_t sumsq[2];		   /* double bits: running totals per side */
	_Atomic uint64_t clipped;		   /* running total */
};

struct gf_gain_stage {
	uint32_t max_channels, rate, ramp;
	uint64_t id;
	_Atomic uint32_t target_bits;	   /* the gain to ramp to: 0 when muted */
	_Atomic uint32_t channels;	   /* the stream's, from its latest block: the more of in and out */
	_Atomic uint32_t side_channels[2]; /* capture (its input) and playback (its output) */
	_Atomic uint32_t seq;		   /* odd while the worker updates the totals */
	_Atomic uint64_t frames;	   /* running total, under seq */
	_Atomic uint32_t play_peak;	   /* float bits: playback peak, all channels, since the last take */
	struct gain_chan *ch;
	uint64_t *clip_base; /* control thread: the counts at the last reset */
	/* The worker's. */
	alignas(64) float cur, target, step;
	uint32_t left;	 /* frames of the ramp still to go */
	float *blk_peak; /* 2 x max_channels */
	double *blk_sq;	 /* 2 x max_channels */
};

static uint32_t f2b(float f)
{
	uint32_t b;
	memcpy(&b, &f, sizeof(b));
	return b;
}

static float b2f(uint32_t b)
{
	float f;
	memcpy(&f, &b, sizeof(f));
	return f;
}

static uint64_t d2b(double d)
{
	uint64_t b;
	memcpy(&b, &d, sizeof(b));
	return b;
}

static double b2d(uint64_t b)
{
	double d;
	memcpy(&d, &b, sizeof(d));
	return d;
}

static uint64_t next_id = 1; /* control thread */

int gf_gain_stage_new(struct gf_gain_stage **out, uint32_t max_channels, uint32_t rate, float gain, int mute,
		      struct gf_errbuf *eb)
{
	*out = NULL;
	if (max_channels < 1 || max_channels > GF_GAIN_MAX_CHANNELS || rate < 1000 || !(gain >= 0.0f) ||
	    !isfinite(gain)) {
		gf_errbuf_set(eb, "gain stage: %u channels at %u Hz, gain %g: out of range", max_channels,
			      rate, (double)gain);
		return GF_E_INVAL;
	}
	struct gf_gain_stage *g = calloc(1, sizeof(*g));
	if (!g)
		return GF_E_NOMEM;
	g->ch = calloc(max_channels, sizeof(*g->ch));
	g->clip_base = calloc(max_channels, sizeof(*g->clip_base));
	g->blk_peak = calloc(2 * (size_t)max_channels, sizeof(*g->blk_peak));
	g->blk_sq = calloc(2 * (size_t)max_channels, sizeof(*g->blk_sq));
	if (!g->ch || !g->clip_base || !g->blk_peak || !g->blk_sq) {
		gf_gain_stage_free(g);
		return GF_E_NOMEM;
	}
	g->max_channels = max_channels;
	g->rate = rate;
	g->ramp = (uint32_t)lround(GF_GAIN_RAMP_MS * rate / 1000.0);
	g->id = next_id++;
	g->cur = g->target = mute ? 0.0f : gain;
	atomic_store(&g->target_bits, f2b(g->target));
	*out = g;
	return 0;
}

void gf_gain_stage_free(struct gf_gain_stage *g)
{
	if (!g)
		return;
	free(g->ch);
	free(g->clip_base);
	free(g->blk_peak);
	free(g->blk_sq);
	free(g);
}

void gf_gain_stage_set(struct gf_gain_stage *g, float gain, int mute)
{
	atomic_store_explicit(&g->target_bits, f2b(mute ? 0.0f : gain), memory_order_relaxed);
}

uint32_t gf_gain_stage_ramp_frames(const struct gf_gain_stage *g)
{
	return g->ramp;
}

uint32_t gf_gain_stage_rate(const struct gf_gain_stage *g)
{
	return g->rate;
}

/* ---- the worker ---------------------------------------------------------- */

/* One block's peak and sum of squares per channel into the scratch of @p side:
 * channels [0, n) metered, [n, all) zero (a side with fewer channels). */
static void meter_block(struct gf_gain_stage *g, int side, const float *x, uint32_t frames, uint32_t stride,
			uint32_t n, uint32_t all)
{
	float *pk = g->blk_peak + (size_t)side * g->max_channels;
	double *sq = g->blk_sq + (size_t)side * g->max_channels;
	for (uint32_t c = 0; c < all; c++) {
		pk[c] = 0.0f;
		sq[c] = 0.0;
	}
	for (uint32_t i = 0; i < frames; i++) {
		const float *f = x + (size_t)i * stride;
		for (uint32_t c = 0; c < n; c++) {
			float a = fabsf(f[c]);
			pk[c] = a > pk[c] ? a : pk[c];
			sq[c] += (double)a * a;
		}
	}
}

/* The ramped gain on every channel of @p out. */
static void apply_gain(struct gf_gain_stage *g, float *out, uint32_t frames, uint32_t channels)
{
	float t = b2f(atomic_load_explicit(&g->target_bits, memory_order_relaxed));
	if (t != g->target) { /* a new target: ramp from where the gain is now */
		g->target = t;
		g->left = g->ramp;
		g->step = g->ramp ? (t - g->cur) / (float)g->ramp : 0.0f;
		if (!g->ramp)
			g->cur = t;
	}
	if (!g->left && g->cur == 1.0f)
		return;
	for (uint32_t i = 0; i < frames; i++) {
		if (g->left) {
			g->cur = --g->left ? g->cur + g->step : g->target;
		}
		float *f = out + (size_t)i * channels;
		for (uint32_t c = 0; c < channels; c++)
			f[c] *= g->cur;
	}
}

static uint64_t count_clipped(const float *x, uint32_t frames, uint32_t stride, uint32_t c)
{
	uint64_t k = 0;
	for (uint32_t i = 0; i < frames; i++)
		k += fabsf(x[(size_t)i * stride + c]) > 1.0f;
	return k;
}

static void peak_max(_Atomic uint32_t *p, float v)
{
	/* Non-negative floats order like their bit patterns. */
	uint32_t bits = f2b(v), old = atomic_load_explicit(p, memory_order_relaxed);
	while (bits > old && !atomic_compare_exchange_weak_explicit(p, &old, bits, memory_order_relaxed,
								    memory_order_relaxed))
		;
}

/* The block's figures into the shared totals: the sums under the sequence lock. */
static void publish(struct gf_gain_stage *g, uint32_t frames, uint32_t n, int have_in)
{
	uint32_t s = atomic_load_explicit(&g->seq, memory_order_relaxed);
	atomic_store_explicit(&g->seq, s + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	for (uint32_t c = 0; c < n; c++)
		for (int side = have_in ? CAP : PLAY; side <= PLAY; side++) {
			_Atomic uint64_t *t = &g->ch[c].sumsq[side];
			double v = b2d(atomic_load_explicit(t, memory_order_relaxed)) +
				   g->blk_sq[(size_t)side * g->max_channels + c];
			atomic_store_explicit(t, d2b(v), memory_order_relaxed);
		}
	atomic_store_explicit(&g->frames, atomic_load_explicit(&g->frames, memory_order_relaxed) + frames,
			      memory_order_relaxed);
	atomic_store_explicit(&g->seq, s + 2, memory_order_release);
	float all = 0.0f;
	for (uint32_t c = 0; c < n; c++) {
		for (int side = have_in ? CAP : PLAY; side <= PLAY; side++)
			for (unsigned r = 0; r < GF_GAIN_READERS; r++)
				peak_max(&g->ch[c].peak[side][r],
					 g->blk_peak[(size_t)side * g->max_channels + c]);
		float p = g->blk_peak[g->max_channels + c];
		all = p > all ? p : all;
	}
	peak_max(&g->play_peak, all);
}

void gf_gain_stage_process(struct gf_gain_stage *g, const float *in, float *out, uint32_t frames,
			   uint32_t channels)
{
	gf_gain_stage_process_io(g, in, channels, out, channels, frames);
}

static uint32_t clamp_ch(const struct gf_gain_stage *g, uint32_t n)
{
	return n < g->max_channels ? n : g->max_channels;
}

void gf_gain_stage_process_io(struct gf_gain_stage *g, const float *in, uint32_t in_channels, float *out,
			      uint32_t out_channels, uint32_t frames)
{
	uint32_t ni = clamp_ch(g, in_channels), no = clamp_ch(g, out_channels);
	uint32_t n = ni > no ? ni : no;
	if (in)
		meter_block(g, CAP, in, frames, in_channels, ni, n);
	apply_gain(g, out, frames, out_channels);
	meter_block(g, PLAY, out, frames, out_channels, no, n);
	for (uint32_t c = 0; c < no; c++)
		if (g->blk_peak[g->max_channels + c] > 1.0f)
			atomic_fetch_add_explicit(&g->ch[c].clipped,
						  count_clipped(out, frames, out_channels, c),
						  memory_order_relaxed);
	publish(g, frames, n, in != NULL);
	atomic_store_explicit(&g->side_channels[CAP], in ? ni : 0, memory_order_relaxed);
	atomic_store_explicit(&g->side_channels[PLAY], no, memory_order_relaxed);
	atomic_store_explicit(&g->channels, n, memory_order_relaxed);
}

/* ---- the control thread's reads ---------------------------------------- */

void gf_gain_reader_free(struct gf_gain_reader *r)
{
	free(r->sumsq);
	*r = (struct gf_gain_reader){0};
}

/* The running totals, consistent (the worker's sequence lock): frames and the
 * sums of channels [0, n) into @p sq (2 x max_channels). Bounded: the worker
 * holds the lock for a few stores a block; after many tries, GF_E_BUSY. */
static int read_totals(struct gf_gain_stage *g, uint32_t n, uint64_t *frames, double *sq)
{
	for (int tries = 0; tries < 10000; tries++) {
		uint32_t s1 = atomic_load_explicit(&g->seq, memory_order_acquire);
		if (s1 & 1u) {
			sched_yield();
			continue;
		}
		*frames = atomic_load_explicit(&g->frames, memory_order_relaxed);
		for (uint32_t c = 0; c < n; c++)
			for (int side = CAP; side <= PLAY; side++)
				sq[(size_t)side * g->max_channels + c] = b2d(
					atomic_load_explicit(&g->ch[c].sumsq[side], memory_order_relaxed));
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&g->seq, memory_order_relaxed) == s1)
			return 0;
	}
	return GF_E_BUSY;
}

static void levels_init(struct gf_gain_levels *out)
{
	memset(out, 0, sizeof(*out));
	out->capture_peak = out->storage;
	out->capture_rms = out->storage + GF_GAIN_MAX_CHANNELS;
	out->playback_peak = out->storage + 2 * GF_GAIN_MAX_CHANNELS;
	out->playback_rms = out->storage + 3 * GF_GAIN_MAX_CHANNELS;
	out->clipped = out->clipped_storage;
}

int gf_gain_stage_levels(struct gf_gain_stage *g, unsigned which, struct gf_gain_reader *r,
			 struct gf_gain_levels *out)
{
	levels_init(out);
	if (which >= GF_GAIN_READERS)
		return GF_E_INVAL;
	size_t m = g->max_channels;
	if (!r->sumsq && !(r->sumsq = calloc(4 * (size_t)GF_GAIN_MAX_CHANNELS, sizeof(double))))
		return GF_E_NOMEM;
	if (r->id != g->id) { /* a new stage: its interval starts at its start */
		memset(r->sumsq, 0, 2 * m * sizeof(double));
		r->frames = 0;
		r->id = g->id;
	}
	uint32_t n = atomic_load_explicit(&g->channels, memory_order_relaxed);
	double *now = r->sumsq + 2 * (size_t)GF_GAIN_MAX_CHANNELS;
	uint64_t frames;
	int err = read_totals(g, n, &frames, now);
	if (err)
		return err;
	out->channels = n;
	out->capture_channels = atomic_load_explicit(&g->side_channels[CAP], memory_order_relaxed);
	out->playback_channels = atomic_load_explicit(&g->side_channels[PLAY], memory_order_relaxed);
	out->frames = frames - r->frames;
	float *pk[2] = {out->capture_peak, out->playback_peak},
	      *rms[2] = {out->capture_rms, out->playback_rms};
	for (uint32_t c = 0; c < n; c++) {
		for (int side = CAP; side <= PLAY; side++) {
			size_t k = (size_t)side * m + c;
			double e = out->frames ? (now[k] - r->sumsq[k]) / (double)out->frames : 0.0;
			rms[side][c] = (float)sqrt(e > 0.0 ? e : 0.0);
			r->sumsq[k] = now[k];
			pk[side][c] = b2f(atomic_exchange_explicit(&g->ch[c].peak[side][which], 0,
								   memory_order_relaxed));
		}
		out->clipped[c] =
			atomic_load_explicit(&g->ch[c].clipped, memory_order_relaxed) - g->clip_base[c];
		out->clipped_total += out->clipped[c];
	}
	r->frames = frames;
	return 0;
}

uint64_t gf_gain_stage_clipped(const struct gf_gain_stage *g)
{
	uint64_t k = 0;
	for (uint32_t c = 0; c < g->max_channels; c++)
		k += atomic_load_explicit(&g->ch[c].clipped, memory_order_relaxed) - g->clip_base[c];
	return k;
}

uint64_t gf_gain_stage_clipped_total(const struct gf_gain_stage *g)
{
	uint64_t k = 0;
	for (uint32_t c = 0; c < g->max_channels; c++)
		k += atomic_load_explicit(&g->ch[c].clipped, memory_order_relaxed);
	return k;
}

float gf_gain_stage_peak_take(struct gf_gain_stage *g)
{
	return b2f(atomic_exchange_explicit(&g->play_peak, 0, memory_order_relaxed));
}

void gf_gain_stage_clipped_reset(struct gf_gain_stage *g)
{
	for (uint32_t c = 0; c < g->max_channels; c++)
		g->clip_base[c] = atomic_load_explicit(&g->ch[c].clipped, memory_order_relaxed);
}
