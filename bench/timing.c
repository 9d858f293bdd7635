/* The benchmarks' shared input sequence and call-time record (timing.h). */
#include "timing.h"

#include <stdint.h>
#include <stdlib.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

float gf_bench_rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (float)((double)((rng_state * 0x2545F4914F6CDD1Dull) >> 40) / (double)(1ull << 23) - 1.0);
}

int gf_bench_calls_init(struct gf_bench_calls *c, size_t cap)
{
	c->us = malloc(cap * sizeof(double));
	c->n = 0;
	c->cap = c->us ? cap : 0;
	c->sum = 0.0;
	return c->us ? 0 : -1;
}

void gf_bench_calls_free(struct gf_bench_calls *c)
{
	free(c->us);
	*c = (struct gf_bench_calls){0};
}

int gf_bench_calls_add(struct gf_bench_calls *c, double us)
{
	if (c->n >= c->cap)
		return 0;
	c->us[c->n++] = us;
	c->sum += us;
	return 1;
}

double gf_bench_calls_mean(const struct gf_bench_calls *c)
{
	return c->n ? c->sum / (double)c->n : 0.0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double gf_bench_calls_p999(struct gf_bench_calls *c)
{
	if (!c->n)
		return 0.0;
	qsort(c->us, c->n, sizeof(double), cmp_double);
	return c->us[(c->n * 999 + 999) / 1000 - 1];
}
