/**
 * @file thread_use.h
 * What the calling thread itself spent over an interval: its CPU time and
 * whether it blocked. The live worker samples it around each block, so a
 * late block can be put down to the host (the thread was runnable but off
 * its CPU: preempted, or a VM's virtual CPU stolen) or to the work itself.
 * Any thread; two system calls (getrusage, the thread's CPU clock), neither
 * of which takes a sleeping lock.
 */
#ifndef GPUFIR_THREAD_USE_H
#define GPUFIR_THREAD_USE_H

#include <stdint.h>

struct gf_thread_use {
	uint64_t cpu_ns; /**< CPU time of the thread, user and system */
	long blocked;	 /**< voluntary context switches: waits on a lock, I/O, a sleep, a GPU */
};

/** The calling thread's use so far ({0, 0} if the kernel cannot say). */
struct gf_thread_use gf_thread_use_now(void);

/**
 * 1 if an interval from @p a to @p b that overran @p period_ns did so because
 * of the host: the thread never blocked in it and its own CPU time fit in the
 * period, so it would have been on time had it kept its CPU. 0 when it
 * blocked (the wait is the work's, not the host's) or its CPU time alone
 * overran.
 */
int gf_thread_use_late_by_host(struct gf_thread_use a, struct gf_thread_use b, uint64_t period_ns);

#endif
