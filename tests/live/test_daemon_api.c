/*
 * The control API against the real `gpufir --live` under JACK's dummy driver
 * (docs/api.md), through both transports: the Unix socket (one JSON line each
 * way) and the WebSocket (a client of RFC 6455 written in tests/lib, not
 * libwebsockets). Version and state; the config read back; a valid SetConfig
 * applied (the filter's taps change, in the API and the status socket, and
 * the recorded output is the new filter's); an invalid SetConfig rejected with
 * its reason while the filter in place keeps running; PatchConfig; Reload
 * back to the file; `gpufir --status --json`. The status commands against the
 * running stream (devices, load, buffer level, signal range, GetStatus), and
 * ValidateConfig accepting and refusing texts while nothing changes.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apiclient.h"
#include "clock.h"
#include "daemonutil.h"
#include "jackplay.h"
#include "run_prog.h"
#include "status.h"
#include "testutil.h"
#include "wsclient.h"

#define RATE 48000
#define PERIOD 256
#define CH 2
#define TAPS_A 64
#define TAPS_B 96

static struct gf_daemon dm;
static char ctl_path[700];
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

/* The config file's text with @p taps_file as the filter. */
static char *config_text(const char *taps_file)
{
	char *t = malloc(4096);
	CHECK(t);
	long n = gf_test_read_file(dm.conf_path, t, 4095);
	CHECK(n > 0);
	t[n] = '\0';
	char *at = strstr(t, "taps_a.txt");
	CHECK(at);
	memcpy(at, taps_file, strlen("taps_a.txt")); /* same length: taps_b.txt, taps_x.txt */
	return t;
}

static long status_taps(void)
{
	char st[GF_STATUS_MAX];
	gf_daemon_query_status(&dm, st, sizeof(st));
	return gf_daemon_status_num(st, "taps");
}

/* The engine reports a swapped-in filter's taps once the audio thread has taken it up: wait for that. */
static void wait_taps(long taps, const char *what)
{
	char want[32];
	snprintf(want, sizeof(want), "\"taps\":%ld,", taps);
	double end = gf_now_s() + 5.0;
	while (!strstr(call("\"GetFilters\""), want) && gf_now_s() < end)
		gf_daemon_idle_ms(&dm, 20);
	expect(call("\"GetFilters\""), want, what);
	CHECK(status_taps() == taps);
}

static void setup(void)
{
	uint64_t rng = gf_test_seed("test_daemon_api");
	float a[TAPS_A], b[TAPS_B];
	gf_daemon_init(&dm, "daemon-api");
	gf_test_fill_decaying_taps(a, TAPS_A, &rng);
	gf_test_fill_decaying_taps(b, TAPS_B, &rng);
	gf_daemon_write_taps_text(&dm, "taps_a.txt", a, TAPS_A);
	gf_daemon_write_taps_text(&dm, "taps_b.txt", b, TAPS_B);
	snprintf(ctl_path, sizeof(ctl_path), "%s/control", dm.dir);
	gf_apic_init(&api, &dm, ctl_path);
	port = gf_daemon_free_tcp_port();
	FILE *f = gf_daemon_conf_begin(&dm, RATE, PERIOD, "cpu", CH, "system");
	fprintf(f,
		"crossfade_ms = 5.0;\ncontrol_socket = \"%s\";\ncontrol_port = %d;\n"
		"filters = ( { name = \"f\"; file = \"taps_a.txt\"; format = \"text\"; } );\n"
		"chain = [\"f\"];\n",
		ctl_path, port);
	CHECK(fclose(f) == 0);
}

static void unix_basics(void)
{
	expect(call("\"GetVersion\""),
	       "{\"GetVersion\":{\"result\":\"Ok\",\"value\":\"" GPUFIR_VERSION "\"}}", "GetVersion");
	expect(call("\"GetState\""), "\"value\":\"Running\"", "GetState");
	expect(call("\"GetStopReason\""), "\"value\":\"None\"", "GetStopReason");
	expect(call("\"GetConfig\""), "taps_a.txt", "GetConfig");
	expect(call("\"GetConfigFilePath\""), dm.conf_path, "GetConfigFilePath");
	expect(call("\"GetCaptureRate\""), "\"value\":48000", "GetCaptureRate");
	expect(call("\"GetFilters\""), "\"taps\":64", "GetFilters");
	expect(call("\"NoSuchCommand\""), "{\"Invalid\":{\"error\":\"unknown command", "unknown command");
	/* The volume is the daemon's (test_daemon_api_volume drives it): 0 dB, the config's default. */
	expect(call("\"GetVolume\""), "{\"GetVolume\":{\"result\":\"Ok\",\"value\":0", "GetVolume");
}

/* The reply's value as a number; the test fails if it is not one. */
static double value_num(const char *cmd)
{
	const char *r = call(cmd);
	double v = gf_apic_num(r, "value");
	printf("%s: %.4f\n", cmd, v);
	if (isnan(v)) {
		printf("%s: %.300s\n", cmd, r);
		gf_daemon_die(&dm, "a command's value is not a number");
	}
	return v;
}

/* A window's reading after a pause (blocks in the window, whichever turn it starts at). */
static double fresh_value(const char *cmd)
{
	gf_daemon_idle_ms(&dm, 150);
	return value_num(cmd);
}

/* What the daemon is doing, read through the status commands: the devices of the config, a load and
 * a playback margin of the running stream, the silence of the dummy driver's capture ports; the
 * device lists. */
static void unix_status(void)
{
	expect(call("\"GetCaptureDevice\""),
	       "{\"GetCaptureDevice\":{\"result\":\"Ok\",\"value\":\"system\"}}",
	       "GetCaptureDevice (the config's input device)");
	expect(call("\"GetPlaybackDevice\""),
	       "{\"GetPlaybackDevice\":{\"result\":\"Ok\",\"value\":\"system\"}}",
	       "GetPlaybackDevice (the config's output device)");
	/* The devices the running stream's audio system lists: JACK's "system" both ways. */
	expect(call("\"GetAvailableCaptureDevices\""), "[\"system\",\"JACK Audio Connection Kit, ",
	       "GetAvailableCaptureDevices");
	const char *r = call("{\"GetAvailablePlaybackDevices\": \"jack\"}");
	expect(r, "[\"system\",\"JACK Audio Connection Kit, ", "GetAvailablePlaybackDevices of JACK");
	CHECK(!strstr(r, "\"ALSA, ") && !strstr(r, "\"OSS, "));
	expect(call("\"GetSupportedDeviceTypes\""), "[[\"JACK Audio Connection Kit\"",
	       "GetSupportedDeviceTypes");
	r = call("\"GetStatus\"");
	expect(r, "\"state\":\"Running\"", "GetStatus's state");
	expect(r, "\"capture_device\":\"system\"", "GetStatus's capture device");
	expect(r, "\"config\":\"", "GetStatus's config path");
	expect(r, dm.conf_path, "GetStatus's config path");
	CHECK(gf_apic_num(r, "pid") == (double)dm.pid);
	CHECK(gf_apic_num(r, "sample_rate") == RATE && gf_apic_num(r, "capture_rate") == RATE);
	CHECK(gf_apic_num(r, "block_frames") == PERIOD && gf_apic_num(r, "channels") == CH);
	CHECK(gf_apic_num(r, "taps") == TAPS_A);
	double blocks0 = gf_apic_num(r, "blocks"), latency = gf_apic_num(r, "latency_frames");
	printf("GetStatus: blocks %.0f, latency_frames %.0f\n", blocks0, latency);
	CHECK(latency >= PERIOD); /* a block queued at least */
	/* The stream runs: load in (0, 100] % of the block period (median of a held window). */
	double load = fresh_value("\"GetProcessingLoad\"");
	if (!(load > 0.0 && load <= 100.0))
		gf_daemon_die(&dm, "GetProcessingLoad not in (0, 100] while the stream runs");
	/* A playback margin between none and the stream's latency; the dummy driver's capture ports
	 * are silent: nothing on the output, range 0. Both read a window held over many blocks,
	 * though every command takes the daemon's loop two turns (the accept, then the line). */
	double level = fresh_value("\"GetBufferLevel\"");
	printf("GetBufferLevel: %.0f frames\n", level);
	if (!(level >= 0.0 && level <= latency))
		gf_daemon_die(&dm, "GetBufferLevel not in [0, latency_frames] while the stream runs");
	CHECK(fresh_value("\"GetSignalRange\"") == 0.0);
	r = call("\"GetStatus\"");
	CHECK(gf_apic_num(r, "blocks") > blocks0); /* the counters move with the audio */
}

/* ValidateConfig checks a text and changes nothing: a good one is Ok, a bad one Error with its
 * reason, and the running config, its filter and the audio go on as before. */
static void unix_validate(void)
{
	char before[4096], st0[GF_STATUS_MAX], st[GF_STATUS_MAX];
	snprintf(before, sizeof(before), "%s", call("\"GetConfig\""));
	CHECK(strstr(before, "taps_a.txt") && strlen(before) < sizeof(before) - 1);
	double swaps0 = gf_apic_num(call("\"GetCounters\""), "swaps");
	gf_daemon_query_status(&dm, st0, sizeof(st0));
	char *text = config_text("taps_b.txt");
	char *msg = gf_apic_string_cmd("ValidateConfig", text);
	expect(call(msg), "{\"ValidateConfig\":{\"result\":\"Ok\",\"value\":\"",
	       "ValidateConfig of a good config");
	free(msg);
	free(text);
	text = config_text("taps_x.txt"); /* no such file */
	msg = gf_apic_string_cmd("ValidateConfig", text);
	const char *r = call(msg);
	expect(r, "{\"ValidateConfig\":{\"result\":{\"ConfigValidationError\":\"",
	       "ValidateConfig of a bad config");
	expect(r, "taps_x.txt", "ValidateConfig's reason");
	free(msg);
	free(text);
	expect(call("{\"ValidateConfig\": \"filters = (\"}"), "\"result\":{\"ConfigValidationError\":\"",
	       "ValidateConfig of broken syntax");
	expect(call("{\"ValidateConfig\": 7}"),
	       "\"result\":{\"InvalidRequestError\":\"ValidateConfig takes a string",
	       "ValidateConfig of a number");
	/* Nothing changed: were the good text applied, filter B (96 taps) would come in by now. */
	gf_daemon_idle_ms(&dm, 600);
	r = call("\"GetConfig\"");
	if (strcmp(r, before) != 0) {
		printf("GetConfig before: %.300s\nafter: %.300s\n", before, r);
		gf_daemon_die(&dm, "ValidateConfig changed the running config");
	}
	expect(call("\"GetFilters\""), "\"taps\":64,", "the filter after ValidateConfig");
	CHECK(gf_apic_num(call("\"GetCounters\""), "swaps") == swaps0);
	gf_daemon_query_status(&dm, st, sizeof(st));
	CHECK(gf_daemon_status_num(st, "taps") == TAPS_A);
	CHECK(gf_daemon_status_num(st, "blocks") > gf_daemon_status_num(st0, "blocks")); /* audio goes on */
	expect(call("\"GetState\""), "\"value\":\"Running\"", "the state after ValidateConfig");
}

/* A valid SetConfig over the WebSocket: applied, the taps and swaps show it. */
static void ws_set_config(int ws)
{
	char buf[65536];
	CHECK(gf_ws_call(ws, "\"GetVersion\"", buf, sizeof(buf), 10000) > 0);
	expect(buf, GPUFIR_VERSION, "WebSocket GetVersion");
	CHECK(gf_ws_call(ws, "\"GetCounters\"", buf, sizeof(buf), 10000) > 0);
	char *text = config_text("taps_b.txt");
	char *msg = gf_apic_string_cmd("SetConfig", text);
	long n = gf_ws_call(ws, msg, buf, sizeof(buf), 30000);
	CHECK(n > 0);
	expect(buf, "{\"SetConfig\":{\"result\":\"Ok\"}}", "valid SetConfig");
	wait_taps(TAPS_B, "the new filter after SetConfig");
	CHECK(gf_ws_call(ws, "\"GetFilters\"", buf, sizeof(buf), 10000) > 0);
	expect(buf, "\"taps\":96", "the new filter after SetConfig, over the WebSocket");
	expect(call("\"GetConfig\""), "taps_b.txt", "GetConfig after SetConfig");
	expect(call("\"GetPreviousConfig\""), "taps_a.txt", "GetPreviousConfig");
	free(msg);
	free(text);
}

/* An invalid SetConfig: the reason comes back, and filter B keeps running. */
static void ws_set_config_invalid(int ws)
{
	char buf[65536];
	char st0[GF_STATUS_MAX], st[GF_STATUS_MAX];
	gf_daemon_query_status(&dm, st0, sizeof(st0));
	char *text = config_text("taps_x.txt"); /* no such file */
	char *msg = gf_apic_string_cmd("SetConfig", text);
	CHECK(gf_ws_call(ws, msg, buf, sizeof(buf), 30000) > 0);
	expect(buf, "{\"SetConfig\":{\"result\":{\"ConfigValidationError\":", "invalid SetConfig");
	expect(buf, "taps_x.txt", "invalid SetConfig's reason");
	free(msg);
	free(text);
	/* A file that exists but holds no taps: the config loads, its build fails on the build
	 * thread, and the reply says so once the reload is over. */
	free(gf_test_write_text_in(dm.dir, "taps_c.txt", "1.0\nnot-a-number\n"));
	text = config_text("taps_c.txt");
	msg = gf_apic_string_cmd("SetConfig", text);
	CHECK(gf_ws_call(ws, msg, buf, sizeof(buf), 30000) > 0);
	expect(buf, "{\"SetConfig\":{\"result\":{\"ConfigValidationError\":\"reload failed: ",
	       "SetConfig failing in its build");
	expect(buf, "taps_c.txt", "the build failure's reason");
	free(msg);
	free(text);
	/* Syntax errors, too, are refused before any build. */
	CHECK(gf_ws_call(ws, "{\"SetConfig\": \"filters = (\"}", buf, sizeof(buf), 10000) > 0);
	expect(buf, "\"result\":{\"ConfigValidationError\":", "SetConfig of broken syntax");
	gf_daemon_idle_ms(&dm, 600);
	gf_daemon_query_status(&dm, st, sizeof(st));
	CHECK(gf_daemon_status_num(st, "taps") == TAPS_B);
	CHECK(gf_daemon_status_num(st, "blocks") > gf_daemon_status_num(st0, "blocks")); /* audio goes on */
	expect(call("\"GetState\""), "Running", "state after a rejected config");
	expect(call("\"GetConfig\""), "taps_b.txt", "GetConfig after a rejected config");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *bin = gf_daemon_test_bin(0);
	setup();
	if (gf_jack_server_start(&dm.jack, "gpufir-api", RATE, 64) != 0)
		gf_test_skip("no private JACK server (jackd missing or did not start)");
	gf_daemon_spawn(&dm, bin, 0);
	gf_daemon_wait_ready(&dm, 1, 30.0, "start-up");
	unix_basics();
	unix_status();
	unix_validate();
	int ws = gf_ws_connect("127.0.0.1", port, 5000);
	if (ws < 0)
		gf_daemon_die(&dm, "no WebSocket on the configured port");
	ws_set_config(ws);
	ws_set_config_invalid(ws);

	/* PatchConfig: one setting replaced over the running text, applied as a SetConfig. */
	expect(call("{\"PatchConfig\": {\"crossfade_ms\": 7.5}}"), "{\"PatchConfig\":{\"result\":\"Ok\"}}",
	       "PatchConfig");
	expect(call("\"GetConfig\""), "crossfade_ms = 7.5", "GetConfig after PatchConfig");
	wait_taps(TAPS_B, "the filter after PatchConfig");
	/* Reload: back to the file, filter A. */
	expect(call("\"Reload\""), "{\"Reload\":{\"result\":\"Ok\"}}", "Reload");
	wait_taps(TAPS_A, "the file's filter after Reload");
	expect(call("\"GetConfig\""), "taps_a.txt", "GetConfig after Reload");

	/* A restart's stream is "Starting" until its first block: then "Running" again. */
	double end = gf_now_s() + 10.0;
	while (!strstr(call("\"GetState\""), "Running") && gf_now_s() < end)
		gf_daemon_idle_ms(&dm, 20);
	expect(call("\"GetState\""), "Running", "the state after a restart");
	/* gpufir --status --json SOCKET: GetStatus's object. */
	struct run_result r;
	run_gpufir(ARGS("--status", "--json", ctl_path), &r);
	if (r.exit_code != 0 || !strstr(r.out, "\"state\": \"Running\"") || !strstr(r.out, "\"taps\": 64")) {
		printf("--status --json: exit %d, output:\n%s%s\n", r.exit_code, r.out, r.err);
		gf_daemon_die(&dm, "gpufir --status --json");
	}
	/* The socket's file removed under the daemon: it listens there again within a second or so. */
	CHECK(unlink(ctl_path) == 0);
	end = gf_now_s() + 5.0;
	while (!gf_test_exists(ctl_path) && gf_now_s() < end)
		gf_daemon_idle_ms(&dm, 50);
	expect(call("\"GetState\""), "Running", "the control socket made again");
	close(ws);
	gf_daemon_terminate(&dm, 10.0, "stop");
	CHECK(!gf_test_exists(ctl_path)); /* removed at exit */
	gf_daemon_finish(&dm);
	gf_apic_free(&api);
	printf("test_daemon_api: ok\n");
	return 0;
}
