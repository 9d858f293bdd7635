/*
 * NaN and Inf in the input of gpufir's DeepFilterNet3 forward: each such
 * sample counts as silence (0), so that one bad block cannot poison the
 * channel's recurrent state for good. The output with a burst of NaN, +Inf
 * and -Inf must be exactly the output with zeros in their place, finite
 * throughout, and the batch's other channel untouched.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dfn.h"
#include "test_dfn_inputs.h"
#include "testutil.h"

#define HOP 480
#define HOPS 150

/* Two channels (the fixed inputs 0 and 1) through a fresh instance; @p bad: 0 zeros, 1 NaN/Inf in hops 50..52
 * of channel 0. */
static void run(const struct dfn_test_case *t, int bad, float *y)
{
	struct dfn_params p;
	struct dfn_cpu *d = NULL;
	struct gf_errbuf eb = {{0}};
	dfn_params_default(&p);
	CHECK_OK_EB(dfn_cpu_new(t->m, 2, &p, &d, &eb), &eb);
	const float junk[3] = {NAN, INFINITY, -INFINITY};
	float in[2 * HOP];
	for (int h = 0; h < HOPS; h++) {
		for (int c = 0; c < 2; c++)
			memcpy(in + c * HOP, t->x + ((size_t)c * t->hops + h) * HOP, sizeof(float) * HOP);
		for (int i = 0; h >= 50 && h <= 52 && i < HOP; i += 7)
			in[i] = bad ? junk[i % 3] : 0.0f;
		dfn_cpu_process(d, in, y + (size_t)h * 2 * HOP, NULL);
	}
	dfn_cpu_free(d);
}

int main(void)
{
	struct dfn_test_case t;
	dfn_test_open(&t);
	CHECK(t.hops >= HOPS);
	float *zero = malloc(sizeof(float) * 2 * HOP * HOPS), *bad = malloc(sizeof(float) * 2 * HOP * HOPS);
	CHECK(zero && bad);
	run(&t, 0, zero);
	run(&t, 1, bad);
	size_t differ = 0, nonfinite = 0;
	for (size_t i = 0; i < (size_t)2 * HOP * HOPS; i++) {
		differ += memcmp(&zero[i], &bad[i], sizeof(float)) != 0;
		nonfinite += !isfinite(bad[i]);
	}
	printf("NaN/Inf burst: %zu samples differ from the zeros' output, %zu non-finite\n", differ,
	       nonfinite);
	CHECK(differ == 0 && nonfinite == 0);
	free(zero);
	free(bad);
	dfn_test_close(&t);
	printf("ok\n");
	return 0;
}
