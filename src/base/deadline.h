/**
 * @file deadline.h
 * Absolute deadlines for the timed waits (pthread_cond_timedwait,
 * pthread_timedjoin_np, clock_nanosleep): now on a clock plus a delay.
 * clock_gettime only (the vDSO): RT-safe, any thread.
 */
#ifndef GPUFIR_DEADLINE_H
#define GPUFIR_DEADLINE_H

#include <stdint.h>
#include <time.h>

/** The time @p ns nanoseconds from now on @p clock. */
static inline struct timespec gf_deadline_in(clockid_t clock, uint64_t ns)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	ts.tv_sec += (time_t)(ns / 1000000000u);
	ts.tv_nsec += (long)(ns % 1000000000u);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

#endif
