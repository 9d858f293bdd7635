/* The allocator interposed for the RT tests (allocprobe.h). Linked into a test
 * only when it calls gf_alloc_probe_*, so no other test's allocator changes. */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include "allocprobe.h"

#if GF_ALLOC_PROBE
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "testutil.h"

extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);

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

void gf_alloc_probe_on(void)
{
	atomic_store(&counting, 1);
}

void gf_alloc_probe_off(void)
{
	atomic_store(&counting, 0);
}

int gf_alloc_probe_calls(void)
{
	return atomic_load(&calls);
}

void gf_alloc_probe_reset(void)
{
	atomic_store(&calls, 0);
}

long gf_thread_faults(void)
{
	struct rusage ru;
	CHECK(getrusage(RUSAGE_THREAD, &ru) == 0);
	return ru.ru_minflt + ru.ru_majflt;
}
#else
typedef int gf_alloc_probe_unused; /* not a translation unit without declarations */
#endif
