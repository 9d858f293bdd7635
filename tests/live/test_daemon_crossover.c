/* A live crossover under the real `gpufir --live`, against a private JACK
 * server (dummy driver) of 2 capture and 4 playback ports, as systemd runs it.
 *
 * The config has a mixer of 2 inputs and 4 outputs (no output.channels: the
 * stream takes the mixer's outputs), each path its own FIR (text taps), one
 * output fed by two paths. A JACK client feeds deterministic noise to
 * gpufir's 2 inputs and records its 4 outputs in the same cycle:
 * 1. every output port carries the sum of its paths' filtered inputs (the
 *    double reference convolution) at one delay, the same for all four;
 * 2. the status socket says channels 2, output_channels 4, and meters 2
 *    capture and 4 playback channels;
 * 3. a reload whose output.channels contradicts the mixer fails with the
 *    reason and changes nothing (still 4 outputs);
 * 4. a reload to a plain 2-channel chain changes the output count: the
 *    stream restarts (the log says why) and the status says 2 outputs.
 * With GPUFIR_TEST_BACKEND=cuda (scripts/gpu-check.sh, crossover_cuda) the
 * mixer runs on the GPU, as its paths, and the status must say so. */
#include <jack/jack.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "daemonutil.h"
#include "testutil.h"

#define RATE 48000
#define BLOCK 64
#define NIN 2
#define NOUT 4
#define TAPS 48
#define NPATH 5
#define MAX_S 30
#define MAX_FRAMES ((size_t)RATE * MAX_S)
#define CHECK_FRAMES ((size_t)RATE) /* one second of the signal compared */
#define MAX_DELAY 16384u
#define TOL 2e-5 /* float32 engine vs double reference, |y| <~ 1 */

static struct gf_daemon dm;
static float *x, *rec;
static struct gf_daemon_tap tap;
static jack_client_t *jc;
static float h[NPATH][TAPS];
static const int path_in[NPATH] = {0, 0, 1, 1, 1}, path_out[NPATH] = {0, 1, 2, 3, 0};
static const int path_invert[NPATH] = {0, 0, 0, 0, 1};

/* mode 0: the crossover; 1: the same with output.channels = 3; 2: a plain 2-channel chain. */
static void write_conf(int mode)
{
	char tmp[700];
	snprintf(tmp, sizeof(tmp), "%s.new", dm.conf_path);
	FILE *f = fopen(tmp, "w");
	CHECK(f);
	fprintf(f,
		"sample_rate = %d;\nblock_frames = %d;\nbackend = \"%s\";\ncrossfade_ms = 5.0;\n"
		"latency_slack = %u;\nstatus_socket = \"%s\";\n"
		"input = { device = \"system\"; host_api = \"JACK\"; };\n"
		"output = { device = \"system\"; host_api = \"JACK\";%s };\nfilters = (\n",
		RATE, BLOCK, gf_daemon_test_cuda() ? "cuda" : "cpu", gf_test_latency_slack(), dm.status_path,
		mode == 1 ? " channels = 3;" : "");
	for (int p = 0; p < NPATH; p++)
		fprintf(f, "  { name = \"p%d\"; file = \"%s/p%d.txt\"; format = \"text\"; }%s\n", p, dm.dir,
			p, p + 1 < NPATH ? "," : "");
	fprintf(f, ");\n");
	if (mode == 2) {
		fprintf(f, "chain = [\"p0\"];\n");
	} else {
		fprintf(f, "mixer = {\n  inputs = %d;\n  outputs = %d;\n  paths = (\n", NIN, NOUT);
		for (int p = 0; p < NPATH; p++)
			fprintf(f, "    { in = %d; out = %d; chain = [\"p%d\"]; invert = %s; }%s\n",
				path_in[p], path_out[p], p, path_invert[p] ? "true" : "false",
				p + 1 < NPATH ? "," : "");
		fprintf(f, "  );\n};\n");
	}
	CHECK(fclose(f) == 0);
	CHECK(rename(tmp, dm.conf_path) == 0);
}

/* Output @p o at signal frame @p n: the sum of its paths, in double (silence before the signal). */
static double ref_at(size_t n, int o)
{
	double acc = 0.0;
	for (int p = 0; p < NPATH; p++) {
		if (path_out[p] != o)
			continue;
		double s = 0.0;
		for (size_t k = 0; k < TAPS && k <= n; k++)
			s += (double)h[p][k] * x[(n - k) * NIN + path_in[p]];
		acc += path_invert[p] ? -s : s;
	}
	return acc;
}

/* The delay at which output 0 follows its reference: recorded frame start + d + n is signal frame n. */
static long find_delay(size_t start, size_t avail)
{
	for (uint32_t d = 0; d < MAX_DELAY && start + d + 256 <= avail; d++) {
		int ok = 1;
		for (size_t n = 0; n < 256 && ok; n++)
			ok = fabs(rec[(start + d + n) * NOUT] - ref_at(n, 0)) < TOL;
		if (ok)
			return (long)d;
	}
	return -1;
}

static void check_outputs(size_t start)
{
	size_t need = start + MAX_DELAY + CHECK_FRAMES;
	double t0 = gf_now_s();
	while (atomic_load_explicit(&tap.rec_pos, memory_order_acquire) < need && gf_now_s() - t0 < 20.0)
		gf_daemon_idle_ms(&dm, 100);
	size_t avail = atomic_load_explicit(&tap.rec_pos, memory_order_acquire);
	if (avail < need)
		gf_daemon_die(&dm, "the recording did not reach the frames to compare");
	long d = find_delay(start, avail);
	if (d < 0)
		gf_daemon_die(&dm, "output 0 never matched its paths' reference");
	double worst[NOUT] = {0}, peak[NOUT] = {0};
	for (size_t n = 0; n < CHECK_FRAMES; n++)
		for (int o = 0; o < NOUT; o++) {
			double r = ref_at(n, o);
			peak[o] = fmax(peak[o], fabs(r));
			worst[o] = fmax(worst[o], fabs(rec[(start + (size_t)d + n) * NOUT + o] - r));
		}
	for (int o = 0; o < NOUT; o++) {
		printf("output %d: delay %ld frames, peak %.3f, worst difference from its paths %.3g\n", o, d,
		       peak[o], worst[o]);
		if (!(peak[o] > 0.05) || worst[o] > TOL)
			gf_daemon_die(&dm, "an output port does not carry its paths' filtered signal");
	}
}

/* The status line "KEY: v1 v2 ..." has @p want values, each a level of signal (not -inf). */
static void check_level_values(const char *st, const char *key, int want)
{
	char k[64];
	snprintf(k, sizeof(k), "\n%s:", key);
	const char *p = strstr(st, k);
	int n = 0;
	if (p) {
		p += strlen(k);
		char *end;
		for (double v = strtod(p, &end); end != p && n < 64; v = strtod(p, &end)) {
			if (!(v > -60.0 && v <= 6.0))
				gf_daemon_die(&dm, "a metered channel shows no signal");
			p = end;
			n++;
		}
	}
	printf("%s: %d values\n", key, n);
	if (n != want)
		gf_daemon_die(&dm, "a level line does not have its side's channels");
}

static void wait_status(const char *what, const char *key, long want, double timeout_s)
{
	char buf[8192];
	double t0 = gf_now_s();
	long got;
	do {
		gf_daemon_idle_ms(&dm, 100);
		gf_daemon_query_status(&dm, buf, sizeof(buf));
		got = gf_daemon_status_num(buf, key);
	} while (got != want && gf_now_s() - t0 < timeout_s);
	printf("%s: %s %ld\n", what, key, got);
	if (got != want) {
		printf("%s\n", buf);
		gf_daemon_die(&dm, what);
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *bin = gf_daemon_test_bin(1);
	gf_daemon_init(&dm, "daemon-crossover");
	uint64_t rng = gf_test_seed("test_daemon_crossover");
	for (int p = 0; p < NPATH; p++) {
		char name[32];
		gf_test_fill_decaying_taps(h[p], TAPS, &rng);
		snprintf(name, sizeof(name), "p%d.txt", p);
		gf_daemon_write_taps_text(&dm, name, h[p], TAPS);
	}
	x = malloc(sizeof(float) * MAX_FRAMES * NIN);
	rec = calloc(MAX_FRAMES * NOUT, sizeof(float));
	CHECK(x && rec);
	for (size_t i = 0; i < MAX_FRAMES * NIN; i++)
		x[i] = 0.15f * gf_test_randf(&rng);
	gf_daemon_tap_init_io(&tap, x, NIN, rec, NOUT, MAX_FRAMES, MAX_FRAMES);
	write_conf(0);

	jc = gf_daemon_jack_client(&dm, "gpufir-crossover", RATE, BLOCK, &tap);
	gf_daemon_spawn(&dm, bin, 0);
	gf_daemon_wait_ready(&dm, 1, 30.0, "start-up");
	gf_daemon_connect_ports(&dm, jc, &tap);
	gf_daemon_idle_ms(&dm, 500);

	/* 1. The signal from the next cycles on; the recording from the same frame time. */
	size_t start = atomic_load(&tap.feed_pos) + RATE / 10;
	atomic_store(&tap.feed_start, start);
	check_outputs(start);

	/* 2. The channel counts. */
	wait_status("the crossover's inputs", "channels", NIN, 5.0);
	wait_status("the crossover's outputs", "output_channels", NOUT, 5.0);

	/* The meters: the capture lines over the 2 inputs, the playback lines over the 4 outputs. */
	char buf[8192];
	/* Each status query starts the status reader's meter interval again: leave this
	 * one some blocks (wait_status has just queried), however fast the answer came. */
	gf_daemon_idle_ms(&dm, 300);
	gf_daemon_query_status(&dm, buf, sizeof(buf));
	check_level_values(buf, "capture_peak_dbfs", NIN);
	check_level_values(buf, "playback_peak_dbfs", NOUT);
	const char *want = gf_daemon_test_cuda() ? "backend: cuda" : "backend: cpu";
	if (!gf_daemon_status_has(buf, want))
		gf_daemon_die(&dm, "the status does not say the mixer runs where the config asked");

	/* 3. output.channels that the mixer does not write: refused, nothing changes. */
	gf_daemon_query_status(&dm, buf, sizeof(buf));
	long fails = gf_daemon_status_num(buf, "reload_failures");
	write_conf(1);
	wait_status("a reload with output.channels = 3", "reload_failures", fails + 1, 20.0);
	gf_daemon_query_status(&dm, buf, sizeof(buf));
	if (!gf_daemon_status_has(buf, "the mixer writes 4 channels, output.channels says 3"))
		gf_daemon_die(&dm, "the failed reload does not say why");
	wait_status("after the refused reload", "output_channels", NOUT, 1.0);

	/* 4. A plain chain: two outputs, so the stream restarts. */
	int ready = dm.nl.ready;
	write_conf(2);
	gf_daemon_wait_ready(&dm, ready + 1, 30.0, "the reload to 2 outputs");
	wait_status("after the reload to a plain chain", "output_channels", 2, 20.0);
	char log[65536];
	if (gf_test_read_file(dm.log_path, log, sizeof(log)) <= 0 || !strstr(log, "output channels 4 -> 2"))
		gf_daemon_die(&dm, "the log does not say the output channels restarted the stream");

	gf_daemon_terminate(&dm, 20.0, "");
	jack_deactivate(jc);
	jack_client_close(jc);
	gf_daemon_finish(&dm);
	printf("PASS\n");
	return 0;
}
