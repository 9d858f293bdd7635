/*
 * Configuration, building: the filters measured from files when the config
 * is built, not designed from numbers alone. design = "denoise" measures its
 * noise file (and, offline, the input: denoise.h); a notch with freq_hz =
 * "auto" finds the mains hum in the input (hum.h). Each says in the log what
 * it found, so a user can see why the filter is what it is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_build.h"
#include "denoise.h"
#include "hum.h"

/* design = "denoise": learned from its noise file, and the log says what it found. */
int gf_cfg_build_denoise(const struct gf_config *c, const struct gf_config_filter *f, uint32_t rate,
			 double **h, uint32_t *n, struct gf_errbuf *eb)
{
	struct gf_denoise_report rep;
	int r = gf_denoise_design(f->file, f->design.use_input ? c->program_file : NULL, (double)rate,
				  f->design.taps, f->design.reduction_db, h, n, &rep, eb);
	if (!r)
		gf_info("filters.%s: noise %s: %.2f s at %.1f dBFS RMS, %u Welch segments; gain from %s; the "
			"filter cuts up to %.1f dB (at %.0f Hz), %.0f%% of 20 Hz-%.0f Hz by 3 dB or more",
			f->name, f->file, rep.seconds, rep.rms_dbfs, rep.segments,
			rep.from_program ? "the input's spectrum (Wiener)"
					 : "the noise alone (its floor as the program prior)",
			rep.max_cut_db, rep.max_cut_hz, 100.0 * rep.cut_fraction, 0.45 * rate);
	return r;
}

/* One tap of 1.0: a notch that found nothing to notch. */
static int identity(double **out, uint32_t *n)
{
	if (!(*out = calloc(1, sizeof(double))))
		return GF_E_NOMEM;
	(*out)[0] = 1.0, *n = 1;
	return 0;
}

/* "1 (63 dB), 2 (29 dB)": the harmonics of @p h up to the filter's own into @p list; @return the
 * highest (0: none). */
static uint32_t harmonics_found(const struct gf_config_filter *f, const struct gf_hum *h, char *list,
				size_t size)
{
	size_t len = 0;
	uint32_t top = 0;
	list[0] = '\0';
	for (uint32_t i = 0; i < h->n && h->harmonic[i] <= f->design.harmonics; i++) {
		top = h->harmonic[i];
		if (len < size - 32)
			len += (size_t)snprintf(list + len, size - len, "%s%u (%.0f dB)", i ? ", " : "",
						h->harmonic[i], h->snr_db[i]);
	}
	return top;
}

/* The notches of @p h (found in @p where), harmonics up to the filter's own, and the log line. */
static int notch_found(const struct gf_config_filter *f, const struct gf_hum *h, const char *where,
		       uint32_t rate, double **out, uint32_t *n, struct gf_errbuf *eb)
{
	struct gf_design d = f->design;
	char list[1024];
	uint32_t top = harmonics_found(f, h, list, sizeof(list));
	if (!top)
		return identity(out, n);
	memset(d.keep, 0, sizeof(d.keep));
	for (uint32_t i = 0; i < h->n && h->harmonic[i] <= top; i++)
		d.keep[h->harmonic[i]] = 1;
	d.keep_set = 1;
	d.freq_hz[0] = h->f0_hz, d.n_freq = 1, d.harmonics = top;
	gf_info("filters.%s: mains hum found at %.3f Hz %s; notched harmonics (dB above the noise): %s",
		f->name, h->f0_hz, where, list);
	return gf_design_run(&d, (double)rate, out, n, eb);
}

/* freq_hz = "auto" with no file to measure: live, the hum the daemon found in the running input
 * (gf_config_source.hum); elsewhere (--check-config) nothing (*h zeroed, the log says so). */
static void hum_without_file(const struct gf_config *c, const struct gf_config_filter *f, struct gf_hum *h,
			     char *where, size_t len)
{
	int line = f->key_line[K_FREQ_HZ] ? f->key_line[K_FREQ_HZ] : f->line;
	if (c->hum_followed && c->live_hum.f0_hz > 0.0) {
		*h = c->live_hum;
		snprintf(where, len, "in the running input");
	} else if (c->hum_followed)
		gf_info("filters.%s: hum notches follow the mains hum found in the running input: none so "
			"far",
			f->name);
	else if (c->priv->builtin)
		/* Fixed 50 and 60 Hz combs cost clean speech dearly (docs/config.md): "auto"
		 * notches only hum it found, and here there is nothing to measure. */
		gf_info("filters.%s: hum notches are made only where hum is measured in an input file "
			"or, live, in the running input: none here",
			f->name);
	else
		gf_warn("%s:%d: filters.%s.freq_hz: \"auto\" is measured from the input file (offline "
			"mode) or the running input (live mode); without either nothing is notched",
			f->src, line, f->name);
}

/* The hum a notch with freq_hz = "auto" removes: measured in the input file, else as above; f0_hz
 * 0 where there is none, and the log says why. @p where: where it was found, for the log. */
static int find_hum(const struct gf_config *c, const struct gf_config_filter *f, uint32_t rate,
		    struct gf_hum *h, char *where, size_t len, struct gf_errbuf *eb)
{
	memset(h, 0, sizeof(*h));
	if (!c->program_file) {
		hum_without_file(c, f, h, where, len);
		return 0;
	}
	int r = gf_hum_detect(c->program_file, (double)rate, f->design.harmonics, h, eb);
	if (r && r != GF_E_NOMEM && c->priv->builtin) {
		/* The built-in default serves any input (a short one, a pipe): where
		 * the hum cannot be measured, it notches nothing rather than fail. */
		gf_info("filters.%s: %s: no hum notch", f->name, eb->msg);
		memset(h, 0, sizeof(*h));
		return 0;
	}
	if (r)
		return r;
	if (h->f0_hz == 0.0)
		gf_info("filters.%s: no mains hum (50 or 60 Hz) stands %.0f dB above the noise in the first "
			"%.1f s "
			"of %s: the notch passes the audio unchanged",
			f->name, GF_HUM_MIN_SNR_DB, h->seconds, c->program_file);
	else
		snprintf(where, len, "in the first %.1f s of %s", h->seconds, c->program_file);
	return 0;
}

/* A notch with freq_hz = "auto": the hum measured in the input file, and the log says what was found. */
int gf_cfg_build_hum(const struct gf_config *c, const struct gf_config_filter *f, uint32_t rate, double **out,
		     uint32_t *n, struct gf_errbuf *eb)
{
	struct gf_hum h;
	char where[600];
	int r = find_hum(c, f, rate, &h, where, sizeof(where), eb);
	if (r)
		return r;
	return h.f0_hz == 0.0 ? identity(out, n) : notch_found(f, &h, where, rate, out, n, eb);
}

int gf_cfg_hum_for_suppressor(const struct gf_config *c, const struct gf_config_filter *f, const char *sup,
			      uint32_t rate, struct gf_hum *h, struct gf_errbuf *eb)
{
	char where[600], list[1024];
	int r = find_hum(c, f, rate, h, where, sizeof(where), eb);
	if (r || h->f0_hz == 0.0 || !harmonics_found(f, h, list, sizeof(list)))
		return r;
	gf_info("filters.%s: mains hum found at %.3f Hz %s; removed in the frames of the suppressor %s (zero "
		"phase, no latency), harmonics (dB above the noise): %s",
		f->name, h->f0_hz, where, sup, list);
	return 0;
}
