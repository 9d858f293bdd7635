/**
 * @file rt.h
 * Real-time scheduling and memory locking for the audio threads.
 *
 * Both are best effort: without the privilege (CAP_SYS_NICE / RLIMIT_RTPRIO,
 * CAP_IPC_LOCK / RLIMIT_MEMLOCK; the systemd unit grants them with
 * LimitRTPRIO= and LimitMEMLOCK=) audio still runs, and one warning per
 * process says what is missing. Control thread only.
 */
#ifndef GPUFIR_RT_H
#define GPUFIR_RT_H

#include <pthread.h>

/** Default SCHED_FIFO priority of the worker when the audio callback is not real-time. */
#define GF_RT_WORKER_PRIO 40

/**
 * Put @p thread under SCHED_FIFO at @p prio (clamped to the allowed range and
 * to RLIMIT_RTPRIO). @return the priority set, or 0 if not permitted (warned once).
 */
int gf_rt_set_fifo(pthread_t thread, int prio);

/**
 * mlockall(MCL_CURRENT | MCL_FUTURE) once per process, so no page of the
 * process faults in the audio path. Skipped, with a warning, when the lock
 * limit is finite and we lack CAP_IPC_LOCK (with MCL_FUTURE, later allocations
 * beyond the limit would fail) and in sanitizer builds (shadow memory is huge).
 * @return 1 if memory is locked.
 */
int gf_rt_lock_memory(void);

#endif
