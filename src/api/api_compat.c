/* CamillaDSP 4's commands that gpufir answers by CamillaDSP's meaning with
 * what it has (docs/api.md, "CamillaDSP clients"): the faders (0 is Main,
 * the program's volume and mute; Aux1..4 are kept and reported, as
 * CamillaDSP's are when no Volume filter uses them), the update interval, the
 * resampler's load; CamillaDSP's commands gpufir has no meaning for, answered
 * with a typed error a client can catch; and the error types themselves. */
#include <math.h>
#include <string.h>

#include "api_internal.h"

const char *gf_api_error_type(const struct gf_api_cmd *c, int code)
{
	if (c && c->kind == GF_CMD_CONFIG) {
		switch (code) {
		case GF_E_IO:
			return "ConfigReadError"; /* a file that cannot be read */
		case GF_E_BUSY:
			return "RateLimitExceededError"; /* another one waits for its build */
		case GF_E_UNSUPPORTED:
		case GF_E_NOMEM:
			return "InvalidRequestError";
		default:
			return "ConfigValidationError";
		}
	}
	return code == GF_E_INVAL || code == GF_E_NONFINITE ? "InvalidValueError" : "InvalidRequestError";
}

/* ---- faders ------------------------------------------------------------------------ */

/* The fader an argument names (an integer, or the first member of an array). */
static int fader_of(struct gf_api_req *r, const json_t *arg, uint32_t *fader, struct gf_errbuf *eb)
{
	const json_t *f = json_is_array(arg) ? json_array_get(arg, 0) : arg;
	if (!json_is_integer(f)) {
		gf_errbuf_set(eb, "%s takes a fader number (0: Main, 1 to 4: Aux1 to Aux4) first", r->name);
		return GF_E_INVAL;
	}
	json_int_t n = json_integer_value(f);
	if (n < 0 || n >= GF_API_FADERS) {
		r->etype = "InvalidFaderError";
		gf_errbuf_set(eb, "no fader %lld: 0 is Main, 1 to 4 are Aux1 to Aux4", (long long)n);
		return GF_E_INVAL;
	}
	*fader = (uint32_t)n;
	return 0;
}

/* [fader, value] with a value of kind @p want (GF_ARG_NUMBER, GF_ARG_BOOL or GF_ARG_ANY): the
 * fader in *@p fader and the value, or NULL with the error in *@p err. */
static const json_t *pair_of(struct gf_api_req *r, enum gf_api_arg want, uint32_t *fader,
			     struct gf_errbuf *eb, int *err)
{
	const json_t *x = json_array_size(r->arg) == 2 ? json_array_get(r->arg, 1) : NULL;
	int ok = want == GF_ARG_NUMBER ? json_is_number(x) : want == GF_ARG_BOOL ? json_is_boolean(x) : !!x;
	if (!json_is_array(r->arg) || !ok) {
		gf_errbuf_set(eb, "%s takes [fader, %s]", r->name,
			      want == GF_ARG_NUMBER ? "dB"
			      : want == GF_ARG_BOOL ? "true or false"
						    : "value");
		*err = GF_E_INVAL;
		return NULL;
	}
	*err = fader_of(r, r->arg, fader, eb);
	return *err ? NULL : x;
}

static int fader_volume(struct gf_api_req *r, uint32_t fader, double *db, struct gf_errbuf *eb)
{
	if (fader) {
		*db = r->a->aux_db[fader];
		return 0;
	}
	int err = gf_api_need(r->a->ops.get_volume, eb);
	return err ? err : r->a->ops.get_volume(r->a->ops.ctx, db, eb);
}

/* Set fader @p fader to @p db (clamped as SetVolume); the volume in force in *@p db. */
static int fader_set(struct gf_api_req *r, uint32_t fader, double *db, struct gf_errbuf *eb)
{
	if (!fader)
		return gf_api_volume_set(r, *db, db, eb);
	int err = gf_api_volume_arg(db, eb);
	if (!err)
		r->a->aux_db[fader] = *db;
	return err;
}

static int fader_mute(struct gf_api_req *r, uint32_t fader, int *mute, struct gf_errbuf *eb)
{
	if (fader) {
		*mute = r->a->aux_mute[fader];
		return 0;
	}
	int err = gf_api_need(r->a->ops.get_mute, eb);
	return err ? err : r->a->ops.get_mute(r->a->ops.ctx, mute, eb);
}

static int fader_mute_set(struct gf_api_req *r, uint32_t fader, int mute, struct gf_errbuf *eb)
{
	if (fader) {
		r->a->aux_mute[fader] = mute;
		return 0;
	}
	int err = gf_api_need(r->a->ops.set_mute, eb);
	return err ? err : r->a->ops.set_mute(r->a->ops.ctx, mute, eb);
}

/* [{"volume": dB, "mute": bool}, ...]: all five. */
static int c_faders(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	*v = json_array();
	for (uint32_t f = 0; *v && f < GF_API_FADERS; f++) {
		double db;
		int mute, err = fader_volume(r, f, &db, eb);
		if (err || (err = fader_mute(r, f, &mute, eb))) {
			json_decref(*v);
			*v = NULL;
			return err;
		}
		json_array_append_new(*v, json_pack("{s:f,s:b}", "volume", db, "mute", mute));
	}
	return *v ? 0 : GF_E_NOMEM;
}

static int c_fader_volume(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	uint32_t f;
	double db;
	int err = fader_of(r, r->arg, &f, eb);
	if (err || (err = fader_volume(r, f, &db, eb)))
		return err;
	*v = json_pack("[i,f]", (int)f, db);
	return 0;
}

static int c_set_fader_volume(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	uint32_t f;
	int err;
	const json_t *x = pair_of(r, GF_ARG_NUMBER, &f, eb, &err);
	double db = json_number_value(x);
	return err ? err : fader_set(r, f, &db, eb);
}

/* [fader, dB] or [fader, [dB, min, max]]: the fader's volume plus dB, kept within min..max. */
static int c_adjust_fader(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	uint32_t f;
	int err;
	double step, lo, hi, db;
	const json_t *x = pair_of(r, GF_ARG_ANY, &f, eb, &err);
	if (err)
		return err;
	if (gf_api_adjust_arg(x, &step, &lo, &hi)) {
		gf_errbuf_set(eb, "AdjustFaderVolume takes [fader, dB] or [fader, [dB, min, max]]");
		return GF_E_INVAL;
	}
	if (hi < lo) {
		gf_errbuf_set(eb, "AdjustFaderVolume: the maximum %g dB is below the minimum %g dB", hi, lo);
		return GF_E_INVAL;
	}
	if ((err = fader_volume(r, f, &db, eb)))
		return err;
	db = fmin(fmax(db + step, lo), hi);
	if ((err = fader_set(r, f, &db, eb)))
		return err;
	*v = json_pack("[i,f]", (int)f, db);
	return 0;
}

static int c_fader_mute(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	uint32_t f;
	int mute, err = fader_of(r, r->arg, &f, eb);
	if (err || (err = fader_mute(r, f, &mute, eb)))
		return err;
	*v = json_pack("[i,b]", (int)f, mute);
	return 0;
}

static int c_set_fader_mute(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	uint32_t f;
	int err;
	const json_t *x = pair_of(r, GF_ARG_BOOL, &f, eb, &err);
	return err ? err : fader_mute_set(r, f, json_is_true(x), eb);
}

static int c_toggle_fader_mute(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	uint32_t f;
	int mute, err = fader_of(r, r->arg, &f, eb);
	if (err || (err = fader_mute(r, f, &mute, eb)) || (err = fader_mute_set(r, f, !mute, eb)))
		return err;
	*v = json_pack("[i,b]", (int)f, !mute); /* the new setting */
	return 0;
}

/* ---- what gpufir runs otherwise ------------------------------------------------------- */

/* The resampler runs in the worker's block: its time is in GetProcessingLoad, not apart. */
static int c_resampler_load(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	*v = json_real(0.0);
	return 0;
}

static int c_update_interval(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	*v = json_integer(r->a->update_interval_ms);
	return 0;
}

/* Kept and reported back: gpufir's windows are its own (docs/api.md), not set by clients. */
static int c_set_update_interval(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	if (!json_is_integer(r->arg) || json_integer_value(r->arg) < 1 ||
	    json_integer_value(r->arg) > 3600000) {
		gf_errbuf_set(eb, "SetUpdateInterval takes a whole number of ms, 1 to 3600000");
		return GF_E_INVAL;
	}
	r->a->update_interval_ms = (uint32_t)json_integer_value(r->arg);
	return 0;
}

/* ---- CamillaDSP's commands without a meaning here ------------------------------------ */

static int c_not_here(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	static const struct {
		const char *name, *why;
	} why[] = {
		{"Stop", "the daemon runs until systemd stops it"},
		{"Exit", "the daemon runs until systemd stops it"},
		{"SetConfigFilePath", "the config file is the command line's (-c); SetConfig gives a text"},
		{"GetConfigJson", "the config is a libconfig file: GetConfig gives its text"},
		{"SetConfigJson", "the config is a libconfig file: SetConfig or PatchConfig"},
		{"ReadConfigJson", "the config is a libconfig file: ValidateConfig"},
		{"ValidateConfigJson", "the config is a libconfig file: ValidateConfig"},
		{"ReadConfig", "ValidateConfig checks a config text"},
		{"ReadConfigFile", "ValidateConfig checks a config text"},
		{"GetConfigValue", "no JSON form of the config: GetConfig, PatchConfig"},
		{"SetConfigValue", "no JSON form of the config: PatchConfig"},
		{"GetConfigTitle", "a libconfig file has no title"},
		{"GetConfigDescription", "a libconfig file has no description"},
		{"GetChannelLabels", "the config has no channel labels"},
		{"SetFaderExternalVolume", "there is no Loudness filter"},
	};
	for (size_t i = 0; i < sizeof(why) / sizeof(why[0]); i++)
		if (strcmp(why[i].name, r->name) == 0)
			gf_errbuf_set(eb, "%s is not supported by gpufir: %s", r->name, why[i].why);
	return GF_E_UNSUPPORTED;
}

static const struct gf_api_cmd cmds[] = {
	{"GetFaders", GF_ARG_NONE, c_faders, GF_CMD_PLAIN},
	{"GetFaderVolume", GF_ARG_ANY, c_fader_volume, GF_CMD_PLAIN},
	{"SetFaderVolume", GF_ARG_ANY, c_set_fader_volume, GF_CMD_PLAIN},
	{"AdjustFaderVolume", GF_ARG_ANY, c_adjust_fader, GF_CMD_PLAIN},
	{"GetFaderMute", GF_ARG_ANY, c_fader_mute, GF_CMD_PLAIN},
	{"SetFaderMute", GF_ARG_ANY, c_set_fader_mute, GF_CMD_PLAIN},
	{"ToggleFaderMute", GF_ARG_ANY, c_toggle_fader_mute, GF_CMD_PLAIN},
	{"GetResamplerLoad", GF_ARG_NONE, c_resampler_load, GF_CMD_PLAIN},
	{"GetUpdateInterval", GF_ARG_NONE, c_update_interval, GF_CMD_PLAIN},
	{"SetUpdateInterval", GF_ARG_NUMBER, c_set_update_interval, GF_CMD_PLAIN},
	{"Stop", GF_ARG_ANY_OR_NONE, c_not_here, GF_CMD_PLAIN},
	{"Exit", GF_ARG_ANY_OR_NONE, c_not_here, GF_CMD_PLAIN},
	{"SetConfigFilePath", GF_ARG_ANY_OR_NONE, c_not_here, GF_CMD_PLAIN},
	{"GetConfigJson", GF_ARG_ANY_OR_NONE, c_not_here, GF_CMD_PLAIN},
	{"SetConfigJson", GF_ARG_ANY_OR_NONE, c_not_here, GF_CMD_PLAIN},
	{"ReadConfig", GF_ARG_ANY_OR_NONE, c_not_here, GF_CMD_PLAIN},
	{"ReadConfigJson", GF_ARG_ANY_OR_NONE, c_not_here, GF_CMD_PLAIN},
	{"ReadConfigFile", GF_ARG_ANY_OR_NONE, c_not_here, GF_CMD_PLAIN},
	{"ValidateConfigJson", GF_ARG_ANY_OR_NONE, c_not_here, GF_CMD_PLAIN},
	{"GetConfigValue", GF_ARG_ANY_OR_NONE, c_not_here, GF_CMD_PLAIN},
	{"SetConfigValue", GF_ARG_ANY_OR_NONE, c_not_here, GF_CMD_PLAIN},
	{"GetConfigTitle", GF_ARG_ANY_OR_NONE, c_not_here, GF_CMD_PLAIN},
	{"GetConfigDescription", GF_ARG_ANY_OR_NONE, c_not_here, GF_CMD_PLAIN},
	{"GetChannelLabels", GF_ARG_ANY_OR_NONE, c_not_here, GF_CMD_PLAIN},
	{"SetFaderExternalVolume", GF_ARG_ANY_OR_NONE, c_not_here, GF_CMD_PLAIN},
};

const struct gf_api_cmd_table gf_api_compat_cmds = {cmds, sizeof(cmds) / sizeof(cmds[0])};
