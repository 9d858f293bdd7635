/*
 * Internal to the engine: the engine object and the filter instances it runs,
 * shared by engine.c (construction, queries), engine_swap.c (control thread:
 * swaps, reaping, CPU fallback) and engine_process.c (audio thread).
 */
#ifndef GPUFIR_ENGINE_INTERNAL_H
#define GPUFIR_ENGINE_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "backend.h"
#include "engine.h"

/* Test hooks armed for an instance's call in flight (engine_call.c). */
enum gf_hook { GF_HOOK_NONE = 0, GF_HOOK_HANG, GF_HOOK_STUCK, GF_HOOK_LATE };

/* One filter instance; it carries its backend, which a fallback may change. */
struct gf_inst {
	const struct gf_backend_ops *ops;
	void *bi;
	struct gf_mix *mix; /* a mixer on a backend of plain sets (engine_mix.c), else NULL */
	uint32_t taps;
	const char *algo;
	/* The thread that runs it (the control thread until it is published,
	 * then the audio thread); seen by the control thread again through the
	 * retired and reprime slots' release/acquire. */
	uint64_t pos;	     /* absolute input frame its state has consumed (primed, fed, submitted) up to */
	uint32_t inflight;   /* frames of a call submitted and not yet collected (0: none) */
	int late_call;	     /* that call missed a deadline (counted once) */
	uint64_t late_since; /* start of its first block without an answer in time; 0: answering in time */
	int dead;	     /* given up (hung or failed): never called again; its work may still run */
	int for_fallback;    /* handed back for priming again: it came from the fallback slot */
	enum gf_hook hook;   /* hook of the call in flight */
	uint64_t hook_until; /* GF_HOOK_LATE: when that call completes */
	/* Control thread. */
	uint64_t stop_by;     /* dying: left alive if its work has not ended by then */
	struct gf_inst *next; /* on the engine's dying list, then on the list of those left alive */
};

/* ---- a mixer on a backend of plain sets (engine_mix.c) ---- */

struct gf_mix;
/** Control thread: gather and sum buffers for mixer @p fs, calls of up to @p max_block frames. */
int gf_mix_new(struct gf_mix **out, const struct gf_filter_set *fs, uint32_t max_block);
void gf_mix_free(struct gf_mix *m);
/** As the backend table's prime, submit and finish, on the mixer's inputs and outputs. */
int gf_mix_prime(struct gf_mix *m, const struct gf_inst *in, const float *history, uint32_t frames);
int gf_mix_submit(struct gf_mix *m, const struct gf_inst *in, const float *x, uint32_t frames);
int gf_mix_finish(struct gf_mix *m, const struct gf_inst *in, float *y, uint64_t deadline_ns);

/* An instance's calls, through its mixer where it has one. */
static inline int gf_inst_prime(struct gf_inst *in, const float *history, uint32_t frames)
{
	if (in->mix)
		return gf_mix_prime(in->mix, in, history, frames);
	return in->ops->prime ? in->ops->prime(in->bi, history, frames) : 0;
}

static inline int gf_inst_submit(struct gf_inst *in, const float *x, uint32_t frames)
{
	return in->mix ? gf_mix_submit(in->mix, in, x, frames) : in->ops->submit(in->bi, x, frames);
}

static inline int gf_inst_finish(struct gf_inst *in, float *y, uint64_t deadline_ns)
{
	return in->mix ? gf_mix_finish(in->mix, in, y, deadline_ns) : in->ops->finish(in->bi, y, deadline_ns);
}

struct gf_engine {
	struct gf_engine_params p; /* max_taps resolved; p.channels: the input's channels */
	uint32_t out_ch;	   /* the output's channels: a mixer's outputs, else p.channels */
	uint32_t hist_frames;	   /* max_taps - 1 */
	uint32_t hist_cap;	   /* hist_frames, + max_block with p.retry (the last block too),
				      + GF_ENGINE_HIST_MARGIN live (frames the audio thread may
				      append while the control thread primes from the ring) */

	/* Control thread only. */
	const struct gf_backend_ops *ops;	   /* backend of new instances: CPU after a fallback */
	const struct gf_backend_ops *primary;	   /* backend of the first instance: the one returned to */
	const struct gf_backend_ops *fallback_ops; /* the CPU backend (tests: a stand-in) */
	struct gf_filter_set *fs;		   /* copy of the newest published filter set */
	int fallback_error_logged;		   /* building the fallback failed (said once) */
	int fall_cause;				   /* the failure the last fallback answered */
	int on_fallback;	 /* after a fallback (or muted for want of one): return due */
	int cpu_too_slow;	 /* muted: the CPU cannot run the filter in real time */
	int return_given_up;	 /* too many instances left alive: no more returns */
	uint64_t next_return_ns; /* the next try to return to the primary backend */
	uint64_t return_step_ns; /* the wait before the try after it (doubles) */
	uint64_t returned_at_ns; /* the last return: a fallback soon after keeps the step */
	struct gf_inst *dying;	 /* given up: destroyed once their work has ended */

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
	float *ctl_out;		  /* control thread: discarded output of catch-up calls */
	int failed;		  /* a backend call failed: mute until the fallback is taken */
	int fail_err;		  /* its code */
	uint32_t redo_frames;	  /* frames of the last call if it failed (gf_engine_retry) */
	int redo_bad;		  /* that call's input held NaN/Inf */
	int muted;		  /* the last call's output was muted (gf_engine_muted) */
	uint64_t calls;		  /* backend submit() calls, for the fault hooks */
	int64_t fault_after;	  /* GPUFIR_FAULT_PROCESS_AFTER, -1 = off */
	int64_t hang_after;	  /* GPUFIR_FAULT_HANG_AFTER, -1 = off */
	int64_t stuck_after;	  /* GPUFIR_FAULT_STUCK_AFTER, -1 = off */
	int64_t slow_xfade_us;	  /* GPUFIR_FAULT_SLOW_CROSSFADE_US, -1 = off */
	int64_t late_after;	  /* GPUFIR_FAULT_LATE_AFTER, -1 = off */
	uint64_t late_ns;	  /* GPUFIR_FAULT_LATE_MS: how late that call completes */
	int cpu_slow_hook;	  /* GPUFIR_FAULT_CPU_TOO_SLOW: the CPU counts as too slow */
	uint64_t deadline_ns;	  /* longest wait for one process() call's backend work */
	uint64_t hang_ns;	  /* no block in time for this long: the instance is hung */

	/* Shared between threads. */
	_Atomic(struct gf_inst *) pending;   /* published by swap(), taken by process() */
	_Atomic(struct gf_inst *) fallback;  /* published by reap() after a failure */
	_Atomic(struct gf_inst *) retired;   /* left by process(), freed by reap() */
	_Atomic(struct gf_inst *) retired_b; /* the incoming instance a fallback cut short */
	_Atomic(struct gf_inst *) reprime;   /* taken but not usable (its position is gone or ahead):
						the control thread primes it again and republishes it */
	_Atomic uint32_t redo_pub;	     /* redo_frames for the control thread (params.retry) */
	atomic_int swap_busy;		     /* 1 from publish to end of crossfade */
	atomic_int building;	   /* 1 while the control thread builds, primes or frees for a swap */
	_Atomic uint64_t hist_pos; /* frames appended to the history (audio thread, release) */
	atomic_int backend_err;	   /* failure code raised by process(), handled by reap() */
	_Atomic uint32_t cur_taps;
	_Atomic(const char *) cur_algo;
	_Atomic uint64_t st_frames, st_swaps, st_nonfinite, st_errors, st_fallbacks;
	_Atomic uint64_t st_timeouts;		   /* audio thread: calls that missed a deadline */
	_Atomic uint64_t st_late, st_hangs;	   /* audio thread: late blocks, instances found hung */
	_Atomic uint64_t st_returns, st_dying;	   /* control thread: returns; instances dying now */
	_Atomic uint64_t st_cpu_slow;		   /* control thread: muted, the CPU too slow (0/1) */
	_Atomic uint64_t st_abandoned;		   /* control thread: instances left undestroyed */
	_Atomic uint64_t st_takeup, st_takeup_max; /* audio thread: frames fed at the last/worst take-up */

	char desc[320];
};

/* Live history margin: frames the audio thread may append while the control
 * thread primes from the ring (16384: a third of a second at 48 kHz). */
#define GF_ENGINE_HIST_MARGIN 16384u

/* The @p n history frames that end at absolute frame @p end (contiguous: the
 * ring is mirrored). The frames must still be in the ring. */
static inline const float *gf_engine_hist_at(const struct gf_engine *e, uint64_t end, uint32_t n)
{
	return e->hist + (size_t)((end - n) % e->hist_cap) * e->p.channels;
}

/* How an instance's part of a block went (engine_call.c); negative: given up, with that code. */
enum { GF_RUN_OK = 0, GF_RUN_LATE = 1 };

/* Control thread (engine.c). */
int gf_inst_new(const struct gf_backend_ops *ops, const struct gf_engine_params *p,
		const struct gf_filter_set *fs, struct gf_inst **out, struct gf_errbuf *eb);
/** Accepts NULL. One given up, or with a call in flight, goes to the dying list (engine_recover.c). */
void gf_inst_free(struct gf_engine *e, struct gf_inst *in);
/** Destroy now: its work is known to have ended. */
void gf_inst_destroy(struct gf_inst *in);
/** The one-line description gf_engine_describe() returns, for instance @p in. */
void gf_engine_set_desc(struct gf_engine *e, const struct gf_inst *in);
/** The filter set is usable by this engine: input and @p out_channels output channels, mixer
 * paths, length, finite. */
int gf_engine_check_filter(const struct gf_engine_params *p, uint32_t max_taps, uint32_t out_channels,
			   const struct gf_filter_set *fs, struct gf_errbuf *eb);

/* Control thread (engine_swap.c). */
/** Free what the audio thread has retired. */
void gf_engine_reap_retired(struct gf_engine *e);
/**
 * Prime @p in from the history ring while the audio thread keeps appending to
 * it, then catch up on the frames appended meanwhile, so that at most about a
 * block is left for the audio thread at take-up; sets in->pos. With @p back
 * (params.retry: the audio thread is the caller's own, not running) the
 * history ends @p back frames before the newest, and nothing is caught up.
 */
int gf_engine_prime_here(struct gf_engine *e, struct gf_inst *in, uint32_t back, struct gf_errbuf *eb);
/** One call on the control thread, through no test hook; a missed deadline gives it up. */
int gf_engine_ctl_call(struct gf_inst *in, const float *x, float *y, uint32_t frames, uint64_t deadline_ns);

/* Control thread (engine_recover.c): instances given up, the CPU's speed, returning. */
/** Keep @p in until its work has ended (asked to stop on every reap), then destroy it. */
void gf_dying_add(struct gf_engine *e, struct gf_inst *in);
/** Destroy the dying instances whose work has ended; leave alive those past their time
 * (@p final: the engine is freed, a short bounded wait first). */
void gf_dying_poll(struct gf_engine *e, int final);
/** Can the CPU fallback not run the current filter in real time (the cost model)? */
int gf_engine_cpu_too_slow(const struct gf_engine *e, double *block_ms);
/** A fallback happened: schedule the returns to the primary backend. */
void gf_engine_return_schedule(struct gf_engine *e);
/** After a fallback: when due, try the primary backend again and swap it back in. */
void gf_engine_try_return(struct gf_engine *e);

/* Audio thread (engine_call.c): one instance's calls, through the test hooks. */
/** Collect its late call (a poll: no wait), then feed it the frames it missed up to @p start
 * (within @p deadline_ns). @return 0 ready; GF_E_TIMEOUT/GF_E_BUSY not yet; other: failed. */
int gf_call_ready(struct gf_engine *e, struct gf_inst *in, uint64_t start, float *scratch,
		  uint64_t deadline_ns);
/** Start a call on @p frames frames at @p x. */
int gf_call_submit(struct gf_engine *e, struct gf_inst *in, const float *x, uint32_t frames);
/** Wait for the call in flight until @p deadline_ns (0: poll once); its output into @p y. */
int gf_call_collect(struct gf_engine *e, struct gf_inst *in, float *y, uint64_t deadline_ns);
/** What @p err means for the block that started at @p t0: GF_RUN_OK, GF_RUN_LATE (mute it,
 * the instance is kept), or negative: the instance is given up (hung: no block in time for
 * hang_ms, its missed frames gone from the ring, or failed). */
int gf_call_outcome(struct gf_engine *e, struct gf_inst *in, int err, uint64_t t0);

/* Any thread that owns the current instance (construction, then the audio thread). */
void gf_engine_set_current(struct gf_engine *e, struct gf_inst *in);

static inline void gf_stat_add(_Atomic uint64_t *c, uint64_t n)
{
	/* Single writer per counter: a relaxed load/store pair suffices. */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n, memory_order_relaxed);
}

#endif
