/**
 * @file noise_file.h
 * Noise recordings that filters are made from or seeded with: design =
 * "denoise" measures one (denoise.h), design = "suppress" starts its noise
 * estimate from one (src/suppress/suppress.h). Both open it the same
 * way: a regular file (a FIFO never blocks a reload), a sound file libsndfile
 * reads, at the rate the filter runs at.
 *
 * Control thread only (reads files, allocates). Errors: "KEY: why" in the
 * gf_errbuf, as design.h's.
 */
#ifndef GPUFIR_NOISE_FILE_H
#define GPUFIR_NOISE_FILE_H

#include <sndfile.h>
#include <stdint.h>

#include "error.h"

/** A noise sample whose RMS is below this (dBFS) is silence, not noise. */
#define GF_NOISE_SILENCE_DBFS -100.0
/** A noise sample whose RMS is above this (dBFS) is not a room's noise: refused. */
#define GF_NOISE_LOUD_DBFS 0.0
/** No sample of a noise recording may be NaN, Inf or beyond +-this (+18 dBFS; float files only). */
#define GF_NOISE_MAX_PEAK 8.0

/**
 * Open @p path (@p key: the setting that names it, for messages) for
 * reading; its rate must be @p rate. @return 0 with *f open (sf_close it),
 * or GF_E_CONFIG
 */
int gf_noise_open(const char *path, const char *key, double rate, SNDFILE **f, SF_INFO *info,
		  struct gf_errbuf *eb);

/**
 * The recording as one mono sample, malloc'ed into *out: its channels one
 * after another (each keeps its own level, which a downmix of uncorrelated
 * noise would lower), at most @p max_frames in all.
 * @return 0, GF_E_CONFIG (unreadable, another rate, empty, silent, a NaN/Inf or out-of-range
 * sample, louder than full scale) or GF_E_NOMEM
 */
int gf_noise_read_mono(const char *path, const char *key, double rate, uint64_t max_frames, float **out,
		       uint64_t *frames, struct gf_errbuf *eb);

#endif
