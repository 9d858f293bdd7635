/* `gpufir --live` survives its JACK server being killed and coming back.
 *
 * As systemd runs it (NOTIFY_SOCKET, WATCHDOG_USEC, WATCHDOG_PID = its own
 * PID), against a private JACK server (dummy driver, sync mode). Before the
 * loss, two JACK test clients play noise through gpufir and record what comes
 * back: the reference convolution at the reported latency, window by window.
 * Then jackd is killed (SIGKILL). The daemon must keep its PID (it restarts
 * itself in place, since PortAudio cannot reconnect inside one process), say
 * so in STATUS= and on its status socket, and keep pinging the watchdog while
 * it retries. The server comes back under the same name 2 s later: READY=1
 * again, and the same PID filters audio again, checked the same way, without
 * having leaked the old image's descriptors. SIGTERM then ends it with 0. */
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiclient.h"
#include "clock.h"
#include "daemonutil.h"
#include "jackplay.h"
#include "status.h"
#include "testutil.h"

#define RATE 48000
#define PERIOD 64
#define CH 2
#define TAPS 63
#define SIG_FRAMES (RATE * 2)	       /* signal played through gpufir per check */
#define REC_FRAMES (SIG_FRAMES + RATE) /* room for the delay */
#define WIN 4800		       /* frames per checked window */
#define TOL 1e-5		       /* rel. L2 per window */
#define WATCHDOG_S 2.0		       /* WATCHDOG_USEC: pings every 1 s */
#define DOWN_MS 2000		       /* how long the server stays away */

static struct gf_daemon dm;
static char ctl_path[700];
static struct gf_apiclient api;
static float h[TAPS]; /* on both channels */
static float *x;
static double *y; /* reference output */

/* ---- processes ------------------------------------------------------------ */

static int count_fds(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/fd", (long)pid);
	DIR *d = opendir(path);
	int n = 0;
	CHECK(d);
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* ---- audio --------------------------------------------------------------- */

/* rec[m + d] == y[m] on a window half a second in: the delay d, or -1. */
static long find_delay(const float *rec, uint32_t n)
{
	const size_t m0 = RATE / 2, len = 512;
	for (long d = 0; d < RATE / 2; d++) {
		if (m0 + len + (size_t)d > n)
			break;
		double err = 0, ref = 0;
		for (size_t i = m0 * CH; i < (m0 + len) * CH; i++) {
			err += (rec[i + (size_t)d * CH] - y[i]) * (rec[i + (size_t)d * CH] - y[i]);
			ref += y[i] * y[i];
		}
		if (sqrt(err / ref) < TOL)
			return d;
	}
	return -1;
}

/* Play the signal through gpufir and check the recording: the reference at
 * one constant delay, which must be the reported latency, window by window. */
static void check_audio(const char *when)
{
	struct gf_jack_rig *rig = gf_jack_rig_open(CH, REC_FRAMES);
	if (!rig || gf_jack_rig_connect(rig, "gpufir", 1) != 0)
		gf_daemon_die(&dm, "cannot connect the JACK test clients to gpufir");
	gf_daemon_idle_ms(&dm, 100);
	gf_jack_rig_record(rig);
	gf_jack_rig_play(rig, x, SIG_FRAMES, NULL, NULL);
	double end = gf_now_s() + 20.0;
	while (!gf_jack_rig_played(rig) && gf_now_s() < end)
		gf_daemon_idle_ms(&dm, 50);
	gf_daemon_idle_ms(&dm, 300); /* the delay's worth of output */
	const float *rec;
	uint32_t n = gf_jack_rig_stop_recording(rig, &rec);
	char st[GF_STATUS_MAX];
	gf_daemon_query_status(&dm, st, sizeof(st));
	long latency = gf_daemon_status_num(st, "latency_frames");
	long offset = (long)(gf_jack_rig_play_time(rig) - gf_jack_rig_record_time(rig));
	long d = find_delay(rec, n);
	if (d < 0)
		gf_daemon_die(&dm, "the recording is not the filtered signal at any delay");
	double worst = 0;
	for (size_t m = 0; m + WIN <= SIG_FRAMES && m + WIN + (size_t)d <= n; m += WIN) {
		double err = 0, ref = 0;
		for (size_t i = m * CH; i < (m + WIN) * CH; i++) {
			err += (rec[i + (size_t)d * CH] - y[i]) * (rec[i + (size_t)d * CH] - y[i]);
			ref += y[i] * y[i];
		}
		worst = fmax(worst, sqrt(err / ref));
	}
	printf("%s: delay %ld frames (latency %ld + clients' offset %ld), %.1f s checked, worst window rel "
	       "L2 "
	       "%.2e\n",
	       when, d, latency, offset, (double)SIG_FRAMES / RATE, worst);
	if (!(worst < TOL) || d != latency + offset || n < SIG_FRAMES + (uint32_t)d)
		gf_daemon_die(&dm, "the recording does not match the reference at the reported latency");
	gf_jack_rig_close(rig);
}

/* ---- the run ------------------------------------------------------------- */

static void setup_files(uint64_t *rng)
{
	gf_daemon_init(&dm, "daemon-jack-restart");
	dm.nl.watch = "audio server lost: retrying (attempt ";
	gf_test_fill_decaying_taps(h, TAPS, rng);
	gf_daemon_write_taps_text(&dm, "taps.txt", h, TAPS);
	snprintf(ctl_path, sizeof(ctl_path), "%s/control", dm.dir);
	gf_apic_init(&api, &dm, ctl_path);
	FILE *f = gf_daemon_conf_begin(&dm, RATE, PERIOD, "cpu", CH, "system");
	fprintf(f,
		"control_socket = \"%s\";\n"
		"filters = ( { name = \"f\"; file = \"taps.txt\"; format = \"text\"; } );\n"
		"chain = [\"f\"];\n",
		ctl_path);
	CHECK(fclose(f) == 0);
	x = gf_test_noise((size_t)SIG_FRAMES * CH, rng);
	for (size_t i = 0; i < (size_t)SIG_FRAMES * CH; i++)
		x[i] *= 0.3f;
	y = gf_test_reference_mono_filter(x, SIG_FRAMES, CH, h, TAPS);
}

/* jackd killed: same PID, STATUS= and status socket say why, pings go on. */
static void check_outage(int fds_running)
{
	int wd0 = dm.nl.watchdog;
	double t0 = gf_now_s();
	gf_jack_server_stop(&dm.jack, SIGKILL);
	gf_daemon_idle_ms(&dm, DOWN_MS);
	if (!gf_daemon_alive(&dm))
		gf_daemon_die(&dm, "gpufir exited after losing the JACK server");
	if (!dm.nl.watched || !strstr(dm.nl.last_status, "audio server lost: retrying (attempt "))
		gf_daemon_die(&dm, "STATUS= does not report the lost audio server");
	char st[GF_STATUS_MAX];
	gf_daemon_query_status(&dm, st, sizeof(st)); /* the new image bound the socket again */
	int fds = count_fds(dm.pid);
	printf("outage: %d WATCHDOG=1 in %.1f s, STATUS='%s', %d descriptors (%d while running)\n",
	       dm.nl.watchdog - wd0, gf_now_s() - t0, dm.nl.last_status, fds, fds_running);
	CHECK(strstr(st, "state: audio server lost, retrying\n") != NULL);
	CHECK(gf_daemon_status_num(st, "pid") == dm.pid && gf_daemon_status_num(st, "respawns") == 1);
	CHECK(gf_daemon_status_num(st, "outages") == 1);
	/* The control API says it as CamillaDSP does (pyCamillaDSP knows no other name), in gpufir's
	 * words: "audio server lost: ...". */
	const char *r = gf_apic_call(&api, "\"GetStopReason\"");
	printf("outage: %.300s\n", r);
	gf_apic_expect(
		&api, r,
		"{\"GetStopReason\":{\"result\":\"Ok\",\"value\":{\"CaptureError\":\"audio server lost: ",
		"GetStopReason while the server is away");
	CHECK(dm.nl.watchdog - wd0 >= (int)(DOWN_MS / 1000 / (WATCHDOG_S / 2)) - 1);
	CHECK(fds < fds_running); /* no JACK client of the old image */
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *bin = gf_daemon_test_bin(0);
	uint64_t rng = gf_test_seed("test_daemon_jack_restart");
	setup_files(&rng);
	/* Fixed names: JACK's registry has 8 slots, reclaimed only by a server of the same name. */
	if (gf_jack_server_start(&dm.jack, "gpufir-restart", RATE, PERIOD) != 0)
		gf_test_skip("no private JACK server (jackd missing or did not start)");
	gf_daemon_spawn(&dm, bin, WATCHDOG_S);
	gf_daemon_wait_ready(&dm, 1, 30.0, "start-up");
	check_audio("before the loss");
	int fds_running = count_fds(dm.pid);

	check_outage(fds_running);
	if (gf_jack_server_restart(&dm.jack, RATE, PERIOD) != 0)
		gf_daemon_die(&dm, "jackd did not start again under its name");
	double t_back = gf_now_s();
	gf_daemon_wait_ready(&dm, 2, 20.0, "after the server came back");
	printf("READY=1 again %.1f s after the server came back\n", gf_now_s() - t_back);
	check_audio("after the server came back");
	char st[GF_STATUS_MAX];
	gf_daemon_query_status(&dm, st, sizeof(st));
	CHECK(strstr(st, "state: running\n") && gf_daemon_status_num(st, "pid") == dm.pid);
	/* No frame lost; late blocks (the host stalling the worker mid-block) are
	 * absorbed by the slack and only reported. */
	printf("late blocks after the server came back: %ld\n", gf_daemon_status_num(st, "late_blocks"));
	CHECK(gf_daemon_status_num(st, "input_overflows") == 0 &&
	      gf_daemon_status_num(st, "output_underflows") == 0);
	int fds_after = count_fds(dm.pid);
	printf("descriptors: %d before the loss, %d after\n", fds_running, fds_after);
	CHECK(fds_after <= fds_running);

	gf_daemon_terminate(&dm, 20.0, "");
	gf_daemon_notify_read(&dm, 200);
	printf("notify: READY %d, WATCHDOG %d (longest gap %.2f s), STOPPING %d\n", dm.nl.ready,
	       dm.nl.watchdog, dm.nl.max_wd_gap, dm.nl.stopping);
	CHECK(dm.nl.ready == 2 && dm.nl.stopping == 1 && dm.nl.max_wd_gap < WATCHDOG_S);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "grep -q 'audio resumed after' '%s'", dm.log_path);
	CHECK(system(cmd) == 0);
	gf_daemon_finish(&dm);
	gf_apic_free(&api);
	free(x);
	free(y);
	puts("test_daemon_jack_restart: ok");
	return 0;
}
