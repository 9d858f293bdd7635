/*
 * Configuration, building the stages after the FIR: the noise suppressor
 * (design = "suppress") and the neural stage (design = "deepfilter"), which
 * config_stages.c (src/config/parse/) finds on each channel. This file
 * reads the noise samples that seed the suppressors, makes
 * the bank that runs them (suppress_bank.h, which owns the neural stage,
 * neural_bank.h), tells a reload whether they changed in a way that needs a
 * new one (a suppressor's reduction_db and bypass do not: they are the live
 * floor), and gives each channel's floor for the running bank. Live (minimum
 * phase), a notch with freq_hz = "auto" in chains that all have a suppressor
 * is not an FIR either: those suppressors remove its hum in their frames
 * (suppress_hum.h): this file hands each the notch config_stages.c chose.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_build.h"
#include "log.h"
#include "neural_bank.h"
#include "noise_file.h"
#include "suppress_bank.h"
#include "suppress_hum.h"

/* The longest noise sample read, seconds: the estimate settles well within it. */
#define NOISE_MAX_S 30.0

static void suppress_hum_of(const struct gf_hum *h, struct gf_suppress_hum *out)
{
	_Static_assert(GF_HUM_MAX_HARMONICS <= GF_SUPPRESS_HUM_MAX, "a hum set fits the suppressor's");
	out->f0_hz = h->f0_hz;
	out->n = h->n;
	memcpy(out->harmonic, h->harmonic, h->n * sizeof(h->harmonic[0]));
}

void gf_config_suppress_set_hum(struct gf_suppress_bank *b, const struct gf_hum *h)
{
	struct gf_suppress_hum sh;
	suppress_hum_of(h, &sh);
	gf_suppress_bank_set_hum(b, &sh);
}

/* What filter @p f's suppressors share: its parameters, its noise sample read into *noise. */
static int suppress_params(const struct gf_config_filter *f, uint32_t rate, struct gf_suppress_params *p,
			   float **noise, struct gf_errbuf *eb)
{
	/* bypass is a floor of 0 dB (suppress.h): offline and at a stream's start alike */
	*p = (struct gf_suppress_params){.reduction_db = f->bypass ? 0.0 : f->design.reduction_db,
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

/* Per filter, what the channels' suppressors share: the parameters and noise sample of each
 * suppressor, the hum each hum notch hands over (gf_cfg_hum_in_suppressor), made once. */
struct shared {
	struct gf_suppress_params *params;
	float **noise;
	struct gf_suppress_hum *hum;
	uint8_t *made, *hum_made;
};

static void shared_free(struct shared *sh, uint32_t n)
{
	for (uint32_t i = 0; sh->noise && i < n; i++)
		free(sh->noise[i]);
	free(sh->noise);
	free(sh->params);
	free(sh->hum);
	free(sh->made);
	free(sh->hum_made);
}

/* Channel @p ch's parameters into @p out: its suppressor's, with the hum of its chain's notch. */
static int channel_params(const struct gf_config *c, uint32_t ch, uint32_t rate, struct shared *sh,
			  struct gf_suppress_params *out, struct gf_errbuf *eb)
{
	int k = gf_cfg_suppress_index(c, ch), hk = gf_cfg_hum_index(c, ch), r = 0;
	if (!sh->made[k] && !(r = suppress_params(&c->filters[k], rate, &sh->params[k], &sh->noise[k], eb)))
		sh->made[k] = 1;
	if (r)
		return r;
	*out = sh->params[k];
	if (hk < 0)
		return 0;
	if (!sh->hum_made[hk]) {
		struct gf_hum h;
		if ((r = gf_cfg_hum_for_suppressor(c, &c->filters[hk], c->filters[k].name, rate, &h, eb)))
			return r;
		suppress_hum_of(&h, &sh->hum[hk]);
		sh->hum_made[hk] = 1;
	}
	out->hum_harmonics = c->filters[hk].design.harmonics;
	out->hum = &sh->hum[hk];
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
		int k = gf_cfg_stage_index(c, ch, gf_cfg_is_neural);
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
		/* the engine's own inference runs on the GPU where the engine does (the suppressor's rule),
		 * its CPU forward the standby; the reference runtime only on the CPU */
		int ref = f->design.neural_reference;
		struct gf_neural_bank_opts no = {.ops = ref ? &gf_neural_ref_ops : &gf_neural_dfn_ops,
						 .threads = o && o->threads > 1 ? o->threads : 0,
						 .bypass = f->bypass,
						 .gpu = !ref && o && o->gpu,
						 .gpu_index = o ? o->gpu_index : 0,
						 .return_ms = o ? o->return_ms : 0};
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
	uint32_t nf = c->n_filters;
	struct shared sh = {calloc(nf, sizeof(*sh.params)), calloc(nf, sizeof(*sh.noise)),
			    calloc(nf, sizeof(*sh.hum)), calloc(nf, 1), calloc(nf, 1)};
	struct gf_suppress_params *params = calloc(channels ? channels : 1, sizeof(*params));
	const struct gf_suppress_params **per = calloc(channels ? channels : 1, sizeof(*per));
	int r = sh.params && sh.noise && sh.hum && sh.made && sh.hum_made && params && per ? 0 : GF_E_NOMEM;
	int any = so.neural != NULL;
	for (uint32_t ch = 0; !r && ch < channels; ch++) {
		if (gf_cfg_suppress_index(c, ch) < 0)
			continue;
		r = channel_params(c, ch, rate, &sh, &params[ch], eb);
		per[ch] = &params[ch];
		any = 1;
	}
	struct gf_errbuf why = {{0}};
	if (r || !any)
		gf_neural_bank_free(so.neural); /* else the bank owns it, also when it fails */
	else if ((r = gf_suppress_bank_new_ex(per, channels, rate, &so, out, &why)))
		gf_errbuf_set(eb, "%s: the suppressor: %s", c->priv->src,
			      why.msg[0] ? why.msg : gf_strerror(r));
	shared_free(&sh, nf);
	free(params);
	free(per);
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

/* Channel @p ch's suppressor in @p c, or NULL. */
static const struct gf_config_filter *suppressor_of(const struct gf_config *c, uint32_t ch)
{
	int k = gf_cfg_suppress_index(c, ch);
	return k >= 0 ? &c->filters[k] : NULL;
}

static int live_same(const struct gf_config_filter *a, const struct gf_config_filter *b)
{
	return a->design.reduction_db == b->design.reduction_db && a->bypass == b->bypass;
}

/* 1 when channels @p i and @p j, whose suppressors in @p a have the same settings (so they may run in
 * one GPU batch, which has one floor: suppress_bank.h), get different live settings in @p b. */
static int live_split(const struct gf_config *a, const struct gf_config *b, uint32_t i, uint32_t j)
{
	const struct gf_config_filter *ai = suppressor_of(a, i), *aj = suppressor_of(a, j);
	const struct gf_config_filter *bi = suppressor_of(b, i), *bj = suppressor_of(b, j);
	if (!ai || !aj || !bi || !bj) /* an added or removed one is a difference of its own */
		return 0;
	int shared = ai == aj || (live_same(ai, aj) && ai->design.highpass_hz == aj->design.highpass_hz &&
				  !noise_differs(ai, aj));
	return shared && !live_same(bi, bj);
}

/* The live settings (reduction_db, bypass) on channels that shared all their settings before and do
 * not now: the first such pair into @p why. Suppressors are few: the pairs are of distinct ones. */
static int live_splits(const struct gf_config *a, const struct gf_config *b, uint32_t channels, char *why,
		       size_t len)
{
	for (uint32_t i = 0; i < channels; i++)
		for (uint32_t j = i + 1; j < channels; j++)
			if (live_split(a, b, i, j)) {
				snprintf(why, len,
					 "suppressors of channels %u and %u had the same settings and now "
					 "differ "
					 "in reduction_db or bypass",
					 i, j);
				return 1;
			}
	return 0;
}

/* Channel @p ch's stage of kind @p is in @p a and @p b, and why where they differ: added or removed
 * (1), or 0 with both filters to compare (0 and neither where no config has one). */
static int stage_pair(const struct gf_config *a, const struct gf_config *b, uint32_t ch,
		      int (*is)(const struct gf_config_filter *), const char *what,
		      const struct gf_config_filter **fa, const struct gf_config_filter **fb, char *why,
		      size_t len)
{
	int ka = gf_cfg_stage_index(a, ch, is), kb = gf_cfg_stage_index(b, ch, is);
	*fa = ka >= 0 ? &a->filters[ka] : NULL;
	*fb = kb >= 0 ? &b->filters[kb] : NULL;
	if (!*fa != !*fb)
		snprintf(why, len, "%s on channel %u %s", what, ch, *fa ? "removed" : "added");
	return !*fa != !*fb;
}

/* The neural stages of @p a and @p b on channel @p ch: 1 and why where they differ in what needs a
 * new one (atten_lim_db and bypass are live: gf_config_suppress_live_differs). */
static int neural_differs(const struct gf_config *a, const struct gf_config *b, uint32_t ch, char *why,
			  size_t len)
{
	const struct gf_config_filter *fa, *fb;
	if (stage_pair(a, b, ch, gf_cfg_is_neural, "neural stage", &fa, &fb, why, len) || !fa)
		return why[0] != '\0';
	if (fa->design.post_filter_beta != fb->design.post_filter_beta)
		snprintf(why, len, "neural stage post_filter_beta %g -> %g", fa->design.post_filter_beta,
			 fb->design.post_filter_beta);
	else if (fa->design.neural_reference != fb->design.neural_reference)
		snprintf(why, len, "neural stage runtime %s",
			 fb->design.neural_reference ? "reference" : "engine");
	else if (noise_differs(fa, fb))
		snprintf(why, len, "neural stage model %s -> %s", fa->file, fb->file);
	return why[0] != '\0';
}

/* The suppressors of @p a and @p b on channel @p ch: 1 and why where they differ in what needs a new
 * one (reduction_db and bypass are live: gf_config_suppress_live_differs). */
static int suppressor_differs(const struct gf_config *a, const struct gf_config *b, uint32_t ch, char *why,
			      size_t len)
{
	const struct gf_config_filter *fa = suppressor_of(a, ch), *fb = suppressor_of(b, ch);
	if (!fa && !fb)
		return 0;
	if (!fa || !fb)
		snprintf(why, len, "suppressor on channel %u %s", ch, fa ? "removed" : "added");
	else if (fa->design.highpass_hz != fb->design.highpass_hz)
		snprintf(why, len, "suppressor highpass_hz %g -> %g", fa->design.highpass_hz,
			 fb->design.highpass_hz);
	else if (noise_differs(fa, fb))
		snprintf(why, len, "suppressor noise %s -> %s", fa->file ? fa->file : "none",
			 fb->file ? fb->file : "none");
	else if (gf_cfg_hum_top(a, ch) != gf_cfg_hum_top(b, ch))
		snprintf(why, len, "suppressor's hum removal up to harmonic %u -> %u", gf_cfg_hum_top(a, ch),
			 gf_cfg_hum_top(b, ch));
	return why[0] != '\0';
}

int gf_config_suppress_differs(const struct gf_config *a, const struct gf_config *b, uint32_t channels,
			       char *why, size_t len)
{
	why[0] = '\0';
	for (uint32_t ch = 0; ch < channels; ch++)
		if (suppressor_differs(a, b, ch, why, len) || neural_differs(a, b, ch, why, len))
			return 1;
	return live_splits(a, b, channels, why, len);
}

int gf_config_suppress_live_differs(const struct gf_config *a, const struct gf_config *b, uint32_t channels)
{
	int changed = 0;
	for (uint32_t ch = 0; ch < channels; ch++) {
		const struct gf_config_filter *fa = suppressor_of(a, ch), *fb = suppressor_of(b, ch);
		if (fa && fb && fa->design.reduction_db != fb->design.reduction_db)
			changed |= GF_SUPPRESS_LIVE_DEPTH;
		if (fa && fb && fa->bypass != fb->bypass)
			changed |= GF_SUPPRESS_LIVE_BYPASS;
		int ka = gf_cfg_stage_index(a, ch, gf_cfg_is_neural),
		    kb = gf_cfg_stage_index(b, ch, gf_cfg_is_neural);
		if (ka < 0 || kb < 0)
			continue;
		if (a->filters[ka].design.atten_lim_db != b->filters[kb].design.atten_lim_db)
			changed |= GF_NEURAL_LIVE_ATTEN;
		if (a->filters[ka].bypass != b->filters[kb].bypass)
			changed |= GF_NEURAL_LIVE_BYPASS;
	}
	return changed;
}

void gf_config_suppress_floors(const struct gf_config *c, uint32_t channels,
			       const struct gf_suppress_live *over, float *out)
{
	for (uint32_t ch = 0; ch < channels; ch++) {
		const struct gf_config_filter *f = suppressor_of(c, ch);
		double db = f ? f->design.reduction_db : 0.0;
		int bypass = f ? f->bypass : 1;
		if (over && over->has_depth)
			db = over->depth_db;
		if (over && over->has_bypass)
			bypass = over->bypass;
		out[ch] = gf_suppress_floor_gain(db, bypass);
	}
}
