/*
 * The noise suppressor's throughput and per-block latency (prints figures; not a test).
 *
 * Throughput: the CPU suppressor (suppress.h, one thread), the bank over every core this process
 * may run on (suppress_bank.h with opts.threads: one suppressor a channel, the channels cut into
 * one run a thread, as offline and in batch) and the GPU one (suppress_gpu.h, every channel of a
 * hop in one batch) on the same input, 18 dB of reduction, in calls of 512 frames (the bank's:
 * 8192, as offline's large chunks, so that the hand-off to its threads is not what is timed), for
 * 1 to 1024 channels at 48 and 16 kHz, and the GPU columns on to 65536 channels at 48 kHz.
 *
 * Per row: x realtime of the whole channel set (seconds of audio per second of wall time) on one
 * core, on all cores and on the GPU, all cores' and the GPU's over one core's, and channels in
 * real time (x realtime x channels: how many such channels one CPU thread, all cores, or the GPU
 * keep up with). "bank chRT": a bank on the GPU over every core, as offline and batch run it
 * (suppress_bank.h: from 1024 channels the group is cut into parts of one GPU suppressor and thread
 * each, each part's channels exchanged in place by its thread), in calls of 8192 frames run in place.
 * "copy chRT" is the bound the GPU suppressor's host side sets on one thread: the channels in real
 * time of its per-sample exchange alone (each input sample checked and copied into the pinned hop,
 * each output sample copied back), timed on the same buffers. The input is 8192 frames of noise and
 * tones, fed round again (a long input for many channels would not fit a small machine); the GPU's
 * new() has run one hop already, so nothing here is start-up.
 *
 * After the table, the host's memory: memcpy's rate on one thread and on every thread, and the
 * channels those rates allow the GPU rows at the bytes each sample costs the host (the bound they
 * meet: neither PCIe nor the GPU is near its limit at these rates).
 *
 * Latency: what one live block costs the audio thread: 256-frame blocks at 48 kHz, the time of
 * each process call (the median, the 99th percentile and the longest) on one CPU thread and on
 * the GPU, at 1, 64 and 1024 channels; the blocks that complete a hop carry its work (one in
 * every hop / 256), the others only exchange samples. The suppressor's own latency (its hop, in
 * ms) is added to the stream's whichever runs it.
 *
 * Usage: bench_suppress [SECONDS]   (10 unless told; the latency rows run SECONDS of audio too)
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
#include "suppress_pool.h" /* the host memory's rate over threads */
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

/* Call @p k's input of @p frames frames (a divisor of SRC_FRAMES) from the source, round again at
 * its end. */
static void next_frames(float *call, const float *src, uint32_t C, uint64_t k, uint32_t frames)
{
	size_t at = (size_t)(k * frames % SRC_FRAMES) * C;
	memcpy(call, src + at, (size_t)frames * C * sizeof(float));
}

static void next_call(float *call, const float *src, uint32_t C, uint64_t k)
{
	next_frames(call, src, C, k, CALL);
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

/* A bank of @p C channels of one suppressor's settings (18 dB), where @p o puts it. */
static int bank_new(uint32_t C, uint32_t rate, const struct gf_suppress_bank_opts *o,
		    struct gf_suppress_bank **b, struct gf_errbuf *eb)
{
	static const struct gf_suppress_params p = {.reduction_db = 18.0};
	const struct gf_suppress_params **per = malloc(C * sizeof(*per));
	for (uint32_t c = 0; per && c < C; c++)
		per[c] = &p;
	int err = per ? gf_suppress_bank_new_ex(per, C, rate, o, b, eb) : GF_E_NOMEM;
	free(per);
	return err;
}

/* x realtime of the bank over @p threads threads, in calls of the whole source; 0 when it could not
 * be made. @p big: SRC_FRAMES x C. */
static double time_cpu_all(uint32_t C, uint32_t rate, double seconds, const float *src, float *big,
			   uint32_t threads)
{
	struct gf_suppress_bank_opts o = {.threads = threads};
	struct gf_errbuf eb = {{0}};
	struct gf_suppress_bank *b = NULL;
	int err = bank_new(C, rate, &o, &b, &eb);
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

/* x realtime of a bank on the GPU over @p threads threads (offline's and batch's: the group cut
 * into parts of one GPU suppressor and thread each, suppress_bank.h), in calls of SRC_FRAMES frames
 * through @p big, filled from the source once and run again in place (the GPU's and the copies'
 * speed does not depend on the samples; a refill each call would time one thread's memcpy);
 * 0 when the bank could not put every channel on the GPU. */
static double time_gpu_bank(uint32_t C, uint32_t rate, double seconds, const float *src, float *big,
			    uint32_t threads)
{
	struct gf_suppress_bank_opts o = {.gpu = 1, .threads = threads};
	struct gf_errbuf eb = {{0}};
	struct gf_suppress_bank *b = NULL;
	int err = bank_new(C, rate, &o, &b, &eb);
	if (err || gf_suppress_bank_gpu_channels(b) != C) {
		printf("gpu bank %u ch: %s\n", C, err ? eb.msg : "not on the GPU");
		gf_suppress_bank_free(b);
		return 0.0;
	}
	memcpy(big, src, (size_t)SRC_FRAMES * C * sizeof(float));
	uint64_t calls = (uint64_t)(seconds * rate / SRC_FRAMES) + 1;
	double t0 = gf_now_s();
	for (uint64_t k = 0; k < calls && !err; k++)
		err = gf_suppress_bank_process(b, big, SRC_FRAMES);
	double t = gf_now_s() - t0;
	if (err || gf_suppress_bank_gpu_failures(b))
		printf("gpu bank %u ch: %s\n", C, gf_strerror(err ? err : GF_E_CUDA));
	gf_suppress_bank_free(b);
	return err ? 0.0 : (double)calls * SRC_FRAMES / rate / t;
}
#endif

/* ---- the host's memory, the bound of the GPU rows ---- */

#define MEMBW_BYTES (512u << 20) /* per buffer: far past any cache */

struct membw_job {
	float *from, *to;
	size_t floats;
};

static void membw_part(void *arg, uint32_t k, uint32_t parts)
{
	struct membw_job *j = arg;
	size_t a = j->floats * k / parts, b = j->floats * (k + 1) / parts;
	memcpy(j->to + a, j->from + a, (b - a) * sizeof(float));
}

/* GB/s read and written by @p threads threads copying between two large buffers (one thread
 * without a pool); 0 when it could not be measured. */
static double host_copy_gbs(uint32_t threads)
{
	struct membw_job j = {malloc(MEMBW_BYTES), malloc(MEMBW_BYTES), MEMBW_BYTES / sizeof(float)};
	struct gf_suppress_pool *pool = NULL;
	struct gf_errbuf eb = {{0}};
	double gbs = 0.0;
	if (j.from && j.to && (threads < 2 || gf_suppress_pool_new(threads, &pool, &eb) == 0)) {
		memset(j.from, 0, MEMBW_BYTES), memset(j.to, 0, MEMBW_BYTES); /* pages in */
		int rounds = 8;
		double t0 = gf_now_s();
		for (int r = 0; r < rounds; r++) {
			if (pool)
				gf_suppress_pool_run(pool, membw_part, &j);
			else
				membw_part(&j, 0, 1);
		}
		gbs = 2.0 * rounds * MEMBW_BYTES / (gf_now_s() - t0) / 1e9;
	}
	gf_suppress_pool_free(pool);
	free(j.from), free(j.to);
	return gbs;
}

/* The host-memory bound of the GPU rows at @p rate. One instance: 24 B of a sample copied by the
 * calling thread (the caller's copy into the call, 8 B, read and written; the exchange's copies in
 * and out, 16 B). A bank over threads, its group one run of the interleave: 16 B copied over every
 * thread (the exchange's, in place: no gather or scatter) and 8 B of DMA across PCIe in the same
 * memory. */
static void print_memory_bound(uint32_t threads, uint32_t rate)
{
	double one = host_copy_gbs(1), all = host_copy_gbs(threads);
	printf("host memory, memcpy: %.1f GB/s on one thread, %.1f GB/s on %u threads (read + written): "
	       "one GPU instance (24 B a sample on its thread) is bound near %.0f channels at %u Hz, the "
	       "bank over threads (24 B over every thread and the DMA) near %.0f\n",
	       one, all, threads, one * 1e9 / 24.0 / rate, rate, all * 1e9 / 24.0 / rate);
}

/* x realtime of the GPU suppressor's host-side exchange alone (suppress_gpu's: each input sample
 * checked for NaN/Inf and copied into the pinned hop, each output sample copied back), on this
 * thread, over the same buffers the GPU row uses. */
static double time_copy(uint32_t C, uint32_t rate, double seconds, const float *src, float *call)
{
	size_t n = (size_t)CALL * C;
	float *h_in = malloc(n * sizeof(float)), *h_out = calloc(n, sizeof(float));
	if (!h_in || !h_out) {
		free(h_in), free(h_out);
		return 0.0;
	}
	uint64_t calls = (uint64_t)(seconds * rate / CALL);
	volatile int missing = 0; /* kept, so that the check is not optimised away */
	double t0 = gf_now_s();
	for (uint64_t k = 0; k < calls; k++) {
		next_call(call, src, C, k);
		int bad = 0;
		for (size_t i = 0; i < n; i++) {
			float v = call[i];
			bad |= !isfinite(v);
			h_in[i] = isfinite(v) ? v : 0.0f;
			call[i] = h_out[i];
		}
		missing |= bad;
	}
	double t = gf_now_s() - t0;
	free(h_in), free(h_out);
	return (double)calls * CALL / rate / t;
}

/* A column's text: @p v in @p fmt, or "-" when it was not measured (@p ok false or @p v 0). */
static const char *col(char buf[16], double v, int ok, const char *fmt)
{
	if (!ok || !(v > 0.0))
		return "-";
	snprintf(buf, 16, fmt, v);
	return buf;
}

/* One row: the CPU columns up to MAX_CPU_CHANNELS (a single core beyond would take minutes a row),
 * the GPU's and the copy bound's always. */
#define MAX_CPU_CHANNELS 1024u

static void row(uint32_t C, uint32_t rate, double seconds, int gpu, uint32_t threads)
{
	int cpu_too = C <= MAX_CPU_CHANNELS;
	float *src = make_source(C, rate), *call = malloc((size_t)CALL * C * sizeof(float));
	float *big = malloc((size_t)SRC_FRAMES * C * sizeof(float));
	if (!src || !call || !big) {
		printf("%5u ch: out of memory\n", C);
		free(src), free(call), free(big);
		return;
	}
	double cpu = cpu_too ? time_cpu(C, rate, seconds, src, call) : 0.0, g = 0.0, bank = 0.0;
	double all = cpu_too ? time_cpu_all(C, rate, seconds, src, big, threads) : 0.0;
#ifdef GPUFIR_HAVE_CUDA
	if (gpu)
		g = time_gpu(C, rate, seconds, src, call);
	if (gpu && threads > 1 && C >= GF_SUPPRESS_GPU_MIN_CHANNELS)
		bank = time_gpu_bank(C, rate, seconds, src, big, threads);
#endif
	double copy = time_copy(C, rate, seconds, src, call);
	char c1[16], c2[16], c3[16], c4[16], c5[16], c6[16], c7[16], c8[16], c9[16];
	printf("%5u %6u %10s %10s %7s %10s %8s %10s %10s %10s %10s %10.0f\n", C, rate,
	       col(c1, cpu, 1, "%.1f"), col(c2, all, cpu > 0.0, "%.1f"),
	       col(c3, all / cpu, cpu > 0.0, "%.2f"),
	       g > 0.0 ? col(c4, g, 1, "%.1f") : (gpu ? "failed" : "skipped"),
	       col(c5, g / cpu, g > 0.0 && cpu > 0.0, "%.2f"), col(c6, cpu * C, 1, "%.0f"),
	       col(c7, all * C, cpu > 0.0, "%.0f"), col(c8, g * C, 1, "%.0f"), col(c9, bank * C, 1, "%.0f"),
	       copy * C);
	fflush(stdout);
	free(src), free(call), free(big);
}
/* ---- latency of a live block ---- */

#define LIVE_BLOCK 256u /* the live default block_frames */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* "p50 p99 max" in microseconds of @p n call times (sorted here). */
static void print_spread(uint64_t *ns, size_t n)
{
	qsort(ns, n, sizeof(*ns), cmp_u64);
	printf(" %9.1f %9.1f %9.1f", ns[n / 2] / 1e3, ns[n * 99 / 100] / 1e3, ns[n - 1] / 1e3);
}

/* Each of @p n blocks' process time into @p ns; the suppressor's latency in frames, 0 when it
 * could not be made. */
static uint32_t blocks_cpu(uint32_t C, uint32_t rate, const float *src, float *blk, uint64_t *ns, size_t n)
{
	struct gf_suppress_params p = {.reduction_db = 18.0};
	struct gf_errbuf eb = {{0}};
	struct gf_suppress *s = NULL;
	if (gf_suppress_new(&p, C, rate, &s, &eb)) {
		printf("cpu %u ch: %s\n", C, eb.msg);
		return 0;
	}
	for (size_t k = 0; k < n; k++) {
		next_frames(blk, src, C, k, LIVE_BLOCK);
		uint64_t t0 = gf_now_ns();
		gf_suppress_process(s, blk, LIVE_BLOCK);
		ns[k] = gf_now_ns() - t0;
	}
	uint32_t lat = gf_suppress_latency(s);
	gf_suppress_free(s);
	return lat;
}

#ifdef GPUFIR_HAVE_CUDA
static int blocks_gpu(uint32_t C, uint32_t rate, const float *src, float *blk, uint64_t *ns, size_t n)
{
	struct gf_suppress_params p = {.reduction_db = 18.0};
	struct gf_errbuf eb = {{0}};
	struct gf_suppress_gpu *s = NULL;
	int err = gf_suppress_gpu_new(&p, C, rate, 0, &s, &eb);
	if (err) {
		printf("gpu %u ch: %s\n", C, eb.msg);
		return err;
	}
	for (size_t k = 0; k < n && !err; k++) {
		next_frames(blk, src, C, k, LIVE_BLOCK);
		uint64_t t0 = gf_now_ns();
		err = gf_suppress_gpu_process(s, blk, LIVE_BLOCK);
		ns[k] = gf_now_ns() - t0;
	}
	if (err)
		printf("gpu %u ch: %s\n", C, gf_suppress_gpu_error(s));
	gf_suppress_gpu_free(s);
	return err;
}
#endif

static void latency_row(uint32_t C, uint32_t rate, double seconds, int gpu)
{
	size_t n = (size_t)(seconds * rate / LIVE_BLOCK);
	float *src = make_source(C, rate), *blk = malloc((size_t)LIVE_BLOCK * C * sizeof(float));
	uint64_t *ns = malloc((n ? n : 1) * sizeof(*ns));
	uint32_t lat = 0;
	if (n && src && blk && ns)
		lat = blocks_cpu(C, rate, src, blk, ns, n);
	if (lat) {
		printf("%5u %6u %10.2f", C, rate, 1e3 * lat / rate);
		print_spread(ns, n);
#ifdef GPUFIR_HAVE_CUDA
		if (gpu && blocks_gpu(C, rate, src, blk, ns, n) == 0)
			print_spread(ns, n);
		else
#endif
			printf(" %9s %9s %9s", "-", "-", "-");
		printf("\n");
		fflush(stdout);
	}
	(void)gpu;
	free(src), free(blk), free(ns);
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
	printf("%5s %6s %10s %10s %7s %10s %8s %10s %10s %10s %10s %10s\n", "ch", "rate", "1core xRT",
	       "all xRT", "all/1", "GPU xRT", "GPU/1", "1core chRT", "all chRT", "GPU chRT", "bank chRT",
	       "copy chRT");
	static const uint32_t rates[] = {48000, 16000}, chans[] = {1, 8, 64, 256, 1024},
			      many[] = {4096, 16384, 65536};
	for (size_t r = 0; r < 2; r++) {
		for (size_t c = 0; c < sizeof(chans) / sizeof(chans[0]); c++)
			row(chans[c], rates[r], seconds, gpu, threads);
		for (size_t c = 0; gpu && r == 0 && c < sizeof(many) / sizeof(many[0]); c++)
			row(many[c], rates[r], seconds, gpu, threads);
	}
	if (gpu)
		print_memory_bound(threads, 48000);
	printf("\nlatency of a %u-frame live block (process call, microseconds)\n", LIVE_BLOCK);
	printf("%5s %6s %10s %9s %9s %9s %9s %9s %9s\n", "ch", "rate", "adds ms", "cpu p50", "cpu p99",
	       "cpu max", "gpu p50", "gpu p99", "gpu max");
	static const uint32_t live_chans[] = {1, 64, 1024};
	for (size_t c = 0; c < sizeof(live_chans) / sizeof(live_chans[0]); c++)
		latency_row(live_chans[c], 48000, seconds, gpu);
	return 0;
}
