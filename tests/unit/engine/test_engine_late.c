/*
 * Late is not dead, without a GPU: a stand-in GPU backend (fake_backend.c)
 * whose calls the test makes late, hung or failing. Checked:
 *  - a late block is muted and counted, the instance kept; its answer is
 *    collected at the next block and the output is exact again at once;
 *  - blocks skipped while the instance was busy are fed from the history:
 *    exact again after them, still the same instance, no fallback; a submit
 *    refused for a moment (GF_E_BUSY) is a late block too;
 *  - no block in time for hang_ms: the instance is given up, the CPU takes
 *    over, the hung instance is stopped and destroyed once its work ended,
 *    and the engine returns to the "GPU" once it can be built again, twice
 *    over, every block either muted or exact, nothing leaked;
 *  - hung work that does not end: no return while it runs; at free it is
 *    left alive and counted;
 *  - one deadline per process() call, a take-up's catch-up and a crossfade
 *    included;
 *  - a CPU too slow for the filter: muted, not silent about it, and audio
 *    resumes on the "GPU" once it is back;
 *  - no prime on the audio thread (an offline retry on two threads).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "engine.h"
#include "engine_test.h"
#include "fake_backend.h"
#include "testutil.h"

static uint64_t rng;

#define D_US 20000u /* the deadline of the live cases */
#define D_NS (1000ull * D_US)
#define CH 2
#define BLOCK 64

static struct gf_engine *make(const struct gf_filter_set *fs, uint32_t xfade, uint32_t deadline_us,
			      uint32_t hang_ms, uint32_t return_ms, int retry)
{
	struct gf_engine_params p = {.backend = GF_BACKEND_CUDA,
				     .channels = CH,
				     .max_block = BLOCK,
				     .max_taps = 1024,
				     .crossfade_frames = xfade,
				     .retry = retry,
				     .deadline_us = deadline_us,
				     .hang_ms = hang_ms,
				     .return_ms = return_ms};
	struct gf_engine *e = NULL;
	struct gf_errbuf eb = {{0}};
	gf_engine_test_backends(&fake_backend, retry ? &fake_backend : NULL);
	CHECK_OK_EB(gf_engine_new(&e, &p, fs, &eb), &eb);
	gf_engine_test_backends(NULL, NULL);
	CHECK(strcmp(gf_engine_backend_name(e), "fakegpu") == 0);
	return e;
}

static void sleep_until(uint64_t t)
{
	while (gf_now_ns() < t) {
		struct timespec ts = {0, 200000};
		nanosleep(&ts, NULL);
	}
}

static void sleep_ms(unsigned ms)
{
	sleep_until(gf_now_ns() + 1000000ull * ms);
}

/* A stream of noise, its output, and the double reference of @p fs over it. */
struct run {
	uint32_t blocks;
	float *x, *y;
	double *ref; /* the reference of ref_fs, made when first asked for */
	const struct gf_filter_set *ref_fs;
};

static void run_init(struct run *r, uint32_t blocks)
{
	r->blocks = blocks;
	r->x = gf_test_noise((size_t)blocks * BLOCK * CH, &rng);
	r->y = calloc((size_t)blocks * BLOCK * CH, sizeof(float));
	r->ref = NULL;
	r->ref_fs = NULL;
	CHECK(r->y);
}

static int process(struct gf_engine *e, struct run *r, uint32_t b)
{
	size_t off = (size_t)b * BLOCK * CH;
	return gf_engine_process(e, r->x + off, r->y + off, BLOCK);
}

static double block_err(struct run *r, const struct gf_filter_set *fs, uint32_t b)
{
	if (r->ref_fs != fs) {
		free(r->ref);
		r->ref = gf_test_reference_fs(r->x, r->blocks * BLOCK, CH, fs);
		r->ref_fs = fs;
	}
	return gf_test_rel_l2_frames(r->y, r->ref, b * BLOCK, (b + 1) * BLOCK, CH);
}

static int block_muted(const struct run *r, uint32_t b)
{
	return gf_test_all_zero(r->y + (size_t)b * BLOCK * CH, (size_t)BLOCK * CH);
}

static void run_free(struct run *r)
{
	free(r->x);
	free(r->y);
	free(r->ref);
}

/*
 * Block L's answer comes @p late_blocks deadlines late: L is muted at its
 * deadline, the blocks called before the answer is in are muted without a
 * wait, then the answer is collected, the skipped blocks fed, and every
 * block after is exact, on the same instance.
 */
static void test_late(uint32_t skipped)
{
	const uint32_t blocks = 16, L = 5;
	fake_reset();
	g_fake.rule[0].late_at = L;
	g_fake.rule[0].late_ns = (uint64_t)(skipped + 1) * D_NS + D_NS / 2;
	struct gf_filter_set *fs = gf_test_random_filter(CH, 300, &rng);
	struct gf_engine *e = make(fs, 0, D_US, 0, 0, 0);
	struct run r;
	run_init(&r, blocks);
	uint64_t t_late = 0, took_late = 0;
	for (uint32_t b = 0; b < blocks; b++) {
		uint64_t t0 = gf_now_ns();
		int err = process(e, &r, b);
		if (b == L) {
			t_late = t0;
			took_late = gf_now_ns() - t0;
		}
		if (b >= L && b <= L + skipped) {
			CHECK(err == GF_E_TIMEOUT && block_muted(&r, b));
			CHECK(b == L || gf_now_ns() - t0 < D_NS / 2); /* a poll: no second wait */
			if (b == L + skipped) /* the answer is in before the next block */
				sleep_until(t_late + g_fake.rule[0].late_ns + D_NS / 2);
		} else {
			CHECK_OK(err);
			CHECK(block_err(&r, fs, b) < 1e-6);
		}
		gf_engine_reap(e);
	}
	struct gf_engine_stats s = gf_test_stats(e);
	printf("late   answer %u deadline(s) late: block %u muted at %.1f ms (deadline %.1f ms), %llu muted, "
	       "then exact on the same instance (%d created, %llu fallbacks)\n",
	       skipped + 1, L, (double)took_late / 1e6, D_US / 1000.0, (unsigned long long)s.late_blocks,
	       atomic_load(&g_fake.creates), (unsigned long long)s.fallbacks);
	CHECK(took_late >= D_NS && took_late < 10 * D_NS);
	CHECK(s.late_blocks == skipped + 1 && s.timeouts == 1 && s.hangs == 0 && s.fallbacks == 0);
	CHECK(s.errors == 0 && atomic_load(&g_fake.creates) == 1 && !gf_engine_failed(e));
	CHECK(strcmp(gf_engine_backend_name(e), "fakegpu") == 0);
	gf_engine_free(e);
	CHECK(atomic_load(&g_fake.destroys) == 1);
	run_free(&r);
	gf_filter_set_free(fs);
}

/* A submit refused for a moment (GF_E_BUSY: another thread holds the
 * instance, as during a persistent kernel's handover): that block is muted
 * as a late one, the next one feeds its frames and is exact; no fallback. */
static void test_busy(void)
{
	const uint32_t blocks = 10, B = 4;
	fake_reset();
	g_fake.rule[0].busy_at = B;
	struct gf_filter_set *fs = gf_test_random_filter(CH, 300, &rng);
	struct gf_engine *e = make(fs, 0, D_US, 0, 0, 0);
	struct run r;
	run_init(&r, blocks);
	for (uint32_t b = 0; b < blocks; b++) {
		int err = process(e, &r, b);
		if (b == B) {
			CHECK(err == GF_E_TIMEOUT && block_muted(&r, b));
		} else {
			CHECK_OK(err);
			CHECK(block_err(&r, fs, b) < 1e-6);
		}
		gf_engine_reap(e);
	}
	struct gf_engine_stats s = gf_test_stats(e);
	printf("busy   a submit refused: block %u muted (late %llu), the next exact, fallbacks %llu\n", B,
	       (unsigned long long)s.late_blocks, (unsigned long long)s.fallbacks);
	CHECK(s.late_blocks == 1 && s.timeouts == 0 && s.fallbacks == 0 && s.errors == 0);
	gf_engine_free(e);
	run_free(&r);
	gf_filter_set_free(fs);
}

/*
 * Instance k hangs from its call hang_at[k] on; the first two tries to build
 * it again fail (the device is not back). Blocks are paced and reaped one by
 * one, as the daemon does. Each hang: late blocks for hang_ms, the fallback,
 * the hung instance stopped and destroyed, the return; every block is muted
 * or exact; at the end only the running instance is alive.
 */
static void test_hang_return(void)
{
	const uint32_t blocks = 900, hang_ms = 100, return_ms = 30;
	fake_reset();
	g_fake.rule[0].hang_at = 8;
	g_fake.rule[1].hang_at = 60; /* its 3 probe calls and its catch-up count too */
	struct gf_filter_set *fs = gf_test_random_filter(CH, 200, &rng);
	struct gf_engine *e = make(fs, 4 * BLOCK, D_US, hang_ms, return_ms, 0);
	atomic_store(&g_fake.create_fails, 2);
	struct run r;
	run_init(&r, blocks);
	uint32_t muted = 0, muted_run = 0, longest = 0, b = 0;
	for (; b < blocks; b++) {
		int err = process(e, &r, b);
		if (err) {
			CHECK(block_muted(&r, b));
			muted++;
			longest = ++muted_run > longest ? muted_run : longest;
		} else {
			CHECK(block_err(&r, fs, b) < 1e-6);
			muted_run = 0;
		}
		gf_engine_reap(e);
		struct gf_engine_stats s = gf_test_stats(e);
		if (s.returns == 2 && !gf_engine_swap_pending(e) && b > 700)
			break;
		sleep_ms(1);
	}
	struct gf_engine_stats s = gf_test_stats(e);
	printf("hang   two hangs: %u blocks muted (at most %u in a row), %llu late, hangs %llu, fallbacks "
	       "%llu, returns %llu; fake instances %d created, %d destroyed, %d stopped\n",
	       muted, longest, (unsigned long long)s.late_blocks, (unsigned long long)s.hangs,
	       (unsigned long long)s.fallbacks, (unsigned long long)s.returns, atomic_load(&g_fake.creates),
	       atomic_load(&g_fake.destroys), atomic_load(&g_fake.stops));
	CHECK(b < blocks && s.hangs == 2 && s.fallbacks == 2 && s.returns == 2);
	CHECK(s.dying == 0 && s.abandoned == 0 && s.cpu_too_slow == 0);
	/* Each outage: late blocks for hang_ms (1+ ms apart), muted until the fallback. */
	CHECK(longest >= 10 && longest <= hang_ms + 20);
	CHECK(strcmp(gf_engine_backend_name(e), "fakegpu") == 0);
	/* Three built (two failed tries did not count), the two hung ones destroyed. */
	CHECK(atomic_load(&g_fake.creates) == 3 && atomic_load(&g_fake.destroys) == 2);
	CHECK(atomic_load(&g_fake.stops) >= 2);
	gf_engine_free(e);
	CHECK(atomic_load(&g_fake.destroys) == 3);
	run_free(&r);
	gf_filter_set_free(fs);
}

/* Run until fallbacks reach @p n (reaping each block, 1 ms apart). @return the block after. */
static uint32_t run_to_fallback(struct gf_engine *e, struct run *r, uint32_t b, uint64_t n)
{
	for (; b < r->blocks && gf_test_stats(e).fallbacks < n; b++) {
		process(e, r, b);
		gf_engine_reap(e);
		sleep_ms(1);
	}
	CHECK(gf_test_stats(e).fallbacks == n);
	return b;
}

/*
 * Hung work that is not confirmed ended: the engine keeps asking, does not
 * return to that backend meanwhile, and destroys it once it ends. Then, at
 * free, work that never ends is left alive and counted.
 */
static void test_stop_never(void)
{
	fake_reset();
	g_fake.rule[0].hang_at = 4;
	g_fake.rule[2].hang_at = 4;
	g_fake.stop_never = 1;
	struct gf_filter_set *fs = gf_test_random_filter(CH, 100, &rng);
	struct gf_engine *e = make(fs, 0, D_US, 100, 10, 0);
	struct run r;
	run_init(&r, 800);
	uint32_t b = run_to_fallback(e, &r, 0, 1);
	for (uint32_t i = 0; i < 100; i++, b++) { /* 100+ ms: ten times the first return's wait */
		CHECK_OK(process(e, &r, b));
		gf_engine_reap(e);
		sleep_ms(1);
	}
	struct gf_engine_stats s = gf_test_stats(e);
	int stops = atomic_load(&g_fake.stops);
	CHECK(s.dying == 1 && s.returns == 0 && stops >= 10 && atomic_load(&g_fake.destroys) == 0);
	g_fake.stop_never = 0;
	for (; b < r.blocks && gf_test_stats(e).returns == 0; b++) {
		process(e, &r, b);
		gf_engine_reap(e);
		sleep_ms(1);
	}
	s = gf_test_stats(e);
	CHECK(s.returns == 1 && s.dying == 0 && s.abandoned == 0 && atomic_load(&g_fake.destroys) == 1);
	printf("stop   hung work not ended: asked %d times, no return meanwhile; ended: destroyed, then "
	       "returned\n",
	       stops);
	/* The returned instance (rule 1) runs; the next one hangs (rule 2) and never ends. */
	gf_engine_free(e);
	fake_reset();
	g_fake.rule[0].hang_at = 4;
	g_fake.stop_never = 1;
	e = make(fs, 0, D_US, 100, 60000, 0);
	run_to_fallback(e, &r, 0, 1);
	unsigned left = gf_engine_left_work();
	gf_engine_free(e);
	printf("stop   at free, hung work that never ends: left alive (%u in the process)\n",
	       gf_engine_left_work());
	CHECK(gf_engine_left_work() == left + 1 && atomic_load(&g_fake.destroys) == 0);
	run_free(&r);
	gf_filter_set_free(fs);
}

/*
 * Every wait of a process() call ends at its one deadline: calls take 0.8 D
 * each; while crossfading, the incoming instance's first answer comes late
 * (the current filter plays alone), and at the block that collects it the
 * catch-up of the skipped block (0.8 D) and the block itself (0.8 D) do not
 * get a second deadline: the call returns at D, muted.
 */
static void test_one_deadline(void)
{
	const uint32_t dl_us = 50000, blocks = 60;
	const uint64_t D = 1000ull * dl_us;
	fake_reset();
	atomic_store(&g_fake.base_ns, D * 8 / 10);
	g_fake.rule[1].late_at = 0;
	g_fake.rule[1].late_ns = D;
	struct gf_filter_set *f1 = gf_test_random_filter(CH, 150, &rng),
			     *f2 = gf_test_random_filter(CH, 90, &rng);
	struct gf_engine *e = make(f1, 8 * BLOCK, dl_us, 2000, 0, 0);
	struct run r;
	run_init(&r, blocks);
	uint64_t longest = 0;
	struct gf_errbuf eb = {{0}};
	for (uint32_t b = 0; b < blocks; b++) {
		if (b == 3)
			CHECK_OK_EB(gf_engine_swap(e, f2, &eb), &eb);
		if (b == 5)
			sleep_ms(dl_us / 1000 / 4); /* the incoming instance's late answer is in */
		if (b == 7)
			atomic_store(&g_fake.base_ns, 0);
		if (b >= 7) /* time for the late answers to come in */
			sleep_ms(5);
		uint64_t t0 = gf_now_ns();
		int err = process(e, &r, b);
		uint64_t took = gf_now_ns() - t0;
		longest = took > longest ? took : longest;
		if (b == 3 || b == 4) /* the incoming instance late: the current filter alone */
			CHECK(err == 0 && gf_engine_swap_pending(e) && block_err(&r, f1, b) < 1e-6);
		if (b == 5) /* collected, one block fed, the block: past the one deadline */
			CHECK(err == GF_E_TIMEOUT && took < D + D / 4);
		gf_engine_reap(e);
	}
	struct gf_engine_stats s = gf_test_stats(e);
	printf("once   longest process() %.1f ms against a deadline of %.1f ms (a crossfade's take-up with "
	       "a catch-up in it); %llu late blocks, swaps %llu\n",
	       (double)longest / 1e6, (double)D / 1e6, (unsigned long long)s.late_blocks,
	       (unsigned long long)s.swaps);
	CHECK(longest < D + D / 4);
	CHECK(s.hangs == 0 && s.fallbacks == 0 && s.swaps == 1 && !gf_engine_swap_pending(e));
	for (uint32_t b = blocks - 10; b < blocks; b++)
		CHECK(block_err(&r, f2, b) < 1e-6);
	gf_engine_free(e);
	run_free(&r);
	gf_filter_set_free(f1);
	gf_filter_set_free(f2);
}

/*
 * The "GPU" fails and the CPU cannot run the filter in real time (the test
 * hook): no CPU fallback, muted, said (stats.cpu_too_slow), swaps refused;
 * once the "GPU" can be built again, audio resumes on it, exact at once.
 */
static void test_cpu_too_slow(void)
{
	const uint32_t blocks = 400, F = 6;
	fake_reset();
	g_fake.rule[0].fail_at = F;
	struct gf_filter_set *fs = gf_test_random_filter(CH, 300, &rng);
	CHECK(setenv("GPUFIR_FAULT_CPU_TOO_SLOW", "1", 1) == 0);
	struct gf_engine *e = make(fs, 0, D_US, 0, 20, 0);
	CHECK(unsetenv("GPUFIR_FAULT_CPU_TOO_SLOW") == 0);
	atomic_store(&g_fake.create_fails, 1);
	struct run r;
	run_init(&r, blocks);
	uint32_t b = 0, muted = 0, resumed = 0;
	struct gf_errbuf eb = {{0}};
	for (; b < blocks; b++) {
		int err = process(e, &r, b);
		gf_engine_reap(e);
		if (b == F + 1) {
			struct gf_engine_stats s = gf_test_stats(e);
			CHECK(s.cpu_too_slow == 1 && s.fallbacks == 0 && gf_engine_failed(e));
			CHECK(gf_engine_swap(e, fs, &eb) == GF_E_BUSY);
		}
		if (err) {
			CHECK(b >= F && !resumed && block_muted(&r, b));
			muted++;
		} else if (b > F) {
			CHECK(block_err(&r, fs, b) < 1e-6);
			if (!resumed)
				resumed = b;
		}
		if (resumed && b > resumed + 20)
			break;
		sleep_ms(1);
	}
	struct gf_engine_stats s = gf_test_stats(e);
	printf("slow   the CPU too slow: %u blocks muted, no fallback; resumed on the %s backend at block %u "
	       "(returns %llu), exact at once\n",
	       muted, gf_engine_backend_name(e), resumed, (unsigned long long)s.returns);
	CHECK(resumed && s.returns == 1 && s.fallbacks == 0 && s.cpu_too_slow == 0 && !gf_engine_failed(e));
	CHECK(strcmp(gf_engine_backend_name(e), "fakegpu") == 0);
	gf_engine_free(e);
	run_free(&r);
	gf_filter_set_free(fs);
}

/* ---- no prime on the audio thread ----------------------------------------- */

struct offline {
	struct gf_engine *e;
	float *buf; /* filtered in place, as the offline pipeline does */
	uint32_t blocks;
	atomic_int phase; /* 1: the processing thread's block failed; 2: reaped, retry */
	int err_first, err_retry;
};

/* The processing thread of an offline run: a block fails; after the control
 * thread has reaped, it retries the block and goes on. */
static void *offline_audio(void *arg)
{
	struct offline *o = arg;
	fake_mark_audio_thread();
	for (uint32_t b = 0; b < o->blocks; b++) {
		float *y = o->buf + (size_t)b * BLOCK * CH;
		int err = gf_engine_process(o->e, y, y, BLOCK);
		if (!err)
			continue;
		o->err_first = err;
		atomic_store(&o->phase, 1);
		while (atomic_load(&o->phase) != 2)
			sleep_ms(1);
		o->err_retry = gf_engine_retry(o->e, y, BLOCK);
	}
	return NULL;
}

/*
 * An offline retry whose fallback the control thread primes: the fallback
 * must be primed there with the history before the failed block, not on the
 * processing thread (which was the last resort before); the file is exact.
 */
static void test_no_prime_on_audio(void)
{
	fake_reset();
	g_fake.rule[0].fail_at = 5;
	struct gf_filter_set *fs = gf_test_random_filter(CH, 500, &rng);
	struct gf_engine *e = make(fs, 0, 0, 0, 0, 1);
	struct run r;
	run_init(&r, 12);
	memcpy(r.y, r.x, (size_t)r.blocks * BLOCK * CH * sizeof(float));
	struct offline o = {.e = e, .buf = r.y, .blocks = r.blocks};
	pthread_t t;
	CHECK(pthread_create(&t, NULL, offline_audio, &o) == 0);
	while (atomic_load(&o.phase) != 1)
		sleep_ms(1);
	gf_engine_reap(e);
	atomic_store(&o.phase, 2);
	CHECK(pthread_join(t, NULL) == 0);
	int on_audio = atomic_load(&g_fake.primes_on_audio), primes = atomic_load(&g_fake.primes);
	double err = 0.0;
	for (uint32_t b = 0; b < r.blocks; b++)
		err = block_err(&r, fs, b) > err ? block_err(&r, fs, b) : err;
	printf("prime  offline retry: %d prime(s), %d on the processing thread; worst block rel L2 %.2e\n",
	       primes, on_audio, err);
	CHECK(o.err_first == GF_E_CUDA && o.err_retry == 0);
	CHECK(primes == 1 && on_audio == 0 && err < 1e-6);
	gf_engine_free(e);
	run_free(&r);
	gf_filter_set_free(fs);
}

int main(void)
{
	rng = gf_test_seed("test_engine_late");
	test_late(0);
	test_late(3);
	test_busy();
	test_hang_return();
	test_one_deadline();
	test_cpu_too_slow();
	test_no_prime_on_audio();
	test_stop_never(); /* last: leaves an instance alive in the process */
	printf("test_engine_late: OK\n");
	return 0;
}
