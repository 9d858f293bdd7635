/*
 * Configuration, the mixer: `mixer = { inputs; outputs; paths = (...); }`,
 * N input channels to M output channels, each path (in -> out) its own
 * chain, gain, delay and polarity. Loaded and validated as a whole here;
 * the builder (src/config/config_build.c) makes it a mixer filter set
 * (filter_set.h), one FIR per path.
 */
#include <libconfig.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_parse.h"
#include "config_priv.h"

static const char *const mixer_keys[] = {"inputs", "outputs", "paths"};
static const char *const path_keys[] = {"in", "out", "chain", "gain_db", "delay_ms", "invert"};

/* A suppressor runs per output channel after the FIR, not per path: not in a mixer's chains. */
static int check_no_suppress(const struct gf_cfg_loader *L, const config_setting_t *at, const char *setting,
			     char *const *chain, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		int k = gf_config_find_filter(L->c, chain[i]);
		if (k >= 0 && gf_cfg_is_stage(&L->c->filters[k]))
			return gf_cfg_fail_at(L, at, setting,
					      "\"%s\" is a noise suppressor (design = \"%s\"): it "
					      "runs per channel, not per mixer path, and cannot be used "
					      "with a mixer",
					      chain[i], gf_design_type_name(L->c->filters[k].design.type));
	}
	return 0;
}

/* A required channel index of a path, below @p count. */
static int get_channel(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		       const char *key, uint32_t count, const char *why, uint32_t *out)
{
	long long v = -1;
	int e = gf_cfg_get_int(L, g, prefix, key, 0, (long long)count - 1, &v);
	if (e == 0)
		return gf_cfg_missing(L, g, prefix, key, why);
	if (e > 0)
		*out = (uint32_t)v;
	return e < 0 ? e : 0;
}

static int parse_path(const struct gf_cfg_loader *L, const config_setting_t *g, unsigned idx,
		      const struct gf_config_mixer *m, struct gf_config_route *r)
{
	char prefix[64], name[96];
	snprintf(prefix, sizeof(prefix), "mixer.paths[%u].", idx);
	snprintf(r->name, sizeof(r->name), "mixer.paths[%u]", idx);
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return gf_cfg_fail_at(L, g, "mixer.paths",
				      "entry %u must be a group { in = 0; out = 0; ... }, not %s", idx,
				      gf_cfg_type_name(g));
	r->line = gf_cfg_line_of(g);
	if (!(r->src = strdup(gf_cfg_src_of(L, g))))
		return GF_E_NOMEM;
	int e;
	if ((e = get_channel(L, g, prefix, "in", m->inputs, "the 0-based input channel this path reads",
			     &r->channel)) < 0 ||
	    (e = get_channel(L, g, prefix, "out", m->outputs, "the 0-based output channel this path adds to",
			     &r->out)) < 0)
		return e;
	r->channel_line = gf_cfg_line_of(config_setting_get_member(g, "in"));
	const config_setting_t *ca = config_setting_get_member(g, "chain");
	if (ca) {
		gf_cfg_setting(name, sizeof(name), prefix, "chain");
		r->has_chain = 1;
		r->chain_line = gf_cfg_line_of(ca);
		if ((e = gf_cfg_parse_names(L, ca, name, &r->chain, &r->n_chain)) < 0 ||
		    (e = check_no_suppress(L, ca, name, r->chain, r->n_chain)) < 0)
			return e;
	}
	if ((e = gf_cfg_get_num(L, g, prefix, "gain_db", GAIN_DB_MIN, GAIN_DB_MAX, &r->gain_db)) < 0 ||
	    (e = gf_cfg_get_num(L, g, prefix, "delay_ms", 0.0, 10000.0, &r->delay_ms)) < 0 ||
	    (e = gf_cfg_get_bool(L, g, prefix, "invert", &r->invert)) < 0)
		return e;
	gf_cfg_warn_unknown(L, g, prefix, path_keys, sizeof(path_keys) / sizeof(path_keys[0]),
			    "unknown setting");
	return 0;
}

/* One path per (in, out): a second would only be the two chains' sum, better said once. @p seen
 * marks the pairs so far (inputs x outputs): a million paths cost a million steps, not 10^12. */
static int check_duplicate(const struct gf_cfg_loader *L, const config_setting_t *g,
			   const struct gf_config_mixer *m, uint32_t i, unsigned char *seen)
{
	const struct gf_config_route *p = &m->paths[i];
	unsigned char *pair = &seen[(size_t)p->channel * m->outputs + p->out];
	if (!*pair) {
		*pair = 1;
		return 0;
	}
	for (uint32_t j = 0; j < i; j++) /* the first, for its line */
		if (m->paths[j].channel == p->channel && m->paths[j].out == p->out)
			return gf_cfg_fail_at(
				L, g, p->name,
				"a second path from input %u to output %u (the first: line %d): "
				"put both filters in one path's chain, or add them as one filter",
				p->channel, p->out, m->paths[j].line);
	return 0;
}

/* Outputs no path writes are silent, inputs no path reads are dropped: allowed, said. */
static void warn_unused(const struct gf_cfg_loader *L, const struct gf_config_mixer *m)
{
	unsigned char used[2][MAX_CHANNELS] = {{0}};
	for (uint32_t i = 0; i < m->n_paths; i++)
		used[0][m->paths[i].channel] = used[1][m->paths[i].out] = 1;
	for (int side = 0; side < 2; side++) {
		uint32_t n = side ? m->outputs : m->inputs;
		for (uint32_t ch = 0; ch < n; ch++) {
			if (!used[side][ch])
				gf_warn("%s:%d: mixer: %s %u has no path: %s", L->c->priv->src, m->line,
					side ? "output" : "input", ch,
					side ? "it is silent" : "it is not heard");
		}
	}
}

static int parse_paths(const struct gf_cfg_loader *L, const config_setting_t *g, struct gf_config_mixer *m)
{
	const config_setting_t *pl = config_setting_get_member(g, "paths");
	if (!pl)
		return gf_cfg_missing(L, g, "mixer.", "paths",
				      "the list of paths ( { in; out; chain; }, ... )");
	if (config_setting_type(pl) != CONFIG_TYPE_LIST || config_setting_length(pl) == 0)
		return gf_cfg_fail_at(L, pl, "mixer.paths", "must be a non-empty list ( {...}, ... ), not %s",
				      config_setting_type(pl) == CONFIG_TYPE_LIST ? "an empty list"
										  : gf_cfg_type_name(pl));
	uint32_t n = (uint32_t)config_setting_length(pl);
	if (!(m->paths = calloc(n, sizeof(*m->paths))))
		return GF_E_NOMEM;
	unsigned char *seen = calloc((size_t)m->inputs * m->outputs, 1);
	if (!seen)
		return GF_E_NOMEM;
	int e = 0;
	for (uint32_t i = 0; i < n && e >= 0; i++) {
		const config_setting_t *pg = config_setting_get_elem(pl, i);
		m->n_paths = i + 1;
		e = parse_path(L, pg, i, m, &m->paths[i]);
		if (e >= 0)
			e = check_duplicate(L, pg, m, i, seen);
	}
	free(seen);
	return e < 0 ? e : 0;
}

int gf_cfg_parse_mixer(const struct gf_cfg_loader *L, const config_setting_t *root)
{
	struct gf_config *c = L->c;
	const config_setting_t *g = config_setting_get_member(root, "mixer");
	if (!g)
		return 0;
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return gf_cfg_fail_at(L, g, "mixer",
				      "must be a group { inputs; outputs; paths = (...); }, not %s",
				      gf_cfg_type_name(g));
	if (c->n_routes)
		return gf_cfg_fail_at(L, g, "mixer",
				      "routes and a mixer cannot both be set: give each mixer path its "
				      "chain, gain_db, delay_ms and invert");
	int e = check_no_suppress(L, g, "mixer (the top-level chain, which paths without one run)", c->chain,
				  c->n_chain);
	if (e < 0)
		return e;
	struct gf_config_mixer *m = calloc(1, sizeof(*m));
	if (!m)
		return GF_E_NOMEM;
	c->mixer = m;
	m->line = gf_cfg_line_of(g);
	long long v[2] = {0, 0};
	const char *keys[2] = {"inputs", "outputs"};
	for (int i = 0; i < 2; i++) {
		e = gf_cfg_get_int(L, g, "mixer.", keys[i], 1, MAX_CHANNELS, &v[i]);
		if (e == 0)
			e = gf_cfg_missing(L, g, "mixer.", keys[i],
					   i ? "the number of channels the mixer writes"
					     : "the number of channels the mixer reads");
		if (e < 0)
			return e;
	}
	m->inputs = (uint32_t)v[0];
	m->outputs = (uint32_t)v[1];
	/* Live, playback carries what the mixer writes (docs/live.md): a count that says otherwise is a typo.
	 */
	if (c->output.channels && c->output.channels != m->outputs)
		return gf_cfg_fail_at(L, g, "mixer.outputs",
				      "the mixer writes %u channels, output.channels says %u: leave "
				      "output.channels out or set it to %u",
				      m->outputs, c->output.channels, m->outputs);
	gf_cfg_warn_unknown(L, g, "mixer.", mixer_keys, sizeof(mixer_keys) / sizeof(mixer_keys[0]),
			    "unknown setting");
	if ((e = parse_paths(L, g, m)) < 0)
		return e;
	warn_unused(L, m);
	return 0;
}

void gf_cfg_mixer_free(struct gf_config_mixer *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->n_paths; i++) {
		free(m->paths[i].src);
		for (uint32_t k = 0; k < m->paths[i].n_chain; k++)
			free(m->paths[i].chain[k]);
		free(m->paths[i].chain);
	}
	free(m->paths);
	free(m);
}

void gf_config_mixer_channels(const struct gf_config *c, uint32_t *inputs, uint32_t *outputs)
{
	*inputs = c->mixer ? c->mixer->inputs : 0;
	*outputs = c->mixer ? c->mixer->outputs : 0;
}

/* ---- build ------------------------------------------------------------------ */
