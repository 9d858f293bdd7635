/*
 * The RT tests' probe of the audio path: the C allocator interposed (glibc's
 * malloc family, which FFTW uses too) to count the calls made while counting
 * is on, and the calling thread's page faults. Only where the allocator can
 * be interposed: glibc without AddressSanitizer (GF_ALLOC_PROBE 1); the
 * tests skip elsewhere.
 */
#ifndef GPUFIR_TEST_ALLOCPROBE_H
#define GPUFIR_TEST_ALLOCPROBE_H

#include <stdlib.h> /* defines __GLIBC__ where the C library is glibc */

#if defined(__SANITIZE_ADDRESS__) || !defined(__GLIBC__)
#define GF_ALLOC_PROBE 0
#else
#define GF_ALLOC_PROBE 1
#endif

#if GF_ALLOC_PROBE
/* glibc's own allocator, for a test's buffers the probe must not count. */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void __libc_free(void *p);
#endif

/** Count allocator calls from now on (any thread). */
void gf_alloc_probe_on(void);
/** Stop counting. */
void gf_alloc_probe_off(void);
/** Calls counted so far. */
int gf_alloc_probe_calls(void);
/** The count back to 0. */
void gf_alloc_probe_reset(void);
/** Minor plus major page faults of the calling thread so far. */
long gf_thread_faults(void);

#endif
