/**
 * @file cuda_floor.h
 * The bare PCIe round trip a live block cannot beat (bench/cuda_floor.cu),
 * for the benchmarks that print the engine's figures against it. Plain C,
 * no CUDA types. Built only with the CUDA backend.
 */
#ifndef GPUFIR_BENCH_CUDA_FLOOR_H
#define GPUFIR_BENCH_CUDA_FLOOR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Shapes of the bare round trip (gf_cuda_floor_new). */
enum {
	GF_CUDA_FLOOR_COPY,   /**< pinned staging: copy up, empty kernel, copy down, stream synchronize */
	GF_CUDA_FLOOR_MAPPED, /**< host-mapped in/out read and written by the kernel, stream synchronize */
	GF_CUDA_FLOOR_FLAG,   /**< host-mapped in/out, the host polls a completion word the kernel writes */
};
struct gf_cuda_floor;
/** A bare PCIe round trip of @p samples floats in one of the shapes above. */
int gf_cuda_floor_new(struct gf_cuda_floor **out, int dev, uint32_t samples, int shape);
/** One round trip: @p in to the device and back into @p out. */
int gf_cuda_floor_trip(struct gf_cuda_floor *f, const float *in, float *out);
void gf_cuda_floor_free(struct gf_cuda_floor *f);
/** As gf_cuda_split_calls and gf_cuda_last_split, for a bare round trip: events around the
 * work each trip enqueues. @return 0 or -1. */
int gf_cuda_floor_split(struct gf_cuda_floor *f);
int gf_cuda_floor_last_split(struct gf_cuda_floor *f, double *enqueue_us, double *gpu_us);

#ifdef __cplusplus
}
#endif

#endif
