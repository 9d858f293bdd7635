/**
 * @file peq.h
 * Parametric EQ as an FIR: a cascade of RBJ Audio EQ Cookbook biquads
 * (peaking, shelves, low/high/band-pass, notch, all-pass) and a preamp,
 * designed as a linear-phase FIR with the cascade's exact magnitude; and the
 * Equalizer APO / AutoEQ / REW filter text that lists such bands.
 *
 * Design: the unit-circle zeros of the low/high/band-pass and notch bands
 * are exact short FIR factors; the rest of the magnitude, smooth and above
 * zero, is sampled on a dense grid, inverse-transformed (zero phase),
 * windowed and verified on a grid twice as dense: the taps double until it
 * is within GF_PEQ_MAX_ERR_DB of the exact response at every grid point.
 *
 * Control thread only (allocates). Errors go to the caller's gf_errbuf as
 * "KEY: why"; the band at fault is reported by index.
 */
#ifndef GPUFIR_PEQ_H
#define GPUFIR_PEQ_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum gf_peq_type {
	GF_PEQ_PEAKING = 0,
	GF_PEQ_LOWSHELF,
	GF_PEQ_HIGHSHELF,
	GF_PEQ_LOWPASS,
	GF_PEQ_HIGHPASS,
	GF_PEQ_BANDPASS, /**< 0 dB peak gain */
	GF_PEQ_NOTCH,
	GF_PEQ_ALLPASS, /**< magnitude 1: no effect on a magnitude-designed FIR */
};

#define GF_PEQ_MAX_BANDS 256
/** Design bound: |20 log10(|H_fir| / |H_exact|)| at every point of the check grid. */
#define GF_PEQ_MAX_ERR_DB 0.05
/** Longest derived design: the minimum-phase limit (minphase.h), odd. */
#define GF_PEQ_MAX_TAPS ((1u << 20) - 1u)
#define GF_PEQ_GAIN_DB_MIN -60.0
#define GF_PEQ_GAIN_DB_MAX 30.0
#define GF_PEQ_Q_MAX 100.0
#define GF_PEQ_BW_OCT_MAX 10.0
/** Q of a shelf or low/high-pass given without Q or slope (Butterworth; shelf slope 1). */
#define GF_PEQ_DEFAULT_Q 0.70710678118654752

/** One band. Zero means "not given" for q, bw_oct and slope. */
struct gf_peq_band {
	enum gf_peq_type type;
	double freq_hz;
	double gain_db; /**< peaking and shelves */
	double q;
	double bw_oct; /**< peaking, band-pass, notch, all-pass: bandwidth in octaves instead of q */
	double slope;  /**< shelves: RBJ shelf slope S instead of q, 0 < S <= 1 */
	int has_gain;
	int line; /**< where it was given (config or text file), for messages */
};

struct gf_peq {
	struct gf_peq_band *bands;
	uint32_t n, cap;
	double preamp_db;
};

/** "peaking", "lowshelf", ... @return 0 or GF_E_INVAL */
int gf_peq_parse_type(const char *s, enum gf_peq_type *out);
const char *gf_peq_type_name(enum gf_peq_type t);

/**
 * Check a band's parameters and required settings (not yet the sample rate)
 * and fill defaults (q of shelves, low- and high-pass).
 * @return 0 or GF_E_CONFIG with "KEY: why" (KEY: freq_hz, gain_db, q, bandwidth_oct, slope)
 */
int gf_peq_band_finish(struct gf_peq_band *b, struct gf_errbuf *eb);
/** Append a copy of @p b. @return 0, GF_E_CONFIG (more than GF_PEQ_MAX_BANDS) or GF_E_NOMEM */
int gf_peq_add(struct gf_peq *p, const struct gf_peq_band *b, struct gf_errbuf *eb);
void gf_peq_free(struct gf_peq *p);

/** Normalised biquad (a0 = 1). */
struct gf_biquad {
	double b0, b1, b2, a1, a2;
};
/** The RBJ cookbook coefficients of @p b at @p rate. @return 0 or GF_E_CONFIG ("freq_hz: ...") */
int gf_peq_biquad(const struct gf_peq_band *b, double rate, struct gf_biquad *out, struct gf_errbuf *eb);
/** Exact magnitude of the cascade (preamp included) at @p freq_hz; bands must be valid at @p rate. */
double gf_peq_response(const struct gf_peq *p, double freq_hz, double rate);

struct gf_peq_report {
	uint32_t taps;
	double max_err_db; /**< measured on the check grid */
	int band;	   /**< on error: the band at fault, or -1 */
};

/**
 * Design the FIR at @p rate: @p taps (odd) when not 0, else derived within
 * GF_PEQ_MAX_ERR_DB. On success *h is a malloc'ed array of *n doubles.
 * @return 0, GF_E_CONFIG ("KEY: why", rep->band), or GF_E_NOMEM
 */
int gf_peq_design(const struct gf_peq *p, double rate, uint32_t taps, double **h, uint32_t *n,
		  struct gf_peq_report *rep, struct gf_errbuf *eb);
/** The first length gf_peq_design tries (the derived one may be longer); 0 if a band is invalid. */
uint32_t gf_peq_taps_estimate(const struct gf_peq *p, double rate, uint32_t taps);

/**
 * Parse Equalizer APO / AutoEQ ParametricEQ.txt or REW filter-settings text
 * (peq_text.c) into @p p (appended; preamps add). @p name is used in
 * messages: "NAME:LINE: why".
 * @return 0, GF_E_FORMAT (a line it does not understand) or GF_E_NOMEM
 */
int gf_peq_parse_text(const char *text, size_t len, const char *name, struct gf_peq *p, struct gf_errbuf *eb);

#endif
