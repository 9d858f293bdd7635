/*
 * Configuration: the stages after the FIR, the noise suppressor (design =
 * "suppress") and the neural stage (design = "deepfilter"). Neither is an
 * FIR: in a chain each passes as one tap of 1.0, so the chain's FIR entries
 * are still pre-convolved into one filter, and the stages run on each
 * channel after that filter, the suppressor first, wherever they stand in
 * the chain (one of each per chain at most: config.c). This file finds each
 * channel's stages, reads the noise samples that seed the suppressors, makes
 * the bank that runs them (suppress_bank.h, which owns the neural stage,
 * neural_bank.h), and tells a reload whether they changed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_priv.h"
#include "log.h"
#include "neural_bank.h"
#include "noise_file.h"
#include "suppress_bank.h"

/* The longest noise sample read, seconds: the estimate settles well within it. */
#define NOISE_MAX_S 30.0

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

/* The index in c->filters of channel @p ch's stage of type @p is (a suppressor, a neural stage), or -1. */
static int stage_index(const struct gf_config *c, uint32_t ch, int (*is)(const struct gf_config_filter *))
{
	char *const *chain;
	uint32_t n;
	chain_of(c, ch, &chain, &n);
	for (uint32_t i = 0; i < n; i++) {
		int k = gf_config_find_filter(c, chain[i]);
		if (k >= 0 && is(&c->filters[k]))
			return k;
	}
	return -1;
}

static int suppress_index(const struct gf_config *c, uint32_t ch)
{
	return stage_index(c, ch, gf_cfg_is_suppress);
}

int gf_config_neural_of(const struct gf_config *c, uint32_t ch, struct gf_config_neural *out)
{
	int k = stage_index(c, ch, gf_cfg_is_neural);
	if (k < 0)
		return 0;
	const struct gf_config_filter *f = &c->filters[k];
	*out = (struct gf_config_neural){.name = f->name,
					 .model = f->file,
					 .atten_lim_db = f->design.atten_lim_db,
					 .post_filter_beta = f->design.post_filter_beta,
					 .bypass = f->design.bypass};
	return 1;
}

int gf_config_suppress_of(const struct gf_config *c, uint32_t ch, struct gf_config_suppress *out)
{
	int k = suppress_index(c, ch);
	if (k < 0)
		return 0;
	const struct gf_config_filter *f = &c->filters[k];
	*out = (struct gf_config_suppress){.name = f->name,
					   .reduction_db = f->design.reduction_db,
					   .highpass_hz = f->design.highpass_hz,
					   .noise = f->file};
	return 1;
}

int gf_config_has_suppress(const struct gf_config *c)
{
	for (uint32_t i = 0; i < c->n_filters; i++)
		if (c->filters[i].used && gf_cfg_is_stage(&c->filters[i]))
			return 1;
	return 0;
}

/* The parameters of filter @p f, its noise sample read into *noise. */
static int suppress_params(const struct gf_config_filter *f, uint32_t rate, struct gf_suppress_params *p,
			   float **noise, struct gf_errbuf *eb)
{
	*p = (struct gf_suppress_params){.reduction_db = f->design.reduction_db,
					 .highpass_hz = f->design.highpass_hz};
	if (!f->file)
		return 0;
	struct gf_errbuf why = {{0}};
	uint64_t n;
	int r = gf_noise_read_mono(f->file, "noise", (double)rate, (uint64_t)(NOISE_MAX_S * rate), noise, &n,
				   &why);
	if (r) {
		int line = f->key_line[K_NOISE] ? f->key_line[K_NOISE] : f->line;
		gf_errbuf_set(eb, "%s:%d: filters.%s.%s", f->src, line, f->name, why.msg);
		return r;
	}
	p->noise = *noise;
	p->noise_frames = n;
	gf_info("filters.%s: the suppressor's noise estimate starts from %s (%.2f s)", f->name, f->file,
		(double)n / rate);
	return 0;
}

/* The neural stage of the channels whose chain has one (one setting for all: the first channel's);
 * *out NULL where none has. Its helpers: the threads @p o gives (offline), else one per CPU. */
static int neural_new(const struct gf_config *c, uint32_t rate, uint32_t channels,
		      const struct gf_suppress_bank_opts *o, struct gf_neural_bank **out,
		      struct gf_errbuf *eb)
{
	*out = NULL;
	uint8_t *active = calloc(channels ? channels : 1, 1);
	if (!active)
		return GF_E_NOMEM;
	int first = -1, r = 0;
	for (uint32_t ch = 0; ch < channels; ch++) {
		int k = stage_index(c, ch, gf_cfg_is_neural);
		active[ch] = k >= 0;
		if (k >= 0 && first < 0)
			first = k;
		else if (k >= 0 && k != first) {
			const struct gf_config_filter *f = &c->filters[k];
			gf_errbuf_set(
				eb,
				"%s:%d: filters.%s: channel %u runs a second neural stage (\"%s\"): the "
				"channels of a stream share one",
				f->src, f->line, f->name, ch, c->filters[first].name);
			r = GF_E_CONFIG;
		}
	}
	if (!r && first >= 0) {
		const struct gf_config_filter *f = &c->filters[first];
		struct gf_neural_params p = {.model = f->file,
					     .atten_lim_db = (float)f->design.atten_lim_db,
					     .post_filter_beta = (float)f->design.post_filter_beta};
		struct gf_neural_bank_opts no = {.threads = o && o->threads > 1 ? o->threads : 0,
						 .bypass = f->design.bypass};
		struct gf_errbuf why = {{0}};
		if ((r = gf_neural_bank_new(active, channels, rate, &p, &no, out, &why))) {
			gf_errbuf_set(eb, "%s:%d: filters.%s: %s", f->src, f->line, f->name,
				      why.msg[0] ? why.msg : gf_strerror(r));
			if (r == GF_E_INVAL ||
			    r == GF_E_IO) /* the rate, the model, the runtime: the config's */
				r = GF_E_CONFIG;
		}
	}
	free(active);
	return r;
}

int gf_config_suppress_new_ex(const struct gf_config *c, uint32_t rate, uint32_t channels,
			      const struct gf_suppress_bank_opts *o, struct gf_suppress_bank **out,
			      struct gf_errbuf *eb)
{
	*out = NULL;
	if (!gf_config_has_suppress(c))
		return 0;
	struct gf_suppress_bank_opts so = o ? *o : (struct gf_suppress_bank_opts){0};
	int nr = neural_new(c, rate, channels, o, &so.neural, eb);
	if (nr)
		return nr;
	struct gf_suppress_params *params = calloc(c->n_filters, sizeof(*params));
	float **noise = calloc(c->n_filters, sizeof(*noise));
	const struct gf_suppress_params **per = calloc(channels, sizeof(*per));
	uint8_t *made = calloc(c->n_filters, 1);
	int r = params && noise && per && made ? 0 : GF_E_NOMEM;
	for (uint32_t ch = 0; !r && ch < channels; ch++) {
		int k = suppress_index(c, ch);
		if (k < 0)
			continue;
		if (!made[k] && !(r = suppress_params(&c->filters[k], rate, &params[k], &noise[k], eb)))
			made[k] = 1;
		per[ch] = &params[k];
	}
	struct gf_errbuf why = {{0}};
	int any = so.neural != NULL;
	for (uint32_t ch = 0; ch < channels; ch++)
		any |= per && per[ch] != NULL;
	if (r || !any)
		gf_neural_bank_free(so.neural); /* else the bank owns it, also when it fails */
	else if ((r = gf_suppress_bank_new_ex(per, channels, rate, &so, out, &why)))
		gf_errbuf_set(eb, "%s: the suppressor: %s", c->priv->src,
			      why.msg[0] ? why.msg : gf_strerror(r));
	for (uint32_t i = 0; noise && i < c->n_filters; i++)
		free(noise[i]);
	free(noise);
	free(params);
	free(per);
	free(made);
	return r;
}

int gf_config_suppress_new(const struct gf_config *c, uint32_t rate, uint32_t channels,
			   struct gf_suppress_bank **out, struct gf_errbuf *eb)
{
	return gf_config_suppress_new_ex(c, rate, channels, NULL, out, eb);
}

static int noise_differs(const struct gf_config_filter *a, const struct gf_config_filter *b)
{
	if (!a->file || !b->file)
		return a->file != b->file;
	return strcmp(a->file, b->file) != 0 || a->noise_size != b->noise_size ||
	       a->noise_mtime_ns != b->noise_mtime_ns;
}

/* Channel @p ch's stage of kind @p is in @p a and @p b, and why where they differ: added or removed
 * (1), or 0 with both filters to compare (0 and neither where no config has one). */
static int stage_pair(const struct gf_config *a, const struct gf_config *b, uint32_t ch,
		      int (*is)(const struct gf_config_filter *), const char *what,
		      const struct gf_config_filter **fa, const struct gf_config_filter **fb, char *why,
		      size_t len)
{
	int ka = stage_index(a, ch, is), kb = stage_index(b, ch, is);
	*fa = ka >= 0 ? &a->filters[ka] : NULL;
	*fb = kb >= 0 ? &b->filters[kb] : NULL;
	if (!*fa != !*fb)
		snprintf(why, len, "%s on channel %u %s", what, ch, *fa ? "removed" : "added");
	return !*fa != !*fb;
}

/* The neural stages of @p a and @p b on channel @p ch: 1 and why where they differ. */
static int neural_differs(const struct gf_config *a, const struct gf_config *b, uint32_t ch, char *why,
			  size_t len)
{
	const struct gf_config_filter *fa, *fb;
	if (stage_pair(a, b, ch, gf_cfg_is_neural, "neural stage", &fa, &fb, why, len) || !fa)
		return why[0] != '\0';
	if (fa->design.atten_lim_db != fb->design.atten_lim_db)
		snprintf(why, len, "neural stage atten_lim_db %g -> %g", fa->design.atten_lim_db,
			 fb->design.atten_lim_db);
	else if (fa->design.post_filter_beta != fb->design.post_filter_beta)
		snprintf(why, len, "neural stage post_filter_beta %g -> %g", fa->design.post_filter_beta,
			 fb->design.post_filter_beta);
	else if (fa->design.bypass != fb->design.bypass)
		snprintf(why, len, "neural stage bypass %s", fb->design.bypass ? "on" : "off");
	else if (noise_differs(fa, fb))
		snprintf(why, len, "neural stage model %s -> %s", fa->file, fb->file);
	return why[0] != '\0';
}

/* The suppressors of @p a and @p b on channel @p ch: 1 and why where they differ. */
static int suppressor_differs(const struct gf_config *a, const struct gf_config *b, uint32_t ch, char *why,
			      size_t len)
{
	const struct gf_config_filter *fa, *fb;
	if (stage_pair(a, b, ch, gf_cfg_is_suppress, "suppressor", &fa, &fb, why, len) || !fa)
		return why[0] != '\0';
	if (fa->design.reduction_db != fb->design.reduction_db)
		snprintf(why, len, "suppressor reduction_db %g -> %g", fa->design.reduction_db,
			 fb->design.reduction_db);
	else if (fa->design.highpass_hz != fb->design.highpass_hz)
		snprintf(why, len, "suppressor highpass_hz %g -> %g", fa->design.highpass_hz,
			 fb->design.highpass_hz);
	else if (noise_differs(fa, fb))
		snprintf(why, len, "suppressor noise %s -> %s", fa->file ? fa->file : "none",
			 fb->file ? fb->file : "none");
	return why[0] != '\0';
}

int gf_config_suppress_differs(const struct gf_config *a, const struct gf_config *b, uint32_t channels,
			       char *why, size_t len)
{
	why[0] = '\0';
	for (uint32_t ch = 0; ch < channels; ch++)
		if (suppressor_differs(a, b, ch, why, len) || neural_differs(a, b, ch, why, len))
			return 1;
	return 0;
}
