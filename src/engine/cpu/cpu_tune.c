/* Tuning knobs and the SIMD choice the CPU convolvers share: a file of its own below them,
 * since the backend and every convolver read it (cpu_tune.h). */
#include "cpu_tune.h"

static struct gf_cpu_tuning tuning; /* control thread only */

void gf_cpu_set_tuning(const struct gf_cpu_tuning *t)
{
	tuning = *t;
}

void gf_cpu_get_tuning(struct gf_cpu_tuning *t)
{
	*t = tuning;
}

int gf_cpu_use_avx2(void)
{
#ifdef GF_CPU_X86
	__builtin_cpu_init();
	return !tuning.baseline_kernels && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
	return 0;
#endif
}
