/* GetStatus's object: the status socket's facts as JSON (docs/api.md names
 * the members), and `gpufir --status --json`'s output. */
#include <math.h>
#include <stdlib.h>

#include "api_internal.h"

static json_t *s_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *u64(uint64_t v)
{
	return json_integer((json_int_t)v);
}

static json_t *real_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *counters(const struct gf_api_status *st)
{
	json_t *o = json_object();
	json_object_set_new(o, "blocks", u64(st->blocks));
	json_object_set_new(o, "xruns", u64(st->xruns));
	json_object_set_new(o, "device_xruns", u64(st->device_xruns));
	json_object_set_new(o, "late_blocks", u64(st->late_blocks));
	json_object_set_new(o, "muted_blocks", u64(st->muted_blocks));
	json_object_set_new(o, "engine_errors", u64(st->engine_errors));
	json_object_set_new(o, "clipped", u64(st->clipped));
	json_object_set_new(o, "swaps", u64(st->swaps));
	json_object_set_new(o, "reloads", u64(st->reloads));
	json_object_set_new(o, "reload_failures", u64(st->reload_failures));
	return o;
}

static json_t *filters(const struct gf_api_status *st)
{
	json_t *names = json_array();
	for (uint32_t i = 0; names && i < st->n_filters; i++)
		json_array_append_new(names, json_string(st->filters[i] ? st->filters[i] : ""));
	json_t *o = json_object();
	json_object_set_new(o, "names", names ? names : json_null());
	json_object_set_new(o, "taps", json_integer(st->taps));
	json_object_set_new(o, "backend", s_or_null(st->backend));
	json_object_set_new(o, "algo", s_or_null(st->algo));
	json_object_set_new(o, "device", s_or_null(st->engine_device));
	return o;
}

char *gf_api_status_json(const struct gf_api_status *st, int pretty)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "version", json_string(GPUFIR_VERSION));
	json_object_set_new(o, "state", s_or_null(st->state));
	json_object_set_new(o, "state_text", s_or_null(st->state_text));
	json_object_set_new(o, "stop_reason", s_or_null(st->stop_reason ? st->stop_reason : "None"));
	json_object_set_new(o, "stop_text", s_or_null(st->stop_text));
	json_object_set_new(o, "pid", json_integer(st->pid));
	json_object_set_new(o, "uptime_s", json_real(st->uptime_s));
	json_object_set_new(o, "config", s_or_null(st->config_path));
	json_object_set_new(o, "capture_device", s_or_null(st->capture_device));
	json_object_set_new(o, "playback_device", s_or_null(st->playback_device));
	json_object_set_new(o, "sample_rate", json_integer(st->sample_rate));
	json_object_set_new(o, "capture_rate", json_integer(st->capture_rate));
	json_object_set_new(o, "channels", json_integer(st->channels));
	json_object_set_new(o, "block_frames", json_integer(st->block_frames));
	json_object_set_new(o, "latency_frames", json_integer(st->latency_frames));
	json_object_set_new(o, "buffer_level",
			    st->buffer_level >= 0 ? json_integer(st->buffer_level) : json_null());
	json_object_set_new(o, "processing_load", real_or_null(st->processing_load));
	json_object_set_new(o, "block_us_p99", real_or_null(st->block_us_p99));
	json_object_set_new(o, "signal_range", real_or_null(2.0 * st->signal_peak));
	json_t *vr = st->volume_min_db < st->volume_max_db ? json_array() : NULL;
	if (vr) {
		json_array_append_new(vr, json_real(st->volume_min_db));
		json_array_append_new(vr, json_real(st->volume_max_db));
	}
	json_object_set_new(o, "volume_range", vr ? vr : json_null());
	json_object_set_new(o, "filters", filters(st));
	for (int id = 0; id < GF_API_STAGES; id++)
		json_object_set_new(o, gf_api_stage_key(id), gf_api_stage_json(id, &st->stages[id]));
	json_object_set_new(o, "counters", counters(st));
	json_object_set_new(o, "last_reload", s_or_null(st->last_reload));
	char *text = json_dumps(o, (pretty ? JSON_INDENT(2) : JSON_COMPACT) | JSON_REAL_PRECISION(10));
	json_decref(o);
	return text;
}
