/*
 * RT contract of the gain stage: gf_gain_stage_process() — metering both
 * sides, a ramp to a new target, a mute, clipped samples counted — never
 * allocates or frees memory, and faults no page in once warmed up (its
 * scratch is touched at creation by calloc's zeroing or its first block),
 * while the control thread's reads go on between blocks. The program
 * interposes the C allocator (glibc) and counts calls made while the worker's
 * function runs. Skipped under AddressSanitizer, which owns the allocator.
 */
#include <stdio.h>

#include "allocprobe.h"
#include "testutil.h"

#if !GF_ALLOC_PROBE
int main(void)
{
	gf_test_skip("allocator interposition needs glibc without AddressSanitizer");
}
#else
#include <math.h>
#include <stdlib.h>

#include "gain_stage.h"

#define CH 8u
#define B 256u

int main(void)
{
	struct gf_gain_stage *g;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_gain_stage_new(&g, CH, 48000, 1.0f, 0, &eb), &eb);
	float *x = __libc_calloc((size_t)B * CH, sizeof(float)),
	      *y = __libc_calloc((size_t)B * CH, sizeof(float));
	CHECK(x && y);
	for (uint32_t i = 0; i < B * CH; i++)
		x[i] = (float)(1.5 * sin(0.01 * i)); /* clips under 0 dB */
	struct gf_gain_reader r = {0};
	struct gf_gain_levels *lv = __libc_malloc(sizeof(*lv));
	CHECK(lv);
	gf_gain_stage_process(g, x, y, B, CH); /* warm-up: every path once */
	CHECK_OK(gf_gain_stage_levels(g, GF_GAIN_READER_STATUS, &r, lv));
	long f0 = gf_thread_faults();
	gf_alloc_probe_on();
	for (int k = 0; k < 400; k++) {
		if (k % 50 == 0) /* a new target, a mute, an unmute: ramps in flight */
			gf_gain_stage_set(g, (float)(k % 100 ? 0.5 : 2.0), (k / 50) % 3 == 1);
		for (uint32_t i = 0; i < B * CH; i++)
			y[i] = x[i];
		gf_alloc_probe_on();
		gf_gain_stage_process(g, x, y, B, CH);
		gf_alloc_probe_off();
	}
	long faults = gf_thread_faults() - f0;
	int n = gf_alloc_probe_calls();
	CHECK_OK(gf_gain_stage_levels(g, GF_GAIN_READER_STATUS, &r, lv));
	printf("400 blocks of %u x %u: %d allocator calls, %ld page faults, %llu clipped\n", B, CH, n, faults,
	       (unsigned long long)lv->clipped_total);
	CHECK(n == 0);
	CHECK(faults == 0);
	CHECK(lv->clipped_total > 0 && lv->frames == 400u * B);
	gf_gain_reader_free(&r);
	gf_gain_stage_free(g);
	return 0;
}
#endif
