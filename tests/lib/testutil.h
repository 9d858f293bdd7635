/**
 * @file testutil.h
 * Helpers for gpufir's test programs: checks that fail loudly with the line
 * number (libsndfile's *_or_die style), deterministic-but-fresh random
 * signals, the double-precision reference convolution, error norms, scratch
 * files, and random filters and CPU engines.
 */
#ifndef GPUFIR_TESTUTIL_H
#define GPUFIR_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine.h"

#define GF_TEST_SKIP 77

#define CHECK(cond)                                                                                          \
	do {                                                                                                 \
		if (!(cond)) {                                                                               \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);             \
			exit(1);                                                                             \
		}                                                                                            \
	} while (0)

/** Fail unless @p err == 0, printing gf_strerror and an optional detail. */
#define CHECK_OK(err) gf_check_ok_or_die((err), NULL, __FILE__, __LINE__, #err)
#define CHECK_OK_EB(err, eb) gf_check_ok_or_die((err), (eb), __FILE__, __LINE__, #err)

struct gf_errbuf;
void gf_check_ok_or_die(int err, const struct gf_errbuf *eb, const char *file, int line, const char *expr);

/** Seed from GPUFIR_TEST_SEED or the clock; printed so a failure can be replayed. */
uint64_t gf_test_seed(const char *test_name);
/**
 * latency_slack for the live tests against a real JACK server:
 * GPUFIR_TEST_LATENCY_SLACK, else GF_TEST_LATENCY_SLACK. These tests prove
 * alignment, exactness and zero xruns of the real audio path; virtual
 * machines (CI's) deschedule a vCPU for up to about 10 ms dozens of times a
 * minute, which no period of slack at 64 frames absorbs (docs/live.md,
 * "Jitter and slack"). The default latency is proven without a device
 * (test_live_policy) and in long runs by bench/soak-live.sh.
 */
#define GF_TEST_LATENCY_SLACK 16
unsigned gf_test_latency_slack(void);
/** xorshift64* in [-1, 1). */
float gf_test_randf(uint64_t *state);
/** Fill with uniform noise in [-1, 1). */
void gf_test_fill_noise(float *x, size_t n, uint64_t *state);
/** Non-symmetric taps: decaying noise (a symmetric kernel would hide time reversal). */
void gf_test_fill_decaying_taps(float *h, size_t n, uint64_t *state);
/** Decaying-noise taps scaled so that sum |h| = @p l1 (below 1: full-scale input never clips). */
void gf_test_fill_bounded_taps(float *h, size_t n, double l1, uint64_t *state);
/** The taps as "%.9g" text joined by @p sep (malloc'ed): for taps files and inline coeffs. */
char *gf_test_taps_text(const float *h, size_t n, const char *sep);

/**
 * Reference causal convolution in double, interleaved:
 * y[n*ch+c] = sum_k h[c*taps+k] * x[(n-k)*ch+c], for n in [0, frames).
 */
void gf_test_reference(const float *x, uint32_t frames, uint32_t channels, const float *h, uint32_t taps,
		       double *y);

/**
 * Cross-correlation by FFT, added to @p r: r[s] += sum over k < @p na of a[k * @p sa] * b[(k + s) * @p sb],
 * for every s in [0, @p nb - @p na] (@p nb >= @p na; strides step over interleaved channels, one call
 * per channel). The direct sums, at the lengths the live tests search, took seconds (tens of seconds
 * under the sanitizers).
 */
void gf_test_xcorr(const float *a, size_t na, size_t sa, const float *b, size_t nb, size_t sb, double *r);

/** ||got - ref||2 / ||ref||2 (absolute norm when ref is all zero). */
double gf_test_rel_l2(const float *got, const double *ref, size_t n);

/** Print "SKIP: why" and exit 77 (CTest SKIP_RETURN_CODE). */
void gf_test_skip(const char *why) __attribute__((noreturn));

/** Run @p fn in a forked child (what was printed flushed first: it is not printed twice) and
 *  wait for it: its status, as waitpid gives it. */
int gf_test_fork_wait(int (*fn)(void));

/** Skip the test (77) unless CUDA device 0 is usable (gf_cuda_probe); else print "device: ...". */
void gf_test_need_gpu(void);

/**
 * Run @p fn(@p arg) in a forked child, its stderr into @p err_path (NULL:
 * inherited), and wait for it: for what may end the process (resource
 * limits, signals). The child exits 0 once @p fn returns (a failed CHECK: 1).
 * @return its wait status
 */
int gf_test_in_child(void (*fn)(void *), void *arg, const char *err_path);

/** Make a fresh temporary directory; returns a malloc'ed path. */
char *gf_test_tmpdir(const char *tag);
/** Remove @p dir and everything in it (rm -rf); fails the test if that fails.
 * GPUFIR_TEST_KEEP=1 keeps it (and says where), for the logs of a run that passed. */
void gf_test_rmtree(const char *dir);

/* ---- files ---------------------------------------------------------------- */

/** "DIR/NAME", malloc'ed. */
char *gf_test_path(const char *dir, const char *name);
/** Write @p n bytes to @p path (created or truncated), or fail the test. */
void gf_test_write_file(const char *path, const void *data, size_t n);
/** Write a NUL-terminated string to @p path, or fail the test. */
void gf_test_write_text(const char *path, const char *text);
/** Write @p text to DIR/NAME; @return that path, malloc'ed. */
char *gf_test_write_text_in(const char *dir, const char *name, const char *text);
/**
 * Read at most @p len - 1 bytes of @p path into @p buf, NUL-terminated.
 * @return the bytes read, or -1 (and buf "") when the file cannot be opened
 */
long gf_test_read_file(const char *path, char *buf, size_t len);
/** FNV-1a hash of the file's bytes (to check that a file was left unchanged). */
uint64_t gf_test_file_hash(const char *path);
/** Whether @p path exists. */
int gf_test_exists(const char *path);

/* ---- filters and engines ---------------------------------------------------- */

/** Uniform in [0, n), n > 0. */
uint32_t gf_test_rand_below(uint64_t *state, uint32_t n);
/** A malloc'ed buffer of @p n samples of uniform noise in [-1, 1). */
float *gf_test_noise(size_t n, uint64_t *state);
/** A filter set of decaying-noise taps (gf_test_fill_decaying_taps) per channel. */
struct gf_filter_set *gf_test_random_filter(uint32_t channels, uint32_t taps, uint64_t *state);
/** gf_test_reference of @p x through @p fs into a malloc'ed buffer (frames x channels). */
double *gf_test_reference_fs(const float *x, uint32_t frames, uint32_t channels,
			     const struct gf_filter_set *fs);
/**
 * The reference of a mixer (or a plain set) in double: output o is the sum
 * over the paths p into o of gf_test_reference of input path_in[p] through
 * FIR p. Malloc'ed, frames x outputs; @p x has gf_filter_set_inputs() channels.
 */
double *gf_test_reference_mix(const float *x, uint32_t frames, const struct gf_filter_set *fs);
/**
 * A CPU engine that passes its input through: a unit impulse padded to
 * @p taps taps (a long one costs what a real filter of that length does).
 */
struct gf_engine *gf_test_passthrough_engine(uint32_t channels, uint32_t max_block, uint32_t taps);
/** gf_test_reference with the one filter @p h on every channel, into a malloc'ed buffer. */
double *gf_test_reference_mono_filter(const float *x, uint32_t frames, uint32_t channels, const float *h,
				      uint32_t taps);
/** A CPU engine for @p fs (gf_engine_new with these parameters), or fail the test. */
struct gf_engine *gf_test_cpu_engine(uint32_t channels, uint32_t max_block, uint32_t max_taps,
				     uint32_t crossfade_frames, enum gf_algo algo, int retry,
				     const struct gf_filter_set *fs);
/** gf_test_rel_l2 over interleaved frames [from, to). */
double gf_test_rel_l2_frames(const float *got, const double *ref, uint32_t from, uint32_t to,
			     uint32_t channels);
/** 1 if all @p n samples are exactly zero (a muted block). */
int gf_test_all_zero(const float *y, size_t n);
/** The engine's counters now. */
struct gf_engine_stats gf_test_stats(const struct gf_engine *e);

#endif
