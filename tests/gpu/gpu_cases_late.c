/*
 * test_gpu_engine's cases of late and given-up work (CUDA builds): a call
 * that misses its deadline stays in flight and is collected later, exact,
 * on every live path; a call given up is stopped (backend.h stop), after
 * which pinned host memory unregisters again, however often it happens; a
 * large call that misses its deadline cannot resume and says so; and the
 * engine falls back to the CPU on a hang and returns to the GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "cu_hooks.h"
#include "engine.h"
#include "error.h"
#include "gpu.h"
#include "gpu_cases.h"
#include "testutil.h"

#define LATE_WAIT_NS 5000000ull /* the deadline the cases give a call */

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* An instance on @p path whose call hang_after+1 hangs (GPUFIR_CUDA_HANG_AFTER). */
static void *create_hanging(const char *path, enum gf_algo algo, const struct gf_filter_set *fs,
			    uint32_t block, const char *where, long hang_after)
{
	char n[32];
	snprintf(n, sizeof(n), "%ld", hang_after);
	setenv("GPUFIR_CUDA_HANG_AFTER", n, 1);
	setenv("GPUFIR_CUDA_HANG_WHERE", where, 1);
	void *inst = create_algo_with(algo, strcmp(path, "persistent") == 0 ? GPU_PATH : "GPUFIR_CUDA_LIVE",
				      strcmp(path, "staged") == 0 || strcmp(path, "mapped") == 0 ? "0" : "1",
				      fs, block);
	unsetenv("GPUFIR_CUDA_HANG_AFTER");
	unsetenv("GPUFIR_CUDA_HANG_WHERE");
	CHECK(strcmp(gf_cuda_block_path(inst), path) == 0);
	return inst;
}

/*
 * The hooked call misses its deadline; the hang is then released and a later
 * finish collects that very block's output; the stream goes on on the same
 * instance, and all of it equals the reference.
 */
void late_case(const char *path, enum gf_algo algo, uint32_t taps, const char *where)
{
	const uint32_t ch = 2, block = 64, calls = 200;
	struct gf_filter_set *fs = make_taps(ch, taps);
	void *inst = create_hanging(path, algo, fs, block, where, 4);
	float *x = malloc(sizeof(float) * calls * block * ch),
	      *y = malloc(sizeof(float) * calls * block * ch);
	CHECK(x && y);
	gf_test_fill_noise(x, (size_t)calls * block * ch, &g_rng);
	int late = 0;
	for (uint32_t k = 0; k < calls; k++) {
		size_t off = (size_t)k * block * ch;
		CHECK_OK(gf_cuda_backend.submit(inst, x + off, block));
		int err = gf_cuda_backend.finish(inst, y + off, gf_now_ns() + LATE_WAIT_NS);
		if (err == GF_E_TIMEOUT) {
			late++;
			gf_cuda_release_hang(inst);
			err = gf_cuda_backend.finish(inst, y + off, gf_now_ns() + 1000000000ull);
		}
		CHECK_OK(err);
	}
	double e = error_of(x, y, calls * block, ch, fs, 0);
	printf("late    %s %s %u taps, hang in the %s: %d call(s) late, collected after the release; rel L2 "
	       "%.2e over %u calls on the same instance\n",
	       path, algo == GF_ALGO_FFT ? "fft" : "direct", taps, where, late, e, calls);
	CHECK(late >= 1 && e < TOL); /* the hooked call; a slow run (a sanitizer) may add others */
	gf_cuda_backend.destroy(inst);
	free(x);
	free(y);
	gf_filter_set_free(fs);
}

/* Ask stop() until it confirms (at most 1 s); @return how long it took, ns. */
static uint64_t stop_until_ended(void *inst)
{
	uint64_t t0 = gf_now_ns();
	while (!gf_cuda_backend.stop(inst)) {
		CHECK(gf_now_ns() - t0 < 1000000000ull);
		sleep_ms(1);
	}
	return gf_now_ns() - t0;
}

/*
 * Given up: a hung call, then stop(). Behind the hung work, unpinning is
 * refused (it would wait for the kernel); once stop() has confirmed the
 * end, the same buffer unregisters, destroy is quick, and the count of
 * registered buffers is back where it was, three times over.
 */
void stop_case(const char *path, enum gf_algo algo, uint32_t taps)
{
	const uint32_t ch = 2, block = 64;
	const size_t nb = (size_t)1 << 16;
	struct gf_filter_set *fs = make_taps(ch, taps);
	float x[128] = {0}, y[128];
	int base = gf_cuda_pinned_buffers();
	for (int round = 0; round < 3; round++) {
		void *inst = create_hanging(path, algo, fs, block, "kernel", 2);
		void *buf = aligned_alloc(4096, nb);
		CHECK(buf && gf_cuda_pin(buf, nb) == 0 && gf_cuda_pinned_buffers() == base + 1);
		int err = 0;
		for (int k = 0; k < 3 && !err; k++) {
			err = gf_cuda_backend.submit(inst, x, block);
			if (!err)
				err = gf_cuda_backend.finish(inst, y, gf_now_ns() + LATE_WAIT_NS);
		}
		CHECK(err == GF_E_TIMEOUT);
		CHECK(gf_cuda_unpin(buf) == 1); /* in doubt: refused, kept registered */
		uint64_t stop_ns = stop_until_ended(inst);
		CHECK(gf_cuda_unpin(buf) == 0);
		free(buf);
		uint64_t t0 = gf_now_ns();
		gf_cuda_backend.destroy(inst);
		uint64_t free_ns = gf_now_ns() - t0;
		printf("stop    %s %u taps, round %d: stopped in %.1f ms, unpinned after it, destroyed in "
		       "%.1f ms; "
		       "registered buffers %d (before %d)\n",
		       path, taps, round, (double)stop_ns / 1e6, (double)free_ns / 1e6,
		       gf_cuda_pinned_buffers(), base);
		CHECK(free_ns < 200000000u && gf_cuda_pinned_buffers() == base);
	}
	gf_filter_set_free(fs);
}

/* A large call runs its pipeline in finish, reading the caller's input there:
 * past its deadline it cannot resume. The next finish says so; stop() still
 * confirms the end of its work and destroy is quick. */
void wide_late_case(void)
{
	const uint32_t ch = 2, block = 65536;
	struct gf_filter_set *fs = make_taps(ch, 1000);
	float *x = calloc((size_t)block * ch, sizeof(float)), *y = malloc(sizeof(float) * block * ch);
	CHECK(x && y);
	void *inst = create_hanging("pipelined", GF_ALGO_FFT, fs, block, "kernel", 1);
	CHECK_OK(gf_backend_process(&gf_cuda_backend, inst, x, y, block));
	CHECK_OK(gf_cuda_backend.submit(inst, x, block));
	CHECK(gf_cuda_backend.finish(inst, y, gf_now_ns() + LATE_WAIT_NS) == GF_E_TIMEOUT);
	CHECK(gf_cuda_backend.finish(inst, y, gf_now_ns() + 1000000000ull) == GF_E_CUDA);
	uint64_t stop_ns = stop_until_ended(inst);
	uint64_t t0 = gf_now_ns();
	gf_cuda_backend.destroy(inst);
	printf("wide    a pipelined call past its deadline: not resumed (GF_E_CUDA), stopped in %.1f ms, "
	       "destroyed in %.1f ms\n",
	       (double)stop_ns / 1e6, (double)(gf_now_ns() - t0) / 1e6);
	free(x);
	free(y);
	gf_filter_set_free(fs);
}

/*
 * The engine on the GPU: the hook's kernel spins (up to 3 s) from call 41 on.
 * Blocks are muted for hang_ms, the CPU takes over, the hung instance is
 * stopped and destroyed (its spin released), and the engine returns to the
 * GPU; every block is muted or exact, and a buffer pinned before the hang
 * unregisters afterwards.
 */
void engine_return_case(void)
{
	const uint32_t ch = 2, block = 64, taps = 500, max_blocks = 3000;
	struct gf_filter_set *fs = make_taps(ch, taps);
	struct gf_engine_params p = {.backend = GF_BACKEND_CUDA,
				     .channels = ch,
				     .max_block = block,
				     .crossfade_frames = 4 * block,
				     .deadline_us = 5000,
				     .hang_ms = 100,
				     .return_ms = 300};
	struct gf_errbuf eb = {{0}};
	struct gf_engine *e = NULL;
	setenv("GPUFIR_CUDA_HANG_AFTER", "40", 1);
	CHECK_OK_EB(gf_engine_new(&e, &p, fs, &eb), &eb);
	unsetenv("GPUFIR_CUDA_HANG_AFTER"); /* the instance it returns to does not hang */
	const size_t nb = (size_t)1 << 16;
	void *buf = aligned_alloc(4096, nb);
	int base = gf_cuda_pinned_buffers();
	CHECK(buf && gf_cuda_pin(buf, nb) == 0);
	float *x = malloc(sizeof(float) * max_blocks * block * ch),
	      *y = malloc(sizeof(float) * max_blocks * block * ch);
	CHECK(x && y);
	gf_test_fill_noise(x, (size_t)max_blocks * block * ch, &g_rng);
	uint32_t b = 0, muted = 0, done_at = 0;
	struct gf_engine_stats s;
	for (; b < max_blocks && (!done_at || b < done_at + 50); b++) {
		size_t off = (size_t)b * block * ch;
		if (gf_engine_process(e, x + off, y + off, block))
			muted++;
		gf_engine_reap(e);
		gf_engine_get_stats(e, &s);
		if (!done_at && s.returns == 1 && !gf_engine_swap_pending(e))
			done_at = b;
		sleep_ms(2);
	}
	CHECK(done_at);
	float tail[128];
	for (int i = 0; i < 3; i++) { /* a last late answer, if any, collected: nothing left in doubt */
		sleep_ms(10);
		gf_engine_process(e, x, tail, block);
	}
	/* Every block is either muted or exact. */
	double *ref = malloc(sizeof(double) * b * block * ch);
	CHECK(ref);
	gf_test_reference(x, b * block, ch, fs->coeffs, fs->taps, ref);
	uint32_t bad = 0;
	for (uint32_t k = 0; k < b; k++) {
		size_t off = (size_t)k * block * ch, n = (size_t)block * ch;
		int zero = 1;
		for (size_t i = 0; i < n && zero; i++)
			zero = y[off + i] == 0.0f;
		if (!zero && gf_test_rel_l2(y + off, ref + off, n) > TOL)
			bad++;
	}
	free(ref);
	int unpinned = gf_cuda_unpin(buf);
	printf("engine  GPU hang: %u blocks muted, hangs %llu, fallbacks %llu, returns %llu, backend %s; "
	       "%u blocks neither muted nor exact; unpin after it %d, registered %d (before %d)\n",
	       muted, (unsigned long long)s.hangs, (unsigned long long)s.fallbacks,
	       (unsigned long long)s.returns, gf_engine_backend_name(e), bad, unpinned,
	       gf_cuda_pinned_buffers(), base);
	CHECK(bad == 0 && s.hangs == 1 && s.fallbacks == 1 && s.returns == 1 && s.dying == 0 &&
	      s.abandoned == 0);
	CHECK(strcmp(gf_engine_backend_name(e), "cuda") == 0);
	CHECK(unpinned == 0 && gf_cuda_pinned_buffers() == base);
	free(buf);
	gf_engine_free(e);
	free(x);
	free(y);
	gf_filter_set_free(fs);
}
