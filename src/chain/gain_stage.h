/**
 * @file gain_stage.h
 * Volume, mute and level meters on the live worker, after the engine and the
 * noise suppressor.
 *
 * The control thread publishes a target (a linear gain, mute) with one atomic
 * store; the worker ramps the gain to it linearly, sample by sample, over
 * GF_GAIN_RAMP_MS, so that a volume change, a mute and an unmute never step
 * (no click): one sample's gain changes by at most |new - old| / ramp frames.
 *
 * Meters, per channel: the capture side (the worker's input) and the
 * playback side (its output, after the volume): peak and the sum of squares,
 * and the playback samples beyond +-1.0 (clipped). The worker adds each
 * block's figures in O(frames x channels), no allocation, no lock: peaks by
 * an atomic maximum per reader, sums and frames as running totals under a
 * sequence lock that the control thread reads without ever making the
 * worker wait. A reader (gf_gain_reader) gets the peak since its previous
 * read and the RMS over the frames since then, so the status socket and the
 * control API each see their own intervals. The live stream's own figures
 * (gf_live_stats: the output peak, the clipped samples) come from the same
 * meters, so the worker scans its output once.
 *
 * Threads: gf_gain_stage_process() is the worker's (real-time safe; one
 * worker at a time); everything else is the control thread's.
 */
#ifndef GPUFIR_GAIN_STAGE_H
#define GPUFIR_GAIN_STAGE_H

#include <stdint.h>

#include "error.h"

/** Length of the gain ramp after any change of volume or mute, ms. */
#define GF_GAIN_RAMP_MS 30.0
/** Most channels a stage meters and scales (the configuration's limit). */
#define GF_GAIN_MAX_CHANNELS 1024u
/** Readers with intervals of their own: GF_GAIN_READER_STATUS, GF_GAIN_READER_API. */
#define GF_GAIN_READERS 2u
#define GF_GAIN_READER_STATUS 0u
#define GF_GAIN_READER_API 1u

struct gf_gain_stage;

/**
 * A stage for up to @p max_channels channels at @p rate Hz, starting at
 * @p gain (linear, >= 0) and @p mute, without a ramp. Control thread.
 * @return 0, GF_E_INVAL (a rate, channel count or gain out of range) or GF_E_NOMEM
 */
int gf_gain_stage_new(struct gf_gain_stage **out, uint32_t max_channels, uint32_t rate, float gain, int mute,
		      struct gf_errbuf *eb);
/** Accepts NULL. Only once no worker runs it. */
void gf_gain_stage_free(struct gf_gain_stage *g);

/** Publish a new target: the worker ramps to it from its next block. Control thread. */
void gf_gain_stage_set(struct gf_gain_stage *g, float gain, int mute);
/** Frames of the ramp at the stage's rate. Any thread. */
uint32_t gf_gain_stage_ramp_frames(const struct gf_gain_stage *g);
/** The rate it was made for, Hz. Any thread. */
uint32_t gf_gain_stage_rate(const struct gf_gain_stage *g);

/**
 * The worker, once per block: meter @p in (the capture side, @p frames frames
 * of @p channels interleaved; NULL: not metered), scale @p out in place by the
 * ramped gain, meter it (the playback side). Channels beyond the stage's
 * maximum pass unscaled and unmetered. Real-time safe.
 */
void gf_gain_stage_process(struct gf_gain_stage *g, const float *in, float *out, uint32_t frames,
			   uint32_t channels);
/**
 * As gf_gain_stage_process() for a stream whose output has other channels
 * than its input (a mixer: a crossover, a downmix): the capture side meters
 * @p in_channels, the playback side and the volume @p out_channels.
 * Real-time safe.
 */
void gf_gain_stage_process_io(struct gf_gain_stage *g, const float *in, uint32_t in_channels, float *out,
			      uint32_t out_channels, uint32_t frames);

/** A reader's state between reads: zero it (or gf_gain_reader_init) before the first. */
struct gf_gain_reader {
	uint64_t id;	 /**< the stage it last read (0: none) */
	uint64_t frames; /**< the stage's frame total at the last read */
	double *sumsq; /**< 2 x GF_GAIN_MAX_CHANNELS totals at the last read (allocated by the first read) */
};
/** Free what a reader holds. */
void gf_gain_reader_free(struct gf_gain_reader *r);

/** One reader's interval: linear values, per channel. */
struct gf_gain_levels {
	uint32_t channels; /**< channels reported: the more of the two sides (0 before the first block) */
	uint32_t capture_channels;  /**< of them, metered on the capture side (the stream's input) */
	uint32_t playback_channels; /**< of them, metered on the playback side (its output); a side's
				       channels beyond its own count read as silence */
	uint64_t frames;	    /**< frames in the interval (0: no block since the previous read) */
	float *capture_peak, *capture_rms;   /**< capture side (the stream's input) */
	float *playback_peak, *playback_rms; /**< playback side, after the volume */
	uint64_t *clipped;		     /**< playback samples beyond +-1.0 since the last reset */
	uint64_t clipped_total;		     /**< the sum over the channels */
	float storage[4 * GF_GAIN_MAX_CHANNELS];
	uint64_t clipped_storage[GF_GAIN_MAX_CHANNELS];
};

/**
 * Read reader @p which's interval into @p out (which must stay where it is:
 * its arrays point into it) and start the next one: the peaks since @p r's
 * previous read, the RMS over the frames since then. Control thread; never
 * makes the worker wait. @return 0, GF_E_INVAL (@p which) or GF_E_NOMEM
 */
int gf_gain_stage_levels(struct gf_gain_stage *g, unsigned which, struct gf_gain_reader *r,
			 struct gf_gain_levels *out);
/** Clipped samples since the last reset, all channels. Control thread. */
uint64_t gf_gain_stage_clipped(const struct gf_gain_stage *g);
/**
 * Clipped samples since the stage started, all channels: the same counts,
 * which gf_gain_stage_clipped_reset() does not touch. Control thread.
 */
uint64_t gf_gain_stage_clipped_total(const struct gf_gain_stage *g);
/**
 * The playback peak over all channels (linear) since the previous call, and
 * start the next interval. One caller (the live stream's stats); control thread.
 */
float gf_gain_stage_peak_take(struct gf_gain_stage *g);
/** Start the clipped counts again from 0. Control thread. */
void gf_gain_stage_clipped_reset(struct gf_gain_stage *g);

#endif
