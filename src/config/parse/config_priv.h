/*
 * Private to the config layer: config.c loads the file (top level, routes),
 * config_filters.c parses the filters, config_read.c holds the typed getters
 * they share, config_stages.c finds each channel's stages after the FIR. The
 * parsed form of filters and routes keeps the source lines, so that
 * build-time errors can name "FILE:LINE: SETTING": the builder above
 * (src/config/, config_build.h) reads it through this header.
 */
#ifndef GPUFIR_CONFIG_PRIV_H
#define GPUFIR_CONFIG_PRIV_H

#include <libconfig.h>
#include <stdint.h>

#include "config_parse.h"
#include "design.h"
#include "peq.h"
#include "strmap.h"
#include "taps_io.h"

#define MAX_CHANNELS 1024
#define GAIN_DB_MIN -150.0
#define GAIN_DB_MAX 60.0
/* A config or @include file larger than this is refused (inline taps beyond
 * a few million belong in a filter file). */
#define GF_CFG_MAX_BYTES ((size_t)64 << 20)
/* The whole include tree, counted each time a file is included (libconfig
 * expands every @include again, so a file included twice is read twice):
 * includes that fan out (20 per file, 6 levels deep: 64 million inclusions)
 * are refused instead of expanded for hours. */
#define GF_CFG_MAX_INCLUDES 1024u
#define GF_CFG_MAX_TREE_BYTES ((uint64_t)128 << 20)

enum filter_kind { FK_INLINE, FK_TEXT, FK_WAV, FK_RAW, FK_DESIGN };

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
	K_PHASE,
	K_NOISE,
	K_REDUCTION_DB,
	K_USE_INPUT,
	K_BANDS,
	K_PREAMP_DB,
	K_HIGHPASS_HZ,
	K_RESAMPLE,
	K_MODEL,
	K_ATTEN_LIM_DB,
	K_POST_FILTER_BETA,
	K_BYPASS,
	K_RUNTIME,
	K_COUNT
};
/* Setting names, indexed by enum fkey. */
extern const char *const gf_config_fkey_names[K_COUNT];

/* CamillaDSP's token in a filter file's name: replaced by the rate the filter is built at. */
#define GF_RATE_TOKEN "$samplerate$"

struct gf_rate_file {
	uint32_t rate;
	char *file; /* resolved path */
};

struct gf_config_filter {
	char *name;
	char *src;	       /* config file the group is in, for messages */
	int line;	       /* line of the group */
	int key_line[K_COUNT]; /* 0 = not given */
	enum filter_kind kind;
	double *coeffs; /* FK_INLINE */
	uint32_t n_coeffs;
	char *file; /* FK_TEXT, FK_WAV, FK_RAW: resolved path; may hold GF_RATE_TOKEN; NULL with
		     * by_rate; denoise design: the noise file; deepfilter: the model */
	struct gf_rate_file *by_rate; /* file = ( { rate = ...; file = ...; }, ... ) */
	uint32_t n_by_rate;
	struct gf_ir_select sel;
	enum gf_raw_format raw; /* FK_RAW */
	int channel_is_route;	/* FK_WAV, channel = "route": the file channel = the audio channel */
	int resample;		/* FK_WAV, resample = true: a file at another rate is resampled */
	struct gf_design design;
	struct gf_peq *peq; /* design = "peq": its bands (design.peq points here) */
	double gain_db;
	int minphase; /* phase = "minimum" */
	int bypass;   /* bypass = true: a suppressor's gain held at 1 (a live setting); a neural stage starts
			 bypassed */
	int used;
	/* noise file's size and change time when loaded: a reload that rewrote it
	 * changes a suppressor (config_suppress.c) */
	int64_t noise_size, noise_mtime_ns;
};

/* A route, or a mixer's path: from input channel to output out. */
struct gf_config_route {
	char name[32]; /* "routes[3]", "mixer.paths[3]": for messages */
	uint32_t channel;
	uint32_t out; /* a mixer path's output channel (a route's is its channel) */
	char *src;
	int line, channel_line, chain_line;
	int has_chain; /* 0: the global chain */
	char **chain;
	uint32_t n_chain;
	double gain_db;
	double delay_ms;
	int invert;
};

/* mixer = { inputs; outputs; paths = (...); } (config_mixer.c). */
struct gf_config_mixer {
	uint32_t inputs, outputs;
	struct gf_config_route *paths;
	uint32_t n_paths;
	int line;
};

struct gf_config_priv {
	char *src;	/* config name for messages */
	int chain_line; /* 0 = no chain setting */
	int max_taps_line;
	int phase_line; /* top-level phase; 0 = not set */
	int builtin;	/* the built-in default: designs adapt to the sample rate */
	/* name -> index of filters[] and of files[]: loading stays linear in
	 * their number (40,000 filters took 10 s with a scan per lookup) */
	struct gf_strmap *filter_index, *file_index;
};

/** 1: @p f is design = "suppress" (not an FIR: run after the chain's FIR part). */
int gf_cfg_is_suppress(const struct gf_config_filter *f);

/** 1: @p f is design = "deepfilter" (not an FIR: the neural stage, after the suppressor). */
int gf_cfg_is_neural(const struct gf_config_filter *f);

/** 1: @p f is a stage after the chain's FIR part (suppress, deepfilter): one tap of 1.0 in it. */
int gf_cfg_is_stage(const struct gf_config_filter *f);

/** Index of the filter called @p name, or -1. */
int gf_config_find_filter(const struct gf_config *c, const char *name);

/* ---- reading settings (config_read.c) ----------------------------------- */

struct gf_cfg_loader {
	struct gf_config *c;
	struct gf_errbuf *eb;
	const char *name;		   /* config name for messages when libconfig has none */
	const char *base_dir;		   /* relative filter paths resolve against this */
	const struct gf_cfg_includes *inc; /* the @include files libconfig read (by memfd) */
};

/* The file a setting is in: the config itself, or an @include'd file (made a path). */
const char *gf_cfg_src_of(const struct gf_cfg_loader *L, const config_setting_t *s);
int gf_cfg_line_of(const config_setting_t *s);
int gf_cfg_fail_at(const struct gf_cfg_loader *L, const config_setting_t *s, const char *setting,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* gf_cfg_fail_at() at setting @p key of group @p g, named prefix + key. @return GF_E_CONFIG */
int gf_cfg_fail_key(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		    const char *key, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
const char *gf_cfg_type_name(const config_setting_t *s);
/* An integer or floating-point setting as a double. @return 0, or -1 when it is not a number */
int gf_cfg_number_of(const config_setting_t *s, double *x);
/* "prefix" + "key" into buf (a setting's full name, for messages). */
const char *gf_cfg_setting(char *buf, size_t size, const char *prefix, const char *key);
int gf_cfg_add_file(struct gf_config *c, const char *path);
int gf_cfg_get_num(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		   const char *key, double lo, double hi, double *v);
int gf_cfg_get_int(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		   const char *key, long long lo, long long hi, long long *v);
int gf_cfg_get_str(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		   const char *key, char **v);
int gf_cfg_get_bool(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		    const char *key, int *v);
/* volume_db, volume_limit_db, state_file (config_control.c). @return 0 or a negative error */
int gf_cfg_parse_volume(const struct gf_cfg_loader *L, const config_setting_t *root);
/* input and output with host_api = "PipeWire": the two sides agree (config_pipewire.c). */
int gf_cfg_check_pipewire(const struct gf_cfg_loader *L, const config_setting_t *root);
/* control_socket, control_port, control_address, control_allowed_origins (config_control.c). */
int gf_cfg_parse_control(const struct gf_cfg_loader *L, const config_setting_t *root);
int gf_cfg_in_list(const char *name, const char *const *list, size_t n);
/*
 * phase = "linear" | "minimum" (and "auto" where @p allow_auto): *v is 0, 1 or
 * 2 (auto). @return 1 if given, 0 if absent, or a negative error.
 */
int gf_cfg_get_phase(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		     int allow_auto, int *v);
/* Unknown settings are warnings, not errors: a newer config still loads. */
void gf_cfg_warn_unknown(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
			 const char *const *known, size_t n_known, const char *what);
/* A required setting @p key of group @p g is absent: say what it is for. */
int gf_cfg_missing(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		   const char *key, const char *why);

/* ---- pre-scan (config_scan.c) ------------------------------------------- */

/* ---- paths, and the folders a guest's config may read (config_paths.c) --- */

/* @p file relative to @p dir (absolute, or with no dir, as given), malloc'ed; NULL: no memory. */
char *gf_cfg_join_path(const char *dir, const char *file);
/* The folder of @p path ("." without one), malloc'ed; NULL: no memory. */
char *gf_cfg_dir_of(const char *path);
/** The folders a guest's config may read from: the config file's own and those of every file
 *  the config file on disk reads, realpath'ed (the policy for guests: config_policy.c). */
struct gf_cfg_roots;
int gf_cfg_roots_new(const struct gf_config *disk, struct gf_cfg_roots **out);
void gf_cfg_roots_free(struct gf_cfg_roots *r);
/** 1 when the resolved path @p real is under one of @p r's folders. */
int gf_cfg_roots_allow(const struct gf_cfg_roots *r, const char *real);

/** The @include files of a text, each read once and held in a memfd (config_scan.c). */
struct gf_cfg_includes;

/** Check every @include of @p text (recursively: regular files only; with @p roots, only
 *  files that resolve under them, checked on the open descriptor), its
 *  integer literals (those libconfig would truncate) and the memory its parse
 *  needs (GF_E_NOMEM, with how much, if it will not fit) before libconfig runs.
 *  On success *checked is the text for libconfig (malloc'ed): each @include
 *  names the memfd of what was checked (`/proc/self/fd/N`), so libconfig must
 *  be given no include directory; *inc holds those files until
 *  gf_cfg_includes_free. */
int gf_cfg_prescan(const char *text, size_t len, const char *name, const char *include_dir,
		   const struct gf_cfg_roots *roots, char **checked, struct gf_cfg_includes **inc,
		   struct gf_errbuf *eb);
void gf_cfg_includes_free(struct gf_cfg_includes *inc);
/** The file behind libconfig's name for an included file (its /proc/self/fd path); other names as given. */
const char *gf_cfg_includes_path(const struct gf_cfg_includes *inc, const char *name);

/* ---- chains and the stages after the FIR (config_stages.c) ---------------- */

/** Parse `names` (an array of filter names) for @p setting into *out; marks them used. */
int gf_cfg_parse_names(const struct gf_cfg_loader *L, const config_setting_t *a, const char *setting,
		       char ***out, uint32_t *n_out);
/* 1: @p f is a notch with freq_hz = "auto" whose hum the suppressors remove in their frames, not an
 * FIR: the chains are minimum phase (live), and every chain that holds it has a suppressor
 * (config_stages.c). Its FIR is then one tap of 1.0. */
int gf_cfg_hum_in_suppressor(const struct gf_config *c, const struct gf_config_filter *f);
/* The index in c->filters of channel @p ch's stage of type @p is (gf_cfg_is_suppress,
 * gf_cfg_is_neural), or -1. */
int gf_cfg_stage_index(const struct gf_config *c, uint32_t ch, int (*is)(const struct gf_config_filter *));
/* The index of channel @p ch's suppressor, or -1. */
int gf_cfg_suppress_index(const struct gf_config *c, uint32_t ch);
/* The index of the notch whose hum channel @p ch's suppressor removes (gf_cfg_hum_in_suppressor),
 * or -1; with two such notches in one chain, the one looking at more harmonics. */
int gf_cfg_hum_index(const struct gf_config *c, uint32_t ch);
/* The harmonics channel @p ch's suppressor removes hum up to; 0: none. */
uint32_t gf_cfg_hum_top(const struct gf_config *c, uint32_t ch);

/* ---- parametric EQ (config_peq.c) ----------------------------------------- */

/** 1: group @p g says design = "peq" (whose file = is an EQ text, not taps). */
int gf_cfg_is_peq(const config_setting_t *g);
/** design = "peq": bands or file, preamp_db, into f->peq. */
int gf_cfg_parse_peq(const struct gf_cfg_loader *L, const config_setting_t *g, const char *prefix,
		     struct gf_config_filter *f);
/* ---- the mixer (config_mixer.c) -------------------------------------------- */

/** Parse `mixer = {...}` into c->mixer, validated as a whole. */
int gf_cfg_parse_mixer(const struct gf_cfg_loader *L, const config_setting_t *root);
void gf_cfg_mixer_free(struct gf_config_mixer *m);

/* ---- filters (config_filters.c) ------------------------------------------ */

/** Parse `filters = ( ... )` into c->filters. */
int gf_cfg_parse_filters(const struct gf_cfg_loader *L, const config_setting_t *root);

/* ---- per-rate filter files (config_rate_files.c) ------------------------------ */

/** Parse file = ( { rate; file; }, ... ) into f->by_rate; *first_rel: the first entry's file name. */
int gf_cfg_parse_rate_files(const struct gf_cfg_loader *L, const config_setting_t *list, const char *prefix,
			    struct gf_config_filter *f, char **first_rel);

/** Add the existing expansions of @p path (with GF_RATE_TOKEN) at common rates to c->files. */
int gf_cfg_watch_rate_files(struct gf_config *c, const char *path);

/** @p path with every GF_RATE_TOKEN replaced by @p rate; malloc'ed, NULL when out of memory. */
char *gf_cfg_expand_rate(const char *path, uint32_t rate);

/**
 * The file filter @p f reads at @p rate (its by-rate entry, or its file with
 * the token replaced), malloc'ed into *path; *chosen is 1 when the rate chose it.
 * @return 0, GF_E_RATE (no entry for @p rate: the message names it) or GF_E_NOMEM
 */
int gf_cfg_filter_file(const struct gf_config_filter *f, uint32_t rate, char **path, int *chosen,
		       struct gf_errbuf *eb);

#endif
