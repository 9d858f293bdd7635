/*
 * Filter swaps and the CPU fallback, on the control thread: build the new
 * instance completely here, publish it with one atomic store, and free what
 * the audio thread retires.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "log.h"

/* ---- swap (control thread) ------------------------------------------------ */

void gf_engine_reap_retired(struct gf_engine *e)
{
	gf_inst_free(e, atomic_exchange_explicit(&e->retired, NULL, memory_order_acquire));
	gf_inst_free(e, atomic_exchange_explicit(&e->retired_b, NULL, memory_order_acquire));
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
	int err = gf_inst_new(&gf_cpu_backend, &e->p, e->fs, &in, &eb);
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
	struct gf_inst *in;
	err = gf_inst_new(e->ops, &e->p, fs, &in, eb);
	if (err) {
		gf_filter_set_free(copy);
		return err;
	}
	gf_filter_set_free(e->fs);
	e->fs = copy;
	gf_engine_set_desc(e, in);
	atomic_store_explicit(&e->swap_busy, 1, memory_order_relaxed);
	atomic_store_explicit(&e->pending, in, memory_order_release);
	return 0;
}

int gf_engine_swap_pending(const struct gf_engine *e)
{
	return atomic_load_explicit(&((struct gf_engine *)e)->swap_busy, memory_order_acquire);
}
