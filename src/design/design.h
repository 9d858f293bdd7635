/**
 * @file design.h
 * Linear-phase FIR design: Kaiser-windowed sinc low/high/band-pass/band-stop,
 * mains-hum notch combs, parametric EQ (peq.h), identity and pure delay.
 *
 * Every design is linear phase (symmetric; a peq with an odd number of
 * band-pass bands antisymmetric) with an odd number of taps, so its delay is
 * a whole number of samples, (taps - 1) / 2.
 *
 * Control thread only (allocates). Errors go to the caller's gf_errbuf as
 * "KEY: why", where KEY is the config setting at fault (cutoff_hz, taps, ...);
 * the config module prefixes file, line and filter.
 *
 * Folder src/design/ (design, minimum phase, learned denoise filters, mains hum,
 * frequency response, FFT pre-convolution): this header is its entry point.
 * Filter mathematics in double precision, off the audio path; it stands on
 * taps (the noise recordings of learned filters, noise_file.h) and base.
 */
#ifndef GPUFIR_DESIGN_H
#define GPUFIR_DESIGN_H

#include <stdint.h>

#include "error.h"

struct gf_peq;

enum gf_design_type {
	GF_DESIGN_LOWPASS = 0,
	GF_DESIGN_HIGHPASS,
	GF_DESIGN_BANDPASS,
	GF_DESIGN_BANDSTOP,
	GF_DESIGN_NOTCH,      /**< notches at freq_hz and its harmonics */
	GF_DESIGN_IDENTITY,   /**< one tap of 1.0 */
	GF_DESIGN_DELAY,      /**< delay_ms of leading zeros then 1.0 */
	GF_DESIGN_DENOISE,    /**< learned from a noise file (denoise.h; the config reads the file) */
	GF_DESIGN_SUPPRESS,   /**< not an FIR: a time-varying suppressor after the chain (suppress.h);
				   as a filter it is one tap of 1.0 */
	GF_DESIGN_PEQ,	      /**< parametric EQ bands (peq.h; the config parses them) */
	GF_DESIGN_DEEPFILTER, /**< not an FIR: the neural stage after the chain (DeepFilterNet3,
				   src/suppress/neural/neural_bank.h); as a filter it is one tap of 1.0 */
};

/** Longest filter any design or file may produce (16 Mi taps). */
#define GF_DESIGN_MAX_TAPS (16u * 1024u * 1024u)
#define GF_DESIGN_DEFAULT_ATTENUATION_DB 80.0
/** Notch: most fundamentals, and most notches in all (fundamentals x harmonics, distinct). */
#define GF_DESIGN_MAX_FREQS 8
#define GF_DESIGN_MAX_NOTCHES 128

/** Parameters; unused ones are ignored. Zero means "not set" for optional ones. */
struct gf_design {
	enum gf_design_type type;
	double cutoff_hz;      /**< lowpass, highpass: -6 dB point */
	double low_hz;	       /**< bandpass, bandstop: lower -6 dB edge */
	double high_hz;	       /**< bandpass, bandstop: upper -6 dB edge */
	uint32_t taps;	       /**< odd; 0 = derived (transition_hz, or bandwidth_hz / q for notch) */
	double transition_hz;  /**< full transition width, used when taps == 0 */
	double attenuation_db; /**< stopband attenuation (notch: passband ripple floor), 20..200 */
	double freq_hz[GF_DESIGN_MAX_FREQS]; /**< notch: fundamentals, e.g. 50 and/or 60 */
	uint32_t n_freq;		     /**< notch: entries of freq_hz used */
	uint32_t harmonics;		     /**< notch: notches at each freq_hz * 1..harmonics (default 1) */
	double bandwidth_hz;		     /**< notch: -3 dB width of every notch */
	double q;			     /**< notch: freq/width per harmonic (constant Q) */
	double delay_ms;		     /**< delay */
	int freq_auto;			     /**< notch: freq_hz = "auto" (the config finds it, hum.h) */
	uint8_t keep[GF_DESIGN_MAX_NOTCHES + 1]; /**< notch, when keep_set: only harmonics h with keep[h] */
	int keep_set;
	double reduction_db;	  /**< denoise, suppress: the most any band is cut */
	double highpass_hz;	  /**< suppress: its zero-phase high-pass's -6 dB point; 0: off */
	int use_input;		  /**< denoise: measure the input file where there is one */
	const struct gf_peq *peq; /**< peq: the bands (owned by the caller) */
	double atten_lim_db;	  /**< deepfilter: the most any bin is cut (its depth) */
	double post_filter_beta;  /**< deepfilter: 0: the post-filter off */
	int neural_reference; /**< deepfilter: 1: runtime = "reference" (libdeepfilter); 0: the engine's own
			       */
};

/** Fill @p d with defaults for @p type (attenuation 80 dB, harmonics 1). */
void gf_design_init(struct gf_design *d, enum gf_design_type type);

/** Parse a design name ("lowpass", "notch", ...). @return 0 or GF_E_INVAL */
int gf_design_parse_type(const char *s, enum gf_design_type *out);
const char *gf_design_type_name(enum gf_design_type t);

/**
 * Design at @p rate Hz. On success *taps is a malloc'ed array of *n doubles.
 * @return 0, GF_E_CONFIG (parameter out of range; "KEY: why" in @p eb) or GF_E_NOMEM.
 */
int gf_design_run(const struct gf_design *d, double rate, double **taps, uint32_t *n, struct gf_errbuf *eb);

/** The number of taps gf_design_run would give, without designing; 0 if the parameters are invalid. */
uint32_t gf_design_taps(const struct gf_design *d, double rate);

/** Kaiser's estimate of taps (made odd) for @p atten_db and a full transition of @p transition_hz. 0 if over
 * the limit. */
uint32_t gf_design_kaiser_taps(double atten_db, double transition_hz, double rate);
/** The transition width that @p taps taps reach at @p atten_db (inverse of the above). */
double gf_design_kaiser_transition_hz(double atten_db, uint32_t taps, double rate);
/** Kaiser window beta for a sidelobe level of -@p atten_db. */
double gf_design_kaiser_beta(double atten_db);

/** Magnitude |H(f)| of @p h at @p freq_hz (direct DFT, double). For tests and logs. */
double gf_design_response(const double *h, uint32_t n, double freq_hz, double rate);

#endif
