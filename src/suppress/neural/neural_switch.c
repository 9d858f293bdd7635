/*
 * The neural stage on the GPU (neural_bank.h): the GPU's hops, the switch to
 * the CPU standby and the return, the suppressor's policy (suppress_bank.c)
 * on one batch of every active channel.
 *
 * The worker hands the gathered hop to the GPU (submit copies it) and waits
 * for it until the block's deadline. A hop not back is late: the stage's
 * framing plays silence, and the hop is collected within a later call (its
 * remaining frames played) or at the next hop due; a hop due while one is
 * still in flight is dropped, as on the CPU. A failure, or a hop in flight
 * GF_NEURAL_HANG_NS (the backend's own bound, or the stage's where a
 * backend never says), hands the hop due to the CPU standby, which restarts
 * on the history of hops new() sized to its latency (neural_bank.c).
 *
 * The worker alone touches the GPU while it is on it; the control thread
 * alone (gf_neural_bank_try_return, reset) while it is off it. The hand-over
 * each way is one atomic: `on_gpu` cleared by the worker at a switch,
 * `ready` set by the control thread after a healthy probe and taken by the
 * worker at a hop boundary where no standby job is in flight.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "neural_bank_impl.h"
#include "suppress_return.h"

/* A return's probe (suppress_return.h, the suppressor's policy): hops of silence. */
#define PROBE_HOPS 3

int gf_neural_switch_new(struct gf_neural_bank *b, const struct gf_neural_params *p,
			 const struct gf_neural_bank_opts *o)
{
	const struct gf_neural_ops *g = o->gpu_ops ? o->gpu_ops : &gf_neural_gpu_ops;
	struct gf_neural_params gp = *p;
	gp.gpu_index = o->gpu_index;
	struct gf_errbuf why = {{0}};
	int err = g->create(&gp, b->active, &b->ginst, &why);
	if (!err && GF_NEURAL_HOP + g->latency(b->ginst) != b->latency) {
		gf_errbuf_set(&why, "its latency differs from the CPU's");
		err = GF_E_INVAL;
	}
	if (err == GF_E_NOMEM)
		return err;
	if (err || !g->submit || !g->collect || !g->reset) {
		if (b->ginst)
			g->free(b->ginst);
		b->ginst = NULL;
		gf_info("neural stage: %u channels on the CPU: the GPU cannot run them (%s)", b->active,
			why.msg[0] ? why.msg : gf_strerror(err ? err : GF_E_INVAL));
		return 0;
	}
	b->gops = g;
	/* the standby restarts on as many hops as its output lags its input, and the hop due */
	b->prime = (b->latency - GF_NEURAL_HOP + GF_NEURAL_HOP - 1) / GF_NEURAL_HOP + 1;
	size_t hop = (size_t)b->active * GF_NEURAL_HOP;
	if (!(b->hist = calloc(b->prime * hop, sizeof(float))) ||
	    !(b->probe = calloc(2 * hop, sizeof(float))))
		return GF_E_NOMEM; /* new() frees what was made */
	gf_suppress_return_init(&b->ret,
				1000000ull * (o->return_ms ? o->return_ms : GF_NEURAL_RETURN_DEFAULT_MS));
	b->gpu_now = 1;
	atomic_store(&b->on_gpu, 1);
	return 0;
}

void gf_neural_switch_free(struct gf_neural_bank *b)
{
	if (b->gops)
		b->gops->free(b->ginst); /* waits a bounded time for a hop in flight; a hung GPU leaks */
	free(b->hist);
	free(b->probe);
}

/* The GPU failed or hung: the standby runs from the next job on, restarted on the history. */
static void switch_to_standby(struct gf_neural_bank *b)
{
	b->gpu_now = 0;
	b->gpending = 0; /* abandoned: the control thread's reset waits for it */
	b->prime_due = 1;
	atomic_store(&b->on_gpu, 0);
	atomic_fetch_add(&b->gpu_failures, 1);
}

/* A return the control thread made ready, taken at a hop boundary once no standby job is in flight
 * (its output would be played over the GPU's; one late and back now is dropped, as at any hop). */
static void take_return(struct gf_neural_bank *b)
{
	if (!atomic_load_explicit(&b->ready, memory_order_acquire) ||
	    (gf_neural_pool_busy(b->pool) && !gf_neural_pool_wait(b->pool, 1)))
		return;
	atomic_store(&b->ready, 0);
	b->gpu_now = 1;
	b->gpending = 0;
	atomic_store_explicit(&b->on_gpu, 1, memory_order_release);
}

/* The gathered hop to the GPU, with the attenuation limit asked for where it changed.
 * @pre no hop in flight on the GPU (!b->gpending: gf_neural_switch_hop collected it, or dropped
 * this hop; a return's reset waited for an abandoned one): the GPU backend writes the limit into
 * pinned memory that a hop's queued copy reads, and nothing but this order keeps a hop in flight
 * from reading it mid-change (no lock on the audio path). */
static int gpu_submit(struct gf_neural_bank *b)
{
	float lim = gf_neural_atten_asked(b);
	if (lim != b->gpu_atten) {
		b->gops->set_atten_lim(b->ginst, 0, b->active, lim);
		b->gpu_atten = lim;
	}
	int err = b->gops->submit(b->ginst, b->fill);
	if (!err) {
		b->gpending = 1;
		b->submitted_ns = gf_now_ns();
	}
	return err;
}

/* The hop in flight, waited for until @p deadline (0: without one) or until it counts as hung, if
 * sooner: 0 (collected, into job_out), GF_NEURAL_LATE, or a failure (a hop in flight
 * GF_NEURAL_HANG_NS is hung, whatever the backend says; the standby then has the rest of the
 * deadline). */
static int gpu_collect(struct gf_neural_bank *b, uint64_t deadline)
{
	uint64_t hung = b->submitted_ns + GF_NEURAL_HANG_NS;
	int r = b->gops->collect(b->ginst, b->job_out, deadline && deadline < hung ? deadline : hung);
	if (r == GF_NEURAL_LATE && gf_now_ns() >= hung)
		r = GF_E_TIMEOUT;
	if (!r)
		b->gpending = 0;
	return r;
}

int gf_neural_switch_hop(struct gf_neural_bank *b, uint64_t deadline)
{
	if (!b->gpu_now)
		take_return(b);
	if (!b->gpu_now)
		return 0;
	int r = 0;
	if (b->gpending) { /* a late hop still in flight: this one waits behind it, or is dropped */
		r = gpu_collect(b, deadline);
		if (r == GF_NEURAL_LATE) {
			atomic_fetch_add(&b->dropped, 1);
			return 1;
		}
	}
	r = r ? r : gpu_submit(b);
	r = r ? r : gpu_collect(b, deadline);
	if (!r)
		gf_neural_bank_collected(b);
	if (r == GF_NEURAL_LATE || !r)
		return 1; /* late: silence now, collected later */
	switch_to_standby(b);
	return 0; /* the standby takes this very hop */
}

void gf_neural_switch_poll(struct gf_neural_bank *b)
{
	if (!b->gpending)
		return;
	int r = gpu_collect(b, 1); /* a deadline past: one look */
	if (!r)
		gf_neural_bank_collected(b);
	else if (r != GF_NEURAL_LATE)
		switch_to_standby(b); /* the rest of this hop silent; the standby takes the next */
}

/* ---- the control thread ---------------------------------------------------- */

/* The GPU of the stage @p arg from a clean state, answering PROBE_HOPS hops of silence each within
 * GF_SUPPRESS_PROBE_WAIT_NS, then clean again: 0, or why not. A gf_suppress_probe_fn. */
static int probe(void *arg)
{
	struct gf_neural_bank *b = arg;
	size_t hop = (size_t)b->active * GF_NEURAL_HOP;
	float *in = b->probe, *out = b->probe + hop;
	memset(in, 0, hop * sizeof(float));
	int err = b->gops->reset(b->ginst, 0, b->active);
	for (int i = 0; !err && i < PROBE_HOPS; i++) {
		err = b->gops->submit(b->ginst, in);
		err = err ? err : b->gops->collect(b->ginst, out, gf_now_ns() + GF_SUPPRESS_PROBE_WAIT_NS);
	}
	return err ? err : b->gops->reset(b->ginst, 0, b->active);
}

/* The first look after a switch: say why, and when the GPU is tried again. */
static void said_switch(struct gf_neural_bank *b)
{
	const char *why = b->gops->error ? b->gops->error(b->ginst) : "";
	gf_warn("neural stage: a GPU hop failed or hung (%s): its %u channels run on the CPU now; the GPU "
		"is tried again in %.3g s",
		why && why[0] ? why : "no message", b->active, 1e-9 * (double)b->ret.first_ns);
}

void gf_neural_bank_try_return(struct gf_neural_bank *b)
{
	if (!b || !b->gops || atomic_load_explicit(&b->on_gpu, memory_order_acquire) ||
	    atomic_load(&b->ready))
		return; /* the worker owns the GPU while it runs on it, or is about to take it */
	int err = 0;
	enum gf_suppress_return_step step = gf_suppress_return_try(&b->ret, probe, b, &err);
	if (step == GF_SUPPRESS_RETURN_FIRST)
		said_switch(b);
	if (step != GF_SUPPRESS_RETURN_PROBED)
		return;
	if (err) {
		gf_info("neural stage: %u channels stay on the CPU: the GPU is not healthy yet (%s); next "
			"try "
			"in %.3g s",
			b->active, err == GF_NEURAL_LATE ? "a probe hop was late" : gf_strerror(err),
			1e-9 * (double)b->ret.step_ns);
		return;
	}
	atomic_fetch_add(&b->gpu_returns, 1);
	atomic_store_explicit(&b->ready, 1, memory_order_release); /* the worker's next hop */
	gf_info("neural stage: %u channels back on the GPU", b->active);
}

void gf_neural_switch_reset(struct gf_neural_bank *b, int idle)
{
	if (idle) {
		memset(b->hist, 0, (size_t)b->prime * b->active * GF_NEURAL_HOP * sizeof(float));
		b->hist_next = 0;
	}
	b->prime_due = 0;
	gf_suppress_return_reset(&b->ret);
	atomic_store(&b->ready, 0);
	int err = b->gops->reset(b->ginst, 0, b->active); /* a new stream tries the GPU again */
	if (err)
		gf_info("neural stage: %u channels stay on the CPU: the GPU's reset failed (%s)", b->active,
			b->gops->error ? b->gops->error(b->ginst) : gf_strerror(err));
	b->gpu_now = !err;
	b->gpending = 0;
	atomic_store(&b->on_gpu, !err);
}
