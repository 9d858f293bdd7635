/*
 * test_gpu_engine's cases of the live paths (CUDA builds only): the fused
 * per-block kernel and the persistent kernel forced on (GPUFIR_CUDA_LIVE=1,
 * gpu_path persistent) or timed at create (unset, auto), the handover of a
 * persistent kernel when another instance is built beside it, and instances
 * freed behind a resident kernel.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cu_hooks.h"
#include "error.h"
#include "gpu.h"
#include "gpu_cases.h"
#include "testutil.h"

/* An instance of @p algo for @p block-frame calls made with @p var set to
 * @p val (a live path forced on, or timed): a test hook's variable, which is
 * then set back to "0", or GPU_PATH, the engine parameter ("1" persistent,
 * "0" launched, "auto"). */
void *create_algo_with(enum gf_algo algo, const char *var, const char *val, const struct gf_filter_set *fs,
		       uint32_t block)
{
	struct gf_engine_params p = {.backend = GF_BACKEND_CUDA,
				     .algo = algo,
				     .channels = fs->channels,
				     .max_block = block,
				     .gpu_path = g_gpu_path};
	struct gf_errbuf eb = {{0}};
	void *inst = NULL;
	const int param = strcmp(var, GPU_PATH) == 0;
	if (param)
		p.gpu_path = strcmp(val, "1") == 0	? GF_GPU_PATH_PERSISTENT
			     : strcmp(val, "auto") == 0 ? GF_GPU_PATH_AUTO
							: GF_GPU_PATH_LAUNCHED;
	else
		setenv(var, val, 1);
	CHECK_OK_EB(gf_cuda_backend.create(&p, fs, &inst, &eb), &eb);
	if (!param)
		setenv(var, "0", 1);
	return inst;
}

void *create_with(const char *var, const char *val, const struct gf_filter_set *fs, uint32_t block)
{
	return create_algo_with(GF_ALGO_DIRECT, var, val, fs, block);
}

/* Live blocks of the direct algorithm take the fused path; it is
 * deterministic (two instances give the same bits) and matches the reference
 * with random call sizes, with the taps held in a constant bank or only in
 * global memory (@p want_where; the fused kernel reads the global copy either
 * way); the same stream with the fused path turned off matches too. */
void algo_path_case(enum gf_algo algo, const char *env, const char *want_path, uint32_t ch, uint32_t taps,
		    uint32_t block, const char *want_where)
{
	const uint32_t frames = 8 * block + 2 * taps + 77;
	struct gf_filter_set *fs = make_taps(ch, taps);
	size_t n = (size_t)frames * ch;
	float *x = malloc(n * sizeof(float)), *y[3];
	CHECK(x);
	gf_test_fill_noise(x, n, &g_rng);
	uint64_t seed = g_rng;
	for (int k = 0; k < 3; k++) {
		y[k] = malloc(n * sizeof(float));
		CHECK(y[k]);
		void *inst = create_algo_with(algo, env, k < 2 ? "1" : "0", fs,
					      block); /* twice the path under test */
		const char *got =
			gf_cuda_block_path(inst); /* without it: staged, or mapped for small FFT calls */
		CHECK(k < 2 ? strcmp(got, want_path) == 0
			    : strcmp(got, "staged") == 0 || strcmp(got, "mapped") == 0);
		if (k < 2)
			CHECK(strncmp(gf_cuda_taps_where(inst), want_where, strlen(want_where)) == 0);
		g_rng = seed; /* the same call sizes each time */
		stream(&gf_cuda_backend, inst, x, y[k], frames, ch, block, RANDOM);
		gf_cuda_backend.destroy(inst);
	}
	double e = error_of(x, y[0], frames, ch, fs, 0), e2 = error_of(x, y[2], frames, ch, fs, 0);
	int same = memcmp(y[0], y[1], n * sizeof(float)) == 0;
	printf("%-10s %-6s taps %7u ch %2u block %4u (%s): rel L2 %.2e, run to run %s; staged path rel L2 "
	       "%.2e\n",
	       want_path, algo == GF_ALGO_FFT ? "fft" : "direct", taps, ch, block, want_where, e,
	       same ? "bit-identical" : "DIFFERENT", e2);
	/* The staged direct path may add partial sums with atomics: not bit-identical run to run. */
	CHECK(e < TOL && e2 < TOL &&
	      (same || strcmp(want_path, "staged") == 0 || strcmp(want_path, "mapped") == 0));
	for (int k = 0; k < 3; k++)
		free(y[k]);
	free(x);
	gf_filter_set_free(fs);
}

void path_case(const char *env, const char *want_path, uint32_t ch, uint32_t taps, uint32_t block,
	       const char *want_where)
{
	algo_path_case(GF_ALGO_DIRECT, env, want_path, ch, taps, block, want_where);
}

/* @return the rel L2 error of @p frames of noise streamed through @p inst in whole blocks. */
static double noise_error(void *inst, const struct gf_filter_set *fs, uint32_t frames, uint32_t block)
{
	const uint32_t ch = fs->channels;
	size_t n = (size_t)frames * ch;
	float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
	CHECK(x && y);
	gf_test_fill_noise(x, n, &g_rng);
	stream(&gf_cuda_backend, inst, x, y, frames, ch, block, FIXED);
	double e = error_of(x, y, frames, ch, fs, 0);
	free(x);
	free(y);
	return e;
}

/* GPUFIR_CUDA_LIVE unset (the default): the fused path or the staged one, by
 * timing both at create, once per shape: a second instance of the shape
 * measures nothing and takes the same path; either way the output is right. */
void auto_live_case(uint32_t ch, uint32_t taps, uint32_t block)
{
	struct gf_filter_set *fs = make_taps(ch, taps);
	unsetenv("GPUFIR_CUDA_LIVE");
	const unsigned timed0 = gf_cuda_paths_timed();
	void *a = create_with(GPU_PATH, "0", fs, block);
	const unsigned timed1 = gf_cuda_paths_timed();
	void *b = create_with(GPU_PATH, "0", fs, block);
	const unsigned timed2 = gf_cuda_paths_timed();
	setenv("GPUFIR_CUDA_LIVE", "0", 1);
	const char *path = gf_cuda_block_path(a);
	CHECK(strcmp(path, "fused") == 0 || strcmp(path, "staged") == 0);
	CHECK(strcmp(gf_cuda_block_path(b), path) == 0);
	/* no earlier case leaves a choice for these shapes: the first instance times, the second not */
	CHECK(timed1 - timed0 == 1 && timed2 == timed1);
	double e = noise_error(a, fs, 30 * block, block), e2 = noise_error(b, fs, 30 * block, block);
	printf("auto    taps %5u ch %2u block %4u: GPUFIR_CUDA_LIVE unset, measured choice %s (%u timing), "
	       "rel L2 %.2e %.2e\n",
	       taps, ch, block, path, timed1 - timed0, e, e2);
	CHECK(e < TOL && e2 < TOL);
	gf_cuda_backend.destroy(a);
	gf_cuda_backend.destroy(b);
	gf_filter_set_free(fs);
}

/* gpu_path auto: the live path is picked by timing both; whichever it is, the output is right. */
void auto_path_case(void)
{
	const uint32_t ch = 2, taps = 4095, block = 64;
	struct gf_filter_set *fs = make_taps(ch, taps);
	void *inst = create_with(GPU_PATH, "auto", fs, block);
	const char *path = gf_cuda_block_path(inst);
	CHECK(strcmp(path, "persistent") == 0 || strcmp(path, "staged") == 0);
	double e = noise_error(inst, fs, 30 * block, block);
	printf("auto    taps %5u ch %2u block %4u: measured choice %s, rel L2 %.2e\n", taps, ch, block, path,
	       e);
	CHECK(e < TOL);
	gf_cuda_backend.destroy(inst);
	gf_filter_set_free(fs);
}

/*
 * A reload under the persistent path: building instance B while A's kernel is
 * resident makes A hand over to the staged path, at the end of its next call
 * on the thread that streams it (@p threaded) or, A being idle, on the
 * building thread; B then runs its own kernel. A's output stays exact across
 * the handover, and B's is right.
 */
struct handover_job {
	void *inst;
	const float *x;
	float *y;
	uint32_t frames, ch, block;
	atomic_uint done_blocks;
	int err;
};

static void *stream_paced(void *arg)
{
	struct handover_job *j = arg;
	const struct timespec gap = {0, 300000};
	for (uint32_t f = 0; f < j->frames && !j->err; f += j->block) {
		j->err = gf_backend_process(&gf_cuda_backend, j->inst, j->x + (size_t)f * j->ch,
					    j->y + (size_t)f * j->ch, j->block);
		atomic_fetch_add(&j->done_blocks, 1);
		nanosleep(&gap, NULL);
	}
	return NULL;
}

void handover_case(int threaded, enum gf_algo algo, uint32_t taps)
{
	const uint32_t ch = 2, block = 64, nblocks = 400;
	struct gf_filter_set *fs = make_taps(ch, taps);
	struct handover_job j = {.frames = nblocks * block, .ch = ch, .block = block};
	size_t n = (size_t)j.frames * ch;
	float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
	CHECK(x && y);
	gf_test_fill_noise(x, n, &g_rng);
	j.x = x;
	j.y = y;
	j.inst = create_algo_with(algo, GPU_PATH, "1", fs, block);
	CHECK(strcmp(gf_cuda_block_path(j.inst), "persistent") == 0);
	pthread_t t;
	if (threaded) {
		CHECK(pthread_create(&t, NULL, stream_paced, &j) == 0);
		while (atomic_load(&j.done_blocks) < nblocks / 4)
			usleep(1000);
	} else {
		j.frames /= 2;
		stream_paced(&j);
	}
	uint64_t t0 = gf_now_ns();
	void *b = create_algo_with(algo, GPU_PATH, "1", fs, block);
	double ms = (double)(gf_now_ns() - t0) / 1e6;
	unsigned at = atomic_load(&j.done_blocks);
	/* Handed over: the staged path (mapped staging for small FFT calls). */
	CHECK(strcmp(gf_cuda_block_path(j.inst), algo == GF_ALGO_FFT ? "mapped" : "staged") == 0);
	CHECK(strcmp(gf_cuda_block_path(b), "persistent") == 0);
	if (threaded) {
		CHECK(pthread_join(t, NULL) == 0);
	} else {
		j.x = x + n / 2;
		j.y = y + n / 2;
		stream_paced(&j);
		j.frames *= 2;
	}
	CHECK_OK(j.err);
	double e = error_of(x, y, j.frames, ch, fs, 0), eb = noise_error(b, fs, 40 * block, block);
	printf("handover %s, %s %u taps: built beside a persistent kernel in %.1f ms (at block %u of %u); "
	       "the old instance rel L2 %.2e across it, the new one %.2e\n",
	       threaded ? "while streaming" : "while idle", algo == GF_ALGO_FFT ? "fft" : "direct", taps, ms,
	       at, nblocks, e, eb);
	CHECK(e < TOL && eb < TOL);
	gf_cuda_backend.destroy(j.inst);
	gf_cuda_backend.destroy(b);
	free(x);
	free(y);
	gf_filter_set_free(fs);
}

/* Instances freed while another runs a persistent kernel, with more pinned
 * buffers in use than the process-wide cache holds: what cannot go back to
 * the cache is retired, not given to cudaFreeHost, which synchronizes the
 * device and so never returns behind a kernel that does not end. Host memory
 * pinned by the caller is not unregistered behind it either (same wait). */
struct free_job {
	void **inst;
	int n;
	void *buf; /* pinned by the caller */
	int unpin_rc;
	atomic_int done;
};

static void *free_all(void *arg)
{
	struct free_job *j = arg;
	for (int i = 0; i < j->n; i++)
		gf_cuda_backend.destroy(j->inst[i]);
	j->unpin_rc = gf_cuda_unpin(j->buf);
	atomic_store(&j->done, 1);
	return NULL;
}

void free_behind_persistent_case(void)
{
	enum { N = 16 }; /* four pinned buffers or more each: past the cache's 64 */
	const uint32_t block = 64;
	struct gf_filter_set *fs = make_taps(2, 4095);
	void *inst[N];
	/* Made first: building an instance behind a persistent kernel waits for it (docs/cuda.md). */
	for (int i = 0; i < N; i++) /* distinct block sizes: no two share a buffer size */
		inst[i] = create_with(GPU_PATH, "0", fs, 96 + 32 * (uint32_t)i);
	void *keep = create_with(GPU_PATH, "1", fs, block);
	CHECK(strcmp(gf_cuda_block_path(keep), "persistent") == 0);
	const size_t nb = (size_t)1 << 16;
	struct free_job job = {inst, N, aligned_alloc(4096, nb), -1, 0};
	CHECK(job.buf && gf_cuda_pin(job.buf, nb) == 0);
	pthread_t t;
	uint64_t t0 = gf_now_ns();
	CHECK(pthread_create(&t, NULL, free_all, &job) == 0);
	while (!atomic_load(&job.done) && gf_now_ns() - t0 < 20000000000ull)
		usleep(1000);
	if (!atomic_load(&job.done)) { /* the thread is stuck in the driver: it cannot be joined */
		printf("FAIL: freeing %d instances and a pinned buffer behind a persistent kernel did not "
		       "return in 20 s\n",
		       N);
		fflush(stdout);
		_exit(1);
	}
	double ms = (double)(gf_now_ns() - t0) / 1e6;
	CHECK(pthread_join(t, NULL) == 0);
	CHECK(job.unpin_rc == 1); /* kept pinned while the kernel is resident */
	double e = noise_error(keep, fs, 40 * block, block);
	printf("retire  %d instances freed behind a persistent kernel in %.1f ms; it then streams, rel L2 "
	       "%.2e\n",
	       N, ms, e);
	CHECK(e < TOL);
	gf_cuda_backend.destroy(keep);
	CHECK(gf_cuda_unpin(job.buf) == 0); /* nothing resident now */
	free(job.buf);
	gf_filter_set_free(fs);
}
