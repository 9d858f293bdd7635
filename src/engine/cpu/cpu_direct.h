/**
 * @file cpu_direct.h
 * The CPU backend's direct convolver: per-channel time-domain convolution,
 * accumulated in double. Best for short filters.
 *
 * Threads: _new/_free on the control thread; prime/process on one audio
 * thread, RT-safe (no allocation, no locks).
 */
#ifndef GPUFIR_CPU_DIRECT_H
#define GPUFIR_CPU_DIRECT_H

#include <stdint.h>

#include "error.h"
#include "filter_set.h"

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

#endif
