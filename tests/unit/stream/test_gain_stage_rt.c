/*
 * RT contract of the gain stage: gf_gain_stage_process() — metering both
 * sides, a ramp to a new target, a mute, clipped samples counted — never
 * allocates or frees memory, and faults no page in once warmed up (its
 * scratch is touched at creation by calloc's zeroing or its first block),
 * while the control thread's reads go on between blocks. The program
 * interposes the C allocator (glibc) and counts calls made while the worker's
 * function runs. Skipped under AddressSanitizer, which owns the allocator.
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <stdio.h>

#include "testutil.h"

#if defined(__SANITIZE_ADDRESS__) || !defined(__GLIBC__)
int main(void)
{
	gf_test_skip("allocator interposition needs glibc without AddressSanitizer");
}
#else
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "gain_stage.h"

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void __libc_free(void *p);

static atomic_int counting, calls;

static void count(void)
{
	if (atomic_load_explicit(&counting, memory_order_relaxed))
		atomic_fetch_add(&calls, 1);
}

void *malloc(size_t n)
{
	count();
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	count();
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	count();
	return __libc_realloc(p, n);
}

void free(void *p)
{
	if (p)
		count();
	__libc_free(p);
}

int posix_memalign(void **p, size_t align, size_t n)
{
	count();
	*p = __libc_memalign(align, n);
	return *p ? 0 : 12; /* ENOMEM */
}

void *memalign(size_t align, size_t n)
{
	count();
	return __libc_memalign(align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	count();
	return __libc_memalign(align, n);
}

static long thread_faults(void)
{
	struct rusage ru;
	CHECK(getrusage(RUSAGE_THREAD, &ru) == 0);
	return ru.ru_minflt + ru.ru_majflt;
}

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
	long f0 = thread_faults();
	atomic_store(&counting, 1);
	for (int k = 0; k < 400; k++) {
		if (k % 50 == 0) /* a new target, a mute, an unmute: ramps in flight */
			gf_gain_stage_set(g, (float)(k % 100 ? 0.5 : 2.0), (k / 50) % 3 == 1);
		for (uint32_t i = 0; i < B * CH; i++)
			y[i] = x[i];
		atomic_store(&counting, 1);
		gf_gain_stage_process(g, x, y, B, CH);
		atomic_store(&counting, 0);
	}
	long faults = thread_faults() - f0;
	int n = atomic_load(&calls);
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
