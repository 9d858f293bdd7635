/**
 * @file cpu_tune.h
 * What the CPU convolvers share: the choice of SIMD kernels for this machine
 * and the tuning knobs tests and benchmarks use to override the cost models.
 *
 * Threads: control thread (read at create time; never on the audio path).
 */
#ifndef GPUFIR_CPU_TUNE_H
#define GPUFIR_CPU_TUNE_H

#include <stdint.h>

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
