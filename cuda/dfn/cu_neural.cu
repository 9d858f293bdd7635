/*
 * gpufir's DeepFilterNet3 forward (dfn_gpu.h) as the CUDA module serves it to
 * the neural stage: the host loads the model and computes the constants
 * (src/dfn), the module runs them on the device the stage names. Each entry
 * that starts CUDA work selects that device for its thread first
 * (gf_cu_use_device: one call per thread, then a cached compare), so the
 * stream's worker may submit while the control thread built the instance;
 * collect follows a submit on the same thread, whose device is selected
 * already. The instance keeps
 * the last failure's message for the control thread (error()).
 */
#include <stdlib.h>

#include "clock.h"
#include "cu_common.cuh"
#include "cu_neural.cuh"

extern "C" {
#include "dfn_gpu.h"
#include "log.h"
}

struct gf_cu_neural {
	int device;
	struct dfn_gpu *d;
	struct gf_errbuf eb; /* the last failure: written by the thread that failed */
};

extern "C" void gf_cu_neural_free(void *inst)
{
	struct gf_cu_neural *g = (struct gf_cu_neural *)inst;
	if (!g)
		return;
	struct gf_errbuf eb = {{0}};
	if (g->d && !gf_cu_use_device(g->device, &eb))
		dfn_gpu_free(g->d); /* waits a bounded time for a hop in flight; a hung GPU leaks */
	free(g);
}

/* A hop of silence through every kernel and the graphs, so that the first hop of a stream finds
 * them loaded; then the state as new() made it. */
static int warm_up(struct gf_cu_neural *g, uint32_t channels, struct gf_errbuf *eb)
{
	float *buf = (float *)calloc((size_t)channels * DFN_HOP, sizeof(float));
	if (!buf)
		return GF_E_NOMEM;
	int err = dfn_gpu_process(g->d, buf, buf, NULL, eb);
	free(buf);
	return err ? err : dfn_gpu_reset(g->d, eb);
}

extern "C" int gf_cu_neural_new(const struct dfn_model *m, const struct dfn_consts *k, uint32_t channels,
				const struct dfn_params *p, int device, void **out, struct gf_errbuf *eb)
{
	*out = NULL;
	int count = 0;
	if (cudaGetDeviceCount(&count) != cudaSuccess || device < 0 || device >= count) {
		(void)cudaGetLastError();
		gf_errbuf_set(eb, "deepfilter (GPU): no CUDA device %d", device);
		return GF_E_NOGPU;
	}
	struct gf_cu_neural *g = (struct gf_cu_neural *)calloc(1, sizeof(*g));
	if (!g)
		return GF_E_NOMEM;
	g->device = device;
	int err = gf_cu_use_device(device, eb);
	err = err ? err : dfn_gpu_new(m, k, (int)channels, p, &g->d, eb);
	if (!err) {
		/* one graph a hop instead of about 60 launches; without them the same work, launched */
		struct gf_errbuf why = {{0}};
		if (dfn_gpu_use_graphs(g->d, &why))
			gf_info("deepfilter (GPU): hops launched one kernel at a time: %s", why.msg);
		err = warm_up(g, channels, eb);
	}
	if (err) {
		gf_cu_neural_free(g);
		return err;
	}
	*out = g;
	return 0;
}

extern "C" int gf_cu_neural_submit(void *inst, const float *in)
{
	struct gf_cu_neural *g = (struct gf_cu_neural *)inst;
	int err = gf_cu_use_device(g->device, &g->eb);
	return err ? err : dfn_gpu_submit(g->d, in, &g->eb);
}

extern "C" int gf_cu_neural_collect(void *inst, float *out, uint64_t deadline_ns)
{
	struct gf_cu_neural *g = (struct gf_cu_neural *)inst;
	return dfn_gpu_collect(g->d, out, NULL, deadline_ns, &g->eb);
}

extern "C" int gf_cu_neural_reset(void *inst)
{
	struct gf_cu_neural *g = (struct gf_cu_neural *)inst;
	int err = gf_cu_use_device(g->device, &g->eb);
	err = err ? err : dfn_gpu_reset(g->d, &g->eb);
	if (!err)
		g->eb.msg[0] = '\0';
	return err;
}

extern "C" void gf_cu_neural_set_atten_lim(void *inst, float db)
{
	dfn_gpu_set_atten_lim(((struct gf_cu_neural *)inst)->d, db);
}

extern "C" const char *gf_cu_neural_error(const void *inst)
{
	return ((const struct gf_cu_neural *)inst)->eb.msg;
}
