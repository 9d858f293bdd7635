/* The live controls of the stages after the FIR (docs/api.md, "Noise suppressor" and "Neural
 * stage"): GetSuppressor and SetSuppressor, GetNeural and SetNeural, gpufir's own (CamillaDSP has
 * neither stage). A guest may use them, as it may set the volume: they change what is heard,
 * never what reaches files. */
#include <string.h>

#include "api_internal.h"

/* Each stage's names in the protocol: its commands, GetStatus's member, and the members of its
 * number of dB and of that number's largest value. */
static const struct stage_names {
	const char *get, *set, *key, *db, *max_db;
} names[GF_API_STAGES] = {
	[GF_API_SUPPRESSOR] = {"GetSuppressor", "SetSuppressor", "suppressor", "depth_db", "max_depth_db"},
	[GF_API_NEURAL] = {"GetNeural", "SetNeural", "neural", "atten_lim_db", "max_atten_lim_db"},
};

const char *gf_api_stage_key(enum gf_api_stage_id id)
{
	return names[id].key;
}

json_t *gf_api_stage_json(enum gf_api_stage_id id, const struct gf_api_stage *s)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "channels", json_integer(s->channels));
	json_object_set_new(o, "bypass", s->channels ? json_boolean(s->bypass) : json_null());
	json_object_set_new(o, names[id].db, s->channels ? json_real(s->db) : json_null());
	json_object_set_new(o, names[id].max_db, json_real(s->max_db));
	return o;
}

/* The stage a command of the table acts on (its name is one of names[]'s). */
static enum gf_api_stage_id stage_of(const struct gf_api_req *r)
{
	return strcmp(r->name, names[GF_API_NEURAL].get) == 0 ||
			       strcmp(r->name, names[GF_API_NEURAL].set) == 0
		       ? GF_API_NEURAL
		       : GF_API_SUPPRESSOR;
}

static int c_get_stage(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	enum gf_api_stage_id id = stage_of(r);
	struct gf_api_stage s;
	int err = gf_api_need(r->a->ops.get_stage, eb);
	if (err || (err = r->a->ops.get_stage(r->a->ops.ctx, id, &s, eb)))
		return err;
	*v = gf_api_stage_json(id, &s);
	return 0;
}

/* {"bypass": bool, "<db>": number}, either or both, into @p q; any other member is refused, so that
 * a misspelt one is not silently a no-op. */
static int read_request(const json_t *arg, const struct stage_names *n, struct gf_api_stage *q,
			struct gf_errbuf *eb)
{
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)arg, key, val)
	{
		if (strcmp(key, "bypass") == 0 && json_is_boolean(val)) {
			q->has_bypass = 1;
			q->bypass = json_is_true(val);
		} else if (strcmp(key, n->db) == 0 && json_is_number(val)) {
			q->has_db = 1;
			q->db = json_number_value(val) + 0.0; /* -0 is 0 dB: no "-0.0" read back */
		} else {
			int is_db = strcmp(key, n->db) == 0;
			gf_errbuf_set(eb, "%s: \"%s\" is not %s%s", n->set, key,
				      strcmp(key, "bypass") == 0 ? "true or false"
				      : is_db			 ? "a number of dB"
								 : "bypass or ",
				      strcmp(key, "bypass") == 0 || is_db ? "" : n->db);
			return GF_E_INVAL;
		}
	}
	int err = q->has_db ? gf_api_finite_db(q->db, n->db, eb) : 0;
	if (err)
		return err;
	if (!q->has_bypass && !q->has_db) {
		gf_errbuf_set(eb, "%s takes {\"bypass\": true or false, \"%s\": dB}, one or both", n->set,
			      n->db);
		return GF_E_INVAL;
	}
	return 0;
}

/* The reply is what is in force after the request, as the stage's Get command's. */
static int c_set_stage(struct gf_api_req *r, json_t **v, struct gf_errbuf *eb)
{
	enum gf_api_stage_id id = stage_of(r);
	struct gf_api_stage q = {0}, s;
	int err = read_request(r->arg, &names[id], &q, eb);
	if (err || (err = gf_api_need(r->a->ops.set_stage, eb)) ||
	    (err = r->a->ops.set_stage(r->a->ops.ctx, id, &q, &s, eb)))
		return err;
	*v = gf_api_stage_json(id, &s);
	return 0;
}

static const struct gf_api_cmd cmds[] = {
	{"GetSuppressor", GF_ARG_NONE, c_get_stage, GF_CMD_PLAIN},
	{"SetSuppressor", GF_ARG_OBJECT, c_set_stage, GF_CMD_PLAIN},
	{"GetNeural", GF_ARG_NONE, c_get_stage, GF_CMD_PLAIN},
	{"SetNeural", GF_ARG_OBJECT, c_set_stage, GF_CMD_PLAIN},
};

const struct gf_api_cmd_table gf_api_suppress_cmds = {cmds, sizeof(cmds) / sizeof(cmds[0])};
