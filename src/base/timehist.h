/**
 * @file timehist.h
 * Histogram of durations (block processing times) with about 2% resolution
 * from 64 ns to 4 s: 32 logarithmic bins per octave, preallocated.
 *
 * One thread (the audio worker) adds; any thread reads. Adding is RT-safe
 * (relaxed atomic stores of counters only that thread writes). Readers take
 * windows: each gf_timehist_window() call summarizes what was added since the
 * same reader's previous call, without stopping the writer. Up to
 * GF_TIMEHIST_READERS readers keep windows of their own (a 200 ms health
 * poll and a 60 s stats line must not cut each other's windows short).
 */
#ifndef GPUFIR_TIMEHIST_H
#define GPUFIR_TIMEHIST_H

#include <stdint.h>

#define GF_TIMEHIST_READERS 2

struct gf_timehist;

struct gf_timehist_summary {
	uint64_t count;	  /**< durations in the window */
	double median_us; /**< 0 when count is 0 */
	double p99_us;
	double max_us; /**< exact */
};

/** Control thread. @return 0 or GF_E_NOMEM */
int gf_timehist_new(struct gf_timehist **out);
/** Accepts NULL. */
void gf_timehist_free(struct gf_timehist *h);

/** Record one duration. Writer thread only; RT-safe. */
void gf_timehist_add(struct gf_timehist *h, uint64_t ns);

/**
 * Summary of the durations added since reader @p reader's previous call (or
 * since new). @p reader < GF_TIMEHIST_READERS; each reader is one thread's.
 * Not RT-safe (walks the bins).
 */
void gf_timehist_window(struct gf_timehist *h, unsigned reader, struct gf_timehist_summary *s);

#endif
