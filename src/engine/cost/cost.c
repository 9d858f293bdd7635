/* "auto by cost" (cost.h): the two estimates and the choice. */
#include "cost.h"

#include <math.h>
#include <stdio.h>

#include "cpu_direct.h"
#include "cpu_fft.h"

double gf_cost_cpu_ns_per_sample(uint32_t taps, uint32_t channels, uint32_t max_block, enum gf_algo algo)
{
	/* The same model and the same choice as the CPU backend's create (cpu_backend.c). */
	double direct = gf_cpu_direct_cost(taps), fft;
	gf_cpu_fft_choose_partition(taps, channels ? channels : 1, max_block ? max_block : 1, &fft);
	if (algo == GF_ALGO_DIRECT)
		return direct;
	if (algo == GF_ALGO_FFT)
		return fft;
	return direct <= fft ? direct : fft;
}

static double cpu_ms(uint64_t samples, double ns_per_sample, uint32_t threads)
{
	return (double)samples * ns_per_sample * 1e-6 / (threads ? threads : 1);
}

enum gf_backend_kind gf_cost_pick(const struct gf_cost_job *job, const struct gf_cost_calib *calib,
				  struct gf_cost_estimate *est)
{
	struct gf_cost_estimate e = {0};
	e.gpu_startup_ms = calib->gpu_startup_ms;
	if (job->samples == 0) {
		e.pick = GF_BACKEND_CUDA;
		snprintf(e.why, sizeof(e.why), "the job's size is unknown (a stream): CUDA if usable");
		*est = e;
		return e.pick;
	}
	e.cpu_ns_per_sample = gf_cost_cpu_ns_per_sample(job->taps, job->channels, job->max_block, job->algo);
	e.cpu_ms = cpu_ms(job->samples, e.cpu_ns_per_sample, job->cpu_threads);
	e.gpu_run_ms = (double)job->samples * calib->gpu_ns_per_sample * 1e-6;
	e.gpu_ms = e.gpu_startup_ms + e.gpu_run_ms;
	e.pick = e.cpu_ms <= e.gpu_ms ? GF_BACKEND_CPU : GF_BACKEND_CUDA;
	snprintf(e.why, sizeof(e.why),
		 "%s: CPU %.1f ms (%.3g samples x %.3g ns, %u taps%s) against GPU %.1f ms (start-up %.0f ms "
		 "%s + run %.1f ms)",
		 e.pick == GF_BACKEND_CPU ? "cpu" : "cuda", e.cpu_ms, (double)job->samples,
		 e.cpu_ns_per_sample, job->taps, job->cpu_threads > 1 ? " over several lanes" : "", e.gpu_ms,
		 e.gpu_startup_ms, calib->measured ? "measured here" : "by default, none measured yet",
		 e.gpu_run_ms);
	*est = e;
	return e.pick;
}

int gf_cost_gpu_certain(uint64_t samples, uint32_t cpu_threads, const struct gf_cost_calib *calib)
{
	if (samples == 0)
		return 1;
	/* The cheapest the CPU can be: a 1-tap filter by the cheaper method. */
	double least = gf_cost_cpu_ns_per_sample(1, 1, 1u << 16, GF_ALGO_AUTO);
	return cpu_ms(samples, least, cpu_threads) >
	       calib->gpu_startup_ms + (double)samples * calib->gpu_ns_per_sample * 1e-6;
}
