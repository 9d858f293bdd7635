/**
 * @file cpu_fft_cost.h
 * Internal to the CPU FFT convolver: its cost model's figures shared by the
 * partition choice (cpu_fft_cost.c) and the per-call head choice (cpu_fft.c).
 */
#ifndef GPUFIR_CPU_FFT_COST_H
#define GPUFIR_CPU_FFT_COST_H

#include <stdint.h>

/** Nanoseconds per float multiply-add of the direct head. */
#define GF_FFT_NS_HEAD_MAC 0.08

/** Nanoseconds of one real transform of @p n points. */
double gf_cpu_fft_transform_cost(uint32_t n);

#endif
