/**
 * @file chain.h
 * The processing chain as the configuration gives it: one builder from a
 * parsed config and the facts of the stream it runs in (rate, channels,
 * backend, threads) to what runs there: the filter set, the engine's
 * parameters, the suppressor bank (with the neural stage) and the gain
 * stage's shape. Every mode builds through it: the daemon's reload, offline
 * files and batches, and the filter tools; so a setting means one thing
 * wherever it is read.
 *
 * A reload compares the running chain's config with the new one
 * (gf_chain_diff) and learns per stage whether the new stage is swapped in
 * with a crossfade, needs the stream rebuilt (a restart), or is kept.
 *
 * Control or build thread: the builders read files, design filters and
 * allocate; gf_chain_diff only compares.
 */
#ifndef GPUFIR_CHAIN_H
#define GPUFIR_CHAIN_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "engine.h"
#include "error.h"
#include "filter_set.h"
#include "suppress_bank.h"

/** Live sample rate when the config sets none. */
#define GF_CHAIN_DEFAULT_RATE 48000u
/** Live engine max_taps when the config sets none: room for long reloads without a restart. */
#define GF_CHAIN_DEFAULT_MAX_TAPS 262144u

/** The stream a chain runs in: what the engine's parameters are weighed for. */
enum gf_chain_mode {
	GF_CHAIN_LIVE = 0, /**< blocks under a deadline, filters swapped with a crossfade */
	GF_CHAIN_OFFLINE,  /**< chunks without a deadline, a failed chunk redone on the CPU */
};

/** What the config alone does not say: the facts of the stream the chain is built for. */
struct gf_chain_facts {
	enum gf_chain_mode mode;
	uint32_t rate;		      /**< Hz: the filters are designed at it */
	uint32_t channels;	      /**< input channels: the filter set's and the engine's */
	uint32_t out_channels;	      /**< channels the suppressor bank runs over */
	uint32_t max_block;	      /**< offline: frames a call (the chunk); live: the config's block */
	enum gf_backend_kind backend; /**< GF_BACKEND_AUTO: the config's */
	int gpu_index;		      /**< < 0: the config's */
	uint32_t threads;	      /**< offline: the suppressor's helper threads (0: one per CPU) */
	uint64_t job_samples;	      /**< offline, backend auto: the job's frames x channels (0: unknown) */
	uint32_t job_cpu_threads;     /**< offline, backend auto: the CPU threads the job spreads over */
};

/**
 * The filter set of @p c at @p f's rate and input channels (gf_config_build_ex; @p info may be
 * NULL), every coefficient finite. @return 0 or gf_config_build_ex's errors (GF_E_NONFINITE with
 * the config named)
 */
int gf_chain_filters(const struct gf_config *c, const struct gf_chain_facts *f, struct gf_filter_set **fs,
		     struct gf_config_build_info *info, struct gf_errbuf *eb);

/**
 * The engine's parameters for @p c in @p f's stream, with a first filter of @p taps taps: the one
 * mapping of backend, algo, GPU, block, max_taps, crossfade and deadline (live), or of the chunk,
 * the retry and the job's size (offline). Any thread.
 */
void gf_chain_engine_params(const struct gf_config *c, const struct gf_chain_facts *f, uint32_t taps,
			    struct gf_engine_params *p);

/** The live engine's per-block deadline: gpu_deadline_ms, or two block periods when 0. Any thread. */
uint32_t gf_chain_deadline_us(const struct gf_config *c);

/**
 * The suppressor bank of @p c (with its neural stage; *out NULL where the chains have neither)
 * over @p f's out_channels, after @p e: on the GPU where @p e runs on CUDA (NULL: the CPU), its
 * waits bounded by the live deadline, or offline spread over f->threads. Reads noise samples and
 * loads models: seconds. @return 0 or gf_config_suppress_new_ex's errors
 */
int gf_chain_suppressor(const struct gf_config *c, const struct gf_chain_facts *f, const struct gf_engine *e,
			struct gf_suppress_bank **out, struct gf_errbuf *eb);

/** The gain stage's shape for @p c live: the channels it meters (the more of capture's and
 * playback's, at most GF_GAIN_MAX_CHANNELS) and its rate. Any thread. */
void gf_chain_gain_shape(const struct gf_config *c, uint32_t in_channels, uint32_t out_channels,
			 uint32_t *channels, uint32_t *rate);

/** What a reload does with one stage of the running chain. */
enum gf_chain_action {
	GF_CHAIN_KEEP = 0, /**< the running stage runs on (its live settings may change) */
	GF_CHAIN_SWAP,	   /**< the new stage replaces it with a crossfade, audio running */
	GF_CHAIN_RESTART,  /**< the stream is rebuilt around the new stage */
};

/** The stages of a chain, in the order audio crosses them (the stream itself first). */
enum gf_chain_stage {
	GF_CHAIN_STREAM = 0, /**< devices, rate, block, latency */
	GF_CHAIN_FILTERS,    /**< the filter set and the engine that runs it */
	GF_CHAIN_SUPPRESSOR, /**< the suppressors and the neural stage */
	GF_CHAIN_GAIN,	     /**< volume, mute and meters */
	GF_CHAIN_STAGES
};

/** A reload's plan: per stage, what it does and why (the settings that differ, or ""). */
struct gf_chain_diff {
	enum gf_chain_action action[GF_CHAIN_STAGES];
	uint8_t cause[GF_CHAIN_STAGES]; /**< 1: this stage's own settings need the restart */
	char why[GF_CHAIN_STAGES][400];
};

/**
 * Compare the running chain's config @p a with the new @p b (@p out_channels: the new one's
 * playback channels, where the suppressors run) and fill @p d: the stream and the engine restart
 * when a stream setting or an engine parameter differs (devices, host APIs, channels, rate,
 * block, recording file, latency slack; backend, algo, GPU, gpu_path, max_taps, deadline,
 * crossfade); the suppressor when gf_config_suppress_differs says so; any of these rebuilds every
 * stage with the stream. Otherwise the filters are swapped, the suppressor kept (its live
 * settings follow the new config) and the gain stage kept (volume_db is a request to it). Any
 * thread.
 * @return 1 when any stage restarts, else 0
 */
int gf_chain_diff(const struct gf_config *a, const struct gf_config *b, uint32_t out_channels,
		  struct gf_chain_diff *d);

/** The restart's reasons of @p d, the causing stages', joined by ", " into @p why ("" when none). */
void gf_chain_diff_why(const struct gf_chain_diff *d, char *why, size_t len);

/** One line for stage @p s of @p d: "suppressor: restart (suppressor added)". */
void gf_chain_diff_line(const struct gf_chain_diff *d, enum gf_chain_stage s, char *line, size_t len);

/** The stage's name ("stream", "filters", "suppressor", "gain") and the action's ("keep", ...). */
const char *gf_chain_stage_name(enum gf_chain_stage s);
const char *gf_chain_action_name(enum gf_chain_action a);

#endif
