/* CamillaDSP 4 clients against the control API (docs/api.md, "CamillaDSP
 * clients"), through the fake daemon: each reply checked against the shapes of
 * CamillaDSP's websocket.md and its socketserver's replies, as pyCamillaDSP 4
 * parses them: typed errors ({"result": {"ConfigValidationError": why}} and
 * the bare simple ones), StopReason's names and {"CaptureError": why}, the five
 * faders, the state file, update interval, rate adjust and resampler load, and
 * the commands gpufir does not have. */
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
	clear();
	gf_api_free(a);
	free(f.set_text);
	free(f.patch_settings);
	printf("test_api_camilla: ok\n");
	return 0;
}
