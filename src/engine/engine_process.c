/*
 * The engine's audio path: one process() call filters a block through the
 * current instance (and the incoming one while crossfading), keeps the input
 * history, takes up published swaps and mutes non-finite blocks.
 *
 * Pipeline of one process() call (audio thread):
 *   1. scan the input; a block holding NaN/Inf is filtered as if those samples
 *      were zero (so no filter state is poisoned) and its output is muted;
 *   2. take a published swap (or, after a backend failure, the CPU fallback),
 *      primed by the control thread: feed it the frames since its priming;
 *   3. append the block to the history ring;
 *   4. submit the block to the current instance (and the incoming one while
 *      crossfading), then finish each within one deadline (params.deadline_us
 *      from now); a failure or a missed deadline mutes the block and parks
 *      the engine until reap() has built the CPU fallback (the failed backend
 *      is not called again; an instance that missed its deadline is
 *      abandoned, never destroyed);
 *   5. scan the output; mute and count a non-finite block.
 */
#include <errno.h>
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
 * Bring a published instance, primed by the control thread up to in->pos, to
 * the history that ends @p back frames before the newest frame: feed it the
 * few frames appended since (a block or two). If it is past that point (a
 * retry wants the state before the last block) or the frames are no longer
 * in the ring (the control thread was held up for long), prime it here from
 * the ring instead, as a last resort.
 */
static int take_up(struct gf_engine *e, struct gf_inst *in, uint32_t back)
{
	uint64_t end = atomic_load_explicit(&e->hist_pos, memory_order_relaxed) - back;
	uint64_t oldest = end + back > e->hist_cap ? end + back - e->hist_cap : 0;
	if (in->pos <= end && in->pos >= oldest) {
		note_takeup(e, end - in->pos);
		return gf_engine_feed(e, in, end, e->scratch_a, gf_now_ns() + e->deadline_ns);
	}
	uint32_t n = end < e->hist_frames ? (uint32_t)end : e->hist_frames;
	note_takeup(e, n);
	in->pos = end;
	return in->ops->prime ? in->ops->prime(in->bi, gf_engine_hist_at(e, end, n), n) : 0;
}

int gf_engine_feed(struct gf_engine *e, struct gf_inst *in, uint64_t end, float *scratch,
		   uint64_t deadline_ns)
{
	while (in->pos < end) {
		uint32_t f = end - in->pos < e->p.max_block ? (uint32_t)(end - in->pos) : e->p.max_block;
		const float *x = gf_engine_hist_at(e, in->pos + f, f);
		int err = in->ops->submit(in->bi, x, f);
		if (!err)
			err = in->ops->finish(in->bi, scratch, deadline_ns);
		if (err == GF_E_TIMEOUT)
			in->abandoned = 1;
		if (err)
			return err;
		in->pos += f;
	}
	return 0;
}

/*
 * Take a published instance at a block edge: bring it up to the history that
 * ends @p back frames before the newest frame (take_up), then switch or start
 * a crossfade. A parked (failed) engine looks only at the fallback slot.
 */
static void take_pending(struct gf_engine *e, uint32_t back)
{
	_Atomic(struct gf_inst *) *slot = e->failed ? &e->fallback : &e->pending;
	if (!atomic_load_explicit(slot, memory_order_relaxed))
		return;
	struct gf_inst *in = atomic_exchange_explicit(slot, NULL, memory_order_acquire);
	if (!in)
		return;
	int err = take_up(e, in, back);
	if (err) {
		/* Keep the running filter; the control thread frees the failed one. */
		gf_stat_add(&e->st_errors, 1);
		atomic_store_explicit(&e->retired, in, memory_order_release);
		if (e->failed)
			raise_failure(e, err); /* still no working instance: reap() tries again */
		atomic_store_explicit(&e->swap_busy, 0, memory_order_release);
		return;
	}
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

/* GPUFIR_FAULT_STUCK_AFTER: the thread never comes back, as inside a hung driver call. */
static void stuck_forever(void)
{
	for (;;) {
		struct timespec ts = {3600, 0};
		nanosleep(&ts, NULL);
	}
}

/* GPUFIR_FAULT_HANG_AFTER: the work never completes; a waiter gives up at its deadline. */
static void wait_until(uint64_t deadline_ns)
{
	struct timespec ts = {(time_t)(deadline_ns / 1000000000u), (long)(deadline_ns % 1000000000u)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* GPUFIR_FAULT_STUCK_AFTER fires once per process: an engine built to replace
 * the one a stuck thread holds must run. */
static atomic_int stuck_fired;

/* Start one backend call, through the fault hooks (call numbers count submits). */
static int backend_submit(struct gf_engine *e, struct gf_inst *in, const float *x, uint32_t frames)
{
	uint64_t n = e->calls++;
	in->hook = GF_HOOK_NONE;
	if (e->fault_after >= 0 && n == (uint64_t)e->fault_after)
		return GF_E_CUDA;
	if (e->hang_after >= 0 && n == (uint64_t)e->hang_after)
		in->hook = GF_HOOK_HANG;
	if (e->stuck_after >= 0 && n == (uint64_t)e->stuck_after && !atomic_exchange(&stuck_fired, 1))
		in->hook = GF_HOOK_STUCK;
	return in->ops->submit(in->bi, x, frames);
}

/* Wait for a submitted call until @p deadline_ns. A miss abandons the instance:
 * its work may still be in flight, so nothing may destroy it. */
static int backend_finish(struct gf_engine *e, struct gf_inst *in, float *y, uint64_t deadline_ns)
{
	int err;
	if (in->hook == GF_HOOK_STUCK)
		stuck_forever();
	if (in->hook == GF_HOOK_HANG) {
		wait_until(deadline_ns);
		err = GF_E_TIMEOUT;
	} else {
		err = in->ops->finish(in->bi, y, deadline_ns);
	}
	in->hook = GF_HOOK_NONE;
	if (err == GF_E_TIMEOUT) {
		in->abandoned = 1;
		gf_stat_add(&e->st_timeouts, 1);
	}
	return err;
}

static int backend_run(struct gf_engine *e, struct gf_inst *in, const float *x, float *y, uint32_t frames,
		       uint64_t deadline_ns)
{
	int err = backend_submit(e, in, x, frames);
	return err ? err : backend_finish(e, in, y, deadline_ns);
}

/*
 * Both filters' work is submitted before either is waited for: one round
 * trip per block, the two instances' streams running concurrently on a GPU.
 * Whatever was submitted is finished (within the one deadline) before return.
 */
static int run_crossfade(struct gf_engine *e, const float *x, float *y, uint32_t frames, uint64_t deadline_ns)
{
	uint32_t ch = e->p.channels, n = e->p.crossfade_frames;
	if (e->slow_xfade_us > 0) { /* GPUFIR_FAULT_SLOW_CROSSFADE_US: late blocks, not failed ones */
		wait_until(gf_now_ns() + 1000ull * (uint64_t)e->slow_xfade_us);
		deadline_ns += 1000ull * (uint64_t)e->slow_xfade_us;
	}
	int err = backend_submit(e, e->cur, x, frames);
	if (err)
		return err;
	int err_b = backend_submit(e, e->incoming, x, frames);
	err = backend_finish(e, e->cur, e->scratch_a, deadline_ns);
	if (!err_b)
		err_b = backend_finish(e, e->incoming, e->scratch_b, deadline_ns);
	if (err || err_b)
		return err ? err : err_b; /* the ramp resumes on the fallback's terms: it cuts it short */
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
	return 0;
}

/* Steps 4 and 5 of the pipeline on input @p x (already in the history). */
static int run_block(struct gf_engine *e, const float *x, float *out, uint32_t frames, int bad)
{
	size_t n = (size_t)frames * e->p.channels;
	int err;
	uint64_t deadline_ns = gf_now_ns() + e->deadline_ns;
	if (e->failed)
		err = e->fail_err; /* parked: never call a failed backend again */
	else if (e->incoming)
		err = run_crossfade(e, x, out, frames, deadline_ns);
	else
		err = backend_run(e, e->cur, x, out, frames, deadline_ns);
	if (err) {
		memset(out, 0, n * sizeof(float));
		gf_stat_add(&e->st_errors, 1);
		if (!e->failed)
			raise_failure(e, err);
		e->redo_frames = frames;
		e->redo_bad = bad;
	} else if (bad || any_nonfinite(out, n)) {
		memset(out, 0, n * sizeof(float));
		gf_stat_add(&e->st_nonfinite, 1);
	}
	return err;
}

int gf_engine_process(struct gf_engine *e, const float *in, float *out, uint32_t frames)
{
	e->redo_frames = 0;
	if (frames == 0 || frames > e->p.max_block)
		return GF_E_INVAL;
	size_t n = (size_t)frames * e->p.channels;
	const float *x = in;
	int bad = any_nonfinite(in, n);
	if (bad) {
		sanitize(in, e->scratch_in, n);
		x = e->scratch_in;
	}
	take_pending(e, 0);
	/* Before filtering: the history then holds the block even when it fails (and in == out). */
	hist_append(e, x, frames);
	int err = run_block(e, x, out, frames, bad);
	gf_stat_add(&e->st_frames, frames);
	return err;
}

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
	int err = e->cur->ops->prime ? e->cur->ops->prime(e->cur->bi, frames ? history : e->hist, frames) : 0;
	if (err)
		gf_errbuf_set(eb, "engine: %s backend could not reset: %s", e->cur->ops->name,
			      gf_strerror(err));
	else if (frames)
		hist_append(e, history, frames); /* what a swap or a retry primes from next */
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
	size_t n = (size_t)frames * e->p.channels;
	take_pending(e, frames); /* the fallback, primed with the history before the failed block */
	if (e->failed) {
		memset(out, 0, n * sizeof(float));
		return e->fail_err;
	}
	e->redo_frames = 0;
	/* The block is still in the history ring (p.retry: max_block frames beyond the taps). */
	return run_block(e, hist_span(e, frames, 0), out, frames, e->redo_bad);
}

int gf_engine_flush(struct gf_engine *e, float *out, uint32_t frames)
{
	int first = 0;
	while (frames) {
		uint32_t n = frames < e->p.max_block ? frames : e->p.max_block;
		int err = gf_engine_process(e, e->zeros, out, n);
		if (err && !first)
			first = err;
		out += (size_t)n * e->p.channels;
		frames -= n;
	}
	return first;
}
