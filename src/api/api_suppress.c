/* The noise suppressor's live controls (docs/api.md, "Noise suppressor"):
 * GetSuppressor and SetSuppressor, gpufir's own (CamillaDSP has no
 * suppressor). A guest may use them, as it may set the volume: they change
 * what is heard, never what reaches files. */
#include <math.h>
#include <string.h>

#include "api_internal.h"

json_t *gf_api_suppressor_json(const struct gf_api_suppressor *s)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "channels", json_integer(s->channels));
	json_object_set_new(o, "bypass", s->channels ? json_boolean(s->bypass) : json_null());
	json_object_set_new(o, "depth_db", s->channels ? json_real(s->depth_db) : json_null());
	json_object_set_new(o, "max_depth_db", json_real(s->max_depth_db));
	return o;
}

static int c_get_suppressor(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	struct gf_api_suppressor s;
	int err = gf_api_need(r->a->ops.get_suppressor, eb);
	if (err || (err = r->a->ops.get_suppressor(r->a->ops.ctx, &s, eb)))
		return err;
	*v = gf_api_suppressor_json(&s);
	return 0;
}

/* {"bypass": bool, "depth_db": number}, either or both; any other member is refused, so that a
 * misspelt one is not silently a no-op. */
static int read_request(const json_t *arg, struct gf_api_suppressor *q, struct gf_errbuf *eb)
{
	memset(q, 0, sizeof(*q));
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)arg, key, val)
	{
		if (strcmp(key, "bypass") == 0 && json_is_boolean(val)) {
			q->has_bypass = 1;
			q->bypass = json_is_true(val);
		} else if (strcmp(key, "depth_db") == 0 && json_is_number(val)) {
			q->has_depth = 1;
			q->depth_db = json_number_value(val);
		} else {
			gf_errbuf_set(eb, "SetSuppressor: \"%s\" is not %s", key,
				      strcmp(key, "bypass") == 0     ? "true or false"
				      : strcmp(key, "depth_db") == 0 ? "a number of dB"
								     : "bypass or depth_db");
			return GF_E_INVAL;
		}
	}
	if (q->has_depth && !isfinite(q->depth_db)) {
		gf_errbuf_set(eb, "SetSuppressor: depth_db must be a finite number of dB");
		return GF_E_INVAL;
	}
	if (!q->has_bypass && !q->has_depth) {
		gf_errbuf_set(
			eb, "SetSuppressor takes {\"bypass\": true or false, \"depth_db\": dB}, one or both");
		return GF_E_INVAL;
	}
	return 0;
}

/* The reply is what is in force after the request, as GetSuppressor's. */
static int c_set_suppressor(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	struct gf_api_suppressor q, s;
	int err = read_request(r->arg, &q, eb);
	if (err || (err = gf_api_need(r->a->ops.set_suppressor, eb)) ||
	    (err = r->a->ops.set_suppressor(r->a->ops.ctx, &q, &s, eb)))
		return err;
	*v = gf_api_suppressor_json(&s);
	return 0;
}

static const struct gf_api_cmd cmds[] = {
	{"GetSuppressor", GF_ARG_NONE, c_get_suppressor, GF_CMD_PLAIN},
	{"SetSuppressor", GF_ARG_OBJECT, c_set_suppressor, GF_CMD_PLAIN},
};

const struct gf_api_cmd_table gf_api_suppress_cmds = {cmds, sizeof(cmds) / sizeof(cmds[0])};
