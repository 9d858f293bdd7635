/*
 * The noise suppressor's throughput (prints figures; not a test): the CPU
 * suppressor (suppress.h, one thread), the bank over every core this process
 * may run on (suppress_bank.h with opts.threads: one suppressor a channel,
 * the channels cut into one run a thread, as offline and in batch) and the
 * GPU one (suppress_gpu.h, every channel of a hop in one batch) on the same
 * input, 18 dB of reduction, in calls of 512 frames (the bank's: 8192, as
 * offline's large chunks, so that the hand-off to its threads is not what is
 * timed), for 1 to 1024 channels at 48 and 16 kHz.
 *
 * Per row: x realtime of the whole channel set (seconds of audio per second
 * of wall time) on one core, on all cores and on the GPU, all cores' and the
 * GPU's over one core's, and channels in real time (x realtime x channels:
 * how many such channels one CPU thread, all cores, or the GPU keep up with). The input is 8192 frames of
 * noise and tones, fed round again (a long input for 1024 channels would not fit a small machine); the GPU's
 * new() has run one hop already, so nothing here is start-up.
 *
 * Usage: bench_suppress [SECONDS]   (10 unless told)
 * Without a usable GPU the CPU rows run and the GPU columns say skipped.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "error.h"
#include "gpu.h"
#include "suppress.h"
#include "suppress_bank.h"
#ifdef GPUFIR_HAVE_CUDA
#include "suppress_gpu.h"
#endif

#define CALL 512u
#define SRC_FRAMES 8192u /* a multiple of CALL: the input goes round */

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static float randf(void)
{
	g_rng ^= g_rng >> 12;
	g_rng ^= g_rng << 25;
	g_rng ^= g_rng >> 27;
	return (float)((double)((g_rng * 0x2545F4914F6CDD1Dull) >> 40) / (double)(1u << 23) - 1.0);
}

/* Tones that come and go in noise, a different tone per channel: the gain moves as with speech. */
static float *make_source(uint32_t C, uint32_t rate)
{
	float *x = malloc((size_t)SRC_FRAMES * C * sizeof(float));
	if (!x)
		return NULL;
	for (uint32_t c = 0; c < C; c++) {
		double f = 150.0 + 37.0 * (c % 50);
		for (uint32_t i = 0; i < SRC_FRAMES; i++) {
			double on = (i / 2048) % 2 ? 0.3 : 0.0;
			x[(size_t)i * C + c] = (float)(on * sin(2.0 * M_PI * f * i / rate)) + 0.02f * randf();
		}
	}
	return x;
}

/* The next call's input from the source, round again at its end. */
static void next_call(float *call, const float *src, uint32_t C, uint64_t k)
{
	size_t at = (size_t)(k * CALL % SRC_FRAMES) * C;
	memcpy(call, src + at, (size_t)CALL * C * sizeof(float));
}

/* x realtime of the CPU suppressor; 0 when it could not be made. */
static double time_cpu(uint32_t C, uint32_t rate, double seconds, const float *src, float *call)
{
	struct gf_suppress_params p = {.reduction_db = 18.0};
	struct gf_errbuf eb = {{0}};
	struct gf_suppress *s = NULL;
	int err = gf_suppress_new(&p, C, rate, &s, &eb);
	if (err) {
		printf("cpu %u ch: %s: %s\n", C, gf_strerror(err), eb.msg);
		return 0.0;
	}
	uint64_t calls = (uint64_t)(seconds * rate / CALL);
	double t0 = gf_now_s();
	for (uint64_t k = 0; k < calls; k++) {
		next_call(call, src, C, k);
		gf_suppress_process(s, call, CALL);
	}
	double t = gf_now_s() - t0;
	gf_suppress_free(s);
	return (double)calls * CALL / rate / t;
}

/* The cores this process may run on (taskset, cgroups), as offline's default --threads. */
static uint32_t cores(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 1;
	int n = CPU_COUNT(&set);
	return n > 0 ? (uint32_t)n : 1;
}

/* x realtime of the bank over @p threads threads, in calls of the whole source; 0 when it could not
 * be made. @p big: SRC_FRAMES x C. */
static double time_cpu_all(uint32_t C, uint32_t rate, double seconds, const float *src, float *big,
			   uint32_t threads)
{
	struct gf_suppress_params p = {.reduction_db = 18.0};
	const struct gf_suppress_params **per = malloc(C * sizeof(*per));
	struct gf_suppress_bank_opts o = {.threads = threads};
	struct gf_errbuf eb = {{0}};
	struct gf_suppress_bank *b = NULL;
	for (uint32_t c = 0; per && c < C; c++)
		per[c] = &p;
	int err = per ? gf_suppress_bank_new_ex(per, C, rate, &o, &b, &eb) : GF_E_NOMEM;
	free(per);
	if (err) {
		printf("cpu all %u ch: %s: %s\n", C, gf_strerror(err), eb.msg);
		return 0.0;
	}
	uint64_t calls = (uint64_t)(seconds * rate / SRC_FRAMES) + 1;
	double t0 = gf_now_s();
	for (uint64_t k = 0; k < calls; k++) {
		memcpy(big, src, (size_t)SRC_FRAMES * C * sizeof(float));
		gf_suppress_bank_process(b, big, SRC_FRAMES);
	}
	double t = gf_now_s() - t0;
	gf_suppress_bank_free(b);
	return (double)calls * SRC_FRAMES / rate / t;
}

#ifdef GPUFIR_HAVE_CUDA
/* x realtime of the GPU suppressor; 0 when it could not be made or failed. */
static double time_gpu(uint32_t C, uint32_t rate, double seconds, const float *src, float *call)
{
	struct gf_suppress_params p = {.reduction_db = 18.0};
	struct gf_errbuf eb = {{0}};
	struct gf_suppress_gpu *s = NULL;
	int err = gf_suppress_gpu_new(&p, C, rate, 0, &s, &eb);
	if (err) {
		printf("gpu %u ch: %s: %s\n", C, gf_strerror(err), eb.msg);
		return 0.0;
	}
	uint64_t calls = (uint64_t)(seconds * rate / CALL);
	double t0 = gf_now_s();
	for (uint64_t k = 0; k < calls && !err; k++) {
		next_call(call, src, C, k);
		err = gf_suppress_gpu_process(s, call, CALL);
	}
	double t = gf_now_s() - t0;
	if (err)
		printf("gpu %u ch: %s: %s\n", C, gf_strerror(err), gf_suppress_gpu_error(s));
	gf_suppress_gpu_free(s);
	return err ? 0.0 : (double)calls * CALL / rate / t;
}
#endif

static void row(uint32_t C, uint32_t rate, double seconds, int gpu, uint32_t threads)
{
	float *src = make_source(C, rate), *call = malloc((size_t)CALL * C * sizeof(float));
	float *big = malloc((size_t)SRC_FRAMES * C * sizeof(float));
	if (!src || !call || !big) {
		printf("%5u ch: out of memory\n", C);
		free(src), free(call), free(big);
		return;
	}
	double cpu = time_cpu(C, rate, seconds, src, call), g = 0.0;
	double all = time_cpu_all(C, rate, seconds, src, big, threads);
#ifdef GPUFIR_HAVE_CUDA
	if (gpu)
		g = time_gpu(C, rate, seconds, src, call);
#endif
	printf("%5u %6u %10.1f %10.1f %7.2f", C, rate, cpu, all, cpu > 0.0 ? all / cpu : 0.0);
	if (g > 0.0 && cpu > 0.0)
		printf(" %10.1f %8.2f %10.0f %10.0f %10.0f\n", g, g / cpu, cpu * C, all * C, g * C);
	else
		printf(" %10s %8s %10.0f %10.0f %10s\n", "skipped", "-", cpu * C, all * C, "-");
	fflush(stdout);
	free(src), free(call), free(big);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10.0;
	if (!(seconds > 0.0)) {
		fprintf(stderr, "usage: bench_suppress [SECONDS]\n");
		return 2;
	}
	char desc[256];
	int gpu = gf_cuda_probe(0, desc, sizeof(desc)) == 0;
#ifndef GPUFIR_HAVE_CUDA
	gpu = 0;
	snprintf(desc, sizeof(desc), "built without CUDA");
#endif
	uint32_t threads = cores();
	printf("bench_suppress: %g s of audio per row in %u-frame calls (all cores: %u threads, %u-frame "
	       "calls), 18 dB; GPU: %s%s\n",
	       seconds, CALL, threads, SRC_FRAMES, desc, gpu ? "" : " (GPU skipped)");
	printf("%5s %6s %10s %10s %7s %10s %8s %10s %10s %10s\n", "ch", "rate", "1core xRT", "all xRT",
	       "all/1", "GPU xRT", "GPU/1", "1core chRT", "all chRT", "GPU chRT");
	static const uint32_t rates[] = {48000, 16000}, chans[] = {1, 8, 64, 256, 1024};
	for (size_t r = 0; r < 2; r++)
		for (size_t c = 0; c < sizeof(chans) / sizeof(chans[0]); c++)
			row(chans[c], rates[r], seconds, gpu, threads);
	return 0;
}
