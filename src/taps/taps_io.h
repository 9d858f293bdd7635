/**
 * @file taps_io.h
 * Reading filter taps from files: plain text (one number a line, or
 * separated by spaces/commas; '#' starts a comment) and impulse responses in
 * any sound file libsndfile reads (WAV, W64, FLAC, AIFF, CAF, ...).
 *
 * Control thread only (allocates, blocking I/O). On success *taps is a
 * malloc'ed array of *n doubles (1 <= n <= GF_TAPS_MAX). Errors name the
 * file (and line for text) in the caller's gf_errbuf.
 *
 * Folder src/taps/ (filter files read and written): this header is its entry
 * point. It stands on base alone.
 */
#ifndef GPUFIR_TAPS_IO_H
#define GPUFIR_TAPS_IO_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/** Longest filter a file may give (16 Mi taps, as designs). */
#define GF_TAPS_MAX (16u * 1024u * 1024u)

/**
 * Read a text taps file.
 * @return 0, GF_E_IO (cannot read), GF_E_FORMAT (garbage: "FILE:LINE: why"),
 *         GF_E_NONFINITE (NaN/Inf) or GF_E_NOMEM.
 */
int gf_taps_read_text(const char *path, double **taps, uint32_t *n, struct gf_errbuf *eb);

/** Parse text taps from memory; @p name labels messages. Same returns as gf_taps_read_text. */
int gf_taps_parse_text(const char *buf, size_t len, const char *name, double **taps, uint32_t *n,
		       struct gf_errbuf *eb);

/** Which part of a sound file to take. */
struct gf_ir_select {
	uint32_t channel; /**< 0-based channel of the file */
	uint64_t offset;  /**< first frame */
	uint64_t length;  /**< frames; 0 = to the end of the file */
};

/**
 * Read an impulse response from a sound file.
 * @p rate: the rate the filter runs at; a file at another rate is GF_E_RATE
 * (the message says both rates). 0 accepts any rate.
 * @p file_rate (may be NULL) receives the file's rate.
 * @return 0, GF_E_IO, GF_E_FORMAT, GF_E_RATE, GF_E_CONFIG (channel, offset or
 *         length out of range), GF_E_NONFINITE or GF_E_NOMEM.
 */
int gf_taps_read_wav(const char *path, uint32_t rate, const struct gf_ir_select *sel, double **taps,
		     uint32_t *n, uint32_t *file_rate, struct gf_errbuf *eb);

/** Same, from a file image in memory (tests, fuzzing); @p name labels messages. */
int gf_taps_read_wav_mem(const void *data, size_t size, const char *name, uint32_t rate,
			 const struct gf_ir_select *sel, double **taps, uint32_t *n, uint32_t *file_rate,
			 struct gf_errbuf *eb);

/** 1 if @p path's extension names a sound file (.wav, .flac, ...), else 0 (text). */
int gf_taps_is_sound_file(const char *path);

/**
 * Resample an impulse response of @p n taps at @p from Hz to @p to Hz
 * (libsamplerate, SRC_SINC_BEST_QUALITY), scaled by from / to so that its
 * frequency response (gain included) stays the same below both Nyquist
 * frequencies, into a new array @p out of *m taps. The resampler's ringing
 * before frame 0 and after the last frame is kept: the result is the
 * original delayed by *delay taps (at @p to; the same for every IR at these
 * two rates, a whole number at the usual rates: 160 at 44.1 -> 48 kHz), about
 * 2 x 144 taps longer than n x to / from. Control thread (allocates, takes
 * time with the length).
 * @return 0, GF_E_TOOLONG beyond GF_TAPS_MAX, GF_E_NOMEM, or GF_E_INVAL
 */
int gf_taps_resample(const double *h, uint32_t n, uint32_t from, uint32_t to, double **out, uint32_t *m,
		     double *delay, struct gf_errbuf *eb);

/* ---- raw sample files (taps_raw.c): what rePhase, DRC-FIR and others write ---- */

/** Headerless mono little-endian samples (CamillaDSP's names, before v4 and since). */
enum gf_raw_format {
	GF_RAW_NONE = 0,
	GF_RAW_FLOAT32LE, /**< IEEE float, 4 bytes (DRC-FIR .pcm) */
	GF_RAW_FLOAT64LE, /**< IEEE double, 8 bytes (rePhase .dbl) */
	GF_RAW_S16LE,	  /**< 16-bit integer, v / 2^15 */
	GF_RAW_S24LE3,	  /**< 24-bit integer in 3 bytes, v / 2^23 */
	GF_RAW_S24LE,	  /**< 24-bit integer in the low 3 bytes of 4, v / 2^23 */
	GF_RAW_S32LE,	  /**< 32-bit integer, v / 2^31 */
	GF_RAW_S24LE4LJ,  /**< 24-bit integer in the high 3 bytes of 4, v / 2^23 */
};

/**
 * Parse a format name, case-insensitive: CamillaDSP's before v4 ("FLOAT64LE",
 * "S24LE3") or since ("F64_LE", "S24_3_LE"). @return the format or GF_RAW_NONE
 */
enum gf_raw_format gf_taps_raw_parse(const char *name);
/** Every accepted name, ", "-separated, for messages ("FLOAT32LE, ..., F64_LE"). */
const char *gf_taps_raw_names(void);
/** The name of @p f in gpufir's messages ("FLOAT64LE"), "?" for GF_RAW_NONE. */
const char *gf_taps_raw_name(enum gf_raw_format f);
/** Bytes per sample of @p f. */
unsigned gf_taps_raw_size(enum gf_raw_format f);
/** The raw format an extension implies: .dbl FLOAT64LE, .pcm FLOAT32LE, else GF_RAW_NONE. */
enum gf_raw_format gf_taps_raw_by_extension(const char *path);

/**
 * Read a raw file of samples in @p fmt; @p sel's offset and length count
 * samples (its channel must be 0: raw files are mono). A size that is not a
 * whole number of samples is GF_E_FORMAT, the message naming the file.
 * @return as gf_taps_read_wav, without GF_E_RATE (raw files carry no rate)
 */
int gf_taps_read_raw(const char *path, enum gf_raw_format fmt, const struct gf_ir_select *sel, double **taps,
		     uint32_t *n, struct gf_errbuf *eb);

/** Same, from memory (tests, fuzzing); @p name labels messages. */
int gf_taps_parse_raw(const void *data, size_t size, const char *name, enum gf_raw_format fmt,
		      const struct gf_ir_select *sel, double **taps, uint32_t *n, struct gf_errbuf *eb);

/* ---- writing (taps_write.c): what --export-filters writes ---------------- */

/**
 * Write @p n taps as text into @p fd (left open: the caller closes it), one
 * per line with 9 significant digits (every float reads back exactly),
 * after a '#' line holding @p comment (may be NULL; one line: the caller
 * keeps newlines out of it). gpufir's text reader and SoX's `fir` effect
 * read this format. @p path names the file in messages.
 * @return 0, GF_E_IO (the message names @p path)
 */
int gf_taps_write_text(int fd, const char *path, const float *h, uint32_t n, const char *comment,
		       struct gf_errbuf *eb);

/**
 * Write @p n taps as a mono 32-bit float WAV at @p rate into @p fd (left
 * open), read back exactly. @return 0, GF_E_IO (the message names @p path)
 */
int gf_taps_write_wav(int fd, const char *path, const float *h, uint32_t n, uint32_t rate,
		      struct gf_errbuf *eb);

#endif
