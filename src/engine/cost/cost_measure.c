/*
 * Measuring CUDA's start-up in a process that loads the CUDA module
 * (cost.h). In the process: from just before the module is loaded to the
 * first instance ready (loading libcudart and libcufft, the driver, the
 * context, the first plans and spectra; a prewarm started early may overlap
 * the filter's design, which only makes the figure larger, i.e. the choice
 * more careful). At exit: exit handlers run in the reverse order of their
 * registration, so one registered before the module loads runs after every
 * handler the runtime registers while it loads and starts (its teardown of
 * the context), and one registered once the first instance is ready runs
 * before them: the two time the teardown, and the last writes the cache.
 * (Teardown done in the libraries' ELF destructors, after every exit
 * handler, is not seen: scripts/check-cuda-startup.sh prints the cached
 * figure beside the whole-process difference to show what is missed.)
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "backend.h"
#include "clock.h"
#include "cost.h"
#include "log.h"

static double g_load_ms, g_inproc_ms, g_exit0_ms;
static atomic_int g_armed;

static void exit_begin(void)
{
	if (atomic_load(&g_armed))
		g_exit0_ms = (1e3 * gf_now_s());
}

static void exit_end(void)
{
	if (atomic_load(&g_armed) && g_exit0_ms > 0.0)
		gf_cost_record_startup(g_inproc_ms, (1e3 * gf_now_s()) - g_exit0_ms);
}

void gf_cost_cuda_loading(void)
{
	static atomic_flag once = ATOMIC_FLAG_INIT;
	if (atomic_flag_test_and_set(&once))
		return;
	g_load_ms = (1e3 * gf_now_s());
	(void)atexit(exit_end);
}

void gf_cost_cuda_loaded(void)
{
	/* Nothing yet: the runtime registers more exit handlers as it starts. */
}

void gf_cost_cuda_ready(void)
{
	static atomic_flag once = ATOMIC_FLAG_INIT;
	if (g_load_ms <= 0.0 || atomic_flag_test_and_set(&once))
		return;
	g_inproc_ms = (1e3 * gf_now_s()) - g_load_ms;
	(void)atexit(exit_begin); /* after the runtime's own: runs before them */
	atomic_store(&g_armed, 1);
}

void gf_cost_record_startup(double inproc_ms, double exit_ms)
{
	char path[4096];
	if (gf_cost_cache_path(path, sizeof(path)))
		return;
	struct gf_cost_calib c;
	(void)gf_cost_cache_load(path, &c);
	double m = inproc_ms + exit_ms;
	/* The first measurement replaces the default; later ones average in (the
	 * driver's start varies with what else holds the GPU). */
	c.gpu_startup_ms = c.measured ? 0.5 * (c.gpu_startup_ms + m) : m;
	c.gpu_exit_ms = c.measured ? 0.5 * (c.gpu_exit_ms + exit_ms) : exit_ms;
	c.measured = 1;
	struct gf_errbuf eb = {{0}};
	if (gf_cost_cache_store(path, &c, &eb))
		gf_debug("cost cache not written: %s", eb.msg);
	else
		gf_debug("cost cache %s: CUDA start-up measured %.1f ms (%.1f in the run, %.1f at exit): now "
			 "%.1f ms",
			 path, m, inproc_ms, exit_ms, c.gpu_startup_ms);
}
