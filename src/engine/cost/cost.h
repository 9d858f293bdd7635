/**
 * @file cost.h
 * "auto by cost": which backend finishes a job of known size sooner. The CPU's
 * whole run is the CPU backend's own cost model (cpu_direct.c, cpu_fft.c:
 * nanoseconds per frame and channel for the filter's length and method)
 * times the job's samples; the GPU's is its start-up in a process (loading
 * CUDA, driver, context, the first instance, the teardown at exit) plus its
 * run. The start-up is measured on this machine the first time CUDA runs
 * and kept in a small cache file; until then a conservative default serves.
 *
 * Threads: control thread (the cache is a file). Nothing here is RT-safe.
 */
#ifndef GPUFIR_COST_H
#define GPUFIR_COST_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"

/** GPU start-up (ms) before any was measured here: above the 330-355 ms measured on an H200 host. */
#define GF_COST_GPU_STARTUP_DEFAULT_MS 400.0
/** GPU run, ns per sample (frame x channel), incl. PCIe: a PCIe 4 host's copies up and down. */
#define GF_COST_GPU_NS_PER_SAMPLE_DEFAULT 0.5
/** Environment variable naming the cache file (tests; "" = no cache at all). */
#define GF_COST_CACHE_ENV "GPUFIR_COST_CACHE"

/** What auto weighs. */
struct gf_cost_job {
	uint64_t samples;     /**< frames x channels of the whole job (file or batch); 0 = unknown */
	uint32_t taps;	      /**< filter length */
	uint32_t channels;    /**< channels per frame */
	uint32_t max_block;   /**< frames per call (the offline chunk) */
	enum gf_algo algo;    /**< forced method, or AUTO (the model's cheaper one) */
	uint32_t cpu_threads; /**< CPU threads the job spreads over (lanes x stripes); 0 = 1 */
};

/** The machine's costs (from the cache or defaults). */
struct gf_cost_calib {
	double gpu_startup_ms;	  /**< whole start-up and exit cost of CUDA in a process */
	double gpu_exit_ms;	  /**< the part of it measured at exit (information) */
	double gpu_ns_per_sample; /**< GPU run cost per sample */
	int measured;		  /**< 1: gpu_startup_ms was measured here, 0: the default */
};

struct gf_cost_estimate {
	double cpu_ms;	       /**< the CPU's whole run */
	double gpu_ms;	       /**< start-up + run */
	double gpu_startup_ms; /**< the start-up used */
	double gpu_run_ms;     /**< the run part */
	double cpu_ns_per_sample;
	enum gf_backend_kind pick; /**< GF_BACKEND_CPU or GF_BACKEND_CUDA */
	char why[320];		   /**< one line for -v: both estimates and where they came from */
};

/** Defaults: nothing measured yet. */
void gf_cost_calib_defaults(struct gf_cost_calib *c);

/** The CPU backend's model: ns per sample for @p taps by @p algo (AUTO: the cheaper method). */
double gf_cost_cpu_ns_per_sample(uint32_t taps, uint32_t channels, uint32_t max_block, enum gf_algo algo);

/**
 * Pick the cheaper backend for @p job under @p calib (pure: tests inject
 * costs). An unknown size (samples 0: a pipe, a live stream) picks CUDA, as
 * before costs were weighed; a tie picks the CPU (nothing to start). Fills @p est.
 */
enum gf_backend_kind gf_cost_pick(const struct gf_cost_job *job, const struct gf_cost_calib *calib,
				  struct gf_cost_estimate *est);

/**
 * 1 if the GPU wins for @p samples whatever the filter (the CPU's cheapest
 * model cost already exceeds the GPU's start-up): CUDA may start before the
 * taps are known. 1 for an unknown size (0).
 */
int gf_cost_gpu_certain(uint64_t samples, uint32_t cpu_threads, const struct gf_cost_calib *calib);

/* ---- auto for a stream (cost_live.c) ---------------------------------------- */

/** The GPU is picked for a stream only if its p99 per block is below this share of the CPU's:
 *  it has more ways to be late (launches, PCIe, the driver, other processes on the device). */
#define GF_COST_LIVE_GPU_MARGIN 0.8
/** The CPU is a candidate only if its model's time per block, for the longest filter a swap
 *  may bring (max_taps), stays under this share of the block period. */
#define GF_COST_LIVE_CPU_SHARE 0.25

/**
 * The decision (pure: tests inject figures): the lower 99th percentile per
 * block, the CPU unless the GPU's is below GF_COST_LIVE_GPU_MARGIN of it. A
 * figure below 0 means that backend cannot run the stream.
 */
enum gf_backend_kind gf_cost_live_choose(double cpu_p99_us, double gpu_p99_us);

/**
 * Auto for a stream (@p p->live_rate set, @p p->job_samples 0) on a machine
 * with a usable GPU: time both backends on @p fs's shape (blocks of
 * max_block frames paced at the stream's period, about a quarter of a
 * second each) and pick by gf_cost_live_choose; the CPU's model rules it out
 * first where max_taps would not fit GF_COST_LIVE_CPU_SHARE of a period.
 * Once per shape and process. Control thread (creates instances).
 * @return GF_BACKEND_CPU or GF_BACKEND_CUDA, with the reason in @p why.
 */
enum gf_backend_kind gf_cost_live_pick(const struct gf_engine_params *p, const struct gf_filter_set *fs,
				       char *why, size_t why_len);

/* ---- the cache file (cost_cache.c) ---------------------------------------- */

/**
 * The cache's path: $GPUFIR_COST_CACHE, else $XDG_CACHE_HOME/gpufir/costs,
 * else $HOME/.cache/gpufir/costs. @return 0, or GF_E_UNSUPPORTED when there is
 * none (the variable set to "", no HOME).
 */
int gf_cost_cache_path(char *buf, size_t len);

/** Create the folder of the cache file @p path (and ~/.cache above it) where missing. */
void gf_cost_cache_make_parent(const char *path);

/**
 * Load @p path into @p c. A missing, unreadable or corrupt file (any line
 * that does not parse, a value out of range, the wrong header) leaves the
 * defaults in @p c. @return 0 if loaded, GF_E_IO missing/unreadable, GF_E_FORMAT corrupt.
 */
int gf_cost_cache_load(const char *path, struct gf_cost_calib *c);

/**
 * Write @p c to @p path atomically (a temporary file beside it, renamed over
 * it), creating the folder (one level) if missing. @return 0 or GF_E_IO, why in @p eb.
 */
int gf_cost_cache_store(const char *path, const struct gf_cost_calib *c, struct gf_errbuf *eb);

/** The machine's costs now: the cache if it loads, else defaults. */
void gf_cost_calib_current(struct gf_cost_calib *c);

/* ---- measuring CUDA's start-up (cost_measure.c; called by cuda_loader.c) ---- */

/** The module is about to be loaded (once per process). */
void gf_cost_cuda_loading(void);
/** It loaded. */
void gf_cost_cuda_loaded(void);
/** The first CUDA instance is ready: the in-process start-up ends here; arms the exit-time measurement. */
void gf_cost_cuda_ready(void);
/**
 * Fold a measured start-up (in-process + exit, ms) into the cache: the first
 * measurement replaces the default, later ones average with it. Exit time.
 */
void gf_cost_record_startup(double inproc_ms, double exit_ms);

#endif
