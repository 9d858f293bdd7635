/**
 * @file clock.h
 * The one clock every layer measures time with: CLOCK_MONOTONIC, which no
 * change of the wall clock moves. RT-safe (a vDSO call, no syscall), any
 * thread.
 */
#ifndef GPUFIR_CLOCK_H
#define GPUFIR_CLOCK_H

#include <stdint.h>
#include <time.h>

/** CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t gf_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/** gf_now_ns() in whole milliseconds: the control loop's timers. */
static inline int64_t gf_now_ms(void)
{
	return (int64_t)(gf_now_ns() / 1000000u);
}

/** gf_now_ns() in seconds: durations in reports, progress and benchmarks. */
static inline double gf_now_s(void)
{
	return (double)gf_now_ns() * 1e-9;
}

#endif
