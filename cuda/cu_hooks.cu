/*
 * Hooks into instances for the benchmarks and the GPU tests (cu_hooks.h):
 * timings of device work and of CUDA's start-up, the shape an instance took,
 * the fault hooks a test fires on demand, and the events that split a call's
 * round trip. Not part of the engine's interface; nothing here runs unless a
 * benchmark or a test calls it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "cu_direct.cuh"
#include "cu_fft.cuh"
#include "cu_hooks.h"
#include "cu_path.cuh"
#include "cu_persist.cuh"

static unsigned g_paths_timed; /* gf_cuda_paths_timed */

void gf_cu_note_path_timed(void)
{
	__atomic_add_fetch(&g_paths_timed, 1u, __ATOMIC_RELAXED);
}

/* Lap timer for gf_cuda_time_startup: milliseconds since the last lap. */
static double lap(double *t)
{
	double t1 = (1e3 * gf_now_s()), d = t1 - *t;
	*t = t1;
	return d;
}

extern "C" int gf_cuda_time_startup(int dev, double ms[GF_CUDA_STARTUP_STEPS])
{
	struct gf_errbuf eb = {{0}};
	cudaDeviceProp prop;
	cufftHandle plan = 0;
	size_t ws = 0;
	void *h[4] = {NULL, NULL, NULL, NULL};
	const size_t bytes = (size_t)65536 * 2 * sizeof(float); /* one offline chunk, stereo */
	int n = 0, err;
	gf_cu_prewarm_wait();
	double t = (1e3 * gf_now_s());
	err = CU_TRY(&eb, cudaGetDeviceCount(&n));
	ms[0] = lap(&t);
	err = err ? err : CU_TRY(&eb, cudaGetDeviceProperties(&prop, dev));
	ms[1] = lap(&t);
	err = err ? err : CU_TRY(&eb, cudaSetDevice(dev));
	err = err ? err : CU_TRY(&eb, cudaFree(NULL));
	ms[2] = lap(&t);
	err = err ? err : CUFFT_TRY(&eb, cufftCreate(&plan));
	err = err ? err : CUFFT_TRY(&eb, cufftMakePlan1d(plan, 4096, CUFFT_R2C, 2, &ws));
	if (plan)
		cufftDestroy(plan);
	ms[3] = lap(&t);
	for (int i = 0; i < 4 && !err; i++)
		err = CU_TRY(&eb, cudaHostAlloc(&h[i], bytes, cudaHostAllocDefault));
	for (int i = 0; i < 4; i++)
		cudaFreeHost(h[i]);
	ms[4] = lap(&t);
	for (int i = 0; i < 4; i++)
		h[i] = calloc(1, bytes);
	(void)lap(&t);
	for (int i = 0; i < 4 && !err; i++)
		err = h[i] ? CU_TRY(&eb, cudaHostRegister(h[i], bytes, cudaHostRegisterDefault)) : GF_E_NOMEM;
	ms[5] = lap(&t);
	for (int i = 0; i < 4; i++)
		gf_cu_unpin(h[i]);
	ms[6] = lap(&t);
	for (int i = 0; i < 4; i++)
		free(h[i]);
	if (err)
		fprintf(stderr, "gf_cuda_time_startup: %s\n", eb.msg);
	return err;
}

extern "C" int gf_cuda_time_calls(void *inst, uint32_t frames, int reps, double *ms_per_call,
				  double *host_ms_per_call)
{
	struct gf_cu_inst *in = (struct gf_cu_inst *)inst;
	struct gf_errbuf *eb = &in->eb;
	cudaEvent_t a = NULL, b = NULL;
	float ms = 0.0f;
	int err;
	if (frames < 1 || frames > in->chunk)
		return GF_E_INVAL;
	if ((err = gf_cu_use_device(in->dev, eb)) || (err = CU_TRY(eb, cudaEventCreate(&a))) ||
	    (err = CU_TRY(eb, cudaEventCreate(&b))))
		goto out;
	for (int i = 0; i < 2 && !err; i++)
		err = gf_cu_run_chunk(in, in->d_in[0], in->d_out[0], frames, in->s_comp, eb);
	if (err || (err = CU_TRY(eb, cudaEventRecord(a, in->s_comp))))
		goto out;
	{
		struct timespec h0, h1;
		clock_gettime(CLOCK_MONOTONIC, &h0);
		for (int i = 0; i < reps && !err; i++)
			err = gf_cu_run_chunk(in, in->d_in[0], in->d_out[0], frames, in->s_comp, eb);
		clock_gettime(CLOCK_MONOTONIC, &h1);
		if (host_ms_per_call)
			*host_ms_per_call = ((double)(h1.tv_sec - h0.tv_sec) * 1e3 +
					     1e-6 * (double)(h1.tv_nsec - h0.tv_nsec)) /
					    (reps > 0 ? reps : 1);
	}
	if (err || (err = CU_TRY(eb, cudaEventRecord(b, in->s_comp))) ||
	    (err = CU_TRY(eb, cudaEventSynchronize(b))) ||
	    (err = CU_TRY(eb, cudaEventElapsedTime(&ms, a, b))))
		goto out;
	*ms_per_call = (double)ms / (reps > 0 ? reps : 1);
out:
	if (a)
		cudaEventDestroy(a);
	if (b)
		cudaEventDestroy(b);
	return err;
}

extern "C" void gf_cuda_force_direct_shape(void *inst, int outputs_per_thread)
{
	struct gf_cu_inst *in = (struct gf_cu_inst *)inst;
	if (in->direct)
		gf_cu_direct_force_r(in->direct, outputs_per_thread);
}

extern "C" uint32_t gf_cuda_fft_partition(const void *inst)
{
	const struct gf_cu_inst *in = (const struct gf_cu_inst *)inst;
	return in->fft ? gf_cu_fft_partition(in->fft) : 0;
}

extern "C" uint32_t gf_cuda_fft_size(const void *inst)
{
	const struct gf_cu_inst *in = (const struct gf_cu_inst *)inst;
	return in->fft ? gf_cu_fft_size(in->fft) : 0;
}

extern "C" uint32_t gf_cuda_chunk_frames(const void *inst)
{
	return ((const struct gf_cu_inst *)inst)->chunk;
}

extern "C" const char *gf_cuda_taps_where(const void *inst)
{
	const struct gf_cu_inst *in = (const struct gf_cu_inst *)inst;
	return in->direct ? gf_cu_direct_where(in->direct) : "";
}

extern "C" int gf_cuda_hang_next_command(void *inst)
{
	struct gf_cu_inst *in = (struct gf_cu_inst *)inst;
	if (!gf_cu_pk_active(in) || !in->h_hang)
		return -1;
	gf_cu_persist_hang_next(in->persist, in->hang_cycles);
	return 0;
}

extern "C" int gf_cuda_hold_launcher(void *inst, uint32_t ms)
{
	struct gf_cu_inst *in = (struct gf_cu_inst *)inst;
	if (!gf_cu_pk_active(in) || !in->hybrid)
		return -1;
	gf_cu_hybrid_hold_launcher(in->hybrid, (uint64_t)ms * 1000000u);
	return 0;
}

int gf_cu_split_arm(cudaEvent_t ev[2])
{
	if (ev[0] || cudaEventCreate(&ev[0]) != cudaSuccess || cudaEventCreate(&ev[1]) != cudaSuccess) {
		(void)cudaGetLastError();
		return -1;
	}
	return 0;
}

int gf_cu_split_read(cudaEvent_t ev[2], uint64_t enqueue_ns, double *enqueue_us, double *gpu_us)
{
	float ms = 0.0f;
	if (!ev[1] || cudaEventSynchronize(ev[1]) != cudaSuccess ||
	    cudaEventElapsedTime(&ms, ev[0], ev[1]) != cudaSuccess) {
		(void)cudaGetLastError();
		return -1;
	}
	*enqueue_us = (double)enqueue_ns / 1e3;
	*gpu_us = (double)ms * 1e3;
	return 0;
}

extern "C" int gf_cuda_split_calls(void *inst)
{
	struct gf_cu_inst *in = (struct gf_cu_inst *)inst;
	if (gf_cu_pk_active(in) || gf_cu_use_device(in->dev, &in->eb))
		return -1;
	return gf_cu_split_arm(in->ev_split);
}

extern "C" int gf_cuda_last_split(void *inst, double *enqueue_us, double *gpu_us)
{
	struct gf_cu_inst *in = (struct gf_cu_inst *)inst;
	return gf_cu_split_read(in->ev_split, in->split_enqueue_ns, enqueue_us, gpu_us);
}

extern "C" unsigned gf_cuda_paths_timed(void)
{
	return __atomic_load_n(&g_paths_timed, __ATOMIC_RELAXED);
}

extern "C" const char *gf_cuda_block_path(const void *inst)
{
	const struct gf_cu_inst *in = (const struct gf_cu_inst *)inst;
	return gf_cu_path_for(in, in->max_block)->name;
}

extern "C" int gf_cuda_pinned_buffers(void)
{
	return gf_cu_pinned_count();
}

extern "C" void gf_cuda_release_hang(void *inst)
{
	struct gf_cu_inst *in = (struct gf_cu_inst *)inst;
	if (in->h_hang)
		*(volatile int *)in->h_hang = 1;
	if (in->persist)
		gf_cu_persist_hang_next(in->persist, 0);
}

extern "C" void gf_cuda_release_caches(void)
{
	gf_cu_release_caches();
}
