/*
 * The engine's audio path: one process() call filters a block through the
 * current instance (and the incoming one while crossfading), keeps the input
 * history, takes up published swaps and mutes non-finite and late blocks.
 *
 * Pipeline of one process() call (audio thread), under one deadline
 * (params.deadline_us from its start, or the caller's: process_by) for
 * every wait in it:
 *   1. scan the input; a block holding NaN/Inf is filtered as if those samples
 *      were zero (so no filter state is poisoned) and its output is muted;
 *   2. take a published swap (or, after a backend failure, the fallback),
 *      primed by the control thread; one it cannot use (its position is no
 *      longer in the history, or ahead of it) goes back to be primed again:
 *      nothing is primed here;
 *   3. bring each instance (the incoming one too while crossfading) up to
 *      date: collect a late answer, feed the frames it missed (engine_call.c);
 *   4. append the block to the history ring;
 *   5. submit the block to each instance (both before waiting for either),
 *      then collect within the deadline; a late answer mutes the block and
 *      the instance is kept; one given up (hung, failed) mutes the block and
 *      parks the engine until reap() has built the fallback (the failed
 *      backend is not called again);
 *   6. scan the output; mute and count a non-finite block.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "engine_internal.h"

/* ---- audio thread ------------------------------------------------------------ */

/* Nonzero if any sample is NaN or Inf (exponent all ones); integer test vectorizes. */
static int any_nonfinite(const float *x, size_t n)
{
	uint32_t bad = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, &x[i], sizeof(u));
		bad |= (u & 0x7f800000u) == 0x7f800000u;
	}
	return bad != 0;
}

static void sanitize(const float *in, float *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = isfinite(in[i]) ? in[i] : 0.0f;
}

/* The @p n frames that end @p back frames before the newest one; n + back <= hist_cap. */
static const float *hist_span(const struct gf_engine *e, uint32_t n, uint32_t back)
{
	uint64_t cap = e->hist_cap;
	if (cap == 0)
		return e->hist;
	uint64_t start = ((uint64_t)e->hist_w + 2 * cap - back - n) % cap;
	return e->hist + start * e->p.channels; /* contiguous: the ring is mirrored */
}

/* Append, then publish the new position (release: the control thread primes
 * from the frames before it). */
static void hist_append(struct gf_engine *e, const float *x, uint32_t frames)
{
	uint32_t cap = e->hist_cap, ch = e->p.channels;
	uint64_t pos = atomic_load_explicit(&e->hist_pos, memory_order_relaxed) + frames;
	if (cap == 0)
		return;
	if (frames > cap) { /* only the newest cap frames stay, where their positions say */
		x += (size_t)(frames - cap) * ch;
		e->hist_w = (uint32_t)(((uint64_t)e->hist_w + frames - cap) % cap);
		frames = cap;
	}
	while (frames) {
		uint32_t n = cap - e->hist_w < frames ? cap - e->hist_w : frames;
		size_t bytes = (size_t)n * ch * sizeof(float);
		memcpy(e->hist + (size_t)e->hist_w * ch, x, bytes);
		memcpy(e->hist + ((size_t)e->hist_w + cap) * ch, x, bytes);
		x += (size_t)n * ch;
		frames -= n;
		e->hist_w = (e->hist_w + n) % cap;
	}
	atomic_store_explicit(&e->hist_pos, pos, memory_order_release);
}

static void finish_swap(struct gf_engine *e, struct gf_inst *old)
{
	atomic_store_explicit(&e->retired, old, memory_order_release);
	gf_stat_add(&e->st_swaps, 1);
	atomic_store_explicit(&e->swap_busy, 0, memory_order_release);
}

/*
 * Park the engine and ask the control thread for a fallback. Raised once per
 * outage (reap() lowers the flag as it publishes): a second request while a
 * fallback waits in its slot would make reap() build another.
 */
static void raise_failure(struct gf_engine *e, int err)
{
	e->failed = 1;
	e->fail_err = err;
	atomic_store_explicit(&e->backend_err, err, memory_order_release);
}

/* The fallback replaces the failed instances at once, cutting any crossfade short. */
static void switch_to_fallback(struct gf_engine *e, struct gf_inst *in)
{
	struct gf_inst *old = e->cur, *cut = e->incoming;
	e->incoming = NULL;
	e->fade_pos = 0;
	gf_engine_set_current(e, in);
	e->failed = 0;
	atomic_store_explicit(&e->retired_b, cut, memory_order_release);
	atomic_store_explicit(&e->retired, old, memory_order_release);
	atomic_store_explicit(&e->swap_busy, 0, memory_order_release);
}

static void note_takeup(struct gf_engine *e, uint64_t frames)
{
	atomic_store_explicit(&e->st_takeup, frames, memory_order_relaxed);
	if (frames > atomic_load_explicit(&e->st_takeup_max, memory_order_relaxed))
		atomic_store_explicit(&e->st_takeup_max, frames, memory_order_relaxed);
}

/*
 * Hand a taken instance back to the control thread, which primes it again
 * and republishes it (reap): its position is not usable here, and priming
 * (allocation, FFTs, waits) never runs on the audio thread. Meanwhile the
 * running filter goes on, or a parked engine stays muted.
 */
static void hand_back(struct gf_engine *e, struct gf_inst *in)
{
	in->for_fallback = e->failed;
	atomic_store_explicit(&e->reprime, in, memory_order_release);
}

/*
 * Take a published instance at a block edge: usable if its state has
 * consumed the history up to @p back frames before the newest frame, or
 * less but no further back than the ring holds (the block's calls feed it
 * the rest, engine_call.c); then switch or start a crossfade. A parked
 * (failed) engine looks only at the fallback slot.
 */
static void take_pending(struct gf_engine *e, uint32_t back)
{
	_Atomic(struct gf_inst *) *slot = e->failed ? &e->fallback : &e->pending;
	if (!atomic_load_explicit(slot, memory_order_relaxed))
		return;
	struct gf_inst *in = atomic_exchange_explicit(slot, NULL, memory_order_acquire);
	if (!in)
		return;
	uint64_t now = atomic_load_explicit(&e->hist_pos, memory_order_relaxed), end = now - back;
	if (in->pos > end || now - in->pos > e->hist_cap) {
		hand_back(e, in);
		return;
	}
	note_takeup(e, end - in->pos);
	if (e->failed) {
		switch_to_fallback(e, in);
		return;
	}
	if (e->p.crossfade_frames == 0) {
		struct gf_inst *old = e->cur;
		gf_engine_set_current(e, in);
		finish_swap(e, old);
		return;
	}
	e->incoming = in;
	e->fade_pos = 0;
}

/* One process() call's block and its one deadline. */
struct block {
	const float *x;	      /* the (sanitized) input, in the history by the time it is run */
	float *y;	      /* its output */
	uint32_t frames;      /* its length */
	int bad;	      /* the input held NaN/Inf: mute the output */
	uint64_t t0;	      /* when the call started */
	uint64_t deadline;    /* every wait of the call ends here */
	int ready_a, ready_b; /* gf_call_ready's outcome for the current and the incoming instance */
};

/*
 * Before the block enters the history (a retry ring holds one block beyond
 * the taps): collect each instance's late answer and feed it the frames it
 * missed up to @p start, within the call's deadline (engine_call.c).
 */
static void prepare(struct gf_engine *e, struct block *b, uint64_t start)
{
	b->ready_a = b->ready_b = 0;
	if (e->failed)
		return;
	b->ready_a = gf_call_ready(e, e->cur, start, e->scratch_a, b->deadline);
	if (e->incoming)
		b->ready_b = gf_call_ready(e, e->incoming, start, e->scratch_b, b->deadline);
}

/* The block through the current instance alone. */
static int run_one(struct gf_engine *e, const struct block *b)
{
	struct gf_inst *in = e->cur;
	int err = b->ready_a;
	if (!err)
		err = gf_call_submit(e, in, b->x, b->frames);
	if (!err)
		err = gf_call_collect(e, in, b->y, b->deadline);
	return gf_call_outcome(e, in, err, b->t0);
}

static void mix(struct gf_engine *e, float *y, uint32_t frames)
{
	uint32_t ch = e->out_ch, n = e->p.crossfade_frames;
	for (uint32_t i = 0; i < frames; i++) {
		uint32_t k = e->fade_pos + i;
		float g = k < n ? e->ramp[k] : 1.0f;
		const float *a = e->scratch_a + (size_t)i * ch, *b = e->scratch_b + (size_t)i * ch;
		float *o = y + (size_t)i * ch;
		for (uint32_t c = 0; c < ch; c++)
			o[c] = (1.0f - g) * a[c] + g * b[c];
	}
	e->fade_pos = e->fade_pos + frames < n ? e->fade_pos + frames : n;
	if (e->fade_pos >= n) {
		struct gf_inst *old = e->cur;
		gf_engine_set_current(e, e->incoming);
		e->incoming = NULL;
		finish_swap(e, old);
	}
}

/*
 * Both filters' work is submitted before either is waited for: one round
 * trip per block, the two instances' streams running concurrently on a GPU.
 * The ramp advances only on blocks both answered in time; while the
 * incoming one is late the current filter plays alone, while the current
 * one is late the block is muted.
 */
static int run_crossfade(struct gf_engine *e, struct block *b)
{
	if (e->slow_xfade_us > 0) { /* GPUFIR_FAULT_SLOW_CROSSFADE_US: late blocks, not failed ones */
		uint64_t us = (uint64_t)e->slow_xfade_us;
		struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000};
		nanosleep(&ts, NULL);
		b->deadline += 1000ull * us;
	}
	struct gf_inst *a = e->cur, *in = e->incoming;
	int ea = b->ready_a, eb = b->ready_b;
	if (!ea)
		ea = gf_call_submit(e, a, b->x, b->frames);
	if (!eb)
		eb = gf_call_submit(e, in, b->x, b->frames);
	if (!ea)
		ea = gf_call_collect(e, a, e->scratch_a, b->deadline);
	if (!eb)
		eb = gf_call_collect(e, in, e->scratch_b, b->deadline);
	int ra = gf_call_outcome(e, a, ea, b->t0), rb = gf_call_outcome(e, in, eb, b->t0);
	if (ra < 0 || rb < 0)
		return ra < 0 ? ra : rb; /* the fallback cuts the ramp short */
	if (ra == GF_RUN_LATE)
		return GF_RUN_LATE;
	if (rb == GF_RUN_LATE)
		memcpy(b->y, e->scratch_a, (size_t)b->frames * e->out_ch * sizeof(float));
	else
		mix(e, b->y, b->frames);
	return GF_RUN_OK;
}

/* Steps 5 and 6 of the pipeline on the block (already in the history). */
static int run_block(struct gf_engine *e, struct block *b)
{
	size_t n = (size_t)b->frames * e->out_ch;
	int r;
	e->muted = 1; /* until the block comes out whole */
	if (e->failed)
		r = e->fail_err; /* parked: never call a failed backend again */
	else if (e->incoming)
		r = run_crossfade(e, b);
	else
		r = run_one(e, b);
	if (r == GF_RUN_LATE) {
		memset(b->y, 0, n * sizeof(float));
		gf_stat_add(&e->st_late, 1);
		return GF_E_TIMEOUT;
	}
	if (r < 0) {
		memset(b->y, 0, n * sizeof(float));
		gf_stat_add(&e->st_errors, 1);
		if (!e->failed)
			raise_failure(e, r);
		e->redo_frames = b->frames;
		e->redo_bad = b->bad;
		atomic_store_explicit(&e->redo_pub, b->frames, memory_order_release);
		return r;
	}
	if (b->bad || any_nonfinite(b->y, n)) {
		memset(b->y, 0, n * sizeof(float));
		gf_stat_add(&e->st_nonfinite, 1);
		return 0;
	}
	e->muted = 0;
	return 0;
}

int gf_engine_process_by(struct gf_engine *e, const float *in, float *out, uint32_t frames,
			 uint64_t deadline_ns)
{
	uint64_t t0 = gf_now_ns();
	struct block b = {.x = in,
			  .y = out,
			  .frames = frames,
			  .t0 = t0,
			  .deadline = deadline_ns ? deadline_ns : t0 + e->deadline_ns};
	e->redo_frames = 0;
	if (frames == 0 || frames > e->p.max_block)
		return GF_E_INVAL;
	size_t n = (size_t)frames * e->p.channels;
	b.bad = any_nonfinite(in, n);
	if (b.bad) {
		sanitize(in, e->scratch_in, n);
		b.x = e->scratch_in;
	}
	take_pending(e, 0);
	prepare(e, &b, atomic_load_explicit(&e->hist_pos, memory_order_relaxed));
	/* Before filtering: the history then holds the block even when it fails (and in == out). */
	hist_append(e, b.x, frames);
	int err = run_block(e, &b);
	gf_stat_add(&e->st_frames, frames);
	return err;
}

int gf_engine_muted(const struct gf_engine *e)
{
	return e->muted;
}

int gf_engine_process(struct gf_engine *e, const float *in, float *out, uint32_t frames)
{
	return gf_engine_process_by(e, in, out, frames, 0);
}

uint64_t gf_engine_deadline_ns(const struct gf_engine *e)
{
	return e->deadline_ns;
}

#define RESET_WAIT_NS 100000000ull /* a late call's answer, before a reset primes */

/* Forget the history ring; its write index stays in step with the absolute
 * positions it is also read by (gf_engine_hist_at). */
static void hist_clear(struct gf_engine *e)
{
	memset(e->hist, 0, 2 * (size_t)e->hist_cap * e->p.channels * sizeof(float));
	uint64_t pos = atomic_load_explicit(&e->hist_pos, memory_order_relaxed);
	e->hist_w = e->hist_cap ? (uint32_t)(pos % e->hist_cap) : 0;
	e->redo_frames = 0;
	e->redo_bad = 0;
}

int gf_engine_reset_history(struct gf_engine *e, const float *history, uint32_t frames, struct gf_errbuf *eb)
{
	gf_engine_reap(e);
	if (e->failed || e->incoming || atomic_load(&e->pending) || atomic_load(&e->swap_busy)) {
		gf_errbuf_set(eb, "engine: cannot reset while a swap or a fallback is in progress");
		return GF_E_BUSY;
	}
	/* A late answer first: prime() must not race the call in flight (no process() runs now). */
	if (e->cur->inflight && gf_call_collect(e, e->cur, e->ctl_out, gf_now_ns() + RESET_WAIT_NS)) {
		gf_errbuf_set(eb, "engine: cannot reset while a late backend call is still in flight");
		return GF_E_BUSY;
	}
	hist_clear(e);
	size_t n = (size_t)frames * e->p.channels;
	float *clean = NULL;
	if (frames && any_nonfinite(history, n)) {
		clean = malloc(n * sizeof(float));
		if (!clean)
			return GF_E_NOMEM;
		sanitize(history, clean, n);
		history = clean;
	}
	/* One prime: with no frames it resets the backend's state, as a new instance's. */
	int err = gf_inst_prime(e->cur, frames ? history : e->hist, frames);
	if (err)
		gf_errbuf_set(eb, "engine: %s backend could not reset: %s", gf_backend_label(e->cur->ops),
			      gf_strerror(err));
	else if (frames)
		hist_append(e, history, frames); /* what a swap or a retry primes from next */
	e->cur->pos = atomic_load_explicit(&e->hist_pos, memory_order_relaxed);
	e->cur->late_since = 0;
	free(clean);
	return err;
}

uint32_t gf_engine_reset_history_frames(uint32_t taps)
{
	/* K partitions of P frames, K P < taps + P, with P at most 2^16 where the
	 * CPU backend chooses it (cpu_fft.c; a configured longer partition reads
	 * more, and the stripes then match to rounding, not to the bit). */
	uint64_t n = (uint64_t)taps + (1u << 16);
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

int gf_engine_retry(struct gf_engine *e, float *out, uint32_t frames)
{
	if (!e->p.retry || (uint64_t)e->hist_frames + frames > e->hist_cap) /* no copy of the block kept */
		return GF_E_UNSUPPORTED;
	if (!e->redo_frames || frames != e->redo_frames)
		return GF_E_INVAL;
	size_t n = (size_t)frames * e->out_ch;
	take_pending(e, frames); /* the fallback, primed (by reap) with the history before the failed block */
	if (e->failed) {
		memset(out, 0, n * sizeof(float));
		return e->fail_err;
	}
	e->redo_frames = 0;
	uint64_t t0 = gf_now_ns();
	/* The block is still in the history ring (p.retry: max_block frames beyond the taps). */
	struct block b = {.x = hist_span(e, frames, 0),
			  .y = out,
			  .frames = frames,
			  .bad = e->redo_bad,
			  .t0 = t0,
			  .deadline = t0 + e->deadline_ns};
	prepare(e, &b, atomic_load_explicit(&e->hist_pos, memory_order_relaxed) - frames);
	return run_block(e, &b);
}

int gf_engine_flush(struct gf_engine *e, float *out, uint32_t frames)
{
	int first = 0;
	while (frames) {
		uint32_t n = frames < e->p.max_block ? frames : e->p.max_block;
		int err = gf_engine_process(e, e->zeros, out, n);
		if (err && !first)
			first = err;
		out += (size_t)n * e->out_ch;
		frames -= n;
	}
	return first;
}
