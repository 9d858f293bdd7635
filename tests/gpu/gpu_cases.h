/*
 * What the files of test_gpu_engine share: the case description, the
 * seeded generator, streaming through an instance and the double-precision
 * reference (gpu_reference.c), and the cases that main() (test_gpu_engine.c)
 * runs from the other files: the live paths (gpu_cases_live.c, CUDA builds
 * only), the fault and hang hooks (gpu_cases_hang.c) and late and given-up
 * work (gpu_cases_late.c, CUDA builds only).
 */
#ifndef GPUFIR_TEST_GPU_CASES_H
#define GPUFIR_TEST_GPU_CASES_H

#include <stdint.h>

#include "backend.h"
#include "filter_set.h"

#define TOL 1e-5

enum pattern { FIXED, RANDOM, ONES };

struct tcase {
	enum gf_algo algo;
	uint32_t channels, taps, frames, max_block;
	enum pattern pat;
};

extern uint64_t g_rng;
/* The engine parameter gpu_path of the instances the cases make (test_gpu_engine.c), unless a case
 * asks for another (create_algo_with's GPU_PATH). */
extern enum gf_gpu_path g_gpu_path;

/* gpu_reference.c */
struct gf_filter_set *make_taps(uint32_t channels, uint32_t taps);
/* Run x through @p inst in calls of the pattern into y. */
void stream(const struct gf_backend_ops *ops, void *inst, const float *x, float *y, uint32_t frames,
	    uint32_t channels, uint32_t max_block, enum pattern pat);
/* rel L2 of y against the reference of x with fs, over frames [from, frames). */
double error_of(const float *x, const float *y, uint32_t frames, uint32_t channels,
		const struct gf_filter_set *fs, uint32_t from);

#ifdef GPUFIR_HAVE_CUDA
/* gpu_cases_live.c. GPU_PATH: the name create_algo_with takes for the engine's gpu_path. */
#define GPU_PATH "gpu_path"
void *create_algo_with(enum gf_algo algo, const char *var, const char *val, const struct gf_filter_set *fs,
		       uint32_t block);
void *create_with(const char *var, const char *val, const struct gf_filter_set *fs, uint32_t block);
void algo_path_case(enum gf_algo algo, const char *env, const char *want_path, uint32_t ch, uint32_t taps,
		    uint32_t block, const char *want_where);
void path_case(const char *env, const char *want_path, uint32_t ch, uint32_t taps, uint32_t block,
	       const char *want_where);
void auto_live_case(uint32_t ch, uint32_t taps, uint32_t block);
void auto_path_case(void);
void handover_case(int threaded, enum gf_algo algo, uint32_t taps);
void free_behind_persistent_case(void);
#endif

/* gpu_cases_hang.c */
void fault_case(void);
void hang_case(const char *want_path, enum gf_algo algo, uint32_t taps, const char *where);
#ifdef GPUFIR_HAVE_CUDA
void stuck_handover_case(void);
void stuck_launcher_case(void);
/* gpu_cases_late.c */
void late_case(const char *path, enum gf_algo algo, uint32_t taps, const char *where);
void stop_case(const char *path, enum gf_algo algo, uint32_t taps);
void wide_late_case(void);
void engine_return_case(void);
#endif

#endif
