/* The command table (docs/api.md lists every command): CamillaDSP's names and
 * value shapes where the meaning is the same, gpufir's own (GetStatus,
 * GetCounters, GetFilters, ...) for what CamillaDSP has no word for. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api_internal.h"
#include "api_patch.h"

int gf_api_need(const void *op, struct gf_errbuf *eb)
{
	if (op)
		return 0;
	gf_errbuf_set(eb, "not available in this build");
	return GF_E_UNSUPPORTED;
}

void gf_api_status_of(struct gf_api *a, struct gf_api_status *st)
{
	memset(st, 0, sizeof(*st));
	st->buffer_level = -1;
	st->rate_adjust = 1.0;
	st->state_file_updated = 1;
	if (a->ops.status)
		a->ops.status(a->ops.ctx, st);
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* ---- general and status -------------------------------------------------- */

static int c_version(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	*v = json_string(GPUFIR_VERSION);
	return 0;
}

/* CamillaDSP's StopReason: a bare name, or its errors with their message ({"CaptureError": why}). */
static json_t *stop_json(const struct gf_api_status *st)
{
	const char *r = st->stop_reason ? st->stop_reason : "None";
	if (strcmp(r, "CaptureError") && strcmp(r, "PlaybackError"))
		return json_string(r);
	return json_pack("{s:s}", r, st->stop_text ? st->stop_text : "");
}

/* One field of the status, by what the command reads. */
enum field {
	F_STATE,
	F_STOP,
	F_RATE,
	F_LOAD,
	F_BUFFER,
	F_CLIPPED,
	F_RANGE,
	F_PATH,
	F_CAPDEV,
	F_PLAYDEV,
	F_STATE_FILE,
	F_STATE_UPDATED,
	F_RATE_ADJUST
};

static json_t *field_json(const struct gf_api_status *st, enum field f)
{
	switch (f) {
	case F_STATE:
		return str_or_null(st->state);
	case F_STOP:
		return stop_json(st);
	case F_RATE:
		return json_integer(st->capture_rate);
	case F_LOAD:
		return json_real(st->processing_load);
	case F_BUFFER: /* CamillaDSP's is unsigned, 0 where it has none */
		return json_integer(st->buffer_level > 0 ? st->buffer_level : 0);
	case F_CLIPPED:
		return json_integer((json_int_t)st->clipped);
	case F_RANGE:
		return json_real(2.0 * st->signal_peak);
	case F_PATH:
		return str_or_null(st->config_path);
	case F_CAPDEV:
		return str_or_null(st->capture_device);
	case F_PLAYDEV:
		return str_or_null(st->playback_device);
	case F_STATE_FILE:
		return str_or_null(st->state_file);
	case F_STATE_UPDATED:
		return json_boolean(st->state_file_updated);
	case F_RATE_ADJUST:
		return json_real(st->rate_adjust);
	}
	return json_null();
}

#define FIELD_CMD(fn, f)                                                                                     \
	static int fn(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)                                \
	{                                                                                                    \
		struct gf_api_status st;                                                                     \
		gf_api_status_of(r->a, &st);                                                                 \
		*v = field_json(&st, f);                                                                     \
		return 0;                                                                                    \
	}
FIELD_CMD(c_state, F_STATE)
FIELD_CMD(c_stop, F_STOP)
FIELD_CMD(c_rate, F_RATE)
FIELD_CMD(c_load, F_LOAD)
FIELD_CMD(c_buffer, F_BUFFER)
FIELD_CMD(c_clipped, F_CLIPPED)
FIELD_CMD(c_range, F_RANGE)
FIELD_CMD(c_path, F_PATH)
FIELD_CMD(c_capdev, F_CAPDEV)
FIELD_CMD(c_playdev, F_PLAYDEV)
FIELD_CMD(c_state_file, F_STATE_FILE)
FIELD_CMD(c_state_updated, F_STATE_UPDATED)
FIELD_CMD(c_rate_adjust, F_RATE_ADJUST)

/* ---- audio devices ---------------------------------------------------------- */

/* The devices of one direction (@p n found, up to GF_API_MAX_DEVICES in @p dev). */
static int devices_of(struct gf_api_req *r, int playback, struct gf_api_device *dev, uint32_t *n,
		      struct gf_errbuf *eb)
{
	int err = gf_api_need(r->a->ops.devices, eb);
	if (!err)
		err = r->a->ops.devices(r->a->ops.ctx, playback, dev, GF_API_MAX_DEVICES, n, eb);
	if (!err && *n > GF_API_MAX_DEVICES)
		*n = GF_API_MAX_DEVICES;
	return err;
}

/* CamillaDSP's [[name, description], ...], of the host APIs whose name begins with the argument
 * (any case: "jack", "alsa"), or all. */
static int device_list(struct gf_api_req *r, int playback, json_t **v, struct gf_errbuf *eb)
{
	struct gf_api_device dev[GF_API_MAX_DEVICES];
	uint32_t n = 0;
	int err = devices_of(r, playback, dev, &n, eb);
	if (err)
		return err;
	const char *want = json_string_value(r->arg);
	*v = json_array();
	for (uint32_t i = 0; i < n && *v; i++) {
		if (want && strncasecmp(want, dev[i].host_api, strlen(want)) != 0)
			continue;
		char desc[200];
		snprintf(desc, sizeof(desc), "%s, %u channel%s, %.0f Hz%s", dev[i].host_api, dev[i].channels,
			 dev[i].channels == 1 ? "" : "s", dev[i].rate, dev[i].is_default ? ", default" : "");
		json_array_append_new(*v, json_pack("[ss]", dev[i].name, desc));
	}
	return *v ? 0 : GF_E_NOMEM;
}

static int c_capture_devices(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	return device_list(r, 0, v, eb);
}

static int c_playback_devices(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	return device_list(r, 1, v, eb);
}

/* [[playback host APIs], [capture host APIs]] (CamillaDSP's order): those with a device in that
 * direction. */
static int c_device_types(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	struct gf_api_device dev[GF_API_MAX_DEVICES];
	*v = json_array();
	for (int playback = 1; playback >= 0 && *v; playback--) {
		uint32_t n = 0;
		int err = devices_of(r, playback, dev, &n, eb);
		if (err) {
			json_decref(*v);
			*v = NULL;
			return err;
		}
		json_t *types = json_array();
		for (uint32_t i = 0; i < n && types; i++) {
			size_t k, m = json_array_size(types);
			for (k = 0;
			     k < m && strcmp(json_string_value(json_array_get(types, k)), dev[i].host_api);
			     k++)
				;
			if (k == m)
				json_array_append_new(types, json_string(dev[i].host_api));
		}
		json_array_append_new(*v, types);
	}
	return *v ? 0 : GF_E_NOMEM;
}

static int c_status(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	struct gf_api_status st;
	gf_api_status_of(r->a, &st);
	char *text = gf_api_status_json(&st, 0);
	*v = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	if (*v)
		return 0;
	gf_errbuf_set(eb, "out of memory");
	return GF_E_NOMEM;
}

static int c_counters(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	struct gf_api_status st;
	gf_api_status_of(r->a, &st);
	*v = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "blocks", (json_int_t)st.blocks, "xruns",
		       (json_int_t)st.xruns, "device_xruns", (json_int_t)st.device_xruns, "late_blocks",
		       (json_int_t)st.late_blocks, "muted_blocks", (json_int_t)st.muted_blocks,
		       "engine_errors", (json_int_t)st.engine_errors, "clipped", (json_int_t)st.clipped,
		       "swaps", (json_int_t)st.swaps, "reloads", (json_int_t)st.reloads, "reload_failures",
		       (json_int_t)st.reload_failures);
	return 0;
}

static int c_filters(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	struct gf_api_status st;
	gf_api_status_of(r->a, &st);
	json_t *names = json_array();
	for (uint32_t i = 0; names && i < st.n_filters; i++)
		json_array_append_new(names, json_string(st.filters[i] ? st.filters[i] : ""));
	*v = json_pack("{s:o,s:i,s:o,s:o,s:o}", "names", names ? names : json_null(), "taps", (int)st.taps,
		       "backend", str_or_null(st.backend), "algo", str_or_null(st.algo), "device",
		       str_or_null(st.engine_device));
	return 0;
}

/* ---- config ---------------------------------------------------------------- */

static int config_text(struct gf_api_req *r, int previous, json_t **v, struct gf_errbuf *eb)
{
	const char *text = NULL;
	int err = gf_api_need(r->a->ops.config_text, eb);
	if (err || (err = r->a->ops.config_text(r->a->ops.ctx, previous, &text, eb)))
		return err;
	*v = text ? json_string(text) : json_null();
	if (text && !*v) {
		gf_errbuf_set(eb, "the config's text is not valid UTF-8");
		return GF_E_FORMAT;
	}
	return 0;
}

static int c_config(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	return config_text(r, 0, v, eb);
}

static int c_prev_config(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	return config_text(r, 1, v, eb);
}

/* Ok with the text, as CamillaDSP answers with the config it validated (libconfig has no form
 * with the defaults filled in: the text as given). */
static int c_validate(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	int err = gf_api_need(r->a->ops.validate_config, eb);
	if (!err)
		err = r->a->ops.validate_config(r->a->ops.ctx, json_string_value(r->arg), eb);
	if (!err)
		*v = json_incref(r->arg);
	return err;
}

/* A slow op: reserve its reply, start it, and keep the reservation only while it runs. */
static int pending(struct gf_api_req *r, uint64_t *token, struct gf_errbuf *eb)
{
	if ((*token = gf_api_pending_add(r)))
		return 0;
	r->etype = "RateLimitExceededError";
	gf_errbuf_set(eb, "too many requests waiting for their reply (%u); try again later",
		      GF_API_MAX_PENDING);
	return GF_E_BUSY;
}

static int settle(struct gf_api_req *r, uint64_t token, int rc)
{
	if (rc != GF_API_PENDING)
		gf_api_pending_drop(r->a, token);
	return rc;
}

static int c_set_config(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	uint64_t t;
	int err = gf_api_need(r->a->ops.set_config, eb);
	if (err || (err = pending(r, &t, eb)))
		return err;
	return settle(r, t, r->a->ops.set_config(r->a->ops.ctx, json_string_value(r->arg), t, eb));
}

static int c_patch_config(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	char *text;
	const char **keys;
	uint32_t n;
	uint64_t t;
	int err = gf_api_need(r->a->ops.patch_config, eb);
	if (err || (err = gf_api_patch_text(r->arg, &text, &keys, &n, eb)))
		return err;
	if ((err = pending(r, &t, eb)) == 0)
		err = settle(r, t, r->a->ops.patch_config(r->a->ops.ctx, text, keys, n, t, eb));
	free(text);
	free(keys);
	return err;
}

static int c_reload(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	uint64_t t;
	int err = gf_api_need(r->a->ops.reload, eb);
	if (err || (err = pending(r, &t, eb)))
		return err;
	return settle(r, t, r->a->ops.reload(r->a->ops.ctx, t, eb));
}

/* ---- volume and mute --------------------------------------------------------- */

static int c_get_volume(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	double db;
	int err = gf_api_need(r->a->ops.get_volume, eb);
	if (err || (err = r->a->ops.get_volume(r->a->ops.ctx, &db, eb)))
		return err;
	*v = json_real(db);
	return 0;
}

int gf_api_finite_db(double db, const char *what, struct gf_errbuf *eb)
{
	if (isfinite(db))
		return 0;
	gf_errbuf_set(eb, "%s must be a finite number of dB", what);
	return GF_E_INVAL;
}

int gf_api_volume_arg(double *db, struct gf_errbuf *eb)
{
	int err = gf_api_finite_db(*db, "the volume", eb);
	if (!err)
		*db = fmin(fmax(*db, GF_API_VOLUME_MIN_DB), GF_API_VOLUME_MAX_DB);
	return err;
}

int gf_api_volume_set(struct gf_api_req *r, double db, double *in_force, struct gf_errbuf *eb)
{
	int err = gf_api_volume_arg(&db, eb);
	if (err)
		return err;
	if ((err = gf_api_need(r->a->ops.set_volume, eb)) ||
	    (err = r->a->ops.set_volume(r->a->ops.ctx, db, eb)))
		return err;
	/* The reply is the volume in force: the program may clamp it further (its limit). */
	*in_force = db;
	return r->a->ops.get_volume ? r->a->ops.get_volume(r->a->ops.ctx, in_force, eb) : 0;
}

static int set_volume(struct gf_api_req *r, double db, json_t **v, struct gf_errbuf *eb)
{
	int err = gf_api_volume_set(r, db, &db, eb);
	if (!err)
		*v = json_real(db);
	return err;
}

static int c_reset_clipped(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	(void)v;
	int err = gf_api_need(r->a->ops.reset_clipped, eb);
	return err ? err : r->a->ops.reset_clipped(r->a->ops.ctx, eb);
}

static int c_set_volume(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	return set_volume(r, json_number_value(r->arg), v, eb);
}

int gf_api_adjust_arg(const json_t *arg, double *step, double *lo, double *hi)
{
	*lo = GF_API_VOLUME_MIN_DB;
	*hi = GF_API_VOLUME_MAX_DB;
	if (json_is_number(arg)) {
		*step = json_number_value(arg);
		return 0;
	}
	if (!json_is_array(arg) || json_array_size(arg) != 3)
		return GF_E_INVAL;
	double *out[3] = {step, lo, hi};
	for (size_t i = 0; i < 3; i++) {
		if (!json_is_number(json_array_get(arg, i)))
			return GF_E_INVAL;
		*out[i] = json_number_value(json_array_get(arg, i));
	}
	return 0;
}

/* {"AdjustVolume": -3.0} or, as CamillaDSP, {"AdjustVolume": [-3.0, min, max]}. */
static int c_adjust_volume(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	double step, lo, hi, db;
	if (gf_api_adjust_arg(r->arg, &step, &lo, &hi)) {
		gf_errbuf_set(eb, "AdjustVolume takes a number of dB, or [dB, min, max]");
		return GF_E_INVAL;
	}
	int err = gf_api_need(r->a->ops.get_volume, eb);
	if (err || (err = r->a->ops.get_volume(r->a->ops.ctx, &db, eb)))
		return err;
	return set_volume(r, fmin(fmax(db + step, lo), hi), v, eb);
}

static int c_get_mute(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	int m;
	int err = gf_api_need(r->a->ops.get_mute, eb);
	if (err || (err = r->a->ops.get_mute(r->a->ops.ctx, &m, eb)))
		return err;
	*v = json_boolean(m);
	return 0;
}

static int c_set_mute(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	int err = gf_api_need(r->a->ops.set_mute, eb);
	return err ? err : r->a->ops.set_mute(r->a->ops.ctx, json_is_true(r->arg), eb);
}

static int c_toggle_mute(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	int m;
	int err = gf_api_need(r->a->ops.get_mute, eb);
	if (err || (err = gf_api_need(r->a->ops.set_mute, eb)) ||
	    (err = r->a->ops.get_mute(r->a->ops.ctx, &m, eb)) ||
	    (err = r->a->ops.set_mute(r->a->ops.ctx, !m, eb)))
		return err;
	*v = json_boolean(!m); /* the new setting */
	return 0;
}

/* ---- levels -------------------------------------------------------------------- */

int gf_api_levels_read(struct gf_api *a, struct gf_api_levels *lv, struct gf_errbuf *eb)
{
	memset(lv, 0, sizeof(*lv));
	int err = gf_api_need(a->ops.levels, eb);
	if (!err)
		err = a->ops.levels(a->ops.ctx, lv, eb);
	return err ? err : gf_api_levels_record(a, lv);
}

static int levels(struct gf_api_req *r, struct gf_api_levels *lv, struct gf_errbuf *eb)
{
	return gf_api_levels_plain(r->a, lv, eb);
}

#define LEVEL_CMD(fn, arr, n)                                                                                \
	static int fn(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)                                \
	{                                                                                                    \
		struct gf_api_levels lv;                                                                     \
		int err = levels(r, &lv, eb);                                                                \
		if (err)                                                                                     \
			return err;                                                                          \
		*v = json_array();                                                                           \
		for (uint32_t c = 0; *v && c < lv.n && c < GF_API_MAX_CH; c++)                               \
			json_array_append_new(*v, json_real(lv.arr[c]));                                     \
		return 0;                                                                                    \
	}
LEVEL_CMD(c_cap_peak, capture_peak, n_capture)
LEVEL_CMD(c_cap_rms, capture_rms, n_capture)
LEVEL_CMD(c_play_peak, playback_peak, n_playback)
LEVEL_CMD(c_play_rms, playback_rms, n_playback)

static int c_levels(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	struct gf_api_levels lv;
	int err = levels(r, &lv, eb);
	if (!err)
		*v = gf_api_levels_json(&lv);
	return err;
}

/* {"SubscribeSignalLevels": MS}: SignalLevelsEvent every MS ms until StopSubscription. */
static int c_subscribe(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	double ms = json_number_value(r->arg);
	if (!(ms >= GF_API_LEVELS_MIN_MS && ms <= GF_API_LEVELS_MAX_MS)) {
		gf_errbuf_set(eb, "the interval must be %u to %u ms", GF_API_LEVELS_MIN_MS,
			      GF_API_LEVELS_MAX_MS);
		return GF_E_INVAL;
	}
	struct gf_api_levels lv;
	int err = levels(r, &lv, eb); /* not available: say so now, not at the first push */
	if (err)
		return err;
	if ((err = gf_api_subscribe(r, (uint32_t)ms))) {
		gf_errbuf_set(eb, "too many subscriptions (%u)", GF_API_MAX_SUBS);
		return err;
	}
	*v = json_integer((json_int_t)ms);
	return 0;
}

static int c_unsubscribe(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	return gf_api_subscribe(r, 0);
}

static const struct gf_api_cmd cmds[] = {
	{"GetVersion", GF_ARG_NONE, c_version, GF_CMD_PLAIN},
	{"Authenticate", GF_ARG_STRING, gf_api_c_authenticate, GF_CMD_PLAIN},
	{"GetState", GF_ARG_NONE, c_state, GF_CMD_PLAIN},
	{"GetStopReason", GF_ARG_NONE, c_stop, GF_CMD_PLAIN},
	{"GetStatus", GF_ARG_NONE, c_status, GF_CMD_PLAIN},
	{"GetCounters", GF_ARG_NONE, c_counters, GF_CMD_PLAIN},
	{"GetFilters", GF_ARG_NONE, c_filters, GF_CMD_PLAIN},
	{"GetCaptureRate", GF_ARG_NONE, c_rate, GF_CMD_PLAIN},
	{"GetProcessingLoad", GF_ARG_NONE, c_load, GF_CMD_PLAIN},
	{"GetBufferLevel", GF_ARG_NONE, c_buffer, GF_CMD_PLAIN},
	{"GetClippedSamples", GF_ARG_NONE, c_clipped, GF_CMD_PLAIN},
	{"ResetClippedSamples", GF_ARG_NONE, c_reset_clipped, GF_CMD_PLAIN},
	{"GetSignalRange", GF_ARG_NONE, c_range, GF_CMD_PLAIN},
	{"GetRateAdjust", GF_ARG_NONE, c_rate_adjust, GF_CMD_PLAIN},
	{"GetStateFilePath", GF_ARG_NONE, c_state_file, GF_CMD_PLAIN},
	{"GetStateFileUpdated", GF_ARG_NONE, c_state_updated, GF_CMD_PLAIN},
	{"GetCaptureDevice", GF_ARG_NONE, c_capdev, GF_CMD_PLAIN},
	{"GetPlaybackDevice", GF_ARG_NONE, c_playdev, GF_CMD_PLAIN},
	{"GetAvailableCaptureDevices", GF_ARG_OPT_STRING, c_capture_devices, GF_CMD_PLAIN},
	{"GetAvailablePlaybackDevices", GF_ARG_OPT_STRING, c_playback_devices, GF_CMD_PLAIN},
	{"GetSupportedDeviceTypes", GF_ARG_NONE, c_device_types, GF_CMD_PLAIN},
	{"GetConfig", GF_ARG_NONE, c_config, GF_CMD_PLAIN},
	{"GetPreviousConfig", GF_ARG_NONE, c_prev_config, GF_CMD_PLAIN},
	{"GetConfigFilePath", GF_ARG_NONE, c_path, GF_CMD_PLAIN},
	{"ValidateConfig", GF_ARG_STRING, c_validate, GF_CMD_CONFIG},
	{"SetConfig", GF_ARG_STRING, c_set_config, GF_CMD_CONFIG},
	{"PatchConfig", GF_ARG_OBJECT, c_patch_config, GF_CMD_CONFIG},
	{"Reload", GF_ARG_NONE, c_reload, GF_CMD_CONFIG},
	{"GetVolume", GF_ARG_NONE, c_get_volume, GF_CMD_PLAIN},
	{"SetVolume", GF_ARG_NUMBER, c_set_volume, GF_CMD_PLAIN},
	{"AdjustVolume", GF_ARG_ANY, c_adjust_volume, GF_CMD_PLAIN},
	{"GetMute", GF_ARG_NONE, c_get_mute, GF_CMD_PLAIN},
	{"SetMute", GF_ARG_BOOL, c_set_mute, GF_CMD_PLAIN},
	{"ToggleMute", GF_ARG_NONE, c_toggle_mute, GF_CMD_PLAIN},
	{"GetCaptureSignalPeak", GF_ARG_NONE, c_cap_peak, GF_CMD_PLAIN},
	{"GetCaptureSignalRms", GF_ARG_NONE, c_cap_rms, GF_CMD_PLAIN},
	{"GetPlaybackSignalPeak", GF_ARG_NONE, c_play_peak, GF_CMD_PLAIN},
	{"GetPlaybackSignalRms", GF_ARG_NONE, c_play_rms, GF_CMD_PLAIN},
	{"GetSignalLevels", GF_ARG_NONE, c_levels, GF_CMD_PLAIN},
	{"SubscribeSignalLevels", GF_ARG_NUMBER, c_subscribe, GF_CMD_PLAIN},
	{"StopSubscription", GF_ARG_NONE, c_unsubscribe, GF_CMD_PLAIN},
};

const struct gf_api_cmd *gf_api_cmd_find(const char *name)
{
	static const struct gf_api_cmd_table own = {cmds, sizeof(cmds) / sizeof(cmds[0])};
	const struct gf_api_cmd_table *tables[] = {&own, &gf_api_level_cmds, &gf_api_suppress_cmds,
						   &gf_api_compat_cmds};
	for (size_t t = 0; name && t < sizeof(tables) / sizeof(tables[0]); t++)
		for (size_t i = 0; i < tables[t]->n; i++)
			if (strcmp(tables[t]->cmds[i].name, name) == 0)
				return &tables[t]->cmds[i];
	return NULL;
}
