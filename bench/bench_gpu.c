/*
 * CUDA backend benchmark (prints figures; not a test).
 *
 *  1. kernel throughput: device work per call (line update + convolution,
 *     no PCIe), timed with CUDA events over large offline-style calls (2^22
 *     frames: in stereo the 8M samples of the CuPy comparison), per algorithm
 *     and tap length: M samples/s and direct-equivalent GMAC/s (taps x
 *     samples). Each row warms the GPU up for 200 ms (clocks), then reports
 *     the median of 7 timings of 5 calls;
 *  2. FFT shape sweep: partitions and long hops forced per tap length;
 *  3. process() throughput including PCIe copies, pinned and pageable;
 *  4. live round trip: process() wall time of small blocks, median and p99.
 *  5. bench_gpu split [TAPS [BLOCK [BLOCKS]]]: a paced live block's round trip split
 *     into the host's submit, the work's span on the GPU and the rest, per path and
 *     for the bare round trips.
 *
 * Usage: bench_gpu [quick]     (GPUFIR_BENCH_CHANNELS overrides the channel count)
 *        bench_gpu sweep       kernel rows and the FFT shape sweep only
 *        bench_gpu startup     CUDA's start-up steps in this fresh process (ms);
 *                              GF_T0_NS (date +%s%N before exec) adds the time to main()
 *        bench_gpu hold SECS   keep a CUDA context open for SECS seconds
 *        bench_gpu split [TAPS [BLOCK [BLOCKS]]]   item 5 only (4095 taps, 64 frames, 3000 blocks)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "clock.h"
#include "error.h"
#include "filter_set.h"
#include "gpu.h"

#ifdef GPUFIR_HAVE_CUDA
#include "cu_hooks.h"
#include "cuda_floor.h"

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static float randf(void)
{
	g_rng ^= g_rng >> 12;
	g_rng ^= g_rng << 25;
	g_rng ^= g_rng >> 27;
	return (float)((double)((g_rng * 0x2545F4914F6CDD1Dull) >> 40) / (double)(1u << 23) - 1.0);
}

static struct gf_filter_set *make_taps(uint32_t ch, uint32_t taps)
{
	struct gf_filter_set *fs = NULL;
	if (gf_filter_set_new(&fs, ch, taps))
		return NULL;
	for (size_t i = 0; i < (size_t)ch * taps; i++)
		fs->coeffs[i] = randf() * expf(-(float)(i % taps) / (float)(taps / 4 + 1));
	return fs;
}

static void *make_inst(enum gf_algo algo, uint32_t ch, uint32_t taps, uint32_t max_block,
		       struct gf_filter_set **fso)
{
	struct gf_filter_set *fs = make_taps(ch, taps);
	struct gf_engine_params p = {
		.backend = GF_BACKEND_CUDA, .algo = algo, .channels = ch, .max_block = max_block};
	struct gf_errbuf eb = {{0}};
	void *inst = NULL;
	int err = fs ? gf_cuda_backend.create(&p, fs, &inst, &eb) : GF_E_NOMEM;
	if (err) {
		fprintf(stderr, "create %u taps: %s: %s\n", taps, gf_strerror(err), eb.msg);
		gf_filter_set_free(fs);
		return NULL;
	}
	*fso = fs;
	return inst;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* 1 and 2: device-only throughput. */
static void kernel_row(enum gf_algo algo, uint32_t ch, uint32_t taps, uint32_t max_block, int force_r)
{
	struct gf_filter_set *fs = NULL;
	void *inst = make_inst(algo, ch, taps, max_block, &fs);
	if (!inst)
		return;
	if (force_r)
		gf_cuda_force_direct_shape(inst, force_r);
	uint32_t frames = gf_cuda_chunk_frames(inst);
	enum { RUNS = 7, REPS = 5 };
	double ms[RUNS], host[RUNS], t0 = gf_now_s();
	int err = 0;
	/* Warm-up: the SM clock idles at 345 MHz and needs a while under load. */
	for (int i = 0; !err && (i < 2 || gf_now_s() - t0 < 0.2); i++)
		err = gf_cuda_time_calls(inst, frames, REPS, &ms[0], &host[0]);
	for (int r = 0; r < RUNS && !err; r++)
		err = gf_cuda_time_calls(inst, frames, REPS, &ms[r], &host[r]);
	if (err) {
		printf("kernel  %-6s taps %8u: %s\n", gf_cuda_backend.algo_name(inst), taps,
		       gf_strerror(err));
	} else {
		double sorted[RUNS];
		memcpy(sorted, ms, sizeof(sorted));
		qsort(sorted, RUNS, sizeof(double), cmp_d);
		double med = sorted[RUNS / 2], sps = (double)frames * ch / (med * 1e-3);
		printf("kernel  %-6s taps %8u ch %2u call %7u  %-16s hop %7u N %7u  %8.3f ms (min %.3f max "
		       "%.3f, "
		       "host %6.3f)  %8.1f Msamples/s  %9.1f GMAC/s\n",
		       gf_cuda_backend.algo_name(inst), taps, ch, frames, gf_cuda_taps_where(inst),
		       gf_cuda_fft_partition(inst), gf_cuda_fft_size(inst), med, sorted[0], sorted[RUNS - 1],
		       host[RUNS / 2], sps / 1e6, sps * taps / 1e9);
	}
	fflush(stdout);
	gf_cuda_backend.destroy(inst);
	gf_filter_set_free(fs);
}

/* 2: one FFT row with the shape forced through the environment variable @p var. */
static void shape_row(uint32_t ch, uint32_t taps, uint32_t max_block, const char *var, uint32_t value)
{
	char v[16];
	snprintf(v, sizeof(v), "%u", value);
	setenv(var, v, 1);
	printf("%-9s %8u  ", var + 16, value); /* PARTITION or HOP */
	kernel_row(GF_ALGO_FFT, ch, taps, max_block, 0);
	unsetenv(var);
}

/* 3: whole process() calls with PCIe copies; pinned or pageable host memory. */
static void process_row(enum gf_algo algo, uint32_t ch, uint32_t taps, uint32_t block, uint64_t total,
			int pinned)
{
	struct gf_filter_set *fs = NULL;
	void *inst = make_inst(algo, ch, taps, block, &fs);
	if (!inst)
		return;
	size_t n = (size_t)block * ch;
	float *buf = malloc(n * sizeof(float));
	if (!buf)
		return;
	for (size_t i = 0; i < n; i++)
		buf[i] = randf();
	int pin_ok = pinned && gf_cuda_pin(buf, n * sizeof(float)) == 0;
	gf_backend_process(&gf_cuda_backend, inst, buf, buf, block); /* warm-up */
	uint64_t calls = total / block;
	double t0 = gf_now_s();
	int err = 0;
	for (uint64_t i = 0; i < calls && !err; i++)
		err = gf_backend_process(&gf_cuda_backend, inst, buf, buf, block);
	double dt = gf_now_s() - t0;
	printf("process %-6s taps %8u ch %2u block %7u %-8s %8.1f Msamples/s (%llu calls, %.3f s)%s\n",
	       gf_cuda_backend.algo_name(inst), taps, ch, block, pin_ok ? "pinned" : "pageable",
	       (double)calls * n / dt / 1e6, (unsigned long long)calls, dt, err ? "  ERROR" : "");
	fflush(stdout);
	if (pin_ok)
		gf_cuda_unpin(buf);
	free(buf);
	gf_cuda_backend.destroy(inst);
	gf_filter_set_free(fs);
}

/* 4: live blocks, wall time of each process() call. */
static void latency_row(enum gf_algo algo, uint32_t ch, uint32_t taps, uint32_t block, int calls)
{
	struct gf_filter_set *fs = NULL;
	void *inst = make_inst(algo, ch, taps, block, &fs);
	if (!inst)
		return;
	size_t n = (size_t)block * ch;
	float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
	double *t = malloc((size_t)calls * sizeof(double));
	if (!x || !y || !t)
		return;
	for (size_t i = 0; i < n; i++)
		x[i] = randf();
	for (int i = 0; i < 50; i++)
		gf_backend_process(&gf_cuda_backend, inst, x, y, block);
	for (int i = 0; i < calls; i++) {
		double t0 = gf_now_s();
		gf_backend_process(&gf_cuda_backend, inst, x, y, block);
		t[i] = gf_now_s() - t0;
	}
	qsort(t, (size_t)calls, sizeof(double), cmp_d);
	printf("live    %-6s taps %8u ch %2u block %5u  P %5u  median %7.1f us  p99 %7.1f us  max %7.1f us  "
	       "(block lasts %.0f us at 48 kHz)\n",
	       gf_cuda_backend.algo_name(inst), taps, ch, block, gf_cuda_fft_partition(inst),
	       t[calls / 2] * 1e6, t[calls * 99 / 100] * 1e6, t[calls - 1] * 1e6, block / 48000.0 * 1e6);
	fflush(stdout);
	free(x);
	free(y);
	free(t);
	gf_cuda_backend.destroy(inst);
	gf_filter_set_free(fs);
}

/* 5 (split): where a paced live block's round trip goes. For each block: the host's time
 * in submit (staging copy, launches, copies enqueued), the span of its work on the GPU
 * (events on the compute stream), and the rest (the launch's way to the GPU, the result's
 * way back, the host's copy out). Against the bare round trips measured the same way. */
struct split_run {
	int n;
	double *total, *enq, *gpu, *rest;
};

static void split_sleep_until(double t)
{
	struct timespec ts = {(time_t)t, (long)((t - (double)(time_t)t) * 1e9)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
		;
}

static double pctl(double *v, int n, double q)
{
	qsort(v, (size_t)n, sizeof(double), cmp_d);
	return v[(int)(q * (n - 1))];
}

static void split_print(const char *what, struct split_run *r)
{
	int n = r->n;
	if (n < 1) {
		printf("split  %-44s  no figures\n", what);
		return;
	}
	printf("split  %-44s  total %6.1f / %6.1f  submit %5.1f / %5.1f  gpu %6.1f / %6.1f  rest %6.1f / "
	       "%6.1f "
	       "us\n",
	       what, pctl(r->total, n, 0.5), pctl(r->total, n, 0.99), pctl(r->enq, n, 0.5),
	       pctl(r->enq, n, 0.99), pctl(r->gpu, n, 0.5), pctl(r->gpu, n, 0.99), pctl(r->rest, n, 0.5),
	       pctl(r->rest, n, 0.99));
	fflush(stdout);
}

/* One block: the round trip, then its split (outside the timed part). */
static int split_step(void *inst, struct gf_cuda_floor *f, float *x, float *y, uint32_t block, double *total,
		      double *enq, double *gpu)
{
	double t0 = gf_now_s();
	int err = f ? gf_cuda_floor_trip(f, x, y) : gf_backend_process(&gf_cuda_backend, inst, x, y, block);
	*total = (gf_now_s() - t0) * 1e6;
	if (!err)
		err = f ? gf_cuda_floor_last_split(f, enq, gpu) : gf_cuda_last_split(inst, enq, gpu);
	return err;
}

static void split_row(const char *what, void *inst, struct gf_cuda_floor *f, uint32_t ch, uint32_t block,
		      int blocks, int paced)
{
	size_t n = (size_t)block * ch;
	float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
	struct split_run r = {0};
	r.total = malloc((size_t)blocks * sizeof(double));
	r.enq = malloc((size_t)blocks * sizeof(double));
	r.gpu = malloc((size_t)blocks * sizeof(double));
	r.rest = malloc((size_t)blocks * sizeof(double));
	int armed = f ? gf_cuda_floor_split(f) : gf_cuda_split_calls(inst);
	if (x && y && r.total && r.enq && r.gpu && r.rest && armed == 0) {
		for (size_t i = 0; i < n; i++)
			x[i] = randf();
		double period = block / 48000.0, t0 = gf_now_s(), tot, e, g;
		for (int i = 0; i < 50; i++)
			(void)split_step(inst, f, x, y, block, &tot, &e, &g);
		for (int k = 0; k < blocks; k++) {
			if (paced)
				split_sleep_until(t0 + (k + 1) * period);
			if (split_step(inst, f, x, y, block, &tot, &e, &g))
				break;
			r.total[r.n] = tot, r.enq[r.n] = e, r.gpu[r.n] = g, r.rest[r.n] = tot - e - g;
			r.n++;
		}
	}
	char label[96];
	snprintf(label, sizeof(label), "%s%s", what, paced ? "" : " (back to back)");
	split_print(label, &r);
	free(x), free(y), free(r.total), free(r.enq), free(r.gpu), free(r.rest);
}

static void split_inst(const char *what, enum gf_algo algo, uint32_t ch, uint32_t taps, uint32_t block,
		       int blocks, int paced)
{
	struct gf_filter_set *fs = NULL;
	void *inst = make_inst(algo, ch, taps, block, &fs);
	if (!inst)
		return;
	char label[96];
	snprintf(label, sizeof(label), "%s (%s)", what, gf_cuda_block_path(inst));
	split_row(label, inst, NULL, ch, block, blocks, paced);
	gf_cuda_backend.destroy(inst);
	gf_filter_set_free(fs);
}

static void split_floor(const char *what, int shape, uint32_t ch, uint32_t block, int blocks, int paced)
{
	struct gf_cuda_floor *f = NULL;
	if (gf_cuda_floor_new(&f, 0, block * ch, shape) == 0)
		split_row(what, NULL, f, ch, block, blocks, paced);
	gf_cuda_floor_free(f);
}

/* bench_gpu split [TAPS [BLOCK [BLOCKS]]]: 2 ch, paced at 48 kHz; medians / p99. The fused rows
 * repeat with the kernel's shape knobs (GPUFIR_CUDA_LIVE_WARPS, GPUFIR_CUDA_LIVE_R). */
static int split(int argc, char **argv)
{
	uint32_t taps = argc > 2 ? (uint32_t)atoi(argv[2]) : 4095,
		 block = argc > 3 ? (uint32_t)atoi(argv[3]) : 64;
	int blocks = argc > 4 ? atoi(argv[4]) : 3000;
	const uint32_t ch = 2;
	printf("split: 2 ch x %u taps, blocks of %u frames, %d blocks, medians / p99\n", taps, block, blocks);
	split_floor("floor: pinned copies + sync", GF_CUDA_FLOOR_COPY, ch, block, blocks, 1);
	split_floor("floor: mapped + polled word", GF_CUDA_FLOOR_FLAG, ch, block, blocks, 1);
	split_floor("floor: mapped + polled word", GF_CUDA_FLOOR_FLAG, ch, block, blocks, 0);
	setenv("GPUFIR_CUDA_LIVE", "0", 1);
	split_inst("direct staged", GF_ALGO_DIRECT, ch, taps, block, blocks, 1);
	unsetenv("GPUFIR_CUDA_LIVE"); /* the default: the faster of fused and staged, timed at create */
	split_inst("direct default", GF_ALGO_DIRECT, ch, taps, block, blocks, 1);
	split_inst("fft", GF_ALGO_FFT, ch, taps, block, blocks, 1);
	/* Knobs (empty: automatic): warps a block, outputs a lane, taps a slice (16384: one slice,
	 * the whole filter in each block). The second row runs back to back. */
	static const char *knobs[][3] = {{"", "", ""},	  {"", "", ""},	    {"", "", "16384"},
					 {"", "", "256"}, {"", "", "1024"}, {"4", "", ""}};
	static const char *vars[3] = {"GPUFIR_CUDA_LIVE_WARPS", "GPUFIR_CUDA_LIVE_R",
				      "GPUFIR_CUDA_LIVE_SLICE"};
	setenv("GPUFIR_CUDA_LIVE", "1", 1);
	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		char what[64];
		for (int k = 0; k < 3; k++)
			setenv(vars[k], knobs[i][k], 1);
		snprintf(what, sizeof(what), "direct warps %s R %s slice %s",
			 *knobs[i][0] ? knobs[i][0] : "auto", *knobs[i][1] ? knobs[i][1] : "auto",
			 *knobs[i][2] ? knobs[i][2] : "auto");
		split_inst(what, GF_ALGO_DIRECT, ch, taps, block, blocks, i != 1);
	}
	unsetenv("GPUFIR_CUDA_LIVE");
	for (int k = 0; k < 3; k++)
		unsetenv(vars[k]);
	return 0;
}

/* CUDA's start-up steps, in a fresh process: where gpufir's fixed cost goes. */
static int startup(void)
{
	static const char *names[GF_CUDA_STARTUP_STEPS] = GF_CUDA_STARTUP_NAMES;
	double ms[GF_CUDA_STARTUP_STEPS] = {0};
	const char *t0 = getenv("GF_T0_NS");
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (t0)
		printf("startup  exec to main: %.1f ms\n",
		       ((double)ts.tv_sec * 1e9 + (double)ts.tv_nsec - strtod(t0, NULL)) / 1e6);
	int err = gf_cuda_time_startup(0, ms);
	for (int i = 0; i < GF_CUDA_STARTUP_STEPS; i++)
		printf("startup  %-44s %8.1f ms\n", names[i], ms[i]);
	/* The instance of the offline benchmark: 65535 taps, stereo, 65536-frame blocks. */
	struct gf_filter_set *fs = NULL;
	double a = gf_now_s();
	void *inst = err ? NULL : make_inst(GF_ALGO_AUTO, 2, 65535, 65536, &fs);
	double b = gf_now_s();
	if (inst)
		gf_cuda_backend.destroy(inst);
	double c = gf_now_s();
	printf("startup  %-44s %8.1f ms\n", "create 65535 taps x 2 (AUTO, fft)", (b - a) * 1e3);
	printf("startup  %-44s %8.1f ms\n", "destroy it", (c - b) * 1e3);
	gf_filter_set_free(fs);
	clock_gettime(CLOCK_REALTIME, &ts);
	printf("startup  main returns at %.0f (ns since the epoch)\n",
	       (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec);
	fflush(stdout);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	char desc[256];
	if (argc > 1 && strcmp(argv[1], "startup") == 0)
		return startup();
	if (gf_cuda_probe(0, desc, sizeof(desc))) {
		printf("bench_gpu: %s\n", desc);
		return 0;
	}
	if (argc > 2 && strcmp(argv[1], "hold") == 0) {
		struct gf_filter_set *fs = NULL;
		void *inst = make_inst(GF_ALGO_DIRECT, 1, 16, 64, &fs);
		printf("hold: context open for %s s\n", argv[2]);
		fflush(stdout);
		sleep((unsigned)atoi(argv[2]));
		if (inst)
			gf_cuda_backend.destroy(inst);
		gf_filter_set_free(fs);
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "split") == 0)
		return split(argc, argv);
	int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
	int sweep_only = argc > 1 && strcmp(argv[1], "sweep") == 0;
	const char *env = getenv("GPUFIR_BENCH_CHANNELS");
	uint32_t ch = env ? (uint32_t)atoi(env) : 2;
	printf("device: %s, %u channels\n", desc, ch);
	const uint32_t big = 1u << 22; /* calls of 2^22 frames: 8M samples in stereo, as CuPy's array */

	static const uint32_t dtaps[] = {1024, 2048, 4096, 8192, 16384};
	for (size_t i = 0; i < sizeof(dtaps) / sizeof(dtaps[0]); i++)
		kernel_row(GF_ALGO_DIRECT, ch, dtaps[i], big, 0);
	kernel_row(GF_ALGO_DIRECT, 1, 8192, big, 0); /* one channel fits a constant bank */
	static const uint32_t ftaps[] = {1024, 4096, 16384, 65536, 262144, 1048576};
	for (size_t i = 0; i < sizeof(ftaps) / sizeof(ftaps[0]); i++)
		kernel_row(GF_ALGO_FFT, ch, ftaps[i], big, 0);
	if (!quick) {
		/* Forced shapes around the model's choice: partitions (UPOLS) and long
		 * hops of 2, 4 and 8 times the history (the next power of two >= taps). */
		static const struct {
			uint32_t taps, part[2];
		} sw[] = {
			{1024, {1024, 0}},	 {4096, {1024, 4096}},	    {16384, {4096, 16384}},
			{65536, {16384, 65536}}, {262144, {65536, 262144}}, {1048576, {262144, 1048576}},
		};
		for (size_t i = 0; i < sizeof(sw) / sizeof(sw[0]); i++) {
			for (int j = 0; j < 2; j++)
				if (sw[i].part[j])
					shape_row(ch, sw[i].taps, big, "GPUFIR_CUDA_FFT_PARTITION",
						  sw[i].part[j]);
			for (uint32_t k = 1; k <= 3 && (sw[i].taps << k) <= big; k++)
				shape_row(ch, sw[i].taps, big, "GPUFIR_CUDA_FFT_HOP", sw[i].taps << k);
		}
	}
	if (sweep_only)
		return 0;

	process_row(GF_ALGO_AUTO, ch, 65535, 65536, 48000u * 120, 1);
	process_row(GF_ALGO_AUTO, ch, 65535, 65536, 48000u * 120, 0);
	process_row(GF_ALGO_AUTO, ch, 1024, 65536, 48000u * 120, 1);
	process_row(GF_ALGO_FFT, ch, 1048576, 65536, 48000u * 120, 1);

	static const uint32_t lblocks[] = {64, 256, 1024};
	static const uint32_t ltaps[] = {1024, 16384, 262144};
	for (size_t i = 0; i < 3; i++)
		for (size_t j = 0; j < 3; j++)
			latency_row(GF_ALGO_AUTO, ch, ltaps[j], lblocks[i], quick ? 500 : 3000);
	latency_row(GF_ALGO_DIRECT, ch, 1024, 64, quick ? 500 : 3000);
	latency_row(GF_ALGO_FFT, ch, 1024, 64, quick ? 500 : 3000);
	latency_row(GF_ALGO_FFT, ch, 1048576, 256, quick ? 500 : 3000);
	return 0;
}
#else
int main(void)
{
	printf("bench_gpu: this gpufir was built without CUDA support\n");
	return 0;
}
#endif
