/**
 * @file live_internal.h
 * The live stream's shared state, private to live*.c.
 *
 * Ownership per thread (see docs/live.md):
 * - control thread: everything at new/start/stop/free, the health fields;
 * - PortAudio callback(s): `cap` (capture) and `play` (playback) state, the
 *   writer side of in_ring and the reader side of out_ring;
 * - worker: reader of in_ring, writer of out_ring and rec_ring, blk_in/blk_out;
 * - recorder thread: reader of rec_ring.
 * Everything shared between them is a C11 atomic.
 */
#ifndef GPUFIR_LIVE_INTERNAL_H
#define GPUFIR_LIVE_INTERNAL_H

#include <portaudio.h>
#include <pthread.h>
#include <stdalign.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "live.h"
#include "recorder.h"
#include "ring.h"
#include "timehist.h"

enum gf_live_wstate { GF_W_RUN = 0, GF_W_DRAIN, GF_W_QUIT };

#define GF_LIVE_WARMUP_BLOCKS 16 /* silent blocks the worker runs before audio starts */
#define GF_LIVE_MAX_PERIOD 8192u /* largest device period the output ring is sized for */

struct gf_live_pw;

/* Extremes over a window: the output peak, the lowest playback margin, the longest callback
 * gap and worker wake-up. Control thread. */
struct gf_live_extremes {
	float peak;
	int32_t margin;
	uint64_t gap_ns, wake_ns;
};

struct gf_live {
	/* Settings, fixed by gf_live_new. */
	uint32_t rate, channels, block;	  /* channels: the capture's, the engine's input */
	uint32_t out_channels;		  /* the engine's output: playback, recording (a mixer's M) */
	uint32_t slack;			  /* playback periods of slack at start (config latency_slack) */
	int slack_auto;			  /* latency_slack = "auto": one more period after each underrun */
	uint32_t slack_max;		  /* auto: the most it grows to */
	int duplex;			  /* one PortAudio stream captures and plays */
	int playback;			  /* an output device is open */
	char in_desc[200], out_desc[200]; /* "'name' (host API)" for messages */
	struct gf_engine *engine;
	struct gf_suppress_bank *suppress; /* after the engine, on the worker; NULL: none (not owned) */
	struct gf_input_tap *tap;	   /* the worker's input for analysis; NULL: none (not owned) */
	struct gf_gain_stage *gain;	   /* volume and meters after that: the params' or own_gain */
	struct gf_gain_stage *own_gain;	   /* unity, output meters only: when none was given (owned) */
	char *record_path;

	int pa_ready;	       /* Pa_Initialize succeeded: Pa_Terminate in free */
	int jack;	       /* capture device is on PortAudio's JACK host API */
	int pa_wedged;	       /* JACK server gone: PortAudio must not be touched */
	PaStream *in_stream;   /* capture, or the duplex stream */
	PaStream *out_stream;  /* separate playback stream; NULL when duplex */
	struct gf_live_pw *pw; /* the native PipeWire host instead of PortAudio; NULL: PortAudio */

	struct gf_ring *in_ring;  /* callback -> worker */
	struct gf_ring *out_ring; /* worker -> playback callback; NULL without playback */
	struct gf_ring *rec_ring; /* worker -> recorder; NULL without recording */
	struct gf_recorder *rec;
	struct gf_timehist *hist;
	/* the block-time window gf_live_get_stats_held holds, and when it was taken */
	struct gf_timehist_summary poll_window;
	uint64_t poll_window_ns;
	/* the window extremes it reports: those of the held window before (prev) and the one
	 * filling now (cur), so a reading right after a new window began still spans one */
	struct gf_live_extremes xprev, xcur;
	float *blk_in, *blk_out; /* pinned, one block each (of channels, out_channels) */
	size_t blk_in_bytes, blk_out_bytes;

	/* Written by the device callback(s): capture state, playback state, their
	 * counters. Cache-line aligned groups keep the callback and the worker
	 * from invalidating each other's lines on every block. */
	alignas(64) struct {
		int dropping; /* collecting an input gap */
		uint32_t drop_pos, drop_len;
		int first_done;
		uint32_t period; /* frames of the latest capture callback */
	} cap;
	struct {
		int synced;
		uint32_t n_in, n_out, slack; /* what the latency was derived from */
		uint32_t hold;		     /* frames of silence owed before reading on (a resync) */
		int in_underrun; /* the previous callback underran (auto slack: one step per episode) */
		uint32_t missed; /* frames the episode missed so far */
	} play;
	_Atomic uint32_t slack_now; /* playback periods of slack in force (auto: grows after underruns) */
	_Atomic uint32_t slack_step_missed;  /* auto: frames missed by the episode of the latest step */
	_Atomic uint32_t slack_step_stall;   /* auto: the audio thread's longest stall then, frames */
	_Atomic uint64_t slack_steps_missed; /* auto: frames missed by all the episodes that raised it */
	/* Two streams, two clocks (live_clock.c): the capture callback's latest
	 * (position, time) under a sequence lock, and what the loop measured. */
	struct gf_live_clock *clock; /* NULL: one clock (duplex), no resampling */
	int ti_clock;		     /* tests: the callbacks' time info is the clock (virtual time) */
	_Atomic uint32_t cap_seq;
	_Atomic uint64_t cap_stamp_pos, cap_stamp_ns;
	_Atomic int64_t ratio_ppb;	 /* playback/capture rate ratio - 1, parts per 10^9 */
	_Atomic int32_t delay_err_milli; /* delay minus target, 1/1000 frame */
	_Atomic uint64_t resyncs;	 /* latency re-derived while playing (period or slack change) */
	_Atomic uint64_t capture_pos;	 /* frames delivered by the capture device, dropped ones too */
	_Atomic uint64_t in_overflow, out_underflow, dev_xruns;
	/* Capture frames the rate matching skipped, or played as silence, to
	 * re-centre its delay (live_clock.c). */
	_Atomic uint64_t clock_skipped, clock_inserted;
	_Atomic uint32_t latency; /* playback latency, frames: set by the first playback callback */
	atomic_int latency_known;
	_Atomic uint32_t cb_frames; /* frames of the latest capture callback (0: none yet) */
	atomic_int cb_rt_prio;	    /* capture callback's SCHED_FIFO/RR priority, 0 if none */
	/* Timing diagnostics (docs/live.md, "Why an underrun happened"):
	 * CLOCK_MONOTONIC of the last capture callback, and the longest interval
	 * between capture callbacks in the current stats window (the control
	 * thread takes it with an exchange). */
	_Atomic uint64_t cb_ns;
	_Atomic uint64_t cb_gap_max_ns;
	_Atomic uint64_t cb_gap_run_ns; /* the longest since the first second of capture (auto slack) */
	/* Capture -> worker: at most one input gap (dropped frames) outstanding. */
	_Atomic uint32_t gap_pos, gap_len;
	atomic_int gap_pending; /* set by the callback, cleared by the worker */

	/* Written by the worker: relaxed counters, read by the control thread. */
	alignas(64) _Atomic uint64_t blocks;
	_Atomic uint64_t out_overflow, late, rec_dropped, engine_errors;
	_Atomic uint64_t late_swap; /* late blocks inside a swap's window (engine_swap_window) */
	_Atomic uint64_t late_host, late_swap_host; /* of late and late_swap: the host's (live_worker.c) */
	/* Per stats window, taken by the control thread with an exchange: the
	 * longest wait from the callback that completed a block to the worker
	 * starting it, and the fewest frames still queued for playback when a
	 * block arrived there (negative: it came late; INT32_MAX: no block). */
	_Atomic uint64_t wake_max_ns;
	_Atomic int32_t margin_min;

	/* Worker thread (control thread's handles). */
	alignas(64) pthread_t worker;
	int worker_started;
	int worker_abandoned; /* gf_live_stop gave up joining it: never free what it touches */
	struct gf_live *next_abandoned;
	sem_t wake;
	int sem_ready;
	atomic_int wstate;
	atomic_int warm;	   /* the worker has warmed the engine up */
	atomic_int worker_rt_prio; /* its SCHED_FIFO priority, 0 if not granted */
	int memory_locked;	   /* gf_rt_lock_memory() at start */

	/* Health, control thread. */
	atomic_int finished; /* a stream-finished callback fired */
	int running, stopping, started_once;
	int device_error;
	uint64_t poll_pos, poll_cap;
	struct timespec poll_time;
	/* Worst timing values since start, folded in by gf_live_get_stats. */
	uint64_t cb_gap_worst_ns, wake_worst_ns;
	int32_t margin_worst;
};

/** CLOCK_MONOTONIC in ns; RT-safe (vDSO). */
/** Raise the maximum in @p m to @p v; RT-safe. */
void gf_live_note_max(_Atomic uint64_t *m, uint64_t v);

/* live.c */
/**
 * Tests: a live object with no device. gf_live_start starts only the worker
 * (and recorder); the test plays the device by calling the callbacks below
 * (duplex when @p playback). Control thread.
 */
int gf_live_new_detached(struct gf_live **out, uint32_t rate, uint32_t channels, uint32_t block, int playback,
			 const char *record_path, struct gf_engine *engine, struct gf_errbuf *eb);
/** Tests: as gf_live_new_detached(), @p in_channels captured, @p out_channels played and recorded. */
int gf_live_new_detached_io(struct gf_live **out, uint32_t rate, uint32_t in_channels, uint32_t out_channels,
			    uint32_t block, int playback, const char *record_path, struct gf_engine *engine,
			    struct gf_errbuf *eb);

/** Tests: run @p b after the engine (as gf_live_params.suppress does). Before gf_live_start. */
void gf_live_set_suppress(struct gf_live *l, struct gf_suppress_bank *b);
/** Tests: copy the input into @p t (as gf_live_params.tap does). Before gf_live_start. */
void gf_live_set_tap(struct gf_live *l, struct gf_input_tap *t);
/** Tests: run @p g last (as gf_live_params.gain does; NULL: the stream's own). Before gf_live_start. */
void gf_live_set_gain(struct gf_live *l, struct gf_gain_stage *g);

/* live_device.c */
int gf_live_pa_init(struct gf_errbuf *eb);
void gf_live_pa_term(void);
/** Resolve an endpoint to a device index: by number, name substring, or default. */
int gf_live_find_device(const struct gf_live_endpoint *ep, int output, PaDeviceIndex *out,
			struct gf_errbuf *eb);
/** "'name' (host API)" */
void gf_live_describe_device(PaDeviceIndex d, char *buf, size_t len);

/* live_pipewire.c: the native PipeWire host, beside PortAudio (docs/live.md,
 * "Native PipeWire"): gpufir's own node, a virtual source (input.host_api
 * "PipeWire": the capture follows the default source) or a virtual sink
 * (output.host_api "PipeWire" alone: the playback follows the default sink),
 * run as one duplex callback (gf_live_duplex_cb) in PipeWire's real-time
 * thread. Built without libpipewire, live_pipewire_none.c refuses it. Control
 * thread unless said. */
/** 1 when @p ep names the native PipeWire host (host_api "PipeWire", any case). */
int gf_live_pw_wanted(const struct gf_live_endpoint *ep);
/** Connect to the server and create both streams, inactive; fills l->in_desc,
 * l->out_desc and l->rate. GF_E_AUDIO (no server), GF_E_CONFIG (built without PipeWire). */
int gf_live_pw_open(struct gf_live *l, const struct gf_live_params *p, struct gf_errbuf *eb);
/** Activate both streams: callbacks begin with the graph's next cycle. */
int gf_live_pw_start(struct gf_live *l, struct gf_errbuf *eb);
/** Deactivate both streams (no more callbacks after it returns). */
void gf_live_pw_stop(struct gf_live *l);
/** Destroy the streams and the connection. Accepts l->pw == NULL. */
void gf_live_pw_close(struct gf_live *l);
/** Tell the graph the latency of gpufir's node: @p frames of gpufir's own (the stream's and the
 * suppressor's; 0: not known yet, nothing told) on top of the device's and one quantum.
 * Only a change reaches the server. */
void gf_live_pw_latency(struct gf_live *l, uint32_t frames);
/** Why the connection is lost (the server quit or restarted, a stream failed), or NULL. */
const char *gf_live_pw_lost(struct gf_live *l, char *buf, size_t len);
/** 1 while the graph does not run the input stream (the capture with no source linked to it, or
 * the sink with nothing playing into it). Any thread. */
int gf_live_pw_idle(const struct gf_live *l);

/* live_audio.c: PortAudio callbacks (RT) */
int gf_live_duplex_cb(const void *in, void *out, unsigned long frames, const PaStreamCallbackTimeInfo *ti,
		      PaStreamCallbackFlags flags, void *ud);
int gf_live_capture_cb(const void *in, void *out, unsigned long frames, const PaStreamCallbackTimeInfo *ti,
		       PaStreamCallbackFlags flags, void *ud);
int gf_live_playback_cb(const void *in, void *out, unsigned long frames, const PaStreamCallbackTimeInfo *ti,
			PaStreamCallbackFlags flags, void *ud);
void gf_live_finished_cb(void *ud);
/** Playback latency for callbacks of @p n_in / @p n_out frames (see docs/live.md). */
uint32_t gf_live_latency_for(uint32_t block, uint32_t n_in, uint32_t n_out, int duplex, uint32_t slack);

/* live_slack.c (playback callback, RT) */
/** Playback missed @p missing frames in this callback: an underrun episode goes on. */
void gf_live_slack_underrun(struct gf_live *l, uint32_t missing);
/** Before reading @p n frames: a whole period ready ends an episode; auto slack then grows. */
void gf_live_slack_check(struct gf_live *l, uint32_t n);
/** The auto slack after an episode at @p slack that missed @p missed frames at
 * period @p n, on a host whose audio thread has stalled up to @p stall
 * frames beyond a period: twice the slack that would have absorbed the
 * episode plus one, or the periods of that stall plus one if more, at most
 * @p max (pure; any thread). */
uint32_t gf_live_slack_next(uint32_t slack, uint32_t missed, uint32_t stall, uint32_t n, uint32_t max);

/* live_clock.c: rate matching between two streams' clocks */
/** Allocate the resampler and its buffers (control thread). */
int gf_live_clock_new(struct gf_live_clock **out, uint32_t channels, uint32_t rate);
void gf_live_clock_free(struct gf_live_clock *k);
/** Capture callback: frames captured so far (after this callback) at @p t_ns. RT. */
void gf_live_clock_capture(struct gf_live *l, uint64_t pos_after, uint64_t t_ns);
/** Playback callback: @p n resampled frames at @p t_ns. @return frames missing (counted). RT. */
uint32_t gf_live_clock_play(struct gf_live *l, float *out, uint32_t n, uint64_t t_ns);
/** Playback callback: the read position was moved (a resync). RT. */
void gf_live_clock_resync(struct gf_live *l);

/* live_worker.c */
void *gf_live_worker_main(void *arg);

#endif
