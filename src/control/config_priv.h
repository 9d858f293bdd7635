/*
 * Private to the config module (config.c loads, config_build.c builds):
 * the parsed form of filters and routes, with the source lines kept so
 * that build-time errors can name "FILE:LINE: SETTING".
 */
#ifndef GPUFIR_CONFIG_PRIV_H
#define GPUFIR_CONFIG_PRIV_H

#include <stdint.h>

#include "config.h"
#include "design.h"
#include "taps_io.h"

#define MAX_CHANNELS 1024
#define GAIN_DB_MIN -150.0
#define GAIN_DB_MAX 60.0

enum filter_kind { FK_INLINE, FK_TEXT, FK_WAV, FK_DESIGN };

/* Settings of a filter group; their lines are kept for build-time messages. */
enum fkey {
	K_NAME,
	K_COEFFS,
	K_FILE,
	K_FORMAT,
	K_CHANNEL,
	K_OFFSET,
	K_LENGTH,
	K_DESIGN,
	K_GAIN_DB,
	K_CUTOFF_HZ,
	K_LOW_HZ,
	K_HIGH_HZ,
	K_TAPS,
	K_TRANSITION_HZ,
	K_ATTENUATION_DB,
	K_FREQ_HZ,
	K_HARMONICS,
	K_BANDWIDTH_HZ,
	K_Q,
	K_DELAY_MS,
	K_COUNT
};
/* Setting names, indexed by enum fkey. */
extern const char *const gf_config_fkey_names[K_COUNT];

struct gf_config_filter {
	char *name;
	char *src;	       /* config file the group is in, for messages */
	int line;	       /* line of the group */
	int key_line[K_COUNT]; /* 0 = not given */
	enum filter_kind kind;
	double *coeffs; /* FK_INLINE */
	uint32_t n_coeffs;
	char *file; /* FK_TEXT, FK_WAV: resolved path */
	struct gf_ir_select sel;
	struct gf_design design;
	double gain_db;
	int used;
};

struct gf_config_route {
	uint32_t channel;
	char *src;
	int line, channel_line, chain_line;
	int has_chain; /* 0: the global chain */
	char **chain;
	uint32_t n_chain;
	double gain_db;
	double delay_ms;
	int invert;
};

struct gf_config_priv {
	char *src;	/* config name for messages */
	int chain_line; /* 0 = no chain setting */
	int max_taps_line;
	int builtin; /* the built-in default: designs adapt to the sample rate */
};

/** Index of the filter called @p name, or -1. */
int gf_config_find_filter(const struct gf_config *c, const char *name);

#endif
