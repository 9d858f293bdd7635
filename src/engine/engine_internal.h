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

/* Test hooks armed for an instance's submitted call (engine_process.c). */
enum gf_hook { GF_HOOK_NONE = 0, GF_HOOK_HANG, GF_HOOK_STUCK };

/* One filter instance; it carries its backend, which a fallback may change. */
struct gf_inst {
	const struct gf_backend_ops *ops;
	void *bi;
	uint32_t taps;
	const char *algo;
	/* Audio thread, seen by the control thread through the retired slots'
	 * release/acquire: a finish() missed its deadline, so work may still be
	 * in flight on it. Never destroyed (destroy could block on that work). */
	int abandoned;
	enum gf_hook hook;		/* audio thread: hook of the call in flight */
	uint64_t pos;			/* absolute input frame its state has consumed (primed, fed) up to */
	struct gf_inst *next_abandoned; /* control thread: the list abandoned instances are kept on */
};

struct gf_engine {
	struct gf_engine_params p; /* max_taps resolved */
	uint32_t hist_frames;	   /* max_taps - 1 */
	uint32_t hist_cap;	   /* hist_frames, + max_block with p.retry (the last block too),
				      + GF_ENGINE_HIST_MARGIN live (frames the audio thread may
				      append while the control thread primes from the ring) */

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
	float *ctl_out;		  /* control thread: discarded output of catch-up calls */
	int failed;		  /* a backend call failed: mute until the fallback is taken */
	int fail_err;		  /* its code */
	uint32_t redo_frames;	  /* frames of the last call if it failed (gf_engine_retry) */
	int redo_bad;		  /* that call's input held NaN/Inf */
	uint64_t calls;		  /* backend submit() calls, for the fault hooks */
	int64_t fault_after;	  /* GPUFIR_FAULT_PROCESS_AFTER, -1 = off */
	int64_t hang_after;	  /* GPUFIR_FAULT_HANG_AFTER, -1 = off */
	int64_t stuck_after;	  /* GPUFIR_FAULT_STUCK_AFTER, -1 = off */
	int64_t slow_xfade_us;	  /* GPUFIR_FAULT_SLOW_CROSSFADE_US, -1 = off */
	uint64_t deadline_ns;	  /* longest wait for one block's backend work */

	/* Shared between threads. */
	_Atomic(struct gf_inst *) pending;   /* published by swap(), taken by process() */
	_Atomic(struct gf_inst *) fallback;  /* published by reap() after a failure */
	_Atomic(struct gf_inst *) retired;   /* left by process(), freed by reap() */
	_Atomic(struct gf_inst *) retired_b; /* the incoming instance a fallback cut short */
	atomic_int swap_busy;		     /* 1 from publish to end of crossfade */
	atomic_int building;	   /* 1 while the control thread builds, primes or frees for a swap */
	_Atomic uint64_t hist_pos; /* frames appended to the history (audio thread, release) */
	atomic_int backend_err;	   /* failure code raised by process(), handled by reap() */
	_Atomic uint32_t cur_taps;
	_Atomic(const char *) cur_algo;
	_Atomic uint64_t st_frames, st_swaps, st_nonfinite, st_errors, st_fallbacks;
	_Atomic uint64_t st_timeouts;		   /* audio thread: finish() calls that missed the deadline */
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

/* Control thread (engine.c). */
int gf_inst_new(const struct gf_backend_ops *ops, const struct gf_engine_params *p,
		const struct gf_filter_set *fs, struct gf_inst **out, struct gf_errbuf *eb);
/** Accepts NULL. An abandoned instance is left alive (its memory leaked), counted and logged. */
void gf_inst_free(struct gf_engine *e, struct gf_inst *in);
/** The one-line description gf_engine_describe() returns, for instance @p in. */
void gf_engine_set_desc(struct gf_engine *e, const struct gf_inst *in);
/** The filter set is usable by this engine: channels, length, finite. */
int gf_engine_check_filter(const struct gf_engine_params *p, uint32_t max_taps,
			   const struct gf_filter_set *fs, struct gf_errbuf *eb);

/* Control thread (engine_swap.c). */
/** Free what the audio thread has retired. */
void gf_engine_reap_retired(struct gf_engine *e);
/**
 * Prime @p in from the history ring while the audio thread keeps appending to
 * it, then catch up on the frames appended meanwhile, so that at most about a
 * block is left for the audio thread at take-up; sets in->pos.
 */
int gf_engine_prime_here(struct gf_engine *e, struct gf_inst *in, struct gf_errbuf *eb);

/* Both threads (engine_process.c): run @p in over the history frames
 * [in->pos, end) without output, in max_block calls, through no test hook.
 * A missed deadline abandons the instance. */
int gf_engine_feed(struct gf_engine *e, struct gf_inst *in, uint64_t end, float *scratch,
		   uint64_t deadline_ns);

/* Any thread that owns the current instance (construction, then the audio thread). */
void gf_engine_set_current(struct gf_engine *e, struct gf_inst *in);

static inline void gf_stat_add(_Atomic uint64_t *c, uint64_t n)
{
	/* Single writer per counter: a relaxed load/store pair suffices. */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n, memory_order_relaxed);
}

#endif
