/*
 * What follows a backend failure, on the control thread (gf_engine_reap):
 *
 *  - Instances given up (hung, failed) or retired with a call in flight go
 *    on a dying list: their backend is asked on every reap to end their
 *    work (backend.h, stop: a persistent kernel's stop, a hook's spin
 *    released) and they are destroyed once it has, so nothing of them stays
 *    pinned or allocated. One whose work has not ended after STOP_NS is left
 *    alive for good (destroying it could block on that work), counted and
 *    said; past MAX_LEFT such instances in the process the engine stops
 *    returning to the primary backend, which bounds the leak.
 *  - Whether the CPU can run the filter in real time at all (the CPU
 *    backend's cost model against the deadline's block period): where it
 *    cannot, the engine stays muted after a failure rather than fall behind
 *    on a CPU instance, and says so.
 *  - The return: after a fallback, at RETURN_MS and doubling intervals, a new
 *    instance of the primary backend is built here, answers a few calls of
 *    silence within the deadline, is primed from the history and swapped in
 *    (crossfaded like a reload; in the fallback slot where the engine is
 *    muted for want of a CPU fallback).
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "cost.h"
#include "engine_internal.h"
#include "log.h"

#define STOP_NS 5000000000ull	  /* a dying instance's work must end within this */
#define FREE_WAIT_NS 100000000ull /* gf_engine_free: how long dying work may still take */
#define MAX_LEFT 4u		  /* instances left alive in the process before returns stop */
#define RETURN_MAX_STEPS 32u	  /* the longest wait between tries, in RETURN_MS */
#define MUTED_MAX_STEPS 4u	  /* the same while muted (no CPU fallback) */
#define STABLE_NS 60000000000ull  /* a return that lasted this long resets the waits */
#define PROBE_CALLS 3		  /* calls of silence a new instance must answer in time */

/* ---- instances given up ------------------------------------------------- */

/* Instances left alive stay reachable from here: leaked on purpose, not lost
 * (leak checkers agree). Engines on several control threads share it. */
static pthread_mutex_t g_left_mu = PTHREAD_MUTEX_INITIALIZER;
static struct gf_inst *g_left;
static atomic_uint g_left_count;

unsigned gf_engine_left_work(void)
{
	return atomic_load(&g_left_count);
}

static void stat_dec(_Atomic uint64_t *c)
{
	gf_stat_add(c, (uint64_t)-1);
}

static void leave_alive(struct gf_engine *e, struct gf_inst *in)
{
	pthread_mutex_lock(&g_left_mu);
	in->next = g_left;
	g_left = in;
	pthread_mutex_unlock(&g_left_mu);
	unsigned n = atomic_fetch_add(&g_left_count, 1) + 1;
	gf_stat_add(&e->st_abandoned, 1);
	gf_warn("engine: a %s instance (%u taps) given up did not end its work in time: left alive, never "
		"destroyed (%u in this process%s)",
		gf_backend_label(in->ops), in->taps, n,
		n >= MAX_LEFT ? "; no more returns to that backend" : "");
}

void gf_dying_add(struct gf_engine *e, struct gf_inst *in)
{
	in->stop_by = gf_now_ns() + STOP_NS;
	in->next = e->dying;
	e->dying = in;
	gf_stat_add(&e->st_dying, 1);
}

/* Has its work ended (asked to end first)? The CPU's ends with its calls. */
static int work_ended(struct gf_inst *in)
{
	return !in->ops->stop || in->ops->stop(in->bi) == 1;
}

/* One pass: destroy what has ended, leave alive what is past its time (or all, @p give_up). */
static void dying_pass(struct gf_engine *e, int give_up)
{
	uint64_t now = gf_now_ns();
	for (struct gf_inst **pp = &e->dying; *pp;) {
		struct gf_inst *in = *pp;
		int ended = work_ended(in);
		if (!ended && !give_up && now < in->stop_by) {
			pp = &in->next;
			continue;
		}
		*pp = in->next;
		stat_dec(&e->st_dying);
		if (ended) {
			gf_debug("engine: a %s instance given up has ended its work: destroyed",
				 gf_backend_label(in->ops));
			gf_inst_destroy(in);
		} else {
			leave_alive(e, in);
		}
	}
}

void gf_dying_poll(struct gf_engine *e, int final)
{
	if (!final) {
		dying_pass(e, 0);
		return;
	}
	uint64_t until = gf_now_ns() + FREE_WAIT_NS;
	while (e->dying && gf_now_ns() < until) {
		dying_pass(e, 0);
		struct timespec ts = {0, 1000000};
		if (e->dying)
			nanosleep(&ts, NULL);
	}
	dying_pass(e, 1);
}

/* ---- the CPU's speed -------------------------------------------------------- */

int gf_engine_cpu_too_slow(const struct gf_engine *e, double *block_ms)
{
	if (e->cpu_slow_hook) {
		*block_ms = (double)e->deadline_ns / 1e6;
		return 1;
	}
	if (e->fallback_ops != &gf_cpu_backend || e->primary == e->fallback_ops || e->p.retry)
		return 0; /* a stand-in has no model; a CPU engine ran there already; offline has no period */
	uint64_t samples = (uint64_t)e->p.max_block * e->p.channels;
	double ns = gf_cost_cpu_ns_per_sample(e->fs->taps, e->p.channels, e->p.max_block, e->p.algo);
	*block_ms = ns * (double)samples / 1e6;
	/* One block period; without a stream's rate, half the deadline (the daemon's is two periods). */
	double period_ns =
		e->p.live_rate ? 1e9 * e->p.max_block / e->p.live_rate : (double)e->deadline_ns / 2.0;
	return ns * (double)samples > period_ns;
}

/* ---- returning to the primary backend ------------------------------------- */

static uint64_t return_base_ns(const struct gf_engine *e)
{
	return 1000000ull * (e->p.return_ms ? e->p.return_ms : GF_ENGINE_RETURN_DEFAULT_MS);
}

void gf_engine_return_schedule(struct gf_engine *e)
{
	uint64_t now = gf_now_ns(), base = return_base_ns(e);
	/* A backend that fails again soon after it came back keeps the longer wait. */
	if (!e->returned_at_ns || now - e->returned_at_ns > STABLE_NS || e->return_step_ns < base)
		e->return_step_ns = base;
	e->next_return_ns = now + e->return_step_ns;
}

static void return_backoff(struct gf_engine *e)
{
	uint64_t base = return_base_ns(e),
		 cap = base * (e->cpu_too_slow ? MUTED_MAX_STEPS : RETURN_MAX_STEPS);
	e->return_step_ns = 2 * e->return_step_ns < cap ? 2 * e->return_step_ns : cap;
	e->next_return_ns = gf_now_ns() + e->return_step_ns;
}

/* Silence through the new instance, each call within the deadline: the backend answers in time. */
static int probe_calls(struct gf_engine *e, struct gf_inst *in, struct gf_errbuf *eb)
{
	for (int i = 0; i < PROBE_CALLS; i++) {
		int err = gf_engine_ctl_call(in, e->zeros, e->ctl_out, e->p.max_block,
					     gf_now_ns() + e->deadline_ns);
		if (err) {
			gf_errbuf_set(eb, "a call of silence %s",
				      err == GF_E_TIMEOUT ? "missed its deadline" : gf_strerror(err));
			return err;
		}
	}
	return 0;
}

/* Publish the primary's new instance: a crossfade from the CPU fallback, or (muted:
 * parked without one) the fallback slot, taken at the next block edge. */
static void return_publish(struct gf_engine *e, struct gf_inst *in)
{
	int muted = e->cpu_too_slow;
	e->ops = e->primary;
	e->on_fallback = 0;
	e->cpu_too_slow = 0;
	e->returned_at_ns = gf_now_ns();
	gf_engine_set_desc(e, in);
	gf_stat_add(&e->st_returns, 1);
	atomic_store_explicit(&e->st_cpu_slow, 0, memory_order_relaxed);
	atomic_store_explicit(&e->swap_busy, 1, memory_order_relaxed);
	gf_notice("engine: the %s backend answers again: %s", gf_backend_label(in->ops),
		  muted ? "audio resumes on it" : "crossfading back from the CPU");
	if (muted) {
		atomic_store_explicit(&e->backend_err, 0, memory_order_relaxed);
		atomic_store_explicit(&e->fallback, in, memory_order_release);
	} else {
		atomic_store_explicit(&e->pending, in, memory_order_release);
	}
}

/* Build, probe and prime a primary instance. @return 0 (in *out) or why not, in @p eb. */
static int return_build(struct gf_engine *e, struct gf_inst **out, struct gf_errbuf *eb)
{
	struct gf_inst *in = NULL;
	if (e->dying) {
		gf_errbuf_set(eb, "the work it gave up has not ended yet");
		return GF_E_BUSY;
	}
	atomic_store_explicit(&e->building, 1, memory_order_relaxed);
	int err = gf_inst_new(e->primary, &e->p, e->fs, &in, eb);
	if (!err)
		err = probe_calls(e, in, eb);
	if (!err)
		err = gf_engine_prime_here(e, in, 0, eb);
	if (err)
		gf_inst_free(e, in);
	atomic_store_explicit(&e->building, 0, memory_order_relaxed);
	*out = err ? NULL : in;
	return err;
}

void gf_engine_try_return(struct gf_engine *e)
{
	/* Offline runs end; a CPU engine (test hooks) has nothing else to return to. */
	if (!e->on_fallback || e->p.retry || e->primary == e->fallback_ops || e->return_given_up ||
	    gf_now_ns() < e->next_return_ns)
		return;
	/* A swap or a fallback in progress goes first; the next reap tries. */
	if (atomic_load_explicit(&e->swap_busy, memory_order_acquire) ||
	    atomic_load_explicit(&e->reprime, memory_order_acquire) ||
	    (!e->cpu_too_slow && atomic_load_explicit(&e->backend_err, memory_order_acquire)))
		return;
	if (atomic_load(&g_left_count) >= MAX_LEFT) {
		e->return_given_up = 1;
		gf_err("engine: %u instances left alive with their work: no more returns to the %s backend",
		       MAX_LEFT, e->primary->name);
		return;
	}
	struct gf_errbuf eb = {{0}};
	struct gf_inst *in;
	int err = return_build(e, &in, &eb);
	if (!err) {
		return_publish(e, in);
		return;
	}
	return_backoff(e);
	gf_log(e->cpu_too_slow ? GF_LOG_WARN : GF_LOG_INFO,
	       "engine: the %s backend is not back yet (%s): next try in %.3g s", e->primary->name,
	       eb.msg[0] ? eb.msg : gf_strerror(err), (double)e->return_step_ns / 1e9);
}
