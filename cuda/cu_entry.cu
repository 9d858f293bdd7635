/*
 * The module's entry point (libgpufir-cuda.so only; not in the objects that
 * tests and benchmarks link). The module does not link the base library: its
 * two base functions forward to the host that loaded it, so the whole
 * process has one log level and one log format.
 */
#include <stdarg.h>
#include <stddef.h>

extern "C" {
#include "cuda_module.h"
#include "error.h"
#include "log.h"
}

static const struct gf_cuda_host *g_host;

extern "C" __attribute__((visibility("default"))) const struct gf_cuda_module *
gf_cuda_module_v1(const struct gf_cuda_host *host)
{
	if (!host || host->abi != GF_CUDA_MODULE_ABI || !host->vlog || !host->errbuf_vset)
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
