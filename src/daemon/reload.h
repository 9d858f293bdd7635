/**
 * @file reload.h
 * Configuration (re)loading for the live daemon: load and validate the file,
 * apply the command line's overrides, and either swap the new filter into the
 * running engine or report that the stream must be restarted.
 *
 * All-or-nothing: on any failure the running filter, engine and stream are
 * untouched and the result text says why ("reload failed: FILE:LINE: ...").
 *
 * Control thread, except gf_reload_prepare (the daemon's build thread): reads
 * files, designs filters, allocates, may wait briefly for a previous swap to
 * finish.
 */
#ifndef GPUFIR_RELOAD_H
#define GPUFIR_RELOAD_H

#include <stdint.h>

#include "config.h"
#include "engine.h"
#include "error.h"

/** Live sample rate when the config sets none. */
#define GF_RELOAD_DEFAULT_RATE 48000u
/** Live channel count when the config sets none. */
#define GF_RELOAD_DEFAULT_CHANNELS 2u
/** Engine max_taps when the config sets none: room for long reloads without a restart. */
#define GF_RELOAD_DEFAULT_MAX_TAPS 262144u

enum gf_reload_outcome {
	GF_RELOAD_APPLIED = 0, /**< the new filter was swapped in (crossfade, no interruption) */
	GF_RELOAD_RESTART,     /**< valid, but stream settings changed: restart with the new config */
	GF_RELOAD_FAILED,      /**< invalid or failed to apply: nothing changed */
};

struct gf_reload_result {
	enum gf_reload_outcome outcome;
	int err;	/**< 0 or the GF_E_* code of a failure */
	uint32_t taps;	/**< taps of the new filter (APPLIED) */
	char text[700]; /**< one line for logs, STATUS= and the status socket */
};

/**
 * Load @p src (gf_config_load_source) and fill in live defaults (sample rate, channels), so the
 * result compares and builds the same way at start-up and on reload.
 */
int gf_reload_load_config(const struct gf_config_source *src, struct gf_config **out, struct gf_errbuf *eb);

/** Engine channel count for @p c. */
uint32_t gf_reload_channels(const struct gf_config *c);

/** Engine parameters for @p c and an initial filter of @p taps taps. */
void gf_reload_engine_params(const struct gf_config *c, uint32_t taps, struct gf_engine_params *p);
/** The engine's per-block deadline: gpu_deadline_ms, or two block periods when 0. Any thread. */
uint32_t gf_reload_deadline_us(const struct gf_config *c);

/**
 * Settings that need a stream restart (devices, host APIs, channels, sample
 * rate, block size, recording file, backend, algorithm, GPU, max_taps,
 * crossfade). @return 1 and a description ("sample rate 48000 -> 44100") in
 * @p why if any differ, else 0.
 */
int gf_reload_needs_restart(const struct gf_config *running, const struct gf_config *next, char *why,
			    size_t why_len);

/**
 * Reload: load @p src; if its stream settings equal @p running's,
 * build the filter set and swap it into @p e (waiting up to @p busy_wait_ms
 * for a previous swap's crossfade to finish). On APPLIED and RESTART the new
 * config is returned in @p *next (caller frees it; for RESTART the caller
 * performs the restart); on FAILED *next is NULL. @p e NULL (no stream
 * running) makes every valid config a RESTART.
 * @return r->err
 */
int gf_reload(const struct gf_config_source *src, const struct gf_config *running, struct gf_engine *e,
	      uint32_t busy_wait_ms, struct gf_config **next, struct gf_reload_result *r);

/**
 * The slow half of gf_reload, for any thread: load @p src and build its filter
 * set, then decide: r->outcome GF_RELOAD_APPLIED means "swap @p *fs into the
 * running engine" (gf_reload_swap), GF_RELOAD_RESTART that the stream must
 * restart (@p engine_running 0, or stream settings differ from @p running's);
 * r->text says why. @p running may be NULL when @p engine_running is 0; it is
 * only read, and must not change or be freed meanwhile. On success the caller
 * owns @p *next and @p *fs; on failure both are NULL and r says why.
 * Touches nothing the control thread uses. @return r->err
 */
int gf_reload_prepare(const struct gf_config_source *src, const struct gf_config *running, int engine_running,
		      struct gf_config **next, struct gf_filter_set **fs, struct gf_reload_result *r);

/**
 * gf_reload_prepare's build and decision for @p c, loaded already (and only
 * read here: another thread may read it meanwhile). Any thread.
 */
int gf_reload_build(const struct gf_config *c, const struct gf_config *running, int engine_running,
		    struct gf_filter_set **fs, struct gf_reload_result *r);

/**
 * The fast half: swap @p fs (built for @p next) into @p e, waiting up to
 * @p busy_wait_ms for a previous swap's crossfade. Control thread. Fills @p r
 * (APPLIED or FAILED). @return r->err
 */
int gf_reload_swap(struct gf_engine *e, const struct gf_config *next, const struct gf_filter_set *fs,
		   uint32_t busy_wait_ms, struct gf_reload_result *r);

#endif
