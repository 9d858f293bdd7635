/*
 * The neural stage (neural_bank.h) with a hop that hangs, on a stand-in
 * backend whose process() does not return until the test lets it (no model
 * needed):
 * - the stage gives up once the hop has been in flight GF_NEURAL_HANG_NS
 *   (counted in gf_neural_bank_failures) and passes the dry signal;
 * - reset(), which the daemon calls before every stream start, returns within
 *   a bound while the hop is still out, and the stage stays given up: it
 *   never waits for the hung hop for good;
 * - once the hop is back, the next reset() takes the stage back;
 * - free() returns within a bound while a hop is hung (the stage is kept, not
 *   freed under its helper, which finishes into it later).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "neural_bank.h"
#include "testutil.h"

/* How long the stand-in's hop stays out once it hangs: far beyond any bound reset() may take. */
#define HANG_NS 3000000000ull

static atomic_int g_hang;      /* 1: the next process() hangs until released */
static atomic_int g_in_hop;    /* a process() is running */
static atomic_uint g_released; /* process() calls let go */

static int stand_in_create(const struct gf_neural_params *p, uint32_t channels, void **out,
			   struct gf_errbuf *eb)
{
	(void)p;
	(void)channels;
	(void)eb;
	*out = malloc(1);
	return *out ? 0 : GF_E_NOMEM;
}

/* A copy of the input, or (hung) nothing until released or HANG_NS have passed. */
static void stand_in_process(void *inst, uint32_t first, uint32_t n, const float *in, float *out)
{
	(void)inst;
	(void)first;
	atomic_store(&g_in_hop, 1);
	uint64_t until = gf_now_ns() + HANG_NS;
	while (atomic_load(&g_hang) && gf_now_ns() < until)
		usleep(1000);
	memcpy(out, in, (size_t)n * GF_NEURAL_HOP * sizeof(float));
	atomic_fetch_add(&g_released, 1);
	atomic_store(&g_in_hop, 0);
}

static void stand_in_atten(void *inst, uint32_t first, uint32_t n, float db)
{
	(void)inst;
	(void)first;
	(void)n;
	(void)db;
}

static uint32_t stand_in_latency(const void *inst)
{
	(void)inst;
	return 0;
}

static const struct gf_neural_ops stand_in = {
	.name = "stand-in",
	.create = stand_in_create,
	.process = stand_in_process,
	.set_atten_lim = stand_in_atten,
	.latency = stand_in_latency,
	.free = free,
};

/* Hops of silence, each call with a deadline 1 ms ahead, until the stage gives up (at most 1 s). */
static void until_given_up(struct gf_neural_bank *b, float *hop)
{
	uint64_t t0 = gf_now_ns();
	while (!gf_neural_bank_failures(b) && gf_now_ns() - t0 < 1000000000ull) {
		memset(hop, 0, GF_NEURAL_HOP * sizeof(float));
		gf_neural_bank_process_by(b, hop, GF_NEURAL_HOP, gf_now_ns() + 1000000u);
		usleep(10000);
	}
}

static struct gf_neural_bank *stand_in_stage(void)
{
	static const struct gf_neural_params p = {.model = "stand-in", .atten_lim_db = 100.0f};
	static const struct gf_neural_bank_opts o = {.ops = &stand_in, .threads = 1};
	static const uint8_t active = 1;
	struct gf_neural_bank *b = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_neural_bank_new(&active, 1, GF_NEURAL_RATE, &p, &o, &b, &eb), &eb);
	return b;
}

/* free() while the hop hangs: bounded; the hop then finishes into the kept stage. */
static void free_case(void)
{
	struct gf_neural_bank *b = stand_in_stage();
	float hop[GF_NEURAL_HOP];
	unsigned released = atomic_load(&g_released);
	atomic_store(&g_hang, 1);
	until_given_up(b, hop);
	CHECK(gf_neural_bank_failures(b) == 1 && atomic_load(&g_in_hop));
	uint64_t t0 = gf_now_ns();
	gf_neural_bank_free(b);
	double ms = (gf_now_ns() - t0) / 1e6;
	printf("free with the hop still out: returned in %.0f ms (bound %.0f ms)\n", ms,
	       2 * GF_NEURAL_HANG_NS / 1e6);
	CHECK(ms < 2 * GF_NEURAL_HANG_NS / 1e6 && atomic_load(&g_released) == released);
	atomic_store(&g_hang, 0);
	while (atomic_load(&g_in_hop))
		usleep(1000);
	CHECK(atomic_load(&g_released) == released + 1);
}

int main(void)
{
	struct gf_neural_bank *b = stand_in_stage();
	float hop[GF_NEURAL_HOP];

	atomic_store(&g_hang, 1);
	until_given_up(b, hop);
	CHECK(gf_neural_bank_failures(b) == 1 && atomic_load(&g_in_hop));
	printf("hung hop: the stage gave up after %.0f ms (failures %llu)\n", GF_NEURAL_HANG_NS / 1e6,
	       (unsigned long long)gf_neural_bank_failures(b));

	uint64_t t0 = gf_now_ns();
	gf_neural_bank_reset(b);
	double ms = (gf_now_ns() - t0) / 1e6;
	printf("reset with the hop still out: returned in %.0f ms (bound %.0f ms)\n", ms,
	       2 * GF_NEURAL_HANG_NS / 1e6);
	CHECK(ms < 2 * GF_NEURAL_HANG_NS / 1e6);
	CHECK(atomic_load(&g_in_hop) && atomic_load(&g_released) == 0); /* it did not wait it out */
	CHECK(gf_neural_bank_failures(b) == 1);
	/* Still given up: the dry signal passes, and no hop is handed over while the hung one is out. */
	for (uint32_t i = 0; i < GF_NEURAL_HOP; i++)
		hop[i] = 0.25f;
	gf_neural_bank_process_by(b, hop, GF_NEURAL_HOP, gf_now_ns() + 1000000u);
	CHECK(gf_neural_bank_failures(b) == 1 && atomic_load(&g_in_hop));

	atomic_store(&g_hang, 0); /* the hop comes back */
	while (atomic_load(&g_in_hop))
		usleep(1000);
	gf_neural_bank_reset(b);
	uint64_t late = gf_neural_bank_late(b); /* the hung phase's: counters run on over a reset */
	for (int k = 0; k < 4; k++) {		/* the stage runs the model's hops again, each back in time */
		memset(hop, 0, sizeof(hop));
		gf_neural_bank_process_by(b, hop, GF_NEURAL_HOP, gf_now_ns() + 200000000u);
	}
	printf("after the hop came back, a reset takes the stage back: %u hops run, none late\n",
	       atomic_load(&g_released));
	CHECK(atomic_load(&g_released) == 5 && gf_neural_bank_late(b) == late);
	gf_neural_bank_free(b);
	free_case();
	printf("ok\n");
	return 0;
}
