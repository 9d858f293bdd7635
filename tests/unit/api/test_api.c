/* The control API's protocol (src/api) driven through its ops table by a fake
 * daemon: every command's reply, argument checks, errors, pending replies
 * (SetConfig, PatchConfig, Reload), a client that goes away before its
 * reply, level subscriptions, and the Unix socket transport in-process:
 * lines, a line over the limit, the client cap, a client that never reads.
 * The fake and the reply helpers are api_fake.c's. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "api.h"
#include "api_fake.h"
#include "testutil.h"

/* ---- the tests ------------------------------------------------------------ */

/* A [[name, description], ...] list: its length, and entry @p i's name and description. */
static void check_device(json_t *v, size_t len, size_t i, const char *name, const char *desc)
{
	CHECK(json_is_array(v) && json_array_size(v) == len);
	if (i < len) {
		json_t *e = json_array_get(v, i);
		CHECK(json_array_size(e) == 2);
		CHECK(strcmp(json_string_value(json_array_get(e, 0)), name) == 0);
		if (strcmp(json_string_value(json_array_get(e, 1)), desc) != 0) {
			fprintf(stderr, "device %zu: '%s', expected '%s'\n", i,
				json_string_value(json_array_get(e, 1)), desc);
			CHECK(0);
		}
	}
	json_decref(v);
}

static void test_devices(struct gf_api *a, struct fake *f)
{
	json_t *v = ok_value(a, "\"GetAvailableCaptureDevices\"", "GetAvailableCaptureDevices");
	json_incref(v);
	check_device(v, 2, 0, "system", "JACK, 2 channels, 48000 Hz, default");
	check_device(v, 2, 1, "hw:0", "ALSA, 2 channels, 44100 Hz");
	check_device(ok_value(a, "{\"GetAvailableCaptureDevices\": \"jack\"}", "GetAvailableCaptureDevices"),
		     1, 0, "system", "JACK, 2 channels, 48000 Hz, default");
	check_device(ok_value(a, "{\"GetAvailablePlaybackDevices\": null}", "GetAvailablePlaybackDevices"), 1,
		     0, "system", "JACK, 4 channels, 48000 Hz, default");
	check_device(
		ok_value(a, "{\"GetAvailablePlaybackDevices\": \"ALSA\"}", "GetAvailablePlaybackDevices"), 0,
		0, "", "");
	v = ok_value(a, "\"GetSupportedDeviceTypes\"", "GetSupportedDeviceTypes");
	char *text = json_dumps(v, JSON_COMPACT);
	CHECK(text && strcmp(text, "[[\"JACK\"],[\"JACK\",\"ALSA\"]]") == 0); /* playback, capture */
	free(text);
	json_decref(v);
	expect_error(a, "{\"GetAvailableCaptureDevices\": 5}", "GetAvailableCaptureDevices",
		     "takes no argument or a string");
	f->no_stream = 1;
	expect_error(a, "\"GetAvailablePlaybackDevices\"", "GetAvailablePlaybackDevices", "no audio stream");
	expect_error(a, "\"GetSupportedDeviceTypes\"", "GetSupportedDeviceTypes", "no audio stream");
	f->no_stream = 0;
}

static void test_status_commands(struct gf_api *a)
{
	check_string(ok_value(a, "\"GetVersion\"", "GetVersion"), GPUFIR_VERSION);
	check_string(ok_value(a, "\"GetState\"", "GetState"), "Running");
	check_string(ok_value(a, "\"GetStopReason\"", "GetStopReason"), "None");
	check_number(ok_value(a, "\"GetCaptureRate\"", "GetCaptureRate"), 47999);
	check_number(ok_value(a, "\"GetProcessingLoad\"", "GetProcessingLoad"), 12.5);
	check_number(ok_value(a, "\"GetBufferLevel\"", "GetBufferLevel"), 300);
	check_number(ok_value(a, "\"GetClippedSamples\"", "GetClippedSamples"), 7);
	check_number(ok_value(a, "\"GetSignalRange\"", "GetSignalRange"), 0.5);
	check_string(ok_value(a, "\"GetConfigFilePath\"", "GetConfigFilePath"), "/etc/gpufir/gpufir.conf");
	check_string(ok_value(a, "\"GetCaptureDevice\"", "GetCaptureDevice"), "system");
	json_t *v = ok_value(a, "\"GetPlaybackDevice\"", "GetPlaybackDevice");
	CHECK(json_is_null(v));
	json_decref(v);
	v = ok_value(a, "\"GetCounters\"", "GetCounters");
	CHECK(json_integer_value(json_object_get(v, "xruns")) == 3);
	CHECK(json_integer_value(json_object_get(v, "device_xruns")) == 1);
	CHECK(json_integer_value(json_object_get(v, "late_blocks")) == 2);
	CHECK(json_integer_value(json_object_get(v, "muted_blocks")) == 4);
	CHECK(json_integer_value(json_object_get(v, "reloads")) == 5);
	json_decref(v);
	v = ok_value(a, "\"GetFilters\"", "GetFilters");
	CHECK(json_integer_value(json_object_get(v, "taps")) == 4095);
	CHECK(strcmp(json_string_value(json_object_get(v, "backend")), "cpu") == 0);
	CHECK(json_array_size(json_object_get(v, "names")) == 2);
	CHECK(strcmp(json_string_value(json_array_get(json_object_get(v, "names"), 1)), "hiss") == 0);
	json_decref(v);
	v = ok_value(a, "\"GetStatus\"", "GetStatus");
	CHECK(strcmp(json_string_value(json_object_get(v, "state")), "Running") == 0);
	CHECK(json_integer_value(json_object_get(v, "sample_rate")) == 48000);
	CHECK(json_integer_value(json_object_get(v, "pid")) == 42);
	CHECK(json_integer_value(json_object_get(json_object_get(v, "counters"), "clipped")) == 7);
	json_decref(v);
	/* A bare command as an object with a null argument is the same command. */
	check_string(ok_value(a, "{\"GetState\": null}", "GetState"), "Running");
}

static void test_config_commands(struct gf_api *a, struct fake *f)
{
	check_string(ok_value(a, "\"GetConfig\"", "GetConfig"), "filters = ();\n");
	json_t *v = ok_value(a, "\"GetPreviousConfig\"", "GetPreviousConfig");
	CHECK(json_is_null(v)); /* none yet */
	json_decref(v);
	check_string(ok_value(a, "{\"ValidateConfig\": \"sample_rate = 48000;\"}", "ValidateConfig"),
		     "sample_rate = 48000;");
	expect_error(a, "{\"ValidateConfig\": \"bad = 1;\"}", "ValidateConfig", "<string>:1: bad setting");
	expect_error(a, "{\"ValidateConfig\": 3}", "ValidateConfig", "ValidateConfig takes a string");

	/* SetConfig: no reply until the op completes; then Ok, or Error with why. */
	clear();
	const char *m = "{\"SetConfig\": \"sample_rate = 44100;\"}";
	gf_api_handle(a, (void *)1, capture, m, strlen(m));
	CHECK(n_replies == 0);
	CHECK(f->set_text && strcmp(f->set_text, "sample_rate = 44100;") == 0);
	gf_api_complete(a, f->token, 0, NULL);
	CHECK(n_replies == 1 && strcmp(replies[0], "{\"SetConfig\":{\"result\":\"Ok\"}}") == 0);
	gf_api_complete(a, f->token, 0, NULL); /* twice: nothing */
	CHECK(n_replies == 1);
	clear();
	gf_api_handle(a, (void *)1, capture, m, strlen(m));
	gf_api_complete(a, f->token, GF_E_CONFIG, "reload failed: x.conf:3: nope");
	json_t *r = json_loads(replies[0], 0, NULL);
	CHECK(strstr(
		json_string_value(json_object_get(body_of(r, "SetConfig", "ConfigValidationError"), "value")),
		"nope"));
	json_decref(r);
	/* Rejected at once by the op: an Error reply now, and no token left behind. */
	expect_error(a, "{\"SetConfig\": \"bad\"}", "SetConfig", "bad setting");

	/* The client goes away before its reply: completing it sends nothing. */
	clear();
	gf_api_handle(a, (void *)2, capture, m, strlen(m));
	gf_api_client_gone(a, (void *)2);
	gf_api_complete(a, f->token, 0, NULL);
	CHECK(n_replies == 0);

	/* PatchConfig: JSON values as libconfig settings. */
	clear();
	m = "{\"PatchConfig\": {\"sample_rate\": 44100, \"crossfade_ms\": 20.0, \"chain\": [\"a\", \"b\"], "
	    "\"output\": {\"device\": \"x\\\"y\", \"channels\": 2}}}";
	gf_api_handle(a, (void *)1, capture, m, strlen(m));
	CHECK(n_replies == 0);
	CHECK(f->patch_n == 4);
	CHECK(strcmp(f->patch_keys[0], "sample_rate") == 0 && strcmp(f->patch_keys[3], "output") == 0);
	const char *want = "sample_rate = 44100;\ncrossfade_ms = 20.0;\nchain = [\"a\", \"b\"];\n"
			   "output = { device = \"x\\\"y\"; channels = 2; };\n";
	if (strcmp(f->patch_settings, want) != 0) {
		fprintf(stderr, "patch text:\n%s\nwanted:\n%s\n", f->patch_settings, want);
		CHECK(0);
	}
	gf_api_complete(a, f->token, 0, NULL);
	CHECK(n_replies == 1 && strstr(replies[0], "\"PatchConfig\":{\"result\":\"Ok\""));
	expect_error(a, "{\"PatchConfig\": {}}", "PatchConfig", "one or more");
	expect_error(a, "{\"PatchConfig\": {\"9x\": 1}}", "PatchConfig", "not a libconfig setting name");
	expect_error(a, "{\"PatchConfig\": {\"a\": null}}", "PatchConfig", "null has no libconfig form");
	expect_error(a, "{\"PatchConfig\": \"a = 1;\"}", "PatchConfig", "takes an object");

	clear();
	gf_api_handle(a, (void *)1, capture, "\"Reload\"", 8);
	CHECK(n_replies == 0 && f->reloads == 1);
	gf_api_complete(a, f->token, 0, NULL);
	CHECK(n_replies == 1 && strcmp(replies[0], "{\"Reload\":{\"result\":\"Ok\"}}") == 0);

	/* Pending replies are bounded. */
	clear();
	int busy = 0;
	for (int i = 0; i < 40; i++)
		gf_api_handle(a, (void *)3, capture, "\"Reload\"", 8);
	for (int i = 0; i < n_replies; i++)
		busy += strstr(replies[i], "too many requests waiting") != NULL;
	CHECK(busy == 40 - 32);
	gf_api_client_gone(a, (void *)3);
	for (uint64_t t = 1; t <= f->token; t++)
		gf_api_complete(a, t, 0, NULL);
	CHECK(n_replies == busy);
}

static void test_volume(struct gf_api *a, struct fake *f)
{
	expect_error(a, "\"GetVolume\"", "GetVolume", "not available in this build");
	expect_error(a, "{\"AdjustVolume\": 1.0}", "AdjustVolume", "not available in this build");
	f->have_volume = 1;
	check_number(ok_value(a, "{\"SetVolume\": -10.0}", "SetVolume"), -10.0);
	check_number(ok_value(a, "\"GetVolume\"", "GetVolume"), -10.0);
	check_number(ok_value(a, "{\"AdjustVolume\": -3}", "AdjustVolume"), -13.0);
	check_number(ok_value(a, "{\"AdjustVolume\": [-10, -20, 0]}", "AdjustVolume"), -20.0);
	check_number(ok_value(a, "{\"SetVolume\": 80}", "SetVolume"), 6.0); /* the program's limit */
	check_number(ok_value(a, "\"GetVolume\"", "GetVolume"), 6.0);
	f->limit = 60.0;
	check_number(ok_value(a, "{\"SetVolume\": 80}", "SetVolume"), 50.0); /* the protocol's clamp */
	/* ResetClippedSamples reaches the program; GetClippedSamples then reads 0. */
	check_number(ok_value(a, "\"GetClippedSamples\"", "GetClippedSamples"), 7);
	CHECK(ok_value(a, "\"ResetClippedSamples\"", "ResetClippedSamples") == NULL);
	CHECK(f->resets == 1);
	check_number(ok_value(a, "\"GetClippedSamples\"", "GetClippedSamples"), 0);
	expect_error(a, "{\"SetVolume\": \"loud\"}", "SetVolume", "takes a number");
	expect_error(a, "{\"AdjustVolume\": [1, 2]}", "AdjustVolume", "[dB, min, max]");
	json_t *v = ok_value(a, "\"GetMute\"", "GetMute");
	CHECK(json_is_false(v));
	json_decref(v);
	CHECK(ok_value(a, "{\"SetMute\": true}", "SetMute") == NULL);
	CHECK(f->mute == 1);
	v = ok_value(a, "\"ToggleMute\"", "ToggleMute");
	CHECK(json_is_false(v) && f->mute == 0);
	json_decref(v);
	expect_error(a, "{\"SetMute\": 1}", "SetMute", "takes true or false");
}

static void test_levels(struct gf_api *a, struct fake *f)
{
	json_t *v = ok_value(a, "\"GetCaptureSignalPeak\"", "GetCaptureSignalPeak");
	CHECK(json_array_size(v) == 2 && json_real_value(json_array_get(v, 1)) == -12.0);
	json_decref(v);
	v = ok_value(a, "\"GetPlaybackSignalRms\"", "GetPlaybackSignalRms");
	CHECK(json_array_size(v) == 1 && json_real_value(json_array_get(v, 0)) == -18.0);
	json_decref(v);
	check_number(json_incref(json_array_get(
			     v = ok_value(a, "\"GetCaptureSignalRms\"", "GetCaptureSignalRms"), 0)),
		     -20.0);
	json_decref(v);
	check_number(json_incref(json_array_get(
			     v = ok_value(a, "\"GetPlaybackSignalPeak\"", "GetPlaybackSignalPeak"), 0)),
		     -3.0);
	json_decref(v);
	v = ok_value(a, "\"GetSignalLevels\"", "GetSignalLevels");
	CHECK(json_array_size(json_object_get(v, "capture_rms")) == 2);
	CHECK(json_array_size(json_object_get(v, "playback_peak")) == 1);
	json_decref(v);

	/* A subscription pushes at its interval, one reading for all due, until stopped. */
	expect_error(a, "{\"SubscribeSignalLevels\": 5}", "SubscribeSignalLevels", "20 to 10000 ms");
	gf_api_tick(a, 1000);
	clear();
	gf_api_handle(a, (void *)7, capture, "{\"SubscribeSignalLevels\": 100}", 30);
	CHECK(n_replies == 1 && strstr(replies[0], "\"Ok\""));
	clear();
	CHECK(gf_api_tick(a, 1050) == 50);
	CHECK(n_replies == 0);
	int calls = f->levels_calls;
	CHECK(gf_api_tick(a, 1100) == 100);
	CHECK(n_replies == 1 && strstr(replies[0], "{\"SignalLevelsEvent\":{\"result\":\"Ok\",\"value\":{"));
	CHECK(f->levels_calls == calls + 1);
	gf_api_tick(a, 5000); /* late: one push, no burst */
	CHECK(n_replies == 2);
	clear();
	gf_api_handle(a, (void *)7, capture, "\"StopSubscription\"", 18);
	CHECK(n_replies == 1);
	CHECK(gf_api_tick(a, 9000) == -1);
	CHECK(n_replies == 1);
	/* A gone client's subscription ends. */
	gf_api_handle(a, (void *)8, capture, "{\"SubscribeSignalLevels\": 20}", 29);
	gf_api_client_gone(a, (void *)8);
	clear();
	CHECK(gf_api_tick(a, 20000) == -1 && n_replies == 0);
}

static void test_invalid(struct gf_api *a)
{
	expect_invalid(a, "\"NoSuchCommand\"", 15, "unknown command \"NoSuchCommand\"");
	expect_invalid(a, "{\"GetVersion\"", 13, "invalid JSON");
	expect_invalid(a, "\xff\xfe\x00garbage", 10, "invalid JSON");
	expect_invalid(a, "42", 2, "a command is a JSON string");
	expect_invalid(a, "{\"GetState\": null, \"GetVersion\": null}", 38, "a command is a JSON string");
	expect_invalid(a, "{}", 2, "a command is a JSON string");
	expect_error(a, "{\"GetVersion\": 1}", "GetVersion", "GetVersion takes no argument");
}

/* With no ops at all, every op-backed command says it is not available. */
/* ValidateConfig from @p client: Ok, and whether the op saw the owner. */
static int validate_as(struct gf_api *a, struct fake *f, void *client)
{
	json_t *r = ask(a, client, "{\"ValidateConfig\": \"a = 1;\"}");
	body_of(r, "ValidateConfig", "Ok");
	json_decref(r);
	return f->owner;
}

/* A client's standing: a guest by default, the owner when its transport says so or after
 * Authenticate with the key; a locked client (a WebSocket beyond loopback) may do nothing else
 * first; a client gone is forgotten, and its slot passes its standing to no one. */
static void test_standing(struct gf_api *a, struct fake *f)
{
	void *guest = (void *)20, *owner = (void *)21, *keyed = (void *)22, *locked = (void *)23;
	CHECK(validate_as(a, f, guest) == 0);
	gf_api_client_standing(a, owner, GF_API_OWNER);
	CHECK(validate_as(a, f, owner) == 1);
	CHECK(gf_api_caller_is_owner(a) == 0); /* only while an op runs */
	json_t *r = ask(a, keyed, "{\"Authenticate\": \"anything\"}");
	CHECK(strstr(
		json_string_value(json_object_get(body_of(r, "Authenticate", "InvalidValueError"), "value")),
		"no control key"));
	json_decref(r);
	CHECK_OK(gf_api_set_key(a, "k0123456789abcdef0123"));
	r = ask(a, keyed, "{\"Authenticate\": \"k0123456789abcdef0124\"}");
	CHECK(strstr(
		json_string_value(json_object_get(body_of(r, "Authenticate", "InvalidValueError"), "value")),
		"wrong control key"));
	json_decref(r);
	CHECK(validate_as(a, f, keyed) == 0);
	r = ask(a, keyed, "{\"Authenticate\": \"k0123456789abcdef0123\"}");
	body_of(r, "Authenticate", "Ok");
	json_decref(r);
	CHECK(validate_as(a, f, keyed) == 1);
	gf_api_client_gone(a, keyed);
	CHECK(validate_as(a, f, keyed) == 0);

	gf_api_client_standing(a, locked, GF_API_LOCKED);
	r = ask(a, locked, "\"GetState\"");
	CHECK(strstr(
		json_string_value(json_object_get(body_of(r, "GetState", "InvalidRequestError"), "value")),
		"Authenticate"));
	json_decref(r);
	r = ask(a, locked, "\"GetVersion\"");
	body_of(r, "GetVersion", "Ok");
	json_decref(r);
	r = ask(a, locked, "{\"Authenticate\": \"k0123456789abcdef0123\"}");
	body_of(r, "Authenticate", "Ok");
	json_decref(r);
	r = ask(a, locked, "\"GetState\"");
	body_of(r, "GetState", "Ok");
	json_decref(r);
	gf_api_client_gone(a, owner);
	gf_api_client_gone(a, locked);
	CHECK(validate_as(a, f, NULL) == 0); /* the slots the owners left keep no standing */
	CHECK_OK(gf_api_set_key(a, NULL));
}

static void test_no_ops(void)
{
	struct gf_api *a;
	struct gf_api_ops none = {0};
	CHECK_OK(gf_api_new(&a, &none));
	expect_error(a, "\"GetConfig\"", "GetConfig", "not available");
	expect_error(a, "{\"SetConfig\": \"x\"}", "SetConfig", "not available");
	expect_error(a, "\"Reload\"", "Reload", "not available");
	expect_error(a, "\"GetSignalLevels\"", "GetSignalLevels", "not available");
	expect_error(a, "{\"SubscribeSignalLevels\": 100}", "SubscribeSignalLevels", "not available");
	gf_api_free(a);
}

/* test_api_unix.c */
void test_unix_transport(struct gf_api *a);

int main(void)
{
	struct fake f = {.text = "filters = ();\n", .limit = 6.0, .clipped = 7};
	struct gf_api_ops ops = fake_ops(&f);
	struct gf_api *a;
	CHECK_OK(gf_api_new(&a, &ops));
	f.api = a;
	test_status_commands(a);
	test_devices(a, &f);
	test_config_commands(a, &f);
	test_volume(a, &f);
	test_levels(a, &f);
	test_invalid(a);
	test_standing(a, &f);
	test_no_ops();
	test_unix_transport(a);
	clear();
	gf_api_free(a);
	free(f.set_text);
	free(f.patch_settings);
	printf("test_api: ok\n");
	return 0;
}
