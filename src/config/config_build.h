/*
 * Private to the config layer's builder (src/config/): the filters built at
 * a rate (config_build.c), those measured from files at build time
 * (config_learned.c), parametric EQ's FIR and a mixer's paths. What it reads
 * of the parsed configuration is config_priv.h's (src/config/parse/).
 */
#ifndef GPUFIR_CONFIG_BUILD_H
#define GPUFIR_CONFIG_BUILD_H

#include <stdint.h>

#include "config.h"
#include "config_priv.h"

/* ---- filters measured from files at build time (config_learned.c) -------- */

/* design = "denoise": learned from its noise file (and, offline, the input). */
int gf_cfg_build_denoise(const struct gf_config *c, const struct gf_config_filter *f, uint32_t rate,
			 double **h, uint32_t *n, struct gf_errbuf *eb);
/* A notch with freq_hz = "auto": the mains hum measured in the input file. */
int gf_cfg_build_hum(const struct gf_config *c, const struct gf_config_filter *f, uint32_t rate, double **h,
		     uint32_t *n, struct gf_errbuf *eb);
/* The hum that notch @p f hands to the suppressor called @p sup (gf_cfg_hum_in_suppressor): found as
 * gf_cfg_build_hum finds it (f0_hz 0: none), and said in the log. */
int gf_cfg_hum_for_suppressor(const struct gf_config *c, const struct gf_config_filter *f, const char *sup,
			      uint32_t rate, struct gf_hum *h, struct gf_errbuf *eb);
/* ---- parametric EQ (config_build.c) ---------------------------------------- */

/** The peq's FIR at @p rate; the message names the band's line. */
int gf_cfg_build_peq(const struct gf_config_filter *f, uint32_t rate, double **h, uint32_t *n,
		     struct gf_errbuf *eb);

/* ---- the filters and the mixer (config_build.c) ---------------------------- */

/* FIRs of config_build.c, shared with config_mixer.c. */
struct gf_cfg_taps {
	double *h;
	uint32_t n;
	double lin_delay; /* samples of delay from linear-phase filters (offline alignment removes it) */
};
/** Build every used filter for audio channel @p ch (only_per_channel: those with channel = "route"). */
int gf_cfg_build_filters(const struct gf_config *c, uint32_t rate, uint32_t ch, int only_per_channel,
			 struct gf_cfg_taps *built, int *per_channel, struct gf_errbuf *eb);
/** A chain pre-convolved into one FIR, with route @p rt's gain, delay and polarity (rt may be NULL). */
int gf_cfg_chain_fir(const struct gf_config *c, struct gf_cfg_taps *built, char *const *chain,
		     uint32_t n_chain, const struct gf_config_route *rt, uint32_t rate,
		     struct gf_cfg_taps *out, struct gf_errbuf *eb);
/** Taps of that FIR, from the built filters' lengths (for the memory check). */
uint64_t gf_cfg_chain_len(const struct gf_config *c, const struct gf_cfg_taps *built, char *const *chain,
			  uint32_t n, const struct gf_config_route *rt, uint32_t rate);
/** Refuse a build whose taps (over all FIRs) would not fit the memory available. */
int gf_cfg_check_memory_taps(const struct gf_config *c, uint64_t tap_channels, uint32_t channels,
			     struct gf_errbuf *eb);
/** Pad @p n FIRs to the longest, in float: *out a plain set (mixer NULL) or @p mixer's. */
int gf_cfg_to_filter_set(const struct gf_config *c, struct gf_cfg_taps *fir, uint32_t n,
			 const struct gf_config_mixer *mixer, struct gf_filter_set **out,
			 struct gf_errbuf *eb);
/** The mixer's filter set (config_mixer.c): one FIR per path. */
int gf_cfg_build_mixer(const struct gf_config *c, uint32_t rate, uint32_t channels,
		       struct gf_filter_set **out, uint32_t *align, struct gf_errbuf *eb);

#endif
