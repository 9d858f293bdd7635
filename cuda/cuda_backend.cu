/*
 * The CUDA backend's function table (src/backend.h): instance setup, pinned
 * staging, the copy/compute pipeline over three streams, algorithm choice by
 * measurement, priming, and the device probe.
 *
 * Pipeline: a call is cut into chunks of inst->chunk frames. Chunk k is
 * copied host->device on s_h2d, convolved on s_comp and copied back on s_d2h,
 * with events so that the upload of chunk k+1 and the download of chunk k-1
 * overlap the compute of chunk k (two staging slots). A call of one chunk
 * (every live block) goes through s_comp alone: submit enqueues one upload,
 * the kernels, one download and an event; finish polls the event until its
 * deadline (never a blocking synchronize: a hung kernel must not hang the
 * audio thread).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "cu_common.cuh"
#include "cuda_bench.h"

extern "C" {
#include "log.h"
}

#define GF_CU_CHUNK_SAMPLES (1u << 23)	 /* 32 MB a copy: GPU work outgrows the launch costs */
#define GF_CU_DIRECT_IO_SAMPLES 65536	 /* from this size on, DMA straight from pinned callers */
#define GF_CU_DIRECT_AUTO_MAX_TAPS 32768 /* beyond this direct never wins; not worth timing */

static const char *algo_str(enum gf_algo a)
{
	return a == GF_ALGO_DIRECT ? "direct" : "fft";
}

/*
 * Background start-up (gf_cu_prewarm): the driver, the runtime and the
 * device's primary context (shared by every thread of the process) come up on
 * a thread while the caller reads its configuration and taps. Every entry
 * point that talks to the driver first waits for that thread, so CUDA is
 * never entered from two threads during its initialisation.
 */
static pthread_mutex_t g_warm_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_t g_warm_thread;
static int g_warm_state; /* 0 not started, 1 running (joinable), 2 done */
static int g_warm_dev;

/*
 * A persistent kernel never finishes, so nothing may queue behind it: streams
 * share the driver's hardware work queues (8 by default), and an operation on
 * a stream that shares the kernel's queue can wait for it. So where the
 * persistent path is asked for (GPUFIR_CUDA_PERSIST set and not 0 when CUDA
 * starts), 32 queues (the most) before the context exists, unless the user
 * set a number. Not otherwise: 32 queues cost about 350 ms more to create the
 * context on the H200 (470-540 ms against 100-150 ms with 8, docs/cuda.md),
 * more than a whole CPU run of a short file.
 */
static pthread_once_t g_conn_once = PTHREAD_ONCE_INIT;
static int g_connections; /* the hardware queues the context is made with */
static void set_connections(void)
{
	const char *persist = getenv("GPUFIR_CUDA_PERSIST");
	if (persist && *persist && strcmp(persist, "0") != 0)
		setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
	const char *q = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
	g_connections = q && *q ? atoi(q) : 8;
}

static double g_warm_ms[3]; /* driver and runtime, primary context; the caller's wait (-v) */

static void *prewarm_main(void *)
{
	int n = 0;
	double t = (1e3 * gf_now_s());
	if (cudaGetDeviceCount(&n) == cudaSuccess && g_warm_dev >= 0 && g_warm_dev < n) {
		g_warm_ms[0] = (1e3 * gf_now_s()) - t;
		if (cudaSetDevice(g_warm_dev) == cudaSuccess)
			(void)cudaFree(NULL); /* creates the primary context */
		g_warm_ms[1] = (1e3 * gf_now_s()) - t - g_warm_ms[0];
	}
	(void)cudaGetLastError();
	return NULL;
}

extern "C" void gf_cu_prewarm(int gpu_index)
{
	const char *env = getenv("GPUFIR_CUDA_PREWARM");
	pthread_once(&g_conn_once, set_connections);
	if (env && strcmp(env, "0") == 0)
		return;
	pthread_mutex_lock(&g_warm_mu);
	if (g_warm_state == 0) {
		g_warm_dev = gpu_index;
		g_warm_state = pthread_create(&g_warm_thread, NULL, prewarm_main, NULL) == 0 ? 1 : 2;
	}
	pthread_mutex_unlock(&g_warm_mu);
}

extern "C" void gf_cu_prewarm_wait(void)
{
	pthread_mutex_lock(&g_warm_mu);
	if (g_warm_state == 1) {
		double t = (1e3 * gf_now_s());
		pthread_join(g_warm_thread, NULL);
		g_warm_ms[2] = (1e3 * gf_now_s()) - t;
		gf_debug("cuda: start-up in the background: driver and runtime %.1f ms, context %.1f ms "
			 "(%d hardware queues); waited %.1f ms for it",
			 g_warm_ms[0], g_warm_ms[1], g_connections, g_warm_ms[2]);
	}
	g_warm_state = 2;
	pthread_mutex_unlock(&g_warm_mu);
}

extern "C" int gf_cu_probe(int gpu_index, char *desc, uint32_t desc_len)
{
	int n = 0;
	pthread_once(&g_conn_once, set_connections);
	gf_cu_prewarm_wait();
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess) {
		(void)cudaGetLastError();
		snprintf(desc, desc_len, "no usable CUDA device: %s", cudaGetErrorString(e));
		return GF_E_NOGPU;
	}
	if (gpu_index < 0 || gpu_index >= n) {
		snprintf(desc, desc_len, "no CUDA device %d (%d present)", gpu_index, n);
		return GF_E_NOGPU;
	}
	cudaDeviceProp prop;
	int mode = cudaComputeModeDefault;
	e = cudaGetDeviceProperties(&prop, gpu_index);
	if (e == cudaSuccess)
		e = cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, gpu_index);
	if (e != cudaSuccess || mode == cudaComputeModeProhibited) {
		(void)cudaGetLastError();
		snprintf(desc, desc_len, "CUDA device %d unusable: %s", gpu_index,
			 e != cudaSuccess ? cudaGetErrorString(e) : "compute mode prohibited");
		return GF_E_NOGPU;
	}
	snprintf(desc, desc_len, "%.96s (sm_%d%d, %.0f GiB)", prop.name, prop.major, prop.minor,
		 (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
	return 0;
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

extern "C" int gf_cu_pin(void *ptr, size_t bytes)
{
	int n = 0;
	gf_cu_prewarm_wait();
	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
		(void)cudaGetLastError();
		return GF_E_NOGPU;
	}
	if (cudaHostRegister(ptr, bytes, cudaHostRegisterDefault) != cudaSuccess) {
		(void)cudaGetLastError();
		return GF_E_CUDA;
	}
	return 0;
}

/* cudaHostUnregister waits for every kernel on the device (measured, docs/cuda.md):
 * behind work that missed its deadline, or a persistent kernel, it could wait
 * for good, and work in doubt may still copy to or from the buffer. Then the
 * buffer stays registered and is the caller's to leak. */
extern "C" int gf_cu_unpin(void *ptr)
{
	if (!ptr)
		return 0;
	if (gf_cu_device_wait_may_hang())
		return 1;
	if (cudaHostUnregister(ptr) != cudaSuccess)
		(void)cudaGetLastError(); /* never pinned: fine */
	return 0;
}

/* Control thread. Only stream-ordered frees and cache returns: nothing here
 * waits for, or stalls, another instance's streams. */
static void inst_free(struct gf_cuda_inst *in)
{
	if (!in)
		return;
	struct gf_errbuf eb = {{0}};
	(void)gf_cu_use_device(in->dev, &eb);
	if (in->h_hang) /* release a hook kernel still spinning: its stream then drains at once */
		*(volatile int *)in->h_hang = 1;
	gf_pk_unregister(in);
	/* A persistent kernel that does not stop keeps the instance alive: what
	 * was retired must not be freed behind it. */
	bool kernel_runs = gf_persist_free(in->persist) != 0 || in->stuck_kernel;
	if (in->s_comp) /* this instance's own work only */
		cudaStreamSynchronize(in->s_comp);
	/* A kernel still running may write the tail's rings; an FFT tail's launcher that did not
	 * end may still launch on its side stream, reading the FFT state: each keeps what it uses. */
	if (gf_hy_free(in->hybrid, kernel_runs) != 0)
		kernel_runs = true;
	if (kernel_runs)
		gf_cu_doubt(in);
	else
		gf_cu_doubt_end(in); /* its work is done: nothing of it is in flight now */
	gf_live_free(in->live, in->s_comp);
	gf_direct_free(in->direct);
	if (!kernel_runs)
		gf_fft_free(in->fft);
	gf_cu_line_free(&in->line, in->s_comp);
	gf_cu_hfree(in->m_in);
	gf_cu_hfree(in->m_out);
	gf_cu_hfree(in->m_done);
	for (int i = 0; i < 2; i++) {
		gf_cu_hfree(in->h_in[i]);
		gf_cu_hfree(in->h_out[i]);
		gf_cu_dfree(in->d_in[i], in->s_comp);
		gf_cu_dfree(in->d_out[i], in->s_comp);
		if (in->ev_h2d[i])
			cudaEventDestroy(in->ev_h2d[i]);
		if (in->ev_comp[i])
			cudaEventDestroy(in->ev_comp[i]);
		if (in->ev_d2h[i])
			cudaEventDestroy(in->ev_d2h[i]);
	}
	if (in->ev_done)
		cudaEventDestroy(in->ev_done);
	for (int i = 0; i < 2; i++)
		if (in->ev_split[i])
			cudaEventDestroy(in->ev_split[i]);
	gf_cu_hfree(in->h_hang);
	if (in->s_h2d)
		cudaStreamDestroy(in->s_h2d);
	if (in->s_comp)
		cudaStreamDestroy(in->s_comp);
	if (in->s_d2h)
		cudaStreamDestroy(in->s_d2h);
	(void)cudaGetLastError();
	free(in);
	if (!kernel_runs)
		gf_cu_inst_end();
}

/* Small FFT calls read their input from and write their output to host-mapped staging. */
static bool small_call(const struct gf_cuda_inst *in, uint32_t frames)
{
	return frames <= in->chunk && (size_t)frames * in->channels < GF_CU_DIRECT_IO_SAMPLES;
}

static int alloc_io(struct gf_cuda_inst *in, struct gf_errbuf *eb)
{
	size_t bytes = (size_t)in->chunk * in->channels * sizeof(float);
	int lo = 0, hi = 0;
	CU_RET(eb, cudaDeviceGetStreamPriorityRange(&lo, &hi));
	CU_RET(eb, cudaStreamCreateWithFlags(&in->s_h2d, cudaStreamNonBlocking));
	/* live blocks run on s_comp: ahead of other instances' set-up and calibration */
	CU_RET(eb, cudaStreamCreateWithPriority(&in->s_comp, cudaStreamNonBlocking, hi));
	CU_RET(eb, cudaStreamCreateWithFlags(&in->s_d2h, cudaStreamNonBlocking));
	CU_RET(eb, cudaEventCreateWithFlags(&in->ev_done, cudaEventDisableTiming));
	for (int i = 0; i < 2; i++) {
		CU_RET(eb, cudaEventCreateWithFlags(&in->ev_h2d[i], cudaEventDisableTiming));
		CU_RET(eb, cudaEventCreateWithFlags(&in->ev_comp[i], cudaEventDisableTiming));
		CU_RET(eb, cudaEventCreateWithFlags(&in->ev_d2h[i], cudaEventDisableTiming));
		GF_RET(gf_cu_halloc((void **)&in->h_in[i], bytes, cudaHostAllocDefault, eb));
		GF_RET(gf_cu_halloc((void **)&in->h_out[i], bytes, cudaHostAllocDefault, eb));
		GF_RET(gf_cu_dmalloc((void **)&in->d_in[i], bytes, in->s_comp, eb));
		GF_RET(gf_cu_dmalloc((void **)&in->d_out[i], bytes, in->s_comp, eb));
		memset(in->h_in[i], 0, bytes);
		CU_RET(eb, cudaMemsetAsync(in->d_in[i], 0, bytes, in->s_comp));
	}
	if (small_call(in, in->chunk) && (size_t)in->chunk * in->channels <= GF_CU_MAPPED_SAMPLES) {
		size_t words = (size_t)(in->chunk * in->channels + 255) / 256 * sizeof(unsigned);
		GF_RET(gf_cu_halloc((void **)&in->m_in, bytes, cudaHostAllocMapped, eb));
		GF_RET(gf_cu_halloc((void **)&in->m_out, bytes, cudaHostAllocMapped, eb));
		GF_RET(gf_cu_halloc((void **)&in->m_done, words, cudaHostAllocMapped, eb));
		memset(in->m_in, 0, bytes);
		memset(in->m_done, 0, words);
	}
	return 0;
}

/* Enqueue one chunk already in d_in on s: line update, convolution into d_out
 * (none when priming). Advances the stream position. */
static int run_chunk(struct gf_cuda_inst *in, const float *d_in, float *d_out, uint32_t frames,
		     cudaStream_t s, struct gf_errbuf *eb)
{
	int64_t j0;
	bool zero = d_out && in->algo == GF_ALGO_DIRECT && gf_direct_needs_zero(in->direct, frames);
	bool fft = in->algo == GF_ALGO_FFT;
	int err = gf_cu_line_append(&in->line, in->channels, d_in, frames, fft, zero ? d_out : NULL, s, eb,
				    &j0);
	if (!err) {
		if (!fft)
			err = d_out ? gf_direct_run(in->direct, in, j0, frames, d_out, s, eb) : 0;
		else
			err = gf_fft_run(in->fft, in, d_in, j0, frames, d_out, s, eb);
	}
	if (!err)
		in->line.pos += frames;
	return err;
}

static int reset_state(struct gf_cuda_inst *in, struct gf_errbuf *eb)
{
	int err = in->hybrid ? gf_hy_reset(in->hybrid, in, eb) : 0;
	if (!err)
		err = gf_cu_line_reset(&in->line, in->channels, in->s_comp, eb);
	if (!err && in->fft)
		err = gf_fft_reset(in->fft, in, in->s_comp, eb);
	if (!err && in->live)
		err = gf_live_reset(in->live, in->s_comp, eb);
	return err;
}

extern "C" int gf_cuda_time_calls(void *inst, uint32_t frames, int reps, double *ms_per_call,
				  double *host_ms_per_call)
{
	struct gf_cuda_inst *in = (struct gf_cuda_inst *)inst;
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
		err = run_chunk(in, in->d_in[0], in->d_out[0], frames, in->s_comp, eb);
	if (err || (err = CU_TRY(eb, cudaEventRecord(a, in->s_comp))))
		goto out;
	{
		struct timespec h0, h1;
		clock_gettime(CLOCK_MONOTONIC, &h0);
		for (int i = 0; i < reps && !err; i++)
			err = run_chunk(in, in->d_in[0], in->d_out[0], frames, in->s_comp, eb);
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

static int process_call(struct gf_cuda_inst *in, const float *inp, float *outp, uint32_t frames);

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Median wall time (ns) of a whole call of @p frames frames of silence, paced
 * 1 ms apart like live blocks: back to back, a path of several launches
 * overlaps its host work with the previous call's and looks cheaper than it
 * is when the GPU has been idle for a period. */
static int time_round_trip(struct gf_cuda_inst *in, uint32_t frames, double *ns)
{
	enum { WARM = 3, REPS = 11 };
	const struct timespec gap = {0, 1000000};
	size_t n = (size_t)frames * in->channels;
	float *x = (float *)calloc(n, sizeof(float)), *y = (float *)malloc(n * sizeof(float));
	uint64_t t[REPS];
	int err = x && y ? 0 : GF_E_NOMEM;
	for (int i = 0; i < WARM + REPS && !err; i++) {
		nanosleep(&gap, NULL);
		uint64_t a = gf_now_ns();
		err = process_call(in, x, y, frames);
		if (i >= WARM)
			t[i - WARM] = gf_now_ns() - a;
	}
	if (!err) {
		qsort(t, REPS, sizeof(t[0]), cmp_u64);
		*ns = (double)t[REPS / 2];
	}
	free(x);
	free(y);
	return err;
}

/* AUTO: time both algorithms on a call of this instance's typical size and
 * keep the faster: whole round trips where the fused per-block path would
 * run (it and the FFT path differ in more than device time), device time
 * otherwise. Control thread; a few milliseconds; the result is kept for
 * later instances of the same shape (gf_cu_calib_store). */
static int calibrate(struct gf_cuda_inst *in, struct gf_errbuf *eb)
{
	uint32_t frames = in->max_block < in->chunk ? in->max_block : in->chunk;
	int reps = 5;
	double t_direct = 0.0, t_fft = 0.0;
	in->algo = GF_ALGO_DIRECT;
	int err = in->live ? time_round_trip(in, frames, &t_direct)
			   : gf_cuda_time_calls(in, frames, reps, &t_direct, NULL);
	if (!err) {
		in->algo = GF_ALGO_FFT;
		err = in->live ? time_round_trip(in, frames, &t_fft)
			       : gf_cuda_time_calls(in, frames, reps, &t_fft, NULL);
	}
	if (!err)
		err = CU_TRY(&in->eb, cudaStreamSynchronize(in->s_comp));
	if (err) {
		gf_errbuf_set(eb, "%s", in->eb.msg);
		return err;
	}
	in->algo = t_direct <= t_fft ? GF_ALGO_DIRECT : GF_ALGO_FFT;
	gf_debug("cuda: calibration, %u taps x %u ch, calls of %u frames: direct%s %.1f us, fft %.1f us (%s)",
		 in->taps, in->channels, frames, in->live ? " (fused, round trip)" : "",
		 in->live ? t_direct / 1e3 : t_direct * 1e3, in->live ? t_fft / 1e3 : t_fft * 1e3,
		 algo_str(in->algo));
	gf_cu_calib_store(in->dev, in->channels, in->max_block, in->taps, in->algo == GF_ALGO_DIRECT);
	if (in->algo == GF_ALGO_DIRECT) {
		gf_fft_free(in->fft);
		in->fft = NULL;
	} else {
		gf_live_free(in->live, in->s_comp);
		in->live = NULL;
		gf_direct_free(in->direct);
		in->direct = NULL;
	}
	return 0;
}

static unsigned g_paths_timed; /* gf_cuda_paths_timed */

/* GPUFIR_CUDA_LIVE unset or auto: the fused path's measured choice for this shape,
 * -1 not measured yet (pick_live measures it), 0 staged, 1 fused; set: 1. */
static int live_choice(const struct gf_cuda_inst *in)
{
	if (gf_live_mode() != GF_LIVE_AUTO)
		return 1;
	return gf_cu_choice_lookup(GF_CU_CHOICE_FUSED, in->dev, in->channels, in->max_block,
				   gf_direct_taps_pad(in->direct));
}

/*
 * GPUFIR_CUDA_LIVE unset or auto, a shape not measured yet: time whole round
 * trips of max_block frames on the fused path and on the staged one (paced,
 * as live blocks are) and keep the faster. The fused kernel costs one launch
 * per block and no copies; where a launch costs more than the copies, the
 * staged path wins. Control thread, before the instance is published; about
 * 30 ms, once per shape (gf_cu_choice_store). The state is reset after.
 */
static int pick_live(struct gf_cuda_inst *in, struct gf_errbuf *eb)
{
	if (!in->live || live_choice(in) >= 0)
		return 0;
	__atomic_add_fetch(&g_paths_timed, 1u, __ATOMIC_RELAXED);
	double t_fused = 0.0, t_staged = 0.0;
	int err = time_round_trip(in, in->max_block, &t_fused);
	struct gf_cu_live *l = in->live;
	in->live = NULL;
	if (!err)
		err = time_round_trip(in, in->max_block, &t_staged);
	in->live = l;
	if (err) {
		gf_errbuf_set(eb, "%s", in->eb.msg);
		return err;
	}
	int keep = t_fused < t_staged;
	gf_debug("cuda: live path, %u taps x %u ch, blocks of %u: fused %.1f us, staged %.1f us (%s)",
		 in->taps, in->channels, in->max_block, t_fused / 1e3, t_staged / 1e3, keep ? "fused" : "staged");
	gf_cu_choice_store(GF_CU_CHOICE_FUSED, in->dev, in->channels, in->max_block,
			   gf_direct_taps_pad(in->direct), keep);
	if (!keep) {
		gf_live_free(in->live, in->s_comp);
		in->live = NULL;
	}
	return 0;
}

/* Frames of the largest chunk before it is fitted to the FFT hop (power of two). */
static uint32_t chunk_cap(uint32_t channels)
{
	uint32_t c = GF_CU_CHUNK_SAMPLES / channels;
	uint32_t p = 1024;
	while (p * 2 <= c)
		p *= 2;
	return p;
}

static uint32_t pick_chunk(uint32_t channels, uint32_t max_block, uint32_t hop)
{
	uint32_t p = chunk_cap(channels);
	if (hop > p)
		p = hop;
	return max_block < p ? max_block : p;
}

/* GPUFIR_CUDA_HANG_AFTER: a kernel that spins on a host-mapped flag nobody
 * sets, bounded by the GPU clock to a few seconds so the device recovers. */
__global__ void hang_kernel(const volatile int *flag, long long cycles)
{
	long long t0 = clock64();
	while (!*flag && clock64() - t0 < cycles) {
	}
}

static int hang_hook_init(struct gf_cuda_inst *in, struct gf_errbuf *eb)
{
	int khz = 0;
	CU_RET(eb, cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, in->dev));
	in->hang_cycles = (long long)(khz > 0 ? khz : 2000000) * 1000 * 3; /* 3 s */
	GF_RET(gf_cu_halloc((void **)&in->h_hang, sizeof(int), cudaHostAllocMapped, eb));
	*in->h_hang = 0;
	CU_RET(eb, cudaHostGetDevicePointer((void **)&in->d_hang, in->h_hang, 0));
	gf_warn("cuda: test hook GPUFIR_CUDA_HANG_AFTER=%ld: call %ld will hang for about 3 s",
		in->hang_after, in->hang_after + 1);
	return 0;
}

/* Stop the instance's persistent kernel: the staged path runs. */
/* Free an FFT instance's tail. A launcher thread that did not end may still read in->fft:
 * the instance then keeps it as it keeps a stuck kernel's buffers (inst_free). */
static void drop_hybrid(struct gf_cuda_inst *in)
{
	if (gf_hy_free(in->hybrid, in->stuck_kernel) != 0) {
		in->stuck_kernel = 1;
		gf_cu_doubt(in);
	}
	in->hybrid = NULL;
}

static void drop_persist(struct gf_cuda_inst *in)
{
	in->stuck_kernel = gf_persist_free(in->persist) != 0;
	if (in->stuck_kernel)
		gf_cu_doubt(in);
	in->persist = NULL;
	drop_hybrid(in);
}

/*
 * CUDA loads a kernel's code at its first launch (lazy loading), and that load
 * may wait for every kernel on the device: behind a resident persistent kernel
 * it never ends. So before the kernel starts, the launched path (fused or
 * staged) runs once (its kernels and cuFFT's are loaded; the handover goes on
 * there), the kernels it may need later are loaded, and the state is reset.
 */
static int warm_staged(struct gf_cuda_inst *in, struct gf_errbuf *eb)
{
	size_t n = (size_t)in->max_block * in->channels;
	float *x = (float *)calloc(n, sizeof(float)), *y = (float *)malloc(n * sizeof(float));
	int err = x && y ? process_call(in, x, y, in->max_block) : GF_E_NOMEM;
	free(x);
	free(y);
	gf_cu_line_preload();
	if (in->fft)
		gf_fft_preload();
	if (in->live) /* a prime, or the calls after a handover, launch them beside the kernel */
		gf_live_preload();
	if (!err)
		err = reset_state(in, eb);
	if (!err)
		err = CU_TRY(eb, cudaStreamSynchronize(in->s_comp));
	if (err && in->eb.msg[0] && !eb->msg[0])
		gf_errbuf_set(eb, "%s", in->eb.msg);
	return err;
}

/* Start the kernel: a direct instance's taps, or an FFT instance's head with its tail (cu_hybrid.cu). */
static int start_persist(struct gf_cuda_inst *in, const struct gf_filter_set *fs, struct gf_errbuf *eb)
{
	if (in->algo == GF_ALGO_DIRECT)
		return gf_persist_new(&in->persist, in, gf_direct_taps(in->direct), gf_direct_taps_pad(in->direct),
				      NULL, eb);
	int err = gf_hy_new(&in->hybrid, in, fs, eb);
	if (!err) {
		struct gf_persist_rings rings;
		uint32_t tp = 0;
		const float *taps = gf_hy_head_taps(in->hybrid, &tp, &rings);
		err = gf_persist_new(&in->persist, in, taps, tp, &rings, eb);
	}
	if (err)
		drop_hybrid(in);
	return err;
}

/* Keep the kernel where a later build can ask it to step aside (cu_handover.cu). */
static void keep_persist(struct gf_cuda_inst *in)
{
	if (gf_pk_register(in) != 0) {
		gf_debug("cuda: persistent kernel not used: too many resident in this process");
		drop_persist(in);
	}
}

/*
 * The persistent kernel or the staged path for a direct instance's live
 * blocks, or an FFT instance's whose first two partitions it can hold (the
 * rest runs a segment ahead beside it, cu_hybrid.cu). Opt-in (docs/cuda.md):
 * it needs the context's 32 hardware queues
 * and keeps its SMs busy; a later build on the device makes it hand over to
 * the launched path first (cu_handover.cu). GPUFIR_CUDA_PERSIST=1 takes it
 * wherever it fits; GPUFIR_CUDA_PERSIST=auto times it against the path
 * launched per block (fused or staged, pick_live) on whole round trips of
 * max_block frames and keeps the faster (per shape, so a second instance
 * of the same shape measures nothing); unset or 0: the launched path. Control
 * thread, before the instance is published.
 */
static int pick_persist(struct gf_cuda_inst *in, const struct gf_filter_set *fs, struct gf_errbuf *eb)
{
	const char *env = getenv("GPUFIR_CUDA_PERSIST");
	int force = !env || !*env || strcmp(env, "0") == 0 ? 0 : strcmp(env, "auto") == 0 ? -1 : 1;
	const bool direct = in->algo == GF_ALGO_DIRECT && in->direct;
	if ((!direct && !(in->algo == GF_ALGO_FFT && gf_hy_fits(in))) || force == 0)
		return 0;
	pthread_once(&g_conn_once, set_connections);
	if (g_connections < 32) { /* a queue shared with the kernel could stall another stream */
		gf_debug("cuda: persistent kernel not used: the context has %d hardware queues, not 32 "
			 "(set GPUFIR_CUDA_PERSIST before CUDA starts, or CUDA_DEVICE_MAX_CONNECTIONS=32)",
			 g_connections);
		return 0;
	}
	uint32_t tp = direct ? gf_direct_taps_pad(in->direct) : 2 * gf_fft_partition(in->fft);
	if (!gf_persist_fits(in->dev, in->channels, tp, in->max_block))
		return 0;
	/* The choice is kept per shape: an FFT instance's by its whole filter, longer than any direct one's. */
	uint32_t key = direct ? tp : in->taps;
	int known = force < 0 ? gf_cu_choice_lookup(GF_CU_CHOICE_PERSIST, in->dev, in->channels,
						    in->max_block, key)
			      : 1;
	if (known == 0)
		return 0;
	struct gf_errbuf peb = {{0}};
	int err = warm_staged(in, eb);
	if (err)
		return err;
	err = start_persist(in, fs, &peb);
	if (err) { /* the staged path stays; a broken device shows there too */
		gf_debug("cuda: persistent kernel not used: %s", peb.msg);
		in->persist = NULL;
		return 0;
	}
	if (known == 1) {
		keep_persist(in);
		return 0;
	}
	double t_persist = 0.0, t_staged = 0.0;
	__atomic_add_fetch(&g_paths_timed, 1u, __ATOMIC_RELAXED);
	err = time_round_trip(in, in->max_block, &t_persist);
	struct gf_cu_persist *p = in->persist;
	in->persist = NULL;
	if (!err)
		err = time_round_trip(in, in->max_block, &t_staged);
	in->persist = p;
	if (!err)
		err = reset_state(in, eb);
	if (!err)
		err = CU_TRY(eb, cudaStreamSynchronize(in->s_comp));
	if (!err)
		err = gf_persist_load(in->persist, 0, 0, gf_now_ns() + GF_CU_WAIT_NS, eb);
	if (err) {
		if (in->eb.msg[0] && !eb->msg[0])
			gf_errbuf_set(eb, "%s", in->eb.msg);
		return err;
	}
	int keep = t_persist < t_staged;
	const char *launched = in->live ? "fused" : "staged";
	gf_debug("cuda: live path, %u taps x %u ch, blocks of %u: persistent %.1f us, %s %.1f us (%s)",
		 in->taps, in->channels, in->max_block, t_persist / 1e3, launched, t_staged / 1e3,
		 keep ? "persistent" : launched);
	gf_cu_choice_store(GF_CU_CHOICE_PERSIST, in->dev, in->channels, in->max_block, key, keep);
	if (keep)
		keep_persist(in);
	else
		drop_persist(in);
	return 0;
}

/* Which algorithms, FFT shape, staging chunk and line history an instance for
 * @p p and @p taps taps will have (cu_create builds it; cu_check_memory sizes it). */
static void plan_instance(const struct gf_engine_params *p, uint32_t taps, struct gf_cu_plan *pl)
{
	pl->direct =
		p->algo == GF_ALGO_DIRECT || (p->algo == GF_ALGO_AUTO && taps <= GF_CU_DIRECT_AUTO_MAX_TAPS);
	pl->fft = p->algo != GF_ALGO_DIRECT;
	if (p->algo == GF_ALGO_AUTO && pl->direct) { /* an earlier calibration may settle it */
		uint32_t direct_max, fft_min;
		gf_cu_calib_lookup(p->gpu_index, p->channels, p->max_block, &direct_max, &fft_min);
		if (taps <= direct_max)
			pl->fft = false;
		else if (taps >= fft_min)
			pl->direct = false;
	}
	pl->shape = (struct gf_fft_shape){0, 0, 0, 0};
	if (pl->fft)
		gf_fft_pick_shape(taps, p->max_block, chunk_cap(p->channels), &pl->shape);
	pl->chunk = pick_chunk(p->channels, p->max_block, pl->shape.B);
	pl->keep = pl->direct ? (int64_t)taps - 1 : 0;
	pl->live_frames = 0;
	if (pl->direct && gf_live_mode() != GF_LIVE_OFF && gf_live_fits(p->channels, taps, p->max_block))
		pl->live_frames = p->max_block;
	if (pl->fft && (int64_t)gf_fft_keep(&pl->shape) > pl->keep)
		pl->keep = gf_fft_keep(&pl->shape);
}

/* backend.h check_memory: the estimate against the device's free memory, before any allocation. */
static int cu_check_memory(const struct gf_engine_params *p, uint32_t taps, struct gf_errbuf *eb)
{
	char why[160];
	if (p->channels < 1 || p->max_block < 1 || taps < 1)
		return 0; /* create() reports the parameters */
	int err = gf_cu_probe(p->gpu_index, why, sizeof(why));
	if (err) {
		gf_errbuf_set(eb, "cuda: %s", why);
		return err;
	}
	struct gf_cu_plan pl;
	plan_instance(p, taps, &pl);
	if ((err = gf_cu_use_device(p->gpu_index, eb)) || (err = gf_cu_pool_init(p->gpu_index, eb)))
		return err;
	return gf_cu_check_memory(p->gpu_index, &pl, p->channels, taps, eb);
}

static int cu_create(const struct gf_engine_params *p, const struct gf_filter_set *fs, void **out,
		     struct gf_errbuf *eb)
{
	char why[160];
	*out = NULL;
	if (!fs || fs->channels != p->channels || fs->taps < 1 || p->max_block < 1 || p->channels < 1) {
		gf_errbuf_set(eb, "cuda: invalid parameters (channels %u/%u, taps %u, max_block %u)",
			      fs ? fs->channels : 0, p->channels, fs ? fs->taps : 0, p->max_block);
		return GF_E_INVAL;
	}
	int err = gf_cu_probe(p->gpu_index, why, sizeof(why));
	if (err) {
		gf_errbuf_set(eb, "cuda: %s", why);
		return err;
	}
	struct gf_cuda_inst *in = (struct gf_cuda_inst *)calloc(1, sizeof(*in));
	if (!in) {
		gf_errbuf_set(eb, "cuda: out of host memory");
		return GF_E_NOMEM;
	}
	gf_cu_inst_begin(); /* inst_free ends it */
	in->dev = p->gpu_index;
	in->channels = p->channels;
	in->taps = fs->taps;
	in->max_block = p->max_block;
	const char *fa = getenv("GPUFIR_CUDA_FAIL_AFTER");
	in->fail_after = fa && *fa ? strtol(fa, NULL, 10) : -1;
	const char *ha = getenv("GPUFIR_CUDA_HANG_AFTER");
	in->hang_after = ha && *ha ? strtol(ha, NULL, 10) : -1;
	const char *hw = getenv("GPUFIR_CUDA_HANG_WHERE");
	in->hang_tail = hw && strcmp(hw, "tail") == 0;

	struct gf_cu_plan pl;
	plan_instance(p, fs->taps, &pl);
	bool want_direct = pl.direct, want_fft = pl.fft;
	struct gf_fft_shape shape = pl.shape;
	in->chunk = pl.chunk;
	int64_t keep = pl.keep;
	in->algo = want_direct ? GF_ALGO_DIRECT : GF_ALGO_FFT;

	double t[6];
	t[0] = (1e3 * gf_now_s());
	/* cudaSetDevice creates the context (CUDA 12+) when the probe did not.
	 * A resident persistent kernel first hands over to the staged path:
	 * building beside it could wait for it for good. */
	if ((err = gf_cu_use_device(in->dev, eb)) || (err = gf_pk_step_aside(in->dev, eb)) ||
	    (err = gf_cu_pool_init(in->dev, eb)) ||
	    (err = gf_cu_check_memory(in->dev, &pl, in->channels, in->taps, eb)))
		goto fail;
	t[1] = (1e3 * gf_now_s());
	if (in->hang_after >= 0 && (err = hang_hook_init(in, eb)))
		goto fail;
	snprintf(in->desc, sizeof(in->desc), "%s", why); /* the probe's description of the device */
	if ((err = alloc_io(in, eb)) ||
	    (err = gf_cu_line_init(&in->line, in->channels, keep, in->chunk, in->s_comp, eb)) ||
	    (err = gf_cu_line_reset(&in->line, in->channels, in->s_comp, eb)))
		goto fail;
	t[2] = (1e3 * gf_now_s());
	if (want_direct && (err = gf_direct_new(&in->direct, in, fs, eb)))
		goto fail;
	/* the fused path where it fits and GPUFIR_CUDA_LIVE allows it, unless measured slower */
	if (want_direct && pl.live_frames && live_choice(in) != 0 && (err = gf_live_new(&in->live, in, eb)))
		goto fail;
	t[3] = (1e3 * gf_now_s());
	if (want_fft && (err = gf_fft_new(&in->fft, in, fs, &shape, eb)))
		goto fail;
	t[4] = (1e3 * gf_now_s());
	if (want_direct && ((err = pick_live(in, eb)) || (want_fft && (err = calibrate(in, eb)))))
		goto fail;
	/* This instance's streams only: a device-wide synchronize would wait for
	 * (and stall) the instance that is streaming while this one is built. */
	if ((err = reset_state(in, eb)) || (err = CU_TRY(eb, cudaStreamSynchronize(in->s_comp))) ||
	    (err = pick_persist(in, fs, eb)))
		goto fail;
	t[5] = (1e3 * gf_now_s());
	gf_debug("cuda: %s, %u taps x %u ch, block %u, chunk %u: %s%s%s; setup ms: context %.1f, staging "
		 "%.1f, "
		 "direct %.1f, fft %.1f (hop %u, size %u), calibration %.1f",
		 in->desc, in->taps, in->channels, in->max_block, in->chunk, algo_str(in->algo),
		 in->direct
			 ? (gf_direct_where(in->direct)[0] == 'c' ? " (constant memory)" : " (global memory)")
			 : "",
		 in->hybrid    ? ", persistent kernel for the head, FFT tail beside it"
		 : in->persist ? ", persistent kernel"
		 : in->live    ? ", fused per-block path"
			       : "",
		 t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3], in->fft ? gf_fft_partition(in->fft) : 0,
		 in->fft ? gf_fft_size(in->fft) : 0, t[5] - t[4]);
	/* the status and the log say which path live blocks take */
	snprintf(in->desc + strlen(in->desc), sizeof(in->desc) - strlen(in->desc), "; live blocks: %s",
		 gf_cuda_block_path(in));
	*out = in;
	return 0;
fail:
	inst_free(in);
	return err;
}

static int wait_event(struct gf_cuda_inst *in, cudaEvent_t ev, uint64_t deadline_ns);
#define PRIME_STEP_DEADLINE_NS 2000000000ull /* a hung GPU must not hold the caller */

/* Wait for everything enqueued on s_comp so far, within PRIME_STEP_DEADLINE_NS. */
static int drain_comp(struct gf_cuda_inst *in)
{
	CU_RET(&in->eb, cudaEventRecord(in->ev_done, in->s_comp));
	return wait_event(in, in->ev_done, gf_now_ns() + PRIME_STEP_DEADLINE_NS);
}

/* Load the newest taps-1 history frames into the state without producing
 * output, batched: one upload, then the line (and the fused path's ring)
 * filled by one kernel and the FFT's spectra by one gather and one batched
 * R2C a pass, then one bounded wait. Stream-ordered temporary device memory.
 * The engine calls it on the control thread (the audio thread only as a last
 * resort). The upload is from pageable memory: the driver stages it and
 * waits for this instance's stream (new, idle) first. */
static int prime_call(struct gf_cuda_inst *in, const float *history, uint32_t frames)
{
	struct gf_errbuf *eb = &in->eb;
	uint32_t n = frames < in->taps - 1 ? frames : in->taps - 1;
	const float *src = history + (size_t)(frames - n) * in->channels;
	cudaStream_t s = in->s_comp;
	float *d_hist = NULL;
	int err = gf_cu_use_device(in->dev, eb);
	/* The kernel is held for the prime as for a call (a step-aside waits). */
	int pk = !err && in->persist ? gf_pk_take(in) : 0;
	if (pk < 0)
		return GF_E_BUSY;
	if (!err)
		err = reset_state(in, eb);
	if (!err && n > 0) {
		size_t bytes = (size_t)n * in->channels * sizeof(float);
		err = gf_cu_dmalloc((void **)&d_hist, bytes, s, eb);
		if (!err)
			err = CU_TRY(eb, cudaMemcpyAsync(d_hist, src, bytes, cudaMemcpyHostToDevice, s));
		if (!err)
			err = gf_cu_line_load(&in->line, in->channels, d_hist, n, s, eb);
		if (!err && in->fft)
			err = gf_fft_prime(in->fft, in, d_hist, n, s, eb);
		if (!err && in->live)
			err = gf_live_load(in->live, d_hist, n, s, eb);
		uint32_t staged = 0; /* the kernel loads its own buffer once the copy is done */
		if (!err && pk)
			err = gf_persist_stage(in->persist, d_hist, n, s, &staged, eb);
		if (!err && pk && in->hybrid)
			err = gf_hy_prime(in->hybrid, in, d_hist, n, eb);
		if (!err && pk)
			err = drain_comp(in);
		if (!err && pk)
			err = gf_persist_load(in->persist, staged, n, gf_now_ns() + PRIME_STEP_DEADLINE_NS,
					      eb);
		gf_cu_dfree(d_hist, s);
	} else if (!err && pk) {
		err = gf_persist_load(in->persist, 0, 0, gf_now_ns() + PRIME_STEP_DEADLINE_NS, eb);
	}
	if (pk)
		err = gf_pk_end_call(in, err, gf_now_ns() + PRIME_STEP_DEADLINE_NS);
	return err ? err : drain_comp(in);
}

/* A missed deadline leaves the instance's work in flight: from then on host
 * memory it may still reach is never unregistered (gf_cu_unpin). */
static int cu_prime(void *inst, const float *history, uint32_t frames)
{
	struct gf_cuda_inst *in = (struct gf_cuda_inst *)inst;
	int err = prime_call(in, history, frames);
	if (err == GF_E_TIMEOUT)
		gf_cu_doubt(in);
	return err;
}

/* A small FFT call through host-mapped staging: the kernels read the input
 * from and write the output to host memory (no copies), the last one writes
 * completion words that finish polls. */
static int submit_mapped(struct gf_cuda_inst *in, const float *inp, uint32_t frames)
{
	memcpy(in->m_in, inp, (size_t)frames * in->channels * sizeof(float));
	unsigned seq = ++in->seq;
	in->sub_words = gf_fft_set_done(in->fft, in->m_done, seq, frames);
	int err = run_chunk(in, in->m_in, in->m_out, frames, in->s_comp, &in->eb);
	if (err)
		gf_fft_set_done(in->fft, NULL, 0, 0);
	return err;
}

/*
 * Poll @p ev until it has completed or @p deadline_ns (CLOCK_MONOTONIC) has
 * passed: never a blocking synchronize, which waits forever on a hung
 * kernel. Yields for the first SPIN_NS (a live block's round trip is tens of
 * microseconds), then sleeps in short steps.
 */
#define WAIT_SPIN_NS 250000u
#define WAIT_STEP_NS 20000
static int wait_event(struct gf_cuda_inst *in, cudaEvent_t ev, uint64_t deadline_ns)
{
	uint64_t t0 = gf_now_ns();
	for (;;) {
		cudaError_t e = cudaEventQuery(ev);
		if (e == cudaSuccess)
			return 0;
		if (e != cudaErrorNotReady) {
			(void)cudaGetLastError();
			gf_errbuf_set(&in->eb, "cuda: %s", cudaGetErrorString(e));
			return GF_E_CUDA;
		}
		uint64_t now = gf_now_ns();
		if (now >= deadline_ns) {
			gf_errbuf_set(&in->eb, "cuda: work still in flight at the deadline");
			return GF_E_TIMEOUT;
		}
		if (now - t0 < WAIT_SPIN_NS) {
			sched_yield();
		} else {
			struct timespec ts = {0, WAIT_STEP_NS};
			nanosleep(&ts, NULL);
		}
	}
}

/* One chunk on s_comp alone: the low-latency path of every live block. Enqueues
 * upload, kernels and download; finish waits for ev_done. */
static int submit_single(struct gf_cuda_inst *in, const float *inp, uint32_t frames)
{
	struct gf_errbuf *eb = &in->eb;
	size_t bytes = (size_t)frames * in->channels * sizeof(float);
	memcpy(in->h_in[0], inp, bytes);
	CU_RET(eb, cudaMemcpyAsync(in->d_in[0], in->h_in[0], bytes, cudaMemcpyHostToDevice, in->s_comp));
	int err = run_chunk(in, in->d_in[0], in->d_out[0], frames, in->s_comp, eb);
	if (err)
		return err;
	CU_RET(eb, cudaMemcpyAsync(in->h_out[0], in->d_out[0], bytes, cudaMemcpyDeviceToHost, in->s_comp));
	CU_RET(eb, cudaEventRecord(in->ev_done, in->s_comp));
	return 0;
}

/* Enqueue chunk k (slot k&1) on the three streams. With @p direct_io the
 * caller's memory is pinned: DMA straight from and to it, no staging copies. */
static int enqueue_chunk(struct gf_cuda_inst *in, const float *inp, float *outp, uint32_t k, uint32_t f,
			 bool direct_io, uint64_t deadline_ns)
{
	struct gf_errbuf *eb = &in->eb;
	int s = k & 1;
	size_t bytes = (size_t)f * in->channels * sizeof(float);
	const float *src = inp;
	if (!direct_io) {
		int err = k >= 2 ? wait_event(in, in->ev_h2d[s], deadline_ns) : 0;
		if (err) /* upload of chunk k-2 not done: its pinned slot is not free */
			return err;
		memcpy(in->h_in[s], inp, bytes);
		src = in->h_in[s];
	}
	if (k >= 2) /* compute of chunk k-2 has finished reading d_in[s] */
		CU_RET(eb, cudaStreamWaitEvent(in->s_h2d, in->ev_comp[s], 0));
	CU_RET(eb, cudaMemcpyAsync(in->d_in[s], src, bytes, cudaMemcpyHostToDevice, in->s_h2d));
	CU_RET(eb, cudaEventRecord(in->ev_h2d[s], in->s_h2d));
	CU_RET(eb, cudaStreamWaitEvent(in->s_comp, in->ev_h2d[s], 0));
	if (k >= 2) /* download of chunk k-2 has emptied d_out[s] */
		CU_RET(eb, cudaStreamWaitEvent(in->s_comp, in->ev_d2h[s], 0));
	int err = run_chunk(in, in->d_in[s], in->d_out[s], f, in->s_comp, eb);
	if (err)
		return err;
	CU_RET(eb, cudaEventRecord(in->ev_comp[s], in->s_comp));
	CU_RET(eb, cudaStreamWaitEvent(in->s_d2h, in->ev_comp[s], 0));
	CU_RET(eb, cudaMemcpyAsync(direct_io ? outp : in->h_out[s], in->d_out[s], bytes,
				   cudaMemcpyDeviceToHost, in->s_d2h));
	CU_RET(eb, cudaEventRecord(in->ev_d2h[s], in->s_d2h));
	return 0;
}

static int finish_chunk(struct gf_cuda_inst *in, float *outp, uint32_t k, uint32_t f, bool direct_io,
			uint64_t deadline_ns)
{
	int s = k & 1;
	int err = wait_event(in, in->ev_d2h[s], deadline_ns);
	if (err)
		return err;
	if (!direct_io)
		memcpy(outp, in->h_out[s], (size_t)f * in->channels * sizeof(float));
	return 0;
}

/* Page-locked (cudaHostAlloc or gf_cuda_pin) at both ends of the range? */
static bool is_pinned(const void *p, size_t bytes)
{
	cudaPointerAttributes a, b;
	if (cudaPointerGetAttributes(&a, p) != cudaSuccess ||
	    cudaPointerGetAttributes(&b, (const char *)p + bytes - 1) != cudaSuccess) {
		(void)cudaGetLastError();
		return false;
	}
	return a.type == cudaMemoryTypeHost && b.type == cudaMemoryTypeHost;
}

static int process_pipelined(struct gf_cuda_inst *in, const float *inp, float *outp, uint32_t frames,
			     uint64_t deadline_ns)
{
	const uint32_t ch = in->chunk, C = in->channels;
	const uint32_t nk = (frames + ch - 1) / ch;
	const size_t bytes = (size_t)frames * C * sizeof(float);
	const bool dio = is_pinned(inp, bytes) && is_pinned(outp, bytes);
	int err = 0;
	for (uint32_t k = 0; k < nk && !err; k++) {
		uint32_t f = k + 1 < nk ? ch : frames - k * ch;
		err = enqueue_chunk(in, inp + (size_t)k * ch * C, outp + (size_t)k * ch * C, k, f, dio,
				    deadline_ns);
		/* The output of k-1 is copied out only after chunk k's input was
		 * staged: in and out may alias. */
		if (!err && k >= 1)
			err = finish_chunk(in, outp + (size_t)(k - 1) * ch * C, k - 1, ch, dio, deadline_ns);
	}
	if (!err)
		err = finish_chunk(in, outp + (size_t)(nk - 1) * ch * C, nk - 1, frames - (nk - 1) * ch, dio,
				   deadline_ns);
	/* Leave nothing in flight that still reads the staging buffers, except
	 * after a missed deadline: the instance is abandoned, a synchronize could
	 * block for good. */
	if (err && err != GF_E_TIMEOUT) {
		cudaStreamSynchronize(in->s_h2d);
		cudaStreamSynchronize(in->s_comp);
		cudaStreamSynchronize(in->s_d2h);
		(void)cudaGetLastError();
	}
	return err;
}

/* Which path a call takes: live blocks of the direct algorithm the fused
 * kernel; small FFT calls mapped staging; other small calls one staging copy
 * each way (cheaper than asking the driver whether the caller's memory is
 * pinned); large calls the pipeline (run in finish). */
static int submit_call(struct gf_cuda_inst *in, const float *inp, uint32_t frames)
{
	int pk = in->persist ? gf_pk_take(in) : 0;
	if (pk < 0)
		return GF_E_BUSY;
	if (pk)
		in->sub_kind = GF_SUB_PERSIST;
	else if (in->live && in->algo == GF_ALGO_DIRECT)
		in->sub_kind = GF_SUB_FUSED;
	else if (small_call(in, frames) && in->m_in && in->algo == GF_ALGO_FFT)
		in->sub_kind = GF_SUB_MAPPED;
	else if (small_call(in, frames))
		in->sub_kind = GF_SUB_SINGLE;
	else
		in->sub_kind = GF_SUB_PIPELINED;
	switch (in->sub_kind) {
	case GF_SUB_PERSIST:
		return in->hybrid ? gf_hy_submit(in->hybrid, in, inp, frames)
				  : gf_persist_submit(in->persist, inp, frames);
	case GF_SUB_FUSED:
		return gf_live_submit(in->live, inp, frames, &in->eb);
	case GF_SUB_MAPPED:
		return submit_mapped(in, inp, frames);
	case GF_SUB_SINGLE:
		return submit_single(in, inp, frames);
	default:
		return 0;
	}
}

static int finish_call(struct gf_cuda_inst *in, float *outp, uint32_t frames, uint64_t deadline_ns)
{
	int err;
	switch (in->sub_kind) {
	case GF_SUB_PERSIST:
		err = in->hybrid ? gf_hy_finish(in->hybrid, in, in->sub_in, outp, frames, deadline_ns)
				 : gf_persist_finish(in->persist, outp, frames, deadline_ns, &in->eb);
		return gf_pk_end_call(in, err, deadline_ns);
	case GF_SUB_FUSED:
		return gf_live_finish(in->live, outp, frames, deadline_ns, &in->eb);
	case GF_SUB_MAPPED:
		err = gf_cu_wait_words(in->m_done, in->sub_words, in->seq, in->s_comp, deadline_ns, &in->eb);
		if (!err)
			memcpy(outp, in->m_out, (size_t)frames * in->channels * sizeof(float));
		return err;
	case GF_SUB_SINGLE:
		err = wait_event(in, in->ev_done, deadline_ns);
		if (!err)
			memcpy(outp, in->h_out[0], (size_t)frames * in->channels * sizeof(float));
		return err;
	default:
		return process_pipelined(in, in->sub_in, outp, frames, deadline_ns);
	}
}

/* A whole call (calibration): submit, then finish with a generous deadline. */
static int process_call(struct gf_cuda_inst *in, const float *inp, float *outp, uint32_t frames)
{
	int err = gf_cu_use_device(in->dev, &in->eb);
	in->sub_in = inp;
	if (!err)
		err = submit_call(in, inp, frames);
	return err ? err : finish_call(in, outp, frames, gf_now_ns() + GF_CU_WAIT_NS);
}

/*
 * Start a call. A live block (one chunk) is enqueued here whole; a larger
 * call runs the pipeline in finish(), whose waits then share the deadline.
 */
static int cu_submit(void *inst, const float *inp, uint32_t frames)
{
	struct gf_cuda_inst *in = (struct gf_cuda_inst *)inst;
	in->sub_frames = 0;
	if (frames < 1 || frames > in->max_block)
		return GF_E_INVAL;
	if (in->fail_after >= 0 && in->calls >= (uint64_t)in->fail_after) {
		gf_errbuf_set(&in->eb, "cuda: failure injected by GPUFIR_CUDA_FAIL_AFTER=%ld",
			      in->fail_after);
		return GF_E_CUDA;
	}
	bool hang = in->hang_after >= 0 && in->calls == (uint64_t)in->hang_after;
	in->calls++;
	int err = gf_cu_use_device(in->dev, &in->eb);
	if (err)
		return err;
	if (hang && in->hang_tail && in->hybrid) { /* the launcher enqueues it: no CUDA call here */
		gf_hy_stall_next(in->hybrid, in->d_hang, in->hang_cycles);
	} else if (hang && gf_pk_active(in)) {
		gf_persist_hang_next(in->persist, in->hang_cycles);
	} else if (hang) { /* everything after it on s_comp waits for it */
		hang_kernel<<<1, 1, 0, in->s_comp>>>(in->d_hang, in->hang_cycles);
		CU_RET(&in->eb, cudaGetLastError());
	}
	in->sub_in = inp;
	uint64_t t0 = in->ev_split[0] ? gf_now_ns() : 0;
	if (t0)
		CU_RET(&in->eb, cudaEventRecord(in->ev_split[0], in->s_comp));
	err = submit_call(in, inp, frames);
	if (!err && t0) {
		CU_RET(&in->eb, cudaEventRecord(in->ev_split[1], in->s_comp));
		in->split_enqueue_ns = gf_now_ns() - t0;
	}
	if (!err)
		in->sub_frames = frames;
	return err;
}

static int cu_finish(void *inst, float *outp, uint64_t deadline_ns)
{
	struct gf_cuda_inst *in = (struct gf_cuda_inst *)inst;
	uint32_t frames = in->sub_frames;
	if (!frames)
		return GF_E_INVAL;
	in->sub_frames = 0;
	int err = finish_call(in, outp, frames, deadline_ns);
	if (err == GF_E_TIMEOUT) /* atomic only: this is the audio thread */
		gf_cu_doubt(in);
	return err;
}

static void cu_destroy(void *inst)
{
	inst_free((struct gf_cuda_inst *)inst);
}

static const char *cu_algo_name(const void *inst)
{
	return algo_str(((const struct gf_cuda_inst *)inst)->algo);
}

static const char *cu_describe(const void *inst)
{
	return ((const struct gf_cuda_inst *)inst)->desc;
}

extern "C" void gf_cuda_force_direct_shape(void *inst, int outputs_per_thread)
{
	struct gf_cuda_inst *in = (struct gf_cuda_inst *)inst;
	if (in->direct)
		gf_direct_force_r(in->direct, outputs_per_thread);
}

extern "C" uint32_t gf_cuda_fft_partition(const void *inst)
{
	const struct gf_cuda_inst *in = (const struct gf_cuda_inst *)inst;
	return in->fft ? gf_fft_partition(in->fft) : 0;
}

extern "C" uint32_t gf_cuda_fft_size(const void *inst)
{
	const struct gf_cuda_inst *in = (const struct gf_cuda_inst *)inst;
	return in->fft ? gf_fft_size(in->fft) : 0;
}

extern "C" uint32_t gf_cuda_chunk_frames(const void *inst)
{
	return ((const struct gf_cuda_inst *)inst)->chunk;
}

extern "C" const char *gf_cuda_taps_where(const void *inst)
{
	const struct gf_cuda_inst *in = (const struct gf_cuda_inst *)inst;
	return in->direct ? gf_direct_where(in->direct) : "";
}

extern "C" int gf_cuda_hang_next_command(void *inst)
{
	struct gf_cuda_inst *in = (struct gf_cuda_inst *)inst;
	if (!gf_pk_active(in) || !in->h_hang)
		return -1;
	gf_persist_hang_next(in->persist, in->hang_cycles);
	return 0;
}

extern "C" int gf_cuda_hold_launcher(void *inst, uint32_t ms)
{
	struct gf_cuda_inst *in = (struct gf_cuda_inst *)inst;
	if (!gf_pk_active(in) || !in->hybrid)
		return -1;
	gf_hy_hold_launcher(in->hybrid, (uint64_t)ms * 1000000u);
	return 0;
}

extern "C" int gf_cuda_split_calls(void *inst)
{
	struct gf_cuda_inst *in = (struct gf_cuda_inst *)inst;
	if (gf_pk_active(in) || gf_cu_use_device(in->dev, &in->eb))
		return -1;
	return gf_cu_split_arm(in->ev_split);
}

extern "C" int gf_cuda_last_split(void *inst, double *enqueue_us, double *gpu_us)
{
	struct gf_cuda_inst *in = (struct gf_cuda_inst *)inst;
	return gf_cu_split_read(in->ev_split, in->split_enqueue_ns, enqueue_us, gpu_us);
}

extern "C" unsigned gf_cuda_paths_timed(void)
{
	return __atomic_load_n(&g_paths_timed, __ATOMIC_RELAXED);
}

extern "C" const char *gf_cuda_block_path(const void *inst)
{
	const struct gf_cuda_inst *in = (const struct gf_cuda_inst *)inst;
	if (gf_pk_active(in))
		return "persistent";
	if (in->live && in->algo == GF_ALGO_DIRECT)
		return "fused";
	if (!small_call(in, in->max_block))
		return "pipelined";
	return in->m_in && in->algo == GF_ALGO_FFT ? "mapped" : "staged";
}

extern "C" const struct gf_backend_ops gf_cu_backend = {
	"cuda",	    cu_create,	  cu_prime,    cu_submit,	cu_finish,
	cu_destroy, cu_algo_name, cu_describe, cu_check_memory,
};

/* The table the engine's loader uses (cuda_module.h): through the module's
 * entry point (cu_entry.cu), or directly where a program links these objects. */
extern "C" const struct gf_cuda_module gf_cu_module = {
	GF_CUDA_MODULE_ABI, &gf_cu_backend, gf_cu_probe,	gf_cu_pin,
	gf_cu_unpin,	    gf_cu_prewarm,  gf_cu_prewarm_wait, gf_cu_quit_kernels,
};
