/**
 * @file hum_track.h
 * Mains hum followed in a running signal: the live side of freq_hz = "auto".
 *
 * Samples come in as they are captured (mono); the tracker keeps the last
 * GF_HUM_TRACK_WINDOW_S of them and, once per GF_HUM_TRACK_HOP_S of new
 * input, low-passes and decimates that window to the band the harmonics
 * need (at least 1 kHz, 160 Hz a harmonic) and runs the file detector on it
 * (gf_hum_detect_samples: 50 or 60 Hz, which harmonics stand 12 dB above
 * their local noise floor). Hysteresis per harmonic keeps speech from
 * toggling the notches: a harmonic is added after GF_HUM_TRACK_ON
 * consecutive analyses found it, removed after GF_HUM_TRACK_OFF consecutive
 * analyses did not. One mains family is active at a time: a harmonic of the
 * other one that is found ON times in a row replaces the whole set (it was
 * missing from every one of those analyses). The fundamental reported is the
 * one measured by the analysis that last changed the set.
 *
 * Control thread only (allocates at new, FFTs per analysis).
 */
#ifndef GPUFIR_HUM_TRACK_H
#define GPUFIR_HUM_TRACK_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "hum.h"

#define GF_HUM_TRACK_WINDOW_S 4.0 /**< history analysed: 0.25 Hz resolution, 0.12 Hz bins zero-padded */
#define GF_HUM_TRACK_HOP_S 1.0	  /**< one analysis per second of input */
#define GF_HUM_TRACK_ON 3u	  /**< consecutive analyses with a harmonic that add its notch */
#define GF_HUM_TRACK_OFF 8u	  /**< consecutive analyses without it that remove the notch */
/** Lowest rate the window is decimated to (it must hold a harmonic's +-5 Hz floor). */
#define GF_HUM_TRACK_MIN_RATE 1000.0

struct gf_hum_track;

/**
 * A tracker for input at @p rate looking at harmonics 1..@p max_harmonic
 * (at most GF_HUM_MAX_HARMONICS). @return 0, GF_E_INVAL or GF_E_NOMEM
 */
int gf_hum_track_new(struct gf_hum_track **out, double rate, uint32_t max_harmonic, struct gf_errbuf *eb);
/** Accepts NULL. */
void gf_hum_track_free(struct gf_hum_track *t);

/** Append @p n samples (older ones beyond the window are forgotten). */
void gf_hum_track_push(struct gf_hum_track *t, const float *x, size_t n);

/** The input had a gap (samples dropped): the history starts again; the set found stays. */
void gf_hum_track_restart(struct gf_hum_track *t);

/**
 * Analyse the window if a full window is held and a hop of new input has
 * come since the last analysis (at most one analysis per call).
 * @return 1: analysed and the active set changed; 0: analysed without a
 * change, or nothing to do; GF_E_NOMEM (the set is kept)
 */
int gf_hum_track_step(struct gf_hum_track *t, struct gf_errbuf *eb);

/** The notches to make: f0_hz 0 when none; harmonics ascending, snr_db as last measured. */
void gf_hum_track_active(const struct gf_hum_track *t, struct gf_hum *out);

/** The latest analysis as the detector gave it (f0_hz 0: none found, or none yet). */
const struct gf_hum *gf_hum_track_last(const struct gf_hum_track *t);

/** Analyses run so far. */
uint64_t gf_hum_track_analyses(const struct gf_hum_track *t);

/** 50 or 60: the family of @p f0_hz; 0 when it is 0. */
int gf_hum_family(double f0_hz);

/** "50 Hz, harmonics 1 2 3" or "none" into @p buf. */
void gf_hum_describe(const struct gf_hum *h, char *buf, size_t len);

#endif
