/*
 * The engine object: construction (backend choice, first instance, history
 * and scratch buffers, test hooks), teardown and queries. The audio path is
 * engine_process.c, swaps and the CPU fallback engine_swap.c.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cost.h"
#include "engine_internal.h"
#include "engine_test.h"
#include "gpu.h"
#include "log.h"
#include "test_hook.h"

/* ---- instances (control thread) ----------------------------------------- */

void gf_inst_destroy(struct gf_inst *in)
{
	if (in->bi && in->ops->destroy)
		in->ops->destroy(in->bi);
	gf_mix_free(in->mix);
	free(in);
}

void gf_inst_free(struct gf_engine *e, struct gf_inst *in)
{
	if (!in)
		return;
	/* Its work may still run: destroying it now could block (in a
	 * synchronize, say) on the control thread, or free what that work uses. */
	if (in->dead || in->inflight)
		gf_dying_add(e, in);
	else
		gf_inst_destroy(in);
}

/* Tests (engine_test.h): stand-ins for the CUDA backend and the CPU fallback. */
static const struct gf_backend_ops *g_test_primary, *g_test_fallback;

void gf_engine_test_backends(const struct gf_backend_ops *primary, const struct gf_backend_ops *fallback)
{
	g_test_primary = primary;
	g_test_fallback = fallback;
}

/* A mixer for a backend of plain sets: its paths as channels, the mixing in in->mix. */
static int inst_new_mixed(const struct gf_backend_ops *ops, const struct gf_engine_params *p,
			  const struct gf_filter_set *fs, struct gf_inst *in, struct gf_errbuf *eb)
{
	struct gf_engine_params pp = *p;
	pp.channels = fs->channels;
	struct gf_filter_set *plain = NULL;
	int err = ops->check_memory ? ops->check_memory(&pp, fs->taps, eb) : 0;
	if (err)
		return err;
	err = gf_filter_set_paths_plain(&plain, fs);
	if (!err)
		err = gf_mix_new(&in->mix, fs, p->max_block);
	if (!err)
		err = ops->create(&pp, plain, &in->bi, eb);
	if (err == GF_E_NOMEM && eb && !eb->msg[0])
		gf_errbuf_set(eb, "engine: out of memory for a mixer of %u paths", fs->channels);
	gf_filter_set_free(plain);
	return err;
}

int gf_inst_new(const struct gf_backend_ops *ops, const struct gf_engine_params *p,
		const struct gf_filter_set *fs, struct gf_inst **out, struct gf_errbuf *eb)
{
	*out = NULL;
	struct gf_inst *in = calloc(1, sizeof(*in));
	if (!in)
		return GF_E_NOMEM;
	int err;
	if (gf_filter_set_is_mixer(fs) && ops != &gf_cpu_backend) {
		err = inst_new_mixed(ops, p, fs, in, eb);
	} else {
		/* Refuse what will not fit with a message, before the backend allocates any of it. */
		err = ops->check_memory ? ops->check_memory(p, fs->taps, eb) : 0;
		if (!err)
			err = ops->create(p, fs, &in->bi, eb);
	}
	if (err) {
		gf_mix_free(in->mix);
		free(in);
		return err;
	}
	in->ops = ops;
	in->taps = fs->taps;
	in->algo = ops->algo_name ? ops->algo_name(in->bi) : "?";
	*out = in;
	return 0;
}

/* AUTO for a job of known size: the CPU when its whole run costs less than
 * CUDA's start-up plus the GPU's run (cost.h); else AUTO's usual course. */
static enum gf_backend_kind auto_by_cost(const struct gf_engine_params *p, const struct gf_filter_set *fs)
{
	struct gf_cost_calib cal;
	gf_cost_calib_current(&cal);
	struct gf_cost_job job = {
		.samples = p->job_samples,
		.taps = fs->taps,
		.channels = fs->channels, /* a mixer's paths: the GPU convolves each */
		.max_block = p->max_block,
		.algo = p->algo,
		.cpu_threads = p->job_cpu_threads,
	};
	struct gf_cost_estimate est;
	enum gf_backend_kind k = gf_cost_pick(&job, &cal, &est);
	gf_debug("engine: auto backend by cost: %s", est.why);
	return k == GF_BACKEND_CPU ? GF_BACKEND_CPU : GF_BACKEND_AUTO;
}

/* Choose the backend and build the first instance, falling back to the CPU under AUTO. */
static int engine_first_instance(struct gf_engine *e, const struct gf_filter_set *fs, struct gf_errbuf *eb)
{
	char desc[256] = "";
	enum gf_backend_kind kind = e->p.backend;

	if (kind == GF_BACKEND_AUTO && e->p.job_samples)
		kind = auto_by_cost(&e->p, fs);
	if (kind != GF_BACKEND_CPU && g_test_primary) {
		e->ops = g_test_primary;
		return gf_inst_new(e->ops, &e->p, fs, &e->cur, eb);
	}
	if (kind == GF_BACKEND_CPU) {
		e->ops = &gf_cpu_backend;
		return gf_inst_new(e->ops, &e->p, fs, &e->cur, eb);
	}
	if (e->p.gpu_path != GF_GPU_PATH_LAUNCHED) /* before the probe may start CUDA */
		gf_cuda_ask_persistent();
	int perr = gf_cuda_probe(e->p.gpu_index, desc, sizeof(desc));
	if (kind == GF_BACKEND_CUDA) {
		if (perr) {
			gf_errbuf_set(eb, "backend cuda: %s", desc);
			return perr;
		}
		e->ops = &gf_cuda_backend;
		return gf_inst_new(e->ops, &e->p, fs, &e->cur, eb);
	}
	if (perr == 0 && e->p.live_rate && !e->p.job_samples) {
		char why[320];
		kind = gf_cost_live_pick(&e->p, fs, why, sizeof(why));
		gf_info("engine: auto for a stream on %s: %s", desc, why);
		if (kind == GF_BACKEND_CPU) {
			e->ops = &gf_cpu_backend;
			return gf_inst_new(e->ops, &e->p, fs, &e->cur, eb);
		}
	}
	if (perr == 0) {
		gf_info("engine: CUDA device usable (%s): using the CUDA backend", desc);
		e->ops = &gf_cuda_backend;
		int err = gf_inst_new(e->ops, &e->p, fs, &e->cur, eb);
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
	return gf_inst_new(e->ops, &e->p, fs, &e->cur, eb);
}

void gf_engine_set_current(struct gf_engine *e, struct gf_inst *in)
{
	e->cur = in;
	atomic_store_explicit(&e->cur_taps, in->taps, memory_order_relaxed);
	atomic_store_explicit(&e->cur_algo, in->algo, memory_order_relaxed);
}

void gf_engine_set_desc(struct gf_engine *e, const struct gf_inst *in)
{
	const char *d = in->ops->describe ? in->ops->describe(in->bi) : in->ops->name;
	snprintf(e->desc, sizeof(e->desc), "%s backend, %s, %u taps: %s", in->ops->name, in->algo, in->taps,
		 d);
}

/* ---- construction ---------------------------------------------------------- */

int gf_engine_check_filter(const struct gf_engine_params *p, uint32_t max_taps, uint32_t out_channels,
			   const struct gf_filter_set *fs, struct gf_errbuf *eb)
{
	if (!fs || !fs->coeffs || fs->taps == 0) {
		gf_errbuf_set(eb, "engine: empty filter set");
		return GF_E_INVAL;
	}
	if (gf_filter_set_inputs(fs) != p->channels) {
		gf_errbuf_set(eb, "engine: filter set has %u channels, the stream has %u",
			      gf_filter_set_inputs(fs), p->channels);
		return GF_E_INVAL;
	}
	if (gf_filter_set_outputs(fs) != out_channels) {
		gf_errbuf_set(eb, "engine: filter set has %u output channels, the stream has %u",
			      gf_filter_set_outputs(fs), out_channels);
		return GF_E_INVAL;
	}
	if (gf_filter_set_check_paths(fs)) {
		gf_errbuf_set(eb, "engine: a mixer path names a channel out of range");
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

/*
 * Zeroed floats, every page faulted in now: calloc maps large blocks lazily,
 * and where the process's memory is not locked the audio thread would fault
 * the history ring in a page at a time on its first pass (docs/engine.md).
 */
static float *alloc_floats(size_t n)
{
	float *p = calloc(n ? n : 1, sizeof(float));
	if (p)
		for (size_t i = 0; i < n; i += 1024) /* 4 KiB; a write: a read would map the zero page */
			((volatile float *)p)[i] = 0.0f;
	return p;
}

static int engine_alloc(struct gf_engine *e)
{
	size_t blk = (size_t)e->p.max_block * e->p.channels, blk_out = (size_t)e->p.max_block * e->out_ch;
	e->hist = alloc_floats(2 * (size_t)e->hist_cap * e->p.channels);
	e->scratch_in = alloc_floats(blk);
	e->scratch_a = alloc_floats(blk_out);
	e->scratch_b = alloc_floats(blk_out);
	e->zeros = alloc_floats(blk);
	e->ramp = alloc_floats(e->p.crossfade_frames);
	e->ctl_out = alloc_floats(blk_out);
	if (!e->hist || !e->scratch_in || !e->scratch_a || !e->scratch_b || !e->zeros || !e->ramp ||
	    !e->ctl_out)
		return GF_E_NOMEM;
	/* Raised cosine sampled at frame centres: ramp[k] + ramp[N-1-k] == 1. */
	uint32_t n = e->p.crossfade_frames;
	for (uint32_t k = 0; k < n; k++)
		e->ramp[k] = (float)(0.5 - 0.5 * cos(M_PI * ((double)k + 0.5) / (double)n));
	return 0;
}

/*
 * Test hooks (docs/engine.md), each a count N of backend calls that pass first:
 * GPUFIR_FAULT_PROCESS_AFTER fails call N+1 with GF_E_CUDA;
 * GPUFIR_FAULT_HANG_AFTER makes call N+1 never complete (finish waits to the deadline);
 * GPUFIR_FAULT_STUCK_AFTER blocks the audio thread inside call N+1 for good;
 * GPUFIR_FAULT_LATE_AFTER makes call N+1 complete GPUFIR_FAULT_LATE_MS (10)
 * after its submit. GPUFIR_FAULT_CPU_TOO_SLOW=1 makes the fallback take the
 * CPU for too slow for the filter (muted, the primary backend tried again).
 * GPUFIR_FAULT_SLOW_CROSSFADE_US (a duration, not a count) makes every
 * crossfading block that much slower: late blocks inside a swap.
 */

static int64_t fault_hook(const char *name, const char *what)
{
	int64_t n = gf_test_hook_value(name, "engine");
	if (n >= 0)
		gf_warn("engine: test hook %s=%lld: backend call %lld will %s", name, (long long)n,
			(long long)n + 1, what);
	return n;
}

static void engine_hooks(struct gf_engine *e)
{
	e->fault_after = fault_hook("GPUFIR_FAULT_PROCESS_AFTER", "fail");
	e->hang_after = fault_hook("GPUFIR_FAULT_HANG_AFTER", "hang (never complete)");
	e->stuck_after = fault_hook("GPUFIR_FAULT_STUCK_AFTER", "block its thread for good");
	e->late_after = fault_hook("GPUFIR_FAULT_LATE_AFTER", "complete late (GPUFIR_FAULT_LATE_MS)");
	int64_t late_ms = gf_test_hook_value("GPUFIR_FAULT_LATE_MS", "engine");
	e->late_ns = 1000000ull * (uint64_t)(late_ms >= 0 ? late_ms : 10);
	e->cpu_slow_hook = gf_test_hook_value("GPUFIR_FAULT_CPU_TOO_SLOW", "engine") > 0;
	if (e->cpu_slow_hook)
		gf_warn("engine: test hook GPUFIR_FAULT_CPU_TOO_SLOW: the CPU counts as too slow for any "
			"filter");
	e->slow_xfade_us = gf_test_hook_value("GPUFIR_FAULT_SLOW_CROSSFADE_US", "engine");
	if (e->slow_xfade_us >= 0)
		gf_warn("engine: test hook GPUFIR_FAULT_SLOW_CROSSFADE_US=%lld: every crossfading block "
			"takes that many microseconds longer",
			(long long)e->slow_xfade_us);
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
	uint32_t out_ch = fs ? gf_filter_set_outputs(fs) : 0;
	int err = gf_engine_check_filter(p, max_taps, out_ch, fs, eb);
	if (err)
		return err;

	struct gf_engine *e = calloc(1, sizeof(*e));
	if (!e)
		return GF_E_NOMEM;
	e->p = *p;
	e->p.max_taps = max_taps;
	e->out_ch = out_ch;
	e->hist_frames = max_taps - 1;
	uint32_t extra = p->retry ? p->max_block : GF_ENGINE_HIST_MARGIN;
	if ((uint64_t)e->hist_frames + extra > UINT32_MAX / 2) {
		gf_errbuf_set(eb, "engine: %u taps with %u-frame blocks is too much history", max_taps,
			      p->max_block);
		err = GF_E_TOOLONG;
		goto fail;
	}
	/* Offline (retry) swaps nothing while it processes: no margin needed. */
	e->hist_cap = e->hist_frames + extra;
	engine_hooks(e);
	e->deadline_ns = 1000ull * (p->deadline_us ? p->deadline_us : GF_ENGINE_DEADLINE_DEFAULT_US);
	e->hang_ns = 1000000ull * (p->hang_ms ? p->hang_ms : GF_ENGINE_HANG_DEFAULT_MS);
	err = gf_filter_set_dup(&e->fs, fs);
	if (err)
		goto fail;
	e->fallback_ops = g_test_fallback ? g_test_fallback : &gf_cpu_backend;
	err = engine_first_instance(e, fs, eb);
	if (err)
		goto fail;
	e->primary = e->ops;
	/* A retry redoes the block on the CPU fallback, which for a CPU instance would
	 * fail as it did: only the test hooks make one fail. Without a whole block in
	 * the history, a call copies its last frames only, not all of them twice. */
	if (p->retry && e->cur->ops == &gf_cpu_backend && e->fault_after < 0 && e->hang_after < 0 &&
	    e->stuck_after < 0 && e->late_after < 0)
		e->hist_cap = e->hist_frames + GF_ENGINE_HIST_MARGIN;
	gf_engine_set_current(e, e->cur);
	err = engine_alloc(e);
	if (err) {
		gf_errbuf_set(eb, "engine: out of memory for %u channels x %u frames of history", p->channels,
			      e->hist_frames);
		goto fail;
	}
	gf_engine_set_desc(e, e->cur);
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
	gf_inst_free(e, e->cur);
	gf_inst_free(e, e->incoming);
	gf_inst_free(e, atomic_load(&e->pending));
	gf_inst_free(e, atomic_load(&e->fallback));
	gf_inst_free(e, atomic_load(&e->retired));
	gf_inst_free(e, atomic_load(&e->retired_b));
	gf_inst_free(e, atomic_load(&e->reprime));
	gf_dying_poll(e, 1); /* a short bounded wait, then what still runs is left alive */
	gf_filter_set_free(e->fs);
	free(e->hist);
	free(e->scratch_in);
	free(e->scratch_a);
	free(e->scratch_b);
	free(e->zeros);
	free(e->ramp);
	free(e->ctl_out);
	free(e);
}

/*
 * A new stream on the same filter: zero the history and let the backend
 * restart from it (prime with no frames resets its state), so a reused
 * engine gives exactly what a new one would. Offline batches use it to keep
 * one engine across files (gf_engine_reset_history, engine_process.c).
 */
int gf_engine_reset(struct gf_engine *e, struct gf_errbuf *eb)
{
	return gf_engine_reset_history(e, NULL, 0, eb);
}

/* ---- queries ---------------------------------------------------------------- */

uint32_t gf_engine_out_channels(const struct gf_engine *e)
{
	return e->out_ch;
}

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
	s->timeouts = atomic_load_explicit(&m->st_timeouts, memory_order_relaxed);
	s->late_blocks = atomic_load_explicit(&m->st_late, memory_order_relaxed);
	s->hangs = atomic_load_explicit(&m->st_hangs, memory_order_relaxed);
	s->returns = atomic_load_explicit(&m->st_returns, memory_order_relaxed);
	s->dying = atomic_load_explicit(&m->st_dying, memory_order_relaxed);
	s->cpu_too_slow = atomic_load_explicit(&m->st_cpu_slow, memory_order_relaxed);
	s->abandoned = atomic_load_explicit(&m->st_abandoned, memory_order_relaxed);
	s->takeup_frames = atomic_load_explicit(&m->st_takeup, memory_order_relaxed);
	s->takeup_frames_max = atomic_load_explicit(&m->st_takeup_max, memory_order_relaxed);
}

void gf_engine_release_device_work(void)
{
	gf_cuda_quit_kernels();
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

static const char *const g_gpu_paths[] = GF_GPU_PATH_NAMES;

int gf_gpu_path_parse(const char *s, enum gf_gpu_path *out)
{
	for (int i = 0; s && i < (int)(sizeof(g_gpu_paths) / sizeof(g_gpu_paths[0])); i++) {
		if (!strcmp(s, g_gpu_paths[i])) {
			*out = (enum gf_gpu_path)i;
			return 0;
		}
	}
	return GF_E_INVAL;
}

const char *gf_gpu_path_name(enum gf_gpu_path path)
{
	return (unsigned)path < sizeof(g_gpu_paths) / sizeof(g_gpu_paths[0]) ? g_gpu_paths[path] : "?";
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
