/**
 * @file cu_staged.cuh
 * Internal to cuda/: the launched paths that go through the instance's
 * staging (cu_staged.cu, cu_pipeline.cu): "mapped" (the FFT kernels read and
 * write host-mapped memory), "staged" (one copy each way through pinned
 * staging) and "pipelined" (large calls: copies and kernels overlapped chunk
 * by chunk). Their tables are in cu_path.cuh.
 */
#ifndef GPUFIR_CU_STAGED_CUH
#define GPUFIR_CU_STAGED_CUH

#include "cu_common.cuh"

/** From this many samples on (or beyond one chunk) a call is large: the pipeline, which DMAs straight
 * from pinned callers. Smaller calls go through staging or host-mapped memory. */
#define GF_CU_DIRECT_IO_SAMPLES 65536
static inline bool gf_cu_small_call(const struct gf_cu_inst *in, uint32_t frames)
{
	return frames <= in->chunk && (size_t)frames * in->channels < GF_CU_DIRECT_IO_SAMPLES;
}
/** Small FFT calls on host-mapped staging up to this many samples (frames x channels). */
#define GF_CU_MAPPED_SAMPLES 4096u
/** A large call through the copy/compute pipeline, in finish. */
int gf_cu_process_pipelined(struct gf_cu_inst *in, const float *inp, float *outp, uint32_t frames,
			    uint64_t deadline_ns);

#endif
