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
