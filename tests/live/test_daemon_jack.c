/* The real `gpufir --live` against a private JACK server (dummy driver, sync
 * mode), as systemd runs it: NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID
 * (the daemon is exec'ed from a forked child, so the PID is its own).
 *
 * A JACK client feeds deterministic noise into gpufir and records its output.
 * While audio runs, the filter is reloaded many times, alternating a 63-tap
 * and a 4095-tap filter, alternating the trigger (file rename-over; file
 * edit plus SIGHUP), with a broken config in the middle. The recording must
 * be, block by block, the reference convolution with the filter in force at
 * one constant delay: a lost or duplicated sample shifts everything after it
 * and fails; each transition lasts no longer than the crossfade and stays
 * between the two filters' outputs; the number of transitions equals the
 * number of applied reloads (the broken config changes nothing). */
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
#define XFADE_FRAMES 240 /* crossfade_ms = 5.0 */
#define TAPS_A 63
#define TAPS_B 4095
#define MAX_S 90 /* longest recording */
#define MAX_FRAMES ((size_t)RATE * MAX_S)
#define RELOADS_WANTED 100
#define RELOAD_BUDGET_S 40.0 /* stop reloading after this long, whichever first */
#define DEBOUNCE_MS "40"     /* GPUFIR_TEST_DEBOUNCE_MS */
#define TOL 2e-5	     /* float32 engine vs double reference, |y| <~ 1 */

static struct gf_daemon dm;
static unsigned slack; /* latency_slack in every config written (gf_test_latency_slack) */
static float h_a[TAPS_A], h_b[TAPS_B];
static float *x;		 /* feed, interleaved, MAX_FRAMES */
static float *rec;		 /* recording, interleaved */
static struct gf_daemon_tap tap; /* feeds x, records into rec */

/* ---- JACK client: feed and record in the same cycle ----------------------- */

/* ---- config files -------------------------------------------------------- */

static void write_taps(const char *name, float *h, uint32_t n, uint64_t *rng)
{
	gf_test_fill_decaying_taps(h, n, rng);
	gf_daemon_write_taps_text(&dm, name, h, n);
}

/* Write the config naming @p taps_file (or garbage) and rename it into place. */
static void write_conf(const char *taps_file, int broken)
{
	char tmp[700];
	snprintf(tmp, sizeof(tmp), "%s.new", dm.conf_path);
	FILE *f = fopen(tmp, "w");
	CHECK(f);
	fprintf(f,
		"sample_rate = %d;\nblock_frames = %d;\nbackend = \"cpu\";\ncrossfade_ms = 5.0;\n"
		"latency_slack = %u;\nstatus_socket = \"%s\";\n"
		"input = { device = \"system\"; host_api = \"JACK\"; channels = %d; };\n"
		"output = { device = \"system\"; host_api = \"JACK\"; };\n"
		"filters = ( { name = \"f\"; file = \"%s\"; format = \"text\"; } );\n"
		"chain = [\"f\"];\n%s",
		RATE, BLOCK, slack, dm.status_path, CH, taps_file, broken ? "filters = ( {\n" : "");
	CHECK(fclose(f) == 0);
	CHECK(rename(tmp, dm.conf_path) == 0);
}

/* ---- verification -------------------------------------------------------- */

static double ref_at(const float *h, uint32_t taps, size_t n, int c)
{
	double acc = 0.0;
	for (uint32_t k = 0; k < taps && k <= n; k++)
		acc += (double)h[k] * x[(n - k) * CH + c];
	return acc;
}

/* Does recording frame m equal filter h's output at input frame m - d? */
static int frame_is(const float *h, uint32_t taps, size_t m, size_t d)
{
	for (int c = 0; c < CH; c++)
		if (fabs(rec[m * CH + c] - ref_at(h, taps, m - d, c)) > TOL)
			return 0;
	return 1;
}

/* The constant delay: the d at which a window after @p m0 is filter A's output. */
static long find_delay(size_t m0)
{
	for (size_t d = 0; d < 16384 && d < m0; d++) {
		int ok = 1;
		for (size_t m = m0; m < m0 + 128 && ok; m++)
			ok = frame_is(h_a, TAPS_A, m, d);
		if (ok)
			return (long)d;
	}
	return -1;
}

/* Every frame of a transition block lies between the two filters' outputs. */
static int within_envelope(size_t m0, size_t d)
{
	for (size_t m = m0; m < m0 + BLOCK; m++)
		for (int c = 0; c < CH; c++) {
			double a = ref_at(h_a, TAPS_A, m - d, c), b = ref_at(h_b, TAPS_B, m - d, c);
			double y = rec[m * CH + c];
			if (y < fmin(a, b) - TOL || y > fmax(a, b) + TOL) {
				fprintf(stderr, "frame %zu ch %d: %g outside [%g, %g]\n", m, c, y, fmin(a, b),
					fmax(a, b));
				return 0;
			}
		}
	return 1;
}

/* Classify each block 'A', 'B' or 'X' (transition); count transitions. */
static int verify(size_t m_start, size_t m_end, size_t d, int *transitions)
{
	char cur = 'A', prev_settled = 'A';
	int xrun = 0, max_x = (XFADE_FRAMES + BLOCK - 1) / BLOCK + 1;
	*transitions = 0;
	for (size_t m0 = m_start; m0 + BLOCK <= m_end; m0 += BLOCK) {
		size_t p1 = m0 + 13, p2 = m0 + 50;
		int a = frame_is(h_a, TAPS_A, p1, d) && frame_is(h_a, TAPS_A, p2, d);
		int b = !a && frame_is(h_b, TAPS_B, p1, d) && frame_is(h_b, TAPS_B, p2, d);
		cur = a ? 'A' : b ? 'B' : 'X';
		if (cur == 'X') {
			if (++xrun > max_x) {
				fprintf(stderr,
					"block at frame %zu: %d blocks match neither filter (lost or "
					"duplicated samples, or a step beyond the crossfade)\n",
					m0, xrun);
				return -1;
			}
			if (!within_envelope(m0, d))
				return -1;
			continue;
		}
		if (cur != prev_settled)
			(*transitions)++;
		else if (xrun > 0 && !within_envelope(m0 - BLOCK, d))
			return -1; /* a blip that returned to the same filter */
		prev_settled = cur;
		xrun = 0;
	}
	return 0;
}

/* ---- the run ------------------------------------------------------------- */

/* One reload to @p taps_file; @p hup: also send SIGHUP (then the watch's own
 * debounced reload follows: two READY=1). @return READY=1 messages to expect. */
static int reload_once(const char *taps_file, int hup, int ready_so_far)
{
	write_conf(taps_file, 0);
	if (hup)
		kill(dm.pid, SIGHUP);
	int want = ready_so_far + (hup ? 2 : 1);
	gf_daemon_wait_ready(&dm, want, 20.0, hup ? "reload by SIGHUP" : "reload by file change");
	gf_daemon_notify_read(&dm, 0);
	return want;
}

/* The JACK server goes away under a running daemon: PortAudio cannot
 * reconnect inside the process, so gpufir restarts itself in place (same PID)
 * and retries; it must neither exit nor hang in PortAudio, must say so in
 * STATUS=, and must still stop cleanly on SIGTERM while it waits for the
 * server (test_daemon_jack_restart covers the server coming back). */
static void device_loss(const char *bin)
{
	int ready = dm.nl.ready;
	gf_daemon_spawn(&dm, bin, 0);
	gf_daemon_wait_ready(&dm, ready + 1, 30.0, "second start-up");
	gf_jack_server_stop(&dm.jack, SIGTERM);
	/* Until its second attempt (the first's backoff is 0.5 s): it neither exited nor hung. */
	dm.nl.watch = "audio server lost: retrying (attempt 2)";
	dm.nl.watched = 0;
	double t0 = gf_now_s();
	while (!dm.nl.watched && gf_daemon_alive(&dm) && gf_now_s() - t0 < 10.0)
		gf_daemon_idle_ms(&dm, 50);
	if (!gf_daemon_alive(&dm))
		gf_daemon_die(&dm, "gpufir exited after losing the JACK server");
	if (!dm.nl.watched)
		gf_daemon_die(&dm, "STATUS= did not say within 10 s that the audio server was lost, "
				   "retrying (attempt 2)");
	gf_daemon_terminate(&dm, 10.0, " while retrying");
	printf("JACK server lost: gpufir kept its PID, retried (attempt 2 after %.1f s), and stopped on "
	       "SIGTERM\n",
	       gf_now_s() - t0);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *bin = gf_daemon_test_bin(1);
	uint64_t rng = gf_test_seed("test_daemon_jack");
	gf_daemon_init(&dm, "daemon-jack");
	slack = gf_test_latency_slack();
	x = malloc(sizeof(float) * MAX_FRAMES * CH);
	rec = calloc(MAX_FRAMES * CH, sizeof(float));
	CHECK(x && rec);
	gf_daemon_tap_init(&tap, x, rec, MAX_FRAMES, CH, 0);
	gf_test_fill_noise(x, MAX_FRAMES * CH, &rng);
	for (size_t i = 0; i < MAX_FRAMES * CH; i++)
		x[i] *= 0.05f; /* keeps the long filter's output near full scale */
	write_taps("a.txt", h_a, TAPS_A, &rng);
	write_taps("b.txt", h_b, TAPS_B, &rng);
	write_conf("a.txt", 0);

	/* A private JACK server: dummy driver, sync mode (see TESTING.md). Fixed
	 * names: JACK's registry has 8 slots, reclaimed only by a server of the same name. */
	jack_client_t *jc = gf_daemon_jack_client(&dm, "gpufir-daemon", RATE, BLOCK, &tap);

	/* The daemon, as systemd starts it; its reload debounce (150 ms, one editor save = one reload)
	 * at DEBOUNCE_MS: the reloads come from renames and SIGHUPs, and 100 of them waited it out. */
	CHECK(setenv("GPUFIR_TEST_DEBOUNCE_MS", DEBOUNCE_MS, 1) == 0);
	gf_daemon_spawn(&dm, bin, 1.0); /* WATCHDOG_USEC = 1 s */
	CHECK(unsetenv("GPUFIR_TEST_DEBOUNCE_MS") == 0);
	gf_daemon_wait_ready(&dm, 1, 30.0, "start-up");
	gf_daemon_connect_ports(&dm, jc, &tap);
	size_t m_connected = atomic_load(&tap.rec_pos);
	gf_daemon_idle_ms(&dm, 1000);
	gf_daemon_notify_read(&dm, 0);
	CHECK(dm.nl.status > 0 && strstr(dm.nl.last_status, "63 taps"));

	char st0[GF_STATUS_MAX];
	gf_daemon_query_status(&dm, st0, sizeof(st0));

	/* Reloads under running audio. */
	int ready = dm.nl.ready, applied = 0, reloads = 0;
	double t0 = gf_now_s();
	for (int i = 0; i < RELOADS_WANTED && gf_now_s() - t0 < RELOAD_BUDGET_S; i++) {
		if (i == RELOADS_WANTED / 2) {
			/* A broken config: audio keeps the running filter; the status says why. */
			write_conf(i % 2 ? "a.txt" : "b.txt", 1);
			gf_daemon_wait_ready(&dm, ++ready, 20.0, "broken reload");
			char st[GF_STATUS_MAX];
			gf_daemon_query_status(&dm, st, sizeof(st));
			if (!strstr(st, "last_reload: reload failed: ") || !strstr(st, "gpufir.conf:"))
				gf_daemon_die(&dm, "status socket does not show the failed reload");
			gf_daemon_notify_read(&dm, 200); /* STATUS= follows READY=1 */
			CHECK(strstr(dm.nl.last_status, "reload failed: ") != NULL);
			gf_daemon_idle_ms(&dm, 300);
		}
		/* Filter B on even reloads, A on odd; SIGHUP on every other. */
		ready = reload_once(i % 2 ? "a.txt" : "b.txt", i % 2, ready);
		applied++;
		reloads += 1 + i % 2;
		/* Each filter holds at least the next reload's debounce and build; a random
		 * 0..100 ms more puts the next swap at another point of the block and the period. */
		gf_daemon_idle_ms(&dm, (int)(rng % 100));
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	}
	double reload_s = gf_now_s() - t0;
	gf_daemon_idle_ms(&dm, 500);
	char st[GF_STATUS_MAX];
	gf_daemon_query_status(&dm, st, sizeof(st));
	size_t m_end = atomic_load_explicit(&tap.rec_pos, memory_order_acquire);

	/* Stop as systemd does. */
	gf_daemon_terminate(&dm, 20.0, "");
	gf_daemon_notify_read(&dm, 200);
	jack_deactivate(jc);
	jack_client_close(jc);

	/* The systemd side. */
	printf("notify: READY %d, RELOADING %d, WATCHDOG %d (longest gap %.2f s), STATUS %d, "
	       "STOPPING %d\n",
	       dm.nl.ready, dm.nl.reloading, dm.nl.watchdog, dm.nl.max_wd_gap, dm.nl.status, dm.nl.stopping);
	CHECK(dm.nl.reloading == reloads + 1 && dm.nl.ready == dm.nl.reloading + 1 && !dm.nl.in_reload);
	/* WATCHDOG_USEC is 1 s: every gap must stay below it, reloads included. */
	CHECK(dm.nl.watchdog >= (int)(reload_s / 1.0) && dm.nl.max_wd_gap < 1.0 && dm.nl.stopping == 1);
	printf("status: swaps %ld, blocks %ld, overflows %ld, underflows %ld, late %ld, device xruns %ld\n",
	       gf_daemon_status_num(st, "swaps"), gf_daemon_status_num(st, "blocks"),
	       gf_daemon_status_num(st, "input_overflows"), gf_daemon_status_num(st, "output_underflows"),
	       gf_daemon_status_num(st, "late_blocks"), gf_daemon_status_num(st, "device_xruns"));
	printf("status before the reloads: underflows %ld, overflows %ld, late %ld\n",
	       gf_daemon_status_num(st0, "output_underflows"), gf_daemon_status_num(st0, "input_overflows"),
	       gf_daemon_status_num(st0, "late_blocks"));
	CHECK(gf_daemon_status_num(st, "reload_failures") == 1);

	/* The audio. */
	long delay = find_delay(m_connected + RATE / 2);
	if (delay < 0)
		gf_daemon_die(&dm, "the recording is not filter A's output at any constant delay");
	int transitions = 0;
	if (verify(m_connected + RATE / 2, m_end - 2 * BLOCK, (size_t)delay, &transitions) != 0)
		gf_daemon_die(&dm, "the recording does not follow the filters");
	printf("delay %ld frames; %d reloads (%d applied filter changes, 1 broken config) in %.1f s; "
	       "%d transitions seen; %.1f s of audio checked\n",
	       delay, reloads + 1, applied, reload_s, transitions, (double)(m_end - m_connected) / RATE);
	CHECK(transitions == applied);
	/* gpufir's own xruns: none while reloading (start-up is not this test's business). */
	CHECK(gf_daemon_status_num(st, "input_overflows") == gf_daemon_status_num(st0, "input_overflows"));
	CHECK(gf_daemon_status_num(st, "output_underflows") ==
	      gf_daemon_status_num(st0, "output_underflows"));
	if (applied < RELOADS_WANTED)
		printf("note: %d of %d reloads fitted in %.0f s\n", applied, RELOADS_WANTED, RELOAD_BUDGET_S);

	device_loss(bin);
	gf_daemon_finish(&dm);
	free(x);
	free(rec);
	puts("test_daemon_jack: ok");
	return 0;
}
