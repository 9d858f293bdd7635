#include "timehist.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

#define SUB_BITS 5 /* 32 bins per octave */
#define MIN_EXP 6  /* 64 ns: first octave */
#define MAX_EXP 32 /* 4.3 s: everything above lands in the last bin */
#define NBINS (1 + (MAX_EXP - MIN_EXP) * (1 << SUB_BITS))

struct gf_timehist {
	_Atomic uint64_t bins[NBINS]; /* cumulative counts, written by the adder only */
	struct {
		_Atomic uint64_t max_ns; /* since this reader's last window; it swaps in 0 */
		uint64_t seen[NBINS];	 /* counts at its previous window */
		uint64_t delta[NBINS];	 /* scratch for one window */
	} r[GF_TIMEHIST_READERS];
};

int gf_timehist_new(struct gf_timehist **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : GF_E_NOMEM;
}

void gf_timehist_free(struct gf_timehist *h)
{
	free(h);
}

static uint32_t bin_of(uint64_t ns)
{
	if (ns < (1ull << MIN_EXP))
		return 0;
	uint32_t e = 63u - (uint32_t)__builtin_clzll(ns);
	if (e >= MAX_EXP)
		return NBINS - 1;
	uint32_t sub = (uint32_t)(ns >> (e - SUB_BITS)) & ((1u << SUB_BITS) - 1);
	return 1 + (e - MIN_EXP) * (1u << SUB_BITS) + sub;
}

/* Centre of a bin in microseconds. */
static double bin_us(uint32_t b)
{
	if (b == 0)
		return (1 << MIN_EXP) / 2000.0;
	uint32_t e = MIN_EXP + (b - 1) / (1u << SUB_BITS);
	uint32_t sub = (b - 1) % (1u << SUB_BITS);
	double lo = (double)(1ull << e) * (1.0 + sub / (double)(1u << SUB_BITS));
	double width = (double)(1ull << e) / (1u << SUB_BITS);
	return (lo + width / 2) / 1000.0;
}

void gf_timehist_add(struct gf_timehist *h, uint64_t ns)
{
	_Atomic uint64_t *c = &h->bins[bin_of(ns)];
	/* Single writer: a load and a store, no read-modify-write needed. */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
	for (unsigned i = 0; i < GF_TIMEHIST_READERS; i++) {
		_Atomic uint64_t *mx = &h->r[i].max_ns;
		uint64_t m = atomic_load_explicit(mx, memory_order_relaxed);
		while (ns > m && !atomic_compare_exchange_weak_explicit(mx, &m, ns, memory_order_relaxed,
									memory_order_relaxed))
			;
	}
}

void gf_timehist_window(struct gf_timehist *h, unsigned reader, struct gf_timehist_summary *s)
{
	memset(s, 0, sizeof(*s));
	if (reader >= GF_TIMEHIST_READERS)
		return;
	uint64_t *delta = h->r[reader].delta, *seen = h->r[reader].seen, total = 0;
	for (uint32_t b = 0; b < NBINS; b++) {
		uint64_t now = atomic_load_explicit(&h->bins[b], memory_order_relaxed);
		delta[b] = now - seen[b];
		seen[b] = now;
		total += delta[b];
	}
	s->count = total;
	s->max_us = (double)atomic_exchange_explicit(&h->r[reader].max_ns, 0, memory_order_relaxed) / 1000.0;
	if (total == 0)
		return;
	uint64_t half = (total + 1) / 2, p99 = total - total / 100, acc = 0;
	for (uint32_t b = 0; b < NBINS; b++) {
		acc += delta[b];
		if (s->median_us == 0.0 && acc >= half)
			s->median_us = bin_us(b);
		if (acc >= p99) {
			s->p99_us = bin_us(b);
			break;
		}
	}
	if (s->p99_us > s->max_us && s->max_us > 0.0)
		s->p99_us = s->max_us;
	if (s->median_us > s->max_us && s->max_us > 0.0)
		s->median_us = s->max_us;
}
