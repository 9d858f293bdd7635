/* A backend that is late, one that hangs, and a worker that is stuck, under
 * the real `gpufir --live` on a private JACK server (dummy driver), as
 * systemd runs it.
 *
 * Late: GPUFIR_FAULT_LATE_AFTER makes one backend call complete 10 ms late
 * (several block periods). The blocks until its answer is in are muted; then
 * the same instance goes on, exact: no fallback, engine_late_blocks counts
 * them, the muted stretch is a few milliseconds.
 *
 * Hang: GPUFIR_FAULT_HANG_AFTER makes one backend call never complete
 * mid-stream (the engine's CPU hook; with GPUFIR_TEST_BACKEND=cuda the CUDA
 * backend's GPUFIR_CUDA_HANG_AFTER, a kernel that spins). The block must come
 * back at its deadline (gpu_deadline_ms), muted, and the next ones muted
 * until the hang bound (250 ms); the daemon falls back to the CPU and audio
 * goes on: the recording is, frame by frame, filter A's output at one
 * constant delay except for one short stretch of silence, and exact to the
 * end after it. On CUDA the engine then returns to the GPU. The daemon
 * answers its status socket, keeps pinging the watchdog, and exits 0 within
 * 2 s of SIGTERM.
 *
 * Stuck: GPUFIR_FAULT_STUCK_AFTER leaves the worker inside a backend call for
 * good. The status socket still answers; the stall is noticed (after 1 s:
 * GPUFIR_TEST_STALL_MS sets the daemon's 3 s limit below the stream's own
 * 2 s check, which the test only waited out), the worker is
 * abandoned (the join times out) and the stream restarts on a CPU engine;
 * SIGTERM while a worker is stuck stops the daemon within 2 s.
 *
 * Stuck with the noise suppressor in the chain: the same, the worker's
 * suppressor abandoned with it and a new one built with the CPU engine; a
 * SIGHUP while the worker is stuck is answered (a reload). */
#include <jack/jack.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "daemonutil.h"
#include "status.h"
#include "testutil.h"

#define RATE 48000
#define CH 2
#define BLOCK 64
#define TAPS_A 63
#define MAX_S 60
#define MAX_FRAMES ((size_t)RATE * MAX_S)
#define TOL 2e-5
#define WARMUP_BLOCKS 16 /* GF_LIVE_WARMUP_BLOCKS: engine calls before audio */
#define STALL_MS "1000"	 /* GPUFIR_TEST_STALL_MS for the stuck cases */

static struct gf_daemon dm;
static float h_a[TAPS_A];
static float *x, *rec;
static struct gf_daemon_tap tap; /* feeds x, records into rec */
static int cuda;		 /* GPUFIR_TEST_BACKEND=cuda */

/* Filter A, then (@p nr) the noise suppressor. */
static void write_conf(int nr)
{
	gf_daemon_write_taps_text(&dm, "a.txt", h_a, TAPS_A);
	FILE *f = gf_daemon_conf_begin(&dm, RATE, BLOCK, cuda ? "cuda" : "cpu", CH, "system");
	fprintf(f,
		"filters = ( { name = \"f\"; file = \"a.txt\"; format = \"text\"; }%s );\nchain = "
		"[\"f\"%s];\n",
		nr ? ",\n  { name = \"nr\"; design = \"suppress\"; reduction_db = 18.0; }" : "",
		nr ? ", \"nr\"" : "");
	CHECK(fclose(f) == 0);
}

static double ref_at(size_t n, int c)
{
	double acc = 0.0;
	for (uint32_t k = 0; k < TAPS_A && k <= n; k++)
		acc += (double)h_a[k] * x[(n - k) * CH + c];
	return acc;
}

static int frame_exact(size_t m, size_t d)
{
	for (int c = 0; c < CH; c++)
		if (fabs(rec[m * CH + c] - ref_at(m - d, c)) > TOL)
			return 0;
	return 1;
}

static int frame_silent(size_t m)
{
	return rec[m * CH] == 0.0f && rec[m * CH + 1] == 0.0f;
}

static long find_delay(size_t m0)
{
	for (size_t d = 0; d < 16384 && d < m0; d++) {
		int ok = 1;
		for (size_t m = m0; m < m0 + 128 && ok; m++)
			ok = frame_exact(m, d);
		if (ok)
			return (long)d;
	}
	return -1;
}

/* Poll the status socket until KEY reaches @p want; @return seconds waited. */
static double wait_status(const char *key, long want, double timeout_s, char *st, size_t len)
{
	double t0 = gf_now_s();
	for (;;) {
		gf_daemon_query_status(&dm, st, len);
		if (gf_daemon_status_num(st, key) >= want)
			return gf_now_s() - t0;
		if (gf_now_s() - t0 > timeout_s || !gf_daemon_alive(&dm)) {
			char why[200];
			snprintf(why, sizeof(why), "status %s did not reach %ld within %.0f s", key, want,
				 timeout_s);
			gf_daemon_die(&dm, why);
		}
		gf_daemon_idle_ms(&dm, 20);
	}
}

/* SIGTERM must stop the daemon (exit 0) within 2 s. */
static void terminate_2s(const char *when)
{
	double t0 = gf_now_s();
	gf_daemon_terminate(&dm, 2.0, when);
	printf("SIGTERM%s: exited 0 after %.2f s\n", when, gf_now_s() - t0);
}

/*
 * The recording from @p m_start to @p m_end: filter A at delay @p d
 * everywhere but one run of silence (the muted blocks, and any late frames
 * playback passed), which must be at most @p max_mute_ms; exact after it to
 * the end.
 */
static void check_recording(const char *what, size_t m_start, size_t m_end, size_t d, double max_mute_ms)
{
	size_t mute_from = 0, mute_to = 0, bad = 0;
	for (size_t m = m_start; m < m_end; m++) {
		int exact = frame_exact(m, d);
		if (!mute_from && !exact && frame_silent(m)) {
			mute_from = m; /* the muted run starts */
			continue;
		}
		if (mute_from && !mute_to) {
			if (frame_silent(m))
				continue;
			mute_to = m; /* the fallback's first frame */
		}
		if (!exact && bad++ < 5)
			fprintf(stderr, "frame %zu (%.3f s): not filter A's output%s\n", m,
				(double)(m - m_start) / RATE, mute_to ? " after the fallback" : "");
	}
	double muted_ms = 1000.0 * (double)(mute_to - mute_from) / RATE;
	printf("%s: recording %.1f s checked: muted %.1f ms from %.2f s, exact before and after\n", what,
	       (double)(m_end - m_start) / RATE, muted_ms, (double)(mute_from - m_start) / RATE);
	if (bad)
		gf_daemon_die(&dm, "the recording is not exact outside the muted stretch");
	if (!mute_from || !mute_to)
		gf_daemon_die(&dm, "no muted stretch, or audio did not come back after it");
	if (muted_ms > max_mute_ms)
		gf_daemon_die(&dm, "the muted stretch is too long");
}

/* GPUFIR_FAULT_LATE_AFTER: one call 10 ms late, about 2 s in. */
static void case_late(const char *bin, jack_client_t *jc)
{
	char n[32];
	snprintf(n, sizeof(n), "%u", WARMUP_BLOCKS + 2 * RATE / BLOCK);
	CHECK(setenv("GPUFIR_FAULT_LATE_AFTER", n, 1) == 0);
	CHECK(setenv("GPUFIR_FAULT_LATE_MS", "10", 1) == 0);
	int ready = dm.nl.ready;
	gf_daemon_spawn(&dm, bin, 1.0);
	CHECK(unsetenv("GPUFIR_FAULT_LATE_AFTER") == 0);
	CHECK(unsetenv("GPUFIR_FAULT_LATE_MS") == 0);
	gf_daemon_wait_ready(&dm, ready + 1, 30.0, "start-up (late case)");
	gf_daemon_connect_ports(&dm, jc, &tap);
	size_t m_connected = atomic_load(&tap.rec_pos);
	char st[GF_STATUS_MAX];
	double waited = wait_status("engine_late_blocks", 1, 10.0, st, sizeof(st));
	gf_daemon_idle_ms(&dm, 1000); /* audio goes on, on the same instance */
	gf_daemon_query_status(&dm, st, sizeof(st));
	size_t m_end = atomic_load_explicit(&tap.rec_pos, memory_order_acquire);
	printf("late: a late answer %.2f s after connecting: engine_late_blocks %ld, timeouts %ld, fallbacks "
	       "%ld, hangs %ld\n",
	       waited, gf_daemon_status_num(st, "engine_late_blocks"),
	       gf_daemon_status_num(st, "engine_timeouts"), gf_daemon_status_num(st, "engine_fallbacks"),
	       gf_daemon_status_num(st, "engine_hangs"));
	CHECK(gf_daemon_status_num(st, "engine_timeouts") == 1 &&
	      gf_daemon_status_num(st, "engine_fallbacks") == 0);
	CHECK(gf_daemon_status_num(st, "engine_hangs") == 0 &&
	      gf_daemon_status_num(st, "engine_late_blocks") >= 1);
	CHECK(strstr(st, cuda ? "\nbackend: cuda\n" : "\nbackend: cpu\n") != NULL);
	terminate_2s(" after a late block");
	long d = find_delay(m_connected + RATE / 2);
	if (d < 0)
		gf_daemon_die(&dm, "the recording is not filter A's output at any constant delay");
	/* 10 ms of late answer, the blocks until the next one in, and playback's slack. */
	check_recording("late", m_connected + RATE / 2, m_end - 2 * BLOCK, (size_t)d, 40.0);
}

static void case_hang(const char *bin, jack_client_t *jc)
{
	/* About 2 s of blocks after the warm-up: inside the recorded signal. */
	char n[32];
	snprintf(n, sizeof(n), "%u", WARMUP_BLOCKS + 2 * RATE / BLOCK);
	const char *hook = cuda ? "GPUFIR_CUDA_HANG_AFTER" : "GPUFIR_FAULT_HANG_AFTER";
	CHECK(setenv(hook, n, 1) == 0);
	double t_spawn = gf_now_s();
	int ready = dm.nl.ready;
	gf_daemon_spawn(&dm, bin, 1.0);
	CHECK(unsetenv(hook) == 0);
	gf_daemon_wait_ready(&dm, ready + 1, 30.0, "start-up (hang case)");
	/* The pings from READY=1 on: the stream's open at start-up pings none (docs/daemon.md: the
	 * loop pings while audio flows, a build runs or a known outage is retried), and beside the
	 * other JACK lane and two CPU-bound tests it has taken 2.2 s; the hang and its fallback
	 * are this case's business, start-up's pings test_daemon_build's. */
	dm.nl.max_wd_gap = 0.0;
	dm.nl.last_wd = dm.nl.ready_at;
	gf_daemon_connect_ports(&dm, jc, &tap);
	size_t m_connected = atomic_load(&tap.rec_pos);
	char st[GF_STATUS_MAX];
	double waited = wait_status("engine_timeouts", 1, 10.0, st, sizeof(st));
	double fb = wait_status("engine_fallbacks", 1, 2.0, st, sizeof(st));
	printf("hang: the deadline was missed %.2f s after connecting; fallback seen %.3f s later\n", waited,
	       fb);
	gf_daemon_idle_ms(&dm, 1500); /* audio on the CPU fallback */
	gf_daemon_query_status(&dm, st, sizeof(st));
	size_t m_end = atomic_load_explicit(&tap.rec_pos, memory_order_acquire);
	printf("hang: status: backend %s, engine_errors %ld, timeouts %ld, fallbacks %ld, underflows %ld, "
	       "late %ld\n",
	       strstr(st, "backend: cpu") ? "cpu" : "?", gf_daemon_status_num(st, "engine_errors"),
	       gf_daemon_status_num(st, "engine_timeouts"), gf_daemon_status_num(st, "engine_fallbacks"),
	       gf_daemon_status_num(st, "output_underflows"), gf_daemon_status_num(st, "late_blocks"));
	CHECK(strstr(st, "\nbackend: cpu\n") != NULL);
	CHECK(gf_daemon_status_num(st, "engine_timeouts") == 1 &&
	      gf_daemon_status_num(st, "engine_fallbacks") == 1);
	CHECK(gf_daemon_status_num(st, "workers_abandoned") == 0);
	gf_daemon_notify_read(&dm, 0);
	printf("hang: watchdog pings %d, longest gap %.2f s, ended %.2f s after the spawn\n", dm.nl.watchdog,
	       dm.nl.max_wd_gap, dm.nl.max_wd_gap_end - t_spawn);
	if (dm.nl.max_wd_gap >= 1.0)
		gf_daemon_die(&dm,
			      "a watchdog ping gap of 1 s or more: systemd (WatchdogSec=1) would kill it");
	if (cuda) { /* the hung instance stopped and freed, the engine comes back to the GPU */
		double back = wait_status("engine_gpu_returns", 1, 8.0, st, sizeof(st));
		printf("hang: back on the GPU %.2f s later (engine_dying %ld, engine_abandoned %ld)\n", back,
		       gf_daemon_status_num(st, "engine_dying"),
		       gf_daemon_status_num(st, "engine_abandoned"));
		CHECK(gf_daemon_status_num(st, "engine_abandoned") == 0);
	}
	terminate_2s(" after the hang");

	long d = find_delay(m_connected + RATE / 2);
	if (d < 0)
		gf_daemon_die(&dm, "the recording is not filter A's output at any constant delay");
	/* The hang bound (250 ms), the control loop's next pass, playback's slack. */
	check_recording("hang", m_connected + RATE / 2, m_end - 2 * BLOCK, (size_t)d, 500.0);
}

/* Mean absolute sample of the recording's last @p frames frames (all channels). */
static double rec_level(size_t frames)
{
	size_t end = atomic_load_explicit(&tap.rec_pos, memory_order_acquire);
	double acc = 0.0;
	for (size_t i = (end - frames) * CH; i < end * CH; i++)
		acc += fabsf(rec[i]);
	return acc / (double)(frames * CH);
}

/* Spawn with GPUFIR_FAULT_STUCK_AFTER (about 1 s in) and the stall limit at STALL_MS (the daemon's
 * 3 s, waited out twice, is time, not work); wait for its READY=1 (@p what: for the log). */
static void spawn_stuck_daemon(const char *bin, const char *what)
{
	char n[32];
	snprintf(n, sizeof(n), "%u", WARMUP_BLOCKS + RATE / BLOCK);
	CHECK(setenv("GPUFIR_FAULT_STUCK_AFTER", n, 1) == 0);
	CHECK(setenv("GPUFIR_TEST_STALL_MS", STALL_MS, 1) == 0);
	int ready = dm.nl.ready;
	gf_daemon_spawn(&dm, bin, 0);
	CHECK(unsetenv("GPUFIR_FAULT_STUCK_AFTER") == 0);
	CHECK(unsetenv("GPUFIR_TEST_STALL_MS") == 0);
	gf_daemon_wait_ready(&dm, ready + 1, 30.0, what);
}

/* Spawn a daemon whose worker gets stuck, connect, and wait until it is: no block for 300 ms while
 * status answers. @return the blocks it did. */
static long spawn_stuck(const char *bin, jack_client_t *jc, const char *what, char *st, size_t len)
{
	spawn_stuck_daemon(bin, what);
	gf_daemon_connect_ports(&dm, jc, &tap);
	/* Polled from the status (it still answers): blocks ran, then none for 300 ms. */
	double t0 = gf_now_s(), since = t0;
	long b1 = -1;
	for (;;) {
		gf_daemon_query_status(&dm, st, len);
		long b = gf_daemon_status_num(st, "blocks");
		if (b != b1)
			b1 = b, since = gf_now_s();
		else if (b1 > 0 && gf_now_s() - since >= 0.3)
			return b1;
		if (gf_now_s() - t0 > 10.0)
			gf_daemon_die(&dm, "the worker did not get stuck within 10 s");
		gf_daemon_idle_ms(&dm, 50);
	}
}

/* After the stuck worker was abandoned, the stream restarted (retry backoff 0.5 s): poll until the
 * status' blocks (the current stream's) leave @p stuck, the count where the stuck one froze.
 * @return the new stream's first count seen. */
static long new_stream(long stuck, char *st, size_t len)
{
	double t0 = gf_now_s();
	for (;;) {
		gf_daemon_query_status(&dm, st, len);
		long b = gf_daemon_status_num(st, "blocks");
		if (b != stuck)
			return b;
		if (gf_now_s() - t0 > 10.0)
			gf_daemon_die(&dm, "no new stream within 10 s of the stuck worker's abandonment");
		gf_daemon_idle_ms(&dm, 50);
	}
}

static void case_stuck(const char *bin, jack_client_t *jc)
{
	spawn_stuck_daemon(bin, "start-up (stuck case)");
	gf_daemon_connect_ports(&dm, jc, &tap);
	char st[GF_STATUS_MAX];
	/* The stall is noticed, the worker abandoned, the stream restarted on a CPU engine. */
	double t = wait_status("workers_abandoned", 1, 15.0, st, sizeof(st));
	long blocks0 = new_stream(gf_daemon_status_num(st, "blocks"), st, sizeof(st));
	wait_status("blocks", blocks0 + 101, 5.0, st, sizeof(st));
	printf("stuck: worker abandoned %.1f s after connecting; blocks since the restart %ld -> %ld, "
	       "backend "
	       "%s\n",
	       t, blocks0, gf_daemon_status_num(st, "blocks"), strstr(st, "\nbackend: cpu\n") ? "cpu" : "?");
	CHECK(gf_daemon_status_num(st, "blocks") > blocks0 + 100 && strstr(st, "\nbackend: cpu\n"));
	CHECK(strstr(st, "state: running") != NULL);
	terminate_2s(" after a stuck worker");

	/* SIGTERM with the worker stuck right now: the join gives up, the daemon exits. */
	spawn_stuck(bin, jc, "start-up (stuck at SIGTERM)", st, sizeof(st));
	terminate_2s(" with the worker stuck");
}

/*
 * The stuck worker with the noise suppressor in the chain (the worker holds
 * the suppressor too): status and a SIGHUP (a reload) are answered while it
 * is stuck; it is abandoned with its engine and suppressor, the stream
 * restarts on a CPU engine with a new suppressor (on the CPU), and sound
 * comes out again. SIGTERM then, and with the worker stuck right now, stops
 * the daemon within 2 s.
 */
static void case_stuck_suppress(const char *bin, jack_client_t *jc)
{
	write_conf(1);
	char st[GF_STATUS_MAX];
	long b1 = spawn_stuck(bin, jc, "start-up (stuck with the suppressor)", st, sizeof(st));
	if (!gf_daemon_status_has(st, "\nsuppressor: nr\n"))
		gf_daemon_die(&dm, "the suppressor is not running");
	CHECK(kill(dm.pid, SIGHUP) == 0); /* a reload while the worker is stuck */
	double t0 = gf_now_s();
	for (;;) {
		gf_daemon_idle_ms(&dm, 50);
		gf_daemon_query_status(&dm, st, sizeof(st));
		if (!strstr(st, "\nlast_reload: none\n"))
			break;
		if (gf_now_s() - t0 > 5.0)
			gf_daemon_die(&dm, "a SIGHUP while the worker is stuck was not answered within 5 s");
	}
	const char *lr = strstr(st, "last_reload: ");
	printf("stuck + suppressor: blocks frozen at %ld; SIGHUP answered in %.2f s (%.*s)\n", b1,
	       gf_now_s() - t0, lr ? (int)strcspn(lr, "\n") : 0, lr ? lr : "");

	double t = wait_status("workers_abandoned", 1, 15.0, st, sizeof(st));
	/* The replacement build and the restart, then the new stream's ports. */
	long blocks0 = new_stream(gf_daemon_status_num(st, "blocks"), st, sizeof(st));
	gf_daemon_connect_ports(&dm, jc, &tap);
	gf_daemon_idle_ms(&dm, 1000); /* half a second of it recorded, past the latency */
	gf_daemon_query_status(&dm, st, sizeof(st));
	double level = rec_level(RATE / 2);
	printf("stuck + suppressor: abandoned %.1f s after connecting; blocks since the restart %ld -> %ld; "
	       "recording's mean level %.4f\n",
	       t, blocks0, gf_daemon_status_num(st, "blocks"), level);
	if (!gf_daemon_status_has(st, "\nbackend: cpu\n") || !gf_daemon_status_has(st, "state: running") ||
	    !gf_daemon_status_has(st, "\nsuppressor: nr\n") ||
	    !gf_daemon_status_has(st, "\nsuppressor_where: 2 channels on the CPU\n") ||
	    gf_daemon_status_num(st, "blocks") <= blocks0 + 100)
		gf_daemon_die(&dm, "the stream did not restart on a CPU engine with its suppressor");
	if (!(level > 1e-3))
		gf_daemon_die(&dm, "no sound after the restart");
	terminate_2s(" after a stuck worker with the suppressor");

	spawn_stuck(bin, jc, "start-up (stuck with the suppressor, at SIGTERM)", st, sizeof(st));
	terminate_2s(" with the worker stuck and the suppressor");
	write_conf(0);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *bin = gf_daemon_test_bin(1);
	cuda = gf_daemon_test_cuda();
	uint64_t rng = gf_test_seed("test_daemon_hang");
	gf_daemon_init(&dm, "daemon-hang");
	x = malloc(sizeof(float) * MAX_FRAMES * CH);
	rec = calloc(MAX_FRAMES * CH, sizeof(float));
	CHECK(x && rec);
	gf_daemon_tap_init(&tap, x, rec, MAX_FRAMES, CH, 0);
	gf_test_fill_noise(x, MAX_FRAMES * CH, &rng);
	for (size_t i = 0; i < MAX_FRAMES * CH; i++)
		x[i] *= 0.25f;
	gf_test_fill_decaying_taps(h_a, TAPS_A, &rng);
	write_conf(0);

	jack_client_t *jc = gf_daemon_jack_client(&dm, "gpufir-daemon", RATE, BLOCK, &tap);

	case_late(bin, jc);
	case_hang(bin, jc);
	case_stuck(bin, jc);
	case_stuck_suppress(bin, jc);

	jack_deactivate(jc);
	jack_client_close(jc);
	gf_daemon_finish(&dm);
	free(x);
	free(rec);
	puts("test_daemon_hang: ok");
	return 0;
}
