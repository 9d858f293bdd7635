/**
 * @file cu_path.cuh
 * Internal to cuda/: the ways a call of an instance runs on the GPU, each
 * behind one table of operations (docs/cuda.md, "Which path runs"):
 *
 *   persistent  persist/  a resident kernel polls for blocks: a direct
 *                         instance's, or an FFT instance's head with its tail
 *                         beside it (opt-in: the engine's gpu_path)
 *   fused       fused/    one kernel a block on host-mapped memory (direct)
 *   mapped      staged/   the FFT kernels on host-mapped memory (small FFT calls)
 *   staged      staged/   one copy each way through pinned staging (other
 *                         calls of one chunk)
 *   pipelined   staged/   copies and kernels overlapped chunk by chunk (large calls)
 *
 * The instance (cu_common.cuh) holds what they share: streams, staging, the
 * input line and the algorithm (direct/, fft/). The choice among them is
 * made in one place, cu_choose.cu: at create, which paths an instance builds
 * (its shape, the engine's gpu_path, measurement); per call, the first path
 * in gf_cu_paths whose fits() takes it.
 *
 * Threads: create and free on the control thread before the instance is
 * published or after it is retired; fits, submit and finish on the thread
 * that owns the instance's calls (the audio thread: RT-safe, no allocation,
 * waits bounded by the deadline); stop on the control thread.
 */
#ifndef GPUFIR_CU_PATH_CUH
#define GPUFIR_CU_PATH_CUH

#include "cu_common.cuh"

struct gf_cu_path {
	const char *name; /**< as gf_cuda_block_path and the status report it */
	/** Build the path's own state on an instance whose algorithm is built. NULL: it has none (it
	 * runs on the instance's staging). @return 0 or GF_E_* (the message in @p eb) */
	int (*create)(struct gf_cu_inst *in, const struct gf_filter_set *fs, struct gf_errbuf *eb);
	/** Would a call of @p frames take this path now? No side effect. */
	int (*fits)(const struct gf_cu_inst *in, uint32_t frames);
	/** Start the call; never waits. @return 0, GF_CU_PATH_DECLINED (nothing started: the next
	 * path takes it), or GF_E_* (in->eb) */
	int (*submit)(struct gf_cu_inst *in, const float *inp, uint32_t frames);
	/** The call's output by @p deadline_ns. @return 0, GF_E_TIMEOUT (still in flight: a later
	 * finish collects it where @c resumable), or GF_E_* (in->eb) */
	int (*finish)(struct gf_cu_inst *in, float *outp, uint32_t frames, uint64_t deadline_ns);
	/** The engine gave the instance up: @return 1 once nothing of the path runs, 0 not yet (asked
	 * again later). NULL: its work ends with the instance's streams. */
	int (*stop)(struct gf_cu_inst *in, uint64_t deadline_ns);
	/** Free the path's own state (no call in flight); accepts an instance without it. NULL: none. */
	void (*free)(struct gf_cu_inst *in);
	/** Does a call past its deadline stay collectable (its input copied at submit)? */
	int resumable;
};

/** submit(): the path stepped aside between fits() and submit() (a persistent kernel handed over). */
#define GF_CU_PATH_DECLINED 1

extern const struct gf_cu_path gf_cu_path_persistent; /* persist/cu_persist_path.cu */
extern const struct gf_cu_path gf_cu_path_fused;      /* fused/cu_fused.cu */
extern const struct gf_cu_path gf_cu_path_mapped;     /* staged/cu_staged.cu */
extern const struct gf_cu_path gf_cu_path_staged;     /* staged/cu_staged.cu */
extern const struct gf_cu_path gf_cu_path_pipelined;  /* staged/cu_pipeline.cu */

/** Every path, in the order a call tries them (cu_choose.cu); the last takes any call. */
extern const struct gf_cu_path *const gf_cu_paths[];
/** The path a call of @p frames takes now (the first in gf_cu_paths that fits). */
const struct gf_cu_path *gf_cu_path_for(const struct gf_cu_inst *in, uint32_t frames);

#endif
