/* A fake daemon behind the control API's ops table, and helpers that send a
 * command and check its reply (api_fake.h), for the protocol's tests. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_fake.h"
#include "testutil.h"

/* ---- the fake daemon --------------------------------------------------- */

static const char *const names[] = {"hum", "hiss"};

static int f_get_stage(void *ctx, enum gf_api_stage_id id, struct gf_api_stage *out, struct gf_errbuf *eb)
{
	const struct fake *f = ctx;
	*out = f->stage[id];
	out->has_bypass = out->has_db = 0;
	return 0;
}

static int f_status(void *ctx, struct gf_api_status *st)
{
	const struct fake *f = ctx;
	st->state = "Running";
	st->state_text = "running";
	st->stop_reason = f->stop_reason ? f->stop_reason : "None";
	st->stop_text = f->stop_text;
	st->state_file = f->state_file;
	st->state_file_updated = !f->state_dirty;
	if (f->rate_adjust > 0.0)
		st->rate_adjust = f->rate_adjust;
	st->config_path = "/etc/gpufir/gpufir.conf";
	st->capture_device = "system";
	st->playback_device = NULL;
	st->backend = "cpu";
	st->algo = "fft";
	st->engine_device = "CPU";
	st->filters = names;
	st->n_filters = 2;
	st->sample_rate = 48000;
	st->capture_rate = 47999;
	st->channels = 2;
	st->block_frames = 256;
	st->latency_frames = 512;
	st->taps = 4095;
	st->buffer_level = f->no_buffer ? -1 : 300;
	st->processing_load = 12.5;
	st->signal_peak = 0.25;
	st->clipped = f->clipped;
	st->xruns = 3;
	st->device_xruns = 1;
	st->late_blocks = 2;
	st->muted_blocks = 4;
	st->blocks = 1000;
	st->reloads = 5;
	st->pid = 42;
	for (int id = 0; id < GF_API_STAGES; id++)
		f_get_stage(ctx, id, &st->stages[id], NULL);
	return 0;
}

static int f_config_text(void *ctx, int previous, const char **text, struct gf_errbuf *eb)
{
	struct fake *f = ctx;
	*text = previous ? f->prev : f->text;
	return 0;
}

static int f_validate(void *ctx, const char *text, struct gf_errbuf *eb)
{
	struct fake *f = ctx;
	if (f->api)
		f->owner = gf_api_caller_is_owner(f->api);
	if (strstr(text, "bad")) {
		gf_errbuf_set(eb, "<string>:1: bad setting");
		return GF_E_CONFIG;
	}
	return 0;
}

static int f_set_config(void *ctx, const char *text, uint64_t token, struct gf_errbuf *eb)
{
	struct fake *f = ctx;
	if (f_validate(ctx, text, eb))
		return GF_E_CONFIG;
	free(f->set_text);
	f->set_text = strdup(text);
	f->token = token;
	return GF_API_PENDING;
}

static int f_patch(void *ctx, const char *settings, const char *const *keys, uint32_t n, uint64_t token,
		   struct gf_errbuf *eb)
{
	struct fake *f = ctx;
	free(f->patch_settings);
	f->patch_settings = strdup(settings);
	f->patch_n = n;
	for (uint32_t i = 0; i < n && i < 4; i++)
		snprintf(f->patch_keys[i], sizeof(f->patch_keys[i]), "%s", keys[i]);
	f->token = token;
	return GF_API_PENDING;
}

static int f_reload(void *ctx, uint64_t token, struct gf_errbuf *eb)
{
	struct fake *f = ctx;
	f->reloads++;
	f->token = token;
	return GF_API_PENDING;
}

static int f_get_volume(void *ctx, double *db, struct gf_errbuf *eb)
{
	struct fake *f = ctx;
	if (!f->have_volume) {
		gf_errbuf_set(eb, "volume control is not available in this build");
		return GF_E_UNSUPPORTED;
	}
	*db = f->volume;
	return 0;
}

static int f_set_volume(void *ctx, double db, struct gf_errbuf *eb)
{
	struct fake *f = ctx;
	f->volume = db < f->limit ? db : f->limit; /* the program clamps to its limit */
	return 0;
}

static int f_reset_clipped(void *ctx, struct gf_errbuf *eb)
{
	struct fake *f = ctx;
	f->resets++;
	f->clipped = 0;
	return 0;
}

/* Capture: JACK's system (default) and an ALSA card; playback: JACK's system only. */
static int f_devices(void *ctx, int playback, struct gf_api_device *out, uint32_t max, uint32_t *n,
		     struct gf_errbuf *eb)
{
	static const struct gf_api_device cap[] = {{"system", "JACK", 2, 48000.0, 1},
						   {"hw:0", "ALSA", 2, 44100.0, 0}},
					  play[] = {{"system", "JACK", 4, 48000.0, 1}};
	const struct fake *f = ctx;
	if (f->no_stream) {
		gf_errbuf_set(eb, "no audio stream is open");
		return GF_E_AUDIO;
	}
	*n = playback ? 1 : 2;
	for (uint32_t i = 0; i < *n && i < max; i++)
		out[i] = playback ? play[i] : cap[i];
	return 0;
}

static int f_get_mute(void *ctx, int *m, struct gf_errbuf *eb)
{
	*m = ((struct fake *)ctx)->mute;
	return 0;
}

static int f_set_mute(void *ctx, int m, struct gf_errbuf *eb)
{
	((struct fake *)ctx)->mute = m;
	return 0;
}

static int f_levels(void *ctx, struct gf_api_levels *lv, struct gf_errbuf *eb)
{
	struct fake *f = ctx;
	f->levels_calls++;
	if (f->levels_err) {
		gf_errbuf_set(eb, "levels: no audio stream is running");
		return f->levels_err;
	}
	if (f->levels) {
		*lv = *f->levels;
		return 0;
	}
	lv->n_capture = 2;
	lv->n_playback = 1;
	lv->capture_peak[0] = -6.0;
	lv->capture_peak[1] = -12.0;
	lv->capture_rms[0] = -20.0;
	lv->capture_rms[1] = -30.0;
	lv->playback_peak[0] = -3.0;
	lv->playback_rms[0] = -18.0;
	return 0;
}

/* ---- replies ------------------------------------------------------------ */

char *replies[MAX_REPLIES];
int n_replies;

void capture(void *client, const char *text, size_t len)
{
	CHECK(n_replies < MAX_REPLIES);
	CHECK(memchr(text, '\n', len) == NULL); /* one line each */
	replies[n_replies++] = strndup(text, len);
}

void clear(void)
{
	for (int i = 0; i < n_replies; i++)
		free(replies[i]);
	n_replies = 0;
}

/* Send @p msg; expect exactly one reply; return it parsed (caller decrefs). */
json_t *ask(struct gf_api *a, void *client, const char *msg)
{
	clear();
	gf_api_handle(a, client, capture, msg, strlen(msg));
	if (n_replies != 1) {
		fprintf(stderr, "%s: %d replies\n", msg, n_replies);
		CHECK(n_replies == 1);
	}
	json_t *r = json_loads(replies[0], 0, NULL);
	CHECK(r);
	return r;
}

/* The type of a reply's result: "Ok", a simple error's name ("InvalidFaderError"), or the
 * type of CamillaDSP's {"ConfigValidationError": message}, its message in *@p msg. */
static const char *result_type(json_t *body, const char **msg)
{
	json_t *res = json_object_get(body, "result");
	*msg = NULL;
	if (json_is_string(res))
		return json_string_value(res);
	if (!json_is_object(res) || json_object_size(res) != 1)
		return "(no result)";
	void *it = json_object_iter(res);
	*msg = json_string_value(json_object_iter_value(it));
	return json_object_iter_key(it);
}

json_t *body_of(json_t *r, const char *name, const char *result)
{
	const char *msg;
	json_t *b = json_object_get(r, name);
	if (!b || strcmp(result_type(b, &msg), result) != 0) {
		char *t = json_dumps(r, 0);
		fprintf(stderr, "expected %s %s, got %s\n", name, result, t);
		free(t);
		CHECK(0);
	}
	CHECK(json_object_size(r) == 1);
	return b;
}

json_t *ok_value(struct gf_api *a, const char *msg, const char *name)
{
	json_t *r = ask(a, NULL, msg);
	json_t *v = json_incref(json_object_get(body_of(r, name, "Ok"), "value"));
	json_decref(r);
	return v;
}

void expect_typed(struct gf_api *a, const char *msg, const char *name, const char *type, const char *why)
{
	json_t *r = ask(a, NULL, msg);
	json_t *b = json_object_get(r, name);
	const char *m, *t = b ? result_type(b, &m) : "(none)";
	const char *v = json_string_value(json_object_get(b, "value"));
	/* the type asked for (any error for NULL); the message in "value", and as the typed
	 * result's member unless the type is one of CamillaDSP's simple errors */
	int ok = b && strcmp(t, "Ok") != 0 && (!type || strcmp(t, type) == 0) && v && strstr(v, why) &&
		 (!m || strcmp(m, v) == 0) && json_object_size(r) == 1;
	if (!ok) {
		char *text = json_dumps(r, 0);
		fprintf(stderr, "%s: got %s, expected %s with '%s'\n", msg, text, type ? type : "an error",
			why);
		free(text);
		CHECK(0);
	}
	json_decref(r);
}

void expect_error(struct gf_api *a, const char *msg, const char *name, const char *why)
{
	expect_typed(a, msg, name, NULL, why);
}

void expect_invalid(struct gf_api *a, const char *msg, size_t len, const char *why)
{
	clear();
	gf_api_handle(a, NULL, capture, msg, len);
	CHECK(n_replies == 1);
	json_t *r = json_loads(replies[0], 0, NULL);
	const char *e = json_string_value(json_object_get(json_object_get(r, "Invalid"), "error"));
	if (!e || !strstr(e, why)) {
		fprintf(stderr, "invalid message: got %s, expected '%s'\n", replies[0], why);
		CHECK(0);
	}
	json_decref(r);
}

void check_string(json_t *v, const char *want)
{
	CHECK(json_is_string(v) && strcmp(json_string_value(v), want) == 0);
	json_decref(v);
}

void check_number(json_t *v, double want)
{
	CHECK(json_is_number(v) && fabs(json_number_value(v) - want) < 1e-9);
	json_decref(v);
}

/* As the daemon: its range checked (the suppressor's depth from 0 dB, the neural stage's limit from
 * 1), none running refused, the request's members applied. */
static int f_set_stage(void *ctx, enum gf_api_stage_id id, const struct gf_api_stage *q,
		       struct gf_api_stage *out, struct gf_errbuf *eb)
{
	struct fake *f = ctx;
	struct gf_api_stage *s = &f->stage[id];
	double min = id == GF_API_NEURAL ? 1.0 : 0.0;
	f->sets[id]++;
	if (q->has_db && !(q->db >= min && q->db <= s->max_db)) {
		gf_errbuf_set(eb, "%s %g is outside %g..%g dB",
			      id == GF_API_NEURAL ? "atten_lim_db" : "depth_db", q->db, min, s->max_db);
		return GF_E_INVAL;
	}
	if (!s->channels) {
		gf_errbuf_set(eb, "the running configuration has no %s",
			      id == GF_API_NEURAL ? "neural stage" : "noise suppressor");
		return GF_E_UNSUPPORTED;
	}
	if (q->has_bypass)
		s->bypass = q->bypass;
	if (q->has_db)
		s->db = q->db;
	return f_get_stage(ctx, id, out, eb);
}

struct gf_api_ops fake_ops(struct fake *f)
{
	return (struct gf_api_ops){.ctx = f,
				   .status = f_status,
				   .config_text = f_config_text,
				   .validate_config = f_validate,
				   .set_config = f_set_config,
				   .patch_config = f_patch,
				   .reload = f_reload,
				   .get_volume = f_get_volume,
				   .set_volume = f_set_volume,
				   .get_mute = f_get_mute,
				   .set_mute = f_set_mute,
				   .reset_clipped = f_reset_clipped,
				   .levels = f_levels,
				   .devices = f_devices,
				   .get_stage = f_get_stage,
				   .set_stage = f_set_stage};
}
