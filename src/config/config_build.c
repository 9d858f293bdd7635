/*
 * Configuration, building: struct gf_config -> struct gf_filter_set at a
 * sample rate. Designs and reads every filter a chain or route uses
 * (parametric EQ's FIR here too), pre-convolves each channel's chain into
 * one FIR (in double), applies the route's gain, delay and polarity, and
 * pads all channels to one length; a mixer gets one FIR per path.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_build.h"
#include "fir_fft.h"
#include "memlimit.h"
#include "minphase.h"

/* Symmetric or antisymmetric taps: a linear-phase filter, (n - 1) / 2 samples late. */
static int is_linear_phase(const double *h, uint32_t n)
{
	double peak = 0.0;
	for (uint32_t i = 0; i < n; i++)
		peak = fmax(peak, fabs(h[i]));
	double tol = 1e-9 * peak;
	int sym = 1, anti = 1;
	for (uint32_t i = 0; i < n / 2 && (sym || anti); i++) {
		sym = sym && fabs(h[i] - h[n - 1 - i]) <= tol;
		anti = anti && fabs(h[i] + h[n - 1 - i]) <= tol;
	}
	return sym || (anti && (n % 2 == 0 || fabs(h[n / 2]) <= tol));
}

static double linear_delay(const struct gf_config_filter *f, const struct gf_cfg_taps *t)
{
	if (f->kind == FK_DESIGN)
		return f->design.type == GF_DESIGN_DELAY || f->design.type == GF_DESIGN_IDENTITY
			       ? 0.0
			       : (t->n - 1) / 2.0;
	return is_linear_phase(t->h, t->n) ? (t->n - 1) / 2.0 : 0.0;
}

/* "FILE:LINE: filters.NAME.phase" (one filter, @p f) or "FILE:LINE: phase" (the chain). */
static void phase_place(const struct gf_config *c, const struct gf_config_filter *f, char *buf, size_t len)
{
	const char *src = f ? f->src : c->priv->src;
	int line = f ? (f->key_line[K_PHASE] ? f->key_line[K_PHASE] : f->line) : c->priv->phase_line;
	if (f)
		snprintf(buf, len, "%s:%d: filters.%s.phase", src, line, f->name);
	else
		snprintf(buf, len, "%s:%d: phase", src, line);
}

/* phase = "minimum" on one filter (@p f) or on a whole chain (@p f NULL). */
static int make_min_phase(const struct gf_config *c, const struct gf_config_filter *f, struct gf_cfg_taps *t,
			  struct gf_errbuf *eb)
{
	struct gf_errbuf why = {{0}};
	int r = gf_minphase(t->h, t->n, &why);
	if (r == GF_E_INVAL) /* all zeros: already as short as it gets */
		r = 0;
	t->lin_delay = 0.0;
	if (!r)
		return 0;
	char place[320];
	phase_place(c, f, place, sizeof(place));
	if (r == GF_E_TOOLONG) {
		gf_errbuf_set(eb, "%s: minimum phase is limited to %u taps (the filter has %u)", place,
			      GF_MINPHASE_MAX_TAPS, t->n);
		return GF_E_CONFIG;
	}
	gf_errbuf_set(eb, "%s: %s", place, why.msg[0] ? why.msg : gf_strerror(r));
	return r;
}

/*
 * Prefix a module's message with the filter's place. Designs say "KEY: why"
 * (the line of KEY is used); file readers say "PATH...: why" (the file line).
 * Unreadable or corrupt filter files are configuration errors (exit code 6).
 */
static int filter_error(const struct gf_config_filter *f, int err, int from_design, struct gf_errbuf *eb)
{
	char msg[sizeof(eb->msg)];
	snprintf(msg, sizeof(msg), "%s", eb ? eb->msg : gf_strerror(err));
	int line = f->line;
	if (from_design) {
		for (int k = 0; k < K_COUNT; k++) {
			size_t len = strlen(gf_config_fkey_names[k]);
			if (strncmp(msg, gf_config_fkey_names[k], len) == 0 && msg[len] == ':') {
				line = f->key_line[k] ? f->key_line[k] : f->line;
				break;
			}
		}
		gf_errbuf_set(eb, "%s:%d: filters.%s.%s", f->src, line, f->name, msg);
	} else {
		line = f->key_line[K_FILE] ? f->key_line[K_FILE] : f->line;
		gf_errbuf_set(eb, "%s:%d: filters.%s.file: %s", f->src, line, f->name, msg);
	}
	return err == GF_E_IO || err == GF_E_FORMAT ? GF_E_CONFIG : err;
}

/* A filter alone longer than max_taps fails before it is designed or read further. */
static int check_max_taps(const struct gf_config *c, const struct gf_config_filter *f, uint32_t n,
			  struct gf_errbuf *eb)
{
	if (!c->max_taps || n <= c->max_taps)
		return 0;
	gf_errbuf_set(eb, "%s:%d: filters.%s: %u taps, more than max_taps = %u (line %d)", f->src, f->line,
		      f->name, n, c->max_taps, c->priv->max_taps_line);
	return GF_E_TOOLONG;
}

/*
 * The built-in default serves any file, but its hiss low-pass (14 kHz) is
 * meaningless at or near Nyquist (8, 16, 22.05, 24 kHz files): there it is left
 * out, with an info line. In a user's configuration the same filter is an
 * error that names the setting.
 */
static int default_leaves_out(const struct gf_config *c, const struct gf_config_filter *f, uint32_t rate)
{
	return c->priv->builtin && f->kind == FK_DESIGN && f->design.type == GF_DESIGN_LOWPASS &&
	       f->design.cutoff_hz >= 0.45 * rate;
}

/*
 * A sound file's IR at @p rate. One at another rate is an error that says how
 * to convert it, unless the filter asks for it to be resampled (resample =
 * true): never silently, since resampling cannot restore what lies above the
 * lower rate's Nyquist frequency.
 */
static int read_sound_file(const struct gf_config_filter *f, const char *path, uint32_t rate,
			   const struct gf_ir_select *sel, struct gf_cfg_taps *t, struct gf_errbuf *eb)
{
	uint32_t file_rate = 0;
	int r = gf_taps_read_wav(path, f->resample ? 0 : rate, sel, &t->h, &t->n, &file_rate, eb);
	if (r == GF_E_RATE && eb) {
		size_t len = strlen(eb->msg);
		snprintf(eb->msg + len, sizeof(eb->msg) - len,
			 ", or let gpufir resample it: resample = true;");
		return r;
	}
	if (r || file_rate == rate)
		return r;
	double *h, delay;
	uint32_t n;
	if ((r = gf_taps_resample(t->h, t->n, file_rate, rate, &h, &n, &delay, eb)))
		return r;
	gf_info("filters.%s: resampled IR %s from %u to %u Hz, %u -> %u taps, delayed by %.4g taps (%.3f ms) "
		"to keep the resampler's ringing before frame 0",
		f->name, path, file_rate, rate, t->n, n, delay, 1e3 * delay / rate);
	free(t->h);
	t->h = h;
	t->n = n;
	return 0;
}

/* A file filter: the file for @p rate (per-rate list or $samplerate$), said when the rate chose it. */
static int read_file(const struct gf_config_filter *f, uint32_t rate, const struct gf_ir_select *sel,
		     struct gf_cfg_taps *t, struct gf_errbuf *eb)
{
	char *path = NULL;
	int chosen, r = gf_cfg_filter_file(f, rate, &path, &chosen, eb);
	if (r)
		return r;
	if (chosen)
		gf_info("filters.%s: %s for %u Hz", f->name, path, rate);
	if (f->kind == FK_TEXT)
		r = gf_taps_read_text(path, &t->h, &t->n, eb);
	else if (f->kind == FK_WAV)
		r = read_sound_file(f, path, rate, sel, t, eb);
	else
		r = gf_taps_read_raw(path, f->raw, sel, &t->h, &t->n, eb);
	free(path);
	return r;
}

/* @p ch: the audio channel, for a sound file's channel = "route". */
static int build_filter(const struct gf_config *c, const struct gf_config_filter *f, uint32_t rate,
			uint32_t ch, struct gf_cfg_taps *t, struct gf_errbuf *eb)
{
	int r = 0;
	struct gf_ir_select sel = f->sel;
	if (f->channel_is_route)
		sel.channel = ch;
	if (default_leaves_out(c, f, rate)) {
		gf_info("built-in default: the %s low-pass at %g Hz is left out at %u Hz (at or above 0.45 x "
			"the sample rate)",
			f->name, f->design.cutoff_hz, rate);
		if (!(t->h = calloc(1, sizeof(double))))
			return GF_E_NOMEM;
		t->h[0] = 1.0;
		t->n = 1;
		return 0;
	}
	/* not FIRs: one tap of 1.0 in the chain; the stage runs after it (a suppressor takes the hum) */
	if (gf_cfg_is_stage(f) || gf_cfg_hum_in_suppressor(c, f)) {
		if (!(t->h = calloc(1, sizeof(double))))
			return GF_E_NOMEM;
		t->h[0] = 1.0;
		t->n = 1;
		return 0;
	}
	if (f->kind == FK_DESIGN && (r = check_max_taps(c, f, gf_design_taps(&f->design, rate), eb)))
		return r;
	switch (f->kind) {
	case FK_INLINE:
		if (!(t->h = malloc(f->n_coeffs * sizeof(double))))
			return GF_E_NOMEM;
		memcpy(t->h, f->coeffs, f->n_coeffs * sizeof(double));
		t->n = f->n_coeffs;
		break;
	case FK_TEXT:
	case FK_WAV:
	case FK_RAW:
		if ((r = read_file(f, rate, &sel, t, eb)))
			return filter_error(f, r, 0, eb);
		break;
	case FK_DESIGN:
		if (f->design.type == GF_DESIGN_PEQ) {
			if ((r = gf_cfg_build_peq(f, rate, &t->h, &t->n, eb)))
				return r; /* placed at the band's line */
			break;
		}
		if (f->design.type == GF_DESIGN_DENOISE)
			r = gf_cfg_build_denoise(c, f, rate, &t->h, &t->n, eb);
		else if (f->design.freq_auto)
			r = gf_cfg_build_hum(c, f, rate, &t->h, &t->n, eb);
		else
			r = gf_design_run(&f->design, (double)rate, &t->h, &t->n, eb);
		if (r)
			return filter_error(f, r, 1, eb);
		break;
	}
	if (f->gain_db != 0.0) {
		double g = pow(10.0, f->gain_db / 20.0);
		for (uint32_t i = 0; i < t->n; i++)
			t->h[i] *= g;
	}
	t->lin_delay = linear_delay(f, t);
	return f->minphase ? make_min_phase(c, f, t, eb) : 0;
}

/* Full linear convolution in double: lengths add (na + nb - 1). */
/* Direct convolution below this many taps in the shorter FIR (exact sums,
 * and faster than planning an FFT); FFT above. */
#define DIRECT_MAX_TAPS 64

static int convolve(struct gf_cfg_taps *acc, const struct gf_cfg_taps *b, struct gf_errbuf *eb)
{
	uint64_t n = (uint64_t)acc->n + b->n - 1;
	if (n > GF_DESIGN_MAX_TAPS)
		return GF_E_TOOLONG;
	double *y = calloc((size_t)n, sizeof(double));
	if (!y)
		return GF_E_NOMEM;
	/* loop over the shorter one outside: fewer, longer inner loops */
	const struct gf_cfg_taps *s = acc->n <= b->n ? acc : b, *l = acc->n <= b->n ? b : acc;
	if (s->n > DIRECT_MAX_TAPS) { /* O(n log n): long designs in a chain */
		int r = gf_fir_convolve_fft(acc->h, acc->n, b->h, b->n, y, eb);
		if (r) {
			free(y);
			return r;
		}
		s = NULL;
	}
	for (uint32_t i = 0; s && i < s->n; i++) {
		double x = s->h[i];
		if (x == 0.0)
			continue;
		double *yi = y + i;
		for (uint32_t k = 0; k < l->n; k++)
			yi[k] += x * l->h[k];
	}
	free(acc->h);
	acc->h = y;
	acc->n = (uint32_t)n;
	return 0;
}

/* A chain that could not be pre-convolved: too long, or no memory for its FFTs (@p why). */
static int chain_error(const struct gf_config *c, const struct gf_config_route *rt, int r,
		       const struct gf_errbuf *why, struct gf_errbuf *eb)
{
	char name[48] = "chain";
	if (rt)
		snprintf(name, sizeof(name), "%s.chain", rt->name);
	const char *src = rt ? rt->src : c->priv->src;
	int line = rt ? rt->chain_line : c->priv->chain_line;
	if (r == GF_E_TOOLONG) {
		gf_errbuf_set(eb, "%s:%d: %s: the filters add up to more than %u taps", src, line, name,
			      GF_DESIGN_MAX_TAPS);
		return GF_E_CONFIG;
	}
	gf_errbuf_set(eb, "%s:%d: %s: %s", src, line, name, why->msg[0] ? why->msg : gf_strerror(r));
	return r;
}

int gf_cfg_chain_fir(const struct gf_config *c, struct gf_cfg_taps *built, char *const *chain,
		     uint32_t n_chain, const struct gf_config_route *rt, uint32_t rate,
		     struct gf_cfg_taps *out, struct gf_errbuf *eb)
{
	out->h = calloc(1, sizeof(double));
	if (!out->h)
		return GF_E_NOMEM;
	out->h[0] = 1.0;
	out->n = 1;
	out->lin_delay = 0.0;
	for (uint32_t i = 0; i < n_chain; i++) {
		int k = gf_config_find_filter(c, chain[i]);
		uint64_t len = (uint64_t)out->n + built[k].n - 1;
		if (c->max_taps && len > c->max_taps) { /* fail before convolving further */
			gf_errbuf_set(
				eb, "%s:%d: max_taps: the chain reaches %llu taps, more than max_taps = %u",
				c->priv->src, c->priv->max_taps_line, (unsigned long long)len, c->max_taps);
			return GF_E_TOOLONG;
		}
		struct gf_errbuf why = {{0}};
		int r = convolve(out, &built[k], &why);
		if (r)
			return chain_error(c, rt, r, &why, eb);
		out->lin_delay += built[k].lin_delay;
	}
	/* the whole chain, before the route's delay: that delay is wanted */
	if (gf_config_min_phase(c) && out->n > 1) {
		int r = make_min_phase(c, NULL, out, eb);
		if (r)
			return r;
	}
	if (!rt)
		return 0;
	double g = pow(10.0, rt->gain_db / 20.0) * (rt->invert ? -1.0 : 1.0);
	uint64_t d = (uint64_t)llround(rt->delay_ms * rate / 1000.0);
	if (d + out->n > GF_DESIGN_MAX_TAPS) {
		gf_errbuf_set(eb, "%s:%d: %s.delay_ms: delay plus filter exceed %u taps", rt->src, rt->line,
			      rt->name, GF_DESIGN_MAX_TAPS);
		return GF_E_CONFIG;
	}
	double *h = calloc((size_t)(d + out->n), sizeof(double));
	if (!h)
		return GF_E_NOMEM;
	for (uint32_t i = 0; i < out->n; i++)
		h[d + i] = g * out->h[i];
	free(out->h);
	out->h = h;
	out->n += (uint32_t)d;
	return 0;
}

static const struct gf_config_route *route_of(const struct gf_config *c, uint32_t ch)
{
	for (uint32_t i = 0; i < c->n_routes; i++)
		if (c->routes[i].channel == ch)
			return &c->routes[i];
	return NULL;
}

/*
 * Memory a build and the engine it feeds need, before allocating any of it:
 * 1024 channels x 16M taps was OOM-killed in a 4 GiB cgroup. Per tap and
 * channel: the build's double FIR (8 bytes) and the float filter set (4),
 * and the CPU engine's partition spectra, measured at 24-26 bytes (offline,
 * 2 and 8 channels x 1M and 4M taps, peak RSS): ENGINE_BYTES_PER_TAP 28.
 * A live crossfade holds a second filter for a moment, and CUDA's buffers
 * are device memory: this is the host floor, refused only when even that
 * does not fit (docs/config.md, "Limits").
 */
#define BUILD_BYTES_PER_TAP 12u
#define ENGINE_BYTES_PER_TAP 28u

uint64_t gf_cfg_chain_len(const struct gf_config *c, const struct gf_cfg_taps *built, char *const *chain,
			  uint32_t n, const struct gf_config_route *rt, uint32_t rate)
{
	uint64_t len = 1;
	for (uint32_t i = 0; i < n; i++)
		len += built[gf_config_find_filter(c, chain[i])].n - 1;
	if (rt)
		len += (uint64_t)llround(rt->delay_ms * rate / 1000.0);
	return len;
}

static int check_memory(const struct gf_config *c, const struct gf_cfg_taps *built, uint32_t channels,
			uint32_t rate, struct gf_errbuf *eb)
{
	uint64_t tap_channels = 0;
	for (uint32_t ch = 0; ch < channels; ch++) {
		const struct gf_config_route *rt = route_of(c, ch);
		tap_channels += rt && rt->has_chain
					? gf_cfg_chain_len(c, built, rt->chain, rt->n_chain, rt, rate)
					: gf_cfg_chain_len(c, built, c->chain, c->n_chain, rt, rate);
	}
	return gf_cfg_check_memory_taps(c, tap_channels, channels, eb);
}

int gf_cfg_check_memory_taps(const struct gf_config *c, uint64_t tap_channels, uint32_t channels,
			     struct gf_errbuf *eb)
{
	uint64_t need = tap_channels * (BUILD_BYTES_PER_TAP + ENGINE_BYTES_PER_TAP);
	/* Under mlockall(MCL_FUTURE) (a live daemon that locked its memory) every byte is locked. */
	int locked = gf_mem_all_locked();
	uint64_t have = locked ? gf_mem_lock_available() : gf_mem_available();
	if (need <= have)
		return 0;
	char sn[32], sh[32];
	gf_mem_text(need, sn, sizeof(sn));
	gf_mem_text(have, sh, sizeof(sh));
	gf_errbuf_set(eb,
		      "%s: %u channels with these filters need about %s of %smemory (%llu taps over all "
		      "channels), more than the %s available to this process%s: shorten the filters "
		      "(max_taps) or filter fewer channels",
		      c->priv->src, channels, sn, locked ? "locked " : "", (unsigned long long)tap_channels,
		      sh, locked ? " (RLIMIT_MEMLOCK less what is locked, and free memory)" : "");
	return GF_E_NOMEM;
}

static int check_build_args(const struct gf_config *c, uint32_t rate, uint32_t channels, struct gf_errbuf *eb)
{
	if (rate < GF_RATE_MIN || rate > GF_RATE_MAX) {
		gf_errbuf_set(eb, "%s: sample rate %u Hz is outside %u..%u", c->priv->src, rate, GF_RATE_MIN,
			      GF_RATE_MAX);
		return GF_E_RATE;
	}
	if (channels < 1 || channels > MAX_CHANNELS) {
		gf_errbuf_set(eb, "%s: %u channels: must be 1..%d", c->priv->src, channels, MAX_CHANNELS);
		return GF_E_INVAL;
	}
	for (uint32_t i = 0; i < c->n_routes; i++) {
		const struct gf_config_route *rt = &c->routes[i];
		if (rt->channel >= channels) {
			gf_errbuf_set(eb,
				      "%s:%d: routes[%u].channel: channel %u, but the audio has %u channel%s "
				      "(0..%u)",
				      rt->src, rt->channel_line, i, rt->channel, channels,
				      channels == 1 ? "" : "s", channels - 1);
			return GF_E_CONFIG;
		}
	}
	return 0;
}

/* Pad every channel's FIR to the longest and convert to float. */
int gf_cfg_to_filter_set(const struct gf_config *c, struct gf_cfg_taps *fir, uint32_t channels,
			 const struct gf_config_mixer *mixer, struct gf_filter_set **out,
			 struct gf_errbuf *eb)
{
	uint32_t taps = 1;
	for (uint32_t ch = 0; ch < channels; ch++)
		taps = fir[ch].n > taps ? fir[ch].n : taps;
	if (c->max_taps && taps > c->max_taps) {
		gf_errbuf_set(eb, "%s:%d: max_taps: the filter has %u taps, more than max_taps = %u",
			      c->priv->src, c->priv->max_taps_line, taps, c->max_taps);
		return GF_E_TOOLONG;
	}
	int r = mixer ? gf_filter_set_new_mixer(out, mixer->inputs, mixer->outputs, channels, taps)
		      : gf_filter_set_new(out, channels, taps);
	if (r)
		return r;
	for (uint32_t p = 0; mixer && p < channels; p++) {
		(*out)->path_in[p] = mixer->paths[p].channel;
		(*out)->path_out[p] = mixer->paths[p].out;
	}
	for (uint32_t ch = 0; ch < channels; ch++) {
		float *dst = gf_filter_set_channel(*out, ch);
		for (uint32_t i = 0; i < fir[ch].n; i++)
			dst[i] = (float)fir[ch].h[i];
	}
	if (gf_filter_set_check_finite(*out)) {
		gf_errbuf_set(eb, "%s: the filter overflows single precision (check gain_db)", c->priv->src);
		gf_filter_set_free(*out);
		*out = NULL;
		return GF_E_NONFINITE;
	}
	return 0;
}

/*
 * Build every used filter for audio channel @p ch (@p only_per_channel: just
 * those with channel = "route", rebuilt for each channel). *per_channel
 * (may be NULL) is set when there are such filters.
 */
int gf_cfg_build_filters(const struct gf_config *c, uint32_t rate, uint32_t ch, int only_per_channel,
			 struct gf_cfg_taps *built, int *per_channel, struct gf_errbuf *eb)
{
	for (uint32_t i = 0; i < c->n_filters; i++) {
		const struct gf_config_filter *f = &c->filters[i];
		if (!f->used || (only_per_channel && !f->channel_is_route))
			continue;
		if (per_channel && f->channel_is_route)
			*per_channel = 1;
		free(built[i].h);
		built[i].h = NULL;
		int r = build_filter(c, f, rate, ch, &built[i], eb);
		if (!r)
			r = check_max_taps(c, f, built[i].n, eb);
		if (r)
			return r;
	}
	return 0;
}

int gf_config_build(const struct gf_config *c, uint32_t sample_rate, uint32_t channels,
		    struct gf_filter_set **out, struct gf_errbuf *eb)
{
	return gf_config_build_ex(c, sample_rate, channels, out, NULL, eb);
}

/* The linear-phase delay all channels share, in whole samples. */
static uint32_t align_frames(const struct gf_cfg_taps *fir, uint32_t channels)
{
	double d = INFINITY;
	for (uint32_t ch = 0; ch < channels; ch++)
		d = fmin(d, fir[ch].lin_delay);
	return (uint32_t)floor(d + 1e-9);
}

int gf_config_build_ex(const struct gf_config *c, uint32_t sample_rate, uint32_t channels,
		       struct gf_filter_set **out, struct gf_config_build_info *info, struct gf_errbuf *eb)
{
	*out = NULL;
	if (!c)
		return GF_E_INVAL;
	uint32_t rate = sample_rate ? sample_rate : c->sample_rate;
	int r = check_build_args(c, rate, channels, eb);
	if (r)
		return r;
	if (c->mixer) {
		uint32_t align = 0;
		r = gf_cfg_build_mixer(c, rate, channels, out, &align, eb);
		if (!r && info)
			info->align_frames = align;
		return r;
	}
	struct gf_cfg_taps *built = calloc(c->n_filters, sizeof(*built));
	struct gf_cfg_taps *fir = calloc(channels, sizeof(*fir));
	struct gf_cfg_taps global = {0};
	r = GF_E_NOMEM;
	if (!built || !fir)
		goto out;
	int per_channel = 0;
	if ((r = gf_cfg_build_filters(c, rate, 0, 0, built, &per_channel, eb)) ||
	    (r = check_memory(c, built, channels, rate, eb)) ||
	    (r = gf_cfg_chain_fir(c, built, c->chain, c->n_chain, NULL, rate, &global, eb)))
		goto out;
	for (uint32_t ch = 0; ch < channels; ch++) {
		const struct gf_config_route *rt = route_of(c, ch);
		if (per_channel && ch > 0 && (r = gf_cfg_build_filters(c, rate, ch, 1, built, NULL, eb)))
			goto out;
		if (rt)
			r = gf_cfg_chain_fir(c, built, rt->has_chain ? rt->chain : c->chain,
					     rt->has_chain ? rt->n_chain : c->n_chain, rt, rate, &fir[ch],
					     eb);
		else if (per_channel)
			r = gf_cfg_chain_fir(c, built, c->chain, c->n_chain, NULL, rate, &fir[ch], eb);
		else if ((fir[ch].h = malloc(global.n * sizeof(double))))
			memcpy(fir[ch].h, global.h, global.n * sizeof(double)),
				fir[ch].n = global.n, fir[ch].lin_delay = global.lin_delay, r = 0;
		else
			r = GF_E_NOMEM;
		if (r)
			goto out;
	}
	r = gf_cfg_to_filter_set(c, fir, channels, NULL, out, eb);
	if (!r && info)
		info->align_frames = align_frames(fir, channels);
out:
	for (uint32_t i = 0; built && i < c->n_filters; i++)
		free(built[i].h);
	for (uint32_t ch = 0; fir && ch < channels; ch++)
		free(fir[ch].h);
	free(built);
	free(fir);
	free(global.h);
	return r;
}

/* ---- parametric EQ: its FIR at the rate ---------------------------------- */

/* "FILE:LINE: filters.NAME.bands[i].KEY: why", or the EQ file's line under filters.NAME.file. */
static int peq_error(const struct gf_config_filter *f, const struct gf_peq_report *rep, int r,
		     const char *msg, struct gf_errbuf *eb)
{
	int file_line = f->key_line[K_FILE] ? f->key_line[K_FILE] : f->line;
	if (rep->band >= 0) {
		const struct gf_peq_band *b = &f->peq->bands[rep->band];
		int whole = strncmp(msg, "bands: ", 7) == 0; /* the band as a whole, not one KEY */
		if (whole)
			msg += 7;
		int fc = strncmp(msg, "freq_hz:", 8) == 0; /* the file's own name for it */
		if (f->file)
			gf_errbuf_set(eb, "%s:%d: filters.%s.file: %s:%d: %s%s", f->src, file_line, f->name,
				      f->file, b->line, fc ? "Fc:" : "", fc ? msg + 8 : msg);
		else
			gf_errbuf_set(eb, "%s:%d: filters.%s.bands[%d]%s%s", f->src, b->line, f->name,
				      rep->band, whole ? ": " : ".", msg);
	} else {
		int line =
			f->key_line[K_TAPS] && strncmp(msg, "taps:", 5) == 0 ? f->key_line[K_TAPS] : f->line;
		gf_errbuf_set(eb, "%s:%d: filters.%s.%s", f->src, line, f->name, msg);
	}
	return r;
}

int gf_cfg_build_peq(const struct gf_config_filter *f, uint32_t rate, double **h, uint32_t *n,
		     struct gf_errbuf *eb)
{
	struct gf_peq_report rep;
	struct gf_errbuf why = {{0}};
	int r = gf_peq_design(f->peq, (double)rate, f->design.taps, h, n, &rep, &why);
	if (r)
		return peq_error(f, &rep, r, why.msg, eb);
	if (rep.max_err_db > GF_PEQ_MAX_ERR_DB)
		gf_warn("%s:%d: filters.%s.taps: with %u taps at %u Hz the FIR is within %.3f dB of the "
			"bands' "
			"response, not %g dB: leave taps out for a length that is",
			f->src, f->key_line[K_TAPS] ? f->key_line[K_TAPS] : f->line, f->name, *n, rate,
			rep.max_err_db, GF_PEQ_MAX_ERR_DB);
	else
		gf_info("filters.%s: %u bands, %u taps at %u Hz, within %.4f dB of the bands' exact response",
			f->name, f->peq->n, *n, rate, rep.max_err_db);
	return 0;
}

/* ---- a mixer: one FIR per path ---------------------------------------------- */

static char *const *path_chain(const struct gf_config *c, const struct gf_config_route *p, uint32_t *n)
{
	*n = p->has_chain ? p->n_chain : c->n_chain;
	return p->has_chain ? p->chain : c->chain;
}

static int build_paths(const struct gf_config *c, uint32_t rate, struct gf_cfg_taps *built, int per_channel,
		       struct gf_cfg_taps *fir, struct gf_errbuf *eb)
{
	const struct gf_config_mixer *m = c->mixer;
	uint32_t have = 0; /* the input the per-channel filters were built for */
	for (uint32_t i = 0; i < m->n_paths; i++) {
		const struct gf_config_route *p = &m->paths[i];
		uint32_t n;
		char *const *chain = path_chain(c, p, &n);
		int r = 0;
		if (per_channel && p->channel != have) { /* channel = "route": the path's input */
			r = gf_cfg_build_filters(c, rate, p->channel, 1, built, NULL, eb);
			have = p->channel;
		}
		if (r || (r = gf_cfg_chain_fir(c, built, chain, n, p, rate, &fir[i], eb)))
			return r;
	}
	return 0;
}

int gf_cfg_build_mixer(const struct gf_config *c, uint32_t rate, uint32_t channels,
		       struct gf_filter_set **out, uint32_t *align, struct gf_errbuf *eb)
{
	const struct gf_config_mixer *m = c->mixer;
	if (channels != m->inputs) {
		gf_errbuf_set(eb, "%s:%d: mixer.inputs: the mixer reads %u channel%s, the audio has %u",
			      c->priv->src, m->line, m->inputs, m->inputs == 1 ? "" : "s", channels);
		return GF_E_CONFIG;
	}
	struct gf_cfg_taps *built = calloc(c->n_filters ? c->n_filters : 1, sizeof(*built));
	struct gf_cfg_taps *fir = calloc(m->n_paths, sizeof(*fir));
	int r = GF_E_NOMEM, per_channel = 0;
	if (!built || !fir)
		goto out;
	if ((r = gf_cfg_build_filters(c, rate, 0, 0, built, &per_channel, eb)))
		goto out;
	uint64_t taps = 0;
	for (uint32_t i = 0; i < m->n_paths; i++) {
		uint32_t n;
		char *const *chain = path_chain(c, &m->paths[i], &n);
		taps += gf_cfg_chain_len(c, built, chain, n, &m->paths[i], rate);
	}
	if ((r = gf_cfg_check_memory_taps(c, taps, m->n_paths, eb)) ||
	    (r = build_paths(c, rate, built, per_channel, fir, eb)) ||
	    (r = gf_cfg_to_filter_set(c, fir, m->n_paths, m, out, eb)))
		goto out;
	double d = INFINITY; /* the linear-phase delay every path shares */
	for (uint32_t i = 0; i < m->n_paths; i++)
		d = fmin(d, fir[i].lin_delay);
	*align = (uint32_t)floor(d + 1e-9);
out:
	for (uint32_t i = 0; built && i < c->n_filters; i++)
		free(built[i].h);
	for (uint32_t i = 0; fir && i < m->n_paths; i++)
		free(fir[i].h);
	free(built);
	free(fir);
	return r;
}
