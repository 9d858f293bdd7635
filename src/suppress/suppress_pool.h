/**
 * @file suppress_pool.h
 * A fixed set of helper threads that run one job in parts, for the CPU
 * suppressors of a bank spread over the cores (suppress_bank.h,
 * gf_suppress_bank_opts.threads). gf_suppress_pool_run hands part k of a job
 * to helper k (1..parts-1), runs part 0 on the calling thread and returns
 * when every part is done: each part's data touched by one thread only, and
 * everything the helpers wrote visible to the caller on return. The helpers
 * are a neural_pool.h pool (one implementation of helper threads for the
 * engine); this adds the caller's own part and the job's function per call.
 *
 * Threads: new/free on the control (or build) thread: they create and join
 * the helpers and allocate. run() on the thread that owns the bank's
 * process(); it waits on a semaphore for the slowest part, without a bound:
 * for offline and batch work, not for a live audio thread.
 */
#ifndef GPUFIR_SUPPRESS_POOL_H
#define GPUFIR_SUPPRESS_POOL_H

#include <stdint.h>

#include "error.h"

struct gf_suppress_pool;

/** One part of a job: @p part of @p parts, with the job's @p arg. */
typedef void (*gf_suppress_pool_fn)(void *arg, uint32_t part, uint32_t parts);

/**
 * A pool of @p parts - 1 helper threads (@p parts >= 2).
 * @return 0, GF_E_NOMEM, or GF_E_SYSTEM (a thread could not be created: message in @p eb).
 */
int gf_suppress_pool_new(uint32_t parts, struct gf_suppress_pool **out, struct gf_errbuf *eb);

/** Stops and joins the helpers. Accepts NULL. Not while run() is in progress. */
void gf_suppress_pool_free(struct gf_suppress_pool *p);

/** The parts a job is cut into: the helpers and the caller. */
uint32_t gf_suppress_pool_parts(const struct gf_suppress_pool *p);

/** @p fn(@p arg, k, parts) for every k, k = 0 on the calling thread; returns when all are done. */
void gf_suppress_pool_run(struct gf_suppress_pool *p, gf_suppress_pool_fn fn, void *arg);

#endif
