/* CamillaDSP 4 clients against the control API (docs/api.md, "CamillaDSP
 * clients"), through the fake daemon: each reply checked against the shapes of
 * CamillaDSP's websocket.md and its socketserver's replies, as pyCamillaDSP 4
 * parses them: typed errors ({"result": {"ConfigValidationError": why}} and
 * the bare simple ones), StopReason's names and {"CaptureError": why}, the five
 * faders, the state file, update interval, rate adjust and resampler load, the
 * commands gpufir does not have, and the level history ("since" N seconds,
 * since a client's last call, peaks since start). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "api_fake.h"
#include "testutil.h"

/* The reply to @p msg, compact, is exactly @p want. */
static void expect_text(struct gf_api *a, const char *msg, const char *want)
{
	clear();
	gf_api_handle(a, NULL, capture, msg, strlen(msg));
	if (n_replies != 1 || strcmp(replies[0], want) != 0) {
		fprintf(stderr, "%s:\n  got  %s\n  want %s\n", msg, n_replies ? replies[0] : "(none)", want);
		CHECK(0);
	}
}

static void test_errors(struct gf_api *a, struct fake *f)
{
	/* pyCamillaDSP raises ConfigValidationError from this (it raised UnknownError for "Error"). */
	expect_text(a, "{\"ValidateConfig\": \"bad = 1;\"}",
		    "{\"ValidateConfig\":{\"result\":{\"ConfigValidationError\":\"<string>:1: bad setting\"},"
		    "\"value\":\"<string>:1: bad setting\"}}");
	expect_typed(a, "{\"SetConfig\": \"bad\"}", "SetConfig", "ConfigValidationError", "bad setting");
	/* A build that fails: by its code, a file that cannot be read is ConfigReadError. */
	clear();
	gf_api_handle(a, (void *)1, capture, "\"Reload\"", 8);
	gf_api_complete(a, f->token, GF_E_IO, "reload failed: /etc/gpufir/x.conf: cannot open");
	CHECK(n_replies == 1 &&
	      strcmp(replies[0], "{\"Reload\":{\"result\":{\"ConfigReadError\":\"reload "
				 "failed: /etc/gpufir/x.conf: cannot open\"},\"value\":"
				 "\"reload failed: /etc/gpufir/x.conf: cannot open\"}}") == 0);
	clear();
	gf_api_handle(a, (void *)1, capture, "\"Reload\"", 8);
	gf_api_complete(a, f->token, GF_E_CONFIG, "reload failed: x.conf:3: nope");
	CHECK(n_replies == 1 && strstr(replies[0], "{\"Reload\":{\"result\":{\"ConfigValidationError\":"));
	/* Too many waiting: CamillaDSP's simple RateLimitExceededError, a bare string. */
	clear();
	for (int i = 0; i < 33; i++)
		gf_api_handle(a, (void *)3, capture, "\"Reload\"", 8);
	CHECK(n_replies == 1 &&
	      strncmp(replies[0], "{\"Reload\":{\"result\":\"RateLimitExceededError\"", 44) == 0);
	gf_api_client_gone(a, (void *)3);
	for (uint64_t t = 1; t <= f->token; t++)
		gf_api_complete(a, t, 0, NULL);
	/* Arguments: a wrong kind is an invalid request, a value out of range an invalid value. */
	expect_typed(a, "{\"SetVolume\": \"loud\"}", "SetVolume", "InvalidRequestError", "takes a number");
	expect_typed(a, "{\"AdjustVolume\": [1, 2]}", "AdjustVolume", "InvalidValueError", "[dB, min, max]");
	f->have_volume = 0;
	expect_typed(a, "\"GetVolume\"", "GetVolume", "InvalidRequestError", "not available");
	f->have_volume = 1;
	/* CamillaDSP's commands that gpufir has no meaning for: a typed error a client can catch. */
	expect_typed(a, "\"Stop\"", "Stop", "InvalidRequestError", "not supported by gpufir");
	expect_typed(a, "{\"SetConfigFilePath\": \"/x.yml\"}", "SetConfigFilePath", "InvalidRequestError",
		     "the config file is the command line's");
	expect_typed(a, "\"GetConfigJson\"", "GetConfigJson", "InvalidRequestError", "libconfig");
	expect_typed(a, "{\"SetFaderExternalVolume\": [0, -3.0]}", "SetFaderExternalVolume",
		     "InvalidRequestError", "Loudness");
	/* A name CamillaDSP does not have either: its own Invalid. */
	expect_invalid(a, "\"GetNothing\"", 12, "unknown command");
}

static void test_stop_reason(struct gf_api *a, struct fake *f)
{
	expect_text(a, "\"GetStopReason\"", "{\"GetStopReason\":{\"result\":\"Ok\",\"value\":\"None\"}}");
	f->stop_reason = "CaptureError";
	f->stop_text = "audio server lost: the audio server went away";
	expect_text(
		a, "\"GetStopReason\"",
		"{\"GetStopReason\":{\"result\":\"Ok\",\"value\":{\"CaptureError\":\"audio server lost: the "
		"audio server went away\"}}}");
	f->stop_reason = "Done";
	f->stop_text = NULL;
	expect_text(a, "\"GetStopReason\"", "{\"GetStopReason\":{\"result\":\"Ok\",\"value\":\"Done\"}}");
	f->stop_reason = NULL;
}

/* A [fader, value] reply. */
static void check_pair(json_t *v, int fader, json_t *want)
{
	CHECK(json_is_array(v) && json_array_size(v) == 2);
	CHECK(json_integer_value(json_array_get(v, 0)) == fader);
	CHECK(json_equal(json_array_get(v, 1), want));
	json_decref(v);
	json_decref(want);
}

static void test_faders(struct gf_api *a, struct fake *f)
{
	f->volume = -10.0;
	f->mute = 0;
	f->limit = 6.0;
	expect_text(a, "\"GetFaders\"",
		    "{\"GetFaders\":{\"result\":\"Ok\",\"value\":[{\"volume\":-10.0,\"mute\":false},"
		    "{\"volume\":0.0,\"mute\":false},{\"volume\":0.0,\"mute\":false},"
		    "{\"volume\":0.0,\"mute\":false},{\"volume\":0.0,\"mute\":false}]}}");
	check_pair(ok_value(a, "{\"GetFaderVolume\": 0}", "GetFaderVolume"), 0, json_real(-10.0));
	/* Fader 0 is the program's volume, clamped as SetVolume; Aux faders are kept apart. */
	CHECK(ok_value(a, "{\"SetFaderVolume\": [0, -12.5]}", "SetFaderVolume") == NULL);
	CHECK(f->volume == -12.5);
	CHECK(ok_value(a, "{\"SetFaderVolume\": [2, -6.0]}", "SetFaderVolume") == NULL);
	CHECK(f->volume == -12.5);
	check_pair(ok_value(a, "{\"GetFaderVolume\": 2}", "GetFaderVolume"), 2, json_real(-6.0));
	check_pair(ok_value(a, "{\"AdjustFaderVolume\": [0, -3.0]}", "AdjustFaderVolume"), 0,
		   json_real(-15.5));
	CHECK(f->volume == -15.5);
	check_pair(ok_value(a, "{\"AdjustFaderVolume\": [0, [-10.0, -20.0, 0.0]]}", "AdjustFaderVolume"), 0,
		   json_real(-20.0));
	check_pair(ok_value(a, "{\"AdjustFaderVolume\": [0, 80.0]}", "AdjustFaderVolume"), 0,
		   json_real(6.0)); /* the program's limit */
	check_pair(ok_value(a, "{\"AdjustFaderVolume\": [4, 100.0]}", "AdjustFaderVolume"), 4,
		   json_real(50.0)); /* CamillaDSP's range */
	expect_typed(a, "{\"AdjustFaderVolume\": [1, [1.0, 5.0, 2.0]]}", "AdjustFaderVolume",
		     "InvalidValueError", "below the minimum");
	/* Mute */
	check_pair(ok_value(a, "{\"ToggleFaderMute\": 0}", "ToggleFaderMute"), 0, json_true());
	CHECK(f->mute == 1);
	check_pair(ok_value(a, "{\"ToggleFaderMute\": 3}", "ToggleFaderMute"), 3, json_true());
	CHECK(ok_value(a, "{\"SetFaderMute\": [0, false]}", "SetFaderMute") == NULL);
	CHECK(f->mute == 0);
	check_pair(ok_value(a, "{\"GetFaderMute\": 0}", "GetFaderMute"), 0, json_false());
	check_pair(ok_value(a, "{\"GetFaderMute\": 3}", "GetFaderMute"), 3, json_true());
	json_t *v = ok_value(a, "\"GetFaders\"", "GetFaders");
	CHECK(json_array_size(v) == 5 && json_is_true(json_object_get(json_array_get(v, 3), "mute")));
	CHECK(json_real_value(json_object_get(json_array_get(v, 2), "volume")) == -6.0);
	json_decref(v);
	/* No fader 5: CamillaDSP's simple InvalidFaderError (a bare string). */
	expect_typed(a, "{\"GetFaderVolume\": 5}", "GetFaderVolume", "InvalidFaderError", "no fader 5");
	expect_typed(a, "{\"SetFaderMute\": [-1, true]}", "SetFaderMute", "InvalidFaderError", "no fader -1");
	expect_typed(a, "{\"GetFaderVolume\": \"Main\"}", "GetFaderVolume", "InvalidValueError",
		     "fader number");
	expect_typed(a, "{\"SetFaderVolume\": 0}", "SetFaderVolume", "InvalidValueError", "[fader, dB]");
	expect_typed(a, "{\"SetFaderMute\": [0, 1]}", "SetFaderMute", "InvalidValueError", "true or false");
}

static void test_misc(struct gf_api *a, struct fake *f)
{
	expect_text(a, "\"GetStateFilePath\"", "{\"GetStateFilePath\":{\"result\":\"Ok\",\"value\":null}}");
	f->state_file = "/var/lib/gpufir/state";
	check_string(ok_value(a, "\"GetStateFilePath\"", "GetStateFilePath"), "/var/lib/gpufir/state");
	expect_text(a, "\"GetStateFileUpdated\"",
		    "{\"GetStateFileUpdated\":{\"result\":\"Ok\",\"value\":true}}");
	f->state_dirty = 1;
	expect_text(a, "\"GetStateFileUpdated\"",
		    "{\"GetStateFileUpdated\":{\"result\":\"Ok\",\"value\":false}}");
	expect_text(a, "\"GetUpdateInterval\"", "{\"GetUpdateInterval\":{\"result\":\"Ok\",\"value\":1000}}");
	expect_text(a, "{\"SetUpdateInterval\": 500}", "{\"SetUpdateInterval\":{\"result\":\"Ok\"}}");
	check_number(ok_value(a, "\"GetUpdateInterval\"", "GetUpdateInterval"), 500);
	expect_typed(a, "{\"SetUpdateInterval\": -1}", "SetUpdateInterval", "InvalidValueError",
		     "whole number");
	expect_text(a, "\"GetRateAdjust\"", "{\"GetRateAdjust\":{\"result\":\"Ok\",\"value\":1.0}}");
	f->rate_adjust = 1.0002;
	check_number(ok_value(a, "\"GetRateAdjust\"", "GetRateAdjust"), 1.0002);
	expect_text(a, "\"GetResamplerLoad\"", "{\"GetResamplerLoad\":{\"result\":\"Ok\",\"value\":0.0}}");
	/* CamillaDSP's buffer level is unsigned: none is 0 (GetStatus's is null). */
	f->no_buffer = 1;
	expect_text(a, "\"GetBufferLevel\"", "{\"GetBufferLevel\":{\"result\":\"Ok\",\"value\":0}}");
	json_t *v = ok_value(a, "\"GetStatus\"", "GetStatus");
	CHECK(json_is_null(json_object_get(v, "buffer_level")));
	json_decref(v);
	f->no_buffer = 0;
}

/* ---- the level history ---------------------------------------------------------- */

/* Levels of one value on every channel (2 captured, 1 played), over @p secs of audio. */
static struct gf_api_levels flat(double peak, double rms, double secs)
{
	struct gf_api_levels lv = {.n_capture = 2, .n_playback = 1, .interval_s = secs};
	for (int c = 0; c < 2; c++) {
		lv.capture_peak[c] = peak;
		lv.capture_rms[c] = rms;
	}
	lv.playback_peak[0] = peak;
	lv.playback_rms[0] = rms;
	return lv;
}

/* The value of a list reply to @p msg from @p client: its length, and its first entry. */
static double first_of(struct gf_api *a, void *client, const char *msg, const char *name, size_t *len)
{
	json_t *r = ask(a, client, msg);
	json_t *v = json_object_get(body_of(r, name, "Ok"), "value");
	CHECK(json_is_array(v));
	*len = json_array_size(v);
	double x = *len ? json_number_value(json_array_get(v, 0)) : NAN;
	json_decref(r);
	return x;
}

static int near(double x, double want)
{
	if (fabs(x - want) < 1e-3)
		return 1;
	fprintf(stderr, "level %.4f, expected %.4f\n", x, want);
	return 0;
}

static void test_since(struct gf_api *a, struct fake *f)
{
	struct gf_api_levels loud = flat(-6.0, -20.0, 0.1), quiet = flat(-40.0, -40.0, 0.1);
	size_t n;
	f->levels = &loud;
	CHECK(gf_api_tick(a, 100000) == -1); /* nothing to poll for yet */
	/* The first "since": a fresh reading, and the history polls from now on. */
	json_t *v = ok_value(a, "{\"GetSignalLevelsSince\": 1.0}", "GetSignalLevelsSince");
	CHECK(json_array_size(json_object_get(v, "capture_peak")) == 2);
	CHECK(json_array_size(json_object_get(v, "playback_rms")) == 1);
	CHECK(near(json_number_value(json_array_get(json_object_get(v, "capture_rms"), 1)), -20.0));
	json_decref(v);
	f->levels = &quiet;
	int polls = f->levels_calls;
	for (int t = 100100; t <= 102000; t += 100)
		CHECK(gf_api_tick(a, t) == 100); /* armed: a reading every slot */
	polls = f->levels_calls - polls;
	CHECK(polls == 20);
	/* The last 0.5 s: quiet only; the last 5 s: the loud reading too. */
	CHECK(near(first_of(a, NULL, "{\"GetCaptureSignalPeakSince\": 0.5}", "GetCaptureSignalPeakSince", &n),
		   -40.0));
	CHECK(n == 2);
	CHECK(near(
		first_of(a, NULL, "{\"GetPlaybackSignalPeakSince\": 5.0}", "GetPlaybackSignalPeakSince", &n),
		-6.0));
	/* The RMS weighs each reading's energy by its length: the loud 0.1 s, the polls' and the
	 * three calls' fresh quiet readings, 0.1 s each. */
	int quiet_n = polls + 3;
	double ms = (0.1 * 1e-2 + quiet_n * 0.1 * 1e-4) / (0.1 + quiet_n * 0.1);
	CHECK(near(first_of(a, NULL, "{\"GetCaptureSignalRmsSince\": 5.0}", "GetCaptureSignalRmsSince", &n),
		   10.0 * log10(ms)));
	expect_typed(a, "{\"GetSignalLevelsSince\": 0}", "GetSignalLevelsSince", "InvalidValueError",
		     "seconds above 0");
	/* A plain reading right after a poll (no audio of its own): the audio the polls took since
	 * the previous plain reading, not silence. */
	struct gf_api_levels none = flat(-1000.0, -1000.0, 0.0);
	CHECK(gf_api_tick(a, 102100) == 100);
	json_decref(ok_value(a, "\"GetCaptureSignalPeak\"", "GetCaptureSignalPeak"));
	CHECK(gf_api_tick(a, 102200) == 100 && gf_api_tick(a, 102300) == 100);
	f->levels = &none;
	CHECK(near(first_of(a, NULL, "\"GetCaptureSignalPeak\"", "GetCaptureSignalPeak", &n), -40.0));
	CHECK(n == 2);
	/* 20 s after the last "since" the polls stop. */
	CHECK(gf_api_tick(a, 102000 + 20000) == -1);
}

static void test_since_last(struct gf_api *a, struct fake *f)
{
	struct gf_api_levels c = flat(-10.0, -13.0, 0.1), none = flat(-1000.0, -1000.0, 0.0),
			     e = flat(-30.0, -33.0, 0.1);
	void *x = (void *)11, *y = (void *)12;
	size_t n;
	gf_api_tick(a, 200000);
	f->levels = &c;
	/* A client's first call: the reading it makes. */
	CHECK(near(first_of(a, x, "\"GetPlaybackSignalPeakSinceLast\"", "GetPlaybackSignalPeakSinceLast", &n),
		   -10.0));
	/* Again with no audio since: CamillaDSP's empty list. */
	f->levels = &none;
	first_of(a, x, "\"GetPlaybackSignalPeakSinceLast\"", "GetPlaybackSignalPeakSinceLast", &n);
	CHECK(n == 0);
	/* Audio read meanwhile by others (a plain GetSignalLevels) still counts for this client. */
	f->levels = &e;
	json_decref(ok_value(a, "\"GetSignalLevels\"", "GetSignalLevels"));
	f->levels = &none;
	CHECK(near(first_of(a, x, "\"GetPlaybackSignalPeakSinceLast\"", "GetPlaybackSignalPeakSinceLast", &n),
		   -30.0));
	/* Each list its own mark: the capture peak has not been read by x since its first call. */
	CHECK(near(first_of(a, x, "\"GetCaptureSignalPeakSinceLast\"", "GetCaptureSignalPeakSinceLast", &n),
		   -10.0));
	CHECK(n == 2);
	/* Another client starts from its own first call. */
	f->levels = &e;
	CHECK(near(first_of(a, y, "\"GetCaptureSignalRmsSinceLast\"", "GetCaptureSignalRmsSinceLast", &n),
		   -33.0));
	json_t *r = ask(a, x, "\"GetSignalLevelsSinceLast\"");
	json_t *v = json_object_get(body_of(r, "GetSignalLevelsSinceLast", "Ok"), "value");
	CHECK(json_object_size(v) == 4);
	CHECK(near(json_number_value(json_array_get(json_object_get(v, "playback_peak"), 0)), -30.0));
	CHECK(near(json_number_value(json_array_get(json_object_get(v, "capture_peak"), 1)), -30.0));
	json_decref(r);
	/* A client gone: its marks go, a new one at that address starts afresh. */
	gf_api_client_gone(a, x);
	f->levels = &c;
	CHECK(near(first_of(a, x, "\"GetCaptureSignalPeakSinceLast\"", "GetCaptureSignalPeakSinceLast", &n),
		   -10.0));
}

static void test_since_start(struct gf_api *a, struct fake *f)
{
	struct gf_api_levels hot = flat(-1.0, -9.0, 0.1), soft = flat(-50.0, -55.0, 0.1);
	f->levels = &hot;
	json_decref(ok_value(a, "\"GetCaptureSignalPeak\"", "GetCaptureSignalPeak"));
	f->levels = &soft;
	json_t *v = ok_value(a, "\"GetSignalPeaksSinceStart\"", "GetSignalPeaksSinceStart");
	CHECK(json_object_size(v) == 2 && json_array_size(json_object_get(v, "playback")) == 1);
	CHECK(json_array_size(json_object_get(v, "capture")) == 2);
	CHECK(near(json_number_value(json_array_get(json_object_get(v, "playback"), 0)), -1.0));
	CHECK(near(json_number_value(json_array_get(json_object_get(v, "capture"), 1)), -1.0));
	json_decref(v);
	expect_text(a, "\"ResetSignalPeaksSinceStart\"",
		    "{\"ResetSignalPeaksSinceStart\":{\"result\":\"Ok\"}}");
	v = ok_value(a, "\"GetSignalPeaksSinceStart\"", "GetSignalPeaksSinceStart");
	CHECK(near(json_number_value(json_array_get(json_object_get(v, "capture"), 0)), -50.0));
	json_decref(v);
	/* Another stream's channels start the history again. */
	struct gf_api_levels mono = flat(-20.0, -25.0, 0.1);
	mono.n_capture = 1;
	f->levels = &mono;
	v = ok_value(a, "\"GetSignalPeaksSinceStart\"", "GetSignalPeaksSinceStart");
	CHECK(json_array_size(json_object_get(v, "capture")) == 1);
	CHECK(near(json_number_value(json_array_get(json_object_get(v, "capture"), 0)), -20.0));
	json_decref(v);
	/* No stream: the error the levels give, typed. */
	f->levels_err = GF_E_BUSY;
	expect_typed(a, "{\"GetSignalLevelsSince\": 1.0}", "GetSignalLevelsSince", "InvalidRequestError",
		     "no audio stream");
	expect_typed(a, "\"GetSignalPeaksSinceStart\"", "GetSignalPeaksSinceStart", "InvalidRequestError",
		     "no audio stream");
	f->levels_err = 0;
	f->levels = NULL;
}

int main(void)
{
	struct fake f = {.text = "filters = ();\n", .limit = 6.0, .have_volume = 1};
	struct gf_api_ops ops = fake_ops(&f);
	struct gf_api *a;
	CHECK_OK(gf_api_new(&a, &ops));
	test_errors(a, &f);
	test_stop_reason(a, &f);
	test_faders(a, &f);
	test_misc(a, &f);
	test_since(a, &f);
	test_since_last(a, &f);
	test_since_start(a, &f);
	clear();
	gf_api_free(a);
	free(f.set_text);
	free(f.patch_settings);
	printf("test_api_camilla: ok\n");
	return 0;
}
