/* The volume under the real `gpufir --live`, against a private JACK server
 * (dummy driver), as systemd runs it.
 *
 * A JACK client feeds a 1 kHz sine of 0.5 to both channels and records what
 * comes back through an identity filter. The config has volume_db = -6 and a
 * state_file:
 * 1. the status socket says volume_db -6.0, mute 0, and per-channel levels
 *    over the interval since the previous query: capture peak -6 dBFS,
 *    playback peak -12 dBFS, RMS 3 dB below;
 * 2. a reload with volume_db = -20 goes through the daemon's volume request
 *    (the control API's path): the output follows (-26 dBFS played), over a
 *    ramp of about GF_GAIN_RAMP_MS, with no click: the recording's largest
 *    second difference stays that of the sine at the louder level (an instant
 *    step of the gain at any point of the wave away from a zero crossing
 *    would exceed it many times);
 * 3. the state file then holds volume_db = -20.00 (written after the
 *    debounce);
 * 4. the daemon stopped and started again on the same config (volume_db =
 *    -6) starts at -20 dB: the state file wins. */
#include <jack/jack.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemonutil.h"
#include "gain_stage.h"
#include "status.h"
#include "testutil.h"

#define RATE 48000
#define CH 2
#define BLOCK 64
#define MAX_S 60
#define MAX_FRAMES ((size_t)RATE * MAX_S)
#define AMP 0.5
#define WIN 48 /* frames of one period of the sine: the envelope's resolution */

static struct gf_daemon dm;
static float *x, *rec;
static struct gf_daemon_tap tap;
static jack_client_t *jc;
static char state_path[700];

static void write_conf(double volume_db)
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
		"filters = ( { name = \"id\"; design = \"identity\"; } );\nchain = [\"id\"];\n"
		"volume_db = %.1f;\nvolume_limit_db = 0.0;\nstate_file = \"%s\";\n",
		RATE, BLOCK, gf_test_latency_slack(), dm.status_path, CH, volume_db, state_path);
	CHECK(fclose(f) == 0);
	CHECK(rename(tmp, dm.conf_path) == 0);
}

/* The first value of a "KEY: v v" line of the status block, or NAN. */
static double status_first(const char *st, const char *key)
{
	char k[64];
	snprintf(k, sizeof(k), "\n%s: ", key);
	const char *p = strstr(st, k);
	return p ? strtod(p + strlen(k), NULL) : NAN;
}

/* The status block; it must say volume @p want_db and show the sine at it. */
static void check_status(const char *when, const char *want_db, double play_dbfs)
{
	char st[GF_STATUS_MAX];
	gf_daemon_query_status(&dm, st, sizeof(st)); /* ends the interval before (an older level) */
	gf_daemon_idle_ms(&dm, 400);
	gf_daemon_query_status(&dm, st, sizeof(st));
	double cap = status_first(st, "capture_peak_dbfs"), play = status_first(st, "playback_peak_dbfs");
	double rms = status_first(st, "playback_rms_dbfs");
	printf("%s: %.*s, capture peak %.2f, playback peak %.2f rms %.2f dBFS\n", when,
	       (int)strlen(want_db) - 2, want_db + 1, cap, play, rms);
	if (!strstr(st, want_db) || !strstr(st, "\nmute: 0\n") || !strstr(st, "\nlevels_channels: 2\n") ||
	    !strstr(st, "\nclipped_samples: 0\n") || !(fabs(cap - 20.0 * log10(AMP)) < 0.2) ||
	    !(fabs(play - play_dbfs) < 0.2) || !(fabs(rms - (play_dbfs - 3.01)) < 0.2)) {
		fprintf(stderr, "%s\n", st);
		gf_daemon_die(&dm, "the status does not show the volume and levels expected");
	}
}

/* Peak of |rec| over window w (channel 0). */
static double env(size_t w)
{
	double m = 0.0;
	for (size_t i = w * WIN; i < (w + 1) * WIN; i++)
		m = fmax(m, fabs(rec[i * CH]));
	return m;
}

/* Recording frames [m0, m1) hold the change from @p g0 to @p g1: ramped, no click. */
static void check_change(size_t m0, size_t m1, double g0, double g1)
{
	double hi = AMP * g0, lo = AMP * g1, bound = hi * pow(2.0 * sin(M_PI * 1000.0 / RATE), 2.0);
	double worst = 0.0;
	for (size_t m = m0 + 2; m < m1; m++)
		for (int c = 0; c < CH; c++) {
			double d =
				(double)rec[m * CH + c] - 2.0 * rec[(m - 1) * CH + c] + rec[(m - 2) * CH + c];
			worst = fmax(worst, fabs(d));
		}
	/* The fade: from the last window near the old level to the first near the new. */
	long start = -1, end = -1;
	for (size_t w = m0 / WIN + 1; w < m1 / WIN && end < 0; w++) {
		double e = env(w);
		if (start < 0 && e < hi - 0.1 * (hi - lo))
			start = (long)w;
		if (start >= 0 && e < lo + 0.1 * (hi - lo))
			end = (long)w;
	}
	double fade_ms = start >= 0 && end >= 0 ? (end - start + 1) * 1000.0 * WIN / RATE : -1.0;
	printf("change %.3f -> %.3f: fade %.0f ms (ramp %.0f ms), largest second difference %.5f "
	       "(the sine's at the louder level %.5f)\n",
	       hi, lo, fade_ms, GF_GAIN_RAMP_MS, worst, bound);
	if (start < 0 || end < 0)
		gf_daemon_die(&dm, "the output level did not follow the volume");
	if (!(fade_ms >= 0.6 * GF_GAIN_RAMP_MS && fade_ms <= 1.4 * GF_GAIN_RAMP_MS + 2.0))
		gf_daemon_die(&dm, "the volume did not change over the ramp");
	if (worst > 1.2 * bound + 2e-4)
		gf_daemon_die(&dm, "the volume change clicked");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *bin = gf_daemon_test_bin(1);
	gf_daemon_init(&dm, "daemon-volume");
	snprintf(state_path, sizeof(state_path), "%s/state", dm.dir);
	x = malloc(sizeof(float) * MAX_FRAMES * CH);
	rec = calloc(MAX_FRAMES * CH, sizeof(float));
	CHECK(x && rec);
	gf_daemon_tap_init(&tap, x, rec, MAX_FRAMES, CH, 0);
	for (size_t i = 0; i < MAX_FRAMES; i++)
		for (int c = 0; c < CH; c++)
			x[i * CH + c] = (float)(AMP * sin(2.0 * M_PI * 1000.0 * (double)i / RATE));
	write_conf(-6.0);

	jc = gf_daemon_jack_client(&dm, "gpufir-volume", RATE, BLOCK, &tap);
	gf_daemon_spawn(&dm, bin, 0);
	gf_daemon_wait_ready(&dm, 1, 30.0, "start-up");
	gf_daemon_connect_ports(&dm, jc, &tap);
	gf_daemon_idle_ms(&dm, 1500);
	check_status("start-up", "\nvolume_db: -6.0\n", 20.0 * log10(AMP) - 6.0);

	/* 2. The volume through a reload of volume_db. */
	size_t m0 = atomic_load_explicit(&tap.rec_pos, memory_order_acquire);
	int ready = dm.nl.ready;
	write_conf(-20.0);
	gf_daemon_wait_ready(&dm, ready + 1, 30.0, "reload");
	gf_daemon_idle_ms(&dm, 1500);
	size_t m1 = atomic_load_explicit(&tap.rec_pos, memory_order_acquire);
	check_status("after the reload", "\nvolume_db: -20.0\n", 20.0 * log10(AMP) - 20.0);
	check_change(m0, m1, pow(10.0, -6.0 / 20.0), pow(10.0, -20.0 / 20.0));

	/* 3. The state file. */
	char buf[512];
	if (gf_test_read_file(state_path, buf, sizeof(buf)) <= 0 || !strstr(buf, "volume_db = -20.00\n") ||
	    !strstr(buf, "mute = 0\n"))
		gf_daemon_die(&dm, "the state file does not hold the volume");

	/* 4. A restart on the same config (volume_db = -6): the state file's -20 dB. */
	gf_daemon_terminate(&dm, 20.0, "");
	write_conf(-6.0); /* with no daemon running: no reload */
	ready = dm.nl.ready;
	gf_daemon_spawn(&dm, bin, 0);
	gf_daemon_wait_ready(&dm, ready + 1, 30.0, "restart");
	gf_daemon_connect_ports(&dm, jc, &tap);
	gf_daemon_idle_ms(&dm, 1500);
	check_status("after a restart", "\nvolume_db: -20.0\n", 20.0 * log10(AMP) - 20.0);
	gf_daemon_terminate(&dm, 20.0, "");
	jack_deactivate(jc);
	jack_client_close(jc);
	gf_daemon_finish(&dm);
	printf("PASS\n");
	return 0;
}
