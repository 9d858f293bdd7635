/* A SIGHUP storm must not starve the daemon's loop.
 *
 * `gpufir --live` as systemd runs it (NOTIFY_SOCKET, WATCHDOG_USEC = 2 s, so a
 * ping is due every second), against a private JACK server (dummy driver,
 * sync mode). While two JACK test clients play noise through it and record
 * what comes back, a child process sends 2000 SIGHUPs in 10 s. The daemon
 * must keep pinging the watchdog (no gap over 1 s), answer its status socket,
 * coalesce the SIGHUPs into far fewer reloads (each still RELOADING=1 then
 * READY=1), and the audio must stay clean: the reference convolution at the
 * reported latency, window by window, with no xrun of gpufir's own. The
 * final stats line must report the block times of the whole run, not of the
 * last 200 ms health poll. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "daemonutil.h"
#include "jackplay.h"
#include "status.h"
#include "testutil.h"

#define RATE 48000
#define PERIOD 64
#define CH 2
#define TAPS 63
#define STORM_S 10
#define STORM_SIGNALS 2000
#define SIG_FRAMES (RATE * (STORM_S + 2)) /* the storm, and a second either side */
#define REC_FRAMES (SIG_FRAMES + RATE)
#define WIN 4800 /* frames per checked window */
#define TOL 1e-5 /* rel. L2 per window */
#define WATCHDOG_S 2.0

static struct gf_daemon dm;
static float h[TAPS];
static float *x;
static double *y; /* reference output */

static double rel_err(const float *rec, size_t m, size_t len, long d)
{
	double err = 0, ref = 0;
	for (size_t i = m * CH; i < (m + len) * CH; i++) {
		double e = rec[i + (size_t)d * CH] - y[i];
		err += e * e;
		ref += y[i] * y[i];
	}
	return sqrt(err / ref);
}

static long find_delay(const float *rec, uint32_t n)
{
	for (long d = 0; d < RATE / 2 && (size_t)RATE / 2 + 512 + (size_t)d <= n; d++)
		if (rel_err(rec, RATE / 2, 512, d) < TOL)
			return d;
	return -1;
}

static void setup_files(uint64_t *rng)
{
	gf_daemon_init(&dm, "daemon-signals");
	gf_test_fill_decaying_taps(h, TAPS, rng);
	gf_daemon_write_taps_text(&dm, "taps.txt", h, TAPS);
	FILE *f = gf_daemon_conf_begin(&dm, RATE, PERIOD, "cpu", CH, "system");
	fprintf(f, "crossfade_ms = 5.0;\n"
		   "filters = ( { name = \"f\"; file = \"taps.txt\"; format = \"text\"; } );\n"
		   "chain = [\"f\"];\n");
	CHECK(fclose(f) == 0);
	x = gf_test_noise((size_t)SIG_FRAMES * CH, rng);
	for (size_t i = 0; i < (size_t)SIG_FRAMES * CH; i++)
		x[i] *= 0.3f;
	y = gf_test_reference_mono_filter(x, SIG_FRAMES, CH, h, TAPS);
}

/* The storm, from a child: STORM_SIGNALS SIGHUPs evenly over STORM_S. */
static pid_t storm(pid_t target)
{
	pid_t p = fork();
	CHECK(p >= 0);
	if (p == 0) {
		struct timespec ts = {0, (long)(STORM_S * 1e9 / STORM_SIGNALS)};
		for (int i = 0; i < STORM_SIGNALS; i++) {
			if (kill(target, SIGHUP) != 0)
				_exit(1);
			nanosleep(&ts, NULL);
		}
		_exit(0);
	}
	return p;
}

/* Status queries during the storm: each must be answered (2 s timeout). */
static int query_during(double until)
{
	int answered = 0;
	while (gf_now_s() < until) {
		char st[GF_STATUS_MAX];
		gf_daemon_query_status(&dm, st, sizeof(st));
		answered += strstr(st, "state: running\n") != NULL;
		gf_daemon_idle_ms(&dm, 250);
	}
	return answered;
}

/* The final stats line covers the whole run (no 60 s line came first): its
 * block times are over every block, not the last 200 ms poll's few. Audio
 * still flows while the line's counters are read, one after the other, so
 * the block count and the histogram's may differ by a block or two (seen:
 * 9944 and 9945 under ASan); a window cut short would miss thousands. */
static void check_final_stats(void)
{
	FILE *f = fopen(dm.log_path, "r");
	CHECK(f);
	char line[2048], last[2048] = "";
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "stats: "))
			snprintf(last, sizeof(last), "%s", line);
	fclose(f);
	unsigned long long blocks = 0, over = 0;
	double median = 0;
	const char *b = strstr(last, ", blocks "), *m = strstr(last, "block us median ");
	printf("final stats line: %s", last);
	CHECK(b && m && sscanf(b, ", blocks %llu", &blocks) == 1);
	CHECK(sscanf(m, "block us median %lf p99 %*f max %*f over %llu blocks", &median, &over) == 2);
	CHECK(blocks > 1000 && over + 2 >= blocks && over <= blocks + 2 && median > 0.0);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *bin = gf_daemon_test_bin(0);
	uint64_t rng = gf_test_seed("test_daemon_signals");
	setup_files(&rng);
	if (gf_jack_server_start(&dm.jack, "gpufir-signals", RATE, PERIOD) != 0)
		gf_test_skip("no private JACK server (jackd missing or did not start)");
	gf_daemon_spawn(&dm, bin, WATCHDOG_S);
	gf_daemon_wait_ready(&dm, 1, 30.0, "start-up");
	struct gf_jack_rig *rig = gf_jack_rig_open(CH, REC_FRAMES);
	if (!rig || gf_jack_rig_connect(rig, "gpufir", 1) != 0)
		gf_daemon_die(&dm, "cannot connect the JACK test clients to gpufir");
	gf_daemon_idle_ms(&dm, 100);
	char st0[GF_STATUS_MAX];
	gf_daemon_query_status(&dm, st0, sizeof(st0));
	gf_jack_rig_record(rig);
	gf_jack_rig_play(rig, x, SIG_FRAMES, NULL, NULL);
	gf_daemon_idle_ms(&dm, 1000);

	int wd0 = dm.nl.watchdog, ready0 = dm.nl.ready;
	dm.nl.max_wd_gap = 0.0; /* start-up is not this test's business */
	double t0 = gf_now_s();
	pid_t child = storm(dm.pid);
	int answered = query_during(t0 + STORM_S);
	/* The storm runs late on a loaded machine (CI: 11.8 s). Wait for it
	 * reading the notify socket: pings are timed as they are read, and a
	 * blocking wait here once showed as a 1.87 s gap of the daemon's. */
	int wst;
	pid_t done;
	while ((done = waitpid(child, &wst, WNOHANG)) == 0 && gf_now_s() < t0 + 30.0)
		gf_daemon_idle_ms(&dm, 20);
	CHECK(done == child && WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
	double storm_s = gf_now_s() - t0;
	while (!gf_jack_rig_played(rig) && gf_now_s() < t0 + 30.0)
		gf_daemon_idle_ms(&dm, 50);
	gf_daemon_idle_ms(&dm, 1000); /* the last coalesced reload, and the delay's worth of output */
	const float *rec;
	uint32_t n = gf_jack_rig_stop_recording(rig, &rec);
	char st[GF_STATUS_MAX];
	gf_daemon_query_status(&dm, st, sizeof(st));

	int reloads = dm.nl.ready - ready0;
	printf("storm: %d SIGHUPs in %.1f s; %d reloads (READY=1), %d WATCHDOG=1, longest gap %.3f s, "
	       "%d status queries answered\n",
	       STORM_SIGNALS, storm_s, reloads, dm.nl.watchdog - wd0, dm.nl.max_wd_gap, answered);
	printf("storm: the longest gap ended %.2f s after the storm began\n", dm.nl.max_wd_gap_end - t0);
	if (!(dm.nl.max_wd_gap > 0.0 && dm.nl.max_wd_gap <= WATCHDOG_S / 2))
		gf_daemon_die(&dm, "a watchdog ping gap over half of WatchdogSec during the storm");
	CHECK(dm.nl.watchdog - wd0 >= (int)(storm_s / (WATCHDOG_S / 2)));
	CHECK(answered >= (int)(STORM_S * 2));
	CHECK(reloads >= 2 && reloads < STORM_SIGNALS / 10 && !dm.nl.in_reload);
	CHECK(gf_daemon_status_num(st, "reloads") == gf_daemon_status_num(st0, "reloads") + reloads);
	CHECK(gf_daemon_status_num(st, "reload_failures") == 0);

	long latency = gf_daemon_status_num(st, "latency_frames");
	long offset = (long)(gf_jack_rig_play_time(rig) - gf_jack_rig_record_time(rig));
	long d = find_delay(rec, n);
	if (d < 0)
		gf_daemon_die(&dm, "the recording is not the filtered signal at any delay");
	double worst = 0;
	for (size_t m = 0; m + WIN <= SIG_FRAMES && m + WIN + (size_t)d <= n; m += WIN)
		worst = fmax(worst, rel_err(rec, m, WIN, d));
	printf("audio: delay %ld frames (latency %ld + clients' offset %ld), %.1f s checked, worst window "
	       "rel L2 %.2e; underflows %ld, overflows %ld, late blocks %ld\n",
	       d, latency, offset, (double)SIG_FRAMES / RATE, worst,
	       gf_daemon_status_num(st, "output_underflows"), gf_daemon_status_num(st, "input_overflows"),
	       gf_daemon_status_num(st, "late_blocks"));
	if (!(worst < TOL) || d != latency + offset || n < SIG_FRAMES + (uint32_t)d)
		gf_daemon_die(&dm, "the recording does not match the reference at the reported latency");
	CHECK(gf_daemon_status_num(st, "output_underflows") ==
	      gf_daemon_status_num(st0, "output_underflows"));
	CHECK(gf_daemon_status_num(st, "input_overflows") == gf_daemon_status_num(st0, "input_overflows"));
	gf_jack_rig_close(rig);

	gf_daemon_terminate(&dm, 20.0, "");
	check_final_stats();
	gf_daemon_finish(&dm);
	free(x);
	free(y);
	puts("test_daemon_signals: ok");
	return 0;
}
