/*
 * CPU backend throughput through the engine API: M samples/s (frames x
 * channels per second of process() time) for the direct and FFT algorithms at
 * 255, 4095, 65535 and 262143 taps, 2 channels, in offline-sized (65536-frame)
 * and live-sized (128-frame) calls, with the 99.9th percentile of the call
 * times (what a live block period must cover; the maximum is mostly the
 * scheduler's).
 *
 * usage: bench_cpu [seconds per case, default 1] [channels, default 2]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "engine.h"
#include "log.h"
#include "timing.h"

#define MAX_CALLS (1u << 20)

/* Time process() calls of @p block frames for at least @p seconds (at least one call). */
static double bench_case(enum gf_algo algo, uint32_t taps, uint32_t ch, uint32_t block, double seconds,
			 char *desc, size_t desc_len, double *p999_us)
{
	*p999_us = 0.0;
	struct gf_filter_set *fs;
	if (gf_filter_set_new(&fs, ch, taps))
		return -1.0;
	for (size_t i = 0; i < (size_t)ch * taps; i++)
		fs->coeffs[i] = gf_bench_rnd() * (float)exp(-4.0 * (double)(i % taps) / taps);
	struct gf_engine_params p = {
		.backend = GF_BACKEND_CPU, .algo = algo, .channels = ch, .max_block = block};
	struct gf_engine *e = NULL;
	struct gf_errbuf eb = {{0}};
	float *buf = malloc((size_t)block * ch * sizeof(float));
	struct gf_bench_calls calls;
	int no_calls = gf_bench_calls_init(&calls, MAX_CALLS);
	double rate = -1.0;
	if (!buf || no_calls || gf_engine_new(&e, &p, fs, &eb)) {
		fprintf(stderr, "bench_cpu: %s\n", eb.msg[0] ? eb.msg : "out of memory");
		goto out;
	}
	snprintf(desc, desc_len, "%s", gf_engine_describe(e));
	for (size_t i = 0; i < (size_t)block * ch; i++)
		buf[i] = gf_bench_rnd();
	/* Warm up (page faults, first partitions), then time whole calls. */
	double t0 = gf_now_s();
	do
		gf_engine_process(e, buf, buf, block);
	while (gf_now_s() - t0 < 0.1 * seconds);
	uint64_t frames = 0;
	t0 = gf_now_s();
	double t = 0.0, prev = 0.0;
	do {
		gf_engine_process(e, buf, buf, block);
		frames += block;
		t = gf_now_s() - t0;
		gf_bench_calls_add(&calls, (t - prev) * 1e6);
		prev = t;
	} while (t < seconds);
	rate = (double)frames * ch / t / 1e6;
	*p999_us = gf_bench_calls_p999(&calls);
out:
	gf_engine_free(e);
	gf_filter_set_free(fs);
	free(buf);
	gf_bench_calls_free(&calls);
	return rate;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	uint32_t ch = argc > 2 ? (uint32_t)atoi(argv[2]) : 2;
	static const uint32_t taps[] = {255, 4095, 65535, 262143};
	static const uint32_t blocks[] = {65536, 128};
	gf_log_set_level(GF_LOG_WARN);
	if (seconds <= 0 || ch == 0) {
		fprintf(stderr, "usage: bench_cpu [seconds per case] [channels]\n");
		return 2;
	}
	printf("gpufir CPU backend, %u channels, single thread, M samples/s = frames x channels / s\n", ch);
	printf("%-6s %8s %6s %12s %10s %14s  %s\n", "algo", "taps", "block", "M samples/s", "ns/frame",
	       "p99.9 call us", "engine");
	for (size_t b = 0; b < sizeof(blocks) / sizeof(blocks[0]); b++) {
		for (size_t t = 0; t < sizeof(taps) / sizeof(taps[0]); t++) {
			for (int a = 0; a < 3; a++) {
				enum gf_algo algo = a == 0   ? GF_ALGO_DIRECT
						    : a == 1 ? GF_ALGO_FFT
							     : GF_ALGO_AUTO;
				char desc[320] = "";
				/* Huge direct cases: one call already holds seconds of work. */
				double s = a == 0 && taps[t] > 60000 ? seconds * 0.05 : seconds;
				double p999_us;
				double r = bench_case(algo, taps[t], ch, blocks[b], s, desc, sizeof(desc),
						      &p999_us);
				printf("%-6s %8u %6u %12.1f %10.1f %14.0f  %s\n",
				       a == 0	? "direct"
				       : a == 1 ? "fft"
						: "auto",
				       taps[t], blocks[b], r, r > 0 ? 1e3 * ch / r : 0.0, p999_us, desc);
				fflush(stdout);
			}
		}
	}
	return 0;
}
