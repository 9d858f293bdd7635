/*
 * Configuration: the noise suppressor (design = "suppress"). It is not an FIR:
 * in a chain it passes as one tap of 1.0, so the chain's FIR entries are
 * still pre-convolved into one filter, and the suppressor runs on each
 * channel after that filter, wherever it stands in the chain (one per chain
 * at most: config.c). This file finds each channel's suppressor, reads the
 * noise samples that seed them, makes the bank that runs them
 * (suppress_bank.h), and tells a reload whether they changed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_priv.h"
#include "log.h"
#include "noise_file.h"
#include "suppress_bank.h"

/* The longest noise sample read, seconds: the estimate settles well within it. */
#define NOISE_MAX_S 30.0

int gf_cfg_is_suppress(const struct gf_config_filter *f)
{
	return f->kind == FK_DESIGN && f->design.type == GF_DESIGN_SUPPRESS;
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

/* The index in c->filters of channel @p ch's suppressor, or -1. */
static int suppress_index(const struct gf_config *c, uint32_t ch)
{
	char *const *chain;
	uint32_t n;
	chain_of(c, ch, &chain, &n);
	for (uint32_t i = 0; i < n; i++) {
		int k = gf_config_find_filter(c, chain[i]);
		if (k >= 0 && gf_cfg_is_suppress(&c->filters[k]))
			return k;
	}
	return -1;
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
		if (c->filters[i].used && gf_cfg_is_suppress(&c->filters[i]))
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

int gf_config_suppress_new_ex(const struct gf_config *c, uint32_t rate, uint32_t channels,
			      const struct gf_suppress_bank_opts *o, struct gf_suppress_bank **out,
			      struct gf_errbuf *eb)
{
	*out = NULL;
	if (!gf_config_has_suppress(c))
		return 0;
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
	int any = 0;
	for (uint32_t ch = 0; ch < channels; ch++)
		any |= per && per[ch] != NULL;
	if (!r && any && (r = gf_suppress_bank_new_ex(per, channels, rate, o, out, &why)))
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

int gf_config_suppress_differs(const struct gf_config *a, const struct gf_config *b, uint32_t channels,
			       char *why, size_t len)
{
	why[0] = '\0';
	for (uint32_t ch = 0; ch < channels; ch++) {
		int ka = suppress_index(a, ch), kb = suppress_index(b, ch);
		if (ka < 0 && kb < 0)
			continue;
		const struct gf_config_filter *fa = ka >= 0 ? &a->filters[ka] : NULL;
		const struct gf_config_filter *fb = kb >= 0 ? &b->filters[kb] : NULL;
		if (!fa || !fb)
			snprintf(why, len, "suppressor on channel %u %s", ch, fa ? "removed" : "added");
		else if (fa->design.reduction_db != fb->design.reduction_db)
			snprintf(why, len, "suppressor reduction_db %g -> %g", fa->design.reduction_db,
				 fb->design.reduction_db);
		else if (fa->design.highpass_hz != fb->design.highpass_hz)
			snprintf(why, len, "suppressor highpass_hz %g -> %g", fa->design.highpass_hz,
				 fb->design.highpass_hz);
		else if (noise_differs(fa, fb))
			snprintf(why, len, "suppressor noise %s -> %s", fa->file ? fa->file : "none",
				 fb->file ? fb->file : "none");
		if (why[0])
			return 1;
	}
	return 0;
}
