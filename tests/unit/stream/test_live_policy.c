/* Live-stream policies without a device: the test plays the device by calling
 * the duplex callback itself (in steady steps, then in bursts far faster than
 * real time) while the real worker thread runs the engine. Underruns and
 * capture overflows must cost only gaps of silence: every non-silent frame
 * played at position p is input frame p - latency, the stream is exactly
 * aligned again after each disturbance, the silence played equals the
 * underflow count, and the recording stays aligned with the capture. */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <sndfile.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "error.h"
#include "filter_set.h"
#include "live_internal.h"
#include "liveutil.h"
#include "testutil.h"

#define RATE 48000u
#define CH 2u
#define B 64u
#define TAPS 32768u /* an impulse padded to a long filter: the worker races a burst, and loses */
#define TOL 1e-4f
#define PAUSE_MS 50L

struct phase {
	const char *name;
	uint32_t callbacks;
	int paced;     /* wait for the worker before each callback */
	long pause_ms; /* once, halfway: the device's audio thread is this late */
	int preempt;   /* the worker preempts the callback (one CPU, worker SCHED_FIFO) */
	uint32_t hold; /* the worker is held for the phase's first callbacks (then runs alongside) */
};

static void sleep_us(long us)
{
	struct timespec ts = {0, us * 1000L};
	nanosleep(&ts, NULL);
}

/* Values in [0.3, 0.8): never silence, distinct per channel. */
static float *make_input(uint32_t frames, uint64_t *seed)
{
	float *x = malloc((size_t)frames * CH * sizeof(float));
	CHECK(x);
	for (size_t i = 0; i < (size_t)frames * CH; i++)
		x[i] = 0.55f + 0.25f * gf_test_randf(seed);
	return x;
}

static int silent(const float *f)
{
	for (uint32_t c = 0; c < CH; c++)
		if (f[c] != 0.0f)
			return 0;
	return 1;
}

static int matches(const float *f, const float *ref)
{
	for (uint32_t c = 0; c < CH; c++)
		if (!(fabsf(f[c] - ref[c]) < TOL))
			return 0;
	return 1;
}

/* The worker has written what the next callback will play. */
static void wait_ready(struct gf_live *l)
{
	for (int i = 0; i < 200000 && gf_ring_read_space(l->out_ring) < B; i++)
		sleep_us(5);
	CHECK(gf_ring_read_space(l->out_ring) >= B);
}

/* A capture that is dropping can resume: the worker took the last gap and made room. */
static void wait_resume(struct gf_live *l)
{
	for (int i = 0; i < 200000; i++) {
		if (!atomic_load(&l->gap_pending) && gf_ring_write_space(l->in_ring) >= B)
			return;
		sleep_us(5);
	}
	CHECK(!"the worker never made room after an overflow");
}

/* What preempt_begin changed, for preempt_end to put back. */
struct preempt {
	int on;
	int policy;
	struct sched_param sp;
	cpu_set_t cpus;
};

/* The worker and this thread on one CPU, the worker under SCHED_FIFO
 * (gf_live_start asks for it; the test makes sure): the wake-up in a callback
 * runs the worker at once, before the callback returns, as on a host whose
 * audio thread shares a core with it. The block must not be seen before the
 * same callback's playback has moved on. Where SCHED_FIFO is refused the
 * phase runs unpinned. */
static void preempt_begin(struct gf_live *l, struct preempt *p)
{
	p->on = 0;
	CHECK(pthread_getschedparam(l->worker, &p->policy, &p->sp) == 0);
	struct sched_param fifo = {.sched_priority = 1};
	int err = p->policy == SCHED_FIFO ? 0 : pthread_setschedparam(l->worker, SCHED_FIFO, &fifo);
	if (err) {
		printf("SCHED_FIFO refused (%s): the worker does not preempt the callback\n", strerror(err));
		return;
	}
	CHECK(sched_getaffinity(0, sizeof(p->cpus), &p->cpus) == 0);
	int first = 0;
	while (!CPU_ISSET(first, &p->cpus))
		first++;
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	CHECK(pthread_setaffinity_np(l->worker, sizeof(one), &one) == 0);
	CHECK(pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0);
	p->on = 1;
}

static void preempt_end(struct gf_live *l, const struct preempt *p)
{
	if (!p->on)
		return;
	CHECK(pthread_setschedparam(l->worker, p->policy, &p->sp) == 0);
	CHECK(pthread_setaffinity_np(l->worker, sizeof(p->cpus), &p->cpus) == 0);
	CHECK(pthread_setaffinity_np(pthread_self(), sizeof(p->cpus), &p->cpus) == 0);
}

/* Every played frame is silence or the input @p lat frames earlier. @return silent frames. */
static uint32_t check_span(const char *what, const float *y, const float *x, uint32_t from, uint32_t to,
			   uint32_t lat, int must_play)
{
	uint32_t quiet = 0, wrong = 0;
	for (uint32_t p = from; p < to; p++) {
		const float *f = y + (size_t)p * CH;
		if (silent(f)) {
			quiet++;
			if (must_play && p >= lat && wrong++ < 3)
				fprintf(stderr, "%s: frame %u is silent\n", what, p);
		} else if (p < lat || !matches(f, x + (size_t)(p - lat) * CH)) {
			if (wrong++ < 3)
				fprintf(stderr, "%s: frame %u = %g, expected input frame %d = %g\n", what, p,
					(double)f[0], (int)p - (int)lat,
					p >= lat ? (double)x[(size_t)(p - lat) * CH] : 0.0);
		}
	}
	printf("%s: frames %u..%u: %u silent, %u wrong\n", what, from, to, quiet, wrong);
	CHECK(wrong == 0);
	return quiet;
}

static void check_recording(const char *path, const float *x, uint64_t frames, uint64_t dropped)
{
	SF_INFO info = {0};
	SNDFILE *sf = sf_open(path, SFM_READ, &info);
	CHECK(sf && info.channels == (int)CH);
	float *w = malloc(((size_t)info.frames + 1) * CH * sizeof(float));
	CHECK(w && sf_readf_float(sf, w, info.frames) == info.frames);
	sf_close(sf);
	printf("recording: %lld frames, %llu captured, %llu dropped for a slow disk\n",
	       (long long)info.frames, (unsigned long long)frames, (unsigned long long)dropped);
	if (dropped == 0) { /* else the file is shorter and no longer aligned: nothing to check */
		CHECK((uint64_t)info.frames == frames);
		check_span("recording", w, x, 0, (uint32_t)frames, 0, 0);
	}
	free(w);
}

/* The underrun diagnostics of the phase just played (its stats window; a
 * block the worker finishes after get_stats counts in the next window). */
static void check_timing(const struct phase *ph, size_t index, const struct gf_live_stats *s)
{
	printf("%s: margin min %d frames, wake max %.1f us, callback gap max %.1f us\n", ph->name,
	       (int)s->margin_frames_min, s->wake_us_max, s->callback_gap_us_max);
	/* Paced from the start, each callback waits for what it plays, so a block
	 * reaches the output ring one period ahead of playback (latency 2B) or,
	 * if the next callback came first, just in time: never late. */
	if (index == 0)
		CHECK(s->margin_frames_min == 0 || s->margin_frames_min == (int32_t)B);
	if (ph->pause_ms)
		CHECK(s->callback_gap_us_max >= ph->pause_ms * 1000.0);
	CHECK(s->callback_gap_us_worst >= s->callback_gap_us_max);
	CHECK(s->wake_us_worst >= s->wake_us_max);
	CHECK(s->margin_frames_worst <= s->margin_frames_min);
}

int main(void)
{
	uint64_t seed = gf_test_seed("test_live_policy");
	static const struct phase phases[] = {
		{"steady, worker preempting", 200, 1, 0, 1, 0},
		/* Underruns and the overflow come from holding the worker (8
		 * callbacks: 6 periods missed; 600: more than the input ring's
		 * 512), not from how fast this machine runs it; the rest of
		 * each burst runs with the worker racing the callbacks. */
		{"burst (underruns)", 300, 0, 0, 0, 8},
		{"steady again", 200, 1, PAUSE_MS, 0, 0},
		{"long burst (overflow)", 1200, 0, 0, 0, 600},
		{"steady at last", 300, 1, 0, 0, 0},
	};
	uint32_t total = 0;
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
		total += phases[i].callbacks * B;
	float *x = make_input(total, &seed);
	float *y = calloc((size_t)total * CH, sizeof(float));
	CHECK(y);
	char *dir = gf_test_tmpdir("live_policy");
	char wav[512];
	snprintf(wav, sizeof(wav), "%s/policy.wav", dir);

	struct gf_engine *e = gf_test_passthrough_engine(CH, B, TAPS);
	struct gf_live *l;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_live_new_detached(&l, RATE, CH, B, 1, wav, e, &eb), &eb);
	CHECK_OK_EB(gf_live_start(l, &eb), &eb);

	uint32_t pos = 0, lat = 0;
	uint64_t underflows_before = 0;
	struct gf_live_stats s;
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
		uint32_t from = pos, resync = 0;
		struct preempt pre = {0};
		if (phases[i].preempt)
			preempt_begin(l, &pre);
		for (uint32_t k = 0; k < phases[i].callbacks; k++) {
			/* While the capture still holds back a gap, only the next
			 * callback can hand it over: wait until it can. */
			if (phases[i].paced && pos > 0 && !l->cap.dropping) {
				wait_ready(l);
			} else if (phases[i].paced && pos > 0) {
				wait_resume(l);
				resync++;
			}
			if (phases[i].pause_ms && k == phases[i].callbacks / 2)
				sleep_us(phases[i].pause_ms * 1000L);
			if (phases[i].hold && k == 0)
				gf_test_live_hold_worker(l);
			if (phases[i].hold && k == phases[i].hold)
				gf_test_live_release_worker(l);
			gf_live_duplex_cb(x + (size_t)pos * CH, y + (size_t)pos * CH, B, NULL, 0, l);
			pos += B;
		}
		gf_live_get_stats(l, &s);
		preempt_end(l, &pre);
		lat = s.latency_frames;
		CHECK(lat == 2 * B); /* duplex, period == block */
		/* After a gap handover the next `lat` frames played are the gap itself
		 * (late positions as counted underflows, the rest written as silence). */
		uint32_t settle = resync ? resync * B + lat - B : 0;
		uint32_t quiet = check_span(phases[i].name, y, x, from + settle, pos, lat, phases[i].paced);
		quiet += check_span(phases[i].name, y, x, from, from + settle, lat, 0);
		uint64_t under = s.output_underflows - underflows_before;
		underflows_before = s.output_underflows;
		printf("%s: %llu frames underflowed, %llu input frames dropped so far, %llu late blocks\n",
		       phases[i].name, (unsigned long long)under, (unsigned long long)s.input_overflows,
		       (unsigned long long)s.late_blocks);
		check_timing(&phases[i], i, &s);
		if (i == 0)
			CHECK(quiet == lat); /* only the initial latency */
		else if (phases[i].paced)    /* aligned again at once (after a gap handover) */
			CHECK(quiet == settle && under <= quiet);
		else if (s.input_overflows == 0) /* every silent frame is a counted underflow */
			CHECK(quiet == under && under > 0);
	}
	CHECK(s.input_overflows > 0);	   /* the long burst overran the input ring */
	CHECK(s.input_overflows % B == 0); /* whole callbacks only */

	gf_live_stop(l);
	gf_live_get_stats(l, &s);
	CHECK(s.capture_frames == total);
	/* Every block has reached the output ring by now: the late ones too. */
	printf("worst: margin %d frames, wake %.1f us, callback gap %.1f us\n", (int)s.margin_frames_worst,
	       s.wake_us_worst, s.callback_gap_us_worst);
	CHECK(s.output_underflows > 0 && s.margin_frames_worst < 0);
	CHECK(s.wake_us_worst > 0.0 && s.callback_gap_us_worst >= PAUSE_MS * 1000.0);
	/* Durations, not wrapped differences: the test took seconds, not ages. */
	CHECK(s.wake_us_worst < 60e6 && s.callback_gap_us_worst < 60e6);
	check_recording(wav, x, s.capture_frames, s.record_dropped);
	gf_live_free(l);
	gf_engine_free(e);
	unlink(wav);
	rmdir(dir);
	free(dir);
	free(x);
	free(y);
	printf("test_live_policy: ok\n");
	return 0;
}
