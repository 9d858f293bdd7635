/*
 * gpufir's DeepFilterNet3 inference, cost and capacity (prints figures; not a
 * test), in one run:
 *   - CPU, one core: CPU-seconds per second of one channel, channels per core;
 *   - CPU, all cores this process may use: one instance a thread, channels in
 *     real time over all of them;
 *   - GPU: the per-hop latency a live stream sees (host in to host out: copy
 *     up, every kernel, copy back) at 1, 64 and 1024 channels, mean, 99.9th
 *     percentile and max, and the largest batch whose 99.9th percentile hop
 *     stays under the hop's 10 ms, with what bounds it: the arithmetic rate
 *     reached (3.31 M multiply-adds a channel-hop), and at 1, 64 and 1024
 *     channels the GPU time of each phase (copies up and back: PCIe; the
 *     networks: compute) against the hop as the host sees it (the rest is
 *     launches and waits); each latency row with the hop's launches and
 *     with the hop as one CUDA graph.
 *
 * Usage: bench_dfn [MODEL.dfn] [HOPS]   (GPUFIR_DFN_MODEL or build/deepfilter/DeepFilterNet3.dfn; 300 hops)
 * Without a usable GPU the CPU rows run and the GPU rows say skipped.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "dfn.h"
#include "timing.h"
#ifdef GPUFIR_HAVE_CUDA
#include "dfn_gpu.h"
#endif

#define HOP 480
#define HOP_S 0.01		       /* seconds of audio a hop */
#define MACS_PER_CHANNEL_HOP 3312000.0 /* the three networks' multiply-adds (docs/neural.md) */

static void fill(float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		x[i] = 0.1f * gf_bench_rnd();
}

struct cpu_job {
	const struct dfn_model *m;
	int channels, hops;
	double seconds;
};

static void *cpu_run(void *arg)
{
	struct cpu_job *j = arg;
	struct dfn_params p;
	struct dfn_cpu *d = NULL;
	struct gf_errbuf eb = {{0}};
	dfn_params_default(&p);
	float *in = malloc((size_t)j->channels * HOP * sizeof *in),
	      *out = malloc((size_t)j->channels * HOP * sizeof *out);
	if (!in || !out || dfn_cpu_new(j->m, j->channels, &p, &d, &eb)) {
		fprintf(stderr, "bench_dfn: CPU instance: %s\n", eb.msg);
		exit(1);
	}
	fill(in, (size_t)j->channels * HOP);
	double t0 = gf_now_s();
	for (int h = 0; h < j->hops; h++)
		dfn_cpu_process(d, in, out, NULL);
	j->seconds = gf_now_s() - t0;
	dfn_cpu_free(d);
	free(in);
	free(out);
	return NULL;
}

static void cpu_rows(const struct dfn_model *m, int hops)
{
	struct cpu_job one = {m, 4, hops / 3, 0.0};
	cpu_run(&one);
	double cost = one.seconds / (one.channels * one.hops * HOP_S);
	printf("CPU, one core: %.4f CPU-s per s of one channel, %.1f channels per core\n", cost, 1.0 / cost);
	cpu_set_t set;
	int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
	struct cpu_job *jobs = calloc((size_t)cores, sizeof *jobs);
	pthread_t *th = calloc((size_t)cores, sizeof *th);
	if (!jobs || !th)
		exit(1);
	double t0 = gf_now_s();
	for (int i = 0; i < cores; i++) {
		jobs[i] = one;
		pthread_create(&th[i], NULL, cpu_run, &jobs[i]);
	}
	for (int i = 0; i < cores; i++)
		pthread_join(th[i], NULL);
	double wall = gf_now_s() - t0, audio = one.hops * HOP_S;
	printf("CPU, all %d cores: %d channels x %.2f s in %.3f s: %.0f channels in real time\n", cores,
	       cores * one.channels, audio, wall, cores * one.channels * audio / wall);
	free(jobs);
	free(th);
}

#ifdef GPUFIR_HAVE_CUDA
/* The GPU time of each phase of a hop, averaged over 20 hops, beside the hop's mean as the host sees it. */
static void phases(struct dfn_gpu *d, const float *in, float *out, int n, double hop_us)
{
	static const char *const names[DFN_GPU_PHASES] = {"copy up",	 "STFT+features", "encoder",
							  "ERB decoder", "DF decoder",	  "spectral+iSTFT",
							  "copy back"};
	double sum[DFN_GPU_PHASES] = {0}, total = 0.0;
	struct dfn_gpu_phases ph;
	struct gf_errbuf eb = {{0}};
	for (int h = 0; h < 20; h++) {
		if (dfn_gpu_profile(d, in, out, &ph, &eb)) {
			printf("  phases: %s\n", eb.msg);
			return;
		}
		for (int i = 0; i < DFN_GPU_PHASES; i++)
			sum[i] += ph.ms[i] * 1e3 / 20;
	}
	printf("  %5d channels, GPU us per phase:", n);
	for (int i = 0; i < DFN_GPU_PHASES; i++) {
		printf(" %s %.1f%s", names[i], sum[i], i + 1 < DFN_GPU_PHASES ? "," : "");
		total += sum[i];
	}
	printf("; %.1f of the hop's %.1f (the rest: launches, waits, host copies)\n", total, hop_us);
}

/* Per-hop latency at @p n channels over @p hops hops after 20 of warm-up, with the phases when @p lat;
 * @return the 99.9th percentile (us), or -1. */
static double gpu_row(const struct dfn_model *m, int n, int hops, int print, int lat, int graphs)
{
	struct dfn_params p;
	struct dfn_consts k;
	struct dfn_gpu *d = NULL;
	struct gf_errbuf eb = {{0}};
	struct gf_bench_calls calls;
	dfn_params_default(&p);
	dfn_consts_init(&k);
	int err = dfn_gpu_new(m, &k, n, &p, &d, &eb);
	if (!err && graphs)
		err = dfn_gpu_use_graphs(d, &eb);
	float *in = malloc((size_t)n * HOP * sizeof *in), *out = malloc((size_t)n * HOP * sizeof *out);
	if (err || !in || !out || gf_bench_calls_init(&calls, (size_t)hops)) {
		printf("GPU, %d channels: skipped (%s)\n", n, err ? eb.msg : "out of memory");
		free(in);
		free(out);
		dfn_gpu_free(d);
		return -1.0;
	}
	fill(in, (size_t)n * HOP);
	double mx = 0.0;
	for (int h = 0; h < 20 + hops; h++) {
		double t0 = gf_now_s();
		if (dfn_gpu_process(d, in, out, NULL, &eb)) {
			printf("GPU, %d channels: %s\n", n, eb.msg);
			exit(1);
		}
		double us = (gf_now_s() - t0) * 1e6;
		if (h >= 20) {
			gf_bench_calls_add(&calls, us);
			mx = us > mx ? us : mx;
		}
	}
	double mean = gf_bench_calls_mean(&calls), p999 = gf_bench_calls_p999(&calls);
	if (print && lat)
		phases(d, in, out, n, mean);
	if (print)
		printf("GPU, %5d channels, %s: hop %8.1f us mean, %8.1f us p99.9, %8.1f us max; "
		       "%6.1f GMAC/s; %.0f channels in real time at this batch\n",
		       n, graphs ? "graphs" : "launches", mean, p999, mx,
		       n * MACS_PER_CHANNEL_HOP / mean * 1e-3, n * HOP_S * 1e6 / mean);
	gf_bench_calls_free(&calls);
	free(in);
	free(out);
	dfn_gpu_free(d);
	return p999;
}

static void gpu_rows(const struct dfn_model *m, int hops)
{
	const int lat[] = {1, 64, 1024};
	for (int i = 0; i < 3; i++)
		if (gpu_row(m, lat[i], hops, 1, 1, 0) < 0.0 || gpu_row(m, lat[i], hops, 1, 0, 1) < 0.0)
			return;
	int best = 0;
	for (int n = 256; n <= 16384; n *= 2) {
		double p = gpu_row(m, n, hops / 3, 1, 0, 1);
		if (p < 0.0 || p > HOP_S * 1e6)
			break;
		best = n;
	}
	printf("GPU: largest batch tried with its 99.9th-percentile hop under %.0f ms: %d channels\n",
	       HOP_S * 1e3, best);
}
#endif

int main(int argc, char **argv)
{
	char path[4096];
	const char *bin = getenv("GPUFIR_BINARY_DIR"), *env = getenv("GPUFIR_DFN_MODEL");
	snprintf(path, sizeof path, "%s/deepfilter/DeepFilterNet3.dfn", bin ? bin : "build");
	const char *model = argc > 1 ? argv[1] : env ? env : path;
	int hops = argc > 2 ? atoi(argv[2]) : 300;
	struct dfn_model *m = NULL;
	struct gf_errbuf eb = {{0}};
	if (hops < 30 || dfn_model_load(model, &m, &eb)) {
		fprintf(stderr, "bench_dfn: %s\nusage: bench_dfn [MODEL.dfn] [HOPS >= 30]\n",
			eb.msg[0] ? eb.msg : "bad HOPS");
		return 2;
	}
	cpu_rows(m, hops);
#ifdef GPUFIR_HAVE_CUDA
	gpu_rows(m, hops);
#else
	printf("GPU: skipped (a build without CUDA)\n");
#endif
	dfn_model_free(m);
	return 0;
}
