/*
 * Backend-neutral streaming engine: picks a backend, keeps the input history,
 * swaps filters with a primed crossfade, and mutes non-finite blocks.
 *
 * Pipeline of one process() call (audio thread):
 *   1. scan the input; a block holding NaN/Inf is filtered as if those samples
 *      were zero (so no filter state is poisoned) and its output is muted;
 *   2. take a published swap (or, after a backend failure, the CPU fallback):
 *      prime the new instance with the history;
 *   3. append the block to the history ring;
 *   4. run the current instance (and the incoming one while crossfading);
 *      a failure mutes the block and parks the engine until reap() has built
 *      the CPU fallback (the failed backend is not called again);
 *   5. scan the output; mute and count a non-finite block.
 */
#include "engine.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backend.h"
#include "log.h"

/* One filter instance; it carries its backend, which a fallback may change. */
struct gf_inst {
	const struct gf_backend_ops *ops;
	void *bi;
	uint32_t taps;
	const char *algo;
};

struct gf_engine {
	struct gf_engine_params p; /* max_taps resolved */
	uint32_t hist_frames;	   /* max_taps - 1 */
	uint32_t hist_cap;	   /* hist_frames, + max_block with p.retry (the last block too) */

	/* Control thread only. */
	const struct gf_backend_ops *ops; /* backend of new instances: CPU after a fallback */
	struct gf_filter_set *fs;	  /* copy of the newest published filter set */
	int fallback_error_logged;	  /* building the fallback failed (said once) */

	/* Audio thread only. */
	struct gf_inst *cur;
	struct gf_inst *incoming; /* non-NULL while crossfading cur -> incoming */
	uint32_t fade_pos;	  /* frames of the crossfade done */
	float *hist;		  /* mirrored ring: frame i stored at i and i + hist_cap */
	uint32_t hist_w;	  /* next frame to write */
	float *scratch_in;	  /* sanitized input */
	float *scratch_a;	  /* old filter's output while crossfading */
	float *scratch_b;	  /* new filter's output while crossfading */
	float *zeros;		  /* flush input */
	float *ramp;		  /* crossfade gain of the new filter per frame */
	int failed;		  /* a backend call failed: mute until the fallback is taken */
	int fail_err;		  /* its code */
	uint32_t redo_frames;	  /* frames of the last call if it failed (gf_engine_retry) */
	int redo_bad;		  /* that call's input held NaN/Inf */
	uint64_t calls;		  /* backend process() calls, for the fault hook */
	int64_t fault_after;	  /* GPUFIR_FAULT_PROCESS_AFTER, -1 = off */

	/* Shared between threads. */
	_Atomic(struct gf_inst *) pending;   /* published by swap(), taken by process() */
	_Atomic(struct gf_inst *) fallback;  /* published by reap() after a failure */
	_Atomic(struct gf_inst *) retired;   /* left by process(), freed by reap() */
	_Atomic(struct gf_inst *) retired_b; /* the incoming instance a fallback cut short */
	atomic_int swap_busy;		     /* 1 from publish to end of crossfade */
	atomic_int backend_err;		     /* failure code raised by process(), handled by reap() */
	_Atomic uint32_t cur_taps;
	_Atomic(const char *) cur_algo;
	_Atomic uint64_t st_frames, st_swaps, st_nonfinite, st_errors, st_fallbacks;

	char desc[320];
};

/* ---- instances (control thread) ----------------------------------------- */

static void inst_free(struct gf_inst *in)
{
	if (!in)
		return;
	if (in->bi && in->ops->destroy)
		in->ops->destroy(in->bi);
	free(in);
}

static int inst_new(const struct gf_backend_ops *ops, const struct gf_engine_params *p,
		    const struct gf_filter_set *fs, struct gf_inst **out, struct gf_errbuf *eb)
{
	*out = NULL;
	struct gf_inst *in = calloc(1, sizeof(*in));
	if (!in)
		return GF_E_NOMEM;
	int err = ops->create(p, fs, &in->bi, eb);
	if (err) {
		in->bi = NULL;
		free(in);
		return err;
	}
	in->ops = ops;
	in->taps = fs->taps;
	in->algo = ops->algo_name ? ops->algo_name(in->bi) : "?";
	*out = in;
	return 0;
}

/* Choose the backend and build the first instance, falling back to the CPU under AUTO. */
static int engine_first_instance(struct gf_engine *e, const struct gf_filter_set *fs, struct gf_errbuf *eb)
{
	char desc[256] = "";
	enum gf_backend_kind kind = e->p.backend;

	if (kind == GF_BACKEND_CPU) {
		e->ops = &gf_cpu_backend;
		return inst_new(e->ops, &e->p, fs, &e->cur, eb);
	}
	int perr = gf_cuda_probe(e->p.gpu_index, desc, sizeof(desc));
	if (kind == GF_BACKEND_CUDA) {
		if (perr) {
			gf_errbuf_set(eb, "backend cuda: %s", desc);
			return perr;
		}
		e->ops = &gf_cuda_backend;
		return inst_new(e->ops, &e->p, fs, &e->cur, eb);
	}
	if (perr == 0) {
		gf_info("engine: CUDA device usable (%s): using the CUDA backend", desc);
		e->ops = &gf_cuda_backend;
		int err = inst_new(e->ops, &e->p, fs, &e->cur, eb);
		if (err == 0)
			return 0;
		gf_warn("engine: CUDA backend failed (%s: %s): falling back to the CPU backend",
			gf_strerror(err), eb ? eb->msg : "");
	} else {
		/* A CPU-only build has nothing to report at info level. */
		gf_log(perr == GF_E_UNSUPPORTED ? GF_LOG_DEBUG : GF_LOG_INFO,
		       "engine: %s: using the CPU backend", desc);
	}
	e->ops = &gf_cpu_backend;
	return inst_new(e->ops, &e->p, fs, &e->cur, eb);
}

static void engine_set_current(struct gf_engine *e, struct gf_inst *in)
{
	e->cur = in;
	atomic_store_explicit(&e->cur_taps, in->taps, memory_order_relaxed);
	atomic_store_explicit(&e->cur_algo, in->algo, memory_order_relaxed);
}

static void engine_describe(struct gf_engine *e, const struct gf_inst *in)
{
	const char *d = in->ops->describe ? in->ops->describe(in->bi) : in->ops->name;
	snprintf(e->desc, sizeof(e->desc), "%s backend, %s, %u taps: %s", in->ops->name, in->algo, in->taps,
		 d);
}

/* ---- construction ---------------------------------------------------------- */

static int check_filter(const struct gf_engine_params *p, uint32_t max_taps, const struct gf_filter_set *fs,
			struct gf_errbuf *eb)
{
	if (!fs || !fs->coeffs || fs->taps == 0) {
		gf_errbuf_set(eb, "engine: empty filter set");
		return GF_E_INVAL;
	}
	if (fs->channels != p->channels) {
		gf_errbuf_set(eb, "engine: filter set has %u channels, the stream has %u", fs->channels,
			      p->channels);
		return GF_E_INVAL;
	}
	if (fs->taps > max_taps) {
		gf_errbuf_set(eb, "engine: filter has %u taps, more than max_taps %u", fs->taps, max_taps);
		return GF_E_TOOLONG;
	}
	if (gf_filter_set_check_finite(fs)) {
		gf_errbuf_set(eb, "engine: filter coefficients hold NaN or Inf");
		return GF_E_NONFINITE;
	}
	return 0;
}

static float *alloc_floats(size_t n)
{
	return calloc(n ? n : 1, sizeof(float));
}

static int engine_alloc(struct gf_engine *e)
{
	size_t blk = (size_t)e->p.max_block * e->p.channels;
	e->hist = alloc_floats(2 * (size_t)e->hist_cap * e->p.channels);
	e->scratch_in = alloc_floats(blk);
	e->scratch_a = alloc_floats(blk);
	e->scratch_b = alloc_floats(blk);
	e->zeros = alloc_floats(blk);
	e->ramp = alloc_floats(e->p.crossfade_frames);
	if (!e->hist || !e->scratch_in || !e->scratch_a || !e->scratch_b || !e->zeros || !e->ramp)
		return GF_E_NOMEM;
	/* Raised cosine sampled at frame centres: ramp[k] + ramp[N-1-k] == 1. */
	uint32_t n = e->p.crossfade_frames;
	for (uint32_t k = 0; k < n; k++)
		e->ramp[k] = (float)(0.5 - 0.5 * cos(M_PI * ((double)k + 0.5) / (double)n));
	return 0;
}

/* Test hook: GPUFIR_FAULT_PROCESS_AFTER=N fails backend process() call N+1 with GF_E_CUDA. */
static int64_t fault_hook(void)
{
	const char *s = getenv("GPUFIR_FAULT_PROCESS_AFTER");
	if (!s || !*s)
		return -1;
	char *end;
	errno = 0;
	long long n = strtoll(s, &end, 10);
	if (errno || *end || n < 0) {
		gf_warn("engine: ignoring GPUFIR_FAULT_PROCESS_AFTER=%s (not a count)", s);
		return -1;
	}
	gf_warn("engine: test hook GPUFIR_FAULT_PROCESS_AFTER=%lld: backend process() call %lld will fail", n,
		n + 1);
	return n;
}

int gf_engine_new(struct gf_engine **out, const struct gf_engine_params *p, const struct gf_filter_set *fs,
		  struct gf_errbuf *eb)
{
	*out = NULL;
	if (!p || p->channels == 0 || p->max_block == 0) {
		gf_errbuf_set(eb, "engine: channels and max_block must be at least 1");
		return GF_E_INVAL;
	}
	uint32_t max_taps = p->max_taps ? p->max_taps : (fs ? fs->taps : 0);
	int err = check_filter(p, max_taps, fs, eb);
	if (err)
		return err;

	struct gf_engine *e = calloc(1, sizeof(*e));
	if (!e)
		return GF_E_NOMEM;
	e->p = *p;
	e->p.max_taps = max_taps;
	e->hist_frames = max_taps - 1;
	if ((uint64_t)e->hist_frames + p->max_block > UINT32_MAX / 2) {
		gf_errbuf_set(eb, "engine: %u taps with %u-frame blocks is too much history", max_taps,
			      p->max_block);
		err = GF_E_TOOLONG;
		goto fail;
	}
	e->hist_cap = e->hist_frames + (p->retry ? p->max_block : 0);
	e->fault_after = fault_hook();
	err = gf_filter_set_dup(&e->fs, fs);
	if (err)
		goto fail;
	err = engine_first_instance(e, fs, eb);
	if (err)
		goto fail;
	engine_set_current(e, e->cur);
	err = engine_alloc(e);
	if (err) {
		gf_errbuf_set(eb, "engine: out of memory for %u channels x %u frames of history", p->channels,
			      e->hist_frames);
		goto fail;
	}
	engine_describe(e, e->cur);
	*out = e;
	return 0;
fail:
	gf_engine_free(e);
	return err;
}

void gf_engine_free(struct gf_engine *e)
{
	if (!e)
		return;
	inst_free(e->cur);
	inst_free(e->incoming);
	inst_free(atomic_load(&e->pending));
	inst_free(atomic_load(&e->fallback));
	inst_free(atomic_load(&e->retired));
	inst_free(atomic_load(&e->retired_b));
	gf_filter_set_free(e->fs);
	free(e->hist);
	free(e->scratch_in);
	free(e->scratch_a);
	free(e->scratch_b);
	free(e->zeros);
	free(e->ramp);
	free(e);
}

/* ---- swap (control thread) ------------------------------------------------ */

static void stat_add(_Atomic uint64_t *c, uint64_t n)
{
	/* Single writer per counter: a relaxed load/store pair suffices. */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n, memory_order_relaxed);
}

static void reap_retired(struct gf_engine *e)
{
	inst_free(atomic_exchange_explicit(&e->retired, NULL, memory_order_acquire));
	inst_free(atomic_exchange_explicit(&e->retired_b, NULL, memory_order_acquire));
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
	inst_free(atomic_exchange_explicit(&e->pending, NULL, memory_order_acquire));
	const char *failed = strcmp(e->ops->name, "cuda") == 0 ? "CUDA" : "CPU";
	struct gf_errbuf eb = {{0}};
	struct gf_inst *in;
	int err = inst_new(&gf_cpu_backend, &e->p, e->fs, &in, &eb);
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
	engine_describe(e, in);
	atomic_store_explicit(&e->backend_err, 0, memory_order_relaxed);
	stat_add(&e->st_fallbacks, 1); /* control-thread counter: one writer */
	atomic_store_explicit(&e->swap_busy, 1, memory_order_relaxed);
	atomic_store_explicit(&e->fallback, in, memory_order_release);
}

void gf_engine_reap(struct gf_engine *e)
{
	if (!e)
		return;
	reap_retired(e);
	int cause = atomic_load_explicit(&e->backend_err, memory_order_acquire);
	if (cause)
		engine_fall_back(e, cause);
}

int gf_engine_swap(struct gf_engine *e, const struct gf_filter_set *fs, struct gf_errbuf *eb)
{
	if (!e)
		return GF_E_INVAL;
	int err = check_filter(&e->p, e->p.max_taps, fs, eb);
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
	reap_retired(e);

	struct gf_filter_set *copy;
	err = gf_filter_set_dup(&copy, fs);
	if (err)
		return err;
	struct gf_inst *in;
	err = inst_new(e->ops, &e->p, fs, &in, eb);
	if (err) {
		gf_filter_set_free(copy);
		return err;
	}
	gf_filter_set_free(e->fs);
	e->fs = copy;
	engine_describe(e, in);
	atomic_store_explicit(&e->swap_busy, 1, memory_order_relaxed);
	atomic_store_explicit(&e->pending, in, memory_order_release);
	return 0;
}

int gf_engine_swap_pending(const struct gf_engine *e)
{
	return atomic_load_explicit(&((struct gf_engine *)e)->swap_busy, memory_order_acquire);
}

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

static void hist_append(struct gf_engine *e, const float *x, uint32_t frames)
{
	uint32_t cap = e->hist_cap, ch = e->p.channels;
	if (cap == 0)
		return;
	if (frames > cap) {
		x += (size_t)(frames - cap) * ch;
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
}

static void finish_swap(struct gf_engine *e, struct gf_inst *old)
{
	atomic_store_explicit(&e->retired, old, memory_order_release);
	stat_add(&e->st_swaps, 1);
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
	engine_set_current(e, in);
	e->failed = 0;
	atomic_store_explicit(&e->retired_b, cut, memory_order_release);
	atomic_store_explicit(&e->retired, old, memory_order_release);
	atomic_store_explicit(&e->swap_busy, 0, memory_order_release);
}

/*
 * Take a published instance: prime it with the history that ends @p back
 * frames before the newest frame, then switch or start a crossfade. A parked
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
	const float *h = hist_span(e, e->hist_frames, back);
	int err = in->ops->prime ? in->ops->prime(in->bi, h, e->hist_frames) : 0;
	if (err) {
		/* Keep the running filter; the control thread frees the failed one. */
		stat_add(&e->st_errors, 1);
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
		engine_set_current(e, in);
		finish_swap(e, old);
		return;
	}
	e->incoming = in;
	e->fade_pos = 0;
}

/* One backend process() call, through the fault-injection hook. */
static int backend_process(struct gf_engine *e, const struct gf_inst *in, const float *x, float *y,
			   uint32_t frames)
{
	if (e->fault_after >= 0 && e->calls++ == (uint64_t)e->fault_after)
		return GF_E_CUDA;
	return in->ops->process(in->bi, x, y, frames);
}

static int run_crossfade(struct gf_engine *e, const float *x, float *y, uint32_t frames)
{
	uint32_t ch = e->p.channels, n = e->p.crossfade_frames;
	int err = backend_process(e, e->cur, x, e->scratch_a, frames);
	if (!err)
		err = backend_process(e, e->incoming, x, e->scratch_b, frames);
	if (err)
		return err; /* the ramp resumes on the fallback's terms: it cuts it short */
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
		engine_set_current(e, e->incoming);
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
	if (e->failed)
		err = e->fail_err; /* parked: never call a failed backend again */
	else if (e->incoming)
		err = run_crossfade(e, x, out, frames);
	else
		err = backend_process(e, e->cur, x, out, frames);
	if (err) {
		memset(out, 0, n * sizeof(float));
		stat_add(&e->st_errors, 1);
		if (!e->failed)
			raise_failure(e, err);
		e->redo_frames = frames;
		e->redo_bad = bad;
	} else if (bad || any_nonfinite(out, n)) {
		memset(out, 0, n * sizeof(float));
		stat_add(&e->st_nonfinite, 1);
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
	stat_add(&e->st_frames, frames);
	return err;
}

int gf_engine_retry(struct gf_engine *e, float *out, uint32_t frames)
{
	if (!e->p.retry)
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

/* ---- queries ---------------------------------------------------------------- */

const char *gf_engine_backend_name(const struct gf_engine *e)
{
	return e->ops->name;
}

const char *gf_engine_algo_name(const struct gf_engine *e)
{
	return atomic_load_explicit(&((struct gf_engine *)e)->cur_algo, memory_order_relaxed);
}

uint32_t gf_engine_taps(const struct gf_engine *e)
{
	return atomic_load_explicit(&((struct gf_engine *)e)->cur_taps, memory_order_relaxed);
}

const char *gf_engine_describe(const struct gf_engine *e)
{
	return e->desc;
}

void gf_engine_get_stats(const struct gf_engine *e, struct gf_engine_stats *s)
{
	struct gf_engine *m = (struct gf_engine *)e;
	s->frames = atomic_load_explicit(&m->st_frames, memory_order_relaxed);
	s->swaps = atomic_load_explicit(&m->st_swaps, memory_order_relaxed);
	s->nonfinite_blocks = atomic_load_explicit(&m->st_nonfinite, memory_order_relaxed);
	s->errors = atomic_load_explicit(&m->st_errors, memory_order_relaxed);
	s->fallbacks = atomic_load_explicit(&m->st_fallbacks, memory_order_relaxed);
}

int gf_engine_failed(const struct gf_engine *e)
{
	return atomic_load_explicit(&((struct gf_engine *)e)->backend_err, memory_order_acquire);
}

int gf_backend_parse(const char *s, enum gf_backend_kind *out)
{
	if (!s)
		return GF_E_INVAL;
	if (!strcasecmp(s, "auto"))
		*out = GF_BACKEND_AUTO;
	else if (!strcasecmp(s, "cpu"))
		*out = GF_BACKEND_CPU;
	else if (!strcasecmp(s, "cuda") || !strcasecmp(s, "gpu"))
		*out = GF_BACKEND_CUDA;
	else
		return GF_E_INVAL;
	return 0;
}

int gf_algo_parse(const char *s, enum gf_algo *out)
{
	if (!s)
		return GF_E_INVAL;
	if (!strcasecmp(s, "auto"))
		*out = GF_ALGO_AUTO;
	else if (!strcasecmp(s, "direct"))
		*out = GF_ALGO_DIRECT;
	else if (!strcasecmp(s, "fft"))
		*out = GF_ALGO_FFT;
	else
		return GF_E_INVAL;
	return 0;
}
