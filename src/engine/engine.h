/**
 * @file engine.h
 * Backend-neutral streaming convolution: y[n] = sum_k h_c[k] x_c[n-k] per channel,
 * or for a mixer (filter_set.h) y_o[n] = sum over the paths p into o of
 * sum_k h_p[k] x_in(p)[n-k] (the CPU natively, other backends on the paths as
 * channels, gathered and summed by the engine: engine_mix.c).
 *
 * Every algorithm is zero-latency: the output frames of a process() call are the
 * convolution of all input so far, up to and including that call's last frame.
 * Calls may have any frame count from 1 to max_block; history carries over.
 *
 * Threads: new/free/swap/reap on the control thread; process/flush on one
 * audio (worker) thread. process() is RT-safe: no allocation, no locks, no
 * blocking I/O; every wait on backend work in one call ends at one deadline,
 * params.deadline_us from its start. A block whose answer misses it is
 * muted and counted (late_blocks); the instance is kept and its late answer
 * collected at a later call. Only an instance that gives no block in time
 * for params.hang_ms, or fails, is given up: the engine continues on the
 * CPU and returns to its first backend once that is healthy again.
 *
 * Layer engine (src/engine/ and cuda/): this header is its entry point. It
 * stands on base only; control, stream and app call it.
 *
 * Filter swaps: swap() builds the new filter completely on the control
 * thread, primes it from the input history the audio thread keeps appending
 * and catches it up, then publishes it with one atomic store. The next
 * process() call feeds it the frames since (a block or two), crossfades from
 * the old filter over crossfade_frames (0 = switch at the block edge), and
 * retires the old one, which reap() (or the next swap()) frees on the
 * control thread.
 */
#ifndef GPUFIR_ENGINE_H
#define GPUFIR_ENGINE_H

#include <stdint.h>

#include "error.h"
#include "filter_set.h"

enum gf_backend_kind { GF_BACKEND_AUTO = 0, GF_BACKEND_CPU, GF_BACKEND_CUDA };
enum gf_algo { GF_ALGO_AUTO = 0, GF_ALGO_DIRECT, GF_ALGO_FFT };
/**
 * How the CUDA backend runs live blocks (the config's gpu_path, docs/cuda.md "Which path runs"):
 * LAUNCHED, kernels launched per block (the fused or the staged path, whichever was measured faster
 * for the shape); PERSISTENT, a resident kernel that polls for blocks, wherever it fits; AUTO, the
 * resident kernel where it was measured faster than the launched path. The resident kernel keeps its
 * SMs busy and needs CUDA started with 32 hardware queues, hence opt-in.
 */
enum gf_gpu_path { GF_GPU_PATH_LAUNCHED = 0, GF_GPU_PATH_AUTO, GF_GPU_PATH_PERSISTENT };

struct gf_engine_params {
	enum gf_backend_kind backend; /**< AUTO: by cost when job_samples is known (cost.h); for a
					   stream (live_rate) by measured time per block; else CUDA
					   when a device is usable; CPU when none is */
	enum gf_algo algo;	      /**< AUTO: chosen by cost */
	uint32_t channels;	      /**< interleaved channels per frame, >= 1 */
	uint32_t max_block;	      /**< most frames per process() call, >= 1 */
	uint32_t max_taps;	      /**< longest filter swap() accepts; 0 = initial taps */
	uint32_t crossfade_frames;    /**< swap crossfade length; 0 = hard switch at block edge */
	int gpu_index;		      /**< CUDA device ordinal */
	int retry;		      /**< 1: keep each call's input so gf_engine_retry() can redo a
					   failed call exactly (offline); costs a copy of each block */
	uint32_t deadline_us;	      /**< longest wait for one call's backend work (live: about
					   two block periods); 0 = GF_ENGINE_DEADLINE_DEFAULT_US */
	uint32_t hang_ms;	      /**< an instance that gives no block in time for this long is
					   hung: given up, the CPU takes over; 0 = GF_ENGINE_HANG_DEFAULT_MS */
	uint32_t return_ms;	      /**< after a fallback, the first try to return to the first
					   backend (doubling per failed try); 0 = GF_ENGINE_RETURN_DEFAULT_MS */
	uint64_t job_samples;	      /**< AUTO: frames x channels the whole job will filter (an
					   offline file or batch), weighed by cost; 0 = unknown (live) */
	uint32_t job_cpu_threads;     /**< AUTO: CPU threads such a job spreads over; 0 = 1 */
	uint32_t live_rate;	      /**< a stream's sample rate: AUTO then times both backends on
					   its blocks (cost.h, gf_cost_live_pick); 0 = not a stream */
	enum gf_gpu_path gpu_path;    /**< CUDA: the launched or the persistent path for live blocks */
};

/** Deadline when params.deadline_us is 0: generous, for offline calls of any size. */
#define GF_ENGINE_DEADLINE_DEFAULT_US 60000000u
/** No block in time for this long and an instance is hung (params.hang_ms 0). */
#define GF_ENGINE_HANG_DEFAULT_MS 250u
/** First try to return to the first backend after a fallback (params.return_ms 0). */
#define GF_ENGINE_RETURN_DEFAULT_MS 2000u

/** Live block sizes (frames per block) the stream and the config accept. */
#define GF_LIVE_BLOCK_MIN 16u
#define GF_LIVE_BLOCK_MAX 8192u

struct gf_engine;

struct gf_engine_stats {
	uint64_t frames;	    /**< frames processed */
	uint64_t swaps;		    /**< filter swaps completed */
	uint64_t nonfinite_blocks;  /**< blocks muted because the output held NaN/Inf */
	uint64_t errors;	    /**< blocks muted by a backend failure (until the fallback runs) */
	uint64_t fallbacks;	    /**< switches to the CPU backend after a backend failure */
	uint64_t timeouts;	    /**< backend calls that missed their deadline (each once) */
	uint64_t late_blocks;	    /**< blocks muted because an instance's answer was late */
	uint64_t hangs;		    /**< instances given up: no block in time for hang_ms */
	uint64_t returns;	    /**< switches back to the first backend after a fallback */
	uint64_t dying;		    /**< now: instances given up whose work is not yet known ended */
	uint64_t abandoned;	    /**< instances left alive, never destroyed: their work never ended */
	uint64_t cpu_too_slow;	    /**< now 1: the first backend failed and the CPU cannot run the
					 filter in real time: muted until the first backend is back */
	uint64_t takeup_frames;	    /**< frames the audio thread fed a new instance at the last take-up */
	uint64_t takeup_frames_max; /**< the most at any take-up (priming is the control thread's) */
};

/** Control thread. @return 0 or negative GF_E_*; details in @p eb. */
int gf_engine_new(struct gf_engine **out, const struct gf_engine_params *p, const struct gf_filter_set *fs,
		  struct gf_errbuf *eb);

/** Control thread, audio stopped. Accepts NULL. */
void gf_engine_free(struct gf_engine *e);

/**
 * Filter @p frames interleaved frames (1..max_block): @p in holds params.channels
 * channels, @p out gf_engine_out_channels() (they differ for a mixer). @p in and
 * @p out may alias (a buffer of the larger size).
 * RT-safe; every wait of the call ends at one deadline (params.deadline_us).
 * A non-finite output block is muted and counted. A block whose backend
 * answer misses the deadline is muted and counted (late_blocks,
 * GF_E_TIMEOUT); the instance keeps the call and a later block collects it,
 * then feeds it the frames it missed, so its output is exact again. No block
 * in time for params.hang_ms, or a backend failure, mutes the block and
 * parks the engine: until reap() has installed the CPU fallback, every block
 * is muted (the failed backend is not called again) and returns the
 * failure's code. The input keeps entering the history, so the fallback's
 * first block is exact.
 * @return 0, or a negative code after which the block's output is silence.
 */
int gf_engine_process(struct gf_engine *e, const float *in, float *out, uint32_t frames);

/**
 * gf_engine_process, with every wait of the call ending at @p deadline_ns
 * (gf_now_ns() time) instead of params.deadline_us from its start: a caller
 * whose block waits on more than the engine (the live worker: the engine,
 * then the noise suppressor's GPU) takes one deadline for all of it.
 * 0: params.deadline_us from the call's start. RT-safe.
 */
int gf_engine_process_by(struct gf_engine *e, const float *in, float *out, uint32_t frames,
			 uint64_t deadline_ns);

/** The longest wait of one process() call, in ns: params.deadline_us (or its default). Any thread. */
uint64_t gf_engine_deadline_ns(const struct gf_engine *e);

/**
 * Redo the last process() call, which failed, on the CPU fallback that reap()
 * has since published: its output written to @p out is exactly what a working
 * backend would have given (with params.retry the engine keeps that call's
 * input, so @p out may be the buffer that was muted). Call it before any
 * other process(); the offline path does, the live path just carries on.
 * Audio thread, RT-safe.
 * @return 0; GF_E_UNSUPPORTED without params.retry or where the engine started
 * on the CPU backend without a test hook (no copy kept: nothing could fail
 * that the CPU fallback would redo); GF_E_INVAL if the last
 * call did not fail or @p frames differs; the failure's code if no fallback
 * is published yet (@p out is then silence).
 */
int gf_engine_retry(struct gf_engine *e, float *out, uint32_t frames);

/** Same as processing @p frames frames of silence: call until taps-1 frames give the tail. RT-safe. */
int gf_engine_flush(struct gf_engine *e, float *out, uint32_t frames);

/**
 * Prepare @p fs (same channel count) off the audio path and publish it.
 * Control thread. @return 0, GF_E_BUSY if the previous swap (or a fallback,
 * or a return to the first backend) has not been taken up and retired yet,
 * or the engine is muted after a backend failure, GF_E_TOOLONG if fs->taps > max_taps, or a build error;
 * on error the running filter is untouched.
 */
int gf_engine_swap(struct gf_engine *e, const struct gf_filter_set *fs, struct gf_errbuf *eb);

/** 1 while a published swap has not yet completed its crossfade. Any thread. */
int gf_engine_swap_pending(const struct gf_engine *e);

/** The phases of a swap (or a fallback) that gf_engine_swap_window() reports. */
enum {
	GF_SWAP_BUILDING = 1, /**< the control thread builds and primes the new instance, or frees the old */
	GF_SWAP_PUBLISHED = 2 /**< published: taken up, then crossfading, on the audio thread */
};

/**
 * Nonzero while a swap or a fallback is in progress anywhere: GF_SWAP_BUILDING
 * and/or GF_SWAP_PUBLISHED. What the live worker attributes a block's lateness
 * to. Any thread.
 */
int gf_engine_swap_window(const struct gf_engine *e);

/**
 * Free retired filter instances (one given up is destroyed once its work has
 * ended: GPU work is told to stop, and left alive, counted, if it never
 * ends) and, after a backend failure, fall back to the CPU: build a CPU
 * instance of the current filter set and publish it like a swap without
 * crossfade (a warning is logged; backend_name() then says "cpu"). Until the
 * audio thread takes it up, process() mutes its blocks without calling the
 * failed backend. Where the CPU cannot run the filter in real time it says
 * so (an error, stats.cpu_too_slow) and stays muted instead. After a
 * fallback it tries the first backend again, params.return_ms after it and
 * at doubling intervals: a new instance that answers in time is primed and
 * swapped in (crossfaded like a reload; stats.returns). Control thread; call
 * it regularly (it may build an instance, as swap() does).
 */
void gf_engine_reap(struct gf_engine *e);

/**
 * Whether the last process(), retry() or flush() call's output was muted
 * (NaN/Inf in its input or output, late, a backend failure): silence that
 * is no filtering of the input, which a stage after the engine (the noise
 * suppressor) must not learn from. The thread that called it.
 */
int gf_engine_muted(const struct gf_engine *e);

/**
 * The GF_E_* code of a backend failure that reap() has not yet answered with
 * a CPU fallback (it stays until a fallback is published), else 0. Any thread.
 */
int gf_engine_failed(const struct gf_engine *e);

/**
 * Before _exit() with abandoned GPU work: tell the device's long-running
 * kernels to end, so that the driver's teardown does not wait for them. No
 * driver call; any thread.
 */
void gf_engine_release_device_work(void);

/**
 * Instances of any engine of this process whose work never ended (left
 * alive, their memory kept): then the process should end with _exit()
 * after gf_engine_release_device_work(). Any thread.
 */
unsigned gf_engine_left_work(void);

/**
 * Start a new stream with the current filter: the history is forgotten and the
 * output from here on is what a new engine would give, bit for bit. Control
 * thread, with no process() running. @return 0; GF_E_BUSY while a swap or a
 * CPU fallback is not complete; a backend error (free the engine then).
 */
int gf_engine_reset(struct gf_engine *e, struct gf_errbuf *eb);

/**
 * Start a new stream that continues @p history (@p frames interleaved
 * frames, oldest first; older ones count as zero): the output from here on
 * is the convolution of [history | input]. Where the history covers the
 * backend's whole reach and ends where a stream's partition would (the CPU
 * FFT: a multiple of its partition; gf_engine_reset_history_frames() says how
 * much it reads), the output is bit for bit that of an engine that had
 * filtered the history itself, so a file cut into stripes at those points
 * filters to the same bits on any number of engines. Non-finite history
 * samples count as zero, as process() treats them. Control thread, with no
 * process() running; allocates only for a history with NaN or Inf.
 * @return as gf_engine_reset(); GF_E_NOMEM.
 */
int gf_engine_reset_history(struct gf_engine *e, const float *history, uint32_t frames, struct gf_errbuf *eb);

/** The most history frames gf_engine_reset_history() can use for any filter of @p taps taps. */
uint32_t gf_engine_reset_history_frames(uint32_t taps);

/** Channels of process()'s output: the first filter set's outputs (a mixer's M; else
 * params.channels). Every swap keeps them. Any thread. */
uint32_t gf_engine_out_channels(const struct gf_engine *e);
/** "cpu" or "cuda". */
const char *gf_engine_backend_name(const struct gf_engine *e);
/** "direct" or "fft" of the current filter. */
const char *gf_engine_algo_name(const struct gf_engine *e);
/** Taps of the current filter. */
uint32_t gf_engine_taps(const struct gf_engine *e);
/** One-line description of backend and device, for logs. */
const char *gf_engine_describe(const struct gf_engine *e);
/** Counters; any thread (relaxed reads). */
void gf_engine_get_stats(const struct gf_engine *e, struct gf_engine_stats *s);

/** Parse "auto"/"cpu"/"cuda". @return 0 or GF_E_INVAL */
int gf_backend_parse(const char *s, enum gf_backend_kind *out);
/** Parse "auto"/"direct"/"fft". @return 0 or GF_E_INVAL */
int gf_algo_parse(const char *s, enum gf_algo *out);
/** The gpu_path values, in enum gf_gpu_path order (the config's and the tools' spelling). */
#define GF_GPU_PATH_NAMES                                                                                    \
	{                                                                                                    \
		"launched", "auto", "persistent"                                                             \
	}
/** Parse one of GF_GPU_PATH_NAMES. @return 0 or GF_E_INVAL */
int gf_gpu_path_parse(const char *s, enum gf_gpu_path *out);
/** The name of @p path in GF_GPU_PATH_NAMES. */
const char *gf_gpu_path_name(enum gf_gpu_path path);

#endif
