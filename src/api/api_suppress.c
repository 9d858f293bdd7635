/* The live controls of the stages after the FIR (docs/api.md, "Noise suppressor" and "Neural
 * stage"): GetSuppressor and SetSuppressor, GetNeural and SetNeural, gpufir's own (CamillaDSP has
 * neither stage). A guest may use them, as it may set the volume: they change what is heard,
 * never what reaches files. */
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

json_t *gf_api_neural_json(const struct gf_api_neural *n)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "channels", json_integer(n->channels));
	json_object_set_new(o, "bypass", n->channels ? json_boolean(n->bypass) : json_null());
	json_object_set_new(o, "atten_lim_db", n->channels ? json_real(n->atten_lim_db) : json_null());
	json_object_set_new(o, "max_atten_lim_db", json_real(n->max_atten_lim_db));
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

static int c_get_neural(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	struct gf_api_neural n;
	int err = gf_api_need(r->a->ops.get_neural, eb);
	if (err || (err = r->a->ops.get_neural(r->a->ops.ctx, &n, eb)))
		return err;
	*v = gf_api_neural_json(&n);
	return 0;
}

/* A Set request's two members: "bypass" and a number of dB named @p num. */
struct live_req {
	const char *cmd, *num; /* the command's and the number's names, for the messages */
	int has_bypass, bypass, has_num;
	double value;
};

/* {"bypass": bool, "<num>": number}, either or both; any other member is refused, so that a
 * misspelt one is not silently a no-op. */
static int read_request(const json_t *arg, struct live_req *q, struct gf_errbuf *eb)
{
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)arg, key, val)
	{
		if (strcmp(key, "bypass") == 0 && json_is_boolean(val)) {
			q->has_bypass = 1;
			q->bypass = json_is_true(val);
		} else if (strcmp(key, q->num) == 0 && json_is_number(val)) {
			q->has_num = 1;
			q->value = json_number_value(val);
		} else {
			int is_num = strcmp(key, q->num) == 0;
			gf_errbuf_set(eb, "%s: \"%s\" is not %s%s", q->cmd, key,
				      strcmp(key, "bypass") == 0 ? "true or false"
				      : is_num			 ? "a number of dB"
								 : "bypass or ",
				      strcmp(key, "bypass") == 0 || is_num ? "" : q->num);
			return GF_E_INVAL;
		}
	}
	if (q->has_num && !isfinite(q->value)) {
		gf_errbuf_set(eb, "%s: %s must be a finite number of dB", q->cmd, q->num);
		return GF_E_INVAL;
	}
	if (!q->has_bypass && !q->has_num) {
		gf_errbuf_set(eb, "%s takes {\"bypass\": true or false, \"%s\": dB}, one or both", q->cmd,
			      q->num);
		return GF_E_INVAL;
	}
	return 0;
}

/* The reply is what is in force after the request, as GetSuppressor's. */
static int c_set_suppressor(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	struct live_req lq = {.cmd = "SetSuppressor", .num = "depth_db"};
	struct gf_api_suppressor s;
	int err = read_request(r->arg, &lq, eb);
	struct gf_api_suppressor q = {.has_bypass = lq.has_bypass,
				      .bypass = lq.bypass,
				      .has_depth = lq.has_num,
				      .depth_db = lq.value};
	if (err || (err = gf_api_need(r->a->ops.set_suppressor, eb)) ||
	    (err = r->a->ops.set_suppressor(r->a->ops.ctx, &q, &s, eb)))
		return err;
	*v = gf_api_suppressor_json(&s);
	return 0;
}

/* The reply is what is in force after the request, as GetNeural's. */
static int c_set_neural(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	struct live_req lq = {.cmd = "SetNeural", .num = "atten_lim_db"};
	struct gf_api_neural n;
	int err = read_request(r->arg, &lq, eb);
	struct gf_api_neural q = {.has_bypass = lq.has_bypass,
				  .bypass = lq.bypass,
				  .has_atten = lq.has_num,
				  .atten_lim_db = lq.value};
	if (err || (err = gf_api_need(r->a->ops.set_neural, eb)) ||
	    (err = r->a->ops.set_neural(r->a->ops.ctx, &q, &n, eb)))
		return err;
	*v = gf_api_neural_json(&n);
	return 0;
}

static const struct gf_api_cmd cmds[] = {
	{"GetSuppressor", GF_ARG_NONE, c_get_suppressor, GF_CMD_PLAIN},
	{"SetSuppressor", GF_ARG_OBJECT, c_set_suppressor, GF_CMD_PLAIN},
	{"GetNeural", GF_ARG_NONE, c_get_neural, GF_CMD_PLAIN},
	{"SetNeural", GF_ARG_OBJECT, c_set_neural, GF_CMD_PLAIN},
};

const struct gf_api_cmd_table gf_api_suppress_cmds = {cmds, sizeof(cmds) / sizeof(cmds[0])};
