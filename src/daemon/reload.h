/**
 * @file reload.h
 * Configuration (re)loading for the live daemon: load and validate the file,
 * apply the command line's overrides, build its filters, and either swap them
 * into the running engine or build the engine a restarted stream runs on.
 *
 * All-or-nothing: on any failure the running filter, engine and stream are
 * untouched and the result text says why ("reload failed: FILE:LINE: ...").
 *
 * The daemon's one reload path: its build thread runs gf_reload_job_run (reads
 * files, designs filters, allocates, creates engines), its control thread
 * gf_reload_job_next and gf_reload_job_swap (never wait).
 */
#ifndef GPUFIR_RELOAD_H
#define GPUFIR_RELOAD_H

#include <stdatomic.h>
#include <stdint.h>

#include "chain.h"
#include "config.h"
#include "engine.h"
#include "error.h"
#include "suppress_bank.h"

/** Live channel count when the config sets none. */
#define GF_RELOAD_DEFAULT_CHANNELS 2u

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
 * @return 0, GF_E_NOMEM, or GF_E_CONFIG for any other failure (a missing or
 * unreadable file too: at start-up that is exit status 6, not configured)
 */
int gf_reload_load_config(const struct gf_config_source *src, struct gf_config **out, struct gf_errbuf *eb);

/** Engine channel count for @p c: its input, the capture's. */
uint32_t gf_reload_channels(const struct gf_config *c);
/** The engine's output channels for @p c: playback's and the recording's (a mixer's outputs). */
uint32_t gf_reload_out_channels(const struct gf_config *c);

/** The live stream's facts for @p c's chain (chain.h): its rate and channels, the engine on
 * the CPU backend if @p force_cpu, else on the config's. */
void gf_reload_facts(const struct gf_config *c, int force_cpu, struct gf_chain_facts *f);

/** Swap retries: a built filter waiting for the running crossfade is tried this often. */
#define GF_RELOAD_SWAP_RETRY_MS 5
/** ... and for the crossfade's length plus this long, then the reload fails GF_E_BUSY. */
#define GF_RELOAD_SWAP_GRACE_MS 1000

/**
 * One reload as the daemon runs it, start-up included (a reload with nothing
 * running). The build thread runs the job (gf_reload_job_run); the control
 * thread then asks what to do with it (gf_reload_job_next) and swaps its
 * filter in (gf_reload_job_swap) or restarts the stream on its engine. The
 * inputs are set by gf_reload_job_init and only read while the job runs.
 */
struct gf_reload_job {
	/* inputs */
	const struct gf_config_source *src; /**< the config to load; NULL: an engine for @c running */
	const struct gf_config *running;    /**< running config (NULL: none); kept by the caller until done */
	int engine_running;		    /**< a stream runs: a compatible config is swapped in */
	int force_cpu;			    /**< engines on the CPU backend (a stuck worker was abandoned) */
	/* outputs */
	_Atomic(struct gf_config *) loaded; /**< cfg once loaded: read-only from then on, any thread */
	int err;			    /**< 0 or the GF_E_* of a failure (r says why) */
	struct gf_config *cfg;		    /**< the loaded config (also on failure, if it loaded) */
	struct gf_filter_set *fs;	    /**< its filters: swapped in, or the engine's */
	struct gf_engine *engine;	    /**< RESTART: the new engine */
	struct gf_suppress_bank *suppress;  /**< RESTART: the new stream's noise suppressor (NULL: none) */
	int engine_cpu;			    /**< @c engine was built with force_cpu */
	char *plot_svg;			    /**< the filters' response (response_svg.h) where the control
						 API has a WebSocket to serve it, else NULL */
	size_t plot_len;
	struct gf_reload_result r; /**< outcome and text */
	int64_t swap_until_ms;	   /**< gf_reload_job_swap's deadline; 0 before its first try */
};

/** What the control thread does next with a finished job (gf_reload_job_next). */
enum gf_reload_next {
	GF_RELOAD_NEXT_REPORT,	/**< it failed: report j->r; nothing changes */
	GF_RELOAD_NEXT_SWAP,	/**< gf_reload_job_swap into the running engine */
	GF_RELOAD_NEXT_RESTART, /**< restart the stream with j->cfg and j->engine */
	GF_RELOAD_NEXT_ENGINE,	/**< run the job again, off the control thread: it needs an engine now */
};

/**
 * Set up @p j: load @p src and decide against @p running (@p engine_running:
 * a stream runs on it); @p src NULL: build an engine for @p running only
 * (replacing an engine a stuck worker holds). Engines on the CPU backend if
 * @p force_cpu.
 */
void gf_reload_job_init(struct gf_reload_job *j, const struct gf_config_source *src,
			const struct gf_config *running, int engine_running, int force_cpu);

/**
 * The build thread's whole job, all-or-nothing: load and validate the config
 * (live defaults filled in, then published in j->loaded), build its filter set
 * at its sample rate (NaN/Inf rejected), decide APPLIED (only the filter
 * changes: a running suppressor runs on) or RESTART (stream settings or the
 * suppressor differ, or no stream runs) from the chains' diff (gf_chain_diff,
 * chain.h: logged one line per stage), and for a RESTART create the new
 * engine and suppressor. Run again, it builds only what is missing
 * (the engine gf_reload_job_next asked for). Touches nothing but @p j; reads
 * j->src and j->running. Any thread, slow (files, FFTs, allocation).
 * @return j->err
 */
int gf_reload_job_run(struct gf_reload_job *j);

/**
 * What to do with a finished job, given the state now: a stream that went away
 * while it ran (@p stream_running 0) turns an APPLIED job into a RESTART, and
 * an engine built before a stuck worker forced the CPU backend (@p force_cpu)
 * is dropped; either way the job then needs an engine (GF_RELOAD_NEXT_ENGINE).
 * Control thread.
 */
enum gf_reload_next gf_reload_job_next(struct gf_reload_job *j, int stream_running, int force_cpu);

/**
 * One try at swapping j->fs into @p e, never waiting, and the one retry
 * policy for a previous swap still crossfading: GF_E_BUSY is retried (return
 * 1) until crossfade_ms + GF_RELOAD_SWAP_GRACE_MS after the first try at
 * @p now_ms, then the reload fails with it. Control thread.
 * @return 1: try again on a later pass; 0: done, j->r is APPLIED (the caller
 * takes j->cfg) or FAILED (the running filter is unchanged)
 */
int gf_reload_job_swap(struct gf_reload_job *j, struct gf_engine *e, int64_t now_ms);

/** Free what @p j still owns (config, filter set, engine, suppressor). */
void gf_reload_job_clear(struct gf_reload_job *j);

/** The reason in a failure's text, without "reload failed: ". */
const char *gf_reload_reason(const struct gf_reload_result *r);

#endif
