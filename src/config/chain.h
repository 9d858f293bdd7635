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
 * Control or build thread: the builders read files, design filters and
 * allocate.
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

#endif
