/*
 * The chains as the configuration gives them: the filter names each holds
 * (a route's chain, a mixer path's), and the stages after the FIR: the noise
 * suppressor (design = "suppress") and the neural stage (design =
 * "deepfilter"), each channel's of each, and, live (minimum phase), the
 * notch with freq_hz = "auto" whose hum the suppressors remove in their
 * frames instead of an FIR. Neither stage is an FIR: in a chain each passes
 * as one tap of 1.0, and they run on each channel after the chain's filter,
 * the suppressor first, wherever they stand in the chain (one of each per
 * chain at most, which gf_cfg_parse_names checks). Building them is config_suppress.c's
 * (src/config/).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config_priv.h"

int gf_cfg_parse_names(const struct gf_cfg_loader *L, const config_setting_t *a, const char *setting,
		       char ***out, uint32_t *n_out)
{
	struct gf_config *c = L->c;
	int t = config_setting_type(a);
	if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST)
		return gf_cfg_fail_at(L, a, setting,
				      "must be an array of filter names [\"a\", \"b\"], not %s",
				      gf_cfg_type_name(a));
	int n = config_setting_length(a);
	char **v = calloc((size_t)n + 1, sizeof(char *));
	if (!v)
		return GF_E_NOMEM;
	*out = v;
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(a, (unsigned)i);
		if (config_setting_type(e) != CONFIG_TYPE_STRING)
			return gf_cfg_fail_at(L, e, setting,
					      "element %d must be a filter name (a string), not %s", i,
					      gf_cfg_type_name(e));
		const char *name = config_setting_get_string(e);
		int k = gf_config_find_filter(c, name);
		if (k < 0)
			return gf_cfg_fail_at(L, e, setting, "no filter named \"%s\"", name);
		if (gf_cfg_is_stage(&c->filters[k])) {
			/* one of each stage per channel: a second would only add its latency again */
			enum gf_design_type dt = c->filters[k].design.type;
			for (int j = 0; j < i; j++) {
				const struct gf_config_filter *o =
					&c->filters[gf_config_find_filter(c, v[j])];
				if (gf_cfg_is_stage(o) && o->design.type == dt)
					return gf_cfg_fail_at(L, e, setting,
							      "\"%s\" is a second %s (design = "
							      "\"%s\") in this chain, after \"%s\": "
							      "a chain has at most one",
							      name,
							      dt == GF_DESIGN_SUPPRESS ? "suppressor"
										       : "neural stage",
							      gf_design_type_name(dt), v[j]);
			}
		}
		c->filters[k].used = 1;
		if (!(v[i] = strdup(name)))
			return GF_E_NOMEM;
		*n_out = (uint32_t)i + 1;
	}
	return 0;
}

int gf_config_min_phase(const struct gf_config *c)
{
	return c->phase == GF_PHASE_MINIMUM || (c->phase == GF_PHASE_AUTO && c->live);
}

int gf_cfg_is_suppress(const struct gf_config_filter *f)
{
	return f->kind == FK_DESIGN && f->design.type == GF_DESIGN_SUPPRESS;
}

int gf_cfg_is_neural(const struct gf_config_filter *f)
{
	return f->kind == FK_DESIGN && f->design.type == GF_DESIGN_DEEPFILTER;
}

int gf_cfg_is_stage(const struct gf_config_filter *f)
{
	return gf_cfg_is_suppress(f) || gf_cfg_is_neural(f);
}

/* The chain channel @p ch runs: its route's, or the global one. */
static void chain_of(const struct gf_config *c, uint32_t ch, char *const **chain, uint32_t *n)
{
	*chain = c->chain;
	*n = c->n_chain;
	for (uint32_t i = 0; i < c->n_routes; i++) {
		if (c->routes[i].channel == ch && c->routes[i].has_chain) {
			*chain = c->routes[i].chain;
			*n = c->routes[i].n_chain;
		}
	}
	if (!c->n_chain && *chain == c->chain) { /* routes only: channels without one pass through */
		*chain = NULL;
		*n = 0;
	}
}

/* The first filter of @p chain (@p n names) that @p is holds for, or -1. */
static int chain_find(const struct gf_config *c, char *const *chain, uint32_t n,
		      int (*is)(const struct gf_config_filter *))
{
	for (uint32_t i = 0; i < n; i++) {
		int k = gf_config_find_filter(c, chain[i]);
		if (k >= 0 && is(&c->filters[k]))
			return k;
	}
	return -1;
}

int gf_cfg_stage_index(const struct gf_config *c, uint32_t ch, int (*is)(const struct gf_config_filter *))
{
	char *const *chain;
	uint32_t n;
	chain_of(c, ch, &chain, &n);
	return chain_find(c, chain, n, is);
}

int gf_cfg_suppress_index(const struct gf_config *c, uint32_t ch)
{
	return gf_cfg_stage_index(c, ch, gf_cfg_is_suppress);
}

int gf_config_neural_of(const struct gf_config *c, uint32_t ch, struct gf_config_neural *out)
{
	int k = gf_cfg_stage_index(c, ch, gf_cfg_is_neural);
	if (k < 0)
		return 0;
	const struct gf_config_filter *f = &c->filters[k];
	*out = (struct gf_config_neural){.name = f->name,
					 .model = f->file,
					 .atten_lim_db = f->design.atten_lim_db,
					 .post_filter_beta = f->design.post_filter_beta,
					 .reference = f->design.neural_reference,
					 .bypass = f->bypass};
	return 1;
}

/* 1: @p chain (@p n names) holds filter @p k. */
static int chain_holds(const struct gf_config *c, char *const *chain, uint32_t n, int k)
{
	for (uint32_t i = 0; i < n; i++)
		if (gf_config_find_filter(c, chain[i]) == k)
			return 1;
	return 0;
}

static int chain_has_suppress(const struct gf_config *c, char *const *chain, uint32_t n)
{
	return chain_find(c, chain, n, gf_cfg_is_suppress) >= 0;
}

/* Minimum phase is where a notch comb turns the voice's phase (docs/denoise.md): there, the
 * suppressor's frames take the hum instead, as a gain with no phase, wherever every chain holding
 * the notch runs a suppressor (a mixer's paths have none: their notches stay FIRs). */
int gf_cfg_hum_in_suppressor(const struct gf_config *c, const struct gf_config_filter *f)
{
	if (f->kind != FK_DESIGN || f->design.type != GF_DESIGN_NOTCH || !f->design.freq_auto ||
	    !(gf_config_min_phase(c) || f->minphase))
		return 0;
	int k = (int)(f - c->filters), used = 0;
	if (chain_holds(c, c->chain, c->n_chain, k)) {
		if (!chain_has_suppress(c, c->chain, c->n_chain))
			return 0;
		used = 1;
	}
	for (uint32_t i = 0; i < c->n_routes; i++) {
		const struct gf_config_route *r = &c->routes[i];
		if (!r->has_chain || !chain_holds(c, r->chain, r->n_chain, k))
			continue;
		if (!chain_has_suppress(c, r->chain, r->n_chain))
			return 0;
		used = 1;
	}
	for (uint32_t i = 0; c->mixer && i < c->mixer->n_paths; i++)
		if (chain_holds(c, c->mixer->paths[i].chain, c->mixer->paths[i].n_chain, k))
			return 0;
	return used;
}

int gf_cfg_hum_index(const struct gf_config *c, uint32_t ch)
{
	char *const *chain;
	uint32_t n;
	int best = -1;
	chain_of(c, ch, &chain, &n);
	if (!chain_has_suppress(c, chain, n))
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		int k = gf_config_find_filter(c, chain[i]);
		if (k >= 0 && gf_cfg_hum_in_suppressor(c, &c->filters[k]) &&
		    (best < 0 || c->filters[k].design.harmonics > c->filters[best].design.harmonics))
			best = k;
	}
	return best;
}

uint32_t gf_cfg_hum_top(const struct gf_config *c, uint32_t ch)
{
	int k = gf_cfg_hum_index(c, ch);
	return k < 0 ? 0 : c->filters[k].design.harmonics;
}

int gf_config_hum_in_suppressor_any(const struct gf_config *c)
{
	for (uint32_t i = 0; i < c->n_filters; i++)
		if (c->filters[i].used && gf_cfg_hum_in_suppressor(c, &c->filters[i]))
			return 1;
	return 0;
}

int gf_config_suppress_of(const struct gf_config *c, uint32_t ch, struct gf_config_suppress *out)
{
	int k = gf_cfg_suppress_index(c, ch);
	if (k < 0)
		return 0;
	const struct gf_config_filter *f = &c->filters[k];
	*out = (struct gf_config_suppress){.name = f->name,
					   .reduction_db = f->design.reduction_db,
					   .highpass_hz = f->design.highpass_hz,
					   .noise = f->file,
					   .bypass = f->bypass};
	return 1;
}

int gf_config_has_suppress(const struct gf_config *c)
{
	for (uint32_t i = 0; i < c->n_filters; i++)
		if (c->filters[i].used && gf_cfg_is_stage(&c->filters[i]))
			return 1;
	return 0;
}
