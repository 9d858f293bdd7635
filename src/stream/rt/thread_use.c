#define _GNU_SOURCE /* RUSAGE_THREAD */
#include "thread_use.h"

#include <sys/resource.h>
#include <time.h>

/* The CPU time from the thread clock, not getrusage: getrusage's total lags
 * a running thread by up to a scheduler tick (1-4 ms), as long as a block. */
struct gf_thread_use gf_thread_use_now(void)
{
	struct rusage ru;
	struct timespec ts;
	if (getrusage(RUSAGE_THREAD, &ru) != 0 || clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return (struct gf_thread_use){0, 0};
	return (struct gf_thread_use){(uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, ru.ru_nvcsw};
}

int gf_thread_use_late_by_host(struct gf_thread_use a, struct gf_thread_use b, uint64_t period_ns)
{
	return b.blocked == a.blocked && b.cpu_ns >= a.cpu_ns && b.cpu_ns - a.cpu_ns <= period_ns;
}
