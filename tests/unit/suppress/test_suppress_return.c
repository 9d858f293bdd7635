/*
 * The return to the GPU's wait (suppress_return.h), which the suppressor's
 * bank and the neural stage share: the first look starts the first wait and
 * probes nothing; a look before the wait has passed probes nothing; a failed
 * probe doubles the wait up to GF_SUPPRESS_RETURN_MAX_STEPS times the first
 * and passes its error on; a healthy one makes the next look the first again,
 * with the first wait; a reset does the same.
 */
#include <stdio.h>

#include "clock.h"
#include "error.h"
#include "suppress_return.h"
#include "testutil.h"

#define FIRST_NS 1000000000ull /* 1 s: no look in this test waits it out by chance */

struct probe {
	int answer; /* what the probe returns */
	int calls;
};

static int probe(void *arg)
{
	struct probe *p = arg;
	p->calls++;
	return p->answer;
}

/* Make the next try due now, as if its wait had passed. */
static void wait_passed(struct gf_suppress_return *r)
{
	r->next_ns = 1;
}

static void test_backoff(void)
{
	struct gf_suppress_return r;
	struct probe p = {.answer = GF_E_CUDA};
	int err = 0;
	gf_suppress_return_init(&r, FIRST_NS);
	uint64_t t0 = gf_now_ns();
	CHECK(gf_suppress_return_try(&r, probe, &p, &err) == GF_SUPPRESS_RETURN_FIRST);
	CHECK(p.calls == 0 && r.step_ns == FIRST_NS && r.next_ns >= t0 + FIRST_NS);
	CHECK(gf_suppress_return_try(&r, probe, &p, &err) == GF_SUPPRESS_RETURN_WAIT && p.calls == 0);
	uint64_t want = FIRST_NS;
	for (int i = 1; i <= 8; i++) { /* 2, 4, 8, 16, 32, then 32 first waits */
		wait_passed(&r);
		err = 0;
		uint64_t before = gf_now_ns();
		CHECK(gf_suppress_return_try(&r, probe, &p, &err) == GF_SUPPRESS_RETURN_PROBED);
		want = 2 * want < FIRST_NS * GF_SUPPRESS_RETURN_MAX_STEPS
			       ? 2 * want
			       : FIRST_NS * GF_SUPPRESS_RETURN_MAX_STEPS;
		CHECK(err == GF_E_CUDA && p.calls == i && r.step_ns == want);
		CHECK(r.next_ns >= before + want);
		CHECK(gf_suppress_return_try(&r, probe, &p, &err) == GF_SUPPRESS_RETURN_WAIT);
	}
	CHECK(r.step_ns == FIRST_NS * GF_SUPPRESS_RETURN_MAX_STEPS);
	printf("failed probes: the wait doubled to %u first waits and stayed there\n",
	       GF_SUPPRESS_RETURN_MAX_STEPS);

	p.answer = 0; /* healthy: back, and the next switch starts from the first wait again */
	wait_passed(&r);
	err = -1;
	CHECK(gf_suppress_return_try(&r, probe, &p, &err) == GF_SUPPRESS_RETURN_PROBED && err == 0);
	CHECK(r.next_ns == 0);
	CHECK(gf_suppress_return_try(&r, probe, &p, &err) == GF_SUPPRESS_RETURN_FIRST);
	CHECK(r.step_ns == FIRST_NS && p.calls == 9);
	gf_suppress_return_reset(&r);
	CHECK(gf_suppress_return_try(&r, probe, &p, &err) == GF_SUPPRESS_RETURN_FIRST && p.calls == 9);
	printf("a healthy probe or a reset: the next look is the first, its wait the first again\n");
}

int main(void)
{
	test_backoff();
	printf("test_suppress_return: OK\n");
	return 0;
}
