/**
 * @file neural_bank.h
 * The neural denoising stage of a stream's channels (`design = "deepfilter"`:
 * DeepFilterNet3), over interleaved audio at GF_NEURAL_RATE. The channels whose
 * chain has the stage run in one backend instance (neural.h: the reference
 * runtime today); every channel of the output lags its input by the same
 * latency (the backend's plus one hop of framing), those without the stage
 * and the stage's dry signal through a delay line.
 *
 * Hops go to helper threads (neural_pool.h), the active channels cut into
 * contiguous runs, one per helper, each channel's state touched by its
 * helper alone: the output is the same, bit for bit, whatever the number of
 * helpers. process_by waits for a hop until the caller's deadline (a live
 * stream's block); a hop not back by then is late, not dead, as the
 * suppressor's GPU hop (suppress_bank.h): its channels are silence from that
 * frame on and the call is counted (gf_neural_bank_late); the hop stays in
 * flight and is collected at a later call, its remaining frames played. A
 * hop that is due while the previous one is still in flight is dropped (its
 * input never reaches the model; counted in gf_neural_bank_dropped). A hop in
 * flight GF_NEURAL_HANG_NS is hung: the stage gives up (counted in
 * gf_neural_bank_failures) and its channels pass the delayed dry signal until
 * a reset() that finds the hop back. process (no deadline: offline) waits
 * without a bound.
 *
 * Asked for the GPU (opts.gpu: the engine runs on CUDA, and the backend is
 * the engine's own inference), every active channel runs in one GPU batch
 * (neural.h's gf_neural_gpu_ops) and opts.ops, built too, is its standby on
 * the CPU; where the GPU cannot be set up, the stage runs on the CPU (said
 * once, at info level). The suppressor's policy (suppress_bank.h): a GPU hop
 * not back by the deadline is late, as above (muted, counted in
 * gf_neural_bank_late, collected at a later call; the next hop due meanwhile
 * dropped), and the stage stays on the GPU. A hop that fails (GF_E_CUDA) or
 * is hung (in flight GF_NEURAL_HANG_NS) switches the stage to the standby at
 * once (counted in gf_neural_bank_gpu_failures): the standby restarts clean
 * on the last few hops of input, kept for it (enough to fill the model's
 * latency), and runs the hop due with the same deadline, so its output goes
 * on where the GPU's stopped: only the hop that failed, or the time a hung
 * one took to count as hung, is silence. gf_neural_bank_try_return (the
 * control thread) takes the GPU back when it is healthy again: a reset, a
 * few hops of silence each back in time, a reset again; the worker switches
 * at its next hop, the GPU restarting clean (its latency, 30 ms, of silence).
 *
 * Live controls (the API's hook): bypass ramps between the model's output and
 * the delayed dry signal over GF_NEURAL_RAMP_FRAMES; the attenuation limit
 * (the stage's depth) applies from the next hop.
 *
 * Threads: new/free/reset on the control (or build) thread: they load the
 * model (seconds per channel with the reference runtime), start and join
 * the helpers and may fail. process/gap on the audio thread: no allocation,
 * lock or I/O; its one wait ends at the deadline given. set_bypass and
 * set_atten_lim: any thread (atomics). The counters: any thread.
 */
#ifndef GPUFIR_NEURAL_BANK_H
#define GPUFIR_NEURAL_BANK_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "neural.h"

struct gf_neural_bank;

/** A hop in flight this long is hung: the stage gives up until reset() (the suppressor's hang_ms). */
#define GF_NEURAL_HANG_NS 250000000ull
/** Bypass ramps over this many frames (20 ms at 48 kHz): no click. */
#define GF_NEURAL_RAMP_FRAMES 960u
/** After a switch to the standby, the first wait before gf_neural_bank_try_return tries the GPU
 * again (doubling up to 32 times this after each failed try), where opts.return_ms is 0. */
#define GF_NEURAL_RETURN_DEFAULT_MS 1000u

/** Where a stage runs. */
struct gf_neural_bank_opts {
	const struct gf_neural_ops *ops; /**< NULL: the reference runtime */
	uint32_t threads;		 /**< helper threads; 0: one per online CPU (at most the channels) */
	int bypass;			 /**< start bypassed */
	int gpu;       /**< 1: run on the GPU where it can, @ref ops its CPU standby (see above) */
	int gpu_index; /**< the CUDA device */
	const struct gf_neural_ops *gpu_ops; /**< the GPU's backend; NULL: gf_neural_gpu_ops */
	uint32_t return_ms;		     /**< first wait before a return to the GPU; 0: the default */
};

/**
 * A stage for @p channels channels at @p rate: channel c runs the model where
 * @p active[c] is nonzero, else is only delayed. All active channels share @p p.
 * @return 0, GF_E_INVAL (no active channel, a rate other than GF_NEURAL_RATE,
 * bad parameters: message in @p eb), GF_E_IO (the runtime or the model could not
 * be loaded: message naming the file), GF_E_NOMEM, GF_E_SYSTEM.
 */
int gf_neural_bank_new(const uint8_t *active, uint32_t channels, uint32_t rate,
		       const struct gf_neural_params *p, const struct gf_neural_bank_opts *o,
		       struct gf_neural_bank **out, struct gf_errbuf *eb);

/** Waits for a hop in flight at most GF_NEURAL_HANG_NS, then frees; a hop still out then is hung, and
 * the stage is kept (never freed: its helper may still write into it). Accepts NULL. Control thread. */
void gf_neural_bank_free(struct gf_neural_bank *b);

/** Frames every channel of the output lags the input. Any thread. */
uint32_t gf_neural_bank_latency(const struct gf_neural_bank *b);

/** Channels that run the model. Any thread. */
uint32_t gf_neural_bank_active(const struct gf_neural_bank *b);

/** Helper threads the hops are spread over. Any thread. */
uint32_t gf_neural_bank_threads(const struct gf_neural_bank *b);

/** The name of the backend that runs the hops now (the GPU's, or the CPU's after a switch), for a
 * status line. Any thread. */
const char *gf_neural_bank_backend(const struct gf_neural_bank *b);

/** Calls with a hop late at the deadline (its channels muted meanwhile). Any thread. */
uint64_t gf_neural_bank_late(const struct gf_neural_bank *b);

/** Hops dropped because the one before was still in flight. Any thread. */
uint64_t gf_neural_bank_dropped(const struct gf_neural_bank *b);

/** 1 once a hung hop made the stage give up (dry until reset). Any thread. */
uint64_t gf_neural_bank_failures(const struct gf_neural_bank *b);

/** 1 while the hops run on the GPU (0: on the CPU, from the start or after a switch). Any thread. */
int gf_neural_bank_on_gpu(const struct gf_neural_bank *b);

/** Switches from the GPU to the standby since new(). Any thread. */
uint64_t gf_neural_bank_gpu_failures(const struct gf_neural_bank *b);

/** Returns to the GPU after a switch (gf_neural_bank_try_return). Any thread. */
uint64_t gf_neural_bank_gpu_returns(const struct gf_neural_bank *b);

/**
 * The return to the GPU after a switch to the standby, as the suppressor's
 * (gf_suppress_bank_try_return, which calls this): call it often. The first
 * call after a switch says why (the GPU's message, logged) and schedules a
 * try opts.return_ms later; a try resets the GPU (waiting at most 100 ms for
 * a hop in flight), has it answer a few hops of silence each within 50 ms,
 * resets it again and hands it to the worker, which takes it at its next hop
 * (one atomic store); a failed try doubles the wait, up to 32 times
 * return_ms. Accepts NULL. Control thread, while audio runs (the worker does
 * not touch the GPU while it is off it).
 */
void gf_neural_bank_try_return(struct gf_neural_bank *b);

/** Bypass on (1) or off (0), ramped. Any thread. */
void gf_neural_bank_set_bypass(struct gf_neural_bank *b, int on);

/** The attenuation limit, dB (0 < db <= GF_NEURAL_MAX_ATTEN_LIM_DB), from the next hop. Any thread.
 * @return 0 or GF_E_INVAL (out of range: unchanged). */
int gf_neural_bank_set_atten_lim(struct gf_neural_bank *b, double db);

/**
 * Run (or delay) @p frames interleaved frames in place, any number per call;
 * a hop due in this call is waited for until @p deadline_ns (gf_now_ns() time;
 * 0: without a bound, offline). Non-finite input reaches the model as silence.
 * Audio thread, RT-safe with a deadline.
 */
void gf_neural_bank_process_by(struct gf_neural_bank *b, float *buf, uint32_t frames, uint64_t deadline_ns);

/** Back to the state new() made (buffers, delay lines, counters of this stream kept), after waiting
 * for a hop in flight at most GF_NEURAL_HANG_NS: one still out then is hung, and the stage stays given
 * up (dry) until a later reset finds it back; on the GPU again where its reset succeeds; the CPU
 * model's own state runs on (the reference runtime's C API has no reset). Control thread, audio
 * stopped. */
void gf_neural_bank_reset(struct gf_neural_bank *b);

#endif
