/*
 * The neural stage's GPU policy (neural_bank.h), driven by fake backends, so
 * that it runs without a GPU: a "GPU" (submit/collect) and a CPU standby that
 * compute the same function, each active channel's hop times 0.5, two hops
 * late (a model latency of 960 frames), so the stage's output is known frame
 * for frame: 0.5 x the input 1440 frames before. The fake GPU is late, fails
 * or hangs on the hop the case chooses.
 * - late: the hop not back by the deadline mutes its channels for the frames
 *   of that call, is counted, stays on the GPU and is collected at the next
 *   call, whose frames are the model's again (no failure, no drop);
 * - failure (submit answers GF_E_CUDA): the stage switches to the CPU standby
 *   at once, counted; the standby restarts on the last hops kept for it, so
 *   the output goes on without one frame off, the failed hop included;
 * - hang (a hop never back): its calls are late, the next hops dropped,
 *   until the hop has been in flight GF_NEURAL_HANG_NS; then the standby takes
 *   over, counted, its output exact from that hop on (where a loaded machine
 *   makes the standby's first job late too, that hop muted, counted late);
 * - the return: try_return probes the GPU (reset, hops of silence) while it
 *   is still failing: no return, the next try later; once healthy: the GPU is
 *   taken back at the next hop, counted, and its output is exact again after
 *   its latency (the GPU restarts clean);
 * - a GPU that cannot be made: the CPU alone, exact, nothing counted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "neural_bank.h"
#include "testutil.h"

#define CH 3u
#define HOP GF_NEURAL_HOP
#define MODEL_LAT (2u * HOP)
#define LAT (HOP + MODEL_LAT)
#define HOPS 160u
#define FRAMES (HOPS * HOP)

/* ---- the fakes: per channel, the last two hops in; out = 0.5 x the older ---- */

struct chan2 {
	float h1[HOP], h2[HOP];
};

static void model_hop(struct chan2 *c, const float *in, float *out)
{
	for (uint32_t i = 0; i < HOP; i++)
		out[i] = 0.5f * c->h2[i];
	memcpy(c->h2, c->h1, sizeof(c->h1));
	memcpy(c->h1, in, sizeof(c->h1));
}

struct fake {
	uint32_t n;
	struct chan2 *ch;
	float *out; /* the GPU's: the hop in flight's output */
	int pending;
	uint64_t arrives_ns; /* when the hop in flight is back; UINT64_MAX: never (hung) */
	int failed;	     /* sticky, as CUDA's errors: until a reset while healthy */
};

/* What the fake GPU does: on its submit number late_at, fail_at, hang_at (0: never). */
static struct {
	uint32_t submits, late_at, fail_at, hang_at;
	uint64_t late_ns;
	int healthy, cannot_create;
} gpu;

static int fake_create(const struct gf_neural_params *p, uint32_t channels, void **out, struct gf_errbuf *eb)
{
	(void)p;
	struct fake *f = calloc(1, sizeof(*f));
	CHECK(f && (f->ch = calloc(channels, sizeof(*f->ch))) &&
	      (f->out = calloc(channels, HOP * sizeof(float))));
	f->n = channels;
	*out = f;
	(void)eb;
	return 0;
}

static int fake_gpu_create(const struct gf_neural_params *p, uint32_t channels, void **out,
			   struct gf_errbuf *eb)
{
	if (gpu.cannot_create) {
		gf_errbuf_set(eb, "fake: no GPU here");
		*out = NULL;
		return GF_E_NOGPU;
	}
	return fake_create(p, channels, out, eb);
}

static void fake_process(void *inst, uint32_t first, uint32_t n, const float *in, float *out)
{
	struct fake *f = inst;
	for (uint32_t k = 0; k < n; k++)
		model_hop(&f->ch[first + k], in + (size_t)k * HOP, out + (size_t)k * HOP);
}

static void fake_atten(void *inst, uint32_t first, uint32_t n, float db)
{
	(void)inst;
	(void)first;
	(void)n;
	(void)db;
}

static uint32_t fake_latency(const void *inst)
{
	(void)inst;
	return MODEL_LAT;
}

static void fake_free(void *inst)
{
	struct fake *f = inst;
	if (f) {
		free(f->ch);
		free(f->out);
		free(f);
	}
}

static int fake_reset(void *inst, uint32_t first, uint32_t n)
{
	struct fake *f = inst;
	memset(f->ch + first, 0, n * sizeof(*f->ch));
	f->pending = 0;
	if (f->failed && gpu.healthy)
		f->failed = 0;
	return f->failed;
}

static int fake_submit(void *inst, const float *in)
{
	struct fake *f = inst;
	uint32_t k = ++gpu.submits;
	if (k == gpu.fail_at)
		f->failed = GF_E_CUDA;
	if (f->failed)
		return f->failed;
	if (f->pending)
		return GF_E_BUSY;
	fake_process(f, 0, f->n, in, f->out);
	f->pending = 1;
	uint64_t now = gf_now_ns();
	f->arrives_ns = k == gpu.hang_at ? UINT64_MAX : k == gpu.late_at ? now + gpu.late_ns : now;
	if (k == gpu.hang_at && !gpu.healthy)
		f->failed = GF_E_TIMEOUT; /* whatever comes next fails, until healthy */
	return 0;
}

static int fake_collect(void *inst, float *out, uint64_t deadline_ns)
{
	struct fake *f = inst;
	if (!f->pending)
		return GF_E_INVAL;
	if (f->arrives_ns > gf_now_ns() && (!deadline_ns || deadline_ns < f->arrives_ns)) {
		if (!deadline_ns)
			return GF_E_TIMEOUT;	/* offline: a hang, at once (the GPU's after its bound) */
		gf_sleep_until_ns(deadline_ns); /* a wait bounded by the deadline, as the GPU's */
		return GF_NEURAL_LATE; /* never GF_E_TIMEOUT: the stage's own bound must find a hang */
	}
	gf_sleep_until_ns(f->arrives_ns);
	f->pending = 0;
	memcpy(out, f->out, (size_t)f->n * HOP * sizeof(float));
	return 0;
}

static const char *fake_error(const void *inst)
{
	(void)inst;
	return "fake GPU: failed as the test asked";
}

static const struct gf_neural_ops cpu_ops = {
	.name = "fake CPU",
	.create = fake_create,
	.process = fake_process,
	.set_atten_lim = fake_atten,
	.latency = fake_latency,
	.free = fake_free,
	.reset = fake_reset,
};

static const struct gf_neural_ops gpu_ops = {
	.name = "fake GPU",
	.create = fake_gpu_create,
	.process = fake_process,
	.set_atten_lim = fake_atten,
	.latency = fake_latency,
	.free = fake_free,
	.reset = fake_reset,
	.submit = fake_submit,
	.collect = fake_collect,
	.error = fake_error,
};

/* ---- the stage ------------------------------------------------------------------ */

static const uint8_t active[CH] = {1, 0, 1};
static float *x;

static void make_input(void)
{
	x = malloc((size_t)FRAMES * CH * sizeof(float));
	CHECK(x);
	uint32_t seed = 777;
	for (size_t i = 0; i < (size_t)FRAMES * CH; i++) {
		seed = seed * 1664525u + 1013904223u;
		x[i] = (float)(seed >> 8) / (1u << 24) - 0.5f;
	}
}

/* Frame @p i of channel @p c as the stage must give it. */
static float expected(uint32_t i, uint32_t c)
{
	if (i < LAT)
		return 0.0f;
	float v = x[(size_t)(i - LAT) * CH + c];
	return active[c] ? 0.5f * v : v;
}

static struct gf_neural_bank *stage(int want_gpu)
{
	memset(&gpu, 0, sizeof(gpu));
	gpu.healthy = 1;
	struct gf_neural_params p = {.model = "fake", .atten_lim_db = 100.0f};
	struct gf_neural_bank_opts o = {
		.ops = &cpu_ops, .threads = 2, .gpu = want_gpu, .gpu_ops = &gpu_ops, .return_ms = 20};
	struct gf_neural_bank *b;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_neural_bank_new(active, CH, GF_NEURAL_RATE, &p, &o, &b, &eb), &eb);
	CHECK(gf_neural_bank_latency(b) == LAT);
	return b;
}

/* Frames [from, to) of @p y: how many differ from what is expected, and how many of those are
 * silence in an active channel. */
static uint32_t off_frames(const float *y, uint32_t from, uint32_t to, uint32_t *silent)
{
	uint32_t off = 0;
	*silent = 0;
	for (uint32_t i = from; i < to; i++) {
		int bad = 0, quiet = 0;
		for (uint32_t c = 0; c < CH; c++) {
			float v = y[(size_t)i * CH + c];
			bad |= v != expected(i, c);
			quiet |= active[c] && v == 0.0f && expected(i, c) != 0.0f;
		}
		off += bad;
		*silent += quiet;
	}
	return off;
}

/* Frames [from, to) of the input through @p b into @p y, in calls of @p per frames, each with a
 * deadline @p wait_ns after its start. */
static void run_frames(struct gf_neural_bank *b, float *y, uint32_t from, uint32_t to, uint32_t per,
		       uint64_t wait_ns)
{
	for (uint32_t i = from; i < to; i += per) {
		size_t at = (size_t)i * CH;
		memcpy(y + at, x + at, (size_t)per * CH * sizeof(float));
		gf_neural_bank_process_by(b, y + at, per, gf_now_ns() + wait_ns);
	}
}

/* Hops [h0, h1) likewise. */
static void run(struct gf_neural_bank *b, float *y, uint32_t h0, uint32_t h1, uint32_t per, uint64_t wait_ns)
{
	run_frames(b, y, h0 * HOP, h1 * HOP, per, wait_ns);
}

static float *new_output(void)
{
	float *y = calloc((size_t)FRAMES * CH, sizeof(float));
	CHECK(y);
	return y;
}

#define MS 1000000ull
/* A deadline nothing here should miss, even on a loaded machine under the sanitizers: the fakes
 * answer at once, so it costs no time. */
#define AMPLE (500 * MS)

static void late_case(void)
{
	struct gf_neural_bank *b = stage(1);
	CHECK(gf_neural_bank_on_gpu(b) && strcmp(gf_neural_bank_backend(b), "fake GPU") == 0);
	float *y = new_output();
	gpu.late_at = 20; /* hop 19 (submits count from 1) */
	gpu.late_ns = 5 * MS;
	const uint32_t half = HOP / 2;
	run_frames(b, y, 0, 19 * HOP + half, half, AMPLE);
	/* one call across the end of hop 19, which waits 1 ms for it: late, and the half hop after
	 * the end, where its output plays, muted */
	run_frames(b, y, 19 * HOP + half, 20 * HOP + half, HOP, 1 * MS);
	CHECK(gf_neural_bank_late(b) == 1);
	usleep(10000); /* it is back meanwhile: the next call plays the rest */
	run_frames(b, y, 20 * HOP + half, 40 * HOP, half, AMPLE);
	uint32_t silent, off = off_frames(y, 0, 40 * HOP, &silent);
	uint32_t off_later = off_frames(y, 20 * HOP + half, 40 * HOP, &silent);
	printf("late hop: %u frames off (the muted half hop is %u), none after it; late %llu, dropped %llu, "
	       "GPU failures %llu, on the GPU: %d\n",
	       off, half, (unsigned long long)gf_neural_bank_late(b),
	       (unsigned long long)gf_neural_bank_dropped(b),
	       (unsigned long long)gf_neural_bank_gpu_failures(b), gf_neural_bank_on_gpu(b));
	CHECK(off == half && off_frames(y, 20 * HOP, 20 * HOP + half, &silent) == half && silent == half);
	CHECK(off_later == 0);
	CHECK(gf_neural_bank_late(b) == 1 && gf_neural_bank_dropped(b) == 0 &&
	      gf_neural_bank_gpu_failures(b) == 0 && gf_neural_bank_on_gpu(b));
	free(y);
	gf_neural_bank_free(b);
}

/* The standby's output after a switch at hop @p at: exact from there on. */
static void failure_case(void)
{
	struct gf_neural_bank *b = stage(1);
	float *y = new_output();
	gpu.fail_at = 31; /* hop 30's submit fails */
	gpu.healthy = 0;
	run(b, y, 0, 60, 128, AMPLE);
	uint32_t silent, off = off_frames(y, 0, 60 * HOP, &silent);
	printf("GPU failure at hop 30: %u frames off, %u silent; GPU failures %llu, late %llu, on the GPU: "
	       "%d "
	       "(%s)\n",
	       off, silent, (unsigned long long)gf_neural_bank_gpu_failures(b),
	       (unsigned long long)gf_neural_bank_late(b), gf_neural_bank_on_gpu(b),
	       gf_neural_bank_backend(b));
	CHECK(off == 0 && gf_neural_bank_gpu_failures(b) == 1 && !gf_neural_bank_on_gpu(b) &&
	      gf_neural_bank_late(b) == 0 && strcmp(gf_neural_bank_backend(b), "fake CPU") == 0);

	/* The return: not while the GPU still fails; once healthy, taken back at the next hop. */
	gf_neural_bank_try_return(b); /* the first look: schedules a try 20 ms later */
	usleep(25000);
	gf_neural_bank_try_return(b); /* the probe fails: still on the CPU */
	CHECK(gf_neural_bank_gpu_returns(b) == 0 && !gf_neural_bank_on_gpu(b));
	run(b, y, 60, 70, HOP, AMPLE);
	gpu.healthy = 1;
	for (int i = 0; i < 100 && !gf_neural_bank_gpu_returns(b); i++) { /* the next try: 40 ms on */
		usleep(5000);
		gf_neural_bank_try_return(b);
	}
	CHECK(gf_neural_bank_gpu_returns(b) == 1 && !gf_neural_bank_on_gpu(b)); /* the worker takes it */
	uint32_t before = gpu.submits;
	run(b, y, 70, 100, HOP, AMPLE);
	uint32_t restart = off_frames(y, 70 * HOP, 100 * HOP, &silent);
	uint32_t after = off_frames(y, 70 * HOP + LAT, 100 * HOP, &silent);
	printf("return: %llu, on the GPU: %d, %u hops to it since; %u frames off while it restarts clean, "
	       "%u after its latency\n",
	       (unsigned long long)gf_neural_bank_gpu_returns(b), gf_neural_bank_on_gpu(b),
	       gpu.submits - before, restart, after);
	CHECK(gf_neural_bank_on_gpu(b) && gpu.submits - before == 30 && after == 0 && restart <= LAT);
	CHECK(strcmp(gf_neural_bank_backend(b), "fake GPU") == 0 && gf_neural_bank_gpu_failures(b) == 1);
	free(y);
	gf_neural_bank_free(b);
}

/* The hang's calls each wait this long for the hop (the fake GPU never answers); the call that
 * switches gives the standby as long: on a loaded machine its job may be late all the same, counted. */
#define HANG_CALL (25 * MS)

static void hang_case(void)
{
	struct gf_neural_bank *b = stage(1);
	float *y = new_output();
	gpu.hang_at = 11; /* hop 10 is never back */
	gpu.healthy = 0;
	uint64_t t0 = 0;
	uint32_t h = 0;
	for (; h < HOPS && !gf_neural_bank_gpu_failures(b); h++) {
		if (h == 10)
			t0 = gf_now_ns(); /* hop 10 is submitted at the end of this call */
		run(b, y, h, h + 1, HOP, HANG_CALL);
	}
	double took = 1e-9 * (double)(gf_now_ns() - t0);
	uint32_t switched = h; /* the standby ran the hop due at the end of hop h - 1 */
	run(b, y, h, h + 20, HOP, AMPLE);
	uint32_t silent, off_before = off_frames(y, 11 * HOP, switched * HOP, &silent);
	uint32_t silent_before = silent;
	uint32_t off_after = off_frames(y, switched * HOP, (h + 20) * HOP, &silent);
	printf("hang at hop 10: switched at hop %u after %.0f ms; %u frames muted before, %u off after; late "
	       "%llu, dropped %llu, GPU failures %llu\n",
	       switched, 1e3 * took, silent_before, off_after, (unsigned long long)gf_neural_bank_late(b),
	       (unsigned long long)gf_neural_bank_dropped(b),
	       (unsigned long long)gf_neural_bank_gpu_failures(b));
	CHECK(gf_neural_bank_gpu_failures(b) == 1 && !gf_neural_bank_on_gpu(b));
	/* the standby's first job late too (only where the machine is too loaded for HANG_CALL): its
	 * hop muted at most, counted */
	uint64_t standby_late = gf_neural_bank_late(b) - (switched - 11);
	CHECK(off_frames(y, 0, 11 * HOP, &silent) == 0 && off_before == silent_before);
	CHECK(standby_late <= 1 && off_after <= standby_late * HOP);
	CHECK(1e9 * took >= (double)GF_NEURAL_HANG_NS && gf_neural_bank_dropped(b) >= 1);
	free(y);
	gf_neural_bank_free(b);
}

static void no_gpu_case(void)
{
	memset(&gpu, 0, sizeof(gpu));
	struct gf_neural_params p = {.model = "fake", .atten_lim_db = 100.0f};
	struct gf_neural_bank_opts o = {.ops = &cpu_ops, .threads = 2, .gpu = 1, .gpu_ops = &gpu_ops};
	gpu.cannot_create = 1;
	struct gf_neural_bank *b;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_neural_bank_new(active, CH, GF_NEURAL_RATE, &p, &o, &b, &eb), &eb);
	float *y = new_output();
	run(b, y, 0, 30, HOP, AMPLE);
	uint32_t silent;
	CHECK(!gf_neural_bank_on_gpu(b) && off_frames(y, 0, 30 * HOP, &silent) == 0 &&
	      gf_neural_bank_gpu_failures(b) == 0 && strcmp(gf_neural_bank_backend(b), "fake CPU") == 0);
	gf_neural_bank_try_return(b); /* nothing to return to */
	CHECK(gf_neural_bank_gpu_returns(b) == 0);
	printf("no GPU: the CPU alone, exact\n");
	free(y);
	gf_neural_bank_free(b);
}

int main(void)
{
	make_input();
	late_case();
	failure_case();
	hang_case();
	no_gpu_case();
	free(x);
	printf("ok\n");
	return 0;
}
