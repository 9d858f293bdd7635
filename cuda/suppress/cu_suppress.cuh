/*
 * The noise suppressor's entry points in the CUDA module (cu_suppress.cu),
 * listed in its table (gf_cu_module, cuda_module.h) with the same contracts
 * as the engine's suppress_gpu.h, which forwards to them.
 */
#ifndef GPUFIR_CU_SUPPRESS_CUH
#define GPUFIR_CU_SUPPRESS_CUH

#include <stdint.h>

#include "error.h"

struct gf_suppress_shape;

extern "C" {
int gf_cu_suppress_new(const struct gf_suppress_shape *sh, uint32_t channels, int device, void **out,
		       struct gf_errbuf *eb);
void gf_cu_suppress_free(void *inst);
int gf_cu_suppress_process(void *inst, float *buf, uint32_t stride, uint32_t frames, uint64_t deadline_ns);
int gf_cu_suppress_reset(void *inst);
void gf_cu_suppress_set_floor(void *inst, float g);
const char *gf_cu_suppress_error(const void *inst);
void gf_cu_suppress_hum(void *inst, const float *hum);
}

#endif
