/**
 * @file neural_pool.h
 * Helper threads that run one job in parts, started by the audio thread and
 * waited for with a deadline: the neural stage's hops (neural_bank.h), and
 * the helpers of the suppressor's bank over threads (suppress_pool.h, which
 * waits without a bound: offline). The caller only posts semaphores to start
 * a job and waits on one with a deadline, so a live stream's worker may own
 * it: a job not done by the deadline stays in flight and is collected by a
 * later wait.
 *
 * Threads: new/free on the control (or build) thread (free waits for a job in
 * flight). start/wait/busy on one owner thread: RT-safe (no allocation, no
 * lock; sem_post and a timed sem_clockwait).
 */
#ifndef GPUFIR_NEURAL_POOL_H
#define GPUFIR_NEURAL_POOL_H

#include <stdint.h>

#include "error.h"

struct gf_neural_pool;

/** One part of a job: @p part of @p parts. */
typedef void (*gf_neural_pool_fn)(void *arg, uint32_t part, uint32_t parts);

/** A pool of @p parts helper threads (@p parts >= 1) that run @p fn(@p arg, k, parts).
 * @return 0, GF_E_NOMEM or GF_E_SYSTEM (message in @p eb). */
int gf_neural_pool_new(uint32_t parts, gf_neural_pool_fn fn, void *arg, struct gf_neural_pool **out,
		       struct gf_errbuf *eb);

/** Waits for a job in flight, stops and joins the helpers. Accepts NULL. */
void gf_neural_pool_free(struct gf_neural_pool *p);

/** @pre !gf_neural_pool_busy(p). Hands every helper its part of a new job. RT-safe. */
void gf_neural_pool_start(struct gf_neural_pool *p);

/** 1 when the job started last is done (or none is in flight), waiting for it until @p deadline_ns
 * (gf_now_ns() time; 0: without a bound; past: one poll); else 0, the job still in flight. What the
 * helpers wrote is visible on a return of 1. RT-safe with a deadline. */
int gf_neural_pool_wait(struct gf_neural_pool *p, uint64_t deadline_ns);

/** 1 while a job is in flight (started, not yet seen done by wait). Owner thread. */
int gf_neural_pool_busy(const struct gf_neural_pool *p);

/** The parts a job is cut into. Any thread. */
uint32_t gf_neural_pool_parts(const struct gf_neural_pool *p);

#endif
