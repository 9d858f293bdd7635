/*
 * The neural stage's engine backend: gpufir's own DeepFilterNet3 inference
 * (src/dfn, dfn.h) on the CPU. The converted model (DeepFilterNet3.dfn,
 * scripts/dfn-convert.py) is loaded once per instance and shared by every
 * channel; each channel has a forward instance of its own, so that disjoint
 * runs of channels run on different helper threads (neural.h) with nothing
 * shared but the read-only weights, and each channel's attenuation limit is
 * set on its own.
 *
 * Its output agrees with the reference runtime's within the tolerance
 * docs/neural.md states (single-precision rounding, at least 90 dB down) and
 * lags its input as much: the STFT's hop and the model's two hops of lookahead.
 */
#include <stdlib.h>

#include "dfn.h"
#include "neural.h"

struct engine_inst {
	struct dfn_model *model;
	uint32_t channels;
	struct dfn_cpu **ch; /* one forward per channel */
};

static void engine_free(void *p)
{
	struct engine_inst *e = p;
	if (!e)
		return;
	for (uint32_t c = 0; e->ch && c < e->channels; c++)
		dfn_cpu_free(e->ch[c]);
	free(e->ch);
	dfn_model_free(e->model); /* after the forwards that use it */
	free(e);
}

int gf_neural_dfn_load(const char *path, struct dfn_model **out, struct gf_errbuf *eb)
{
	int r = dfn_model_load(path, out, eb);
	if (r == GF_E_FORMAT)
		r = GF_E_IO;
	return r;
}

static int engine_create(const struct gf_neural_params *p, uint32_t channels, void **out,
			 struct gf_errbuf *eb)
{
	*out = NULL;
	struct engine_inst *e = calloc(1, sizeof(*e));
	if (!e)
		return GF_E_NOMEM;
	e->channels = channels;
	int r = gf_neural_dfn_load(p->model, &e->model, eb);
	if (!r && !(e->ch = calloc(channels, sizeof(*e->ch))))
		r = GF_E_NOMEM;
	struct dfn_params dp;
	dfn_params_default(&dp);
	dp.atten_lim_db = p->atten_lim_db;
	dp.post_filter_beta = p->post_filter_beta;
	for (uint32_t c = 0; !r && c < channels; c++)
		r = dfn_cpu_new(e->model, 1, &dp, &e->ch[c], eb);
	if (r) {
		engine_free(e);
		return r;
	}
	*out = e;
	return 0;
}

static void engine_process(void *p, uint32_t first, uint32_t n, const float *in, float *out)
{
	struct engine_inst *e = p;
	for (uint32_t k = 0; k < n; k++)
		dfn_cpu_process(e->ch[first + k], in + (size_t)k * GF_NEURAL_HOP,
				out + (size_t)k * GF_NEURAL_HOP, NULL);
}

static void engine_set_atten_lim(void *p, uint32_t first, uint32_t n, float db)
{
	struct engine_inst *e = p;
	for (uint32_t k = 0; k < n; k++)
		dfn_cpu_set_atten_lim(e->ch[first + k], db);
}

static int engine_reset(void *p, uint32_t first, uint32_t n)
{
	struct engine_inst *e = p;
	for (uint32_t k = 0; k < n; k++)
		dfn_cpu_reset(e->ch[first + k]);
	return 0;
}

static uint32_t engine_latency(const void *p)
{
	(void)p;
	return DFN_LATENCY; /* the reference runtime's too (neural_ref.c) */
}

const struct gf_neural_ops gf_neural_dfn_ops = {
	.name = "gpufir's own DeepFilterNet3 inference (CPU)",
	.create = engine_create,
	.process = engine_process,
	.set_atten_lim = engine_set_atten_lim,
	.latency = engine_latency,
	.free = engine_free,
	.reset = engine_reset,
};
