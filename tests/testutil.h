/**
 * @file testutil.h
 * Helpers for gpufir's test programs: checks that fail loudly with the line
 * number (libsndfile's *_or_die style), deterministic-but-fresh random
 * signals, the double-precision reference convolution, and error norms.
 */
#ifndef GPUFIR_TESTUTIL_H
#define GPUFIR_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define GF_TEST_SKIP 77

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
			exit(1);                                                     \
		}                                                                    \
	} while (0)

/** Fail unless @p err == 0, printing gf_strerror and an optional detail. */
#define CHECK_OK(err) gf_check_ok_or_die((err), NULL, __FILE__, __LINE__, #err)
#define CHECK_OK_EB(err, eb) gf_check_ok_or_die((err), (eb), __FILE__, __LINE__, #err)

struct gf_errbuf;
void gf_check_ok_or_die(int err, const struct gf_errbuf *eb, const char *file, int line, const char *expr);

/** Seed from GPUFIR_TEST_SEED or the clock; printed so a failure can be replayed. */
uint64_t gf_test_seed(const char *test_name);
/** xorshift64* in [-1, 1). */
float gf_test_randf(uint64_t *state);
/** Fill with uniform noise in [-1, 1). */
void gf_test_fill_noise(float *x, size_t n, uint64_t *state);
/** Non-symmetric taps: decaying noise (a symmetric kernel would hide time reversal). */
void gf_test_fill_decaying_taps(float *h, size_t n, uint64_t *state);

/**
 * Reference causal convolution in double, interleaved:
 * y[n*ch+c] = sum_k h[c*taps+k] * x[(n-k)*ch+c], for n in [0, frames).
 */
void gf_test_reference(const float *x, uint32_t frames, uint32_t channels, const float *h,
		       uint32_t taps, double *y);

/** ||got - ref||2 / ||ref||2 (absolute norm when ref is all zero). */
double gf_test_rel_l2(const float *got, const double *ref, size_t n);

/** Print "SKIP: why" and exit 77 (CTest SKIP_RETURN_CODE). */
void gf_test_skip(const char *why) __attribute__((noreturn));

/** Make a fresh temporary directory; returns a malloc'ed path. */
char *gf_test_tmpdir(const char *tag);

#endif
