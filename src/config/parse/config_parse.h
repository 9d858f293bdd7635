/**
 * @file config_parse.h
 * The libconfig configuration parsed and validated as a whole into a struct
 * gf_config, and what may be asked of it: its stages, the channels it
 * needs, whether it reads its input. Nothing here builds a filter, a stage or
 * an engine: that is config.h's (src/config/), which includes this header.
 *
 * Control thread only (may allocate, read files and fail); the queries,
 * any thread. Errors name the file, line and setting in the caller's
 * gf_errbuf.
 *
 * Folder src/config/parse/ (loading, typed settings, includes, per-rate
 * files, filters, mixers, parametric EQ, policy): this header is its entry
 * point. It stands on the suppressor's and the design's headers (for the
 * ranges it checks), taps and base.
 */
#ifndef GPUFIR_CONFIG_PARSE_H
#define GPUFIR_CONFIG_PARSE_H

#include <stdint.h>

#include "engine.h"
#include "error.h"
#include "filter_set.h"
#include "hum.h"
#include "log.h"

/** Sample rates gf_config_build accepts (Hz). */
#define GF_RATE_MIN 8000u
#define GF_RATE_MAX 384000u

/** The range of volume_db and volume_limit_db (dB). */
#define GF_VOLUME_MIN_DB -120.0
#define GF_VOLUME_MAX_DB 40.0

struct gf_config_filter; /* private: one entry of filters = (...) */
struct gf_config_route;	 /* private: per-channel routing, if any */
struct gf_config_mixer;	 /* private: N inputs to M outputs, if any */
struct gf_config_priv;	 /* private */

/** Top-level `phase`: how each channel's pre-convolved chain is made. */
enum gf_phase {
	GF_PHASE_LINEAR = 0, /**< as the filters are (designs are linear phase) */
	GF_PHASE_MINIMUM,    /**< the chain made minimum phase (same magnitude, least delay) */
	GF_PHASE_AUTO,	     /**< minimum in live mode, linear offline (the built-in default) */
};

struct gf_audio_endpoint {
	char *device;	   /**< name substring or index as text; NULL = default device */
	char *host_api;	   /**< PortAudio host API name substring; NULL = any */
	uint32_t channels; /**< 0 = same as the other side / the filter set */
	char *file;	   /**< output only: WAV recording path, NULL = none */
};

struct gf_config {
	char *path;	       /**< file it came from; NULL for the built-in default */
	uint32_t sample_rate;  /**< Hz; 0 = not set (offline takes the file's rate) */
	uint32_t block_frames; /**< live block size, 16..8192 */
	enum gf_backend_kind backend;
	enum gf_algo algo;
	int gpu_index;
	/** the CUDA backend's path for live blocks (docs/cuda.md); LAUNCHED unless set */
	enum gf_gpu_path gpu_path;
	double crossfade_ms;	/**< filter swap crossfade, >= 0 */
	uint32_t max_taps;	/**< longest filter a live reload may bring; 0 = auto */
	uint32_t latency_slack; /**< live: playback periods of slack beyond the tightest latency (0..16) */
	double gpu_deadline_ms; /**< live: longest wait for a block's GPU work; 0 = two block periods */
	int latency_slack_auto; /**< live: latency_slack = "auto" (the default: from 0, grown after an
				   underrun) */
	enum gf_log_level log_level;
	char *status_socket;	/**< live: Unix socket path for status queries; NULL = none */
	double volume_db;	/**< live: start-up volume, dB (default 0); a state file's wins */
	double volume_limit_db; /**< live: the most any volume request gets, dB (default 0) */
	char *state_file;	/**< live: where the last volume and mute are kept; NULL = none */
	char *control_socket;	/**< live: the control API's Unix socket (docs/api.md); NULL = default */
	int control_port;	/**< live: the control API's WebSocket port; 0 = no WebSocket */
	char *control_address;	/**< live: the WebSocket's address; NULL = 127.0.0.1 */
	/** live: web origins ("http://host:port") besides the daemon's own page whose pages may
	 *  use the WebSocket (docs/api.md, "Who may connect"); validated */
	char **control_allowed_origins;
	uint32_t n_control_allowed_origins;
	char *control_key_file; /**< live: the control key's file (docs/api.md); NULL = the default */
	char *text;		/**< the text it was parsed from (the file's, at load) */
	struct gf_audio_endpoint input;
	struct gf_audio_endpoint output;
	enum gf_phase phase;	  /**< top-level phase; GF_PHASE_LINEAR when unset */
	int live;		  /**< loaded for live mode (resolves GF_PHASE_AUTO); set by the caller */
	const char *program_file; /**< offline: the file to be filtered (denoise designs measure it);
				     set by the caller, not owned; NULL = unknown */
	/** live: the mains hum the daemon found in the running input (hum_track.h), the one notches
	 * with freq_hz = "auto" are built at; f0_hz 0: none found (they pass the audio unchanged) */
	struct gf_hum live_hum;
	int hum_followed; /**< live_hum is the daemon's (gf_config_source.hum was set) */

	char **files; /**< every file the config reads (itself first): watched for reload */
	uint32_t n_files;

	struct gf_config_filter *filters; /**< private */
	uint32_t n_filters;
	char **chain; /**< filter names applied to every channel */
	uint32_t n_chain;
	struct gf_config_route *routes; /**< private; NULL = chain on every channel */
	uint32_t n_routes;
	struct gf_config_mixer *mixer; /**< private; NULL = no mixer (gf_config_mixer_outputs) */
	struct gf_config_priv *priv;   /**< private: source lines for build-time messages */
};

/** Where a run's configuration comes from, with the command line's overrides. */
struct gf_config_source {
	const char *path; /**< NULL = the built-in default */
	int backend_set;  /**< 1: backend overrides the file's */
	enum gf_backend_kind backend;
	int algo_set; /**< 1: algo overrides the file's */
	enum gf_algo algo;
	int live; /**< 1: live mode (copied to gf_config.live) */
	/** The daemon: the hum found so far in the running input (copied to gf_config.live_hum;
	 * f0_hz 0: none yet). NULL: nobody follows it (offline, --check-config). */
	const struct gf_hum *hum;
	/** Non-NULL: parse this text as if it were the file at @c path (relative
	 * paths and includes against its folder); needs @c path. */
	const char *text;
};

/**
 * Load @p src: its file (gf_config_load) or the built-in default, then its
 * overrides. @return as gf_config_load
 */
int gf_config_load_source(const struct gf_config_source *src, struct gf_config **out, struct gf_errbuf *eb);

/**
 * Parse and validate @p path (syntax, types, ranges, names, that named files
 * exist). Unknown settings are warnings (gf_warn). Rate-dependent checks and
 * the files' contents are checked in gf_config_build.
 * @return 0, GF_E_IO (cannot open @p path), GF_E_CONFIG or GF_E_NOMEM.
 */
int gf_config_load(const char *path, struct gf_config **out, struct gf_errbuf *eb);

/**
 * gf_config_load of @p text as if read from @p path (relative paths and
 * includes against its folder): the control API's SetConfig and PatchConfig.
 */
int gf_config_load_text(const char *path, const char *text, struct gf_config **out, struct gf_errbuf *eb);

/**
 * gf_config_load_text for a control API client that is not the owner
 * (docs/api.md, "What a client may change"): @p disk is the config file on
 * disk, the owner's word. Includes are opened only where they resolve under
 * the config's folder or a folder @p disk reads from; then
 * gf_config_policy_check. @return as gf_config_load_text; a refusal is
 * GF_E_CONFIG with a message naming the setting.
 */
int gf_config_load_text_guest(const char *path, const char *text, const struct gf_config *disk,
			      struct gf_config **out, struct gf_errbuf *eb);

/**
 * A guest's config @p req against the file on disk @p disk: where the daemon
 * listens (control_socket, control_port, control_address, status_socket),
 * state_file, control_key_file and output.file as @p disk has them; max_taps
 * and volume_limit_db no higher; every file it reads under the config's
 * folder or a folder @p disk reads from. @return 0 or GF_E_CONFIG (the setting named in @p eb)
 */
int gf_config_policy_check(const struct gf_config *disk, const struct gf_config *req, struct gf_errbuf *eb);

struct config_t;
/**
 * libconfig's parse of @p text as if read from @p path (includes against its
 * folder), through the same include checks as gf_config_load: the control
 * API's PatchConfig edits the result. @return 0 with @p cfg to
 * config_destroy, or a negative error (cfg destroyed) with the message.
 */
int gf_config_parse_text(struct config_t *cfg, const char *text, const char *path, struct gf_errbuf *eb);

/** Parse from a string (tests, fuzzing); relative paths resolve against @p base_dir. */
int gf_config_load_string(const char *text, const char *base_dir, struct gf_config **out,
			  struct gf_errbuf *eb);

/**
 * The built-in default: a denoise chain (mains hum notches where hum is
 * measured in the input file, hiss low-pass, then the noise suppressor, whose
 * zero-phase high-pass removes rumble).
 */
int gf_config_default(struct gf_config **out);

/** gf_config_load(@p path), or the built-in default when @p path is NULL (no -c given). */
int gf_config_load_or_default(const char *path, struct gf_config **out, struct gf_errbuf *eb);

/** Accepts NULL. */
void gf_config_free(struct gf_config *c);

/* ---- the stages after the FIR, as the configuration gives them (config_stages.c) ---- */

/** The suppressor of one channel's chain, as the configuration gives it. */
struct gf_config_suppress {
	const char *name;    /**< the filter's name */
	double reduction_db; /**< the most a bin is attenuated */
	double highpass_hz;  /**< its zero-phase high-pass's -6 dB point; 0: none */
	const char *noise;   /**< the noise sample seeding the estimate; NULL: none */
	int bypass;	     /**< 1: its gain held at 1 (bypass = true) */
};

/** The least a suppressor's reduction_db and the neural stage's atten_lim_db may be, dB, in the
 * config and over the control API (their largest: GF_SUPPRESS_MAX_REDUCTION_DB and
 * GF_NEURAL_MAX_ATTEN_LIM_DB); 1 dB is the least an attenuation limit that cuts anything means. */
#define GF_CONFIG_MIN_REDUCTION_DB 0.0
#define GF_CONFIG_MIN_ATTEN_LIM_DB 1.0

/** The neural stage of one channel's chain (design = "deepfilter"), as the configuration gives it. */
struct gf_config_neural {
	const char *name;	 /**< the filter's name */
	const char *model;	 /**< the model file */
	double atten_lim_db;	 /**< the most a bin is cut (its depth) */
	double post_filter_beta; /**< 0: the post-filter off */
	int reference; /**< 1: runtime = "reference" (libdeepfilter); 0: the engine's own inference */
	int bypass;    /**< starts bypassed */
};
/** 1 when any used chain has a suppressor or a neural stage (the stages after the FIR, which
 * gf_config_suppress_new builds). Any thread. */
int gf_config_has_suppress(const struct gf_config *c);

/** 1 and @p out filled when audio channel @p ch's chain has a neural stage, else 0. Any thread. */
int gf_config_neural_of(const struct gf_config *c, uint32_t ch, struct gf_config_neural *out);

/** 1 and @p out filled when audio channel @p ch's chain has a suppressor, else 0. Any thread. */
int gf_config_suppress_of(const struct gf_config *c, uint32_t ch, struct gf_config_suppress *out);

/**
 * 1 when a notch with freq_hz = "auto" has its hum removed in the suppressors' frames (live, where
 * every chain holding it has a suppressor: docs/config.md), not as an FIR: the daemon then hands a
 * new hum set to the running suppressors (gf_config_suppress_set_hum) instead of reloading. Any
 * thread.
 */
int gf_config_hum_in_suppressor_any(const struct gf_config *c);

/**
 * 1 when a filter is measured from the file being filtered (design = "denoise"
 * with the input's spectrum, a notch with freq_hz = "auto"): offline batches
 * then build the filters per file, not once per (rate, channels). Any thread.
 */
int gf_config_reads_input(const struct gf_config *c);

/**
 * 1 when a filter is a notch with freq_hz = "auto" (live, the daemon then
 * follows the hum in the input), and the highest harmonic any of them looks
 * at in @p max_harmonic; else 0. Any thread.
 */
int gf_config_hum_auto(const struct gf_config *c, uint32_t *max_harmonic);

/** Whether the chains are made minimum phase (the top-level phase, auto resolved by c->live). */
int gf_config_min_phase(const struct gf_config *c);

/** Fewest audio channels the routes need (highest routed channel + 1), a mixer's inputs; 0 without
 * either. */
uint32_t gf_config_min_channels(const struct gf_config *c);

/**
 * A mixer (`mixer = {...}`): the channels it reads and writes; 0 and 0 without one. The filter
 * set gf_config_build gives is then a mixer (filter_set.h): its input must have @p inputs
 * channels and its output has @p outputs. Any thread.
 */
void gf_config_mixer_channels(const struct gf_config *c, uint32_t *inputs, uint32_t *outputs);

#endif
