/*
 * Filter swaps and the CPU fallback, on the control thread: build the new
 * instance completely here, prime it from the history ring and catch it up
 * while the audio thread keeps appending, publish it with one atomic store,
 * and free what the audio thread retires.
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
		int err = gf_engine_feed(e, in, now, e->ctl_out, gf_now_ns() + CTL_DEADLINE_NS);
		if (err)
			return err;
		if (overwritten(e, from, atomic_load_explicit(&e->hist_pos, memory_order_acquire)))
			return 1; /* some input was overwritten while it was read */
	}
}

int gf_engine_prime_here(struct gf_engine *e, struct gf_inst *in, struct gf_errbuf *eb)
{
	for (int i = 0; i < PRIME_ATTEMPTS; i++) {
		/* Acquire: the frames before p are in the ring. Frames arriving while
		 * prime() reads go to other slots unless the writer gets more than
		 * the margin ahead, which the second load detects. */
		uint64_t p = atomic_load_explicit(&e->hist_pos, memory_order_acquire);
		uint32_t n = p < e->hist_frames ? (uint32_t)p : e->hist_frames;
		int err = in->ops->prime ? in->ops->prime(in->bi, gf_engine_hist_at(e, p, n), n) : 0;
		if (err == GF_E_TIMEOUT)
			in->abandoned = 1; /* its work is stuck: never destroy it */
		if (err) {
			gf_errbuf_set(eb, "engine: priming the new filter failed: %s", gf_strerror(err));
			return err;
		}
		if (overwritten(e, p - n, atomic_load_explicit(&e->hist_pos, memory_order_acquire)))
			continue;
		in->pos = p;
		err = catch_up(e, in);
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

/*
 * process() failed: build a CPU instance of the newest filter set and publish
 * it in the fallback slot, which the parked audio thread takes at its next
 * block edge (primed from the history, no crossfade). The audio thread takes
 * nothing from the pending slot while parked, so a swap published there is
 * ours to free: it was built on the failed backend (its filter set is the one
 * in e->fs, so it is not lost).
 */
static void engine_fall_back(struct gf_engine *e, int cause)
{
	gf_inst_free(e, atomic_exchange_explicit(&e->pending, NULL, memory_order_acquire));
	const char *failed = strcmp(e->ops->name, "cuda") == 0 ? "CUDA" : "CPU";
	struct gf_errbuf eb = {{0}};
	struct gf_inst *in;
	atomic_store_explicit(&e->building, 1, memory_order_relaxed);
	int err = gf_inst_new(&gf_cpu_backend, &e->p, e->fs, &in, &eb);
	if (!err && (err = gf_engine_prime_here(e, in, &eb)) != 0) {
		gf_inst_free(e, in);
		in = NULL;
	}
	atomic_store_explicit(&e->building, 0, memory_order_relaxed); /* swap_busy covers the rest */
	if (err) {
		/* The flag stays up: the next reap() tries again; the stream stays muted. */
		if (!e->fallback_error_logged)
			gf_err("engine: %s backend failed (%s) and the CPU fallback cannot be built: %s",
			       failed, gf_strerror(cause), eb.msg[0] ? eb.msg : gf_strerror(err));
		e->fallback_error_logged = 1;
		return;
	}
	e->fallback_error_logged = 0;
	gf_warn("engine: %s backend failed (%s): continuing on the CPU backend", failed, gf_strerror(cause));
	e->ops = &gf_cpu_backend;
	gf_engine_set_desc(e, in);
	atomic_store_explicit(&e->backend_err, 0, memory_order_relaxed);
	gf_stat_add(&e->st_fallbacks, 1); /* control-thread counter: one writer */
	atomic_store_explicit(&e->swap_busy, 1, memory_order_relaxed);
	atomic_store_explicit(&e->fallback, in, memory_order_release);
}

void gf_engine_reap(struct gf_engine *e)
{
	if (!e)
		return;
	gf_engine_reap_retired(e);
	int cause = atomic_load_explicit(&e->backend_err, memory_order_acquire);
	if (cause)
		engine_fall_back(e, cause);
}

int gf_engine_swap(struct gf_engine *e, const struct gf_filter_set *fs, struct gf_errbuf *eb)
{
	if (!e)
		return GF_E_INVAL;
	int err = gf_engine_check_filter(&e->p, e->p.max_taps, fs, eb);
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
	gf_engine_reap_retired(e);

	struct gf_filter_set *copy;
	err = gf_filter_set_dup(&copy, fs);
	if (err)
		return err;
	atomic_store_explicit(&e->building, 1, memory_order_relaxed);
	struct gf_inst *in;
	err = gf_inst_new(e->ops, &e->p, fs, &in, eb);
	if (!err && (err = gf_engine_prime_here(e, in, eb)) != 0)
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
