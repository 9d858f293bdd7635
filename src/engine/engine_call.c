/*
 * One instance's calls on the audio thread, and what a late answer means.
 *
 * A block's call that misses its deadline is late, not lost: the backend
 * keeps it in flight (backend.h, finish), the block is muted and the
 * instance kept. The next block first collects the late answer with a poll
 * (it has had its deadline already: no second wait), then feeds the
 * instance the frames it missed meanwhile from the history ring, within
 * that block's one deadline, so its state is again that of the whole input
 * and its output exact. Only an instance that gives no block in time for
 * hang_ms (or whose missed frames have left the ring, or that fails) is
 * given up: the engine parks and the control thread builds the fallback.
 *
 * The test hooks (docs/engine.md) act here, counted in submits: a call that
 * fails, one that never completes, one that completes late, one that keeps
 * its thread for good.
 */
#include <time.h>

#include "clock.h"
#include "engine_internal.h"

/* GPUFIR_FAULT_STUCK_AFTER: the thread never comes back, as inside a hung driver call. */
static void stuck_forever(void)
{
	for (;;) {
		struct timespec ts = {3600, 0};
		nanosleep(&ts, NULL);
	}
}

/* GPUFIR_FAULT_STUCK_AFTER fires once per process: an engine built to replace
 * the one a stuck thread holds must run. */
static atomic_int stuck_fired;

int gf_call_submit(struct gf_engine *e, struct gf_inst *in, const float *x, uint32_t frames)
{
	uint64_t n = e->calls++;
	in->hook = GF_HOOK_NONE;
	if (e->fault_after >= 0 && n == (uint64_t)e->fault_after)
		return GF_E_CUDA;
	if (e->hang_after >= 0 && n == (uint64_t)e->hang_after)
		in->hook = GF_HOOK_HANG;
	if (e->late_after >= 0 && n == (uint64_t)e->late_after) {
		in->hook = GF_HOOK_LATE;
		in->hook_until = gf_now_ns() + e->late_ns;
	}
	if (e->stuck_after >= 0 && n == (uint64_t)e->stuck_after && !atomic_exchange(&stuck_fired, 1))
		in->hook = GF_HOOK_STUCK;
	int err = gf_inst_submit(in, x, frames);
	if (!err) {
		in->pos += frames;
		in->inflight = frames;
		in->late_call = 0;
	}
	return err;
}

/* The call under a hook that holds it back: not done before its time. */
static int hooked_finish(struct gf_inst *in, float *y, uint64_t deadline_ns)
{
	if (in->hook == GF_HOOK_STUCK)
		stuck_forever();
	uint64_t done_at = in->hook == GF_HOOK_HANG ? UINT64_MAX : in->hook_until;
	gf_sleep_until_ns(done_at < deadline_ns ? done_at : deadline_ns);
	if (gf_now_ns() < done_at)
		return GF_E_TIMEOUT;
	return gf_inst_finish(in, y, deadline_ns);
}

int gf_call_collect(struct gf_engine *e, struct gf_inst *in, float *y, uint64_t deadline_ns)
{
	int err = in->hook != GF_HOOK_NONE ? hooked_finish(in, y, deadline_ns)
					   : gf_inst_finish(in, y, deadline_ns);
	if (err == GF_E_TIMEOUT) { /* still in flight: a later collect gets it */
		if (!in->late_call)
			gf_stat_add(&e->st_timeouts, 1);
		in->late_call = 1;
		return err;
	}
	in->hook = GF_HOOK_NONE;
	if (!err)
		in->inflight = 0;
	return err;
}

int gf_call_ready(struct gf_engine *e, struct gf_inst *in, uint64_t start, float *scratch,
		  uint64_t deadline_ns)
{
	if (in->inflight) { /* late: it had its deadline, a poll now */
		int err = gf_call_collect(e, in, scratch, 0);
		if (err)
			return err;
	}
	uint64_t now = atomic_load_explicit(&e->hist_pos, memory_order_relaxed);
	if (now - in->pos > e->hist_cap)
		return GF_E_TIMEOUT; /* the frames it missed are gone: gf_call_outcome gives it up */
	while (in->pos < start) {
		uint32_t f = start - in->pos < e->p.max_block ? (uint32_t)(start - in->pos) : e->p.max_block;
		int err = gf_call_submit(e, in, gf_engine_hist_at(e, in->pos + f, f), f);
		if (!err)
			err = gf_call_collect(e, in, scratch, deadline_ns);
		if (err)
			return err;
	}
	return 0;
}

int gf_call_outcome(struct gf_engine *e, struct gf_inst *in, int err, uint64_t t0)
{
	if (!err) {
		in->late_since = 0;
		return GF_RUN_OK;
	}
	if (err == GF_E_TIMEOUT || err == GF_E_BUSY) {
		if (!in->late_since)
			in->late_since = t0 ? t0 : 1;
		uint64_t now = atomic_load_explicit(&e->hist_pos, memory_order_relaxed);
		/* Offline (retry) redoes a block at once; live waits hang_ms. */
		if (!e->p.retry && gf_now_ns() - in->late_since < e->hang_ns && now - in->pos <= e->hist_cap)
			return GF_RUN_LATE;
		gf_stat_add(&e->st_hangs, 1);
		err = GF_E_TIMEOUT;
	}
	in->dead = 1;
	return err;
}
