/*
 * The neural stage's GPU backend: gpufir's own DeepFilterNet3 forward
 * (cuda/dfn/dfn_gpu.h) through the CUDA module (gpu.h's gf_cuda_neural_*),
 * every channel of a hop in one batch. The host side of the split the
 * suppressor has too: the model file is loaded and the constants computed
 * here, by the same code the CPU forward runs (src/dfn), and the module only
 * copies them to the device, so both forwards start from the same bits. The
 * model is freed once the device has its weights.
 *
 * The stage drives it through submit and collect with its block's deadline
 * (neural_bank.h); process() is the same pair without a bound, for a caller
 * that wants one hop done.
 */
#include <stdlib.h>
#include <string.h>

#include "dfn.h"
#include "gpu.h"
#include "neural.h"

struct gpu_inst {
	void *mod; /* the module's instance */
	uint32_t channels;
};

static void gpu_free(void *p)
{
	struct gpu_inst *g = p;
	if (!g)
		return;
	gf_cuda_neural_free(g->mod); /* waits a bounded time for a hop in flight; a hung GPU leaks */
	free(g);
}

static int gpu_create(const struct gf_neural_params *p, uint32_t channels, void **out, struct gf_errbuf *eb)
{
	*out = NULL;
	struct gpu_inst *g = calloc(1, sizeof(*g));
	if (!g)
		return GF_E_NOMEM;
	g->channels = channels;
	struct dfn_model *m = NULL;
	struct dfn_consts *k = malloc(sizeof(*k)); /* 4 KiB: not on the stack */
	int r = k ? gf_neural_dfn_load(p->model, &m, eb) : GF_E_NOMEM;
	if (!r) {
		dfn_consts_init(k);
		struct dfn_params dp;
		dfn_params_default(&dp);
		dp.atten_lim_db = p->atten_lim_db;
		dp.post_filter_beta = p->post_filter_beta;
		r = gf_cuda_neural_new(m, k, channels, &dp, p->gpu_index, &g->mod, eb);
	}
	dfn_model_free(m); /* the device has its copy */
	free(k);
	if (r) {
		gpu_free(g);
		return r;
	}
	*out = g;
	return 0;
}

static int gpu_submit(void *p, const float *in)
{
	return gf_cuda_neural_submit(((struct gpu_inst *)p)->mod, in);
}

static int gpu_collect(void *p, float *out, uint64_t deadline_ns)
{
	return gf_cuda_neural_collect(((struct gpu_inst *)p)->mod, out, deadline_ns);
}

/* One hop of every channel (first 0, n all: the batch is the instance), waited for until it is back
 * or hung; a failure leaves the hop silent. */
static void gpu_process(void *p, uint32_t first, uint32_t n, const float *in, float *out)
{
	struct gpu_inst *g = p;
	int r = first == 0 && n == g->channels ? gpu_submit(g, in) : GF_E_INVAL;
	if (!r)
		r = gpu_collect(g, out, 0);
	if (r)
		memset(out, 0, (size_t)n * GF_NEURAL_HOP * sizeof(float));
}

/* The batch has one limit: every channel takes it (the stage sets all of them alike). */
static void gpu_set_atten_lim(void *p, uint32_t first, uint32_t n, float db)
{
	(void)first;
	(void)n;
	gf_cuda_neural_set_atten_lim(((struct gpu_inst *)p)->mod, db);
}

static uint32_t gpu_latency(const void *p)
{
	(void)p;
	return DFN_LATENCY; /* dfn_gpu.h computes what the CPU forward does */
}

static int gpu_reset(void *p, uint32_t first, uint32_t n)
{
	(void)first;
	(void)n;
	return gf_cuda_neural_reset(((struct gpu_inst *)p)->mod);
}

static const char *gpu_error(const void *p)
{
	return gf_cuda_neural_error(((const struct gpu_inst *)p)->mod);
}

const struct gf_neural_ops gf_neural_gpu_ops = {
	.name = "gpufir's own DeepFilterNet3 inference (GPU)",
	.create = gpu_create,
	.process = gpu_process,
	.set_atten_lim = gpu_set_atten_lim,
	.latency = gpu_latency,
	.free = gpu_free,
	.reset = gpu_reset,
	.submit = gpu_submit,
	.collect = gpu_collect,
	.error = gpu_error,
};
