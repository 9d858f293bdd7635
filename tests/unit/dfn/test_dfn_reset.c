/*
 * dfn_cpu_reset: an instance that has run one input, reset, then runs
 * another gives, bit for bit, what a fresh instance gives on that other
 * input (the neural stage's CPU standby restarts this way when it takes
 * over from the GPU). Its attenuation limit, set before, stays.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dfn.h"
#include "test_dfn_inputs.h"
#include "testutil.h"

#define HOP 480
#define HOPS 120

/* Hops [0, HOPS) of fixed input @p which through @p d into @p y. */
static void run(struct dfn_cpu *d, const struct dfn_test_case *t, int which, float *y)
{
	for (int h = 0; h < HOPS; h++)
		dfn_cpu_process(d, t->x + ((size_t)which * t->hops + h) * HOP, y + (size_t)h * HOP, NULL);
}

int main(void)
{
	struct dfn_test_case t;
	dfn_test_open(&t);
	CHECK(t.hops >= HOPS);
	struct dfn_params p;
	dfn_params_default(&p);
	struct dfn_cpu *used = NULL, *fresh = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(dfn_cpu_new(t.m, 1, &p, &used, &eb), &eb);
	CHECK_OK_EB(dfn_cpu_new(t.m, 1, &p, &fresh, &eb), &eb);
	dfn_cpu_set_atten_lim(used, 12.0f);
	dfn_cpu_set_atten_lim(fresh, 12.0f);
	float *a = malloc((size_t)HOPS * HOP * sizeof(float)),
	      *b = malloc((size_t)HOPS * HOP * sizeof(float));
	CHECK(a && b);
	run(used, &t, 1, a); /* another input first: every state away from its start */
	dfn_cpu_reset(used);
	run(used, &t, 0, a);
	run(fresh, &t, 0, b);
	size_t diff = 0;
	for (size_t i = 0; i < (size_t)HOPS * HOP; i++)
		diff += a[i] != b[i];
	printf("after a reset: %zu of %d samples differ from a fresh instance's\n", diff, HOPS * HOP);
	CHECK(diff == 0);
	free(a);
	free(b);
	dfn_cpu_free(used);
	dfn_cpu_free(fresh);
	dfn_test_close(&t);
	return 0;
}
