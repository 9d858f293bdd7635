/* The control API's volume, mute, level and clipped-sample commands against
 * the real `gpufir --live` under JACK's dummy driver (docs/api.md, "Volume,
 * mute and levels"). A JACK client feeds a 1 kHz sine of 0.8 (-1.94 dBFS) to
 * both channels and records what comes back through an identity filter; the
 * config has volume_db = 0, volume_limit_db = 3 and a state_file.
 * 1. the level commands give the sine's peak and RMS (within 0.5 dB), capture
 *    and playback; GetSignalRange twice the output's peak (3 %);
 * 2. SetVolume -20: the reply and GetVolume say -20, the recorded output drops
 *    20 dB (measured) after the ramp and the playback meters and the range follow;
 * 3. SetVolume 10 replies the limit, 3; the sine at +3 dB passes full scale
 *    and GetClippedSamples counts; ResetClippedSamples zeroes it;
 * 4. SetMute true silences the output (meters -1000 dB), ToggleMute brings it
 *    back; AdjustVolume, plain and with [step, min, max];
 * 5. CamillaDSP's commands (docs/api.md, "CamillaDSP clients"): fader 0 is the
 *    volume, five faders; the state file; rate adjust 1 (one clock); the levels
 *    over the last 0.5 s, since the client's last call and since a reset match
 *    the sine as the plain meters do;
 * 6. SubscribeSignalLevels 100 over the WebSocket: pushes about every 100 ms,
 *    none after StopSubscription;
 * 7. a restart keeps the volume set through the API (the state file). */
#include <jack/jack.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apiclient.h"
#include "clock.h"
#include "daemonutil.h"
#include "testutil.h"
#include "wsclient.h"

#define RATE 48000
#define CH 2
#define BLOCK 64
#define MAX_S 90
#define MAX_FRAMES ((size_t)RATE * MAX_S)
#define AMP 0.8
#define TOL_DB 0.5
/* A level command's window: 150 periods of the 1 kHz sine, 112 blocks; twice that only waited. */
#define LEVEL_MS 150

static struct gf_daemon dm;
static float *x, *rec;
static struct gf_daemon_tap tap;
static char ctl_path[700], state_path[700];
static int port;
static struct gf_apiclient api;

static const char *call(const char *cmd)
{
	return gf_apic_call(&api, cmd);
}

static void expect(const char *got, const char *want, const char *what)
{
	gf_apic_expect(&api, got, want, what);
}

static void expect_near(double got, double want, double tol, const char *what)
{
	gf_apic_expect_near(&api, got, want, tol, what);
}

static double value_of(const char *reply)
{
	return gf_apic_num(reply, "value");
}

/* The volume written to the state file: GetStateFileUpdated true within 5 s (its debounce, 0.5 s
 * after the last change; at most 2 s after the first), polled. */
static void state_file_written(const char *what)
{
	const char *r = call("\"GetStateFileUpdated\"");
	for (double end = gf_now_s() + 5.0; !strstr(r, "\"value\":true") && gf_now_s() < end;) {
		gf_daemon_idle_ms(&dm, 100);
		r = call("\"GetStateFileUpdated\"");
	}
	expect(r, "\"value\":true", what);
}

/* A level command's reading over @p ms (the API reader's interval: read once to start it). */
static double level(const char *cmd, int ms)
{
	call(cmd);
	gf_daemon_idle_ms(&dm, ms);
	return value_of(call(cmd));
}

/* RMS in dBFS of the last 100 ms recorded (channel 0). */
static double rec_rms_db(void)
{
	size_t end = atomic_load_explicit(&tap.rec_pos, memory_order_acquire), n = RATE / 10;
	CHECK(end > n);
	double s = 0.0;
	for (size_t i = end - n; i < end; i++)
		s += (double)rec[i * CH] * rec[i * CH];
	return s > 0 ? 10.0 * log10(s / n) : -1000.0;
}

static void write_conf(void)
{
	FILE *f = fopen(dm.conf_path, "w");
	CHECK(f);
	fprintf(f,
		"sample_rate = %d;\nblock_frames = %d;\nbackend = \"cpu\";\ncrossfade_ms = 5.0;\n"
		"latency_slack = %u;\nstatus_socket = \"%s\";\ncontrol_socket = \"%s\";\ncontrol_port = %d;\n"
		"input = { device = \"system\"; host_api = \"JACK\"; channels = %d; };\n"
		"output = { device = \"system\"; host_api = \"JACK\"; };\n"
		"filters = ( { name = \"id\"; design = \"identity\"; } );\nchain = [\"id\"];\n"
		"volume_db = 0.0;\nvolume_limit_db = 3.0;\nstate_file = \"%s\";\n",
		RATE, BLOCK, gf_test_latency_slack(), dm.status_path, ctl_path, port, CH, state_path);
	CHECK(fclose(f) == 0);
}

static void levels_match(double gain_db, const char *when)
{
	double peak = 20.0 * log10(AMP), rms = peak - 3.01;
	printf("-- %s\n", when);
	expect_near(level("\"GetCaptureSignalPeak\"", LEVEL_MS), peak, TOL_DB, "GetCaptureSignalPeak");
	expect_near(level("\"GetCaptureSignalRms\"", LEVEL_MS), rms, TOL_DB, "GetCaptureSignalRms");
	expect_near(level("\"GetPlaybackSignalPeak\"", LEVEL_MS), peak + gain_db, TOL_DB,
		    "GetPlaybackSignalPeak");
	expect_near(level("\"GetPlaybackSignalRms\"", LEVEL_MS), rms + gain_db, TOL_DB,
		    "GetPlaybackSignalRms");
	expect_near(rec_rms_db(), rms + gain_db, TOL_DB, "the recorded output's RMS");
}

/* @p key of @p cmd's reply within 3 % of @p want, read after pauses for up to 2 s (the ramp, and a
 * window with blocks: the daemon takes the output's peak anew on each turn of its loop, and each
 * request is one); else the test fails. */
static void window_match(const char *cmd, const char *key, double want, const char *what)
{
	double got = NAN;
	for (double end = gf_now_s() + 2.0; gf_now_s() < end;) {
		gf_daemon_idle_ms(&dm, 150);
		got = gf_apic_num(call(cmd), key);
		if (fabs(got - want) <= 0.03 * want)
			break;
	}
	expect_near(got, want, 0.03 * want, what);
}

/* GetSignalRange: twice the output's peak (after the volume), the sine's 2 * AMP at @p gain_db. */
static void range_match(double gain_db)
{
	double want = 2.0 * AMP * pow(10.0, gain_db / 20.0);
	window_match("\"GetSignalRange\"", "value", want, "GetSignalRange");
	window_match("\"GetStatus\"", "signal_range", want, "GetStatus's signal_range");
}

static void volume_and_clipping(void)
{
	call("\"GetSignalLevels\""); /* starts the API's level reader: its first window is partial */
	gf_daemon_idle_ms(&dm, 300);
	const char *r = call("\"GetSignalLevels\"");
	expect(r, "\"playback_peak\":[", "GetSignalLevels");
	expect_near(gf_apic_num(r, "capture_rms"), 20.0 * log10(AMP) - 3.01, 1.0,
		    "GetSignalLevels capture_rms");
	levels_match(0.0, "volume 0 dB");
	range_match(0.0);
	double before = rec_rms_db();
	expect_near(value_of(call("{\"SetVolume\": -20}")), -20.0, 1e-6, "SetVolume -20's reply");
	expect_near(value_of(call("\"GetVolume\"")), -20.0, 1e-6, "GetVolume after SetVolume -20");
	gf_daemon_idle_ms(&dm, 400); /* the ramp (GF_GAIN_RAMP_MS) and some */
	expect_near(rec_rms_db() - before, -20.0, TOL_DB, "the recorded output's drop");
	levels_match(-20.0, "volume -20 dB");
	range_match(-20.0);

	/* Above the limit: clamped to it, and the sine then passes full scale. */
	expect_near(value_of(call("\"GetClippedSamples\"")), 0.0, 0.0, "GetClippedSamples at -20 dB");
	expect_near(value_of(call("{\"SetVolume\": 10}")), 3.0, 1e-6, "SetVolume 10's reply (the limit)");
	expect_near(value_of(call("\"GetVolume\"")), 3.0, 1e-6, "GetVolume after SetVolume 10");
	gf_daemon_idle_ms(&dm, 400);
	double clipped = value_of(call("\"GetClippedSamples\""));
	printf("clipped samples at +3 dB: %.0f\n", clipped);
	if (!(clipped > 0))
		gf_daemon_die(&dm, "GetClippedSamples did not count the sine over full scale");
	expect_near(value_of(call("{\"SetVolume\": 0}")), 0.0, 1e-6, "SetVolume 0's reply");
	gf_daemon_idle_ms(&dm, 300);
	expect(call("\"ResetClippedSamples\""), "{\"ResetClippedSamples\":{\"result\":\"Ok\"}}",
	       "ResetClippedSamples");
	gf_daemon_idle_ms(&dm, 300);
	expect_near(value_of(call("\"GetClippedSamples\"")), 0.0, 0.0, "GetClippedSamples after the reset");
}

static void mute_and_adjust(void)
{
	expect(call("{\"SetMute\": true}"), "{\"SetMute\":{\"result\":\"Ok\"}}", "SetMute true");
	expect(call("\"GetMute\""), "\"value\":true", "GetMute after SetMute true");
	gf_daemon_idle_ms(&dm, 400);
	expect_near(rec_rms_db(), -1000.0, 0.0, "the recorded output muted");
	expect_near(level("\"GetPlaybackSignalPeak\"", LEVEL_MS), -1000.0, 0.0,
		    "playback peak muted (silence)");
	expect(call("\"ToggleMute\""), "\"value\":false", "ToggleMute's reply");
	expect(call("\"GetMute\""), "\"value\":false", "GetMute after ToggleMute");
	gf_daemon_idle_ms(&dm, 400);
	levels_match(0.0, "unmuted");

	expect_near(value_of(call("{\"AdjustVolume\": -6}")), -6.0, 1e-6, "AdjustVolume -6's reply");
	expect_near(value_of(call("{\"AdjustVolume\": [-10, -12, 0]}")), -12.0, 1e-6,
		    "AdjustVolume [-10, -12, 0]'s reply (its minimum)");
	expect_near(value_of(call("\"GetVolume\"")), -12.0, 1e-6, "GetVolume after AdjustVolume");
	gf_daemon_idle_ms(&dm, 400);
	levels_match(-12.0, "volume -12 dB by AdjustVolume");
}

/* A CamillaDSP client's commands at volume -12 dB, which they leave in force. */
static void camilla_client(void)
{
	double peak = 20.0 * log10(AMP) - 12.0, rms = peak - 3.01;
	const char *r = call("\"GetFaders\"");
	expect(r, "{\"GetFaders\":{\"result\":\"Ok\",\"value\":[{\"volume\":-12.0,\"mute\":false},",
	       "GetFaders");
	expect(r, "{\"volume\":0.0,\"mute\":false}]}}", "GetFaders' Aux4, the fifth");
	expect(call("{\"SetFaderVolume\": [0, -6.0]}"), "{\"SetFaderVolume\":{\"result\":\"Ok\"}}",
	       "SetFaderVolume of Main");
	expect_near(value_of(call("\"GetVolume\"")), -6.0, 1e-6, "GetVolume after SetFaderVolume");
	expect(call("{\"AdjustFaderVolume\": [0, -6.0]}"), "\"value\":[0,-12.0]", "AdjustFaderVolume");
	expect(call("{\"GetFaderVolume\": 9}"), "{\"GetFaderVolume\":{\"result\":\"InvalidFaderError\"",
	       "GetFaderVolume 9");
	expect(call("\"GetStateFilePath\""), state_path, "GetStateFilePath");
	expect(call("\"GetRateAdjust\""), "\"value\":1.0}", "GetRateAdjust with one clock");
	expect(call("\"GetStopReason\""), "\"value\":\"None\"", "GetStopReason");
	state_file_written("GetStateFileUpdated");
	call("{\"GetPlaybackSignalPeakSince\": 0.5}"); /* the history polls from now on */
	gf_daemon_idle_ms(&dm, 700);
	expect_near(value_of(call("{\"GetPlaybackSignalPeakSince\": 0.5}")), peak, TOL_DB,
		    "GetPlaybackSignalPeakSince 0.5");
	expect_near(gf_apic_num(call("{\"GetSignalLevelsSince\": 0.5}"), "capture_rms"), rms + 12.0, TOL_DB,
		    "GetSignalLevelsSince 0.5's capture_rms");
	/* "Since last" is per connection: a WebSocket's, kept open as CamillaDSP clients keep theirs. */
	char buf[65536];
	int ws = gf_ws_connect("127.0.0.1", port, 5000);
	if (ws < 0)
		gf_daemon_die(&dm, "no WebSocket on the configured port");
	CHECK(gf_ws_call(ws, "\"GetPlaybackSignalRmsSinceLast\"", buf, sizeof(buf), 10000) > 0);
	gf_daemon_idle_ms(&dm, 300);
	CHECK(gf_ws_call(ws, "\"GetPlaybackSignalRmsSinceLast\"", buf, sizeof(buf), 10000) > 0);
	expect_near(value_of(buf), rms, TOL_DB, "GetPlaybackSignalRmsSinceLast");
	close(ws);
	expect(call("\"ResetSignalPeaksSinceStart\""), "{\"ResetSignalPeaksSinceStart\":{\"result\":\"Ok\"}}",
	       "ResetSignalPeaksSinceStart");
	gf_daemon_idle_ms(&dm, 300);
	r = call("\"GetSignalPeaksSinceStart\"");
	expect_near(gf_apic_num(r, "playback"), peak, TOL_DB, "GetSignalPeaksSinceStart's playback");
	expect_near(gf_apic_num(r, "capture"), peak + 12.0, TOL_DB, "GetSignalPeaksSinceStart's capture");
}

/* Pushes every ~100 ms while subscribed, none after StopSubscription. */
static void subscription(void)
{
	char buf[65536];
	int ws = gf_ws_connect("127.0.0.1", port, 5000);
	if (ws < 0)
		gf_daemon_die(&dm, "no WebSocket on the configured port");
	CHECK(gf_ws_call(ws, "{\"SubscribeSignalLevels\": 100}", buf, sizeof(buf), 10000) > 0);
	expect(buf, "{\"SubscribeSignalLevels\":{\"result\":\"Ok\"", "SubscribeSignalLevels");
	double t0 = gf_now_s(), first = 0, last = 0;
	int n = 0;
	while (gf_now_s() - t0 < 2.0) {
		CHECK(gf_ws_recv(ws, buf, sizeof(buf), 1000, NULL) > 0);
		expect(buf, "{\"SignalLevelsEvent\":{\"result\":\"Ok\",\"value\":{", "a SignalLevelsEvent");
		expect_near(gf_apic_num(buf, "playback_peak"), 20.0 * log10(AMP) - 12.0, TOL_DB,
			    "the push's playback peak");
		last = gf_now_s();
		if (n++ == 0)
			first = last;
	}
	double mean_ms = n > 1 ? 1000.0 * (last - first) / (n - 1) : 0.0;
	printf("%d pushes, %.1f ms apart on average\n", n, mean_ms);
	if (n < 10 || !(mean_ms > 80.0 && mean_ms < 130.0))
		gf_daemon_die(&dm, "the pushes do not come about every 100 ms");
	CHECK(gf_ws_send(ws, "\"StopSubscription\"") == 0);
	do
		CHECK(gf_ws_recv(ws, buf, sizeof(buf), 5000, NULL) > 0);
	while (!strstr(buf, "StopSubscription"));
	expect(buf, "{\"StopSubscription\":{\"result\":\"Ok\"}}", "StopSubscription");
	if (gf_ws_recv(ws, buf, sizeof(buf), 600, NULL) != -1) {
		printf("after StopSubscription: %.300s\n", buf);
		gf_daemon_die(&dm, "a push after StopSubscription");
	}
	close(ws);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *bin = gf_daemon_test_bin(1);
	gf_daemon_init(&dm, "daemon-api-volume");
	snprintf(state_path, sizeof(state_path), "%s/state", dm.dir);
	snprintf(ctl_path, sizeof(ctl_path), "%s/control", dm.dir);
	gf_apic_init(&api, &dm, ctl_path);
	port = gf_daemon_free_tcp_port();
	x = malloc(sizeof(float) * MAX_FRAMES * CH);
	rec = calloc(MAX_FRAMES * CH, sizeof(float));
	CHECK(x && rec);
	gf_daemon_tap_init(&tap, x, rec, MAX_FRAMES, CH, 0);
	for (size_t i = 0; i < MAX_FRAMES; i++)
		for (int c = 0; c < CH; c++)
			x[i * CH + c] = (float)(AMP * sin(2.0 * M_PI * 1000.0 * (double)i / RATE));
	write_conf();
	jack_client_t *jc = gf_daemon_jack_client(&dm, "gpufir-apivol", RATE, BLOCK, &tap);
	gf_daemon_spawn(&dm, bin, 0);
	gf_daemon_wait_ready(&dm, 1, 30.0, "start-up");
	gf_daemon_connect_ports(&dm, jc, &tap);
	gf_daemon_idle_ms(&dm, 1000);

	volume_and_clipping();
	mute_and_adjust();
	camilla_client();
	subscription();

	/* The volume set through the API outlives a restart (state file, written after the debounce). */
	state_file_written("GetStateFileUpdated before the restart");
	gf_daemon_terminate(&dm, 20.0, "");
	int ready = dm.nl.ready;
	gf_daemon_spawn(&dm, bin, 0);
	gf_daemon_wait_ready(&dm, ready + 1, 30.0, "restart");
	gf_daemon_connect_ports(&dm, jc, &tap);
	gf_daemon_idle_ms(&dm, 1000);
	expect_near(value_of(call("\"GetVolume\"")), -12.0, 1e-6, "GetVolume after a restart (state file)");
	levels_match(-12.0, "after a restart");
	gf_daemon_terminate(&dm, 20.0, "");
	jack_deactivate(jc);
	jack_client_close(jc);
	gf_daemon_finish(&dm);
	gf_apic_free(&api);
	printf("PASS\n");
	return 0;
}
