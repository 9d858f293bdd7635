/**
 * @file timing.h
 * What the benchmarks share: a fixed random sequence for their inputs and
 * taps, and the record of call times they report a mean and the 99.9th
 * percentile of.
 */
#ifndef GPUFIR_BENCH_TIMING_H
#define GPUFIR_BENCH_TIMING_H

#include <stddef.h>

/** The next of a fixed pseudo-random sequence (xorshift64*), uniform in [-1, 1). */
float gf_bench_rnd(void);

/** Call times in microseconds: the first @c cap are kept, the rest are dropped. */
struct gf_bench_calls {
	double *us;
	size_t n, cap;
	double sum; /**< of the kept times */
};

/** Room for @p cap times. @return 0 or -1 (out of memory) */
int gf_bench_calls_init(struct gf_bench_calls *c, size_t cap);
void gf_bench_calls_free(struct gf_bench_calls *c);
/** Keep one call's time (us) while there is room. @return 1 if kept, 0 if full */
int gf_bench_calls_add(struct gf_bench_calls *c, double us);
/** The mean of the kept times (0 if none). */
double gf_bench_calls_mean(const struct gf_bench_calls *c);
/** The 99.9th percentile of the kept times, nearest rank (0 if none). Sorts them. */
double gf_bench_calls_p999(struct gf_bench_calls *c);

#endif
