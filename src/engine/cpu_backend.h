/**
 * @file cpu_backend.h
 * Internals of the CPU backend (gf_cpu_backend in backend.h): the direct and
 * the partitioned-FFT convolvers, their cost models, and tuning knobs for
 * tests and benchmarks.
 *
 * Threads: _new/_free on the control thread; prime/process on one audio
 * thread, RT-safe (no allocation, no locks).
 */
#ifndef GPUFIR_CPU_BACKEND_H
#define GPUFIR_CPU_BACKEND_H

#include <stdint.h>

#include "error.h"
#include "filter_set.h"

/*
 * Hot kernels are compiled twice on x86-64, for AVX2+FMA and for the baseline,
 * and each instance picks once at create time. (No ifunc/target_clones: their
 * resolvers run before sanitizer runtimes start and crash instrumented builds.)
 */
#if defined(__x86_64__) && defined(__GNUC__)
#define GF_CPU_X86 1
#define GF_TARGET_AVX2 __attribute__((target("avx2,fma")))
#endif

/** 1 if the AVX2+FMA kernels should run here (and tuning does not forbid them). Control thread. */
int gf_cpu_use_avx2(void);

/* ---- direct: per-channel time-domain convolution, accumulated in double ---- */

struct gf_cpu_direct;

int gf_cpu_direct_new(struct gf_cpu_direct **out, const struct gf_filter_set *fs, uint32_t max_block,
		      struct gf_errbuf *eb);
void gf_cpu_direct_free(struct gf_cpu_direct *d);
/** Load interleaved history (oldest first); frames may be more or fewer than taps-1. */
void gf_cpu_direct_prime(struct gf_cpu_direct *d, const float *history, uint32_t frames);
/** Interleaved, 1..max_block frames, in may alias out. */
void gf_cpu_direct_process(struct gf_cpu_direct *d, const float *in, float *out, uint32_t frames);
/** Estimated cost per frame and channel in nanoseconds (the FFT model uses the same unit). */
double gf_cpu_direct_cost(uint32_t taps);

/* ---- fft: uniformly partitioned overlap-save, zero latency (FFTW single) ---- */

struct gf_cpu_fft;

/**
 * @param partition frames per partition (power of two >= 2), or 0 to choose by cost
 */
int gf_cpu_fft_new(struct gf_cpu_fft **out, const struct gf_filter_set *fs, uint32_t max_block,
		   uint32_t partition, struct gf_errbuf *eb);
void gf_cpu_fft_free(struct gf_cpu_fft *f);
void gf_cpu_fft_prime(struct gf_cpu_fft *f, const float *history, uint32_t frames);
void gf_cpu_fft_process(struct gf_cpu_fft *f, const float *in, float *out, uint32_t frames);
uint32_t gf_cpu_fft_partition(const struct gf_cpu_fft *f);
/** Partition size the cost model picks, and its cost per frame and channel (same units as direct). */
uint32_t gf_cpu_fft_choose_partition(uint32_t taps, uint32_t channels, uint32_t max_block, double *cost);

/* ---- tuning (tests and benchmarks; control thread, before create) ---- */

enum gf_cpu_head { GF_CPU_HEAD_AUTO = 0, GF_CPU_HEAD_DIRECT, GF_CPU_HEAD_FFT };

struct gf_cpu_tuning {
	uint32_t fft_partition;	   /**< 0 = by cost, else a power of two >= 2 */
	enum gf_cpu_head fft_head; /**< how partial partitions compute the head block */
	int baseline_kernels;	   /**< 1 = never use the AVX2+FMA kernels */
};

/** Override the choices the cost models make; a zeroed struct restores them. */
void gf_cpu_set_tuning(const struct gf_cpu_tuning *t);
void gf_cpu_get_tuning(struct gf_cpu_tuning *t);

#endif
