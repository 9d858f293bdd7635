/**
 * @file clock.h
 * The one clock every layer measures time with: CLOCK_MONOTONIC, which no
 * change of the wall clock moves. Reading it is RT-safe (a vDSO call, no
 * syscall), on any thread.
 */
#ifndef GPUFIR_CLOCK_H
#define GPUFIR_CLOCK_H

#include <errno.h>
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

/** Sleep until gf_now_ns() reaches @p t (in the past: return at once); a signal does not cut it
 * short. It blocks, so it is no RT-safe call: calibration, benchmarks, and the test hooks that stand
 * for a slow or hung GPU. */
static inline void gf_sleep_until_ns(uint64_t t)
{
	struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/** gf_now_ns() in seconds: durations in reports, progress and benchmarks. */
static inline double gf_now_s(void)
{
	return (double)gf_now_ns() * 1e-9;
}

#endif
