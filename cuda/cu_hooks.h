/**
 * @file cu_hooks.h
 * Hooks into a CUDA backend instance for benchmarks and tests (plain C, no
 * CUDA types). Not part of the engine's interface. Control thread only.
 */
#ifndef GPUFIR_CU_HOOKS_H
#define GPUFIR_CU_HOOKS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Time the device work of @p reps consecutive calls of @p frames frames
 * (line update and convolution, no PCIe copies) with CUDA events, after two
 * warm-up calls, on whatever is in the device staging buffer.
 * @return 0 or GF_E_*; *ms_per_call receives the mean device time, and
 * *host_ms_per_call (when not NULL) the host's time to enqueue one call: when
 * the two are close, the calls are bound by launch overhead.
 */
int gf_cuda_time_calls(void *inst, uint32_t frames, int reps, double *ms_per_call, double *host_ms_per_call);

/** Direct algorithm: force 16 or 4 outputs per thread (0 = automatic). */
void gf_cuda_force_direct_shape(void *inst, int outputs_per_thread);

/** FFT hop of an instance (the partition in the partitioned shape; 0 for direct). */
uint32_t gf_cuda_fft_partition(const void *inst);

/** FFT size of an instance (0 for direct). */
uint32_t gf_cuda_fft_size(const void *inst);

/** Frames per staging chunk (the unit of the copy/compute pipeline). */
uint32_t gf_cuda_chunk_frames(const void *inst);

/** Where the direct algorithm reads its taps: "constant bank N", "global memory", or "" for fft. */
const char *gf_cuda_taps_where(const void *inst);

/** How a call of the instance's max_block frames runs: "fused" (one kernel per block on host-mapped
 * memory), "mapped" (FFT kernels on host-mapped memory), "staged" (copies through pinned staging) or
 * "pipelined". */
const char *gf_cuda_block_path(const void *inst);

/** Test hook: how many live-path choices (GPUFIR_CUDA_LIVE or gpu_path auto) instances
 * created in this process have timed; a shape timed once is not timed again. */
unsigned gf_cuda_paths_timed(void);

/** Test hook: the FFT tail's launcher of @p inst (an FFT instance on the persistent path) sleeps
 * @p ms inside its next launch, after claiming the segment and before launching it, as a launcher
 * thread stuck in a driver call would. @return 0, or -1 where it has no launcher. */
int gf_cuda_hold_launcher(void *inst, uint32_t ms);

/**
 * Benchmarks: from now on, record an event before and after the work each call of @p inst
 * enqueues on its compute stream (the fused, mapped and staged paths enqueue all of a live
 * block's work there), so that gf_cuda_last_split can split a round trip. The records add
 * host time to submit. @return 0, or -1 (a persistent instance, or no events).
 */
int gf_cuda_split_calls(void *inst);

/** The last call's split, after its finish: the host's time in submit (copy into staging or
 * mapped memory, the launches and copies enqueued) and the span of its work on the GPU
 * (between the two events), in microseconds. Waits for the second event. @return 0 or -1. */
int gf_cuda_last_split(void *inst, double *enqueue_us, double *gpu_us);

/** Test hook: the persistent kernel of @p inst, created with GPUFIR_CUDA_HANG_AFTER set (to any
 * call), spins a few seconds before answering its next command, whatever it is (a call, the
 * handover a later build asks for). @return 0, or -1 where it has no such kernel or hook. */
int gf_cuda_hang_next_command(void *inst);

/** Test hook: host buffers gf_cuda_pin has registered and gf_cuda_unpin not yet unregistered. */
int gf_cuda_pinned_buffers(void);

/** Test hook: let a GPUFIR_CUDA_HANG_AFTER hang of @p inst end now (the spinning kernel's flag, a
 * persistent kernel's spin), without stopping anything: its late call then completes. Any thread. */
void gf_cuda_release_hang(void *inst);

/**
 * Free the pinned buffers and cuFFT plans cached for later instances
 * (cu_pool.cu) that no instance holds, so that a leak check at exit sees
 * none. The daemon never calls it: freeing pinned memory synchronizes the
 * device, which a hung GPU could turn into a hang at exit.
 */
void gf_cuda_release_caches(void);

/** Steps timed by gf_cuda_time_startup, in order. */
#define GF_CUDA_STARTUP_STEPS 7
#define GF_CUDA_STARTUP_NAMES                                                                                \
	{                                                                                                    \
		"driver and runtime (cudaGetDeviceCount)", "cudaGetDeviceProperties",                        \
			"context (cudaSetDevice + cudaFree(0))", "first cuFFT plan (create, plan, destroy)", \
			"cudaHostAlloc 4 x 512 KiB (+ free)", "cudaHostRegister 4 x 512 KiB",                \
			"cudaHostUnregister 4 x 512 KiB"                                                     \
	}

/**
 * Time the steps of CUDA's start-up in this process, in milliseconds (call
 * it first, in a fresh process). @return 0 or GF_E_CUDA.
 */
int gf_cuda_time_startup(int dev, double ms[GF_CUDA_STARTUP_STEPS]);

#ifdef __cplusplus
}
#endif

#endif
