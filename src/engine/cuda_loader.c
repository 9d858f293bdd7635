/*
 * The CUDA backend, loaded on first use (builds with CUDA; cuda_module.h).
 * Nothing here touches CUDA until a caller needs the GPU: a CPU run never
 * maps libcudart or libcufft, which cost a few milliseconds of loading per
 * process. The module is looked for at $GPUFIR_CUDA_MODULE (exactly there
 * when set), beside the executable (the build tree), then in the lib dir
 * relative to the executable and at the configured install path.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "cost.h"
#include "cuda_module.h"
#include "gpu.h"
#include "log.h"
#include "module_path.h"
#include "test_hook.h"

extern const struct gf_cuda_module gf_cu_module __attribute__((weak));

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
/* Set once, inside g_once; read without it by the calls that must not load (atomic). */
static const struct gf_cuda_module *_Atomic g_mod;
static char g_why[512]; /* why there is none */
static const struct gf_cuda_host g_host = {GF_CUDA_MODULE_ABI, gf_vlog, gf_errbuf_vset, gf_test_hook_value,
					   gf_test_hook_choice};

/* Try one path: 0 and g_mod set, or -errno-ish with the reason in why. */
static int try_load(const char *path, char *why, size_t why_len)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(why, why_len, "%s", e ? e : path);
		return -1;
	}
	gf_cuda_module_entry_fn entry;
	*(void **)&entry = dlsym(h, GF_CUDA_MODULE_ENTRY);
	const struct gf_cuda_module *m = entry ? entry(&g_host) : NULL;
	if (!m || m->abi != GF_CUDA_MODULE_ABI) {
		snprintf(why, why_len, "%.200s: not a gpufir CUDA module of this version (ABI %d)", path,
			 GF_CUDA_MODULE_ABI);
		dlclose(h);
		return -1;
	}
	g_mod = m; /* never unloaded: instances and CUDA's state live in it */
	gf_debug("cuda: loaded the CUDA backend from %s", path);
	return 0;
}

static void load_once(void)
{
	if (&gf_cu_module) { /* linked in: no module to load */
		g_mod = &gf_cu_module;
		return;
	}
	const char *env = getenv(GF_CUDA_MODULE_ENV);
	if (env && *env) {
		char why[256];
		gf_cost_cuda_loading();
		if (try_load(env, why, sizeof(why)) == 0)
			gf_cost_cuda_loaded();
		else
			snprintf(g_why, sizeof(g_why),
				 "the CUDA backend module did not load (%s=%.200s): %.200s",
				 GF_CUDA_MODULE_ENV, env, why);
		return;
	}
	char path[GF_MODULE_PATHS][GF_MODULE_PATH_MAX];
	int n = gf_module_paths(GF_CUDA_MODULE_NAME, path);
	char why[256] = "";
	for (int i = 0; i < n; i++) {
		if (access(path[i], F_OK) != 0)
			continue;
		gf_cost_cuda_loading(); /* CUDA's start-up is measured from here (cost_measure.c) */
		if (try_load(path[i], why, sizeof(why)) == 0) {
			gf_cost_cuda_loaded();
			return;
		}
	}
	if (why[0]) /* found but broken (a missing libcufft, say) */
		snprintf(g_why, sizeof(g_why), "the CUDA backend module did not load: %.400s", why);
	else
		snprintf(g_why, sizeof(g_why),
			 "the CUDA backend module (%s) is not installed: not beside the program, nor in "
			 "%.400s",
			 GF_CUDA_MODULE_NAME, n ? path[n - 1] : "the lib dir");
}

/* The module, loading it on the first call; NULL with the reason in g_why. */
static const struct gf_cuda_module *module(void)
{
	pthread_once(&g_once, load_once);
	return g_mod;
}

/* The module if something already loaded it: for calls that must not load it. */
static const struct gf_cuda_module *module_if_loaded(void)
{
	return g_mod;
}

int gf_cuda_probe(int gpu_index, char *desc, uint32_t desc_len)
{
	const struct gf_cuda_module *m = module();
	if (!m) {
		snprintf(desc, desc_len, "%s", g_why);
		return GF_E_UNSUPPORTED;
	}
	return m->probe(gpu_index, desc, desc_len);
}

/* Pinning never loads the module: memory allocated before any CUDA use stays pageable. */
int gf_cuda_pin(void *ptr, size_t bytes)
{
	const struct gf_cuda_module *m = module_if_loaded();
	return m ? m->pin(ptr, bytes) : GF_E_UNSUPPORTED;
}

int gf_cuda_unpin(void *ptr)
{
	const struct gf_cuda_module *m = module_if_loaded();
	return m ? m->unpin(ptr) : 0;
}

void gf_cuda_prewarm(int gpu_index)
{
	if (gf_test_hook_value("GPUFIR_CUDA_PREWARM", "cuda") == 0)
		return; /* no prewarm: no loading ahead of need either */
	const struct gf_cuda_module *m = module();
	if (m)
		m->prewarm(gpu_index);
}

void gf_cuda_ask_persistent(void)
{
	const struct gf_cuda_module *m = module();
	if (m)
		m->ask_persistent();
}

void gf_cuda_prewarm_wait(void)
{
	const struct gf_cuda_module *m = module_if_loaded();
	if (m)
		m->prewarm_wait();
}

/* No CUDA call and safe anywhere (before _exit): a module not loaded has no kernels. */
void gf_cuda_quit_kernels(void)
{
	const struct gf_cuda_module *m = module_if_loaded();
	if (m)
		m->quit_kernels();
}

/* ---- the noise suppressor: new loads the module, the rest forward ---- */

int gf_cuda_suppress_new(const struct gf_suppress_shape *sh, uint32_t channels, int device, void **out,
			 struct gf_errbuf *eb)
{
	*out = NULL;
	const struct gf_cuda_module *m = module();
	if (!m) {
		gf_errbuf_set(eb, "suppress: %s", g_why);
		return GF_E_UNSUPPORTED;
	}
	return m->suppress_new(sh, channels, device, out, eb);
}

/* An instance exists only after new() loaded the module, so these may use g_mod. */
void gf_cuda_suppress_free(void *inst)
{
	if (inst)
		g_mod->suppress_free(inst);
}

int gf_cuda_suppress_process(void *inst, float *buf, uint32_t stride, uint32_t frames, uint64_t deadline_ns)
{
	return g_mod->suppress_process(inst, buf, stride, frames, deadline_ns);
}

int gf_cuda_suppress_reset(void *inst)
{
	return g_mod->suppress_reset(inst);
}

const char *gf_cuda_suppress_error(const void *inst)
{
	return g_mod->suppress_error(inst);
}

void gf_cuda_suppress_set_floor(void *inst, float g)
{
	g_mod->suppress_set_floor(inst, g);
}

void gf_cuda_suppress_hum(void *inst, const float *hum)
{
	g_mod->suppress_hum(inst, hum);
}

/* ---- the neural stage's forward: new loads the module, the rest forward ---- */

int gf_cuda_neural_new(const struct dfn_model *m, const struct dfn_consts *k, uint32_t channels,
		       const struct dfn_params *p, int device, void **out, struct gf_errbuf *eb)
{
	*out = NULL;
	const struct gf_cuda_module *mod = module();
	if (!mod) {
		gf_errbuf_set(eb, "deepfilter (GPU): %s", g_why);
		return GF_E_UNSUPPORTED;
	}
	return mod->neural_new(m, k, channels, p, device, out, eb);
}

/* As the suppressor's: an instance exists only after new() loaded the module. */
void gf_cuda_neural_free(void *inst)
{
	if (inst)
		g_mod->neural_free(inst);
}

int gf_cuda_neural_submit(void *inst, const float *in)
{
	return g_mod->neural_submit(inst, in);
}

int gf_cuda_neural_collect(void *inst, float *out, uint64_t deadline_ns)
{
	return g_mod->neural_collect(inst, out, deadline_ns);
}

int gf_cuda_neural_reset(void *inst)
{
	return g_mod->neural_reset(inst);
}

void gf_cuda_neural_set_atten_lim(void *inst, float db)
{
	g_mod->neural_set_atten_lim(inst, db);
}

const char *gf_cuda_neural_error(const void *inst)
{
	return g_mod->neural_error(inst);
}

/* ---- the backend table: create loads the module, the rest forward ---- */

static int ld_create(const struct gf_engine_params *p, const struct gf_filter_set *fs, void **inst,
		     struct gf_errbuf *eb)
{
	*inst = NULL;
	const struct gf_cuda_module *m = module();
	if (!m) {
		gf_errbuf_set(eb, "cuda: %s", g_why);
		return GF_E_UNSUPPORTED;
	}
	int err = m->ops->create(p, fs, inst, eb);
	if (!err)
		gf_cost_cuda_ready(); /* the first one ends the start-up (only where the module was loaded) */
	return err;
}

static int ld_prime(void *inst, const float *history, uint32_t frames)
{
	return g_mod->ops->prime(inst, history, frames);
}

static int ld_submit(void *inst, const float *in, uint32_t frames)
{
	return g_mod->ops->submit(inst, in, frames);
}

static int ld_finish(void *inst, float *out, uint64_t deadline_ns)
{
	return g_mod->ops->finish(inst, out, deadline_ns);
}

static int ld_stop(void *inst)
{
	return g_mod->ops->stop ? g_mod->ops->stop(inst) : 1;
}

static void ld_destroy(void *inst)
{
	if (inst)
		g_mod->ops->destroy(inst);
}

static const char *ld_algo_name(const void *inst)
{
	return g_mod->ops->algo_name(inst);
}

static const char *ld_describe(const void *inst)
{
	return g_mod->ops->describe(inst);
}

static int ld_check_memory(const struct gf_engine_params *p, uint32_t taps, struct gf_errbuf *eb)
{
	const struct gf_cuda_module *m = module();
	if (!m || !m->ops->check_memory)
		return 0; /* create() reports a missing module */
	return m->ops->check_memory(p, taps, eb);
}

/* An instance exists only after create() loaded the module, so the others may use g_mod. */
const struct gf_backend_ops gf_cuda_backend = {
	.name = "cuda",
	.create = ld_create,
	.prime = ld_prime,
	.submit = ld_submit,
	.finish = ld_finish,
	.stop = ld_stop,
	.destroy = ld_destroy,
	.algo_name = ld_algo_name,
	.describe = ld_describe,
	.check_memory = ld_check_memory,
};
