/**
 * @file config.h
 * The configuration turned into what runs: a filter set for a given sample
 * rate and channel count, the suppressor bank after it, and what a reload
 * changes of them (chain.h, the chain's builder, is the front of this). The
 * parsed configuration itself is config_parse.h's (src/config/parse/),
 * included here, so this header is the whole of the config layer.
 *
 * Control thread only (may allocate, read files and fail). Errors name the
 * file, line and setting in the caller's gf_errbuf.
 *
 * Folder src/config/ (the parsed config built into filter sets, the
 * suppressor bank and the chain; a reload's plan): this header is its entry
 * point. Runs off the audio path (the control thread or the daemon's build
 * thread); it may block, allocate and fail. It stands on config/parse,
 * chain, design, taps and the layers below them.
 */
#ifndef GPUFIR_CONFIG_H
#define GPUFIR_CONFIG_H

#include <stdint.h>

#include "config_parse.h"
#include "filter_set.h"
#include "hum.h"

/**
 * A failure to load the configuration or to build from it, as the program reports it: the
 * config's to fix (GF_E_CONFIG, exit status 6, whatever the cause: a missing file, a bad value, a
 * filter that cannot be made), but for GF_E_NOMEM, which is the host's. 0 stays 0.
 */
static inline int gf_config_failure(int err)
{
	return err == 0 || err == GF_E_NOMEM ? err : GF_E_CONFIG;
}

/**
 * Build the filter set: design/load every filter at @p sample_rate, pre-convolve
 * each channel's chain into one FIR, apply gain/delay/polarity. With a mixer,
 * one FIR per path and a mixer set (its inputs must be @p channels).
 * @p channels is the audio's channel count. All-or-nothing.
 * @p sample_rate 0 means c->sample_rate (an error if that is unset too).
 * @return 0, GF_E_CONFIG, GF_E_RATE (a WAV impulse response at another rate),
 *         GF_E_NONFINITE, GF_E_TOOLONG (over max_taps) or GF_E_NOMEM.
 */
int gf_config_build(const struct gf_config *c, uint32_t sample_rate, uint32_t channels,
		    struct gf_filter_set **out, struct gf_errbuf *eb);

/** What a build reports beside the filter set. */
struct gf_config_build_info {
	/**
	 * The delay in whole samples that every channel's chain has from its
	 * linear-phase filters ((taps - 1) / 2 each, rounded down in the sum):
	 * offline alignment removes it. Minimum-phase and other filters, delay
	 * designs and route delays add nothing: they keep their causal timing.
	 */
	uint32_t align_frames;
};

/** gf_config_build, and @p info (may be NULL) filled on success. */
int gf_config_build_ex(const struct gf_config *c, uint32_t sample_rate, uint32_t channels,
		       struct gf_filter_set **out, struct gf_config_build_info *info, struct gf_errbuf *eb);

/* ---- the noise suppressor (design = "suppress"; config_suppress.c) ---- */

struct gf_suppress_bank; /* src/suppress/suppress_bank.h */
struct gf_suppress_bank_opts;

/** The live controls' values set over the control API, which win over every suppressor's
 * reduction_db and bypass (or the neural stage's atten_lim_db and bypass) until a reload changes
 * those (docs/daemon.md). */
struct gf_suppress_live {
	int has_depth, has_bypass; /**< which of the two were set */
	double depth_db;	   /**< reduction_db, or the neural stage's atten_lim_db, in their range */
	int bypass;
};

/**
 * The suppressors of @p channels channels at @p rate (their noise samples
 * read), and the neural stage after them (its model loaded: seconds a
 * channel), run after the filter set's FIR: *out NULL when no chain has
 * either. Errors name the file and line (the noise file: unreadable, another
 * rate, silent; the neural stage: a rate other than 48 kHz, a model or
 * runtime that does not load). @return 0, GF_E_CONFIG, GF_E_INVAL or GF_E_NOMEM
 */
int gf_config_suppress_new(const struct gf_config *c, uint32_t rate, uint32_t channels,
			   struct gf_suppress_bank **out, struct gf_errbuf *eb);

/** gf_config_suppress_new, on the GPU where @p o asks for it (suppress_bank.h); @p o NULL: the CPU. */
int gf_config_suppress_new_ex(const struct gf_config *c, uint32_t rate, uint32_t channels,
			      const struct gf_suppress_bank_opts *o, struct gf_suppress_bank **out,
			      struct gf_errbuf *eb);

/**
 * Remove @p h (f0_hz 0: none) in the frames of @p b's suppressors from their next frame on, each up
 * to its chain's notch's harmonics (none where its chain has no such notch). Control thread, while
 * audio runs: lock-free (suppress.h, gf_suppress_set_hum).
 */
void gf_config_suppress_set_hum(struct gf_suppress_bank *b, const struct gf_hum *h);

/**
 * 1 and a description in @p why when the suppressors or neural stages of @p a
 * and @p b differ on any of @p channels channels in what needs a new one
 * (added, removed, highpass_hz, the noise or model file or its contents, the
 * harmonics of the hum they remove, a neural stage's post_filter_beta), or when channels whose suppressors
 * had the same settings get different reduction_db or bypass (they may run in one GPU batch, which has one
 * floor): a live reload then restarts the stream. A suppressor's reduction_db and bypass and a neural
 * stage's atten_lim_db and bypass alone are live (gf_config_suppress_live_differs). Any thread.
 */
int gf_config_suppress_differs(const struct gf_config *a, const struct gf_config *b, uint32_t channels,
			       char *why, size_t len);

/** gf_config_suppress_live_differs's bits: some suppressor's reduction_db, some bypass changed; the
 * neural stage's atten_lim_db, its bypass changed. */
#define GF_SUPPRESS_LIVE_DEPTH 1
#define GF_SUPPRESS_LIVE_BYPASS 2
#define GF_NEURAL_LIVE_ATTEN 4
#define GF_NEURAL_LIVE_BYPASS 8

/** Which of the suppressors' and the neural stage's live settings differ between @p a and @p b on any
 * of @p channels channels (a stage on the channel in both): the GF_SUPPRESS_LIVE_ and GF_NEURAL_LIVE_
 * bits, or 0. Any thread. */
int gf_config_suppress_live_differs(const struct gf_config *a, const struct gf_config *b, uint32_t channels);

/**
 * Each of @p channels channels' gain floor (gf_suppress_floor_gain, suppress.h) from its suppressor's
 * reduction_db and bypass, or from @p over where it sets them (NULL: none); 1 where a channel has no
 * suppressor. For gf_suppress_bank_set_floor. Any thread.
 */
void gf_config_suppress_floors(const struct gf_config *c, uint32_t channels,
			       const struct gf_suppress_live *over, float *out);

#endif
