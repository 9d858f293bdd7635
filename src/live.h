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
	uint64_t output_overflows;   /**< output frames dropped: output ring full (drifting clocks) */
	uint64_t record_dropped;     /**< recorded frames dropped: disk slower than audio */
	uint64_t record_frames;      /**< frames written to the recording */
	uint64_t engine_errors;      /**< blocks whose gf_engine_process failed (output muted) */
	uint64_t capture_frames;     /**< frames the capture device delivered since start */
	uint32_t device_period;      /**< frames per capture callback (0 until the first one) */
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
/**
 * Periodic health check from the control thread: 0 while healthy, else the
 * device error (GF_E_AUDIO: the stream stopped — device unplugged, audio
 * server gone — or no audio for 2 s). After an error, gf_live_stop() +
 * gf_live_free() and a later gf_live_new() start over with a fresh device scan.
 */
int gf_live_poll(struct gf_live *l);

/**
 * Frames captured since start (including any dropped on overflow): recorded
 * frame i and, with playback, the frame played latency_frames after capture
 * position i both come from capture position i. Any thread; RT-safe.
 */
uint64_t gf_live_capture_position(const struct gf_live *l);
/** Print audio devices (index, name, host API, channels, default rate) to @p out. */
int gf_live_list_devices(FILE *out);

#endif
