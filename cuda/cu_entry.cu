/*
 * The module's entry point (libgpufir-cuda.so only; not in the objects that
 * tests and benchmarks link). The module does not link the base library: its
 * base functions (log, error buffers, test hooks) forward to the host that
 * loaded it, so the whole process has one log level and one log format, and
 * reads its environment in one place.
 */
#include <stdarg.h>
#include <stddef.h>

extern "C" {
#include "cuda_module.h"
#include "error.h"
#include "log.h"
#include "test_hook.h"
}

static const struct gf_cuda_host *g_host;

extern "C" __attribute__((visibility("default"))) const struct gf_cuda_module *
gf_cuda_module_v1(const struct gf_cuda_host *host)
{
	if (!host || host->abi != GF_CUDA_MODULE_ABI || !host->vlog || !host->errbuf_vset || !host->hook_value ||
	    !host->hook_choice)
		return NULL;
	g_host = host;
	return &gf_cu_module;
}

extern "C" void gf_log(enum gf_log_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_host->vlog(level, fmt, ap);
	va_end(ap);
}

extern "C" void gf_errbuf_set(struct gf_errbuf *eb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_host->errbuf_vset(eb, fmt, ap);
	va_end(ap);
}

extern "C" int64_t gf_test_hook_value(const char *name, const char *who)
{
	return g_host->hook_value(name, who);
}

extern "C" int gf_test_hook_choice(const char *name, const char *const *words, int n, const char *who)
{
	return g_host->hook_choice(name, words, n, who);
}
