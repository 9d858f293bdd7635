/*
 * Filter swaps and the CPU fallback, on the control thread: build the new
 * instance completely here, prime it from the history ring and catch it up
 * while the audio thread keeps appending, publish it with one atomic store,
 * prime again what the audio thread hands back, and free what it retires.
 * What follows a fallback (instances given up, the return to the primary
 * backend) is engine_recover.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "engine_internal.h"
#include "log.h"

/* ---- priming (control thread) --------------------------------------------- */

#define PRIME_ATTEMPTS 8
#define CTL_DEADLINE_NS 1000000000ull /* catch-up calls on the control thread */

int gf_engine_ctl_call(struct gf_inst *in, const float *x, float *y, uint32_t frames, uint64_t deadline_ns)
{
	int err = gf_inst_submit(in, x, frames);
	if (!err)
		err = gf_inst_finish(in, y, deadline_ns);
	if (err)
		in->dead = 1; /* its work may be in flight: destroyed only once it has ended */
	return err;
}

/* Run @p in over the history frames [in->pos, end) without output, in max_block calls. */
static int ctl_feed(struct gf_engine *e, struct gf_inst *in, uint64_t end)
{
	while (in->pos < end) {
		uint32_t f = end - in->pos < e->p.max_block ? (uint32_t)(end - in->pos) : e->p.max_block;
		int err = gf_engine_ctl_call(in, gf_engine_hist_at(e, in->pos + f, f), e->ctl_out, f,
					     gf_now_ns() + CTL_DEADLINE_NS);
		if (err)
			return err;
		in->pos += f;
	}
	return 0;
}

/* Has the audio thread, now at @p now, overwritten history frame @p first? */
static int overwritten(const struct gf_engine *e, uint64_t first, uint64_t now)
{
	return now > first + e->hist_cap;
}

/*
 * Catch up: feed the frames the audio thread appended since in->pos, until
 * at most a block is left (the audio thread feeds that at take-up). Each pass
 * takes less time than the frames it fed lasted, so the gap shrinks.
 * @return 0, 1 if the frames were overwritten meanwhile (prime again), or an error.
 */
static int catch_up(struct gf_engine *e, struct gf_inst *in)
{
	uint64_t give_up = gf_now_ns() + CTL_DEADLINE_NS;
	for (;;) {
		uint64_t now = atomic_load_explicit(&e->hist_pos, memory_order_acquire);
		/* Close enough; or starved for a second: publish, the audio thread
		 * feeds (or, past the ring, primes) the rest. */
		if (now - in->pos <= e->p.max_block || gf_now_ns() > give_up)
			return 0;
		uint64_t from = in->pos;
		if (overwritten(e, from, now))
			return 1;
		int err = ctl_feed(e, in, now);
		if (err)
			return err;
		if (overwritten(e, from, atomic_load_explicit(&e->hist_pos, memory_order_acquire)))
			return 1; /* some input was overwritten while it was read */
	}
}

int gf_engine_prime_here(struct gf_engine *e, struct gf_inst *in, uint32_t back, struct gf_errbuf *eb)
{
	for (int i = 0; i < PRIME_ATTEMPTS; i++) {
		/* Acquire: the frames before p are in the ring. Frames arriving while
		 * prime() reads go to other slots unless the writer gets more than
		 * the margin ahead, which the second load detects. */
		uint64_t p = atomic_load_explicit(&e->hist_pos, memory_order_acquire) - back;
		uint32_t n = p < e->hist_frames ? (uint32_t)p : e->hist_frames;
		int err = gf_inst_prime(in, gf_engine_hist_at(e, p, n), n);
		if (err == GF_E_TIMEOUT)
			in->dead = 1; /* its work is stuck: destroyed only once it has ended */
		if (err) {
			gf_errbuf_set(eb, "engine: priming the new filter failed: %s", gf_strerror(err));
			return err;
		}
		if (overwritten(e, p - n, atomic_load_explicit(&e->hist_pos, memory_order_acquire)))
			continue;
		in->pos = p;
		err = back ? 0 : catch_up(e, in);
		if (err <= 0) {
			if (err)
				gf_errbuf_set(eb, "engine: catching the new filter up failed: %s",
					      gf_strerror(err));
			return err;
		}
	}
	gf_errbuf_set(eb, "engine: the input history moved too fast to prime the new filter");
	return GF_E_BUSY;
}

/* ---- swap (control thread) ------------------------------------------------ */

void gf_engine_reap_retired(struct gf_engine *e)
{
	struct gf_inst *a = atomic_exchange_explicit(&e->retired, NULL, memory_order_acquire);
	struct gf_inst *b = atomic_exchange_explicit(&e->retired_b, NULL, memory_order_acquire);
	if (!a && !b)
		return;
	atomic_store_explicit(&e->building, 1, memory_order_relaxed); /* freeing is the swap's work too */
	gf_inst_free(e, a);
	gf_inst_free(e, b);
	atomic_store_explicit(&e->building, 0, memory_order_relaxed);
}

/* What the failure the fallback answers was, for the log. */
static void failure_text(const struct gf_engine *e, int cause, char *buf, size_t len)
{
	if (cause == GF_E_TIMEOUT)
		snprintf(buf, len, "hung (no answer in time for %.0f ms)", (double)e->hang_ns / 1e6);
	else
		snprintf(buf, len, "failed (%s)", gf_strerror(cause));
}

/* The CPU cannot run the filter in real time: say so loudly, once per outage,
 * stay muted and keep trying the primary backend (engine_recover.c). */
static void mute_for_primary(struct gf_engine *e, const char *why, double block_ms)
{
	if (e->cpu_too_slow)
		return;
	gf_err("engine: %s backend %s, and the CPU cannot run this filter (%u taps x %u ch) in real time "
	       "(about %.2f ms a block of %u frames, against a deadline of %.2f ms): muted until the %s "
	       "backend answers again; trying it from %.3g s on",
	       gf_backend_label(e->ops), why, e->fs->taps, e->p.channels, block_ms, e->p.max_block,
	       (double)e->deadline_ns / 1e6, gf_backend_label(e->ops), (double)e->return_step_ns / 1e9);
	e->cpu_too_slow = 1;
	atomic_store_explicit(&e->st_cpu_slow, 1, memory_order_relaxed);
}

/*
 * process() failed: build a CPU instance of the newest filter set and publish
 * it in the fallback slot, which the parked audio thread takes at its next
 * block edge (primed from the history, no crossfade). The audio thread takes
 * nothing from the pending slot while parked, so a swap published there is
 * ours to free: it was built on the failed backend (its filter set is the one
 * in e->fs, so it is not lost). With params.retry the fallback is primed with
 * the history before the failed block, which gf_engine_retry redoes.
 */
static void engine_fall_back(struct gf_engine *e, int cause)
{
	gf_inst_free(e, atomic_exchange_explicit(&e->pending, NULL, memory_order_acquire));
	e->fall_cause = cause;
	char why[160];
	failure_text(e, cause, why, sizeof(why));
	if (!e->on_fallback)
		gf_engine_return_schedule(e);
	e->on_fallback = 1;
	double block_ms = 0.0;
	if (gf_engine_cpu_too_slow(e, &block_ms)) {
		mute_for_primary(e, why, block_ms);
		return; /* backend_err stays: parked, muted */
	}
	struct gf_errbuf eb = {{0}};
	struct gf_inst *in;
	uint32_t back = e->p.retry ? atomic_load_explicit(&e->redo_pub, memory_order_acquire) : 0;
	atomic_store_explicit(&e->building, 1, memory_order_relaxed);
	int err = gf_inst_new(e->fallback_ops, &e->p, e->fs, &in, &eb);
	if (!err && (err = gf_engine_prime_here(e, in, back, &eb)) != 0) {
		gf_inst_free(e, in);
		in = NULL;
	}
	atomic_store_explicit(&e->building, 0, memory_order_relaxed); /* swap_busy covers the rest */
	if (err) {
		/* The flag stays up: the next reap() tries again; the stream stays muted. */
		if (!e->fallback_error_logged)
			gf_err("engine: %s backend %s, and the CPU fallback cannot be built: %s",
			       gf_backend_label(e->ops), why, eb.msg[0] ? eb.msg : gf_strerror(err));
		e->fallback_error_logged = 1;
		return;
	}
	e->fallback_error_logged = 0;
	gf_warn("engine: %s backend %s: continuing on the %s backend", gf_backend_label(e->ops), why,
		gf_backend_label(in->ops));
	e->ops = e->fallback_ops;
	gf_engine_set_desc(e, in);
	atomic_store_explicit(&e->backend_err, 0, memory_order_relaxed);
	gf_stat_add(&e->st_fallbacks, 1); /* control-thread counter: one writer */
	atomic_store_explicit(&e->swap_busy, 1, memory_order_relaxed);
	atomic_store_explicit(&e->fallback, in, memory_order_release);
}

/*
 * The audio thread handed back an instance it could not take up (its
 * position had left the history ring, or was ahead of it): prime it again
 * here and republish it in the slot it came from. If that fails, a swap is
 * dropped (the running filter stays, swap() may be called again) and a
 * fallback is built anew.
 */
static void reprime(struct gf_engine *e)
{
	struct gf_inst *in = atomic_exchange_explicit(&e->reprime, NULL, memory_order_acquire);
	if (!in)
		return;
	struct gf_errbuf eb = {{0}};
	uint32_t back = e->p.retry ? atomic_load_explicit(&e->redo_pub, memory_order_acquire) : 0;
	atomic_store_explicit(&e->building, 1, memory_order_relaxed);
	int err = gf_engine_prime_here(e, in, back, &eb);
	atomic_store_explicit(&e->building, 0, memory_order_relaxed);
	if (!err) {
		atomic_store_explicit(in->for_fallback ? &e->fallback : &e->pending, in,
				      memory_order_release);
		return;
	}
	gf_warn("engine: a new filter instance could not be primed again: %s", eb.msg);
	int parked = in->for_fallback;
	gf_inst_free(e, in);
	if (parked) /* still parked: fall back anew */
		atomic_store_explicit(&e->backend_err, e->fall_cause, memory_order_release);
	atomic_store_explicit(&e->swap_busy, 0, memory_order_release);
}

void gf_engine_reap(struct gf_engine *e)
{
	if (!e)
		return;
	gf_engine_reap_retired(e);
	reprime(e);
	gf_dying_poll(e, 0);
	int cause = atomic_load_explicit(&e->backend_err, memory_order_acquire);
	if (cause)
		engine_fall_back(e, cause);
	gf_engine_try_return(e);
}

int gf_engine_swap(struct gf_engine *e, const struct gf_filter_set *fs, struct gf_errbuf *eb)
{
	if (!e)
		return GF_E_INVAL;
	int err = gf_engine_check_filter(&e->p, e->p.max_taps, e->out_ch, fs, eb);
	if (err)
		return err;
	/* A failed backend first: its fallback occupies the swap (BUSY, retry later). */
	if (atomic_load_explicit(&e->backend_err, memory_order_acquire))
		gf_engine_reap(e);
	/* Read busy before reaping: once the audio thread clears it, its retire is visible. */
	if (atomic_load_explicit(&e->swap_busy, memory_order_acquire)) {
		gf_errbuf_set(eb, "engine: the previous filter swap is still in progress");
		return GF_E_BUSY;
	}
	if (atomic_load_explicit(&e->backend_err, memory_order_acquire)) {
		gf_errbuf_set(eb, "engine: muted after a backend failure, waiting for the %s backend",
			      gf_backend_label(e->ops));
		return GF_E_BUSY;
	}
	gf_engine_reap_retired(e);

	struct gf_filter_set *copy;
	err = gf_filter_set_dup(&copy, fs);
	if (err)
		return err;
	atomic_store_explicit(&e->building, 1, memory_order_relaxed);
	struct gf_inst *in;
	err = gf_inst_new(e->ops, &e->p, fs, &in, eb);
	if (!err && (err = gf_engine_prime_here(e, in, 0, eb)) != 0)
		gf_inst_free(e, in);
	if (err) {
		atomic_store_explicit(&e->building, 0, memory_order_relaxed);
		gf_filter_set_free(copy);
		return err;
	}
	gf_filter_set_free(e->fs);
	e->fs = copy;
	gf_engine_set_desc(e, in);
	atomic_store_explicit(&e->swap_busy, 1, memory_order_relaxed);
	atomic_store_explicit(&e->building, 0, memory_order_relaxed);
	atomic_store_explicit(&e->pending, in, memory_order_release);
	return 0;
}

int gf_engine_swap_pending(const struct gf_engine *e)
{
	return atomic_load_explicit(&((struct gf_engine *)e)->swap_busy, memory_order_acquire);
}

int gf_engine_swap_window(const struct gf_engine *e)
{
	struct gf_engine *m = (struct gf_engine *)e;
	return (atomic_load_explicit(&m->building, memory_order_relaxed) ? GF_SWAP_BUILDING : 0) |
	       (atomic_load_explicit(&m->swap_busy, memory_order_relaxed) ? GF_SWAP_PUBLISHED : 0);
}
