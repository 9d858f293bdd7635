/**
 * @file live.h
 * Live streaming: PortAudio capture -> input ring -> worker thread running the
 * engine -> output ring -> PortAudio playback and/or a WAV writer thread.
 *
 * Modes, from gf_live_params: input device + playback device (output.device,
 * or the default device when there is neither an output device nor a
 * recording); input device + WAV recording only (record_path without
 * output.device); or both.
 * Capture and playback that share a clock (one device, or a JACK server) run
 * as one full-duplex stream, whose latency is constant and sample-exact;
 * otherwise as two streams, whose clocks drift: playback then reads through
 * an adaptive resampler that a delay-locked loop keeps at the target delay
 * (live_clock.c; the measured ratio is in the stats). Channels:
 * input.channels (default 2) captured; the engine's output channels (as many,
 * or a mixer's M: a crossover, a downmix) played and recorded.
 *
 * Latency: a frame captured at stream position p is played at position
 * p + latency_frames (two blocks when the device period equals the block: one
 * for the work, one of slack; see docs/live.md), derived at the first callback
 * and kept through underruns: a late block is dropped where playback already
 * passed, never delays the rest. A new device period (a PipeWire quantum
 * change, `jack_bufsize`) or, with latency_slack "auto", an underrun
 * re-derives it: one short glitch (silence or a skip), then a constant delay
 * again at the new latency (resyncs counts them).
 * The recording is aligned with the capture: file frame i is capture position i.
 *
 * Layer stream (src/stream/: devices, callbacks, worker, rings, recorder,
 * pinned memory, real-time set-up): this header is its entry point. It
 * stands on engine and base; it knows nothing of the configuration file
 * (the app fills gf_live_params). The callbacks and the worker never block,
 * allocate or lock; the functions below are the control thread's and may.
 *
 * Threads: every function here runs on the control thread, except
 * gf_live_capture_position() and gf_live_restart_required() (any thread).
 * The PortAudio callback touches only rings and atomic counters; the worker
 * thread calls gf_engine_process() once per block, then the noise
 * suppressor on its output where there is one, then the gain stage (volume,
 * mute, meters) where there is one, and never allocates or
 * locks; the recorder thread writes the file. The engine must outlive the
 * gf_live; its process() runs on the worker while the stream runs.
 */
#ifndef GPUFIR_LIVE_H
#define GPUFIR_LIVE_H

#include <stdint.h>
#include <stdio.h>

#include "engine.h"
#include "error.h"
#include "input_tap.h"
#include "gain_stage.h"
#include "suppress_bank.h"

struct gf_live;

/** Most periods of slack: the config's limit, and where "auto" stops growing. */
#define GF_LIVE_SLACK_MAX 16u

/** One side of the stream. Its strings are read only during gf_live_new. */
struct gf_live_endpoint {
	const char *device;   /**< name substring or index as text; NULL = default device */
	const char *host_api; /**< PortAudio host API name substring; NULL = any */
	uint32_t channels;    /**< 0 = 2 (input) / the engine's output channels (output; if set, it
				   must equal them) */
};

/** What the stream is asked for; the app fills it from the configuration. */
struct gf_live_params {
	uint32_t sample_rate;	/**< Hz; 0 = the capture device's default rate */
	uint32_t block_frames;	/**< frames per engine block, 16..8192 */
	uint32_t latency_slack; /**< playback periods of slack beyond the tightest latency */
	int latency_slack_auto; /**< 1: start at 0 slack; after an underrun, twice the slack
				     that would have absorbed it, plus one (up to
				     GF_LIVE_SLACK_MAX); latency_slack is then ignored */
	struct gf_live_endpoint input;
	struct gf_live_endpoint output;
	const char *record_path; /**< WAV recording; NULL = none */
	/** The noise suppressor run on the worker after the engine (NULL: none).
	 * Made on the control thread, not owned; like the engine it must outlive
	 * the gf_live, and no one else may run it while the stream runs. */
	struct gf_suppress_bank *suppress;
	/** Where the worker copies each block's input, averaged to mono, for
	 * analysis on the control thread (input_tap.h; NULL: none). Not owned;
	 * it must outlive the gf_live. */
	struct gf_input_tap *tap;
	/** Volume, mute and meters, run on the worker last (gain_stage.h); the
	 * stats' output peak and clipped samples are its playback meters. Not
	 * owned; it must outlive the gf_live. NULL: a stage of the stream's own
	 * at unity gain, metering the output only. */
	struct gf_gain_stage *gain;
};

struct gf_live_stats {
	uint64_t blocks;	    /**< blocks filtered */
	uint64_t input_overflows;   /**< capture frames dropped: input ring full */
	uint64_t output_underflows; /**< playback frames filled with silence: output ring empty */
	uint64_t late_blocks;	    /**< blocks whose processing exceeded the block period */
	uint64_t late_blocks_swap;  /**< of those, blocks while a filter swap was in progress */
	/** Of late_blocks and late_blocks_swap: the host's. The worker never
	 * blocked during the block and its own CPU time fit in the period, so it
	 * was preempted or its (virtual) CPU was stolen. */
	uint64_t late_blocks_host;
	uint64_t late_blocks_swap_host;
	uint64_t device_xruns;	/**< xrun flags reported by PortAudio */
	uint64_t record_errors; /**< WAV recording write failures */
	double block_us_median; /**< engine time per block, recent window */
	double block_us_p99;
	double block_us_max;
	float peak;	  /**< output peak since the last get_stats, linear (the gain stage's) */
	uint64_t clipped; /**< output samples beyond +-1.0 since start (the gain stage's, never reset) */
	uint32_t latency_frames;  /**< input-to-output delay of the stream itself, constant */
	uint32_t suppress_frames; /**< the suppressor's latency on top of it (0: none): the sound
				       played (and recorded) lags by latency_frames + suppress_frames */
	uint32_t sample_rate;
	uint32_t channels;	   /**< captured: the engine's input */
	uint32_t out_channels;	   /**< played and recorded: the engine's output (a mixer's M) */
	int running;		   /**< 1 while audio flows */
	int device_error;	   /**< last device error code (0 = healthy) */
	uint64_t output_overflows; /**< output frames dropped: output ring full (drifting clocks) */
	uint64_t record_dropped;   /**< recorded frames dropped: disk slower than audio */
	uint64_t record_frames;	   /**< frames written to the recording */
	uint64_t engine_errors;	   /**< blocks whose gf_engine_process failed (output muted) */
	uint64_t capture_frames;   /**< frames the capture device delivered since start */
	uint32_t device_period;	   /**< frames of the latest capture callback (0 until the first one) */
	/* Why an underrun happened (docs/live.md): each as the extreme of the
	 * window since the previous get_stats, and as the worst since start. */
	double callback_gap_us_max; /**< longest interval between capture callbacks */
	double callback_gap_us_worst;
	double wake_us_max; /**< longest wait from a block's last capture callback to the worker */
	double wake_us_worst;
	/** Fewest frames still queued for playback when a block reached the
	 * output ring: latency_slack device periods normally, 0 just in time, negative when
	 * the block came late (an underrun). INT32_MAX: no block (or no playback). */
	int32_t margin_frames_min;
	int32_t margin_frames_worst;
	uint64_t resyncs;	    /**< latency re-derived while playing: period changes, slack steps */
	uint32_t latency_slack;	    /**< periods of slack in force (auto: grows after underruns) */
	int latency_slack_auto;	    /**< the slack is adaptive */
	uint32_t slack_step_missed; /**< auto: frames the underrun that caused the latest step missed */
	uint32_t slack_step_stall; /**< auto: the audio thread's longest stall beyond a period then, frames */
	/** auto: output underflow frames of the underruns that raised the slack,
	 * all steps: the glitches the adaptive slack costs while it learns the
	 * host, as against underflows it did not answer (at its cap, or fixed) */
	uint64_t slack_steps_missed;
	int resampling;		   /**< two clocks: playback reads through the adaptive resampler */
	double clock_ratio;	   /**< resampling: measured playback/capture rate ratio (1 otherwise) */
	double delay_error_frames; /**< resampling: latest delay minus its target, frames */
	/** resampling: capture frames skipped, or played as silence, to put a
	 * delay that had stepped away from its target back at once (an overrun,
	 * a stretch of playback lost) rather than by a change of pitch */
	uint64_t clock_skipped_frames, clock_inserted_frames;
	/** The worker's SCHED_FIFO priority; 0: none (not granted). Without it,
	 * the host's late blocks include preemption by this process's own
	 * threads (the control thread building a filter). */
	int worker_rt_prio;
	/** 1: all memory is locked (mlockall); 0: pages may fault in on the audio
	 * path (no privilege, or a sanitizer build). */
	int memory_locked;
};

/**
 * Open devices and/or recording file and allocate everything; audio not yet
 * running. PortAudio is initialized here (and terminated in free), so every
 * new one scans the devices afresh. Errors name the device, rate or file:
 * GF_E_NODEVICE, GF_E_RATE, GF_E_AUDIO, GF_E_IO, GF_E_CONFIG.
 */
int gf_live_new(struct gf_live **out, const struct gf_live_params *p, struct gf_engine *engine,
		struct gf_errbuf *eb);
/**
 * Start audio: worker and recorder threads, then the streams; waits (2 s at
 * most) for the first callback, which fixes the latency, and logs it. Tries
 * SCHED_FIFO for the worker (just below the device's audio thread) and
 * mlockall, warning once if not permitted. Once per gf_live.
 */
int gf_live_start(struct gf_live *l, struct gf_errbuf *eb);
/**
 * Stop audio after draining what was captured; closes the recording cleanly.
 * Bounded: a worker that has not stopped within a second (stuck inside the
 * engine, e.g. in a GPU driver call) is abandoned: it keeps its thread, and
 * gf_live_free() then frees nothing it touches (gf_live_worker_abandoned()).
 */
void gf_live_stop(struct gf_live *l);
/**
 * 1 once gf_live_stop() abandoned the worker: the engine it runs must then
 * never be freed or used again (build another). Control thread.
 */
int gf_live_worker_abandoned(const struct gf_live *l);
/** Accepts NULL. After an abandoned worker only the devices are closed; the rest is kept. */
void gf_live_free(struct gf_live *l);
/** Snapshot of counters (resets the peak; block times cover the time since the previous call). */
void gf_live_get_stats(struct gf_live *l, struct gf_live_stats *s);
/**
 * As gf_live_get_stats, but the block times are those of a window held for at
 * least @p min_window_ns (a new one only once the held one is that old, or
 * empty), and the window's extremes (peak, lowest margin, longest callback
 * gap and wake-up) span the held window before and the one filling now: a
 * control loop that polls thousands of times a second (woken by every
 * control-API request) still reads figures over many blocks.
 */
void gf_live_get_stats_held(struct gf_live *l, struct gf_live_stats *s, uint64_t min_window_ns);

/** Engine time per block over one reader's window. */
struct gf_live_block_times {
	uint64_t blocks;		  /**< blocks in the window */
	double median_us, p99_us, max_us; /**< 0 when no block */
};
/** The window gf_live_get_stats() takes (health poll, status). */
#define GF_LIVE_WINDOW_POLL 0u

/** A window of its own, for a reader with a longer interval (the daemon's stats line). */
#define GF_LIVE_WINDOW_LOG 1u
/**
 * Block times since the same window's previous call (or since new): each
 * window is cut only by its own reader, so a 60 s stats line covers 60 s
 * whatever polls the stream meanwhile. Control thread.
 */
void gf_live_block_times(struct gf_live *l, unsigned window, struct gf_live_block_times *t);
/**
 * Periodic health check from the control thread: 0 while healthy, else the
 * device error (GF_E_AUDIO: the stream stopped — device unplugged, audio
 * server gone — or no audio for 2 s). After an error, gf_live_stop() +
 * gf_live_free() and a later gf_live_new() start over with a fresh device scan.
 */
int gf_live_poll(struct gf_live *l);

/**
 * 1 while the audio server runs no capture into the stream: on PipeWire, no
 * source is linked to it (the last microphone unplugged). The stream is idle,
 * not lost: its node stays for the apps recording it and blocks resume when a
 * source comes, so a caller must not take the pause for a stall. 0 on the
 * other host APIs. Control thread.
 */
int gf_live_idle(const struct gf_live *l);

/**
 * Frames captured since start (including any dropped on overflow): recorded
 * frame i and, with playback, the frame played latency_frames after capture
 * position i both come from capture position i. Any thread; RT-safe.
 */
uint64_t gf_live_capture_position(const struct gf_live *l);

/**
 * 1 once a device loss happened that PortAudio cannot recover from inside
 * this process (its JACK host API cannot release a stream after the JACK
 * server went away); gf_live_new then fails with GF_E_AUDIO. The daemon
 * then restarts its process in place (respawn.h). Any thread.
 */
int gf_live_restart_required(void);
/** Print audio devices (index, name, host API, channels, default rate) to @p out. */
int gf_live_list_devices(FILE *out);

/** One audio device as the running stream's audio system lists it. */
struct gf_live_device {
	char name[128];
	char host_api[32];
	uint32_t channels; /**< inputs (capture list) or outputs (playback list) */
	double rate;	   /**< its default sample rate */
	int is_default;	   /**< the host's default input (or output) */
};

/**
 * The devices with capture (@p playback 0) or playback channels, as the audio
 * system @p l opened listed them when it started (PortAudio scans at its
 * start; a device plugged in later shows at the next stream start). Fills up
 * to @p max of @p out. Control thread; no device is opened or scanned.
 * @return how many were found (may exceed @p max).
 */
uint32_t gf_live_devices(const struct gf_live *l, int playback, struct gf_live_device *out, uint32_t max);

#endif
