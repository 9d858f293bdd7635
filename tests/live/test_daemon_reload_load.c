/* Reload under load: the real `gpufir --live` on a private JACK server (dummy
 * driver) with a long filter, its filter file replaced every 1.5 s, as a user
 * edits it while audio flows.
 *
 * Defaults (CI): CPU backend, 262143 taps, 128-frame blocks, 6 reloads
 * alternating two filters. Knobs: GPUFIR_TEST_BACKEND=cuda, GPUFIR_TEST_GPU_PATH (the config's gpu_path),
 * GPUFIR_TEST_RELOAD_TAPS (e.g. 1048575 on a GPU), GPUFIR_TEST_RELOAD_BLOCK,
 * GPUFIR_TEST_RELOADS, GPUFIR_TEST_LATENCY_SLACK (a count, or "auto": the
 * configuration's default). With the engine's GPUFIR_FAULT_SLOW_CROSSFADE_US
 * (ctest: test_daemon_reload_slow) every crossfading block comes late on
 * purpose: then the counters must put each of them inside a swap's window,
 * and the audio is not checked.
 *
 * Checked: the counters from `gpufir --status` show no output underflow, no
 * input overflow and no late block inside a swap's window while reloading
 * but the host's (late_blocks_swap_host: the worker preempted or its vCPU
 * stolen, never blocked, its own CPU time within the period);
 * the recording is, frame by frame and at one constant delay, filter A's output, then after each
 * reload exactly the reference crossfade of the old and the new filter's
 * outputs (raised cosine over crossfade_ms from a block edge), then the new
 * filter's output, across every reload. The references are the two filters'
 * outputs over the whole fed signal from an engine in this process. At
 * latency_slack "auto" the slack's own steps (an underrun that raised it,
 * then a longer constant delay) are the one exception to both, checked as
 * such (check_underflows, slack_step_at). */
#include <jack/jack.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "daemonutil.h"
#include "engine.h"
#include "sndutil.h"
#include "status.h"
#include "testutil.h"

#define RATE 48000
#define CH 2
#define XFADE_MS 10
#define XFADE ((size_t)RATE * XFADE_MS / 1000)
#define PERIOD_S 1.5 /* between reloads */
#define MAX_S 30
#define MAX_FRAMES ((size_t)RATE * MAX_S)
#define TOL 2e-5 /* float32 engines, |y| <~ 1 */

static struct gf_daemon dm;
static uint32_t taps = 262143, block = 128, reloads = 6;
static int cuda;
static int slow;		 /* GPUFIR_FAULT_SLOW_CROSSFADE_US set: the crossfades' blocks are late */
static float *h[2];		 /* filters A and B */
static float *x;		 /* the signal */
static float *rec;		 /* recording */
static float *ref[2];		 /* A's and B's output over x */
static struct gf_daemon_tap tap; /* feeds x from feed_start on (set once gpufir runs) */

/* Replace the filter file with filter @p which (a new file renamed over it). */
static void write_filter(int which)
{
	char path[700], tmp[720];
	snprintf(path, sizeof(path), "%s/taps.wav", dm.dir);
	snprintf(tmp, sizeof(tmp), "%s/taps.new.wav", dm.dir);
	gf_test_write_sound(tmp, SF_FORMAT_WAV | SF_FORMAT_FLOAT, RATE, 1, taps, h[which]);
	CHECK(rename(tmp, path) == 0);
}

/* GPUFIR_TEST_LATENCY_SLACK=auto: the configuration's default (adaptive), else a count. */
static void write_slack(FILE *f)
{
	const char *env = getenv("GPUFIR_TEST_LATENCY_SLACK");
	if (env && strcmp(env, "auto") == 0)
		fprintf(stderr, "latency_slack: the default (auto)\n");
	else
		fprintf(f, "latency_slack = %u;\n", gf_test_latency_slack());
}

static void write_conf(void)
{
	FILE *f = fopen(dm.conf_path, "w");
	CHECK(f);
	fprintf(f,
		"sample_rate = %d;\nblock_frames = %u;\nbackend = \"%s\";\ncrossfade_ms = %d.0;\n"
		"max_taps = %u;\nstatus_socket = \"%s\";\n"
		"input = { device = \"system\"; host_api = \"JACK\"; channels = %d; };\n"
		"output = { device = \"system\"; host_api = \"JACK\"; };\n"
		"filters = ( { name = \"f\"; file = \"taps.wav\"; format = \"wav\"; } );\nchain = [\"f\"];\n",
		RATE, block, cuda ? "cuda" : "cpu", XFADE_MS, taps, dm.status_path, CH);
	write_slack(f);
	gf_daemon_conf_gpu_path(f);
	CHECK(fclose(f) == 0);
}

/* Filter @p which's output over x, from an engine in this process. */
static float *reference(int which)
{
	struct gf_filter_set *fs = NULL;
	CHECK_OK(gf_filter_set_new(&fs, CH, taps));
	for (int c = 0; c < CH; c++) /* the mono taps file applies to every channel */
		memcpy(fs->coeffs + (size_t)c * taps, h[which], taps * sizeof(float));
	struct gf_engine *e = gf_test_cpu_engine(CH, 8192, 0, 0, GF_ALGO_AUTO, 0, fs);
	float *y = malloc(MAX_FRAMES * CH * sizeof(float));
	CHECK(y);
	for (size_t f = 0; f < MAX_FRAMES; f += 8192)
		CHECK_OK(gf_engine_process(e, x + f * CH, y + f * CH,
					   MAX_FRAMES - f < 8192 ? (uint32_t)(MAX_FRAMES - f) : 8192));
	gf_engine_free(e);
	gf_filter_set_free(fs);
	return y;
}

static long unsigned env_u(const char *name, long unsigned def)
{
	const char *s = getenv(name);
	return s && *s ? strtoul(s, NULL, 10) : def;
}

/* Does recording frame m equal (1-g) ref[a] + g ref[b] at signal frame t? */
static int frame_is(size_t m, size_t t, int a, int b, double g)
{
	for (int c = 0; c < CH; c++) {
		double want = (1.0 - g) * ref[a][t * CH + c] + g * ref[b][t * CH + c];
		if (fabs(rec[m * CH + c] - want) > TOL)
			return 0;
	}
	return 1;
}

static double ramp(size_t k)
{
	return 0.5 - 0.5 * cos(M_PI * ((double)k + 0.5) / (double)XFADE);
}

/* The crossfade from @p a to @p b starting at recording frame @p s holds for every frame of it. */
static int xfade_at(size_t s, size_t sig0, int a, int b)
{
	for (size_t k = 0; k < XFADE; k++)
		if (!frame_is(s + k, s + k - sig0, a, b, ramp(k)))
			return 0;
	return 1;
}

/* Does a crossfade from @p cur start within XFADE frames before @p m? */
static int xfade_near(size_t m, size_t m1, size_t sig0, int cur)
{
	for (size_t s = m >= XFADE ? m - XFADE : 0; s <= m; s++)
		if (s + XFADE <= m1 && xfade_at(s, sig0, cur, !cur))
			return 1;
	return 0;
}

/* A step of the auto slack at recording frame @p m: silence (the underrun,
 * then the periods added), after which filter @p cur's output goes on later
 * by a whole number of blocks, at most the slack's cap. @return the frame
 * where it goes on, and the delay it adds in @p added; 0 if none. */
static size_t slack_step_at(size_t m, size_t m1, size_t sig0, int cur, size_t *added)
{
	const size_t gap_max = 40 * (size_t)block, check = 256;
	for (size_t g = 1; g <= gap_max && m + g + check <= m1; g++) {
		for (int c = 0; c < CH; c++)
			if (rec[(m + g - 1) * CH + c] != 0.0f)
				return 0; /* the glitch is silence, all of it */
		for (size_t k = 1; k <= 16; k++) {
			size_t d = k * block, ok = 1;
			for (size_t i = m + g; i < m + g + check && ok; i++)
				ok = frame_is(i, i - sig0 - d, cur, cur, 0.0);
			if (ok) {
				*added = d;
				return m + g;
			}
		}
	}
	return 0;
}

/*
 * Walk the recording from @p m0 to @p m1 (signal frame = m - sig0): each frame
 * is the current filter's output, or a crossfade to the other one starts
 * there (the start found by matching the whole ramp, since its first frames
 * barely differ), or, at most @p steps times, the auto slack stepped there.
 * @return the number of transitions, or -1.
 */
static int verify(size_t m0, size_t m1, size_t sig0, size_t *starts, long steps)
{
	int cur = 0, n = 0;
	for (size_t m = m0; m < m1; m++) {
		if (frame_is(m, m - sig0, cur, cur, 0.0))
			continue;
		size_t added, resume = steps > 0 ? slack_step_at(m, m1, sig0, cur, &added) : 0;
		if (resume && !xfade_near(m, m1, sig0, cur)) {
			printf("auto slack step at %.3f s of signal: %zu frames of silence, then %zu frames "
			       "later\n",
			       (double)(m - sig0) / RATE, resume - m, added);
			steps--;
			sig0 += added;
			m = resume - 1;
			continue;
		}
		/* The ramp started at most XFADE frames ago, at or after the last match region. */
		size_t found = 0;
		for (size_t s = m >= XFADE ? m - XFADE : 0; s <= m && !found; s++)
			if (s >= m0 && s + XFADE <= m1 && xfade_at(s, sig0, cur, !cur))
				found = s + 1;
		if (!found) {
			fprintf(stderr,
				"recording frame %zu (%.3f s of signal): neither filter %c's output nor a "
				"crossfade to %c\n",
				m, (double)(m - sig0) / RATE, 'A' + cur, 'A' + !cur);
			return -1;
		}
		starts[n++] = found - 1;
		cur = !cur;
		m = found - 1 + XFADE - 1;
	}
	return n;
}

static long find_delay(size_t m_probe, size_t s0)
{
	for (size_t d = 0; d < 16384; d++) {
		int ok = 1;
		for (size_t m = m_probe; m < m_probe + 128 && ok; m++)
			ok = frame_is(m, m - d - s0, 0, 0, 0.0);
		if (ok)
			return (long)d;
	}
	return -1;
}

/* The signal and filters A and B (decaying noise, L2 norm 0.5), their
 * references, and the files: the daemon starts with A. */
static void make_material(void)
{
	uint64_t rng = gf_test_seed("test_daemon_reload_load");
	x = malloc(sizeof(float) * MAX_FRAMES * CH);
	rec = calloc(MAX_FRAMES * CH, sizeof(float));
	CHECK(x && rec);
	gf_daemon_tap_init(&tap, x, rec, MAX_FRAMES, CH, MAX_FRAMES);
	gf_test_fill_noise(x, MAX_FRAMES * CH, &rng);
	for (int i = 0; i < 2; i++) {
		h[i] = malloc(taps * sizeof(float));
		CHECK(h[i]);
		gf_test_fill_decaying_taps(h[i], taps, &rng);
		double e2 = 0.0;
		for (uint32_t k = 0; k < taps; k++)
			e2 += (double)h[i][k] * h[i][k];
		for (uint32_t k = 0; k < taps; k++) /* L2 norm 0.5: outputs near x's level */
			h[i][k] = (float)(h[i][k] * 0.5 / sqrt(e2));
	}
	ref[0] = reference(0);
	ref[1] = reference(1);
	write_filter(0);
	write_conf();
}

/* Replace the filter file every PERIOD_S, alternating B and A, each answered by READY=1. */
static void run_reloads(void)
{
	int ready = dm.nl.ready;
	double t0 = gf_now_s();
	for (uint32_t i = 0; i < reloads; i++) {
		double due = t0 + PERIOD_S * i;
		while (gf_now_s() < due)
			gf_daemon_idle_ms(&dm, 10);
		write_filter((int)((i + 1) % 2));
		gf_daemon_wait_ready(&dm, ++ready, 20.0, "reload");
	}
}

/*
 * No output underflow while reloading, but the adaptive slack's own: at
 * latency_slack = "auto" (the default) the stream starts at the tightest
 * latency and learns the host's jitter from its first underruns, each one
 * glitch that raises the slack (docs/live.md), whenever it comes. Those
 * frames are excused only where the swaps' share is checked apart (@p
 * late_checked: no late block of the engine's in a swap's window, so no
 * underrun of a swap's making), and only two such steps: a third is a host
 * too jittery to say anything about swaps.
 */
static void check_underflows(const char *st0, const char *st, int late_checked)
{
	long under = gf_daemon_status_num(st, "output_underflows") -
		     gf_daemon_status_num(st0, "output_underflows");
	long stepped = gf_daemon_status_num(st, "output_underflows_slack_steps") -
		       gf_daemon_status_num(st0, "output_underflows_slack_steps");
	long steps = gf_daemon_status_num(st, "resyncs") - gf_daemon_status_num(st0, "resyncs");
	printf("output underflow while reloading: %ld frames, of them the auto slack's steps' %ld (%ld "
	       "step(s), slack %ld, %s)\n",
	       under, stepped, steps, gf_daemon_status_num(st, "latency_slack"),
	       late_checked ? "swaps' late blocks checked" : "late blocks not checked: none excused");
	CHECK(under >= stepped && stepped >= 0);
	CHECK(under - (late_checked ? stepped : 0) == 0 && steps <= 2);
}

/* The counters of `gpufir --status` before (@p st0) and after (@p st) the reloads. */
static void check_counters(const char *st0, const char *st)
{
	const char *keys[] = {"output_underflows",	  "input_overflows", "late_blocks", "swaps",
			      "engine_takeup_frames_max", "block_us_max"};
	long d0[6], d1[6];
	for (int k = 0; k < 6; k++) {
		d0[k] = gf_daemon_status_num(st0, keys[k]);
		d1[k] = gf_daemon_status_num(st, keys[k]);
	}
	printf("%s, %u taps, block %u, %u reloads every %.1f s: underflows %ld -> %ld, overflows %ld -> %ld, "
	       "late %ld -> %ld, swaps %ld, take-up frames max %ld, reload failures %ld, block us max %ld -> "
	       "%ld (median %ld, p99 %ld)\n",
	       cuda ? "cuda" : "cpu", taps, block, reloads, PERIOD_S, d0[0], d1[0], d0[1], d1[1], d0[2],
	       d1[2], d1[3], d1[4], gf_daemon_status_num(st, "reload_failures"), d0[5], d1[5],
	       gf_daemon_status_num(st, "block_us_median"), gf_daemon_status_num(st, "block_us_p99"));
	const char *dev = strstr(st, "\ndevice: "); /* the engine at the end, and its live path */
	if (dev)
		printf("%.*s\n", (int)strcspn(dev + 1, "\n"), dev + 1);
	CHECK(gf_daemon_status_num(st, "reload_failures") == 0 && d1[3] == (long)reloads);
	long swap_late = gf_daemon_status_num(st, "late_blocks_swap");
	long swap_host = gf_daemon_status_num(st, "late_blocks_swap_host");
	printf("late blocks inside swap windows: %ld (the host's: %ld); the host's of all late blocks: "
	       "%ld of %ld; worker SCHED_FIFO priority %ld\n",
	       swap_late, swap_host, gf_daemon_status_num(st, "late_blocks_host"), d1[2],
	       gf_daemon_status_num(st, "worker_rt_priority"));
	CHECK(swap_host >= 0 && swap_host <= swap_late);
	if (slow) {
		long want = (long)(reloads * ((XFADE + block - 1) / block)); /* every crossfade block */
		/* They sleep: none may pass for the host's (a wait is the work's). */
		CHECK(swap_late - swap_host >= want && swap_late <= d1[2]);
		return;
	}
	/* Late blocks from swaps: those inside a swap's window (build, priming,
	 * take-up, crossfade) that the host did not cause. The host's (the
	 * worker runnable, its own CPU time within the period: preempted, or a
	 * VM's vCPU stolen) are reported only: on these VMs they come a few a
	 * run, in or out of windows. Without locked memory pages may fault in
	 * on the audio path, and a sanitizer build (which does not lock it)
	 * overruns by its own work now and then (3-5 ms of the worker's CPU
	 * in a block, outside any window); late blocks before any reload: this
	 * build or machine cannot run the filter in real time at all. Lateness
	 * says nothing about swaps in either case. */
	long d0_host = gf_daemon_status_num(st0, "late_blocks_host");
	int late_checked = 0;
	if (gf_daemon_status_num(st, "memory_locked") != 1)
		printf("note: memory not locked (a sanitizer build, or no privilege): late blocks are not "
		       "checked\n");
	else if (d0[2] == d0_host)
		late_checked = 1;
	else
		printf("note: %ld late blocks not the host's before the first reload: late blocks not "
		       "checked\n",
		       d0[2] - d0_host);
	if (late_checked)
		CHECK(swap_late - swap_host == 0);
	check_underflows(st0, st, late_checked);
	CHECK(d1[1] == d0[1]);
	CHECK(d1[4] >= 0 && d1[4] <= 4 * (long)block);
}

/* The audio from @p s0 (where the signal starts) to @p m_end: A, then every
 * reload a crossfade, at one constant delay but for the auto slack's @p
 * steps (each makes it longer, after a glitch). */
static void check_audio(size_t s0, size_t m_end, long steps)
{
	size_t probe = s0 + RATE / 2;
	long d = find_delay(probe, s0);
	if (d < 0)
		gf_daemon_die(&dm, "the recording is not filter A's output at any constant delay");
	size_t starts[16];
	int n = verify(probe, m_end - 2 * block, s0 + (size_t)d, starts, steps);
	if (n < 0)
		gf_daemon_die(&dm, "the recording does not follow the filters and their crossfades");
	printf("delay %ld frames; %d crossfades, each exact over its %zu frames, at", d, n, XFADE);
	for (int i = 0; i < n; i++)
		printf(" %.2f", (double)(starts[i] - s0 - (size_t)d) / RATE);
	printf(" s; %.1f s of audio checked\n", (double)(m_end - 2 * block - probe) / RATE);
	CHECK(n == (int)reloads);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *bin = gf_daemon_test_bin(1);
	cuda = gf_daemon_test_cuda();
	slow = getenv("GPUFIR_FAULT_SLOW_CROSSFADE_US") != NULL;
	taps = (uint32_t)env_u("GPUFIR_TEST_RELOAD_TAPS", taps);
	block = (uint32_t)env_u("GPUFIR_TEST_RELOAD_BLOCK", block);
	reloads = (uint32_t)env_u("GPUFIR_TEST_RELOADS", reloads);
	CHECK(taps >= 1 && block >= 16 && reloads >= 1 && reloads <= 16);
	CHECK((reloads + 3) * PERIOD_S < MAX_S);
	gf_daemon_init(&dm, "daemon-reload-load");
	make_material();
	jack_client_t *jc = gf_daemon_jack_client(&dm, "gpufir-daemon", RATE, block, &tap);

	gf_daemon_spawn(&dm, bin, 1.0);
	gf_daemon_wait_ready(&dm, 1, 60.0, "start-up");
	gf_daemon_connect_ports(&dm, jc, &tap);
	gf_daemon_idle_ms(&dm, 200);
	size_t s0 = atomic_load(&tap.feed_pos) + RATE / 10;
	atomic_store(&tap.feed_start, s0);
	gf_daemon_idle_ms(&dm, (int)(PERIOD_S * 1000));
	char st0[GF_STATUS_MAX], st[GF_STATUS_MAX];
	gf_daemon_query_status(&dm, st0, sizeof(st0));
	run_reloads();
	gf_daemon_idle_ms(&dm, (int)(PERIOD_S * 1000));
	gf_daemon_query_status(&dm, st, sizeof(st));
	size_t m_end = atomic_load_explicit(&tap.rec_pos, memory_order_acquire);
	gf_daemon_terminate(&dm, 10.0, "");
	jack_deactivate(jc);
	jack_client_close(jc);

	check_counters(st0, st);
	if (!slow)
		check_audio(s0, m_end,
			    strstr(st, "\nlatency_slack_mode: auto\n") ? gf_daemon_status_num(st, "resyncs")
								       : 0);
	gf_daemon_finish(&dm);
	for (int i = 0; i < 2; i++) {
		free(h[i]);
		free(ref[i]);
	}
	free(x);
	free(rec);
	puts("test_daemon_reload_load: ok");
	return 0;
}
