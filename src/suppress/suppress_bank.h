/**
 * @file suppress_bank.h
 * The noise suppressors of a stream's channels (suppress.h), one per channel
 * whose chain has one (each with its chain's settings), over interleaved
 * audio. A channel without a suppressor is delayed by the same latency, so
 * that every channel of the output stays aligned with every other. The
 * neural stage (`design = "deepfilter"`, neural_bank.h), where a chain has
 * one, runs after the suppressors inside the same bank, so the stream and
 * the offline pipeline run both as one step with one latency; a bank may
 * hold the neural stage alone (no channel with a suppressor).
 *
 * Asked for the GPU (gf_suppress_bank_new_ex: the engine runs on CUDA), the
 * largest set of channels sharing identical parameters runs in one GPU
 * suppressor (suppress_gpu.h) when it has at least
 * GF_SUPPRESS_GPU_MIN_CHANNELS; where the GPU cannot be set up, the bank runs
 * on the CPU (logged once, at info level). The CPU suppressors of those
 * channels are built too and kept on standby. A GPU hop not back by the
 * deadline is late, not dead: the group's channels of that call are muted,
 * the call counted in gf_suppress_bank_gpu_late, and the group stays on the
 * GPU, which collects the hop at the next call (suppress_gpu.h: the noise
 * estimates and overlap-add advance over every frame, nothing is replayed).
 * Only a hop that fails (GF_E_CUDA) or is hung (still in flight
 * GF_SUPPRESS_GPU_HOP_WAIT_NS after its submission: GF_E_TIMEOUT) switches
 * the bank to the standby at once (that piece muted, counted in
 * gf_suppress_bank_gpu_failures) until reset().
 *
 * Asked for threads (opts.threads > 1: offline and batch), the channels the
 * CPU runs are cut into that many contiguous runs of about equal size, one
 * per thread (suppress_pool.h: the caller's and helpers started at new()),
 * each channel's state touched by its thread alone: the output is the same,
 * bit for bit, as on one thread. A GPU group of such a bank is cut the same
 * way, into as many parts as threads while each keeps at least 512 channels:
 * one GPU suppressor (its own stream) a part, whose gather, hops and scatter
 * run on that part's thread, so that the host's per-sample copies, which bound
 * one GPU suppressor at thousands of channels, spread over the cores
 * (bench_suppress). The parts' output is one GPU suppressor's up to cuFFT's
 * rounding; a part that fails fails the group, a late part mutes its own
 * channels.
 *
 * Threads: new/free/reset on the control (or build) thread: they allocate,
 * plan FFTW, start and join the helpers and may fail. process() on the audio
 * thread: no allocation, lock or I/O; its one wait, for the GPU, ends at the
 * deadline opts gave, or at the caller's (process_by: a stream's block, whose
 * engine waited first). With opts.threads > 1, process() also waits, without
 * a bound, for the helpers (a semaphore): such a bank is
 * for offline work, never a live stream's worker.
 *
 * Folder src/suppress/ (the suppressor, its bank, the neural stage in
 * neural/): this header is its entry point. It stands on the engine (its GPU
 * services and FFTW's wisdom), dfn and base.
 */
#ifndef GPUFIR_SUPPRESS_BANK_H
#define GPUFIR_SUPPRESS_BANK_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "suppress.h"

struct gf_neural_bank; /* neural_bank.h */

struct gf_suppress_bank;

/** Channels sharing identical parameters from which the GPU runs them: below, the CPU is faster
 * (bench/bench_suppress.c: slower at 1 channel, faster from 8, 26x from 256). */
#define GF_SUPPRESS_GPU_MIN_CHANNELS 8u

/** After a switch to the standby, the first wait before gf_suppress_bank_try_return tries the GPU
 * again (doubling up to 32 times this after each failed try), where opts.return_ms is 0. */
#define GF_SUPPRESS_RETURN_DEFAULT_MS 1000u

/** Where a bank may run (gf_suppress_bank_new_ex). */
struct gf_suppress_bank_opts {
	int gpu;	      /**< 1: try the GPU (the engine's backend is CUDA) */
	int gpu_index;	      /**< the CUDA device */
	uint32_t deadline_us; /**< the longest a process() call waits for the GPU, from its start (a
				   stream's worker passes its block's deadline to process_by instead);
				   0: GF_SUPPRESS_GPU_HOP_WAIT_NS a hop */
	uint32_t return_ms;   /**< first wait before a return to the GPU; 0: the default */
	uint32_t threads;     /**< CPU threads the CPU's channels are spread over (offline: see above);
				   0 or 1: the caller's alone, RT-safe */
	struct gf_neural_bank *neural; /**< the neural stage run after the suppressors (neural_bank.h),
					    owned by the bank from new() on, also when it fails; NULL: none */
};

/**
 * A bank for @p channels channels at @p rate: channel c is suppressed with
 * @p per_channel[c], or only delayed where that is NULL. The parameters (and
 * their noise samples) are read only during the call.
 * @return 0, GF_E_INVAL (no channel has a suppressor, or bad parameters:
 * message in @p eb) or GF_E_NOMEM.
 */
int gf_suppress_bank_new(const struct gf_suppress_params *const *per_channel, uint32_t channels,
			 uint32_t rate, struct gf_suppress_bank **out, struct gf_errbuf *eb);

/** gf_suppress_bank_new, on the GPU where @p o asks for it and it can (see above); @p o NULL: CPU. */
int gf_suppress_bank_new_ex(const struct gf_suppress_params *const *per_channel, uint32_t channels,
			    uint32_t rate, const struct gf_suppress_bank_opts *o,
			    struct gf_suppress_bank **out, struct gf_errbuf *eb);

/** Accepts NULL. Control thread. */
void gf_suppress_bank_free(struct gf_suppress_bank *b);

/** Frames every channel of the output lags the input (the suppressors' and the neural stage's). Any
 * thread. */
uint32_t gf_suppress_bank_latency(const struct gf_suppress_bank *b);

/** The suppressors' share of gf_suppress_bank_latency (0 where no channel has one). Any thread. */
uint32_t gf_suppress_bank_suppressor_latency(const struct gf_suppress_bank *b);

/** The neural stage the bank runs after its suppressors, for its status and its live controls
 * (neural_bank.h: bypass, attenuation limit); NULL: none. Any thread. */
struct gf_neural_bank *gf_suppress_bank_neural(const struct gf_suppress_bank *b);

/** Channels with a suppressor of their own (the others are only delayed). Any thread. */
uint32_t gf_suppress_bank_active(const struct gf_suppress_bank *b);

/** Channels the GPU runs now (0: all on the CPU, or after a switch to the standby). Any thread. */
uint32_t gf_suppress_bank_gpu_channels(const struct gf_suppress_bank *b);

/** Threads the CPU's channels are spread over (opts.threads, at most those channels; 1: the
 * caller's alone). Any thread. */
uint32_t gf_suppress_bank_threads(const struct gf_suppress_bank *b);

/** Switches from the GPU to the standby CPU suppressors since new(). Any thread. */
uint64_t gf_suppress_bank_gpu_failures(const struct gf_suppress_bank *b);

/** Returns to the GPU after a switch (gf_suppress_bank_try_return). Any thread. */
uint64_t gf_suppress_bank_gpu_returns(const struct gf_suppress_bank *b);

/** Calls whose GPU channels were muted because a hop was late (not a failure: still on the GPU).
 * Any thread. */
uint64_t gf_suppress_bank_gpu_late(const struct gf_suppress_bank *b);

/** Where the bank runs, for a status line: "64 channels on the GPU", "2 channels on the CPU",
 * "256 channels on the CPU (16 threads)", then the neural stage's: "; neural stage: 2 channels on
 * the CPU (2 threads)". */
void gf_suppress_bank_where(const struct gf_suppress_bank *b, char *buf, size_t len);

/**
 * The live controls (suppress.h): channel c's gain floor becomes @p per_channel[c]
 * (gf_suppress_floor_gain of its depth and bypass; channels without a suppressor are ignored),
 * ramped by the worker from its next call, or in place at once by reset(). One atomic store a
 * channel; never waits for the worker. The channels of a GPU group run one floor: the group's
 * first channel's is taken for all of them, and GF_E_INVAL says that some asked for another
 * (the rest is set all the same). Control thread. @return 0 or GF_E_INVAL.
 */
int gf_suppress_bank_set_floor(struct gf_suppress_bank *b, const float *per_channel);

/** Channel @p ch's floor as last set (1 where it has no suppressor). Any thread. */
float gf_suppress_bank_floor(const struct gf_suppress_bank *b, uint32_t ch);

/**
 * Suppress (or delay) @p frames interleaved frames in place, any number per
 * call. Audio thread, RT-safe. @return 0 (also for a late hop: the GPU's
 * channels silence from it on, counted), or the GF_E_* of a GPU failure in
 * this call (GF_E_CUDA, GF_E_TIMEOUT: a hang): the bank has switched to the
 * CPU and the GPU's channels of the failed piece are silence (the others are
 * not).
 */
int gf_suppress_bank_process(struct gf_suppress_bank *b, float *buf, uint32_t frames);

/**
 * gf_suppress_bank_process, with the GPU waited for until @p deadline_ns at
 * the latest (gf_now_ns() time; already past: one poll), not opts.deadline_us
 * from this call's start: the live worker passes its block's one deadline,
 * which the engine's wait has used first. 0: as gf_suppress_bank_process.
 */
int gf_suppress_bank_process_by(struct gf_suppress_bank *b, float *buf, uint32_t frames,
				uint64_t deadline_ns);

/**
 * gf_suppress_bank_process_by for @p frames frames that are a gap, not audio
 * (the engine muted them: NaN/Inf input, a late or failed block): every
 * suppressor takes them as missing input (suppress.h: silence, its state
 * held over the frames that hold them), so a gap costs its own frames and
 * the noise estimate stays as it was; the channels only delayed pass @p buf's
 * silence. Audio thread, RT-safe. @return as gf_suppress_bank_process_by.
 */
int gf_suppress_bank_gap_by(struct gf_suppress_bank *b, float *buf, uint32_t frames, uint64_t deadline_ns);

/**
 * The return to the GPU after a switch to the standby, shaped as the engine's (engine_recover.c):
 * call it often (as gf_engine_reap). The first call after a switch schedules a try
 * opts.return_ms later; a try resets the GPU suppressor (which waits at most 100 ms for a hop still in
 * flight), has it answer a few calls of silence in time, resets it again and publishes the group back (one
 * atomic store the worker reads at its next piece); a failed try doubles the wait, up to 32 times return_ms.
 * The GPU restarts clean, as at a stream's start: its channels are silence for its latency (about 24 ms) and
 * the noise estimate restarts from the parameters' seed. Control thread, while audio runs (the worker does
 * not touch the group while it is off the GPU). The neural stage's GPU is taken back here too, by the
 * same policy (gf_neural_bank_try_return).
 */
void gf_suppress_bank_try_return(struct gf_suppress_bank *b);

/**
 * Remove mains hum @p h in every suppressor's frames from their next frame on, each up to its
 * params' hum_harmonics (gf_suppress_set_hum; NULL or f0_hz 0: none): the CPU's, the GPU's and its
 * standby alike. Control thread, while audio runs (lock-free); one caller at a time.
 */
void gf_suppress_bank_set_hum(struct gf_suppress_bank *b, const struct gf_suppress_hum *h);

/** Back to the state new() made, on the GPU again where its reset succeeds. Control thread, audio
 * stopped. */
void gf_suppress_bank_reset(struct gf_suppress_bank *b);

#endif
