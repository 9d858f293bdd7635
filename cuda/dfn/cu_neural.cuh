/*
 * The neural stage's GPU forward in the CUDA module (cu_neural.cu): the
 * entries of the module's table (gf_cu_module, cuda_module.h) that the
 * host's src/suppress/neural/neural_gpu.c reaches through gpu.h, with their contracts.
 */
#ifndef GPUFIR_CU_NEURAL_CUH
#define GPUFIR_CU_NEURAL_CUH

#include <stdint.h>

#include "error.h"

struct dfn_model;
struct dfn_consts;
struct dfn_params;

extern "C" {
int gf_cu_neural_new(const struct dfn_model *m, const struct dfn_consts *k, uint32_t channels,
		     const struct dfn_params *p, int device, void **out, struct gf_errbuf *eb);
void gf_cu_neural_free(void *inst);
int gf_cu_neural_submit(void *inst, const float *in);
int gf_cu_neural_collect(void *inst, float *out, uint64_t deadline_ns);
int gf_cu_neural_reset(void *inst);
void gf_cu_neural_set_atten_lim(void *inst, float db);
const char *gf_cu_neural_error(const void *inst);
}

#endif
