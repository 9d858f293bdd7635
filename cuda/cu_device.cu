/*
 * Starting CUDA and asking about the device: the background start-up
 * (gf_cuda_prewarm), the context's hardware queues, the device probe, and
 * pinning the host memory of the layers above (gf_cuda_pin, gf_cuda_unpin).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cu_common.cuh"

extern "C" {
#include "log.h"
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
 * persistent path is asked for (gf_cu_ask_persistent: gpu_path "auto" or
 * "persistent" before CUDA starts), 32 queues (the most) before the context
 * exists, unless the user set CUDA's own variable. Not otherwise: 32 queues
 * cost about 350 ms more to create the context on the H200 (docs/cuda.md),
 * more than a whole CPU run of a short file.
 */
static pthread_once_t g_conn_once = PTHREAD_ONCE_INIT;
static int g_connections;  /* the hardware queues the context is made with */
static int g_ask_persist; /* atomic: gf_cu_ask_persistent was called */
static void set_connections(void)
{
	if (__atomic_load_n(&g_ask_persist, __ATOMIC_ACQUIRE))
		setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
	const char *q = getenv("CUDA_DEVICE_MAX_CONNECTIONS"); /* CUDA's variable, read by the driver too */
	g_connections = q && *q ? atoi(q) : 8;
}

extern "C" void gf_cu_ask_persistent(void)
{
	__atomic_store_n(&g_ask_persist, 1, __ATOMIC_RELEASE);
}

int gf_cu_connections(void)
{
	pthread_once(&g_conn_once, set_connections);
	return g_connections;
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
	pthread_once(&g_conn_once, set_connections); /* GPUFIR_CUDA_PREWARM=0: the host never calls */
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

static int g_pinned; /* buffers registered now (atomic): gf_cuda_pinned_buffers */

int gf_cu_pinned_count(void)
{
	return __atomic_load_n(&g_pinned, __ATOMIC_RELAXED);
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
	__atomic_add_fetch(&g_pinned, 1, __ATOMIC_RELAXED);
	return 0;
}

/* cudaHostUnregister waits for every kernel on the device (measured, docs/cuda.md):
 * behind work that missed its deadline and has not been collected or stopped
 * since, or a persistent kernel, it could wait for good, and work in doubt may
 * still copy to or from the buffer. Then the buffer stays registered and is
 * the caller's to leak. The doubt ends when the late call is collected or the
 * engine's stop finds the given-up instance's work ended (cu_stop). */
extern "C" int gf_cu_unpin(void *ptr)
{
	if (!ptr)
		return 0;
	if (gf_cu_device_wait_may_hang())
		return 1;
	if (cudaHostUnregister(ptr) == cudaSuccess)
		__atomic_sub_fetch(&g_pinned, 1, __ATOMIC_RELAXED);
	else
		(void)cudaGetLastError(); /* never pinned: fine */
	return 0;
}
