/**
 * @file live.h
 * Live streaming: PortAudio capture -> input ring -> worker thread running the
 * engine -> output ring -> PortAudio playback and/or a WAV writer thread.
 *
 * Control thread: new/start/stop/free/get_stats/poll. The PortAudio callback
 * touches only rings and atomic counters; the worker thread calls
 * gf_engine_process() once per block and never allocates or locks.
 */
#ifndef GPUFIR_LIVE_H
#define GPUFIR_LIVE_H

#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "engine.h"
#include "error.h"

struct gf_live;

struct gf_live_stats {
	uint64_t blocks;             /**< blocks filtered */
	uint64_t input_overflows;    /**< capture frames dropped: input ring full */
	uint64_t output_underflows;  /**< playback frames filled with silence: output ring empty */
	uint64_t late_blocks;        /**< blocks whose processing exceeded the block period */
	uint64_t device_xruns;       /**< xrun flags reported by PortAudio */
	uint64_t record_errors;      /**< WAV recording write failures */
	double block_us_median;      /**< engine time per block, recent window */
	double block_us_p99;
	double block_us_max;
	float peak;                  /**< output peak since the last get_stats, linear */
	uint64_t clipped;            /**< output samples beyond +-1.0 */
	uint32_t latency_frames;     /**< input-to-output delay, constant */
	uint32_t sample_rate;
	uint32_t channels;
	int running;                 /**< 1 while audio flows */
	int device_error;            /**< last device error code (0 = healthy) */
};

/** Open devices and/or recording file and allocate everything; audio not yet running. */
int gf_live_new(struct gf_live **out, const struct gf_config *cfg, struct gf_engine *engine,
		struct gf_errbuf *eb);
/** Start audio. */
int gf_live_start(struct gf_live *l, struct gf_errbuf *eb);
/** Stop audio after draining what was captured; closes the recording cleanly. */
void gf_live_stop(struct gf_live *l);
/** Accepts NULL. */
void gf_live_free(struct gf_live *l);
/** Snapshot of counters (resets the peak). */
void gf_live_get_stats(struct gf_live *l, struct gf_live_stats *s);
/** Periodic health check from the control thread: 0 while healthy, else the device error. */
int gf_live_poll(struct gf_live *l);
/** Print audio devices (index, name, host API, channels, default rate) to @p out. */
int gf_live_list_devices(FILE *out);

#endif
