/**
 * @file cpu_fft.h
 * The CPU backend's partitioned convolver: uniformly partitioned overlap-save
 * with zero latency (FFTW, single precision). Best for long filters.
 *
 * Threads: _new/_free on the control thread; prime/process on one audio
 * thread, RT-safe (no allocation, no locks).
 */
#ifndef GPUFIR_CPU_FFT_H
#define GPUFIR_CPU_FFT_H

#include <stdint.h>

#include "error.h"
#include "filter_set.h"

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
/** The most tail partitions one process() call has summed per channel: what bounds a call's cost. */
uint32_t gf_cpu_fft_tail_terms_max(const struct gf_cpu_fft *f);
/** Partition size the cost model picks, and its cost per frame and channel (same units as direct). */
uint32_t gf_cpu_fft_choose_partition(uint32_t taps, uint32_t channels, uint32_t max_block, double *cost);

#endif
