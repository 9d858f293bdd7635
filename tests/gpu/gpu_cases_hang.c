/*
 * test_gpu_engine's cases of failures: the injected fault
 * (GPUFIR_CUDA_FAIL_AFTER), a kernel or an FFT tail that hangs
 * (GPUFIR_CUDA_HANG_AFTER, GPUFIR_CUDA_HANG_WHERE) against the call's
 * deadline, and the bounded waits around a persistent kernel's handover or
 * an FFT tail's launcher that never ends.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "error.h"
#include "gpu.h"
#include "gpu_cases.h"
#include "testutil.h"

#ifdef GPUFIR_HAVE_CUDA
#include "cu_hooks.h"
#endif

void fault_case(void)
{
	const uint32_t ch = 1, block = 64;
	struct gf_filter_set *fs = make_taps(ch, 33);
	float x[64] = {0}, y[64];
	struct gf_engine_params p = {.backend = GF_BACKEND_CUDA, .channels = ch, .max_block = block};
	struct gf_errbuf eb = {{0}};
	void *inst = NULL;
	setenv("GPUFIR_CUDA_FAIL_AFTER", "3", 1);
	CHECK_OK_EB(gf_cuda_backend.create(&p, fs, &inst, &eb), &eb);
	unsetenv("GPUFIR_CUDA_FAIL_AFTER");
	for (int i = 0; i < 3; i++)
		CHECK_OK(gf_backend_process(&gf_cuda_backend, inst, x, y, block));
	CHECK(gf_backend_process(&gf_cuda_backend, inst, x, y, block) == GF_E_CUDA);
	gf_cuda_backend.destroy(inst);
	gf_filter_set_free(fs);
	printf("fault   GPUFIR_CUDA_FAIL_AFTER=3: 4th call returned GF_E_CUDA\n");
}

/* Submit and finish one call with a deadline @p wait_ns away; *took_ns: how long finish took. */
static int timed_call(void *inst, const float *x, float *y, uint32_t block, uint64_t wait_ns,
		      uint64_t *took_ns)
{
	uint64_t t0 = gf_now_ns();
	int err = gf_cuda_backend.submit(inst, x, block);
	if (!err)
		err = gf_cuda_backend.finish(inst, y, t0 + wait_ns);
	*took_ns = gf_now_ns() - t0;
	return err;
}

/* GPUFIR_CUDA_HANG_AFTER: the 3rd call's kernel spins; finish() gives up at its
 * deadline with GF_E_TIMEOUT instead of waiting for it. With
 * GPUFIR_CUDA_HANG_WHERE=tail an FFT instance on the persistent path stalls its
 * tail's side stream instead: the kernel answers, and the first call whose tail
 * is then late (a segment or two on) is the one that times out, in finish's
 * wait for the tail. Its work is in doubt then: unpinning is refused at once.
 * (gpu_cases_late.c collects such a call, and stops one given up.) */
void hang_case(const char *want_path, enum gf_algo algo, uint32_t taps, const char *where)
{
	const int persist = strcmp(want_path, "persistent") == 0;
	const uint32_t ch = 2, block = 64;
	const uint64_t wait_ns = 5000000u;
	struct gf_filter_set *fs = make_taps(ch, taps);
	float x[128] = {0}, y[128];
	struct gf_engine_params p = {.backend = GF_BACKEND_CUDA,
				     .algo = algo,
				     .channels = ch,
				     .max_block = block,
				     .gpu_path = persist ? GF_GPU_PATH_PERSISTENT : GF_GPU_PATH_LAUNCHED};
	struct gf_errbuf eb = {{0}};
	void *inst = NULL;
	setenv("GPUFIR_CUDA_HANG_AFTER", "2", 1);
	setenv("GPUFIR_CUDA_HANG_WHERE", where, 1);
	setenv("GPUFIR_CUDA_LIVE", strcmp(want_path, "fused") == 0 ? "1" : "0", 1);
	CHECK_OK_EB(gf_cuda_backend.create(&p, fs, &inst, &eb), &eb);
	setenv("GPUFIR_CUDA_LIVE", "0", 1);
	unsetenv("GPUFIR_CUDA_HANG_AFTER");
	unsetenv("GPUFIR_CUDA_HANG_WHERE");
#ifdef GPUFIR_HAVE_CUDA
	const char *path = gf_cuda_block_path(inst); /* a string literal */
	CHECK(strcmp(path, want_path) == 0);
	const uint32_t seg = algo == GF_ALGO_FFT ? gf_cuda_fft_partition(inst) : block;
#else
	const char *path = want_path; /* not reached: create fails without CUDA */
	const uint32_t seg = block;
#endif
	/* The kernel: the 3rd call. The tail: the calls of the segments its stalled chain
	 * would have formed, two on from the first segment completed after the 3rd call. */
	const uint32_t max_calls = strcmp(where, "tail") == 0 ? 3 + 4 * (seg / block) + 4 : 3;
	uint64_t took = 0;
	uint32_t calls = 0;
	int err = 0;
	while (calls < max_calls && (err = timed_call(inst, x, y, block, wait_ns, &took)) == 0)
		calls++;
	CHECK(err == GF_E_TIMEOUT);
	CHECK(strcmp(where, "tail") == 0 ? calls >= 3 : calls == 2);
	CHECK(took >= wait_ns && took < wait_ns + 50000000u);
	/* Unregistering host memory waits for every kernel on the device: behind
	 * work that missed its deadline (the hook spins for 3 s) it must not be
	 * tried. The buffer stays pinned, and unpin says so at once. */
	const size_t nb = (size_t)1 << 16;
	void *buf = aligned_alloc(4096, nb);
	CHECK(buf && gf_cuda_pin(buf, nb) == 0);
	uint64_t u0 = gf_now_ns();
	CHECK(gf_cuda_unpin(buf) == 1);
	double unpin_ms = (double)(gf_now_ns() - u0) / 1e6;
	CHECK(unpin_ms < 100.0);
	/* destroy releases the hook's kernel through its mapped flag (as the
	 * engine's stop does first), so memcheck's leak check stays clean. */
	gf_cuda_backend.destroy(inst);
	CHECK(gf_cuda_unpin(buf) == 0); /* its work is done: nothing is in doubt now */
	free(buf);
	gf_filter_set_free(fs);
	printf("hang    GPUFIR_CUDA_HANG_AFTER=2, %s %u taps, %s path, hang in the %s: call %u timed out "
	       "after %.1f ms (deadline 5 ms); unpin behind it %.2f ms (kept pinned)\n",
	       algo == GF_ALGO_FFT ? "fft" : "direct", taps, path, where, calls + 1, (double)took / 1e6,
	       unpin_ms);
}

#ifdef GPUFIR_HAVE_CUDA
struct build_job {
	const struct gf_filter_set *fs;
	int err;
	uint64_t took_ns;
};

static void *build_beside(void *arg)
{
	struct build_job *j = arg;
	struct gf_engine_params p = {
		.backend = GF_BACKEND_CUDA, .channels = j->fs->channels, .max_block = 64};
	struct gf_errbuf eb = {{0}};
	void *inst = NULL;
	uint64_t t0 = gf_now_ns();
	j->err = gf_cuda_backend.create(&p, j->fs, &inst, &eb);
	j->took_ns = gf_now_ns() - t0;
	if (!j->err)
		gf_cuda_backend.destroy(inst);
	return NULL;
}

/* The bounded waits around a handover that does not end: an idle
 * instance's kernel is asked to hand over (another instance is built) and
 * does not answer (the hang hook). The build gives up after its 500 ms with
 * GF_E_BUSY instead of waiting behind the kernel; a call on the instance
 * meanwhile is refused at once with GF_E_BUSY (the engine counts the block
 * late) instead of spinning on the lower-priority thread that hands over.
 * Last: the instance's kernel stays in doubt. */
void stuck_handover_case(void)
{
	const uint32_t block = 64;
	struct gf_filter_set *fs = make_taps(2, 33);
	float x[128] = {0}, y[128];
	setenv("GPUFIR_CUDA_HANG_AFTER", "1000000", 1); /* the hook's set-up; no call reaches it */
	void *a = create_with(GPU_PATH, "1", fs, block);
	unsetenv("GPUFIR_CUDA_HANG_AFTER");
	CHECK(strcmp(gf_cuda_block_path(a), "persistent") == 0);
	for (int i = 0; i < 2; i++)
		CHECK_OK(gf_backend_process(&gf_cuda_backend, a, x, y, block));
	CHECK(gf_cuda_hang_next_command(a) == 0);
	const struct timespec idle = {0, 40000000}; /* idle (25 ms without a call): the build takes it over */
	nanosleep(&idle, NULL);
	struct build_job job = {.fs = fs};
	pthread_t t;
	CHECK(pthread_create(&t, NULL, build_beside, &job) == 0);
	const struct timespec settle = {0, 100000000}; /* well inside the build's 500 ms wait */
	nanosleep(&settle, NULL);
	uint64_t c0 = gf_now_ns();
	int call_err = gf_cuda_backend.submit(a, x, block);
	uint64_t call_ns = gf_now_ns() - c0;
	CHECK(pthread_join(t, NULL) == 0);
	CHECK(call_err == GF_E_BUSY);
	CHECK(call_ns < 1000000u);
	CHECK(job.err == GF_E_BUSY);
	CHECK(job.took_ns >= 400000000u && job.took_ns < 1500000000u);
	printf("stuck handover: the build gave up with GF_E_BUSY after %.0f ms; a call during the "
	       "handover was refused after %.3f ms\n",
	       (double)job.took_ns / 1e6, (double)call_ns / 1e6);
	gf_cuda_backend.destroy(a); /* keeps what the kernel may still use */
	gf_filter_set_free(fs);
}

/* The FFT tail's launcher stuck inside a launch (the hold hook: it has claimed a
 * completed segment and sleeps 4 s before launching it). The drain that a prime
 * starts with gives up at its 2 s deadline with GF_E_TIMEOUT instead of waiting
 * for the launcher, and destroy abandons the launcher after its 1 s join instead
 * of blocking; the instance's state stays in doubt, so this case runs last. */
void stuck_launcher_case(void)
{
	const uint32_t block = 64;
	struct gf_filter_set *fs = make_taps(2, 20000);
	float x[128] = {0}, y[128];
	void *a = create_algo_with(GF_ALGO_FFT, GPU_PATH, "1", fs, block);
	CHECK(strcmp(gf_cuda_block_path(a), "persistent") == 0);
	CHECK(gf_cuda_hold_launcher(a, 4000) == 0);
	const uint32_t seg = gf_cuda_fft_partition(a);
	for (uint32_t i = 0; i < seg / block + 1; i++) /* completes segment 0: the launcher claims it */
		CHECK_OK(gf_backend_process(&gf_cuda_backend, a, x, y, block));
	const struct timespec claimed = {0, 50000000}; /* the launcher polls every 2 ms at most */
	nanosleep(&claimed, NULL);
	uint64_t t0 = gf_now_ns();
	int err = gf_cuda_backend.prime(a, x, 1);
	uint64_t prime_ns = gf_now_ns() - t0;
	CHECK(err == GF_E_TIMEOUT);
	CHECK(prime_ns >= 2000000000u && prime_ns < 2500000000u);
	t0 = gf_now_ns();
	gf_cuda_backend.destroy(a);
	uint64_t free_ns = gf_now_ns() - t0;
	CHECK(free_ns < 1500000000u);
	printf("stuck launcher: the prime's drain gave up with GF_E_TIMEOUT after %.0f ms; destroy "
	       "returned after %.0f ms (the launcher abandoned)\n",
	       (double)prime_ns / 1e6, (double)free_ns / 1e6);
	gf_filter_set_free(fs);
}
#endif
