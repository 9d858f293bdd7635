/* Built only without CUDA: the CUDA backend reports that it is not built in. */
#include <stdio.h>

#include "backend.h"
#include "gpu.h"

static int stub_create(const struct gf_engine_params *p, const struct gf_filter_set *fs, void **inst,
		       struct gf_errbuf *eb)
{
	(void)p;
	(void)fs;
	*inst = NULL;
	gf_errbuf_set(eb, "this gpufir was built without CUDA support");
	return GF_E_UNSUPPORTED;
}

const struct gf_backend_ops gf_cuda_backend = {
	.name = "cuda",
	.create = stub_create,
};

int gf_cuda_probe(int gpu_index, char *desc, uint32_t desc_len)
{
	(void)gpu_index;
	snprintf(desc, desc_len, "this gpufir was built without CUDA support");
	return GF_E_UNSUPPORTED;
}

int gf_cuda_pin(void *ptr, size_t bytes)
{
	(void)ptr;
	(void)bytes;
	return GF_E_UNSUPPORTED;
}

int gf_cuda_unpin(void *ptr)
{
	(void)ptr;
	return 0;
}

void gf_cuda_prewarm(int gpu_index)
{
	(void)gpu_index;
}

void gf_cuda_prewarm_wait(void)
{
}

void gf_cuda_quit_kernels(void)
{
}

void gf_cuda_ask_persistent(void)
{
}

/* The noise suppressor: never an instance, so only new() is ever reached. */
int gf_cuda_suppress_new(const struct gf_suppress_shape *sh, uint32_t channels, int device, void **out,
			 struct gf_errbuf *eb)
{
	(void)sh;
	(void)channels;
	(void)device;
	*out = NULL;
	gf_errbuf_set(eb, "suppress: this gpufir was built without CUDA support");
	return GF_E_UNSUPPORTED;
}

void gf_cuda_suppress_free(void *inst)
{
	(void)inst;
}

int gf_cuda_suppress_process(void *inst, float *buf, uint32_t stride, uint32_t frames, uint64_t deadline_ns)
{
	(void)inst;
	(void)buf;
	(void)stride;
	(void)frames;
	(void)deadline_ns;
	return GF_E_UNSUPPORTED;
}

int gf_cuda_suppress_reset(void *inst)
{
	(void)inst;
	return GF_E_UNSUPPORTED;
}

void gf_cuda_suppress_set_floor(void *inst, float g)
{
	(void)inst;
	(void)g;
}

const char *gf_cuda_suppress_error(const void *inst)
{
	(void)inst;
	return "this gpufir was built without CUDA support";
}

void gf_cuda_suppress_hum(void *inst, const float *hum)
{
	(void)inst;
	(void)hum;
}

/* The neural stage's forward: never an instance either. */
int gf_cuda_neural_new(const struct dfn_model *m, const struct dfn_consts *k, uint32_t channels,
		       const struct dfn_params *p, int device, void **out, struct gf_errbuf *eb)
{
	(void)m;
	(void)k;
	(void)channels;
	(void)p;
	(void)device;
	*out = NULL;
	gf_errbuf_set(eb, "deepfilter (GPU): this gpufir was built without CUDA support");
	return GF_E_UNSUPPORTED;
}

void gf_cuda_neural_free(void *inst)
{
	(void)inst;
}

int gf_cuda_neural_submit(void *inst, const float *in)
{
	(void)inst;
	(void)in;
	return GF_E_UNSUPPORTED;
}

int gf_cuda_neural_collect(void *inst, float *out, uint64_t deadline_ns)
{
	(void)inst;
	(void)out;
	(void)deadline_ns;
	return GF_E_UNSUPPORTED;
}

int gf_cuda_neural_reset(void *inst)
{
	(void)inst;
	return GF_E_UNSUPPORTED;
}

void gf_cuda_neural_set_atten_lim(void *inst, float db)
{
	(void)inst;
	(void)db;
}

const char *gf_cuda_neural_error(const void *inst)
{
	(void)inst;
	return "this gpufir was built without CUDA support";
}
