/* The GPU stand-in of fake_backend.h: the CPU backend's work, the test's timing. */
#include "fake_backend.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"

struct fake_ctl g_fake;

struct fake_inst {
	void *cpu;
	struct fake_rule rule;
	long calls;	  /* submits so far */
	uint64_t done_at; /* when the call in flight completes */
	int hung;	  /* a call at or past rule.hang_at is in flight */
	int stopped;	  /* stop() was called: hung work may end */
};

void fake_reset(void)
{
	memset(&g_fake, 0, sizeof(g_fake));
	for (int i = 0; i < FAKE_RULES; i++)
		g_fake.rule[i] = (struct fake_rule){-1, 0, -1, -1, -1};
}

void fake_mark_audio_thread(void)
{
	g_fake.audio = pthread_self();
	atomic_store(&g_fake.audio_set, 1);
}

static void wait_until(uint64_t t)
{
	struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int fake_create(const struct gf_engine_params *p, const struct gf_filter_set *fs, void **inst,
		       struct gf_errbuf *eb)
{
	*inst = NULL;
	if (gf_filter_set_is_mixer(fs) || fs->channels != p->channels) { /* as cu_create */
		gf_errbuf_set(eb, "fake: plain sets of the stream's channels only");
		return GF_E_UNSUPPORTED;
	}
	if (atomic_load(&g_fake.create_fails) > 0) {
		atomic_fetch_sub(&g_fake.create_fails, 1);
		gf_errbuf_set(eb, "fake: the device is not back");
		return GF_E_CUDA;
	}
	struct fake_inst *f = calloc(1, sizeof(*f));
	if (!f)
		return GF_E_NOMEM;
	int err = gf_cpu_backend.create(p, fs, &f->cpu, eb);
	if (err) {
		free(f);
		return err;
	}
	int n = atomic_fetch_add(&g_fake.creates, 1);
	f->rule = g_fake.rule[n < FAKE_RULES ? n : FAKE_RULES - 1];
	*inst = f;
	return 0;
}

static int fake_prime(void *inst, const float *history, uint32_t frames)
{
	struct fake_inst *f = inst;
	atomic_fetch_add(&g_fake.primes, 1);
	if (atomic_load(&g_fake.audio_set) && pthread_equal(pthread_self(), g_fake.audio))
		atomic_fetch_add(&g_fake.primes_on_audio, 1);
	return gf_cpu_backend.prime(f->cpu, history, frames);
}

static int fake_submit(void *inst, const float *in, uint32_t frames)
{
	struct fake_inst *f = inst;
	long n = f->calls++;
	if (n == f->rule.fail_at)
		return GF_E_CUDA;
	if (n == f->rule.busy_at)
		return GF_E_BUSY; /* nothing submitted */
	f->hung = f->rule.hang_at >= 0 && n >= f->rule.hang_at;
	f->done_at =
		gf_now_ns() + atomic_load(&g_fake.base_ns) + (n == f->rule.late_at ? f->rule.late_ns : 0);
	return gf_cpu_backend.submit(f->cpu, in, frames);
}

/* An answer due after the deadline misses it, however late the waiting thread wakes. */
static int fake_finish(void *inst, float *out, uint64_t deadline_ns)
{
	struct fake_inst *f = inst;
	uint64_t done = f->hung && !f->stopped ? UINT64_MAX : f->done_at;
	if (gf_now_ns() < done && done > deadline_ns) {
		wait_until(deadline_ns);
		return GF_E_TIMEOUT; /* still in flight: a later finish collects it */
	}
	wait_until(done);
	return gf_cpu_backend.finish(f->cpu, out, deadline_ns);
}

static int fake_stop(void *inst)
{
	struct fake_inst *f = inst;
	atomic_fetch_add(&g_fake.stops, 1);
	f->stopped = 1;
	return g_fake.stop_never && f->hung ? 0 : 1;
}

static void fake_destroy(void *inst)
{
	struct fake_inst *f = inst;
	if (!f)
		return;
	atomic_fetch_add(&g_fake.destroys, 1);
	gf_cpu_backend.destroy(f->cpu);
	free(f);
}

static const char *fake_algo(const void *inst)
{
	return gf_cpu_backend.algo_name(((const struct fake_inst *)inst)->cpu);
}

static const char *fake_describe(const void *inst)
{
	(void)inst;
	return "a GPU stand-in";
}

const struct gf_backend_ops fake_backend = {
	.name = "fakegpu",
	.create = fake_create,
	.prime = fake_prime,
	.submit = fake_submit,
	.finish = fake_finish,
	.stop = fake_stop,
	.destroy = fake_destroy,
	.algo_name = fake_algo,
	.describe = fake_describe,
};
